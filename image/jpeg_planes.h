// JPEG's colour planes on the host: a JPEG decoded only as far as its Y, Cb and Cr planes as
// coded (entropy decoding, dequantisation and IDCT by libjpeg-turbo, but no chroma upsampling or
// YCbCr -> RGB conversion), and a JPEG encoded from such planes (RGB -> YCbCr and chroma
// downsampling already done), so that those per-pixel stages can run on the device instead
// (filters/ycbcr_device.h): the planes are 1.5 bytes a pixel at 4:2:0 against RGBA's 4, and the
// host codec does 0.8x of its work (kernels/NOTES.md, "JPEG colour conversion on the device").
// This is the split of nvJPEG's hybrid back-end at its simplest: entropy coding and the DCT stay
// with libjpeg-turbo.
//
// Both directions give libjpeg-turbo's own bytes exactly: ycbcr_to_rgba (and its device
// kernel) is libjpeg's fancy upsampling (jdsample.c: triangle filters, h2v1, h1v2 and h2v2)
// and YCbCr -> RGB (jdcolor.c, 16-bit fixed point) as TurboJPEG's tjDecompress2 applies them,
// and rgba_to_ycbcr is libjpeg's RGB -> YCbCr (jccolor.c) and downsampling (jcsample.c: 2x2 or
// 2x1 means with its alternating rounding bias) over the edge padding libjpeg makes (jcprepct.c:
// the last column repeated to whole blocks before downsampling, the last row group and then the
// last downsampled row repeated to whole MCU rows), compressed through libjpeg's raw-data
// interface with TurboJPEG's settings. The tests hold both to tjDecompress2 and tjCompress2.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "image/image_io.h"

namespace blurtool {

/// DCT blocks without their zeros, a form in which to move them between host and device
/// (BLURTOOL_JPEG_DCT=sparse): a quantised block of a photo holds mostly zeros (about 3 in 4 of
/// a q95 photo's coefficients, 9 in 10 of a blurred one's), so this is 3 to 8 times fewer bytes
/// than the blocks whole, though not faster on the H100 machine, where the host's packing costs
/// more than the smaller transfers save (kernels/NOTES.md, "Sparse DCT blocks"). Blocks are
/// numbered through the components in order, as in DctBlocks::coef (block b is coefficients 64 b
/// ..). mask[b] has bit k set where block b's coefficient k (natural order) is not zero; `values`
/// holds the non-zero coefficients, block by block, each block's in natural order; group_start[g]
/// is the index in `values` of block kGroup * g's first, and group_start.back() the count of values
/// (one entry more than there are groups): a block's values start at its group's start plus the
/// bits of the masks before it in its group. The kernels unpack_blocks and pack_blocks
/// (kernels/ycbcr.cl) read and write it a work-group a group.
struct SparseBlocks {
  static constexpr int kGroup = 64;  ///< blocks a group
  PixelVector<std::uint64_t> mask;
  PixelVector<std::int16_t> values;
  std::vector<std::uint32_t> group_start;

  bool empty() const { return mask.empty(); }
  std::size_t blocks() const { return mask.size(); }
  std::size_t groups() const { return (mask.size() + kGroup - 1) / kGroup; }
  /// Where block b's values start in `values`.
  std::size_t start_of(std::size_t b) const;
  /// `values` resized to `count` (unwritten), its capacity one of a few sizes a power of two,
  /// so that a pool of reused blocks (PixelPool) meets the same sizes image after image.
  /// Throws std::bad_alloc.
  void resize_values(std::size_t count);
};

/// A JPEG's components as quantised DCT coefficients: component i is blocks_down[i] rows of
/// blocks_across[i] 8x8 blocks from coef[offset[i]], 64 coefficients a block in natural order
/// (row-major, not zigzag), as libjpeg's JBLOCK; quant[i] is its quantisation table (natural
/// order). Decoding: the blocks the file codes (width_in_blocks x height_in_blocks), which
/// dequantisation and the inverse DCT turn into the planes. Encoding: the blocks the forward
/// DCT and quantisation make from the planes in encoder_layout (the image's blocks, not the
/// dummy blocks of partial MCUs, which libjpeg's entropy coder makes itself).
struct DctBlocks {
  std::array<int, 3> blocks_across{}, blocks_down{};
  std::array<std::size_t, 3> offset{};
  std::array<std::array<std::uint16_t, 64>, 3> quant{};
  int quality = 0;        ///< encoding: the quality the tables were scaled for (1..100)
  bool fast_dct = false;  ///< encoding: the fast integer forward DCT (TurboJPEG below 96)
  PixelVector<std::int16_t> coef;
  SparseBlocks sparse;  ///< the coefficients held sparse (then `coef` is empty)
  /// The coefficients still entropy-coded: the scan as EntropyDecoder::pack lays it out
  /// (image/jpeg_entropy.h), which the device decodes (then `coef` and `sparse` are empty).
  PixelVector<std::uint8_t> entropy;

  bool empty() const { return coef.empty() && sparse.empty() && entropy.empty(); }
  bool is_sparse() const { return !sparse.empty(); }
  bool is_entropy() const { return !entropy.empty(); }
  /// The blocks of the components' layout (coef.size() / 64 where whole).
  std::size_t block_count() const {
    if (is_sparse()) return sparse.blocks();
    if (is_entropy()) return layout_blocks();
    return coef.size() / 64;
  }
  /// The blocks blocks_across and blocks_down give, in whatever form (if any) they are held.
  std::size_t layout_blocks() const {
    std::size_t n = 0;
    for (int i = 0; i < 3; ++i) n += static_cast<std::size_t>(blocks_across[i]) * blocks_down[i];
    return n;
  }
  /// Bytes the coefficients take in the form they are held.
  std::size_t bytes() const {
    return coef.size() * sizeof(std::int16_t) + sparse.mask.size() * sizeof(std::uint64_t) +
           sparse.values.size() * sizeof(std::int16_t) +
           sparse.group_start.size() * sizeof(std::uint32_t) + entropy.size();
  }
};

/// `dct`'s coefficients held sparse (SparseBlocks), `coef` emptied; a no-op where they are.
/// Throws std::bad_alloc.
void make_sparse(DctBlocks* dct);
/// `dct`'s coefficients held whole in `coef`, `sparse` emptied; a no-op where they are.
/// Throws std::bad_alloc.
void make_dense(DctBlocks* dct);

/// A JPEG's samples as coded: Y, or Y, Cb and Cr, each a plane of 8-bit samples in `samples`,
/// rows top to bottom, plane_width[i] samples a row (the row pitch), plane_height[i] rows, from
/// offset[i]. Cb and Cr cover h_factor x v_factor pixels a sample (chroma subsampling: 1x1 for
/// 4:4:4, 2x1 for 4:2:2, 1x2 for 4:4:0, 2x2 for 4:2:0); the samples of the image are the first
/// ceil(width / h_factor) x ceil(height / v_factor) of a chroma plane and width x height of Y,
/// the rest is padding (as the layout functions below say).
struct YCbCrPlanes {
  int width = 0, height = 0;  ///< the image, pixels
  int components = 0;         ///< 1 (greyscale: Y) or 3 (Y, Cb, Cr); 0: no planes
  int h_factor = 1, v_factor = 1;
  std::array<int, 3> plane_width{}, plane_height{};
  std::array<std::size_t, 3> offset{};
  PixelVector<std::uint8_t> samples;
  /// The planes as DCT blocks instead (then `samples` is empty): the JPEG stages of the IDCT or
  /// the forward DCT run on the device too (kernels/ycbcr.cl), the host only entropy-codes.
  DctBlocks dct;

  bool empty() const { return components == 0; }
  bool as_blocks() const { return !dct.empty(); }
  /// The samples the planes hold, as blocks or not.
  std::size_t sample_count() const {
    return components == 0
               ? 0
               : offset[components - 1] + static_cast<std::size_t>(plane_width[components - 1]) *
                                              plane_height[components - 1];
  }
  /// Chroma samples a row and rows that hold image data.
  int chroma_width() const { return (width + h_factor - 1) / h_factor; }
  int chroma_height() const { return (height + v_factor - 1) / v_factor; }
  const std::uint8_t* plane(int i) const { return samples.data() + offset[i]; }
  std::uint8_t* plane(int i) { return samples.data() + offset[i]; }
};

/// The layout TurboJPEG decodes a `width` x `height` JPEG of `components` (1 or 3) with chroma
/// factors h_factor x v_factor into (tjPlaneWidth, tjPlaneHeight: Y padded to whole chroma
/// samples), `samples` sized but not written. Throws blurtool::Error for a size of 0.
YCbCrPlanes decoder_layout(int width, int height, int components, int h_factor, int v_factor);

/// decoder_layout's sizes and offsets without its samples (`samples` empty). Throws as
/// decoder_layout does.
YCbCrPlanes decoder_sizes(int width, int height, int components, int h_factor, int v_factor);

/// The layout libjpeg's raw-data interface takes a `width` x `height` JPEG in: every plane
/// padded to whole 8x8 blocks across (width_in_blocks * 8) and to whole MCU rows down,
/// greyscale for components 1, else `subsampling`; `samples` sized but not written.
YCbCrPlanes encoder_layout(int width, int height, int components, ChromaSubsampling subsampling);

/// Whether a width x height image's planes and RGBA pixels can be indexed with 32-bit ints, as
/// the device kernels index them (about 700 Mpixel at most; the default --max-pixels is 268).
bool planes_addressable(int width, int height);

/// Whether encode_jpeg_planes writes what tjCompress2 would: not where TurboJPEG's environment
/// variables (TJ_OPTIMIZE, TJ_ARITHMETIC, TJ_RESTART, TJ_PROGRESSIVE) change its compressor,
/// which the raw-data encoder does not read.
bool jpeg_planes_encoder_is_turbojpegs();

/// Whether decode_jpeg_planes takes JPEG `bytes` (already checked by read_image_header): a
/// greyscale or YCbCr JPEG with chroma factors of 1 or 2 (4:4:4, 4:2:2, 4:4:0, 4:2:0) that
/// TurboJPEG reads, shown as stored (EXIF orientation 1, or `orient` false), small enough for
/// planes_addressable, and more than 4 pixels wide where chroma has half the columns (libjpeg
/// upsamples chroma rows of 1 or 2 samples by repetition, not by its triangle filter). Never
/// throws.
bool jpeg_planes_supported(const std::vector<std::uint8_t>& bytes, bool orient);

/// Decodes JPEG `bytes` (jpeg_planes_supported) to its planes in decoder_layout
/// (tjDecompressToYUVPlanes). Damaged data that libjpeg decodes anyway leaves libjpeg's words
/// in `damage` (if not null). Throws blurtool::Error naming `name` if TurboJPEG fails, more than
/// kMaxJpegScans scans included (TJFLAG_LIMITSCANS).
YCbCrPlanes decode_jpeg_planes(const std::vector<std::uint8_t>& bytes, const std::string& name,
                               std::string* damage = nullptr);

/// The JPEG of `planes` (encoder_layout, of the components and subsampling options.
/// jpeg_subsampling gives; or encoder_block_layout at that quality, its blocks entropy-coded
/// through jpeg_write_coefficients), at options.jpeg_quality, in the restart strips of
/// jpeg_strip_layout on up to options.threads threads: the bytes encode_rgba writes for the
/// RGBA image the planes were made from (rgba_to_ycbcr). Throws blurtool::UsageError for a
/// quality outside 1..100, blurtool::Error if libjpeg fails or the planes are not such a layout.
std::vector<std::uint8_t> encode_jpeg_planes(const YCbCrPlanes& planes,
                                             const EncodeOptions& options);

/// Decodes JPEG `bytes` (jpeg_planes_supported) only as far as its quantised DCT blocks
/// (libjpeg's jpeg_read_coefficients), into *planes: decoder_layout's sizes without samples,
/// and planes->dct; baseline, extended or progressive Huffman coding. False, *planes
/// untouched, for a file the blocks do not take: arithmetic coding (libjpeg decodes damaged
/// arithmetic data without a warning), other than 8-bit, components libjpeg codes otherwise
/// than decoder_layout says, or a progressive file whose scans leave a coefficient short of its
/// last bit (libjpeg smooths some of those blocks; jdcoefct.c); also for
/// damaged data (libjpeg warns: its coefficients may be of a range where libjpeg-turbo's SIMD
/// IDCT, which saturates 16-bit lanes, and its C IDCT, which the device follows, differ) and
/// data libjpeg refuses, more than kMaxJpegScans scans included (the whole decoder then says
/// why).
/// Exact, then, for every file an encoder made from 8-bit samples; a crafted file with
/// coefficients out of that range decodes as libjpeg-turbo's C IDCT decodes it. `sparse`: the
/// blocks held sparse (SparseBlocks), as they go to a device. `progressive`: whether progressive
/// files are taken (false: left to the planes path, where a batch's --jpeg-codec auto keeps
/// them). Never throws but std::bad_alloc.
bool decode_jpeg_blocks(const std::vector<std::uint8_t>& bytes, YCbCrPlanes* planes,
                        bool sparse = false, bool progressive = true);

/// encoder_layout's sizes for a JPEG at `quality` (1..100) held as DCT blocks: dct sized for
/// the image's blocks, quant holding the tables jpeg_set_quality gives (baseline), fast_dct for
/// a quality below 96; no samples. encode_jpeg_planes takes it once the blocks are made (on the
/// device, or by planes_to_blocks). `sparse`: sized to be held sparse (SparseBlocks: mask and
/// group_start sized, values empty), as a device makes them. Throws blurtool::UsageError for a
/// quality outside 1..100.
YCbCrPlanes encoder_block_layout(int width, int height, int components,
                                 ChromaSubsampling subsampling, int quality, bool sparse = false);

/// jcdctmgr.c's quantisation divisors for table `quant`: 64 reciprocals, 64 corrections (with
/// the rounding), 64 shifts, such that a coefficient c becomes
/// sign(c) * (((|c| + correction) * reciprocal) >> (shift + 16)) as a 16-bit value; for the
/// fast DCT the table is scaled by its AAN factors first. The kernel plane_to_dct takes them.
std::array<int, 192> quantisation_divisors(const std::array<std::uint16_t, 64>& quant,
                                           bool fast_dct);

/// The host reference of the device's IDCT (kernel dct_to_plane): `planes` (decode_jpeg_blocks)
/// with samples, each block dequantised and inverse-transformed by jidctint.c's arithmetic,
/// as tjDecompressToYUVPlanes gives them. Throws blurtool::Error unless planes are blocks.
YCbCrPlanes blocks_to_planes(const YCbCrPlanes& planes);

/// The host reference of the device's forward DCT (kernel plane_to_dct): `blocks`
/// (encoder_block_layout) with its coefficients made from `planes` (encoder_layout of the
/// same image), as libjpeg's compressor makes them. Throws blurtool::Error for other layouts.
void planes_to_blocks(const YCbCrPlanes& planes, YCbCrPlanes* blocks);

/// RGBA8 pixels of `planes` (decoder_layout) as tjDecompress2 would decode the JPEG: fancy
/// upsampling and YCbCr -> RGB, alpha 255; grey as R = G = B. The host reference of the device
/// kernel (kernels/ycbcr.cl).
Image ycbcr_to_rgba(const YCbCrPlanes& planes);

/// The planes (encoder_layout for `components` 1 or 3 and `subsampling`) of RGBA8 `rgba`
/// (alpha ignored), as tjCompress2 computes them from RGBX. The host reference of the device
/// kernels. Throws blurtool::Error unless `rgba` has 4 channels.
YCbCrPlanes rgba_to_ycbcr(const Image& rgba, int components, ChromaSubsampling subsampling);

}  // namespace blurtool
