// The direct 2-D double-precision Gaussian reference (see gauss_reference.h).
#include "filters/gauss/gauss_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

// One output's taps along an axis: (input index, weight) pairs.
using Taps = std::vector<std::pair<int, double>>;

// The separable convolution of `image` with position-dependent taps, taps_x[x] along rows and
// taps_y[y] along columns, in double, rounded once at the end.
template <typename T>
BasicImage<T> separable_taps_reference(const BasicImage<T>& image, const std::vector<Taps>& taps_x,
                                       const std::vector<Taps>& taps_y) {
  constexpr double top = std::numeric_limits<T>::max();
  const int c = image.channels;
  const size_t row = static_cast<size_t>(image.width) * c;
  std::vector<double> mid(row * image.height, 0.0);
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      for (const auto& [j, w] : taps_x[x])
        for (int ch = 0; ch < c; ++ch)
          mid[y * row + static_cast<size_t>(x) * c + ch] += w * image.pixels[image.index(j, y, ch)];
  BasicImage<T> out = image;
  std::vector<double> sum(row);
  for (int y = 0; y < image.height; ++y) {
    std::fill(sum.begin(), sum.end(), 0.0);
    for (const auto& [j, w] : taps_y[y]) {
      const double* m = &mid[j * row];
      for (size_t k = 0; k < row; ++k) sum[k] += w * m[k];
    }
    for (size_t k = 0; k < row; ++k)
      out.pixels[y * row + k] = static_cast<T>(std::min(top, std::floor(sum[k] + 0.5)));
  }
  return out;
}

// The taps of the 1-D kernel `w` (2R + 1 weights, element R + i the weight of offset i) at each
// output of an axis of n pixels: offsets -R to R in order, through the edge mode.
std::vector<Taps> kernel_taps(const std::vector<double>& w, int n, EdgeMode edge) {
  const int radius = static_cast<int>(w.size() / 2);
  std::vector<Taps> all(n);
  for (int x = 0; x < n; ++x)
    for (int i = -radius; i <= radius; ++i) {
      const int j = edge_index(static_cast<long long>(x) + i, n, edge);
      if (j >= 0) all[x].emplace_back(j, w[radius + i]);
    }
  return all;
}

// The separable convolution of `image` with the 1-D kernel `w` along rows, then columns, in
// double, rounded once at the end.
template <typename T>
BasicImage<T> separable_reference(const BasicImage<T>& image, const std::vector<double>& w,
                                  EdgeMode edge) {
  return separable_taps_reference(image, kernel_taps(w, image.width, edge),
                                  kernel_taps(w, image.height, edge));
}

// The pyramid's taps of every output of an axis of n pixels.
std::vector<Taps> pyramid_taps(const GaussPyramid& p, int n, EdgeMode edge) {
  const long long f = p.factor;
  const int rc = p.coarse_radius;
  const std::vector<double> g = gauss_weights(p.coarse_sigma, rc);
  std::vector<Taps> all(n);
  for (int x = 0; x < n; ++x) {
    const long long num = 2LL * x + 1 - f, i0 = floor_div(num, 2 * f);
    const double t = static_cast<double>(num - 2 * f * i0) / static_cast<double>(2 * f);
    std::map<int, double> w;
    for (int side = 0; side < 2; ++side) {
      const double ws = side == 0 ? 1 - t : t;
      if (ws == 0) continue;
      for (int k = -rc; k <= rc; ++k)
        for (long long u = 0; u < f; ++u) {
          const int j = edge_index((i0 + side + k) * f + u, n, edge);
          if (j >= 0) w[j] += ws * g[rc + k] / static_cast<double>(f);
        }
    }
    all[x].assign(w.begin(), w.end());
  }
  return all;
}

template <typename T>
BasicImage<T> pyramid_reference(const BasicImage<T>& image, double sigma, EdgeMode edge) {
  const GaussPyramid p = gauss_pyramid(sigma);
  return separable_taps_reference(image, pyramid_taps(p, image.width, edge),
                                  pyramid_taps(p, image.height, edge));
}

}  // namespace

Image gauss_pyramid_reference(const Image& image, double sigma, EdgeMode edge) {
  return pyramid_reference(image, sigma, edge);
}

Image16 gauss_pyramid_reference(const Image16& image, double sigma, EdgeMode edge) {
  return pyramid_reference(image, sigma, edge);
}

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
