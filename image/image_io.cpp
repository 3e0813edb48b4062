// PNG and JPEG reading and writing (see image_io.h for which library does what).
//
// Input is checked before any decoder sees it: the signature picks the format (so stb's GIF,
// TGA, PNM, HDR, ... decoders are never reached), the width and height (a PNG's from its IHDR
// chunk, a JPEG's from stbi_info_from_memory) are held against max_pixels before anything is
// decoded, a PNG's chunks are walked to IEND and a JPEG's top-level marker segments to its first
// scan, so that a truncated file (which the JPEG decoders would fill with grey without complaint)
// is refused as truncated. Then the fast decoder (TurboJPEG, libpng) runs; if it refuses the
// file, stb_image decodes it as before. If both refuse a PNG, libpng's reason is reported.
//
// Output is encoded in memory and written atomically (util/atomic_file.h).
//
// libpng reports errors by longjmp: every function that calls setjmp below holds only plain C
// data, so that no C++ destructor is ever skipped, and C++ objects (the output vector, the
// png_struct's owner) live in the caller.
#include "image/image_io.h"

#include <fcntl.h>
#include <libexif/exif-data.h>
#include <png.h>
#include <stb/stb_image.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <utility>

#include "image/jpeg_planes.h"
#include "image/png_encode.h"
#include "util/error.h"
#include "util/host_memory.h"
#include "util/parallel.h"

namespace blurtool {

namespace {

constexpr std::uint8_t kPngSignature[] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
constexpr std::uint8_t kJpegSignature[] = {0xFF, 0xD8, 0xFF};

// stb_image's last failure reason in plain words. stb reports an unknown critical PNG chunk by
// its type, which is clipped (even to "") when the type holds zero bytes.
std::string stb_reason() {
  const std::string reason = stbi_failure_reason() ? stbi_failure_reason() : "";
  if (reason == "outofdata") return "the file ends early";
  if (reason == "outofmem") return "out of memory";
  if (reason.size() < 4) return "stb_image refused it";
  return reason;
}

template <std::size_t N>
bool starts_with(const std::vector<std::uint8_t>& bytes, const std::uint8_t (&prefix)[N]) {
  return bytes.size() >= N && std::equal(prefix, prefix + N, bytes.begin());
}

bool has_image_signature(const std::vector<std::uint8_t>& bytes) {
  return starts_with(bytes, kPngSignature) || starts_with(bytes, kJpegSignature);
}

constexpr const char* kNotAnImage = ": not a PNG or JPEG image (unrecognised signature bytes)";

// Samples in an image of these dimensions; throws if they are not a valid image's.
std::size_t checked_size(int width, int height, int channels, const char* what) {
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error(std::string(what) + ": invalid image " + std::to_string(width) + "x" +
                std::to_string(height) + " with " + std::to_string(channels) + " channels");
  }
  return static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
         static_cast<std::size_t>(channels);
}

template <typename T>
void check_image(const BasicImage<T>& image, const char* what) {
  if (image.pixels.size() != checked_size(image.width, image.height, image.channels, what)) {
    throw Error(std::string(what) + ": pixel buffer holds " + std::to_string(image.pixels.size()) +
                " samples, not width * height * channels");
  }
}

// Bits per sample of an image of T: 8 for Image, 16 for Image16.
template <typename T>
constexpr int kSampleBits = 8 * sizeof(T);

// PNG stores 16-bit samples big-endian; Image16 holds them in the host's byte order.
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

[[noreturn]] void throw_truncated(const std::string& name, const std::string& where) {
  throw Error(name + ": truncated JPEG (" + where + ")");
}

// One top-level marker segment of a JPEG: its marker byte and where its payload (after the
// 2-byte length) lies in the file.
struct JpegSegment {
  std::uint8_t marker;
  std::size_t payload, length;
};

// Walks the JPEG's top-level marker segments from SOI to the first SOS (skipping each segment
// whole by its big-endian length, so that markers inside an APP1 EXIF thumbnail are never read
// as the image's own). Returns them, and where the entropy-coded data starts in *scan.
std::vector<JpegSegment> jpeg_segments(const std::uint8_t* b, std::size_t size,
                                       const std::string& name, std::size_t* scan) {
  std::vector<JpegSegment> segments;
  std::size_t pos = 2;  // after SOI
  for (;;) {
    if (pos >= size) throw_truncated(name, "ends before its image data");
    if (b[pos] != 0xFF) {
      throw Error(name + ": corrupt JPEG (no marker at byte " + std::to_string(pos) + ")");
    }
    while (pos < size && b[pos] == 0xFF) ++pos;  // a marker may follow any number of FFs
    if (pos >= size) throw_truncated(name, "ends before its image data");
    const std::uint8_t marker = b[pos++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // TEM, RSTn: no length
    if (marker == 0x00 || marker == 0xD8 || marker == 0xD9) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "FF %02X", marker);
      throw Error(name + ": corrupt JPEG (unexpected marker " + hex + " before its image data)");
    }
    if (size - pos < 2) throw_truncated(name, "ends inside a marker segment");
    const std::size_t length = (std::size_t{b[pos]} << 8) | b[pos + 1];
    if (length < 2) throw Error(name + ": corrupt JPEG (marker segment length < 2)");
    if (length > size - pos) throw_truncated(name, "ends inside a marker segment");
    segments.push_back({marker, pos + 2, length - 2});
    pos += length;
    if (marker == 0xDA) break;  // SOS: entropy-coded data follows
  }
  *scan = pos;
  return segments;
}

// Requires the marker segments to be whole (jpeg_segments) and an EOI marker somewhere in the
// scan data after them, and returns the segments. In entropy-coded data a 0xFF byte is stuffed
// as FF 00, so FF D9 there can only be the EOI.
std::vector<JpegSegment> check_jpeg_complete(const std::vector<std::uint8_t>& b,
                                             const std::string& name) {
  std::size_t pos = 0;
  std::vector<JpegSegment> segments = jpeg_segments(b.data(), b.size(), name, &pos);
  // From the end back: a whole file ends with its EOI, so it is found at once instead of after
  // a byte-by-byte pass over the scan data (a millisecond of a 1920x1080 decode's seven).
  for (std::size_t at = b.size(); at >= pos + 2; --at) {
    if (b[at - 2] == 0xFF && b[at - 1] == 0xD9) return segments;
  }
  throw_truncated(name, "no end-of-image marker after the scan data");
}

// The orientation tag of the first APP1 "Exif" segment among `segments` of the JPEG `bytes`
// (see exif_orientation).
int orientation_in(const std::vector<std::uint8_t>& bytes,
                   const std::vector<JpegSegment>& segments) {
  static const std::uint8_t kExif[] = {'E', 'x', 'i', 'f', 0, 0};
  for (const JpegSegment& s : segments) {
    if (s.marker != 0xE1 || s.length < sizeof kExif ||
        std::memcmp(&bytes[s.payload], kExif, sizeof kExif) != 0)
      continue;
    // The first EXIF segment only (as every viewer); libexif parses just this segment's bytes.
    std::unique_ptr<ExifData, void (*)(ExifData*)> exif(
        exif_data_new_from_data(&bytes[s.payload], static_cast<unsigned>(s.length)),
        exif_data_unref);
    if (!exif) return 1;
    ExifEntry* e = exif_content_get_entry(exif->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
    if (!e || e->format != EXIF_FORMAT_SHORT || e->components < 1 || e->size < 2) return 1;
    const int o = exif_get_short(e->data, exif_data_get_byte_order(exif.get()));
    return o >= 1 && o <= 8 ? o : 1;
  }
  return 1;
}

// --- PNG structure --------------------------------------------------------------------------

std::uint32_t get32(const std::vector<std::uint8_t>& b, std::size_t pos) {
  return (std::uint32_t{b[pos]} << 24) | (std::uint32_t{b[pos + 1]} << 16) |
         (std::uint32_t{b[pos + 2]} << 8) | b[pos + 3];
}

// A chunk's type for messages: 'IDAT', or its hex bytes when they are not all letters.
std::string chunk_name(const std::vector<std::uint8_t>& b, std::size_t pos) {
  const bool letters = std::all_of(b.begin() + pos, b.begin() + pos + 4,
                                   [](std::uint8_t c) { return std::isalpha(c) != 0; });
  if (letters) return "'" + std::string(b.begin() + pos, b.begin() + pos + 4) + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "%02X %02X %02X %02X", b[pos], b[pos + 1], b[pos + 2], b[pos + 3]);
  return hex;
}

[[noreturn]] void throw_png_truncated(const std::string& name, std::size_t size,
                                      const std::string& where) {
  throw Error(name + ": truncated PNG (the file ends at byte " + std::to_string(size) + ", " +
              where + ")");
}

// The fields of a PNG's IHDR chunk.
struct PngHeader {
  std::uint32_t width = 0, height = 0;
  int depth = 0, color_type = 0;
  bool apple = false;  // Apple's CgBI variant, which libpng refuses and stb_image reads
};

// Reads the IHDR chunk straight from the bytes, after an optional CgBI chunk (as stb_image does),
// and refuses what both decoders refuse. Neither libpng nor stb_image is asked: stb's header
// reader refuses images of more than 2^30 bytes or 2^24 pixels a side, before max_pixels is held.
PngHeader read_png_header(const std::vector<std::uint8_t>& b, const std::string& name) {
  PngHeader header;
  std::size_t pos = sizeof kPngSignature;
  for (;;) {
    if (b.size() - pos < 8) throw_png_truncated(name, b.size(), "inside its header");
    if (std::memcmp(&b[pos + 4], "CgBI", 4) != 0) break;
    header.apple = true;
    const std::uint64_t next = pos + 12 + std::uint64_t{get32(b, pos)};
    if (next > b.size()) throw_png_truncated(name, b.size(), "inside its header");
    pos = next;
  }
  auto bad = [&](const std::string& what) -> Error {
    return Error(name + ": corrupt or unsupported PNG header (" + what + ")");
  };
  if (std::memcmp(&b[pos + 4], "IHDR", 4) != 0)
    throw bad("the first chunk is " + chunk_name(b, pos + 4) + ", not 'IHDR'");
  if (get32(b, pos) != 13)
    throw bad("'IHDR' chunk of " + std::to_string(get32(b, pos)) + " bytes, not 13");
  if (b.size() - pos < 8 + 13) throw_png_truncated(name, b.size(), "inside its header");
  const std::uint8_t* f = &b[pos + 8];
  header.width = get32(b, pos + 8);
  header.height = get32(b, pos + 12);
  header.depth = f[8];
  header.color_type = f[9];
  for (const std::uint32_t side : {header.width, header.height}) {
    if (side == 0 || side > PNG_UINT_31_MAX) {
      throw bad("size " + std::to_string(header.width) + "x" + std::to_string(header.height));
    }
  }
  const int d = header.depth, c = header.color_type;
  if (d != 1 && d != 2 && d != 4 && d != 8 && d != 16) throw bad("bit depth " + std::to_string(d));
  if (c > 6 || (c & 1 && c != 3) || (c == 3 && d == 16)) {
    throw bad("colour type " + std::to_string(c) + " with bit depth " + std::to_string(d));
  }
  if (f[10] != 0) throw bad("compression method " + std::to_string(f[10]));
  if (f[11] != 0) throw bad("filter method " + std::to_string(f[11]));
  if (f[12] > 1) throw bad("interlace method " + std::to_string(f[12]));
  return header;
}

// Requires every chunk up to IEND to lie whole in the file (both decoders refuse a file that
// ends earlier; stb_image does not need IEND's CRC, so neither does this), so that truncation is
// reported as such. Returns whether the file has a tRNS chunk (an alpha channel once decoded).
bool check_png_complete(const std::vector<std::uint8_t>& b, const std::string& name) {
  std::size_t pos = sizeof kPngSignature;
  bool trns = false;
  for (;;) {
    if (b.size() - pos < 8) throw_png_truncated(name, b.size(), "before its IEND chunk");
    if (std::memcmp(&b[pos + 4], "IEND", 4) == 0) return trns;
    trns = trns || std::memcmp(&b[pos + 4], "tRNS", 4) == 0;
    const std::uint32_t length = get32(b, pos);
    if (length > PNG_UINT_31_MAX) {
      throw Error(name + ": corrupt PNG (chunk " + chunk_name(b, pos + 4) + " at byte " +
                  std::to_string(pos) + " has a length of " + std::to_string(length) + ")");
    }
    if (b.size() - pos - 8 < std::uint64_t{length} + 4) {
      throw_png_truncated(name, b.size(), "inside its " + chunk_name(b, pos + 4) + " chunk");
    }
    pos += 12 + std::size_t{length};
  }
}

// What the checks before decoding learn of a file: its format, its header and, for a JPEG, its
// marker segments (for its orientation).
struct CheckedFile {
  bool png = false;
  const char* format = "";                  // "PNG" or "JPEG", for messages
  int width = 0, height = 0, channels = 0;  // a PNG's palette counts as 3 channels
  bool sixteen_bit = false;                 // a PNG of 16 bits per sample
  bool png_trns = false;                    // a PNG with a tRNS chunk
  PngHeader png_header;
  std::vector<JpegSegment> segments;
};

// --- libpng ---------------------------------------------------------------------------------

// State shared with libpng's callbacks: plain C data only, since it lives across setjmp.
struct PngIo {
  const std::uint8_t* in = nullptr;  // reading: the file's bytes
  std::size_t in_size = 0;
  std::size_t in_pos = 0;
  std::vector<std::uint8_t>* out = nullptr;  // writing: the encoded bytes
  char message[160] = {};                    // libpng's last error
};

[[noreturn]] void png_on_error(png_structp png, png_const_charp message) {
  PngIo* io = static_cast<PngIo*>(png_get_error_ptr(png));
  std::snprintf(io->message, sizeof io->message, "%s", message ? message : "unknown error");
  png_longjmp(png, 1);
}

void png_on_warning(png_structp, png_const_charp) {}  // libpng's default prints to stderr

void png_read_memory(png_structp png, png_bytep data, std::size_t length) {
  PngIo* io = static_cast<PngIo*>(png_get_io_ptr(png));
  if (io->in_size - io->in_pos < length) png_error(png, "the file ends early");
  std::memcpy(data, io->in + io->in_pos, length);
  io->in_pos += length;
}

// Reads the header and sets up the transformations that give stb_image's layout: palette to
// RGB, grey below 8 bits to 8, tRNS to an alpha channel (of 16 bits in a 16-bit file). With
// `depth` 8, 16 bits are reduced to the high byte (stb_image too keeps the high byte); with
// `depth` 16, 16-bit samples come in the host's byte order. False if the samples are not then
// `depth` bits (an 8-bit file asked for at 16). Like stb_image, CRCs and the Adler-32 are not
// checked. With `rgba`, grey is also expanded to RGB and a missing alpha channel added at full
// scale, so that every file comes out with 4 channels.
// *stored: the channels the file's colour type and tRNS chunk give (before that expansion).
bool png_read_header(png_structp png, png_infop info, int depth, bool rgba, int* width, int* height,
                     int* channels, int* stored, int* passes) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
#ifdef PNG_IGNORE_ADLER32
  png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);  // max_pixels is the limit
  png_read_info(png, info);
  const int type = png_get_color_type(png, info);
  *stored = (type & PNG_COLOR_MASK_COLOR ? 3 : 1) +
            (type & PNG_COLOR_MASK_ALPHA || png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0);
  png_set_expand(png);
  if (depth == 8) png_set_strip_16(png);
  if (depth == 16 && kLittleEndian) png_set_swap(png);
  if (rgba) {
    png_set_gray_to_rgb(png);
    png_set_filler(png, depth == 16 ? 0xFFFF : 0xFF, PNG_FILLER_AFTER);
  }
  *passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *width = static_cast<int>(png_get_image_width(png, info));
  *height = static_cast<int>(png_get_image_height(png, info));
  *channels = png_get_channels(png, info);
  return png_get_bit_depth(png, info) == depth;
}

bool png_read_pixels(png_structp png, std::uint8_t* pixels, std::size_t row_bytes, int height,
                     int passes) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < height; ++y) png_read_row(png, pixels + row_bytes * y, nullptr);
  }
  png_read_end(png, nullptr);  // as stb_image, require the chunks up to IEND
  return true;
}

// Decodes a PNG whose IHDR says `width` x `height` at the depth of T (8 bits, or 16 for a 16-bit
// file), in RGBA with `rgba`; false if libpng refuses it, with libpng's reason in *reason (""
// if it gave none).
template <typename T>
bool decode_png_libpng(const std::vector<std::uint8_t>& bytes, int width, int height, bool rgba,
                       BasicImage<T>* image, int* stored, std::string* reason) {
  PngIo io;
  io.in = bytes.data();
  io.in_size = bytes.size();
  struct ReadStructs {
    png_structp png = nullptr;
    png_infop info = nullptr;
    ~ReadStructs() { png_destroy_read_struct(&png, &info, nullptr); }
  } structs;
  png_structp png = structs.png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, png_on_error, png_on_warning);
  png_infop info = structs.info = png ? png_create_info_struct(png) : nullptr;
  if (!info) return false;
  png_set_read_fn(png, &io, png_read_memory);
  int w = 0, h = 0, c = 0, passes = 1;
  const bool header = png_read_header(png, info, kSampleBits<T>, rgba, &w, &h, &c, stored, &passes);
  if (header && w == width && h == height && c >= 1 && c <= 4 && (!rgba || c == 4)) {
    image->width = w;
    image->height = h;
    image->channels = c;
    image->pixels.resize(static_cast<std::size_t>(w) * h * c);
    if (png_read_pixels(png, reinterpret_cast<std::uint8_t*>(image->pixels.data()),
                        static_cast<std::size_t>(w) * c * sizeof(T), h, passes))
      return true;
  }
  *reason = io.message;
  return false;
}

// The `channels` samples of `image`'s pixels that a PNG of them holds (all of them, or from an
// RGBA image those from_rgba keeps), as options say.
template <typename T>
std::vector<std::uint8_t> encode_png(const BasicImage<T>& image, int channels,
                                     const EncodeOptions& options) {
  if (options.png_level < 0 || options.png_level > 9) {
    throw UsageError("PNG level " + std::to_string(options.png_level) + " is not in 0..9");
  }
  PngSettings settings = png_settings(options.png_level);
  settings.threads = options.threads;
  return blurtool::encode_png(png_pixels(image, channels), settings);
}

// --- TurboJPEG ------------------------------------------------------------------------------

using TjHandle = std::unique_ptr<void, int (*)(tjhandle)>;

std::string tj_reason(tjhandle handle) {
  const char* reason = tjGetErrorStr2(handle);
  return reason && *reason ? reason : "unknown error";
}

// Why TurboJPEG cannot read a JPEG's header, for a header stb_image refused.
std::string tj_header_reason(const std::vector<std::uint8_t>& bytes) {
  TjHandle handle(tjInitDecompress(), tjDestroy);
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (handle && tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &subsampling,
                                    &colorspace) != 0) {
    return tj_reason(handle.get());
  }
  return "a frame header that stb_image cannot read";
}

// Decodes a greyscale, YCbCr or RGB JPEG whose header stb_image read as `width` x `height` x
// `channels` (1 or 3), into RGBA with `rgba` (TurboJPEG's RGBX output sets X to 255, and turns
// grey into R=G=B itself). False for anything else (CMYK and YCCK, which stb_image converts
// with its own formula; a file libjpeg refuses). Corrupt-data warnings are accepted, as stb_image
// accepts the same data without complaint, and libjpeg's words are left in `damage` (if not null)
// for a warning; a truncated file never gets here.
bool decode_jpeg_turbojpeg(const std::vector<std::uint8_t>& bytes, int width, int height,
                           int channels, bool rgba, Image* image, std::string* damage) {
  TjHandle handle(tjInitDecompress(), tjDestroy);
  if (!handle) return false;
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &subsampling,
                          &colorspace) != 0) {
    return false;
  }
  const int c = colorspace == TJCS_GRAY                              ? 1
                : colorspace == TJCS_YCbCr || colorspace == TJCS_RGB ? 3
                                                                     : 0;
  if (c == 0 || c != channels || w != width || h != height) return false;
  const int out_channels = rgba ? 4 : c;
  image->width = w;
  image->height = h;
  image->channels = out_channels;
  image->pixels.resize(static_cast<std::size_t>(w) * h * out_channels);
  const int format = rgba ? TJPF_RGBX : c == 1 ? TJPF_GRAY : TJPF_RGB;
  const int status = tjDecompress2(handle.get(), bytes.data(), bytes.size(), image->pixels.data(),
                                   w, 0, h, format, 0);
  if (status == 0) return true;
  if (tjGetErrorCode(handle.get()) != TJERR_WARNING) return false;
  // Damaged data that libjpeg decodes anyway (the damaged part grey), as viewers show it.
  if (damage) *damage = tjGetErrorStr2(handle.get());
  return true;
}

// One TurboJPEG compressor per thread, made on the thread's first JPEG and destroyed when the
// thread ends, so that no image pays for setting one up (tjInitCompress allocates libjpeg's
// compressor and its memory pools); the threads compress_jpeg starts for one image's strips
// pay it once for that image. The output buffer is TurboJPEG's own, allocated per call:
// a reused buffer of tjBufSize() bytes (TJFLAG_NOREALLOC) was no faster beyond run-to-run noise
// (scripts/bench-encode.sh) and would hold that memory for every thread.
tjhandle thread_jpeg_compressor() {
  thread_local const TjHandle compressor(tjInitCompress(), tjDestroy);
  if (!compressor) throw Error("encoding JPEG failed: " + tj_reason(nullptr));
  return compressor.get();
}

int tj_subsampling(ChromaSubsampling subsampling) {
  switch (subsampling) {
    case ChromaSubsampling::s444:
      return TJSAMP_444;
    case ChromaSubsampling::s422:
      return TJSAMP_422;
    default:
      return TJSAMP_420;
  }
}

// The pixels a JPEG is compressed from: `height` rows of `width` pixels in TurboJPEG's
// `format`, rows `pitch` bytes apart, at `quality` with TurboJPEG's `subsampling`
// (TJSAMP_GRAY for greyscale).
struct JpegSource {
  const std::uint8_t* pixels;
  int width, pitch, height, format, subsampling, quality;
};

// The JPEG of rows [first, first + rows) of `source`, by this thread's compressor.
JpegBytes compress_rows(const JpegSource& source, int first, int rows) {
  tjhandle compressor = thread_jpeg_compressor();
  JpegBytes out;
  unsigned char* jpeg = nullptr;  // allocated by TurboJPEG
  unsigned long size = 0;
  const int status = tjCompress2(
      compressor, source.pixels + static_cast<std::size_t>(first) * source.pitch, source.width,
      source.pitch, rows, source.format, &jpeg, &size, source.subsampling, source.quality, 0);
  out.data = {jpeg, tjFree};
  out.size = size;
  if (status != 0 || !jpeg || size == 0) {
    throw Error("encoding JPEG failed: " + tj_reason(compressor));
  }
  return out;
}

void put16(std::uint8_t* p, unsigned v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

// Where the parts of one strip's JPEG lie: its marker segments before SOS ([0, sos)), the SOS
// segment ([sos, scan)), the entropy-coded data ([scan, size - 2), EOI after it), and the SOF0
// height's two bytes (at height).
struct StripParts {
  std::size_t sos = 0, scan = 0, height = 0;
};

// The parts of `strip`, or false where it is not one baseline scan that joining keeps intact:
// a frame other than SOF0 (progressive, arithmetic, extended), a DRI already there (TurboJPEG's
// TJ_RESTART environment variable), a frame not `width` wide. Throws where the JPEG is not
// whole.
bool strip_parts(const JpegBytes& strip, int width, StripParts* parts) {
  const std::uint8_t* b = strip.data.get();
  if (strip.size < 4 || b[0] != 0xFF || b[1] != 0xD8 || b[strip.size - 2] != 0xFF ||
      b[strip.size - 1] != 0xD9) {
    throw Error("encoding JPEG failed: a strip is not a whole JPEG");
  }
  std::size_t scan = 0;
  const std::vector<JpegSegment> segments = jpeg_segments(b, strip.size, "JPEG strip", &scan);
  bool baseline = false;
  for (const JpegSegment& s : segments) {
    if (s.marker == 0xDD || (s.marker >= 0xC1 && s.marker <= 0xCF && s.marker != 0xC4 &&
                             s.marker != 0xC8 && s.marker != 0xCC)) {
      return false;  // DRI, or a frame other than baseline
    }
    if (s.marker == 0xC0) {
      // P (1 byte), Y (2), X (2): the height is patched, the width must be the image's
      if (s.length < 6 || baseline) return false;
      baseline = (std::size_t{b[s.payload + 3]} << 8 | b[s.payload + 4]) ==
                 static_cast<std::size_t>(width);
      parts->height = s.payload + 1;
    }
  }
  if (!baseline || scan > strip.size - 2) return false;
  parts->sos = segments.back().payload - 4;  // FF DA and the length before the payload
  parts->scan = scan;
  return true;
}

// One JPEG of the strips, top to bottom, of an image `height` rows high, each strip but the
// last `restart_interval` MCUs (see JpegStripLayout in image_io.h for the layout): the first
// strip's marker segments with the SOF0 height patched, a DRI, its SOS, then every strip's
// entropy-coded data with RSTm between them, and EOI. Empty where the strips cannot be joined
// (strip_parts refuses one, or their marker segments differ anywhere but in the SOF0 height:
// other tables, as TurboJPEG's TJ_OPTIMIZE environment variable gives per strip).
std::vector<std::uint8_t> join_jpeg_strips(const std::vector<JpegBytes>& strips, int width,
                                           int height, int restart_interval) {
  std::vector<StripParts> parts(strips.size());
  for (std::size_t i = 0; i < strips.size(); ++i) {
    if (!strip_parts(strips[i], width, &parts[i])) return {};
  }
  const std::uint8_t* first = strips[0].data.get();
  const StripParts& p0 = parts[0];
  std::size_t total = p0.scan + 6 + 2;  // the marker segments, DRI, EOI
  for (std::size_t i = 0; i < strips.size(); ++i) {
    const std::uint8_t* b = strips[i].data.get();
    const StripParts& p = parts[i];
    const bool same = p.scan == p0.scan && p.height == p0.height &&
                      std::equal(b, b + p.height, first) &&
                      std::equal(b + p.height + 2, b + p.scan, first + p.height + 2);
    if (!same) return {};
    total += strips[i].size - 2 - p.scan + (i > 0 ? 2 : 0);  // entropy-coded data, RSTm
  }
  std::vector<std::uint8_t> out;
  out.reserve(total);
  out.insert(out.end(), first, first + p0.sos);
  put16(out.data() + p0.height, static_cast<unsigned>(height));
  std::uint8_t dri[6] = {0xFF, 0xDD, 0x00, 0x04};
  put16(dri + 4, static_cast<unsigned>(restart_interval));
  out.insert(out.end(), std::begin(dri), std::end(dri));
  out.insert(out.end(), first + p0.sos, first + p0.scan);
  for (std::size_t i = 0; i < strips.size(); ++i) {
    if (i > 0) {
      out.push_back(0xFF);
      out.push_back(static_cast<std::uint8_t>(0xD0 + (i - 1) % 8));  // RST0..RST7 in turn
    }
    const std::uint8_t* b = strips[i].data.get();
    out.insert(out.end(), b + parts[i].scan, b + strips[i].size - 2);
  }
  out.push_back(0xFF);
  out.push_back(0xD9);
  return out;
}

}  // namespace

std::vector<std::uint8_t> compress_jpeg_strips(
    int width, int height, const JpegStripLayout& layout, int threads,
    const std::function<JpegBytes(int first, int rows)>& compress) {
  if (layout.strips > 1) {
    std::vector<JpegBytes> strips(layout.strips);
    struct NoState {};
    for_each_piece<NoState>(
        layout.strips, worker_threads(threads, layout.strips), [&](int s, NoState&) {
          const int first = s * layout.strip_rows;
          strips[s] = compress(first, std::min(layout.strip_rows, height - first));
        });
    std::vector<std::uint8_t> joined =
        join_jpeg_strips(strips, width, height, layout.restart_interval);
    if (!joined.empty()) return joined;
  }
  const JpegBytes jpeg = compress(0, height);
  return std::vector<std::uint8_t>(jpeg.data.get(), jpeg.data.get() + jpeg.size);
}

namespace {

// The JPEG of the `channels` samples of `image`'s pixels that encode_image writes (all of them,
// or from an RGBA image those from_rgba keeps; alpha never).
std::vector<std::uint8_t> encode_jpeg(const Image& image, int channels,
                                      const EncodeOptions& options) {
  if (options.jpeg_quality < 1 || options.jpeg_quality > 100) {
    throw UsageError("JPEG quality " + std::to_string(options.jpeg_quality) + " is not in 1..100");
  }
  const int w = image.width, h = image.height, stride = image.channels;
  const JpegStripLayout layout =
      jpeg_strip_layout(w, h, channels < 3, options.jpeg_subsampling, options.jpeg_strip_rows);
  const int subsampling = channels < 3 ? TJSAMP_GRAY : tj_subsampling(options.jpeg_subsampling);
  const std::uint8_t* pixels = image.pixels.data();
  std::vector<std::uint8_t> grey;  // the grey plane of grey + alpha
  int format = TJPF_GRAY;
  if (stride == 4) {
    format = TJPF_RGBX;  // for 1 or 2 channels R = G = B: libjpeg's luma of it is R exactly
  } else if (stride == 3) {
    format = TJPF_RGB;
  } else if (stride == 2) {
    grey.resize(static_cast<std::size_t>(w) * h);
    for (std::size_t i = 0; i < grey.size(); ++i) grey[i] = pixels[2 * i];
    pixels = grey.data();
  }
  const JpegSource source{
      pixels, w, w * (grey.empty() ? stride : 1), h, format, subsampling, options.jpeg_quality};
  return compress_jpeg_strips(w, h, layout, options.threads, [&](int first, int rows) {
    return compress_rows(source, first, rows);
  });
}

// --- stb_image: the decoder of last resort --------------------------------------------------

// Debian's libstb is built with assertions, and a malformed file that the fast decoders refused
// can trip one inside stb's JPEG decoder and abort the whole process (found by fuzz_image; the
// input did not reproduce outside the fuzzer, as if stb read memory it had not written). So stb
// decodes in a child process, into shared memory sized from the header that max_pixels already
// bounds: an assertion, a crash or memory corruption there ends the child only, and the file is
// reported as corrupt. Samples of T: 8 bits (stbi_load), or 16 for a 16-bit PNG (stbi_load_16).
struct StbResult {
  int width, height, channels;
  char reason[120];
};

// Whether stb_image's PNG decoder takes an image of this size: at most 2^24 pixels a side and
// 2^30 bytes of 8-bit pixels before palette expansion (4 bytes a pixel for a palette).
bool stb_png_fits(const CheckedFile& file) {
  const std::uint64_t w = file.width, h = file.height;
  const int c = file.png_header.color_type;
  const std::uint64_t n = c == 3 ? 4 : (c & 2 ? 3 : 1) + (c & 4 ? 1 : 0);
  constexpr std::uint64_t kSide = std::uint64_t{1} << 24, kBytes = std::uint64_t{1} << 30;
  return w <= kSide && h <= kSide && kBytes / w / n >= h;
}

// `first_reason`: why the fast decoder refused the file, reported instead of stb's when not "".
template <typename T>
BasicImage<T> decode_stb(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         const CheckedFile& file, const std::string& first_reason) {
  const char* format = file.format;
  const int width = file.width, height = file.height;
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  const std::string too_large = "image is " + size + ", too large for the stb_image decoder";
  if (file.png && !stb_png_fits(file)) {
    if (first_reason.empty()) throw Error(name + ": " + too_large);
    throw Error(name + ": cannot decode PNG (" + first_reason + "; at " + size +
                " it is too large for stb_image, the fallback decoder)");
  }
  const std::size_t capacity = checked_size(width, height, 4, name.c_str()) * sizeof(T);
  const std::size_t length = sizeof(StbResult) + capacity;
  void* shared = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw Error(name + ": cannot decode " + format + " (out of memory)");
  std::unique_ptr<void, std::function<void(void*)>> unmap(
      shared, [length](void* p) { ::munmap(p, length); });
  auto* result = static_cast<StbResult*>(shared);
  std::uint8_t* pixels = static_cast<std::uint8_t*>(shared) + sizeof(StbResult);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(name + ": cannot decode " + format + " (fork: " + errno_text(errno) + ")");
  if (pid == 0) {  // the child: decode, copy out, and leave without running any exit handler
    int w = 0, h = 0, ch = 0;
    const int length = static_cast<int>(bytes.size());
    void* data = nullptr;
    if constexpr (sizeof(T) == 1) {
      data = stbi_load_from_memory(bytes.data(), length, &w, &h, &ch, 0);
    } else {
      data = stbi_load_16_from_memory(bytes.data(), length, &w, &h, &ch, 0);
    }
    if (!data) {
      std::snprintf(result->reason, sizeof result->reason, "%s", stb_reason().c_str());
      ::_exit(1);
    }
    result->width = w;
    result->height = h;
    result->channels = ch;
    if (w != width || h != height || ch < 1 || ch > 4) ::_exit(2);
    std::memcpy(pixels, data, static_cast<std::size_t>(w) * h * ch * sizeof(T));
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
    if (!first_reason.empty())
      throw Error(name + ": cannot decode " + format + " (" + first_reason + ")");
    if (std::strcmp(result->reason, "too large") == 0) throw Error(name + ": " + too_large);
    throw Error(name + ": cannot decode " + format + " (" + result->reason + ")");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
    throw Error(name + ": corrupt " + format + " (decoded size differs from its header)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(name + ": corrupt " + format + " (the stb_image decoder failed on it)");
  BasicImage<T> image;
  image.width = result->width;
  image.height = result->height;
  image.channels = result->channels;
  image.pixels.resize(checked_size(image.width, image.height, image.channels, name.c_str()));
  std::memcpy(image.pixels.data(), pixels, image.pixels.size() * sizeof(T));
  return image;
}

}  // namespace

namespace {

std::string too_large(const std::string& name, std::uint64_t size, std::uint64_t limit) {
  return name + ": file is " + (size ? std::to_string(size) + " bytes" : "longer") +
         ", more than the limit of " + std::to_string(limit) + " bytes (" +
         parameter("max_file_size") + ")";
}

}  // namespace

std::vector<std::uint8_t> read_all(int fd, const std::string& name, std::uint64_t max_file_bytes) {
  const std::uint64_t limit = std::min<std::uint64_t>(max_file_bytes, INT_MAX);
  std::vector<std::uint8_t> bytes;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (static_cast<std::uint64_t>(st.st_size) > limit)
      throw Error(too_large(name, static_cast<std::uint64_t>(st.st_size), limit));
    bytes.reserve(static_cast<std::size_t>(st.st_size));
  }
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      throw Error(name + ": cannot read: " + errno_text(err));
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > limit) throw Error(too_large(name, 0, limit));
    const bool first = bytes.size() < sizeof kPngSignature;
    bytes.insert(bytes.end(), buffer, buffer + n);
    // Refused on its first bytes, so that a stream that is no image is not read to the limit.
    if (first && bytes.size() >= sizeof kPngSignature && !has_image_signature(bytes))
      throw Error(name + kNotAnImage);
  }
  return bytes;
}

std::vector<std::uint8_t> read_image_file(const std::string& path, std::uint64_t max_file_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(path + ": cannot open: " + errno_text(err));
  }
  std::vector<std::uint8_t> bytes;
  try {
    bytes = read_all(fd, path, max_file_bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}

namespace {

// The checks made before anything is decoded: size, signature, the header, max_pixels, the
// file's completeness (for a JPEG before its header). Throws blurtool::Error naming `name`.
CheckedFile check_file(const std::vector<std::uint8_t>& bytes, const std::string& name,
                       std::uint64_t max_pixels) {
  if (bytes.empty()) throw Error(name + ": file is empty");
  if (bytes.size() > INT_MAX) throw Error(name + ": file is too large (2 GiB or more)");
  // A file cut inside its signature (PNG 8 bytes, JPEG 3) is a truncated image, not another
  // format.
  if (bytes.size() < sizeof kPngSignature &&
      std::equal(bytes.begin(), bytes.end(), std::begin(kPngSignature)))
    throw_png_truncated(name, bytes.size(), "inside its signature");
  if (bytes.size() < sizeof kJpegSignature &&
      std::equal(bytes.begin(), bytes.end(), std::begin(kJpegSignature)))
    throw_truncated(
        name, "the file ends at byte " + std::to_string(bytes.size()) + ", inside its signature");
  if (!has_image_signature(bytes)) throw Error(name + kNotAnImage);
  CheckedFile file;
  file.png = starts_with(bytes, kPngSignature);
  file.format = file.png ? "PNG" : "JPEG";
  const char* format = file.format;
  int width = 0, height = 0, channels = 0;
  if (file.png) {
    file.png_header = read_png_header(bytes, name);
    const int c = file.png_header.color_type;
    width = static_cast<int>(file.png_header.width);
    height = static_cast<int>(file.png_header.height);
    channels = c == 3 ? 3 : (c & 2 ? 3 : 1) + (c & 4 ? 1 : 0);
  } else {
    file.segments = check_jpeg_complete(bytes, name);
    if (!stbi_info_from_memory(bytes.data(), static_cast<int>(bytes.size()), &width, &height,
                               &channels)) {
      // stbi_info tries every format, so its own reason is always "unknown image type".
      throw Error(name + ": corrupt or unsupported JPEG header (" + tj_header_reason(bytes) + ")");
    }
  }
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error(name + ": unsupported " + format + " (" + std::to_string(width) + "x" +
                std::to_string(height) + ", " + std::to_string(channels) + " channels)");
  }
  const std::uint64_t pixels = std::uint64_t(width) * std::uint64_t(height);
  if (pixels > max_pixels) {
    throw Error(name + ": image is " + std::to_string(width) + "x" + std::to_string(height) +
                " = " + std::to_string(pixels) + " pixels, more than the limit of " +
                std::to_string(max_pixels) + " pixels (" + parameter("max_pixels") + ")");
  }
  if (file.png) file.png_trns = check_png_complete(bytes, name);
  file.width = width;
  file.height = height;
  file.channels = channels;
  file.sixteen_bit = file.png && file.png_header.depth == 16;
  return file;
}

// A checked PNG with samples of T (a 16-bit file reduced to its high bytes for 8-bit T): libpng,
// else stb_image; in RGBA with `rgba`. *stored (if not null): the channels the file holds, an
// alpha channel from a tRNS chunk included.
template <typename T>
BasicImage<T> decode_png(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         const CheckedFile& file, bool rgba = false, int* stored = nullptr) {
  BasicImage<T> image;
  std::string reason;
  int channels = 0;
  if (!decode_png_libpng(bytes, file.width, file.height, rgba, &image, &channels, &reason)) {
    // For Apple's variant libpng's reason ("missing IHDR") says nothing: stb's is the one.
    image = decode_stb<T>(bytes, name, file, file.png_header.apple ? "" : reason);
    channels = image.channels;
    if (rgba && image.channels != 4) image = to_rgba(image);
  }
  if (stored) *stored = channels;
  return image;
}

// The warning for JPEG data that libjpeg decoded despite `damage` (its words).
std::string damage_warning(const std::string& name, const std::string& damage) {
  return name + ": JPEG data with errors, decoded anyway (libjpeg: " + damage + ")";
}

// A checked file at 8 bits per sample: a PNG (see decode_png), or a JPEG by TurboJPEG, else
// stb_image, turned upright by its EXIF orientation with `orient`; in RGBA with `rgba`.
Image decode_narrow(const std::vector<std::uint8_t>& bytes, const std::string& name,
                    const CheckedFile& file, bool orient, std::vector<std::string>* warnings,
                    bool rgba = false, int* stored = nullptr) {
  if (file.png) return decode_png<std::uint8_t>(bytes, name, file, rgba, stored);
  if (stored) *stored = file.channels;
  Image image;
  std::string damage;
  if (!decode_jpeg_turbojpeg(bytes, file.width, file.height, file.channels, rgba, &image,
                             &damage)) {
    image = decode_stb<std::uint8_t>(bytes, name, file, "");
    if (stored) *stored = image.channels;
    if (rgba && image.channels != 4) image = to_rgba(image);
  } else if (!damage.empty() && warnings) {
    warnings->push_back(damage_warning(name, damage));
  }
  // Upright images (most) are returned as decoded: apply_orientation would copy them.
  if (const int o = orient ? orientation_in(bytes, file.segments) : 1; o > 1)
    image = apply_orientation(image, o);
  return image;
}

}  // namespace

Image load_image(const std::string& path, std::vector<std::string>* warnings,
                 std::uint64_t max_pixels, std::uint64_t max_file_bytes, bool orient) {
  return decode_image(read_image_file(path, max_file_bytes), path, warnings, max_pixels, orient);
}

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext;
}

namespace {

// A warning where `name`'s extension claims the other format than the bytes have: the file is
// read as what it is.
void warn_if_misnamed(const std::string& name, const CheckedFile& file,
                      std::vector<std::string>* warnings) {
  if (!warnings) return;
  const std::string ext = lower_extension(name);
  if (file.png && (ext == ".jpg" || ext == ".jpeg"))
    warnings->push_back(name + ": a PNG image under a JPEG name, read as what it is");
  if (!file.png && ext == ".png")
    warnings->push_back(name + ": a JPEG image under a PNG name, read as what it is");
}

}  // namespace

Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                   std::vector<std::string>* warnings, std::uint64_t max_pixels, bool orient) {
  const CheckedFile file = check_file(bytes, name, max_pixels);
  warn_if_misnamed(name, file, warnings);
  Image image = decode_narrow(bytes, name, file, orient, warnings);
  if (file.sixteen_bit && warnings) warnings->push_back(name + ": 16-bit PNG read as 8-bit");
  return image;
}

ImageHeader read_image_header(const std::vector<std::uint8_t>& bytes, const std::string& name,
                              std::uint64_t max_pixels, bool orient) {
  const CheckedFile file = check_file(bytes, name, max_pixels);
  ImageHeader h;
  h.width = file.width;
  h.height = file.height;
  // A tRNS chunk gives grey or RGB an alpha channel.
  h.channels = file.channels + (file.png_trns && file.channels % 2 == 1 ? 1 : 0);
  h.sixteen_bit = file.sixteen_bit;
  if (!file.png && orient && orientation_in(bytes, file.segments) >= 5) {
    std::swap(h.width, h.height);
  }
  return h;
}

DecodedImage load_image_wide(const std::string& path, std::vector<std::string>* warnings,
                             std::uint64_t max_pixels, std::uint64_t max_file_bytes, bool orient,
                             bool expand_rgba) {
  return decode_image_wide(read_image_file(path, max_file_bytes), path, warnings, max_pixels,
                           orient, expand_rgba);
}

bool decode_image_planes(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         std::vector<std::string>* warnings, std::uint64_t max_pixels, bool orient,
                         bool blocks, bool sparse, YCbCrPlanes* planes) {
  if (!starts_with(bytes, kJpegSignature)) return false;
  const CheckedFile file = check_file(bytes, name, max_pixels);
  // The orientation from the segments check_file walked, not from parsing the file again.
  if ((orient && orientation_in(bytes, file.segments) > 1) || !jpeg_planes_supported(bytes, false))
    return false;
  std::string damage;
  if (!blocks || !decode_jpeg_blocks(bytes, planes, sparse)) {
    try {
      *planes = decode_jpeg_planes(bytes, name, &damage);
    } catch (const Error&) {
      return false;
    }
  }
  warn_if_misnamed(name, file, warnings);
  if (!damage.empty() && warnings) warnings->push_back(damage_warning(name, damage));
  return true;
}

DecodedImage decode_image_wide(const std::vector<std::uint8_t>& bytes, const std::string& name,
                               std::vector<std::string>* warnings, std::uint64_t max_pixels,
                               bool orient, bool expand_rgba) {
  const CheckedFile file = check_file(bytes, name, max_pixels);
  warn_if_misnamed(name, file, warnings);
  DecodedImage decoded;
  if (file.sixteen_bit) {
    decoded.wide =
        decode_png<std::uint16_t>(bytes, name, file, expand_rgba, &decoded.stored_channels);
  } else {
    decoded.narrow =
        decode_narrow(bytes, name, file, orient, warnings, expand_rgba, &decoded.stored_channels);
  }
  return decoded;
}

int exif_orientation(const std::vector<std::uint8_t>& bytes) {
  if (!starts_with(bytes, kJpegSignature)) return 1;
  try {
    std::size_t scan = 0;
    return orientation_in(bytes, jpeg_segments(bytes.data(), bytes.size(), "", &scan));
  } catch (const Error&) {
    return 1;  // decode_image reports the damage; here it only means no orientation
  }
}

Image apply_orientation(const Image& image, int orientation) {
  if (orientation <= 1 || orientation > 8) return image;
  const int w = image.width, h = image.height, c = image.channels;
  const bool swap = orientation >= 5;
  Image out{swap ? h : w, swap ? w : h, c, {}};
  out.pixels.resize(image.pixels.size());
  // The stored pixel shown at (x, y): sx = a x + b y + c (w - 1), sy = d x + e y + f (h - 1).
  static const int kMap[9][6] = {{},
                                 {1, 0, 0, 0, 1, 0},    // 1 as stored
                                 {-1, 0, 1, 0, 1, 0},   // 2 mirrored left-right
                                 {-1, 0, 1, 0, -1, 1},  // 3 turned 180 degrees
                                 {1, 0, 0, 0, -1, 1},   // 4 mirrored top-bottom
                                 {0, 1, 0, 1, 0, 0},    // 5 transposed
                                 {0, 1, 0, -1, 0, 1},   // 6 turned 90 degrees clockwise
                                 {0, -1, 1, -1, 0, 1},  // 7 transversed
                                 {0, -1, 1, 1, 0, 0}};  // 8 turned 90 degrees anticlockwise
  const int* m = kMap[orientation];
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      const int sx = m[0] * x + m[1] * y + m[2] * (w - 1);
      const int sy = m[3] * x + m[4] * y + m[5] * (h - 1);
      std::memcpy(&out.pixels[out.index(x, y)], &image.pixels[image.index(sx, sy)], c);
    }
  }
  return out;
}

JpegStripLayout jpeg_strip_layout(int width, int height, bool grey, ChromaSubsampling subsampling,
                                  int strip_rows) {
  if (width < 1 || height < 1 || width > 65535 || height > 65535) {  // JPEG's 16-bit sides
    throw Error("image " + std::to_string(width) + "x" + std::to_string(height) +
                (width < 1 || height < 1 ? " has no pixels to encode as JPEG"
                                         : " is too large to encode as JPEG"));
  }
  JpegStripLayout layout;
  layout.mcu_width = grey || subsampling == ChromaSubsampling::s444 ? 8 : 16;
  layout.mcu_height = !grey && subsampling == ChromaSubsampling::s420 ? 16 : 8;
  layout.strip_rows = height;
  const int columns = (width - 1) / layout.mcu_width + 1;
  const int mcu_rows = (height - 1) / layout.mcu_height + 1;
  std::int64_t rows = 0;  // MCU rows a strip
  if (strip_rows > 0) {
    rows = (std::int64_t{strip_rows} - 1) / layout.mcu_height + 1;
  } else if (strip_rows == 0) {
    const std::int64_t pieces = (std::int64_t{width} * height - 1) / kJpegStripPixels + 1;
    rows = (mcu_rows - 1) / pieces + 1;
  } else {
    return layout;
  }
  rows = std::min<std::int64_t>(rows, 65535 / columns);  // DRI's 16 bits; columns <= 8192
  const int strips = static_cast<int>((mcu_rows - 1) / rows + 1);
  if (strips < 2) return layout;
  layout.strip_rows = static_cast<int>(rows) * layout.mcu_height;
  layout.strips = strips;
  layout.restart_interval = static_cast<int>(rows) * columns;
  return layout;
}

ImageFormat output_format_for(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".png") return ImageFormat::png;
  if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::jpeg;
  throw UsageError(path + ": unknown output format; the file name must end in .png, .jpg or .jpeg");
}

namespace {

// encode_image and encode_rgba for samples of T: `image` written with `channels` of its
// samples a pixel (its own count, or 1..4 from RGBA).
template <typename T>
std::vector<std::uint8_t> encode(const BasicImage<T>& image, int channels, ImageFormat format,
                                 const EncodeOptions& options) {
  if (format == ImageFormat::png) return encode_png(image, channels, options);
  if constexpr (sizeof(T) == 1) {
    return encode_jpeg(image, channels, options);
  } else {
    return encode_jpeg(narrow(image), channels, options);  // JPEG holds 8 bits
  }
}

template <typename T>
std::vector<std::uint8_t> encode_from_rgba(const BasicImage<T>& rgba, int channels,
                                           ImageFormat format, const EncodeOptions& options) {
  check_image(rgba, "encode_rgba");
  if (rgba.channels != 4 || channels < 1 || channels > 4) {
    throw Error("encode_rgba: needs a 4-channel image and 1..4 output channels, got " +
                std::to_string(rgba.channels) + " -> " + std::to_string(channels));
  }
  return encode(rgba, channels, format, options);
}

EncodeOptions with_quality(int jpeg_quality) {
  EncodeOptions options;
  options.jpeg_quality = jpeg_quality;
  return options;
}

// save_image for samples of T.
template <typename T>
void save(const BasicImage<T>& image, const std::string& path, int jpeg_quality) {
  write_file_atomic(path, encode_image(image, output_format_for(path), jpeg_quality));
}

}  // namespace

std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format,
                                       const EncodeOptions& options) {
  check_image(image, "encode_image");
  return encode(image, image.channels, format, options);
}

std::vector<std::uint8_t> encode_image(const Image16& image, ImageFormat format,
                                       const EncodeOptions& options) {
  check_image(image, "encode_image");
  return encode(image, image.channels, format, options);
}

std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format, int jpeg_quality) {
  return encode_image(image, format, with_quality(jpeg_quality));
}

std::vector<std::uint8_t> encode_image(const Image16& image, ImageFormat format, int jpeg_quality) {
  return encode_image(image, format, with_quality(jpeg_quality));
}

std::vector<std::uint8_t> encode_rgba(const Image& rgba, int channels, ImageFormat format,
                                      const EncodeOptions& options) {
  return encode_from_rgba(rgba, channels, format, options);
}

std::vector<std::uint8_t> encode_rgba(const Image16& rgba, int channels, ImageFormat format,
                                      const EncodeOptions& options) {
  return encode_from_rgba(rgba, channels, format, options);
}

void save_image(const Image& image, const std::string& path, int jpeg_quality) {
  save(image, path, jpeg_quality);
}

void save_image(const Image16& image, const std::string& path, int jpeg_quality) {
  save(image, path, jpeg_quality);
}

namespace {

// to_rgba for samples of T: missing alpha is T's full scale.
template <typename T>
BasicImage<T> expand_to_rgba(const BasicImage<T>& image) {
  check_image(image, "to_rgba");
  BasicImage<T> out;
  out.width = image.width;
  out.height = image.height;
  out.channels = 4;
  const std::size_t count = static_cast<std::size_t>(image.width) * image.height;
  out.pixels.resize(count * 4);
  const int c = image.channels;
  const T* src = image.pixels.data();
  T* dst = out.pixels.data();
  constexpr T kOpaque = std::numeric_limits<T>::max();
  for (std::size_t i = 0; i < count; ++i, src += c, dst += 4) {
    const bool grey = c < 3;
    dst[0] = src[0];
    dst[1] = grey ? src[0] : src[1];
    dst[2] = grey ? src[0] : src[2];
    dst[3] = c == 2 ? src[1] : c == 4 ? src[3] : kOpaque;
  }
  return out;
}

// from_rgba for samples of T.
template <typename T>
BasicImage<T> reduce_from_rgba(const BasicImage<T>& rgba, int channels) {
  check_image(rgba, "from_rgba");
  if (rgba.channels != 4 || channels < 1 || channels > 4) {
    throw Error("from_rgba: needs a 4-channel image and 1..4 output channels, got " +
                std::to_string(rgba.channels) + " -> " + std::to_string(channels));
  }
  BasicImage<T> out;
  out.width = rgba.width;
  out.height = rgba.height;
  out.channels = channels;
  const std::size_t count = static_cast<std::size_t>(rgba.width) * rgba.height;
  out.pixels.resize(count * channels);
  const T* src = rgba.pixels.data();
  T* dst = out.pixels.data();
  for (std::size_t i = 0; i < count; ++i, src += 4, dst += channels) {
    switch (channels) {
      case 1:
        dst[0] = src[0];
        break;
      case 2:
        dst[0] = src[0], dst[1] = src[3];
        break;
      case 3:
        std::copy(src, src + 3, dst);
        break;
      default:
        std::copy(src, src + 4, dst);
        break;
    }
  }
  return out;
}

// `image` with each sample v replaced by f(v), of type Out; `what` names the caller in errors.
template <typename Out, typename In, typename F>
BasicImage<Out> map_samples(const BasicImage<In>& image, const char* what, F f) {
  check_image(image, what);
  BasicImage<Out> out{image.width, image.height, image.channels,
                      PixelVector<Out>(image.pixels.size())};
  std::transform(image.pixels.begin(), image.pixels.end(), out.pixels.begin(), f);
  return out;
}

}  // namespace

Image to_rgba(const Image& image) {
  return expand_to_rgba(image);
}

Image16 to_rgba(const Image16& image) {
  return expand_to_rgba(image);
}

Image from_rgba(const Image& rgba, int channels) {
  return reduce_from_rgba(rgba, channels);
}

Image16 from_rgba(const Image16& rgba, int channels) {
  return reduce_from_rgba(rgba, channels);
}

Image16 widen(const Image& image) {
  return map_samples<std::uint16_t>(
      image, "widen", [](std::uint8_t v) { return static_cast<std::uint16_t>(v * 257); });
}

Image narrow(const Image16& image) {
  return map_samples<std::uint8_t>(image, "narrow", [](std::uint16_t v) {
    return static_cast<std::uint8_t>((std::uint32_t{v} * 255 + 32767) / 65535);
  });
}

}  // namespace blurtool
