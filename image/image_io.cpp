// PNG and JPEG reading and writing, the front door (see image_io.h for which library does
// what): reading files, the checks made before decoding, the choice of decoder and of encoder.
// The codecs are image/png_codec.cpp (with image/png_encode.cpp), image/jpeg_codec.cpp and
// image/stb_codec.cpp; the pixel layouts and conversions image/pixel_layout.cpp.
//
// Input is checked before any decoder sees it: the signature picks the format (so stb's GIF,
// TGA, PNM, HDR, ... decoders are never reached), the width and height (a PNG's from its IHDR
// chunk, a JPEG's from its frame header) are held against max_pixels before anything is
// decoded, a PNG's chunks are walked to IEND and a JPEG's top-level marker segments to its first
// scan, so that a truncated file (which the JPEG decoders would fill with grey without complaint)
// is refused as truncated, and a JPEG's scans are counted (at most kMaxJpegScans). Then the fast
// decoder (TurboJPEG, libpng) runs; if it refuses the file, stb_image decodes it as before, unless
// the file is damaged: a PNG whose CRC or Adler-32 does not match (png_checksum_error). If both
// refuse a PNG, libpng's reason is reported.
//
// Output is encoded in memory and written atomically (util/atomic_file.h).
#include "image/image_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <filesystem>
#include <utility>

#include "image/codec_common.h"
#include "image/jpeg_codec.h"
#include "image/jpeg_entropy.h"
#include "image/jpeg_planes.h"
#include "image/png_codec.h"
#include "image/stb_codec.h"
#include "image/tiff_codec.h"
#include "image/webp_codec.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace blurtool {

namespace {

bool is_tiff(const std::vector<std::uint8_t>& bytes) {
  return starts_with(bytes, kTiffSignatureLE) || starts_with(bytes, kTiffSignatureBE);
}

// A WebP's RIFF header is 12 bytes: with fewer (read_all looks at 8), as much of it as is there.
bool has_image_signature(const std::vector<std::uint8_t>& bytes) {
  return starts_with(bytes, kPngSignature) || starts_with(bytes, kJpegSignature) ||
         is_tiff(bytes) || has_webp_signature(bytes);
}

// GIF (87a or 89a) and BMP: formats a user may well hand over, named in the refusal so that
// they know what to convert. A BMP is "BM" and a DIB header size libraries know (core 12, info
// 40 to 124), since "BM" alone begins text files too.
constexpr std::uint8_t kGif87Signature[] = {'G', 'I', 'F', '8', '7', 'a'};
constexpr std::uint8_t kGif89Signature[] = {'G', 'I', 'F', '8', '9', 'a'};

bool is_bmp(const std::vector<std::uint8_t>& bytes) {
  if (bytes.size() < 18 || bytes[0] != 'B' || bytes[1] != 'M') return false;
  const std::uint32_t dib =
      bytes[14] | bytes[15] << 8 | bytes[16] << 16 | static_cast<std::uint32_t>(bytes[17]) << 24;
  for (std::uint32_t known : {12, 40, 52, 56, 64, 108, 124})
    if (dib == known) return true;
  return false;
}

// Why `bytes`, which have no signature of a format read here, are refused, naming `name`.
std::string not_an_image(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const char* format = starts_with(bytes, kGif87Signature) || starts_with(bytes, kGif89Signature)
                           ? "GIF"
                       : is_bmp(bytes) ? "BMP"
                                       : nullptr;
  if (format)
    return name + ": " + format +
           " is not supported; convert it to PNG (blurtool reads PNG, JPEG, TIFF and WebP)";
  return name + ": not a PNG, JPEG, TIFF or WebP image (unrecognised signature bytes)";
}

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
      throw Error(not_an_image(name, bytes));
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

std::string not_a_file_reason(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return "";
  const char* kind = S_ISFIFO(st.st_mode)   ? "a named pipe"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                                            : "a special file";
  return std::string("not a regular file (") + kind + ")";
}

namespace {

// Refuses an image of more than `max_pixels`, from its header's size.
void check_pixels(const std::string& name, int width, int height, std::uint64_t max_pixels) {
  const std::uint64_t pixels = std::uint64_t(width) * std::uint64_t(height);
  if (pixels > max_pixels) {
    throw Error(name + ": image is " + std::to_string(width) + "x" + std::to_string(height) +
                " = " + std::to_string(pixels) + " pixels, more than the limit of " +
                std::to_string(max_pixels) + " pixels (" + parameter("max_pixels") + ")");
  }
}

}  // namespace

// The checks made before anything is decoded (see codec_common.h).
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
  if (bytes.size() < sizeof kTiffSignatureLE &&
      (std::equal(bytes.begin(), bytes.end(), std::begin(kTiffSignatureLE)) ||
       std::equal(bytes.begin(), bytes.end(), std::begin(kTiffSignatureBE))))
    throw Error(name + ": truncated TIFF (the file ends at byte " + std::to_string(bytes.size()) +
                ", inside its signature)");
  if (!has_image_signature(bytes)) throw Error(not_an_image(name, bytes));
  if (is_tiff(bytes) || has_webp_signature(bytes)) {
    CheckedFile file;
    file.tiff = is_tiff(bytes);
    file.webp = !file.tiff;
    file.format = file.tiff ? "TIFF" : "WebP";
    if (file.tiff) {
      const TiffHeader h = read_tiff_header(bytes, name);
      file.width = h.width;
      file.height = h.height;
      file.channels = h.channels;
      file.sixteen_bit = h.bits == 16;
      file.tiff_orientation = h.orientation;
    } else {
      const WebpHeader h = read_webp_header(bytes, name);
      file.width = h.width;
      file.height = h.height;
      file.channels = h.channels;
    }
    check_pixels(name, file.width, file.height, max_pixels);
    return file;
  }
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
    if (!read_jpeg_frame(bytes, file.segments, &width, &height, &channels))
      throw Error(name + ": corrupt or unsupported JPEG header (" + tj_header_reason(bytes) + ")");
    if (count_jpeg_scans(bytes, file.segments, kMaxJpegScans) > kMaxJpegScans)
      throw Error(name + ": too many scans (the JPEG has more than " +
                  std::to_string(kMaxJpegScans) + ", the limit)");
  }
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error(name + ": unsupported " + format + " (" + std::to_string(width) + "x" +
                std::to_string(height) + ", " + std::to_string(channels) + " channels)");
  }
  check_pixels(name, width, height, max_pixels);
  if (file.png) file.png_trns = check_png_complete(bytes, name);
  file.width = width;
  file.height = height;
  file.channels = channels;
  file.sixteen_bit = file.png && file.png_header.depth == 16;
  return file;
}

namespace {

// The orientation a checked file is turned by with `orient`: a JPEG's EXIF orientation (from
// the segments check_file walked), a TIFF's Orientation tag; 1 for PNG and WebP.
int orientation_of(const std::vector<std::uint8_t>& bytes, const CheckedFile& file, bool orient) {
  if (!orient || file.png || file.webp) return 1;
  return file.tiff ? file.tiff_orientation : orientation_in(bytes, file.segments);
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
    if (const std::string damage = png_checksum_error(bytes, reason); !damage.empty())
      throw Error(name + ": corrupt PNG (" + damage + ")");
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

// A checked file at 8 bits per sample: a PNG (see decode_png), a TIFF or WebP by its codec, or
// a JPEG by TurboJPEG, else stb_image; a JPEG or TIFF turned upright by its orientation with
// `orient`; in RGBA with `rgba`.
Image decode_narrow(const std::vector<std::uint8_t>& bytes, const std::string& name,
                    const CheckedFile& file, bool orient, std::vector<std::string>* warnings,
                    bool rgba = false, int* stored = nullptr) {
  if (file.png) return decode_png<std::uint8_t>(bytes, name, file, rgba, stored);
  if (stored) *stored = file.channels;
  if (file.webp) return decode_webp(bytes, name, rgba);
  Image image;
  std::string damage, refusal;
  if (file.tiff) {
    image = decode_tiff<std::uint8_t>(bytes, name, rgba);
  } else if (!decode_jpeg_turbojpeg(bytes, file.width, file.height, file.channels, rgba, &image,
                                    &damage, &refusal)) {
    if (!refusal.empty()) throw Error(name + ": cannot decode JPEG (" + refusal + ")");
    image = decode_stb<std::uint8_t>(bytes, name, file, "");
    if (stored) *stored = image.channels;
    if (rgba && image.channels != 4) image = to_rgba(image);
  } else if (!damage.empty() && warnings) {
    warnings->push_back(damage_warning(name, damage));
  }
  // Upright images (most) are returned as decoded: apply_orientation would copy them.
  if (const int o = orientation_of(bytes, file, orient); o > 1) image = apply_orientation(image, o);
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
  const char* named = ext == ".png"                     ? "PNG"
                      : ext == ".jpg" || ext == ".jpeg" ? "JPEG"
                      : ext == ".tif" || ext == ".tiff" ? "TIFF"
                      : ext == ".webp"                  ? "WebP"
                                                        : nullptr;
  if (named && std::string(named) != file.format)
    warnings->push_back(name + ": a " + file.format + " image under a " + named +
                        " name, read as what it is");
}

}  // namespace

Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                   std::vector<std::string>* warnings, std::uint64_t max_pixels, bool orient) {
  const CheckedFile file = check_file(bytes, name, max_pixels);
  warn_if_misnamed(name, file, warnings);
  Image image = decode_narrow(bytes, name, file, orient, warnings);
  if (file.sixteen_bit && warnings)
    warnings->push_back(name + ": 16-bit " + file.format + " read as 8-bit");
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
  if (orientation_of(bytes, file, orient) >= 5) std::swap(h.width, h.height);
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
                         bool blocks, bool sparse, YCbCrPlanes* planes, EntropyScan* entropy,
                         bool progressive_blocks, bool progressive_entropy) {
  if (!starts_with(bytes, kJpegSignature)) return false;
  const CheckedFile file = check_file(bytes, name, max_pixels);
  // The orientation from the segments check_file walked, not from parsing the file again.
  if ((orient && orientation_in(bytes, file.segments) > 1) || !jpeg_planes_supported(bytes, false))
    return false;
  if (blocks && entropy &&
      parse_entropy_scan(bytes.data(), bytes.size(), planes, entropy,
                         progressive_blocks && progressive_entropy)) {
    warn_if_misnamed(name, file, warnings);
    return true;
  }
  std::string damage;
  if (!blocks || !decode_jpeg_blocks(bytes, planes, sparse, progressive_blocks)) {
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
  if (file.sixteen_bit && file.tiff) {
    decoded.wide = decode_tiff<std::uint16_t>(bytes, name, expand_rgba);
    if (const int o = orientation_of(bytes, file, orient); o > 1)
      decoded.wide = apply_orientation(decoded.wide, o);
    decoded.stored_channels = file.channels;
  } else if (file.sixteen_bit) {
    decoded.wide =
        decode_png<std::uint16_t>(bytes, name, file, expand_rgba, &decoded.stored_channels);
  } else {
    decoded.narrow =
        decode_narrow(bytes, name, file, orient, warnings, expand_rgba, &decoded.stored_channels);
  }
  return decoded;
}

ImageFormat output_format_for(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext == ".png") return ImageFormat::png;
  if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::jpeg;
  if (ext == ".tif" || ext == ".tiff") return ImageFormat::tiff;
  if (ext == ".webp") return ImageFormat::webp;
  throw UsageError(path +
                   ": unknown output format; the file name must end in .png, .jpg, .jpeg, .tif, "
                   ".tiff or .webp");
}

namespace {

// encode_image and encode_rgba for samples of T: `image` written with `channels` of its
// samples a pixel (its own count, or 1..4 from RGBA).
template <typename T>
std::vector<std::uint8_t> encode(const BasicImage<T>& image, int channels, ImageFormat format,
                                 const EncodeOptions& options) {
  if (format == ImageFormat::png) return encode_png(image, channels, options);
  static const ImageMetadata none;
  const ImageMetadata& metadata = options.metadata ? *options.metadata : none;
  if (format == ImageFormat::tiff) return encode_tiff(image, channels, options, metadata);
  if constexpr (sizeof(T) == 1) {
    if (format == ImageFormat::webp) return encode_webp(image, channels, options, metadata);
    return encode_jpeg(image, channels, options);
  } else {
    // JPEG and WebP hold 8 bits
    if (format == ImageFormat::webp) return encode_webp(narrow(image), channels, options, metadata);
    return encode_jpeg(narrow(image), channels, options);
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

}  // namespace blurtool
