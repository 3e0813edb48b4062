// Image input and output: PNG and JPEG files to and from 8-bit interleaved pixels.
//
// Decoding uses stb_image (Debian's libstb), but only after the file's signature bytes have
// been checked: PNG (89 50 4E 47 0D 0A 1A 0A) or JPEG (FF D8 FF); stb_image's other decoders
// (GIF, TGA, PNM, HDR, ...) are never reached. Encoding uses stb_image_write. Outputs are written
// to a temporary file in the output's directory and renamed into place, so an interrupted or
// failed run never leaves a partial file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blurtool {

/// An 8-bit image in host memory: `width` x `height` pixels of `channels` (1 grey, 2 grey+alpha,
/// 3 RGB, 4 RGBA) interleaved bytes, rows top to bottom, row pitch = width * channels bytes.
struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<std::uint8_t> pixels;

  /// Byte offset of pixel (x, y), channel c.
  std::size_t index(int x, int y, int c = 0) const {
    return (static_cast<std::size_t>(y) * width + x) * channels + c;
  }
};

/// Container formats blurtool reads and writes.
enum class ImageFormat { png, jpeg };

/// Largest image accepted, in pixels (width * height), checked from the header before decoding.
constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{1} << 28;

/// Reads a PNG or JPEG file. The format is recognised by its signature bytes, not its name.
/// 16-bit PNGs are reduced to 8 bits and a warning is appended to `warnings` (if not null).
/// A JPEG without its end-of-image marker after the scan data is refused as truncated.
/// Throws blurtool::Error naming `path` when the file is missing, empty, unreadable, not PNG or
/// JPEG, truncated, corrupt, or larger than `max_pixels`.
Image load_image(const std::string& path, std::vector<std::string>* warnings = nullptr,
                 std::uint64_t max_pixels = kDefaultMaxPixels);

/// The same from bytes in memory; `name` is used in error messages.
Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                   std::vector<std::string>* warnings = nullptr,
                   std::uint64_t max_pixels = kDefaultMaxPixels);

/// The output format implied by `path`'s extension (.png, .jpg, .jpeg; case-insensitive).
/// Throws blurtool::UsageError naming `path` for any other extension.
ImageFormat output_format_for(const std::string& path);

/// Encodes `image` as PNG or JPEG (`jpeg_quality` 1..100) into bytes.
/// Throws blurtool::Error if encoding fails.
/// JPEG has no alpha: stb_image_write drops it, and stores grey as three equal components, so
/// a 1- or 2-channel image saved as JPEG reads back as 3 channels. A `jpeg_quality` outside
/// 1..100 throws blurtool::UsageError (it is ignored for PNG).
std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format, int jpeg_quality);

/// Writes `image` to `path` in the format its extension names: encodes, writes to a temporary
/// file in the same directory, then renames it into place (no partial file on any failure).
/// Throws blurtool::Error naming `path` if the directory is missing or unwritable.
void save_image(const Image& image, const std::string& path, int jpeg_quality = 95);

/// Writes `bytes` to `path` through a temporary file in the same directory renamed into place,
/// so that no partial file is ever left. Throws blurtool::Error naming `path` on any failure.
void write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes);

/// Expands 1-4 channels to RGBA (grey -> R=G=B, missing alpha -> 255), the layout the device
/// kernels work on.
Image to_rgba(const Image& image);

/// Reduces an RGBA image back to `channels` (1: R, 2: R and A, 3: RGB, 4: all), the inverse of
/// to_rgba for images that came from it.
Image from_rgba(const Image& rgba, int channels);

}  // namespace blurtool
