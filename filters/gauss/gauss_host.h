// The Gaussian on the host's cores, for a job that ends before an OpenCL device could be opened
// (see box_host.h for why: a GPU driver's start costs a single photo more than the filter costs
// a few CPU cores, and a CPU device's first run compiles its kernels). The methods of
// --gauss-method auto, exact and pyramid, each within 1 level of its double-precision CPU
// reference, as every device's schedule is: the bytes of host and device may differ by a level
// where a sum falls within float rounding of a half.
#pragma once

#include <string>

#include "filters/edge_mode.h"
#include "filters/gauss/gauss_blur.h"
#include "image/pixel_layout.h"

namespace blurtool {

/// The largest radius of the exact method that the host takes: its cost grows with the radius
/// (2 R + 2 multiply-adds a sample), the device's much less on a GPU.
constexpr int kGaussHostMaxRadius = 64;

/// Why the host cannot run `params` ("" where it can): the fast method (a device's box cascade);
/// a variant, work-group, segment or intermediate format (a device's schedule); an exact radius
/// above kGaussHostMaxRadius. The reason names the option at fault.
std::string gauss_host_refusal(const GaussParams& params);

/// Gaussian blur of `image` (width x height, 1-4 interleaved 8-bit channels, rows without
/// padding) with sigma and edge mode from `params`, by the method gauss_method_of(params)
/// resolves, into `result` (its pixel memory reused where it holds enough):
/// - exact: the separable convolution with gauss_weights(sigma, gauss_radius(params)), columns
///   then rows, in float, rounded once to nearest; within 1 level of gauss_blur_reference().
/// - pyramid: the means of f x f cells, the coarse Gaussian on them and linear interpolation
///   back (GaussPyramid, gauss_weights.h), in float; within 1 level of
///   gauss_pyramid_reference().
/// Rows (exact) or cell rows and output rows (pyramid) are cut into bands on `threads` threads
/// (0: the hardware's). Throws blurtool::UsageError for what gauss_host_refusal() refuses, and
/// blurtool::Error if the pixel buffer does not hold width x height x channels samples.
void gauss_blur_host(const Image& image, const GaussParams& params, int threads, Image& result);

/// The same into a new image.
Image gauss_blur_host(const Image& image, const GaussParams& params, int threads = 0);

}  // namespace blurtool
