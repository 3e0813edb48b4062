// JPEG's colour planes on the host (see jpeg_planes.h).
#include "core/jpeg_planes.h"

#include <turbojpeg.h>

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>

// jpeglib.h needs FILE and size_t declared first; jerror.h the error codes.
#include <jerror.h>
#include <jpeglib.h>

#include "core/error.h"

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

YCbCrPlanes decoder_layout(int width, int height, int components, int h_factor, int v_factor) {
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
  if (tjDecompressToYUVPlanes(handle.get(), bytes.data(), bytes.size(), planes, w, strides, h, 0) !=
      0) {
    if (tjGetErrorCode(handle.get()) != TJERR_WARNING)
      throw Error(name + ": corrupt JPEG data (" + tj_reason_of(handle.get()) + ")");
    // Damaged data that libjpeg decodes anyway, as tjDecompress2 does.
    if (damage) *damage = tjGetErrorStr2(handle.get());
  }
  return p;
}

namespace {

// One compression's libjpeg state, kept by the caller of compress_planes so that nothing the
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

// Rows [first, first + rows) of `planes` (whole MCU rows but for the image's last) as one
// baseline JPEG into c.data (its size returned; 0 after an error, c.message saying which), with
// TurboJPEG's compressor settings: JFIF, the IJG quality scaling with baseline tables, standard
// Huffman tables, the fast integer DCT below quality 96 (tjCompress2 without
// TJFLAG_ACCURATEDCT), Y sampled hf x vf and Cb, Cr once an MCU.
std::size_t compress_planes(const YCbCrPlanes& planes, int first, int rows, int quality,
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
  info.dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_IFAST;
  info.raw_data_in = TRUE;
  info.comp_info[0].h_samp_factor = planes.h_factor;
  info.comp_info[0].v_samp_factor = planes.v_factor;
  for (int i = 1; i < planes.components; ++i)
    info.comp_info[i].h_samp_factor = info.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&info, TRUE);
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
    jpeg_write_raw_data(&info, arrays, static_cast<JDIMENSION>(mcu));
  }
  jpeg_finish_compress(&info);
  const std::size_t size = c->capacity - c->destination.free_in_buffer;
  jpeg_destroy_compress(&info);
  return size;
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
  YCbCrPlanes expected;  // the sizes only
  if (planes.components == 1 || planes.components == 3)
    expected =
        encoder_sizes(planes.width, planes.height, planes.components, options.jpeg_subsampling);
  if (expected.components == 0 || expected.plane_width != planes.plane_width ||
      expected.plane_height != planes.plane_height || expected.h_factor != planes.h_factor ||
      expected.v_factor != planes.v_factor || planes.samples.size() != sample_count(expected))
    throw Error("encoding JPEG failed: the planes are not in the encoder's layout");
  const JpegStripLayout layout =
      jpeg_strip_layout(planes.width, planes.height, planes.components == 1,
                        options.jpeg_subsampling, options.jpeg_strip_rows);
  return compress_jpeg_strips(
      planes.width, planes.height, layout, options.threads, [&](int first, int rows) {
        auto c = std::make_unique<Compression>();
        JpegBytes out;
        out.size = compress_planes(planes, first, rows, options.jpeg_quality, c.get());
        if (out.size == 0)
          throw Error(std::string("encoding JPEG failed: ") +
                      (*c->message ? c->message : "libjpeg"));
        out.data.reset(c->data);  // released with std::free
        c->data = nullptr;
        return out;
      });
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
