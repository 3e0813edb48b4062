// Helpers shared by the JPEG tests: photo-like test images, and JPEGs made and decoded by
// TurboJPEG itself (the reference every JPEG path of blurtool is held to).
#pragma once

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "image/jpeg_planes.h"
#include "test_support.h"

namespace blurtool {

/// A width x height photo-like RGBA image: smooth gradients with seeded noise (a JPEG of pure
/// noise would be all high frequencies, a gradient alone all DC).
inline Image test_picture(int w, int h, unsigned seed) {
  Image noise = random_rgba(w, h, seed);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) {
        std::uint8_t& v = noise.pixels[noise.index(x, y, c)];
        v = static_cast<std::uint8_t>((x * 255 / w + y * 128 / h + c * 60 + v / 4) % 256);
      }
  return noise;
}

/// `rgba`'s first `channels` channels (3: RGB; 1: its red as grey).
inline Image first_channels(const Image& rgba, int channels) {
  Image out;
  out.width = rgba.width;
  out.height = rgba.height;
  out.channels = channels;
  out.pixels.resize(static_cast<std::size_t>(rgba.width) * rgba.height * channels);
  for (std::size_t i = 0; i < static_cast<std::size_t>(rgba.width) * rgba.height; ++i)
    for (int c = 0; c < channels; ++c) out.pixels[i * channels + c] = rgba.pixels[i * 4 + c];
  return out;
}

/// The chroma subsamplings a decoding test covers: TurboJPEG's, with a name for traces.
inline constexpr std::pair<int, const char*> kDecodeCases[] = {{TJSAMP_444, "444"},
                                                               {TJSAMP_422, "422"},
                                                               {TJSAMP_440, "440"},
                                                               {TJSAMP_420, "420"},
                                                               {TJSAMP_GRAY, "grey"}};

/// The chroma subsamplings an encoding test covers (--subsampling's).
inline constexpr ChromaSubsampling kEncodeCases[] = {
    ChromaSubsampling::s444, ChromaSubsampling::s422, ChromaSubsampling::s420};

/// `rgba` compressed by tjCompress2 from RGBX at `quality` with TurboJPEG's `subsampling` and
/// `flags`.
inline std::vector<std::uint8_t> tj_jpeg(const Image& rgba, int subsampling, int quality = 90,
                                         int flags = 0) {
  tjhandle handle = tjInitCompress();
  unsigned char* data = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(handle, rgba.pixels.data(), rgba.width, 0, rgba.height, TJPF_RGBX, &data,
                        &size, subsampling, quality, flags),
            0);
  std::vector<std::uint8_t> bytes(data, data + size);
  tjFree(data);
  tjDestroy(handle);
  return bytes;
}

/// tjDecompress2's pixels of `jpeg`, grey or RGB as the file stores them: the reference every
/// JPEG decode of blurtool is held to.
inline Image tj_pixels(const std::vector<std::uint8_t>& jpeg) {
  tjhandle handle = tjInitDecompress();
  Image image;
  int subsampling = 0, colorspace = 0;
  EXPECT_EQ(tjDecompressHeader3(handle, jpeg.data(), jpeg.size(), &image.width, &image.height,
                                &subsampling, &colorspace),
            0)
      << tjGetErrorStr2(handle);
  image.channels = colorspace == TJCS_GRAY ? 1 : 3;
  image.pixels.resize(static_cast<std::size_t>(image.width) * image.height * image.channels);
  EXPECT_EQ(tjDecompress2(handle, jpeg.data(), jpeg.size(), image.pixels.data(), image.width, 0,
                          image.height, image.channels == 1 ? TJPF_GRAY : TJPF_RGB, 0),
            0)
      << tjGetErrorStr2(handle);
  tjDestroy(handle);
  return image;
}

/// Blocks of a 3-component 4:2:0 image of w x h, dense, with every kind of block the sparse form
/// meets: all zero, all 64 coefficients set, single coefficients at the mask's ends, and random
/// ones (about one in four set, as a q95 photo's).
inline YCbCrPlanes assorted_blocks(int w, int h, unsigned seed) {
  YCbCrPlanes p = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 95);
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> value(-1024, 1023), pick(0, 3);
  std::vector<std::int16_t>::size_type blocks = p.dct.coef.size() / 64;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int16_t* block = p.dct.coef.data() + 64 * b;
    for (int k = 0; k < 64; ++k) {
      int v = 0;
      switch (b % 5) {
        case 0:
          break;  // all zero
        case 1:
          v = value(random) | 1;
          break;  // all set
        case 2:
          v = k == 0 || k == 63 ? -32768 : 0;
          break;  // the ends, at the extremes
        default:
          v = pick(random) == 0 ? value(random) | 1 : 0;
      }
      block[k] = static_cast<std::int16_t>(v);
    }
  }
  return p;
}

}  // namespace blurtool
