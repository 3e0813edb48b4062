// What the host filters (box_host.h, gauss_host.h) share: the check of their input and the
// dispatch on its channel count, so that each loop is compiled for a fixed pixel size.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "filters/edge_mode.h"
#include "image/pixel_layout.h"
#include "util/error.h"

namespace blurtool {

/// Sizes `result` as `image` (width x height x channels, its pixel memory reused where it holds
/// enough). Throws blurtool::Error, the message starting with `filter`, if `image` has not 1-4
/// channels or its pixel buffer does not hold width x height x channels samples.
inline void prepare_host_result(const Image& image, Image& result, const std::string& filter) {
  if (image.channels < 1 || image.channels > 4 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * image.channels)
    throw Error(filter + ": the pixel buffer does not hold " + std::to_string(image.width) + "x" +
                std::to_string(image.height) + "x" + std::to_string(image.channels) + " samples");
  result.width = image.width;
  result.height = image.height;
  result.channels = image.channels;
  result.pixels.resize(image.pixels.size());
}

/// The pixels a row filter of `radius` reads past the sides of a row of `width` (edge_index
/// through `edge`, -1 for none): element k < radius the one at x = k - radius, element radius + k
/// the one at x = width + k.
inline std::vector<int> row_halo(int width, int radius, EdgeMode edge) {
  std::vector<int> halo(2 * static_cast<std::size_t>(radius));
  for (int k = 0; k < radius; ++k) {
    halo[k] = edge_index(static_cast<long long>(k) - radius, width, edge);
    halo[radius + k] = edge_index(static_cast<long long>(width) + k, width, edge);
  }
  return halo;
}

/// Calls f(std::integral_constant<int, C>{}) for C = `channels` (1-4; 4 for anything else).
template <typename F>
void with_channels(int channels, F f) {
  switch (channels) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    default:
      return f(std::integral_constant<int, 4>{});
  }
}

}  // namespace blurtool
