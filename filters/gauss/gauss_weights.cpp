// The Gaussian's weights (see gauss_weights.h).
#include "filters/gauss/gauss_weights.h"

#include <algorithm>
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

BoxCascade gauss_box_cascade(double sigma, int boxes) {
  gauss_weights(sigma, 0);  // sigma range
  const double s = sigma * sigma / boxes;
  BoxCascade c;
  c.boxes = boxes;
  double r = std::floor((std::sqrt(12.0 * s + 1.0) - 1.0) / 2.0);
  if (r > 1e8) r = 1e8;  // validate() refuses the reach by name
  c.radius = static_cast<int>(r);
  // Rounding can leave r one too large (its plain box already over s): step back.
  while (c.radius > 0 && c.radius * (c.radius + 1.0) / 3.0 > s) --c.radius;
  const double rr = c.radius;
  c.alpha = (2 * rr + 1) * (3 * s - rr * (rr + 1)) / (6 * ((rr + 1) * (rr + 1) - s));
  c.alpha = std::min(std::max(c.alpha, 0.0), 1.0);
  return c;
}

std::vector<double> box_cascade_weights(const BoxCascade& c) {
  const int r = c.radius;
  const double l = 2 * r + 1 + 2 * c.alpha;
  std::vector<double> box(2 * static_cast<size_t>(r) + 3, 1.0 / l);
  box.front() = box.back() = c.alpha / l;
  std::vector<double> w = {1.0};
  for (int k = 0; k < c.boxes; ++k) {
    std::vector<double> next(w.size() + box.size() - 1, 0.0);
    for (size_t i = 0; i < w.size(); ++i)
      for (size_t j = 0; j < box.size(); ++j) next[i + j] += w[i] * box[j];
    w = std::move(next);
  }
  return w;
}

GaussPyramid gauss_pyramid(double sigma) {
  gauss_weights(sigma, 0);  // the range of sigma
  GaussPyramid p;
  while (p.factor < (1 << 20) && sigma / (2.0 * p.factor) >= kGaussPyramidCoarseSigma)
    p.factor *= 2;
  const double f = p.factor;
  // The interpolation's variance: phase t_j = frac((2j + 1 - f) / (2f)) of pixel j of a cell.
  double phases = 0;
  for (int j = 0; j < p.factor; ++j) {
    const double u = (2.0 * j + 1 - f) / (2 * f);
    const double t = u - std::floor(u);
    phases += t * (1 - t);
  }
  const double up = f * f * phases / f, box = (f * f - 1) / 12;
  p.coarse_sigma = std::sqrt(std::max(sigma * sigma - box - up, 1e-6)) / f;
  p.coarse_radius = gauss_default_radius(p.coarse_sigma);
  return p;
}

}  // namespace blurtool
