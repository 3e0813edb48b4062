// The direct 2-D double-precision Gaussian reference (see gauss_reference.h).
#include "filters/gauss/gauss_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "util/error.h"

namespace blurtool {

namespace {

// gauss_blur_reference for samples of type T, rounded to its levels (0 .. its maximum).
template <typename T>
BasicImage<T> blur_reference(const BasicImage<T>& image, double sigma, int radius, EdgeMode edge) {
  constexpr double top = std::numeric_limits<T>::max();
  const std::vector<double> w = gauss_weights(sigma, radius);
  BasicImage<T> out = image;
  std::vector<double> sum(image.channels);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int j = -radius; j <= radius; ++j) {
        const int yy = edge_index(static_cast<long long>(y) + j, image.height, edge);
        if (yy < 0) continue;
        for (int i = -radius; i <= radius; ++i) {
          const int xx = edge_index(static_cast<long long>(x) + i, image.width, edge);
          if (xx < 0) continue;
          const double weight = w[radius + j] * w[radius + i];
          for (int c = 0; c < image.channels; ++c)
            sum[c] += weight * image.pixels[image.index(xx, yy, c)];
        }
      }
      for (int c = 0; c < image.channels; ++c)
        out.pixels[image.index(x, y, c)] = static_cast<T>(std::min(top, std::floor(sum[c] + 0.5)));
    }
  }
  return out;
}

}  // namespace

Image gauss_blur_reference(const Image& image, double sigma, int radius, EdgeMode edge) {
  return blur_reference(image, sigma, radius, edge);
}

Image16 gauss_blur_reference(const Image16& image, double sigma, int radius, EdgeMode edge) {
  return blur_reference(image, sigma, radius, edge);
}

}  // namespace blurtool
