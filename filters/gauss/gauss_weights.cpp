// The Gaussian's weights (see gauss_weights.h).
#include "filters/gauss/gauss_weights.h"

#include <cmath>
#include <string>

#include "util/error.h"

namespace blurtool {

int gauss_default_radius(double sigma) {
  const double r = std::ceil(3.0 * sigma);
  return r > 1e9 ? 1000000000 : static_cast<int>(r);  // capped: validate() refuses it by name
}

std::vector<double> gauss_weights(double sigma, int radius) {
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw UsageError(parameter("gauss") + " " + std::to_string(sigma) +
                     ": sigma must be a number above 0");
  if (radius < 0)
    throw UsageError(parameter("radius") + " " + std::to_string(radius) + ": must be 0 or more");
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

}  // namespace blurtool
