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

/// Boxes along each axis of the fast method's extended box cascade (Pillow's choice: three).
constexpr int kGaussCascadeBoxes = 3;

/// The fast method's extended box (Gwosdek, Grewenig, Bruhn, Weickert, "Theoretical
/// foundations of Gaussian convolution by extended box filtering", SSVM 2011): weights 1 at
/// |i| <= radius and alpha (0 <= alpha < 1) at |i| = radius + 1, divided by
/// 2 radius + 1 + 2 alpha; `boxes` of them along an axis have variance sigma^2 exactly.
struct BoxCascade {
  int boxes = kGaussCascadeBoxes;
  int radius = 0;
  double alpha = 0;
  /// Pixels the cascade reads on each side of an output pixel: boxes (radius + 1), the halo a
  /// tile or strip needs.
  int reach() const { return boxes * (radius + 1); }
};

/// The cascade of `boxes` extended boxes with variance sigma^2: radius r the largest with
/// boxes r (r + 1) / 3 <= sigma^2 (a plain box's variance), alpha = (2r + 1)(3 s - r(r + 1)) /
/// (6 ((r + 1)^2 - s)) with s = sigma^2 / boxes. Throws blurtool::UsageError naming --gauss for
/// sigma <= 0.
BoxCascade gauss_box_cascade(double sigma, int boxes = kGaussCascadeBoxes);

/// The cascade's 1-D kernel, the `boxes`-fold convolution of the extended box: 2 reach + 1
/// weights summing to 1, element reach + i the weight of offset i.
std::vector<double> box_cascade_weights(const BoxCascade& cascade);

}  // namespace blurtool
