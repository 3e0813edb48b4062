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

// The separable convolution of `image` with the 1-D kernel `w` (2R + 1 weights, element R + i
// the weight of offset i) along rows, then columns, in double, rounded once at the end.
template <typename T>
BasicImage<T> separable_reference(const BasicImage<T>& image, const std::vector<double>& w,
                                  EdgeMode edge) {
  constexpr double top = std::numeric_limits<T>::max();
  const int radius = static_cast<int>(w.size() / 2), c = image.channels;
  const size_t row = static_cast<size_t>(image.width) * c;
  std::vector<double> mid(row * image.height, 0.0);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      for (int i = -radius; i <= radius; ++i) {
        const int xx = edge_index(static_cast<long long>(x) + i, image.width, edge);
        if (xx < 0) continue;
        for (int ch = 0; ch < c; ++ch)
          mid[y * row + static_cast<size_t>(x) * c + ch] +=
              w[radius + i] * image.pixels[image.index(xx, y, ch)];
      }
  BasicImage<T> out = image;
  std::vector<double> sum(row);
  for (int y = 0; y < image.height; ++y) {
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int j = -radius; j <= radius; ++j) {
      const int yy = edge_index(static_cast<long long>(y) + j, image.height, edge);
      if (yy < 0) continue;
      const double* m = &mid[yy * row];
      for (size_t k = 0; k < row; ++k) sum[k] += w[radius + j] * m[k];
    }
    for (int x = 0; x < image.width; ++x)
      for (int ch = 0; ch < c; ++ch)
        out.pixels[image.index(x, y, ch)] =
            static_cast<T>(std::min(top, std::floor(sum[static_cast<size_t>(x) * c + ch] + 0.5)));
  }
  return out;
}

}  // namespace

Image gauss_cascade_reference(const Image& image, double sigma, EdgeMode edge) {
  return separable_reference(image, box_cascade_weights(gauss_box_cascade(sigma)), edge);
}

Image16 gauss_cascade_reference(const Image16& image, double sigma, EdgeMode edge) {
  return separable_reference(image, box_cascade_weights(gauss_box_cascade(sigma)), edge);
}

Image gauss_separable_reference(const Image& image, double sigma, int radius, EdgeMode edge) {
  return separable_reference(image, gauss_weights(sigma, radius), edge);
}

Image gauss_blur_reference(const Image& image, double sigma, int radius, EdgeMode edge) {
  return blur_reference(image, sigma, radius, edge);
}

Image16 gauss_blur_reference(const Image16& image, double sigma, int radius, EdgeMode edge) {
  return blur_reference(image, sigma, radius, edge);
}

}  // namespace blurtool
