// What the codecs of image/ share with its front door (image_io.cpp) and with each other: the
// signature bytes that pick a format, the checks of an image's size and pixel buffer, and what
// the checks made before decoding learn of a file (CheckedFile: its PNG header, its JPEG marker
// segments). Internal to image/; other layers include image/image_io.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "util/error.h"

namespace blurtool {

/// The signature bytes of a PNG file (89 50 4E 47 0D 0A 1A 0A) and of a JPEG file (FF D8 FF).
inline constexpr std::uint8_t kPngSignature[] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
inline constexpr std::uint8_t kJpegSignature[] = {0xFF, 0xD8, 0xFF};

/// Whether `bytes` begin with the N bytes of `prefix` (a signature above). Never throws.
template <std::size_t N>
bool starts_with(const std::vector<std::uint8_t>& bytes, const std::uint8_t (&prefix)[N]) {
  return bytes.size() >= N && std::equal(prefix, prefix + N, bytes.begin());
}

/// The most scans a JPEG may have (libjpeg-turbo's TJFLAG_LIMITSCANS figure, ImageMagick's
/// policy): a progressive scan may hold next to no data, yet each costs a pass over the whole
/// image's coefficients, so that without a limit a small file decodes for as long as its
/// scans make it.
inline constexpr int kMaxJpegScans = 500;

/// Samples in a `width` x `height` image of `channels` interleaved samples a pixel. Throws
/// blurtool::Error starting with `what` ("what: invalid image WxH with C channels") unless width
/// and height are positive and channels is 1..4.
inline std::size_t checked_size(int width, int height, int channels, const char* what) {
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error(std::string(what) + ": invalid image " + std::to_string(width) + "x" +
                std::to_string(height) + " with " + std::to_string(channels) + " channels");
  }
  return static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
         static_cast<std::size_t>(channels);
}

/// Checks that `image`'s pixel buffer holds width * height * channels samples; throws
/// blurtool::Error starting with `what` where it does not or the size is invalid (checked_size).
template <typename T>
void check_image(const BasicImage<T>& image, const char* what) {
  if (image.pixels.size() != checked_size(image.width, image.height, image.channels, what)) {
    throw Error(std::string(what) + ": pixel buffer holds " + std::to_string(image.pixels.size()) +
                " samples, not width * height * channels");
  }
}

/// The fields of a PNG's IHDR chunk (read_png_header, image/png_codec.h).
struct PngHeader {
  std::uint32_t width = 0, height = 0;
  int depth = 0, color_type = 0;
  bool apple = false;  // Apple's CgBI variant, which libpng refuses and stb_image reads
};

/// One top-level marker segment of a JPEG: its marker byte and where its payload (after the
/// 2-byte length) lies in the file (jpeg_segments, image/jpeg_codec.h).
struct JpegSegment {
  std::uint8_t marker;
  std::size_t payload, length;
};

/// What the checks before decoding (image_io.cpp's check_file) learn of a file: its format, its
/// header and, for a JPEG, its marker segments (for its orientation; a TIFF's comes with its
/// header).
struct CheckedFile {
  bool png = false;
  bool tiff = false, webp = false;          // neither PNG nor JPEG: a TIFF or a WebP
  const char* format = "";                  // "PNG", "JPEG", "TIFF" or "WebP", for messages
  int width = 0, height = 0, channels = 0;  // a PNG's palette counts as 3 channels
  bool sixteen_bit = false;                 // a PNG or TIFF of 16 bits per sample
  bool png_trns = false;                    // a PNG with a tRNS chunk
  int tiff_orientation = 1;                 // a TIFF's Orientation tag (1-8)
  PngHeader png_header;
  std::vector<JpegSegment> segments;
};

/// The checks decode_image and the other decoders of image_io.cpp make before any decoder runs:
/// the size of `bytes` (not empty, under 2 GiB), a PNG or JPEG signature, the header (a PNG's
/// IHDR, read_png_header; a JPEG's marker segments to its first scan, check_jpeg_complete, and
/// its frame header, read_jpeg_frame), at most kMaxJpegScans scans, width * height at most
/// `max_pixels`, and a PNG's chunks whole to IEND (check_png_complete). Returns what they learnt,
/// for the codecs (decode_png_libpng, decode_jpeg_turbojpeg) to be called on a file they hold to
/// be sound: no decoder has run. Throws blurtool::Error naming `name` for a file that fails any
/// of them, in decode_image's words (empty, not a PNG or JPEG, truncated, corrupt or unsupported
/// header, too many scans, larger than max_pixels).
CheckedFile check_file(const std::vector<std::uint8_t>& bytes, const std::string& name,
                       std::uint64_t max_pixels);

}  // namespace blurtool
