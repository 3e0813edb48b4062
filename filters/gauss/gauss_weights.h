// The Gaussian's weights: what every Gaussian schedule and the CPU reference sample.
#pragma once

#include <vector>

namespace blurtool {

/// Default radius for `sigma`: ceil(3 sigma) pixels.
int gauss_default_radius(double sigma);

/// The 2R+1 weights w(i) = exp(-i^2 / (2 sigma^2)), i in [-R, R], normalised to sum 1 after
/// truncation at `radius`; element R + i is w(i). Throws blurtool::UsageError naming --gauss
/// or --radius for sigma <= 0 or radius < 0.
std::vector<double> gauss_weights(double sigma, int radius);

}  // namespace blurtool
