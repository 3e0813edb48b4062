// Pixel layouts on the host: an image as interleaved 8- or 16-bit samples (BasicImage: Image,
// Image16), and the conversions between layouts that the decoders, the encoders and the device's
// uploads use: EXIF orientation, 1-4 channels to RGBA and back, 8 bits to 16 and back.
// image/image_io.h includes this header; other layers include image_io.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/host_memory.h"

namespace blurtool {

/// An image in host memory: `width` x `height` pixels of `channels` (1 grey, 2 grey+alpha,
/// 3 RGB, 4 RGBA) interleaved samples of type T, rows top to bottom, row pitch = width *
/// channels samples. Image holds 8-bit samples (0..255), Image16 16-bit ones (0..65535, native
/// byte order), as decoded from a 16-bit PNG.
template <typename T>
struct BasicImage {
  int width = 0;
  int height = 0;
  int channels = 0;
  PixelVector<T> pixels;

  /// Sample offset of pixel (x, y), channel c.
  std::size_t index(int x, int y, int c = 0) const {
    return (static_cast<std::size_t>(y) * width + x) * channels + c;
  }
};
using Image = BasicImage<std::uint8_t>;
using Image16 = BasicImage<std::uint16_t>;

/// `image` as a viewer shows it with EXIF orientation `orientation` (see exif_orientation,
/// image_io.h; a TIFF's Orientation tag has the same values):
/// mirrored and/or turned; for 5 to 8 width and height swap. 1, or a value outside 1..8, returns
/// it unchanged.
Image apply_orientation(const Image& image, int orientation);

/// The 16-bit apply_orientation (a 16-bit TIFF's Orientation tag).
Image16 apply_orientation(const Image16& image, int orientation);

/// Expands 1-4 channels to RGBA (grey -> R=G=B, missing alpha -> 255), the layout the device
/// kernels work on. Throws blurtool::Error if the pixel buffer does not hold width * height *
/// channels samples (as every function below).
Image to_rgba(const Image& image);

/// Reduces an RGBA image back to `channels` (1: R, 2: R and A, 3: RGB, 4: all), the inverse of
/// to_rgba for images that came from it. Throws blurtool::Error unless `rgba` has 4 channels and
/// `channels` is 1..4.
Image from_rgba(const Image& rgba, int channels);

/// The 16-bit to_rgba: missing alpha -> 65535.
Image16 to_rgba(const Image16& image);

/// The 16-bit from_rgba.
Image16 from_rgba(const Image16& rgba, int channels);

/// `image` with 16-bit samples: each 8-bit sample v becomes v * 257 (0 -> 0, 255 -> 65535), the
/// same fraction of full scale; narrow() undoes it exactly. Same size and channels.
Image16 widen(const Image& image);

/// `image` with 8-bit samples: each 16-bit sample v becomes the nearest 8-bit level,
/// (v * 255 + 32767) / 65535 (rounded to nearest, not the high byte). Same size and channels.
Image narrow(const Image16& image);

/// Whether any alpha sample of the `count` RGBA samples at `rgba` (4 a pixel, alpha last) is
/// below full scale: 255 for 8 bits, 65535 for 16 (T).
template <typename T>
bool any_transparent(const T* rgba, std::size_t count) {
  constexpr T kFull = static_cast<T>(~T{0});
  for (std::size_t i = 3; i < count; i += 4)
    if (rgba[i] < kFull) return true;
  return false;
}

}  // namespace blurtool
