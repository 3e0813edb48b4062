// The Gaussian's weights: what every Gaussian schedule and the CPU reference sample.
#pragma once

#include <algorithm>
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

/// Least sigma of the pyramid method's Gaussian on its coarse grid, in cells: the factor f is
/// the largest power of two with sigma / f >= this. Measured against the exact method on the
/// photos of the shared image set: at 3 or more every difference was within 1 level (8-bit),
/// at 2 within 2, with a grid a quarter the size, which on GPUs halved the method's time at
/// sigma 8 to 12 (docs/notes/gauss.md, "the pyramid method").
constexpr double kGaussPyramidCoarseSigma = 2.0;

/// The pyramid method (after Burt and Adelson's Gaussian pyramid, "The Laplacian pyramid as a
/// compact image code", 1983): along each axis, the mean of f x f pixels a cell on a grid
/// aligned to the image's origin (cell i covers pixels [i f, (i + 1) f)), the exact Gaussian of
/// coarse_sigma cells with coarse_radius = ceil(3 coarse_sigma) on that grid, and linear
/// interpolation back at pixel centres (cell i's centre at pixel (i + 1/2) f - 1/2).
/// coarse_sigma makes the three variances add up to sigma^2: the box's (f^2 - 1) / 12, the
/// interpolation's (f^2 times the mean of t (1 - t) over the f phases t), and the coarse
/// Gaussian's f^2 coarse_sigma^2. Cost independent of sigma: the coarse grid shrinks as f^2.
struct GaussPyramid {
  int factor = 1;  ///< f, pixels a cell along each axis, a power of two
  double coarse_sigma = 1.0;
  int coarse_radius = 3;
  /// Pixels the method reads on each side of an output pixel, the halo a tile or strip needs:
  /// (coarse_radius + 2) f, at least the (coarse_radius + 3/2) f - 1/2 it reaches.
  int reach() const {
    return static_cast<int>(std::min<long long>((coarse_radius + 2LL) * factor, 1 << 30));
  }
};

/// floor(n / d) for d > 0: the pyramid's cell left of pixel x is floor_div(2x + 1 - f, 2f),
/// negative left of the image.
inline long long floor_div(long long n, long long d) {
  return n >= 0 ? n / d : -((d - 1 - n) / d);
}

/// The pyramid for `sigma` (pixels): f the largest power of two with sigma / f >=
/// kGaussPyramidCoarseSigma (1 below it: the exact Gaussian on a grid of single pixels).
/// Throws blurtool::UsageError naming --gauss for sigma <= 0.
GaussPyramid gauss_pyramid(double sigma);

/// The cascade's 1-D kernel, the `boxes`-fold convolution of the extended box: 2 reach + 1
/// weights summing to 1, element reach + i the weight of offset i.
std::vector<double> box_cascade_weights(const BoxCascade& cascade);

}  // namespace blurtool
