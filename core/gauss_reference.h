// The Gaussian blur's meaning, computed on the CPU in double precision: the reference every
// device variant is tested against.
#pragma once

#include <vector>

#include "core/edge_mode.h"
#include "core/image_io.h"

namespace blurtool {

/// Default radius for `sigma`: ceil(3 sigma) pixels.
int gauss_default_radius(double sigma);

/// The 2R+1 weights w(i) = exp(-i^2 / (2 sigma^2)), i in [-R, R], normalised to sum 1 after
/// truncation at `radius`; element R + i is w(i). Throws blurtool::UsageError naming --gauss
/// or --radius for sigma <= 0 or radius < 0.
std::vector<double> gauss_weights(double sigma, int radius);

/// Gaussian blur: out(x, y) = sum over i, j in [-R, R] of w(i) w(j) in(x + i, y + j), per
/// channel, pixels outside the image given by `edge`, the exact (double precision) 2-D
/// convolution rounded to the nearest 8-bit level, halves up. Any channel count; the result
/// has the input's size and channels. O(width * height * (2R+1)^2): for tests. Throws as
/// gauss_weights.
Image gauss_blur_reference(const Image& image, double sigma, int radius, EdgeMode edge);
/// The same for 16-bit samples, rounded to the nearest 16-bit level (0..65535).
Image16 gauss_blur_reference(const Image16& image, double sigma, int radius, EdgeMode edge);

}  // namespace blurtool
