// JPEG's colour planes on the host (see jpeg_planes.h).
#include "image/jpeg_planes.h"

#include <turbojpeg.h>

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

// jpeglib.h needs FILE and size_t declared first; jerror.h the error codes.
#include <jerror.h>
#include <jpeglib.h>

#include "image/codec_common.h"
#include "image/jpeg_block_arrays.h"
#include "util/error.h"

namespace blurtool {

namespace {

using TjHandle = std::unique_ptr<void, int (*)(tjhandle)>;

std::string tj_reason_of(tjhandle handle) {
  const char* reason = tjGetErrorStr2(handle);
  return reason && *reason ? reason : "unknown error";
}

int clamp_index(int v, int n) {
  return v < 0 ? 0 : v >= n ? n - 1 : v;
}

std::uint8_t saturate(int v) {
  return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// A plane's samples with their edge repeated outside [0, w) x [0, h).
struct PlaneView {
  const std::uint8_t* p;
  int w, h, pitch;
  int at(int y, int x) const {
    return p[static_cast<std::size_t>(clamp_index(y, h)) * pitch + clamp_index(x, w)];
  }
};

// libjpeg's fancy upsampling (jdsample.c) of a chroma plane at pixel (x, y): the triangle
// filter, 3/4 of the nearest sample and 1/4 of the next one out, in each subsampled direction,
// with its rounding biases; at the edges the edge sample stands in for the missing one, as
// libjpeg's edge cases and its repeated context rows give.
int upsample(const PlaneView& c, int hf, int vf, int x, int y) {
  if (hf == 1 && vf == 1) return c.at(y, x);
  if (vf == 1) {  // h2v1_fancy_upsample
    const int cx = x >> 1;
    return x & 1 ? (c.at(y, cx) * 3 + c.at(y, cx + 1) + 2) >> 2
                 : (c.at(y, cx) * 3 + c.at(y, cx - 1) + 1) >> 2;
  }
  const int cy = y >> 1, ny = y & 1 ? cy + 1 : cy - 1;
  if (hf == 1)  // h1v2_fancy_upsample
    return (c.at(cy, x) * 3 + c.at(ny, x) + (y & 1 ? 2 : 1)) >> 2;
  const int cx = x >> 1, nx = x & 1 ? cx + 1 : cx - 1;  // h2v2_fancy_upsample
  const int near = c.at(cy, cx) * 3 + c.at(ny, cx), far = c.at(cy, nx) * 3 + c.at(ny, nx);
  return (near * 3 + far + (x & 1 ? 7 : 8)) >> 4;
}

// libjpeg's RGB -> YCbCr (jccolor.c): 16-bit fixed-point weights, Cb and Cr offset by 128 and
// rounded by a fudge of 1/2 - 2^-16.
int luma(int r, int g, int b) {
  return (19595 * r + 38470 * g + 7471 * b + 32768) >> 16;
}
int blue_chroma(int r, int g, int b) {
  return (-11059 * r - 21709 * g + 32768 * b + (128 << 16) + 32767) >> 16;
}
int red_chroma(int r, int g, int b) {
  return (32768 * r - 27439 * g - 5329 * b + (128 << 16) + 32767) >> 16;
}

void factors_of(ChromaSubsampling s, int* hf, int* vf) {
  *hf = s == ChromaSubsampling::s444 ? 1 : 2;
  *vf = s == ChromaSubsampling::s420 ? 2 : 1;
}

void check_size(int width, int height) {
  if (width < 1 || height < 1 || width > 65535 || height > 65535)
    throw Error("JPEG planes: an image of " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels");
}

// The samples of p's planes, setting their offsets.
std::size_t sample_count(YCbCrPlanes& p) {
  std::size_t total = 0;
  for (int i = 0; i < p.components; ++i) {
    p.offset[i] = total;
    total += static_cast<std::size_t>(p.plane_width[i]) * p.plane_height[i];
  }
  return total;
}

void size_samples(YCbCrPlanes& p) {
  p.samples.resize(sample_count(p));
}

// encoder_layout without its samples.
YCbCrPlanes encoder_sizes(int width, int height, int components, ChromaSubsampling subsampling) {
  check_size(width, height);
  YCbCrPlanes p;
  p.width = width;
  p.height = height;
  p.components = components;
  if (components == 3) factors_of(subsampling, &p.h_factor, &p.v_factor);
  // libjpeg: Y's width_in_blocks = ceil(width / 8), a chroma plane's ceil(width / (8 * hf));
  // rows to whole MCU rows (8 * vf pixel rows), of which a chroma plane holds 8.
  const int mcu_rows = (height + 8 * p.v_factor - 1) / (8 * p.v_factor);
  p.plane_width[0] = (width + 7) / 8 * 8;
  p.plane_height[0] = mcu_rows * 8 * p.v_factor;
  for (int i = 1; i < components; ++i) {
    p.plane_width[i] = (width + 8 * p.h_factor - 1) / (8 * p.h_factor) * 8;
    p.plane_height[i] = mcu_rows * 8;
  }
  return p;
}

}  // namespace

YCbCrPlanes decoder_sizes(int width, int height, int components, int h_factor, int v_factor) {
  check_size(width, height);
  YCbCrPlanes p;
  p.width = width;
  p.height = height;
  p.components = components;
  p.h_factor = components == 1 ? 1 : h_factor;
  p.v_factor = components == 1 ? 1 : v_factor;
  // tjPlaneWidth and tjPlaneHeight: Y padded to whole chroma samples.
  p.plane_width[0] = (width + p.h_factor - 1) / p.h_factor * p.h_factor;
  p.plane_height[0] = (height + p.v_factor - 1) / p.v_factor * p.v_factor;
  for (int i = 1; i < components; ++i) {
    p.plane_width[i] = p.chroma_width();
    p.plane_height[i] = p.chroma_height();
  }
  sample_count(p);  // the offsets
  return p;
}

namespace {

// The non-zero coefficients among `n`, counted without branches (a compiler vectorises it).
std::size_t count_nonzero(const std::int16_t* c, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) count += c[i] != 0;
  return count;
}

// Block `block`'s mask, and its non-zero coefficients written from `out`; returns how many.
// Branch-free: every coefficient is stored in a scratch block, the next store overwriting a
// zero, and the values copied out.
std::size_t pack_block(const std::int16_t* block, std::uint64_t* mask, std::int16_t* out) {
  std::int16_t packed[64];
  std::uint64_t bits = 0;
  std::size_t n = 0;
  for (int k = 0; k < 64; ++k) {
    const bool nonzero = block[k] != 0;
    packed[n] = block[k];
    n += nonzero;
    bits |= static_cast<std::uint64_t>(nonzero) << k;
  }
  if (n) std::memcpy(out, packed, n * sizeof(std::int16_t));  // `out` is null for no values
  *mask = bits;
  return n;
}

// Block with mask `bits` from its values at `from` into `block` (64 coefficients); returns the
// values read.
std::size_t unpack_block(std::uint64_t bits, const std::int16_t* from, std::int16_t* block) {
  std::memset(block, 0, 64 * sizeof(std::int16_t));
  std::size_t n = 0;
  for (; bits; bits &= bits - 1) block[__builtin_ctzll(bits)] = from[n++];
  return n;
}

// A capacity for `n` values: n rounded up to 4, 5, 6 or 7 times a power of two.
std::size_t size_class(std::size_t n) {
  if (n <= 1024) return 1024;
  int shift = 0;
  while ((n - 1) >> shift >= 8) ++shift;  // (n - 1) >> shift is in 4..7
  return (((n - 1) >> shift) + 1) << shift;
}

// Sizes `sparse` for `blocks` blocks (masks 0) and `count` values (values' capacity a
// size_class), the group starts 0 until written.
void size_sparse(SparseBlocks* sparse, std::size_t blocks, std::size_t count) {
  sparse->mask.assign(blocks, 0);  // a layout never filled holds no values
  sparse->group_start.assign((blocks + SparseBlocks::kGroup - 1) / SparseBlocks::kGroup + 1, 0);
  sparse->resize_values(count);
}

// Packs `blocks` whole blocks from `coef` as blocks first .. of `sparse` (sized by size_sparse),
// its values from `at`; returns the values' end. Group starts are written for the groups that
// begin among these blocks.
std::size_t pack_blocks(const std::int16_t* coef, std::size_t blocks, std::size_t first,
                        std::size_t at, SparseBlocks* sparse) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t block = first + b;
    if (block % SparseBlocks::kGroup == 0)
      sparse->group_start[block / SparseBlocks::kGroup] = static_cast<std::uint32_t>(at);
    at += pack_block(coef + 64 * b, &sparse->mask[block], sparse->values.data() + at);
  }
  return at;
}

// Sets p.dct's block counts and offsets for p's encoder sizes (the image's blocks: ceil of a
// component's samples over 8 each way) and returns its coefficient count.
std::size_t size_blocks(YCbCrPlanes& p) {
  DctBlocks& dct = p.dct;
  std::size_t total = 0;
  for (int i = 0; i < p.components; ++i) {
    const int v = i == 0 ? p.v_factor : 1;
    const int component_rows = (p.height * v + p.v_factor - 1) / p.v_factor;
    dct.blocks_across[i] = p.plane_width[i] / 8;
    dct.blocks_down[i] = (component_rows + 7) / 8;
    dct.offset[i] = total;
    total += static_cast<std::size_t>(dct.blocks_across[i]) * dct.blocks_down[i] * 64;
  }
  return total;
}

}  // namespace

YCbCrPlanes decoder_layout(int width, int height, int components, int h_factor, int v_factor) {
  YCbCrPlanes p = decoder_sizes(width, height, components, h_factor, v_factor);
  size_samples(p);
  return p;
}

YCbCrPlanes encoder_layout(int width, int height, int components, ChromaSubsampling subsampling) {
  YCbCrPlanes p = encoder_sizes(width, height, components, subsampling);
  size_samples(p);
  return p;
}

bool planes_addressable(int width, int height) {
  // Three planes of up to (width + 15) x (height + 15) samples, and RGBA pixels indexed as
  // y * width + x: under 2^31.
  return static_cast<std::uint64_t>(width + 15) * static_cast<std::uint64_t>(height + 15) * 3 <
         (std::uint64_t{1} << 31);
}

bool jpeg_planes_supported(const std::vector<std::uint8_t>& bytes, bool orient) {
  if (orient && exif_orientation(bytes) > 1) return false;
  TjHandle handle(tjInitDecompress(), tjDestroy);
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (!handle || tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &subsampling,
                                     &colorspace) != 0)
    return false;
  if (!planes_addressable(w, h)) return false;
  if (colorspace == TJCS_GRAY) return subsampling == TJSAMP_GRAY;
  // Chroma rows of 2 samples or fewer: libjpeg upsamples them by repeating each sample
  // (jdsample.c takes its fancy upsampling only for downsampled_width > 2).
  if ((subsampling == TJSAMP_422 || subsampling == TJSAMP_420) && w <= 4) return false;
  return colorspace == TJCS_YCbCr && (subsampling == TJSAMP_444 || subsampling == TJSAMP_422 ||
                                      subsampling == TJSAMP_420 || subsampling == TJSAMP_440);
}

YCbCrPlanes decode_jpeg_planes(const std::vector<std::uint8_t>& bytes, const std::string& name,
                               std::string* damage) {
  TjHandle handle(tjInitDecompress(), tjDestroy);
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (!handle || tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &subsampling,
                                     &colorspace) != 0)
    throw Error(name + ": corrupt JPEG header (" + tj_reason_of(handle.get()) + ")");
  const bool grey = subsampling == TJSAMP_GRAY;
  YCbCrPlanes p =
      decoder_layout(w, h, grey ? 1 : 3, tjMCUWidth[subsampling] / 8, tjMCUHeight[subsampling] / 8);
  unsigned char* planes[3] = {};
  int strides[3] = {};
  for (int i = 0; i < p.components; ++i) {
    planes[i] = p.plane(i);
    strides[i] = p.plane_width[i];
  }
  if (tjDecompressToYUVPlanes(handle.get(), bytes.data(), bytes.size(), planes, w, strides, h,
                              TJFLAG_LIMITSCANS) != 0) {
    if (tjGetErrorCode(handle.get()) != TJERR_WARNING)
      throw Error(name + ": corrupt JPEG data (" + tj_reason_of(handle.get()) + ")");
    // Damaged data that libjpeg decodes anyway, as tjDecompress2 does.
    if (damage) *damage = tjGetErrorStr2(handle.get());
  }
  return p;
}

namespace {

// One compression's libjpeg state, kept by the caller of compress_strip so that nothing the
// setjmp frame would need after a longjmp is local to it: the compressor, its error manager
// (error_exit jumps back instead of returning, the message kept for the exception) and a
// destination of malloc'd memory that grows by doubling (on failure, libjpeg's out-of-memory
// error); `data` is always the live block, freed by the caller whatever happened.
struct Compression {
  jpeg_compress_struct info;
  jpeg_error_mgr errors;
  std::jmp_buf back;
  char message[JMSG_LENGTH_MAX] = {};
  jpeg_destination_mgr destination;
  unsigned char* data = nullptr;
  std::size_t capacity = 0;
  BlockArrays arrays;  // the blocks, read by the entropy coder where DctBlocks::coef holds them
  // The arrays' handles: jpeg_write_coefficients keeps this pointer, and the blocks are coded
  // in jpeg_finish_compress, after write_blocks has returned.
  jvirt_barray_ptr handles[3] = {};
  ~Compression() { std::free(data); }
};

Compression& compression_of(j_compress_ptr info) {
  return *reinterpret_cast<Compression*>(reinterpret_cast<char*>(info) -
                                         offsetof(Compression, info));
}

void jump_on_error(j_common_ptr info) {
  Compression& c = compression_of(reinterpret_cast<j_compress_ptr>(info));
  (*info->err->format_message)(info, c.message);
  std::longjmp(c.back, 1);
}

// Grows the destination to `capacity` bytes, keeping what was written.
void grow_destination(j_compress_ptr info, std::size_t capacity) {
  Compression& c = compression_of(info);
  const std::size_t used = c.capacity - c.destination.free_in_buffer;
  auto* bigger = static_cast<unsigned char*>(std::realloc(c.data, capacity));
  if (!bigger) ERREXIT1(info, JERR_OUT_OF_MEMORY, 0);
  c.data = bigger;
  c.capacity = capacity;
  c.destination.next_output_byte = c.data + used;
  c.destination.free_in_buffer = capacity - used;
}

void init_destination(j_compress_ptr info) {
  compression_of(info).destination.free_in_buffer = 0;
  grow_destination(info, std::size_t{1} << 16);
}

boolean empty_output_buffer(j_compress_ptr info) {
  // libjpeg calls this with the whole buffer written, free_in_buffer not yet updated.
  Compression& c = compression_of(info);
  c.destination.free_in_buffer = 0;
  grow_destination(info, 2 * c.capacity);
  return TRUE;
}

void term_destination(j_compress_ptr) {}

// Rows [first, first + rows) of the samples of `planes` (encoder_layout) through libjpeg's
// raw-data interface, into the compressor `info` set up by compress_strip.
void write_samples(const YCbCrPlanes& planes, int first, int rows, int quality,
                   jpeg_compress_struct* info) {
  info->dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_IFAST;
  info->raw_data_in = TRUE;
  jpeg_start_compress(info, TRUE);
  const int mcu = 8 * planes.v_factor;  // pixel rows an MCU row
  JSAMPROW rows_of[3][16];
  JSAMPARRAY arrays[3] = {rows_of[0], rows_of[1], rows_of[2]};
  for (int row = 0; row < rows; row += mcu) {
    for (int i = 0; i < planes.components; ++i) {
      const int v = i == 0 ? planes.v_factor : 1;  // 8-row block rows an MCU row
      const int plane_row = (first + row) / planes.v_factor * v;
      for (int k = 0; k < 8 * v; ++k)
        rows_of[i][k] = const_cast<JSAMPROW>(
            planes.plane(i) + static_cast<std::size_t>(plane_row + k) * planes.plane_width[i]);
    }
    jpeg_write_raw_data(info, arrays, static_cast<JDIMENSION>(mcu));
  }
}

// Rows [first, first + rows) of `planes` held as DCT blocks (encoder_block_layout), handed to
// libjpeg's transcoder (jpeg_write_coefficients) in the compressor `info` set up by
// compress_strip: its entropy coder writes what the raw-data path writes for the same
// coefficients (jctrans.c makes the dummy blocks of partial MCUs as jccoefct.c does).
void write_blocks(const YCbCrPlanes& planes, int first, int rows, jpeg_compress_struct* info) {
  const auto common = reinterpret_cast<j_common_ptr>(info);
  jvirt_barray_ptr* arrays = compression_of(info).handles;
  JDIMENSION down[3] = {}, padded_down[3] = {};
  std::size_t first_row[3] = {};
  const DctBlocks& dct = planes.dct;
  // Whole blocks are read where they are (jctrans.c only reads them): no copy. The entropy
  // coder takes JBLOCKROWs, which are not const; it never writes through them.
  std::array<BlockTarget, 3> targets{};
  for (int i = 0; i < planes.components; ++i) {
    const int v = i == 0 ? planes.v_factor : 1;
    const int component_rows = (rows * v + planes.v_factor - 1) / planes.v_factor;
    down[i] = static_cast<JDIMENSION>((component_rows + 7) / 8);
    padded_down[i] = (down[i] + v - 1) / v * v;
    // The strip starts at an MCU row: block row first / (8 * v_factor) * v of the component.
    first_row[i] = static_cast<std::size_t>(first) / (8 * planes.v_factor) * v;
    const std::size_t across = static_cast<std::size_t>(dct.blocks_across[i]);
    if (!dct.is_sparse())
      targets[i] = {reinterpret_cast<JBLOCK*>(const_cast<std::int16_t*>(
                        dct.coef.data() + dct.offset[i] + first_row[i] * across * 64)),
                    across, down[i], false};
  }
  compression_of(info).arrays.install(common, targets);
  for (int i = 0; i < planes.components; ++i) {
    const int h = i == 0 ? planes.h_factor : 1;
    const auto across = static_cast<JDIMENSION>((dct.blocks_across[i] + h - 1) / h * h);
    arrays[i] = (*info->mem->request_virt_barray)(common, JPOOL_IMAGE, FALSE, across,
                                                  padded_down[i], padded_down[i]);
  }
  (*info->mem->realize_virt_arrays)(common);
  for (int i = 0; dct.is_sparse() && i < planes.components; ++i) {
    // Sparse blocks are unpacked into scratch rows, from the strip's first block on.
    JBLOCKARRAY to = (*info->mem->access_virt_barray)(common, arrays[i], 0, padded_down[i], TRUE);
    const std::size_t across = static_cast<std::size_t>(dct.blocks_across[i]);
    const SparseBlocks& sparse = dct.sparse;
    std::size_t block = dct.offset[i] / 64 + first_row[i] * across;
    const std::int16_t* from = sparse.values.data() + sparse.start_of(block);
    for (JDIMENSION r = 0; r < down[i]; ++r)
      for (std::size_t c = 0; c < across; ++c, ++block)
        from += unpack_block(sparse.mask[block], from, reinterpret_cast<std::int16_t*>(to[r][c]));
  }
  jpeg_write_coefficients(info, arrays);
}

// Rows [first, first + rows) of `planes` (whole MCU rows but for the image's last), as samples
// or as DCT blocks, as one baseline JPEG into c.data (its size returned; 0 after an error,
// c.message saying which), with TurboJPEG's compressor settings: JFIF, the IJG quality scaling
// with baseline tables, standard Huffman tables, the fast integer DCT below quality 96
// (tjCompress2 without TJFLAG_ACCURATEDCT), Y sampled hf x vf and Cb, Cr once an MCU.
std::size_t compress_strip(const YCbCrPlanes& planes, int first, int rows, int quality,
                           Compression* c) {
  c->info.err = jpeg_std_error(&c->errors);
  c->errors.error_exit = jump_on_error;
  if (setjmp(c->back)) {
    jpeg_destroy_compress(&c->info);
    return 0;
  }
  jpeg_create_compress(&c->info);
  c->destination.init_destination = init_destination;
  c->destination.empty_output_buffer = empty_output_buffer;
  c->destination.term_destination = term_destination;
  c->info.dest = &c->destination;
  jpeg_compress_struct& info = c->info;
  info.image_width = static_cast<JDIMENSION>(planes.width);
  info.image_height = static_cast<JDIMENSION>(rows);
  const bool grey = planes.components == 1;
  info.input_components = grey ? 1 : 3;
  info.in_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_colorspace(&info, grey ? JCS_GRAYSCALE : JCS_YCbCr);
  jpeg_set_quality(&info, quality, TRUE);
  info.comp_info[0].h_samp_factor = planes.h_factor;
  info.comp_info[0].v_samp_factor = planes.v_factor;
  for (int i = 1; i < planes.components; ++i)
    info.comp_info[i].h_samp_factor = info.comp_info[i].v_samp_factor = 1;
  // Both called within this setjmp: a libjpeg error jumps back here.
  if (planes.as_blocks())
    write_blocks(planes, first, rows, &info);
  else
    write_samples(planes, first, rows, quality, &info);
  jpeg_finish_compress(&info);
  const std::size_t size = c->capacity - c->destination.free_in_buffer;
  jpeg_destroy_compress(&info);
  return size;
}

// One decompression's libjpeg state, kept by the caller of read_blocks as Compression is: the
// error manager jumps back (a failure leaves the file to the whole decoder, which says why);
// warnings are counted, not printed.
struct Decompression {
  jpeg_decompress_struct info;
  jpeg_error_mgr errors;
  jpeg_progress_mgr progress;  // refuses more than kMaxJpegScans scans, as TJFLAG_LIMITSCANS
  std::jmp_buf back;
  BlockArrays arrays;  // the coefficients, decoded in place into DctBlocks::coef
};

Decompression& decompression_of(j_common_ptr info) {
  return *reinterpret_cast<Decompression*>(reinterpret_cast<char*>(info) -
                                           offsetof(Decompression, info));
}

void jump_on_decompression_error(j_common_ptr info) {
  std::longjmp(decompression_of(info).back, 1);
}

void keep_quiet(j_common_ptr) {}

// Called by libjpeg as it reads the file, at each scan's start among other times.
void limit_scans(j_common_ptr info) {
  if (reinterpret_cast<j_decompress_ptr>(info)->input_scan_number > kMaxJpegScans)
    jump_on_decompression_error(info);
}

}  // namespace

std::size_t block_layout(const jpeg_decompress_struct& in, YCbCrPlanes* planes) {
  const bool grey = in.num_components == 1 && in.jpeg_color_space == JCS_GRAYSCALE;
  // Arithmetic coding is left to the planes path: libjpeg's arithmetic decoder meets damaged
  // data (a marker too soon) without a warning, and the coefficients it then makes are of a
  // range where libjpeg-turbo's SIMD IDCT and its C IDCT (the device's) differ.
  bool ok = (grey || (in.num_components == 3 && in.jpeg_color_space == JCS_YCbCr)) &&
            !in.arith_code && in.data_precision == 8;
  const int hf = in.comp_info[0].h_samp_factor, vf = in.comp_info[0].v_samp_factor;
  if (ok && !grey) {
    ok = hf >= 1 && hf <= 2 && vf >= 1 && vf <= 2;
    for (int i = 1; i < 3; ++i)
      ok = ok && in.comp_info[i].h_samp_factor == 1 && in.comp_info[i].v_samp_factor == 1;
  }
  if (!ok) return 0;
  const int components = grey ? 1 : 3;
  *planes = decoder_sizes(static_cast<int>(in.image_width), static_cast<int>(in.image_height),
                          components, grey ? 1 : hf, grey ? 1 : vf);
  DctBlocks& dct = planes->dct;
  std::size_t total = 0;
  for (int i = 0; i < components; ++i) {
    const jpeg_component_info& c = in.comp_info[i];
    dct.blocks_across[i] = static_cast<int>(c.width_in_blocks);
    dct.blocks_down[i] = static_cast<int>(c.height_in_blocks);
    dct.offset[i] = total;
    total += static_cast<std::size_t>(c.width_in_blocks) * c.height_in_blocks * 64;
  }
  return total;
}

namespace {

// Reads the DCT blocks of JPEG data into *planes: true done, false a file the blocks do not
// take or libjpeg refuses (see decode_jpeg_blocks).
bool read_blocks(const std::uint8_t* data, std::size_t size, Decompression* d, bool sparse,
                 bool progressive, YCbCrPlanes* planes) {
  d->info.err = jpeg_std_error(&d->errors);
  d->errors.error_exit = jump_on_decompression_error;
  d->errors.output_message = keep_quiet;
  if (setjmp(d->back)) {
    jpeg_destroy_decompress(&d->info);
    return false;
  }
  jpeg_create_decompress(&d->info);
  d->progress = {};
  d->progress.progress_monitor = limit_scans;
  d->info.progress = &d->progress;
  jpeg_decompress_struct& in = d->info;
  jpeg_mem_src(&in, data, static_cast<unsigned long>(size));
  jpeg_read_header(&in, TRUE);
  // The layout is known from the header (jdinput.c's initial_setup ran at the first SOS), so
  // the blocks are decoded straight into their place (BlockArrays, which zeroes them first as
  // libjpeg's Huffman decoder needs): no image-sized allocation of libjpeg's own, no copy.
  const std::size_t total = in.progressive_mode && !progressive ? 0 : block_layout(in, planes);
  if (!total) {
    jpeg_destroy_decompress(&in);
    return false;
  }
  DctBlocks& dct = planes->dct;
  const int components = planes->components == 1 ? 1 : 3;  // block_layout's
  bool ok = true;
  static_assert(sizeof(JBLOCK) == 64 * sizeof(std::int16_t), "JCOEF is 16 bits");
  std::array<BlockTarget, 3> targets{};
  try {
    if (!sparse) {
      dct.coef.resize(total);  // unwritten: BlockArrays zeroes the rows decoded in place
      for (int i = 0; i < components; ++i)
        targets[i] = {reinterpret_cast<JBLOCK*>(dct.coef.data() + dct.offset[i]),
                      static_cast<std::size_t>(dct.blocks_across[i]),
                      static_cast<JDIMENSION>(dct.blocks_down[i]), true};
    }
  } catch (...) {  // std::bad_alloc
    jpeg_destroy_decompress(&in);
    throw;
  }
  d->arrays.install(reinterpret_cast<j_common_ptr>(&in), targets);
  jvirt_barray_ptr* arrays = jpeg_read_coefficients(&in);
  for (int i = 0; i < components; ++i)
    if (!in.comp_info[i].quant_table) ok = false;  // a component no scan codes
  // A progressive file whose scans leave some coefficient short of its last bit (coef_bits,
  // the Al still to come, or -1 for none coded) may be decoded by libjpeg with block smoothing
  // (jdcoefct.c's smoothing_ok: where DC is known and one of the first AC coefficients is not,
  // an estimate of the missing low frequencies from the neighbouring blocks), which is no
  // inverse DCT of these blocks alone: every such file takes TurboJPEG's own planes. A complete
  // file's scans bring every coefficient to Al 0.
  if (ok && in.progressive_mode)
    for (int i = 0; i < components && ok; ++i)
      for (int k = 0; k < DCTSIZE2 && ok; ++k) ok = in.coef_bits[i][k] == 0;
  if (!ok) {
    jpeg_destroy_decompress(&in);
    return false;
  }
  for (int i = 0; i < components; ++i) {
    const JQUANT_TBL* q = in.comp_info[i].quant_table;
    std::copy(q->quantval, q->quantval + 64, dct.quant[i].begin());
  }
  // Each row of a component's blocks as libjpeg holds it (a JBLOCK is 64 JCOEFs, 16 bits).
  const auto row_of = [&](int i, int r) {
    JBLOCKARRAY from = (*in.mem->access_virt_barray)(reinterpret_cast<j_common_ptr>(&in), arrays[i],
                                                     static_cast<JDIMENSION>(r), 1, FALSE);
    return reinterpret_cast<const std::int16_t*>(from[0]);
  };
  try {
    if (sparse) {  // counted first, so that the values take their size and no more
      std::size_t count = 0;
      for (int i = 0; i < components; ++i)
        for (int r = 0; r < dct.blocks_down[i]; ++r)
          count += count_nonzero(row_of(i, r), static_cast<std::size_t>(dct.blocks_across[i]) * 64);
      size_sparse(&dct.sparse, total / 64, count);
      std::size_t at = 0;
      for (int i = 0; i < components; ++i)
        for (int r = 0; r < dct.blocks_down[i]; ++r)
          at = pack_blocks(
              row_of(i, r), static_cast<std::size_t>(dct.blocks_across[i]),
              (dct.offset[i] + static_cast<std::size_t>(r) * dct.blocks_across[i] * 64) / 64, at,
              &dct.sparse);
      dct.sparse.group_start.back() = static_cast<std::uint32_t>(at);
    } else {
      // A component whose MCU-padded rows are wider than its blocks (an odd count across
      // with two-wide MCUs) was decoded in scratch memory: its rows are copied.
      for (int i = 0; i < components; ++i) {
        if (d->arrays.in_place(static_cast<std::size_t>(i))) continue;
        for (int r = 0; r < dct.blocks_down[i]; ++r)
          std::memcpy(dct.coef.data() + dct.offset[i] +
                          static_cast<std::size_t>(r) * dct.blocks_across[i] * 64,
                      row_of(i, r),
                      static_cast<std::size_t>(dct.blocks_across[i]) * sizeof(JBLOCK));
      }
    }
  } catch (...) {  // std::bad_alloc (a longjmp from libjpeg skips no destructor here)
    jpeg_destroy_decompress(&in);
    throw;
  }
  jpeg_finish_decompress(&in);
  // Damaged data (libjpeg warned) may hold coefficients no encoder makes from 8-bit samples,
  // on which libjpeg-turbo's SIMD IDCT (16-bit lanes, saturating) and its C IDCT (the kernel's)
  // part ways: such files take TurboJPEG's own planes.
  const bool damaged = in.err->num_warnings > 0;
  jpeg_destroy_decompress(&in);
  return !damaged;
}

// The 1-D transforms of kernels/ycbcr.cl (dct_to_plane, plane_to_dct), which follow
// jidctint.c, jfdctfst.c and jfdctint.c; see there.
constexpr int kIslowBits = 13, kPass1Bits = 2;

int descale(int x, int n) {
  return (x + (1 << (n - 1))) >> n;
}

// In 64 bits, as libjpeg's JLONG on LP64: coefficients of damaged or crafted files would
// overflow 32.
void idct_1d(const std::int64_t* in, std::int64_t* out) {
  using L = std::int64_t;
  L z2 = in[2], z3 = in[6];
  L z1 = (z2 + z3) * 4433;
  const L t2 = z1 + z3 * -15137, t3 = z1 + z2 * 6270;
  const L t0 = (in[0] + in[4]) * (L{1} << kIslowBits), t1 = (in[0] - in[4]) * (L{1} << kIslowBits);
  const L t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
  L o3 = in[1], o2 = in[3], o1 = in[5], o0 = in[7];
  L z4 = o1 + o3;
  z3 = o0 + o2;
  z2 = o1 + o2;
  z1 = o0 + o3;
  const L z5 = (z3 + z4) * 9633;
  o3 *= 12299;
  o2 *= 25172;
  o1 *= 16819;
  o0 *= 2446;
  z4 = z4 * -3196 + z5;
  z3 = z3 * -16069 + z5;
  z1 *= -7373;
  z2 *= -20995;
  o3 += z1 + z4;
  o2 += z2 + z3;
  o1 += z2 + z4;
  o0 += z1 + z3;
  out[0] = t10 + o3;
  out[7] = t10 - o3;
  out[1] = t11 + o2;
  out[6] = t11 - o2;
  out[2] = t12 + o1;
  out[5] = t12 - o1;
  out[3] = t13 + o0;
  out[4] = t13 - o0;
}

std::int64_t descale64(std::int64_t x, int n) {
  return (x + (std::int64_t{1} << (n - 1))) >> n;
}

std::uint8_t idct_sample(std::int64_t v) {
  const int m = static_cast<int>(v & 1023);
  return static_cast<std::uint8_t>(m < 512 ? std::min(m + 128, 255) : m >= 896 ? m - 896 : 0);
}

std::int16_t fast_mul(int v, int c) {
  return static_cast<std::int16_t>((v * c) >> 8);
}

void fdct_fast_1d(std::int16_t* d, int step) {
  auto at = [&](int k) -> std::int16_t& { return d[k * step]; };
  using S = std::int16_t;
  const S t0 = S(at(0) + at(7)), t7 = S(at(0) - at(7)), t1 = S(at(1) + at(6)),
          t6 = S(at(1) - at(6)), t2 = S(at(2) + at(5)), t5 = S(at(2) - at(5)),
          t3 = S(at(3) + at(4)), t4 = S(at(3) - at(4));
  S t10 = S(t0 + t3), t13 = S(t0 - t3), t11 = S(t1 + t2), t12 = S(t1 - t2);
  at(0) = S(t10 + t11);
  at(4) = S(t10 - t11);
  const S z1 = fast_mul(t12 + t13, 181);
  at(2) = S(t13 + z1);
  at(6) = S(t13 - z1);
  t10 = S(t4 + t5);
  t11 = S(t5 + t6);
  t12 = S(t6 + t7);
  const S z5 = fast_mul(t10 - t12, 98);
  const S z2 = S(fast_mul(t10, 139) + z5), z4 = S(fast_mul(t12, 334) + z5);
  const S z3 = fast_mul(t11, 181);
  const S z11 = S(t7 + z3), z13 = S(t7 - z3);
  at(5) = S(z13 + z2);
  at(3) = S(z13 - z2);
  at(1) = S(z11 + z4);
  at(7) = S(z11 - z4);
}

void fdct_slow_1d(std::int16_t* d, int step, bool last) {
  auto at = [&](int k) -> std::int16_t& { return d[k * step]; };
  using S = std::int16_t;
  const int t0 = at(0) + at(7), t7 = at(0) - at(7), t1 = at(1) + at(6), t6 = at(1) - at(6);
  const int t2 = at(2) + at(5), t5 = at(2) - at(5), t3 = at(3) + at(4), t4 = at(3) - at(4);
  const int t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
  const int shift = last ? kIslowBits + kPass1Bits : kIslowBits - kPass1Bits;
  at(0) = S(last ? descale(t10 + t11, kPass1Bits) : (t10 + t11) * (1 << kPass1Bits));
  at(4) = S(last ? descale(t10 - t11, kPass1Bits) : (t10 - t11) * (1 << kPass1Bits));
  const int e = (t12 + t13) * 4433;
  at(2) = S(descale(e + t13 * 6270, shift));
  at(6) = S(descale(e + t12 * -15137, shift));
  int z1 = t4 + t7, z2 = t5 + t6, z3 = t4 + t6, z4 = t5 + t7;
  const int z5 = (z3 + z4) * 9633;
  z1 *= -7373;
  z2 *= -20995;
  z3 = z3 * -16069 + z5;
  z4 = z4 * -3196 + z5;
  at(7) = S(descale(t4 * 2446 + z1 + z3, shift));
  at(5) = S(descale(t5 * 16819 + z2 + z4, shift));
  at(3) = S(descale(t6 * 25172 + z2 + z3, shift));
  at(1) = S(descale(t7 * 12299 + z1 + z4, shift));
}

// The baseline tables jpeg_set_quality(quality) gives Y (0) and chroma (1).
void quality_tables(int quality, std::array<std::uint16_t, 64>* luma,
                    std::array<std::uint16_t, 64>* chroma) {
  auto c = std::make_unique<Compression>();
  c->info.err = jpeg_std_error(&c->errors);
  c->errors.error_exit = jump_on_error;
  if (setjmp(c->back)) {
    jpeg_destroy_compress(&c->info);
    throw Error(std::string("JPEG quantisation tables: ") + c->message);
  }
  jpeg_create_compress(&c->info);
  c->info.in_color_space = JCS_RGB;
  c->info.input_components = 3;
  jpeg_set_defaults(&c->info);
  jpeg_set_quality(&c->info, quality, TRUE);
  for (int k = 0; k < 64; ++k) {
    (*luma)[k] = c->info.quant_tbl_ptrs[0]->quantval[k];
    (*chroma)[k] = c->info.quant_tbl_ptrs[1]->quantval[k];
  }
  jpeg_destroy_compress(&c->info);
}

}  // namespace

bool jpeg_planes_encoder_is_turbojpegs() {
  for (const char* name : {"TJ_OPTIMIZE", "TJ_ARITHMETIC", "TJ_RESTART", "TJ_PROGRESSIVE"})
    if (std::getenv(name)) return false;
  return true;
}

std::vector<std::uint8_t> encode_jpeg_planes(const YCbCrPlanes& planes,
                                             const EncodeOptions& options) {
  if (options.jpeg_quality < 1 || options.jpeg_quality > 100)
    throw UsageError("JPEG quality " + std::to_string(options.jpeg_quality) + " is not in 1..100");
  if (planes.components != 1 && planes.components != 3)
    throw Error("encoding JPEG failed: the planes are not in the encoder's layout");
  YCbCrPlanes expected =  // the sizes only
      encoder_sizes(planes.width, planes.height, planes.components, options.jpeg_subsampling);
  const bool blocks = planes.as_blocks();
  const std::size_t samples = sample_count(expected);
  if (expected.plane_width != planes.plane_width || expected.plane_height != planes.plane_height ||
      expected.h_factor != planes.h_factor || expected.v_factor != planes.v_factor ||
      (blocks ? planes.dct.quality != options.jpeg_quality ||
                    planes.dct.block_count() * 64 != size_blocks(expected) ||
                    (planes.dct.is_sparse() &&
                     (planes.dct.sparse.group_start.size() != planes.dct.sparse.groups() + 1 ||
                      planes.dct.sparse.values.size() != planes.dct.sparse.group_start.back())) ||
                    planes.dct.blocks_across != expected.dct.blocks_across ||
                    planes.dct.blocks_down != expected.dct.blocks_down ||
                    planes.dct.offset != expected.dct.offset
              : planes.samples.size() != samples))
    throw Error("encoding JPEG failed: the planes are not in the encoder's layout");
  const JpegStripLayout layout =
      jpeg_strip_layout(planes.width, planes.height, planes.components == 1,
                        options.jpeg_subsampling, options.jpeg_strip_rows);
  return compress_jpeg_strips(
      planes.width, planes.height, layout, options.threads, [&](int first, int rows) {
        auto c = std::make_unique<Compression>();
        JpegBytes out;
        out.size = compress_strip(planes, first, rows, options.jpeg_quality, c.get());
        if (out.size == 0)
          throw Error(std::string("encoding JPEG failed: ") +
                      (*c->message ? c->message : "libjpeg"));
        out.data.reset(c->data);  // released with std::free
        c->data = nullptr;
        return out;
      });
}

std::size_t SparseBlocks::start_of(std::size_t b) const {
  std::size_t start = group_start[b / kGroup];
  for (std::size_t i = b - b % kGroup; i < b; ++i) start += __builtin_popcountll(mask[i]);
  return start;
}

void SparseBlocks::resize_values(std::size_t count) {
  if (values.capacity() < count || values.capacity() > size_class(count)) {
    values = PixelVector<std::int16_t>();
    values.reserve(size_class(count));
  }
  values.resize(count);
}

void make_sparse(DctBlocks* dct) {
  if (dct->coef.empty()) return;
  const std::size_t blocks = dct->coef.size() / 64;
  SparseBlocks sparse;
  size_sparse(&sparse, blocks, count_nonzero(dct->coef.data(), dct->coef.size()));
  sparse.group_start.back() =
      static_cast<std::uint32_t>(pack_blocks(dct->coef.data(), blocks, 0, 0, &sparse));
  dct->sparse = std::move(sparse);
  dct->coef = PixelVector<std::int16_t>();
}

void make_dense(DctBlocks* dct) {
  if (dct->sparse.empty()) return;
  const SparseBlocks& sparse = dct->sparse;
  PixelVector<std::int16_t> coef(sparse.blocks() * 64);
  std::size_t at = 0;
  for (std::size_t b = 0; b < sparse.blocks(); ++b)
    at += unpack_block(sparse.mask[b], sparse.values.data() + at, coef.data() + 64 * b);
  dct->coef = std::move(coef);
  dct->sparse = SparseBlocks();
}

bool decode_jpeg_blocks(const std::vector<std::uint8_t>& bytes, YCbCrPlanes* planes, bool sparse,
                        bool progressive) {
  auto d = std::make_unique<Decompression>();
  YCbCrPlanes read;
  if (!read_blocks(bytes.data(), bytes.size(), d.get(), sparse, progressive, &read)) return false;
  *planes = std::move(read);
  return true;
}

YCbCrPlanes encoder_block_layout(int width, int height, int components,
                                 ChromaSubsampling subsampling, int quality, bool sparse) {
  if (quality < 1 || quality > 100)
    throw UsageError("JPEG quality " + std::to_string(quality) + " is not in 1..100");
  YCbCrPlanes p = encoder_sizes(width, height, components, subsampling);
  sample_count(p);  // the offsets
  DctBlocks& dct = p.dct;
  dct.quality = quality;
  dct.fast_dct = quality < 96;  // tjCompress2 without TJFLAG_ACCURATEDCT
  std::array<std::uint16_t, 64> luma{}, chroma{};
  quality_tables(quality, &luma, &chroma);
  for (int i = 0; i < components; ++i) dct.quant[i] = i == 0 ? luma : chroma;
  if (sparse)
    size_sparse(&dct.sparse, size_blocks(p) / 64, 0);
  else
    dct.coef.resize(size_blocks(p));
  return p;
}

std::array<int, 192> quantisation_divisors(const std::array<std::uint16_t, 64>& quant,
                                           bool fast_dct) {
  // jcdctmgr.c: the AAN scale factors of the fast DCT, cos(k pi / 16) sqrt(2) for row and
  // column, times 2^14.
  static const std::int16_t aan[64] = {
      16384, 22725, 21407, 19266, 16384, 12873, 8867,  4520,  22725, 31521, 29692, 26722, 22725,
      17855, 12299, 6270,  21407, 29692, 27969, 25172, 21407, 16819, 11585, 5906,  19266, 26722,
      25172, 22654, 19266, 15137, 10426, 5315,  16384, 22725, 21407, 19266, 16384, 12873, 8867,
      4520,  12873, 17855, 16819, 15137, 12873, 10114, 6967,  3552,  8867,  12299, 11585, 10426,
      8867,  6967,  4799,  2446,  4520,  6270,  5906,  5315,  4520,  3552,  2446,  1247};
  std::array<int, 192> t{};
  for (int i = 0; i < 64; ++i) {
    const unsigned divisor =
        fast_dct ? static_cast<unsigned>((static_cast<long>(quant[i]) * aan[i] + (1 << 10)) >> 11)
                 : static_cast<unsigned>(quant[i]) << 3;
    // compute_reciprocal, for 16-bit DCT elements (libjpeg-turbo's SIMD builds).
    unsigned short divisor16 = static_cast<unsigned short>(divisor);
    if (divisor16 <= 1) {  // unquantised (0 cannot come from a valid table)
      t[i] = 1;
      t[64 + i] = 0;
      t[128 + i] = -16;
      continue;
    }
    int b = 0;
    while ((divisor16 >> (b + 1)) != 0) ++b;  // floor(log2(divisor))
    int r = 16 + b;
    std::uint32_t fq = (std::uint32_t{1} << r) / divisor16;
    const std::uint32_t fr = (std::uint32_t{1} << r) % divisor16;
    unsigned c = divisor16 / 2;
    if (fr == 0) {  // a power of two
      fq >>= 1;
      --r;
    } else if (fr <= divisor16 / 2U) {
      ++c;
    } else {
      ++fq;
    }
    t[i] = static_cast<int>(fq & 0xffff);
    t[64 + i] = static_cast<int>(c & 0xffff);
    t[128 + i] = r - 16;
  }
  return t;
}

YCbCrPlanes blocks_to_planes(const YCbCrPlanes& planes) {
  if (!planes.as_blocks()) throw Error("blocks_to_planes: the planes are not DCT blocks");
  if (planes.dct.is_sparse()) {
    YCbCrPlanes dense = planes;
    make_dense(&dense.dct);
    return blocks_to_planes(dense);
  }
  YCbCrPlanes p = planes;
  p.dct = DctBlocks{};
  size_samples(p);
  const DctBlocks& dct = planes.dct;
  for (int i = 0; i < p.components; ++i) {
    const int w = p.plane_width[i], h = p.plane_height[i];
    for (int by = 0; by < dct.blocks_down[i] && by * 8 < h; ++by)
      for (int bx = 0; bx < dct.blocks_across[i] && bx * 8 < w; ++bx) {
        const std::int16_t* b = dct.coef.data() + dct.offset[i] +
                                (static_cast<std::size_t>(by) * dct.blocks_across[i] + bx) * 64;
        std::int64_t ws[64];
        for (int c = 0; c < 8; ++c) {
          std::int64_t in[8], out[8];
          for (int k = 0; k < 8; ++k)
            in[k] = b[k * 8 + c] * static_cast<std::int16_t>(dct.quant[i][k * 8 + c]);
          idct_1d(in, out);
          // libjpeg keeps pass 1 in an int workspace.
          for (int k = 0; k < 8; ++k)
            ws[k * 8 + c] = static_cast<std::int32_t>(descale64(out[k], kIslowBits - kPass1Bits));
        }
        for (int r = 0; r < 8 && by * 8 + r < h; ++r) {
          std::int64_t out[8];
          idct_1d(ws + r * 8, out);
          std::uint8_t* row = p.plane(i) + static_cast<std::size_t>(by * 8 + r) * w + bx * 8;
          for (int k = 0; k < 8 && bx * 8 + k < w; ++k)
            row[k] = idct_sample(descale64(out[k], kIslowBits + kPass1Bits + 3));
        }
      }
  }
  return p;
}

void planes_to_blocks(const YCbCrPlanes& planes, YCbCrPlanes* blocks) {
  DctBlocks& dct = blocks->dct;
  if (planes.as_blocks() || !blocks->as_blocks() || planes.width != blocks->width ||
      planes.height != blocks->height || planes.components != blocks->components ||
      planes.plane_width != blocks->plane_width || planes.plane_height != blocks->plane_height)
    throw Error("planes_to_blocks: the planes and blocks are not of one encoder layout");
  const bool sparse = dct.is_sparse();
  if (sparse) {  // made whole, then packed
    dct.coef.resize(dct.sparse.blocks() * 64);
    dct.sparse = SparseBlocks();
  }
  for (int i = 0; i < planes.components; ++i) {
    const std::array<int, 192> div = quantisation_divisors(dct.quant[i], dct.fast_dct);
    const int pitch = planes.plane_width[i];
    for (int by = 0; by < dct.blocks_down[i]; ++by)
      for (int bx = 0; bx < dct.blocks_across[i]; ++bx) {
        std::int16_t d[64];
        for (int r = 0; r < 8; ++r)
          for (int k = 0; k < 8; ++k)
            d[r * 8 + k] = static_cast<std::int16_t>(
                planes.plane(i)[static_cast<std::size_t>(by * 8 + r) * pitch + bx * 8 + k] - 128);
        for (int r = 0; r < 8; ++r) {
          if (dct.fast_dct)
            fdct_fast_1d(d + r * 8, 1);
          else
            fdct_slow_1d(d + r * 8, 1, false);
        }
        for (int c = 0; c < 8; ++c) {
          if (dct.fast_dct)
            fdct_fast_1d(d + c, 8);
          else
            fdct_slow_1d(d + c, 8, true);
        }
        std::int16_t* out = dct.coef.data() + dct.offset[i] +
                            (static_cast<std::size_t>(by) * dct.blocks_across[i] + bx) * 64;
        for (int k = 0; k < 64; ++k) {
          const int v = d[k];
          const auto a = static_cast<std::uint32_t>((v < 0 ? -v : v) + div[64 + k]);
          const auto q = static_cast<std::int16_t>((a * static_cast<std::uint32_t>(div[k])) >>
                                                   (div[128 + k] + 16));
          out[k] = v < 0 ? static_cast<std::int16_t>(-q) : q;
        }
      }
  }
  if (sparse) make_sparse(&dct);
}

Image ycbcr_to_rgba(const YCbCrPlanes& planes) {
  Image rgba{planes.width, planes.height, 4, {}};
  rgba.pixels.resize(static_cast<std::size_t>(planes.width) * planes.height * 4);
  const PlaneView y{planes.plane(0), planes.width, planes.height, planes.plane_width[0]};
  PlaneView cb = y, cr = y;
  if (planes.components == 3) {
    cb = {planes.plane(1), planes.chroma_width(), planes.chroma_height(), planes.plane_width[1]};
    cr = {planes.plane(2), planes.chroma_width(), planes.chroma_height(), planes.plane_width[2]};
  }
  for (int py = 0; py < planes.height; ++py)
    for (int px = 0; px < planes.width; ++px) {
      std::uint8_t* out = &rgba.pixels[rgba.index(px, py)];
      const int l = y.at(py, px);
      out[3] = 255;
      if (planes.components == 1) {
        out[0] = out[1] = out[2] = static_cast<std::uint8_t>(l);
        continue;
      }
      // jdcolor.c: R = Y + 1.402 Cr, G = Y - 0.34414 Cb - 0.71414 Cr, B = Y + 1.772 Cb.
      const int b = upsample(cb, planes.h_factor, planes.v_factor, px, py) - 128;
      const int r = upsample(cr, planes.h_factor, planes.v_factor, px, py) - 128;
      out[0] = saturate(l + ((91881 * r + 32768) >> 16));
      out[1] = saturate(l + ((-22554 * b - 46802 * r + 32768) >> 16));
      out[2] = saturate(l + ((116130 * b + 32768) >> 16));
    }
  return rgba;
}

YCbCrPlanes rgba_to_ycbcr(const Image& rgba, int components, ChromaSubsampling subsampling) {
  if (rgba.channels != 4) throw Error("rgba_to_ycbcr: expected an RGBA image");
  YCbCrPlanes p = encoder_layout(rgba.width, rgba.height, components, subsampling);
  const int w = rgba.width, h = rgba.height;
  auto pixel = [&](int x, int y) {
    return &rgba.pixels[rgba.index(clamp_index(x, w), clamp_index(y, h))];
  };
  for (int y = 0; y < p.plane_height[0]; ++y)
    for (int x = 0; x < p.plane_width[0]; ++x) {
      const std::uint8_t* c = pixel(x, y);
      p.plane(0)[static_cast<std::size_t>(y) * p.plane_width[0] + x] =
          static_cast<std::uint8_t>(luma(c[0], c[1], c[2]));
    }
  const int hf = p.h_factor, vf = p.v_factor, ch = p.chroma_height();
  for (int i = 1; i < components; ++i) {
    int (*chroma)(int, int, int) = i == 1 ? blue_chroma : red_chroma;
    for (int y = 0; y < p.plane_height[i]; ++y)
      for (int x = 0; x < p.plane_width[i]; ++x) {
        // Rows past the image's repeat its last chroma row; columns are means of repeated
        // pixels, with jcsample.c's bias (1, 2, 1, 2, ... across for 2x2; 0, 1, ... for 2x1).
        const int cy = std::min(y, ch - 1);
        int sum = 0;
        for (int dy = 0; dy < vf; ++dy)
          for (int dx = 0; dx < hf; ++dx) {
            const std::uint8_t* c = pixel(x * hf + dx, cy * vf + dy);
            sum += chroma(c[0], c[1], c[2]);
          }
        const int n = hf * vf;
        const int bias = n == 4 ? (x & 1 ? 2 : 1) : n == 2 ? (x & 1) : 0;
        p.plane(i)[static_cast<std::size_t>(y) * p.plane_width[i] + x] =
            static_cast<std::uint8_t>((sum + bias) >> (n == 4   ? 2
                                                       : n == 2 ? 1
                                                                : 0));
      }
  }
  return p;
}

}  // namespace blurtool
