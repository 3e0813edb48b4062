// Gaussian weights and the direct 2-D double-precision reference (see gauss_reference.h).
#include "core/gauss_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace blurtool {

int gauss_default_radius(double sigma) {
  const double r = std::ceil(3.0 * sigma);
  return r > 1e9 ? 1000000000 : static_cast<int>(r);  // capped: validate() refuses it by name
}

std::vector<double> gauss_weights(double sigma, int radius) {
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw UsageError("--gauss " + std::to_string(sigma) + ": sigma must be a number above 0");
  if (radius < 0) throw UsageError("--radius " + std::to_string(radius) + ": must be 0 or more");
  std::vector<double> w(2 * static_cast<size_t>(radius) + 1);
  double total = 0;
  for (int i = -radius; i <= radius; ++i) {
    // (i / sigma)^2 rather than i^2 / sigma^2: sigma^2 underflows to 0 for sigma < 1e-154,
    // and 0/0 would make w(0) NaN; this way a tiny sigma gives the identity (w(0) = 1).
    const double u = i / sigma;
    w[radius + i] = std::exp(-0.5 * u * u);
    total += w[radius + i];
  }
  for (double& v : w) v /= total;
  return w;
}

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
