// Image input and output: PNG, JPEG, TIFF and WebP files to and from 8- or 16-bit interleaved
// pixels.
//
// Which library does what:
// - the format is recognised by the file's signature bytes only, PNG (89 50 4E 47 0D 0A 1A 0A) or
//   JPEG (FF D8 FF), TIFF ("II*\0" or "MM\0*") or WebP ("RIFF", size, "WEBP"), so no other
//   decoder (GIF, TGA, PNM, HDR, ...) is ever reached;
// - the header is read first (a PNG's IHDR chunk, a JPEG's frame header, both straight from the
//   bytes; a TIFF's first directory by libtiff, whose tags are checked against the few variants
//   read (image/tiff_codec.h); a WebP's by WebPGetFeatures) so that max_pixels is enforced
//   before anything is decoded; a JPEG of more than kMaxJpegScans scans is refused there;
// - TIFFs are read and written by libtiff, WebPs by libwebp (image/tiff_codec.h,
//   image/webp_codec.h), whole images in memory;
// - JPEGs are decoded by libjpeg-turbo's TurboJPEG API (SIMD; 2x faster than stb_image on
//   12-Mpixel photos; arithmetic coding too), PNGs by libpng straight into the Image (stb_image
//   needs a second buffer and a copy; 1.1x to 1.7x faster), every CRC and the Adler-32 checked;
//   stb_image (Debian's libstb) decodes whatever those two do not read (CMYK JPEGs, Apple's
//   CgBI PNGs), but never a PNG whose checksums fail;
// - PNGs are encoded by png_encode (its own row filters, zlib's deflate in strips on
//   every core joined into one zlib stream, the chunks' CRCs by zlib's crc32), JPEGs by
//   TurboJPEG (one compressor per thread; 4:2:0, 4:2:2 or 4:4:4 chroma subsampling, or
//   greyscale; a large image in strips on every core joined by restart markers into one
//   JPEG, see JpegStripLayout); both read the device's RGBA result without a reduced copy
//   (encode_rgba).
// 16-bit samples: load_image reduces a 16-bit PNG to 8 bits, load_image_wide keeps its 16 bits
// (an Image16), and the same for a 16-bit TIFF; an Image16 is written as a 16-bit PNG or TIFF, or
// narrowed to 8 bits for JPEG and WebP.
// Outputs are written to a temporary file in the output's directory and renamed into place, so
// an interrupted or failed run never leaves a partial file; the temporary files in flight are
// also removed when the process is killed by SIGINT, SIGTERM or SIGHUP (install_cleanup_handlers).
// The image in memory (Image, Image16) and the conversions between pixel layouts (to_rgba,
// from_rgba, widen, narrow, apply_orientation) are declared in image/pixel_layout.h, included
// here.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image/pixel_layout.h"
#include "image/png_encode.h"
#include "util/atomic_file.h"
#include "util/host_memory.h"
#include "util/named.h"

namespace blurtool {

/// Container formats blurtool reads and writes.
enum class ImageFormat { png, jpeg, tiff, webp };

/// The largest side a WebP holds (14 bits in its headers); encode_image refuses larger.
constexpr int kMaxWebpSide = 16383;

/// The compression of a TIFF written (EncodeOptions::tiff_compression): LZW and deflate with the
/// horizontal predictor.
enum class TiffCompression { none, lzw, deflate };

/// Largest image accepted, in pixels (width * height), checked from the header before decoding.
/// What memory an image may take is --max-memory's (larger images run in strips of rows), so
/// this only bounds the time a hostile header can ask for.
constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{1} << 30;

/// Largest input file accepted, in bytes, checked before it is read (stb_image takes an int
/// length, so at most 2^31 - 1).
constexpr std::uint64_t kDefaultMaxFileBytes = std::uint64_t{1} << 30;

/// A decoded file at the depth its file stores: a 16-bit PNG as Image16 in `wide`, every other
/// file as Image in `narrow`; exactly one of the two has channels != 0. `stored_channels` is the
/// file's own channel count (1-4); the image holds that many, or 4 where the decoder was asked
/// to expand to RGBA (see load_image_wide).
struct DecodedImage {
  Image narrow;
  Image16 wide;
  int stored_channels = 0;

  bool is_wide() const { return wide.channels != 0; }
  int width() const { return is_wide() ? wide.width : narrow.width; }
  int height() const { return is_wide() ? wide.height : narrow.height; }
  /// The file's channel count (stored_channels where the decoder set it).
  int channels() const {
    return stored_channels ? stored_channels : is_wide() ? wide.channels : narrow.channels;
  }
};

/// Reads a PNG, JPEG, TIFF or WebP file. The format is recognised by its signature bytes, not its
/// name: where the name's extension claims another format, "PATH: a PNG image under a JPEG name,
/// read as what it is" (or the like) is appended to `warnings` (if not null).
/// A TIFF of a variant not read (image/tiff_codec.h) is refused by name before its pixels are
/// decoded ("PATH: TIFF with JPEG compression is not supported"); an animated WebP is refused.
/// 16-bit PNGs and TIFFs are reduced to 8 bits (each sample's high byte, as stb_image reduced them)
/// and a warning is appended to `warnings`; load_image_wide keeps their 16 bits. A JPEG without its
/// end-of-image marker after the scan data is refused as truncated. Throws blurtool::Error naming
/// `path` when the file is missing, empty, unreadable, not PNG or JPEG, truncated, corrupt (a PNG
/// whose CRC or Adler-32 fails: "PATH: corrupt PNG (IDAT: CRC error)", libpng's words), a JPEG of
/// more than kMaxJpegScans scans ("PATH: too many scans
/// ..."), larger than `max_pixels` (width * height, from the header) or
/// longer than `max_file_bytes` (from the file's size before reading, or while reading one that
/// has none, such as a pipe).
/// With `orient`, a JPEG's EXIF orientation or a TIFF's Orientation tag is applied
/// (exif_orientation, apply_orientation), so that a phone photo comes out upright; without it
/// the stored pixels are returned as they are.
Image load_image(const std::string& path, std::vector<std::string>* warnings = nullptr,
                 std::uint64_t max_pixels = kDefaultMaxPixels,
                 std::uint64_t max_file_bytes = kDefaultMaxFileBytes, bool orient = true);

/// Reads all of an open file descriptor (standard input, a pipe) into memory, refusing more
/// than `max_file_bytes`, and refusing as soon as its first 8 bytes are read a stream that does
/// not start with a PNG, JPEG, TIFF or WebP signature (a WebP's first 8: "RIFF" and its size;
/// shorter ones are left to decode_image).
/// `name` is used in error messages. Throws blurtool::Error.
std::vector<std::uint8_t> read_all(int fd, const std::string& name,
                                   std::uint64_t max_file_bytes = kDefaultMaxFileBytes);

/// The same from bytes in memory; `name` is used in error messages.
Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                   std::vector<std::string>* warnings = nullptr,
                   std::uint64_t max_pixels = kDefaultMaxPixels, bool orient = true);

/// Reads a PNG or JPEG file as load_image does (same checks, limits, errors and orientation),
/// except that a 16-bit PNG of any colour type keeps its 16 bits: it comes back in `wide`, with
/// exact samples (a tRNS chunk on 16-bit grey or RGB gives a 16-bit alpha channel). Every other
/// file comes back in `narrow`, as load_image returns it. Nothing is reduced, so the one warning
/// appended to `warnings` is load_image's for a misnamed file.
/// With `expand_rgba` the decoder writes RGBA directly (grey -> R=G=B, missing alpha -> full
/// scale), the layout the device takes, with no second pass over the pixels (TurboJPEG's RGBX
/// output, libpng's gray-to-RGB and filler transformations); the samples equal to_rgba() of the
/// image decoded without it, and `stored_channels` keeps the file's channel count.
DecodedImage load_image_wide(const std::string& path, std::vector<std::string>* warnings = nullptr,
                             std::uint64_t max_pixels = kDefaultMaxPixels,
                             std::uint64_t max_file_bytes = kDefaultMaxFileBytes,
                             bool orient = true, bool expand_rgba = false);

/// The bytes of the file at `path`, refusing more than `max_file_bytes` (see read_all).
/// Throws blurtool::Error naming `path` when it cannot be opened or read.
std::vector<std::uint8_t> read_image_file(const std::string& path,
                                          std::uint64_t max_file_bytes = kDefaultMaxFileBytes);

/// Why `path` is no file for a batch to read: "not a regular file (a named pipe)", or a socket,
/// a character or block device, which opening would wait on or read without end; "" for a
/// regular file, a folder, or a name that cannot be stat'ed (opening it says why). Links are
/// followed. Never throws.
std::string not_a_file_reason(const std::string& path);

/// What a file's header says, before any pixel is decoded: the size as decoding returns it
/// (with `orient`, a JPEG's EXIF orientation or a TIFF's Orientation tag 5-8 swaps width and
/// height), the file's channel count (a PNG's tRNS chunk counted as alpha) and whether it stores
/// 16-bit samples.
struct ImageHeader {
  int width = 0, height = 0, channels = 0;
  bool sixteen_bit = false;
};

/// Reads the header of PNG or JPEG `bytes` with the checks decode_image makes first (signature,
/// truncation, max_pixels), so that the work that depends only on the size can start while the
/// pixels are decoded. Throws blurtool::Error naming `name` as decode_image does.
ImageHeader read_image_header(const std::vector<std::uint8_t>& bytes, const std::string& name,
                              std::uint64_t max_pixels = kDefaultMaxPixels, bool orient = true);

/// The same from bytes in memory; `name` is used in error messages (see decode_image).
DecodedImage decode_image_wide(const std::vector<std::uint8_t>& bytes, const std::string& name,
                               std::vector<std::string>* warnings = nullptr,
                               std::uint64_t max_pixels = kDefaultMaxPixels, bool orient = true,
                               bool expand_rgba = false);

struct YCbCrPlanes;    // image/jpeg_planes.h
struct ImageMetadata;  // image/metadata.h
struct EntropyScan;    // image/jpeg_entropy.h

/// Reads JPEG `bytes` as decode_image_wide does (the same checks, limits, errors and warnings)
/// but only as far as its colour planes (decode_jpeg_planes), or with `blocks` as far as its
/// DCT blocks (held sparse with `sparse`) where decode_jpeg_blocks takes the file, into *planes:
/// true where the file is a JPEG that jpeg_planes_supported takes, upright as stored (or `orient`
/// false), and that libjpeg decodes so; false otherwise, with nothing appended to `warnings`, for
/// decode_image_wide to decode or refuse. With `entropy` (and `blocks`), a file that
/// parse_entropy_scan takes is not decoded at all: *planes gets its layout (no coefficients),
/// *entropy its scan, for the device's entropy decoding (filters/jpeg_entropy_device.h).
/// `progressive_blocks` false: a progressive file goes only as far as its colour planes;
/// `progressive_entropy` (with `entropy` and `progressive_blocks`): a progressive file is left
/// entropy-coded too, else its blocks are decoded here.
/// Throws blurtool::Error naming `name`, as decode_image_wide does, for a JPEG it refuses
/// before decoding (size, limits, truncation).
bool decode_image_planes(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         std::vector<std::string>* warnings, std::uint64_t max_pixels, bool orient,
                         bool blocks, bool sparse, YCbCrPlanes* planes,
                         EntropyScan* entropy = nullptr, bool progressive_blocks = true,
                         bool progressive_entropy = false);

/// The EXIF orientation of a JPEG file's bytes, 1 to 8 (TIFF tag 0x0112 in IFD0 of the first
/// APP1 "Exif" segment, read by libexif): 1 upright, 2 mirrored left-right, 3 turned 180
/// degrees, 4 mirrored top-bottom, 5 transposed, 6 to be turned 90 degrees clockwise, 7
/// transversed, 8 to be turned 90 degrees anticlockwise. 1 when there is no such tag, its value
/// is out of range, the file is not a JPEG, or its markers are damaged (the decoder reports
/// that). Never throws.
int exif_orientation(const std::vector<std::uint8_t>& bytes);

/// The output format implied by `path`'s extension (.png, .jpg, .jpeg, .tif, .tiff, .webp;
/// case-insensitive).
/// Throws blurtool::UsageError naming `path` for any other extension.
ImageFormat output_format_for(const std::string& path);

/// JPEG chroma subsampling: Cb and Cr at full resolution (4:4:4), half the columns (4:2:2) or
/// half the columns and rows (4:2:0).
enum class ChromaSubsampling { s444, s422, s420 };

/// The names of --subsampling: "444", "422", "420".
inline const std::vector<Named<ChromaSubsampling>>& chroma_subsampling_table() {
  static const std::vector<Named<ChromaSubsampling>> table = {
      {ChromaSubsampling::s444, "444", "chroma at full resolution"},
      {ChromaSubsampling::s422, "422", "chroma of half the columns"},
      {ChromaSubsampling::s420, "420", "chroma of half the columns and half the rows"}};
  return table;
}

/// The zlib level PNGs are written with unless told otherwise: the fastest level whose files
/// are within 10% of level 6's on the sample photos, blurred and not, all together (level 1,
/// zlib's run-length strategy: the same total size, at a tenth of the time;
/// docs/performance/history/png-level-2026-11-24-epyc-2c.md).
constexpr int kDefaultPngLevel = 1;

/// How encode_image writes an image. JPEG settings are ignored for PNG and the reverse.
struct EncodeOptions {
  int jpeg_quality = 95;  ///< JPEG quality, 1..100
  ChromaSubsampling jpeg_subsampling = ChromaSubsampling::s420;
  int png_level = kDefaultPngLevel;  ///< zlib compression level, 0 (stored) .. 9 (smallest)
  /// Threads encoding one image: deflating a PNG's strips, compressing a large JPEG's restart
  /// strips (jpeg_strip_layout); 0: std::thread::hardware_concurrency(). The bytes written do
  /// not depend on it.
  int threads = 0;
  /// A JPEG's strips: 0, the layout jpeg_strip_layout picks from the image's size and
  /// subsampling; a positive count, strips of that many rows (rounded up to whole MCU rows, and
  /// down to the restart interval's limit); negative, one piece. For tests and measurements.
  int jpeg_strip_rows = 0;
  /// TIFF: the compression (deflate at png_level), and tiles of 256x256 instead of strips.
  TiffCompression tiff_compression = TiffCompression::deflate;
  bool tiff_tiled = false;
  /// WebP: lossless instead of lossy at jpeg_quality (--webp-lossless).
  bool webp_lossless = false;
  /// TIFF and WebP: the metadata the encoder writes (encode_tiff, encode_webp), if not null.
  /// PNG and JPEG take theirs after encoding (insert_metadata in image/metadata.h).
  const ImageMetadata* metadata = nullptr;
};

/// Encodes `image` as PNG, JPEG, TIFF or WebP into bytes, as `options` say.
/// TIFF keeps all 1-4 channels exactly (image/tiff_codec.h: encode_tiff; deflate by default).
/// WebP holds RGB or RGBA of 8 bits: grey is written as R=G=B, lossy at jpeg_quality unless
/// options.webp_lossless (image/webp_codec.h: encode_webp; at most 16383 pixels a side).
/// PNG keeps all 1-4 channels exactly: each row filtered with the Paeth predictor, deflated by
/// zlib at options.png_level (png_settings) in strips of about 1 MiB on up to options.threads
/// threads, joined into one zlib stream (see image/png_encode.h); only the IHDR, IDAT and IEND
/// chunks. JPEG has no alpha: it is dropped, so a 1- or 2-channel image is saved as a greyscale
/// JPEG and reads back as 1 channel, a 3- or 4-channel one as YCbCr with
/// options.jpeg_subsampling that reads back as 3 channels; TurboJPEG compresses, with one
/// compressor kept per thread (tjCompress2, libjpeg-turbo's SIMD colour conversion and DCT).
/// A large JPEG is compressed in horizontal strips on up to options.threads threads and written
/// as one baseline JPEG with restart markers between the strips (see jpeg_strip_layout); it
/// decodes to the same pixels as the one-piece encode.
/// Throws blurtool::UsageError for a jpeg_quality outside 1..100 (JPEG) or a png_level outside
/// 0..9 (PNG), blurtool::Error if the pixel buffer does not hold width * height * channels
/// samples, a JPEG side exceeds 65535, or encoding fails.
std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format,
                                       const EncodeOptions& options);

/// The same with the default options but `jpeg_quality`.
std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format, int jpeg_quality);

/// Pixels a JPEG restart strip holds at most by default: an image is cut into
/// ceil(width * height / kJpegStripPixels) strips, as equal in height as whole MCU rows allow
/// (42 for a 3024x4032 photo at 4:2:0, 8 for 1920x1080), so an image of at most this many
/// pixels is one piece. A strip costs little time on one thread and a few bytes, so strips are
/// small enough to keep many cores busy (the measurements: kernels/NOTES.md, "JPEG output in
/// restart strips").
constexpr std::int64_t kJpegStripPixels = std::int64_t{1} << 18;

/// How a JPEG is cut into horizontal strips that are compressed independently (on several
/// threads) and joined by restart markers: the method of ITU T.81's restart intervals (B.2.1
/// RSTm, B.2.4.4 DRI, B.1.1.5 entropy-coded segments, E.1.4 the encoder's reset), which is how
/// parallel JPEG encoders split their work. Each strip is a whole TurboJPEG baseline JPEG of the
/// same quality, subsampling and pixel format (so the same quantisation and standard Huffman
/// tables); the file written is the first strip's marker segments up to its SOS (its APPn segments
/// kept once) with the SOF0 height set to the image's, a DRI segment (FF DD, length 4,
/// restart_interval), that strip's SOS segment, then each strip's entropy-coded data (byte-stuffed,
/// padded to a byte with 1 bits as the encoder pads it before EOI or RSTm alike), RST0..RST7 in
/// turn (FF D0..FF D7) between strips, and EOI. A restart resets the DC predictions to 0, as each
/// strip's encoder started them, and no DCT input crosses a strip boundary (strips are whole MCU
/// rows; the encoder does no smoothing), so every coefficient is the one-piece encode's and the
/// pixels decoded are the same. One MCU (minimum coded unit) is mcu_width x mcu_height pixels:
/// 16x16 for 4:2:0, 16x8 for 4:2:2, 8x8 for 4:4:4 and greyscale.
struct JpegStripLayout {
  int mcu_width = 8;
  int mcu_height = 8;
  /// Image rows a strip, a multiple of mcu_height (the last strip may have fewer); the image's
  /// height for one piece.
  int strip_rows = 0;
  /// Strips; 1: one piece, written without restart markers.
  int strips = 1;
  /// MCUs a strip, the DRI marker's restart interval (MCU columns * MCU rows a strip, at most
  /// 65535); 0 for one piece.
  int restart_interval = 0;
};

/// The strips encode_image writes a `width` x `height` JPEG in, greyscale (`grey`) or with
/// `subsampling`; `strip_rows` as EncodeOptions::jpeg_strip_rows. The layout depends on nothing
/// else (never on the thread count), so neither do the bytes written. By default strips of at
/// most about kJpegStripPixels (see there), fewer MCU rows where the restart interval would
/// exceed 65535 MCUs; one piece wherever that makes one strip. Throws blurtool::Error unless
/// width and height are 1..65535.
JpegStripLayout jpeg_strip_layout(int width, int height, bool grey, ChromaSubsampling subsampling,
                                  int strip_rows = 0);

/// One JPEG in memory (a whole image, or one restart strip of it): `size` bytes at `data`,
/// released by its deleter (std::free unless the encoder that made it says otherwise).
struct JpegBytes {
  using Release = void (*)(unsigned char*);
  std::unique_ptr<unsigned char, Release> data{nullptr, [](unsigned char* p) { std::free(p); }};
  std::size_t size = 0;
};

/// The JPEG of a `width` x `height` image cut into the strips of `layout`: compress(first, rows)
/// makes the baseline JPEG of rows [first, first + rows) (a whole JPEG of that height; strips
/// are compressed on up to `threads` threads, 0: hardware threads), and the strips are joined
/// by restart markers as JpegStripLayout describes; in one piece (compress(0, height)) where
/// the layout has one strip or the strips cannot be joined. Throws what `compress` throws, and
/// blurtool::Error where a strip is not a whole JPEG.
std::vector<std::uint8_t> compress_jpeg_strips(
    int width, int height, const JpegStripLayout& layout, int threads,
    const std::function<JpegBytes(int first, int rows)>& compress);

/// Encodes a 16-bit `image` as PNG or TIFF with 16 bits per sample (1-4 channels kept exactly,
/// big-endian in a PNG as PNG stores them; the same filter and zlib settings as for 8 bits),
/// or as JPEG or WebP, which hold 8 bits only: narrow(image) encoded as the 8-bit encode_image
/// does.
/// Throws as the 8-bit encode_image.
std::vector<std::uint8_t> encode_image(const Image16& image, ImageFormat format,
                                       const EncodeOptions& options);

/// The same with the default options but `jpeg_quality`.
std::vector<std::uint8_t> encode_image(const Image16& image, ImageFormat format, int jpeg_quality);

/// Encodes the RGBA image `rgba` (4 channels, as to_rgba made it) as the `channels`-channel
/// image from_rgba(rgba, channels) would be (1: R; 2: R, A; 3: RGB; 4: all), with the same bytes
/// as encode_image of that image, but without making it: the PNG encoder picks the samples as
/// it filters the rows, and TurboJPEG reads the RGBA rows as RGBX (alpha skipped). For 1 or 2
/// channels TurboJPEG converts RGBX to greyscale (luma), which is R exactly where R = G = B,
/// as in every image to_rgba expanded from grey and every blur of one (libjpeg's luma weights
/// 19595 + 38470 + 7471 make 65536 / 65536); this is faster than TJPF_GRAY on a grey copy.
/// Throws blurtool::Error unless `rgba` has 4 channels and `channels` is 1..4, and as
/// encode_image.
std::vector<std::uint8_t> encode_rgba(const Image& rgba, int channels, ImageFormat format,
                                      const EncodeOptions& options);

/// The 16-bit encode_rgba: a PNG of 16 bits per sample, or a JPEG of narrow(rgba) (as the 16-bit
/// encode_image).
std::vector<std::uint8_t> encode_rgba(const Image16& rgba, int channels, ImageFormat format,
                                      const EncodeOptions& options);

/// The PNG encoder's view (image/png_encode.h) of the first `channels` samples of each of
/// `image`'s pixels (all of them, or of an RGBA image those from_rgba keeps): no copy, rows
/// width * image.channels samples apart, 8 or 16 bits by T.
template <typename T>
PngPixels png_pixels(const BasicImage<T>& image, int channels) {
  PngPixels p;
  p.pixels = image.pixels.data();
  p.width = image.width;
  p.height = image.height;
  p.channels = channels;
  p.stride = image.channels;
  p.depth = 8 * static_cast<int>(sizeof(T));
  return p;
}

/// Writes `image` to `path` in the format its extension names: encodes, writes to a temporary
/// file in the same directory, then renames it into place (no partial file on any failure).
/// Throws blurtool::Error naming `path` if the directory is missing or unwritable.
void save_image(const Image& image, const std::string& path, int jpeg_quality = 95);

/// The same for a 16-bit image: a .png keeps 16 bits per sample, a .jpg or .jpeg gets 8
/// (see the 16-bit encode_image).
void save_image(const Image16& image, const std::string& path, int jpeg_quality = 95);

/// The extension of `path` in lower case, with its dot (".png", ".jpeg"); "" where it has none.
std::string lower_extension(const std::string& path);

}  // namespace blurtool
