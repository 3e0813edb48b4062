// Pixel layouts on the host: EXIF orientation, RGBA expansion and reduction, 8 <-> 16 bits
// (see pixel_layout.h).
#include "image/pixel_layout.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "image/codec_common.h"
#include "util/error.h"

namespace blurtool {

namespace {

// apply_orientation for samples of T.
template <typename T>
BasicImage<T> oriented(const BasicImage<T>& image, int orientation) {
  if (orientation <= 1 || orientation > 8) return image;
  const int w = image.width, h = image.height, c = image.channels;
  const bool swap = orientation >= 5;
  BasicImage<T> out{swap ? h : w, swap ? w : h, c, {}};
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
      std::memcpy(&out.pixels[out.index(x, y)], &image.pixels[image.index(sx, sy)], c * sizeof(T));
    }
  }
  return out;
}

}  // namespace

Image apply_orientation(const Image& image, int orientation) {
  return oriented(image, orientation);
}

Image16 apply_orientation(const Image16& image, int orientation) {
  return oriented(image, orientation);
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
