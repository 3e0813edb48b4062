// Helpers shared by the device tests: one runtime (and so one program cache) for the whole
// test binary, seeded random images, and the largest per-channel difference of two images.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>

#include "core/cl_runtime.h"
#include "core/image_io.h"

namespace blurtool {

/// The runtime of the default device (BLURTOOL_DEVICE, else the first GPU, else a CPU).
inline Runtime& runtime() {
  static std::unique_ptr<Runtime> rt = std::make_unique<Runtime>(select_device(""));
  return *rt;
}

/// A `w` x `h` RGBA image of seeded random values; with `levels` < 256 only that many evenly
/// spaced values per channel, so that ties are common.
inline Image random_rgba(int w, int h, unsigned seed, int levels = 256) {
  Image img{w, h, 4, std::vector<std::uint8_t>(static_cast<size_t>(w) * h * 4)};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(0, levels - 1);
  for (auto& p : img.pixels) p = static_cast<std::uint8_t>(value(rng) * 255 / (levels - 1));
  return img;
}

/// Largest |a - b| over all pixels and channels of two images of one size.
inline int max_error(const Image& a, const Image& b) {
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size() && i < b.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

}  // namespace blurtool
