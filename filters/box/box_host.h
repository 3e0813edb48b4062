// The box filter on the host's cores, for a job that ends before an OpenCL device could be
// opened: a single photo, whose box filter is one read and one write of the image, costs a
// GPU process more in its driver's start (tenths of a second) than the whole filter costs a
// few CPU cores (milliseconds). The same bytes as box_blur_reference() and every device
// schedule, so where it runs never shows in the output.
#pragma once

#include <cstdint>

#include "filters/edge_mode.h"
#include "image/pixel_layout.h"

namespace blurtool {

/// The largest radius whose window means box_blur_host computes in single precision
/// (box_mean_float); larger ones in double.
constexpr int kBoxHostFloatRadius = 35;

/// floor(sum / count + 1/2), the 8-bit mean of a window of count = (2 r + 1)^2 pixels, r <=
/// kBoxHostFloatRadius, summing to `sum` (0..255 count), computed as box_blur_host's loop does:
/// in float, `scale` being 1 / count rounded to float. Exact: sum is below 2^24, so exact in
/// float; scale and the product each round by at most 2^-24 relatively (at most 3.1e-5 on a
/// mean of at most 255) and adding 1/2 by at most 7.7e-6, 3.8e-5 in all, which the nudge of
/// 2^-14 (6.1e-5) exceeds, while a mean that is not an integer plus 1/2 lies at least
/// 1 / (2 count) >= 9.8e-5 below the next integer, more than nudge plus error: truncation gives
/// the floor. (The unit tests check every sum of every such count.)
inline std::uint8_t box_mean_float(std::int32_t sum, float scale) {
  return static_cast<std::uint8_t>(
      static_cast<std::int32_t>(static_cast<float>(sum) * scale + (0.5f + 0x1p-14f)));
}

/// Box filter of radius `radius` (pixels, 0..kMaxBoxRadius) of `image` (width x height, 1-4
/// interleaved 8-bit channels, rows without padding), with pixels outside given by `edge`: the
/// same bytes as box_blur_reference() (the exact window mean, rounded to nearest, halves up).
/// Separable running sums (a row's window sum moves by one pixel in and one out; a column's by
/// one row of row sums in and one out: the running-sum box filter of the box blur write-up), in
/// integers, so the result does not depend on the order of the sums. The rows are cut into
/// `threads` bands (0: the hardware's threads), each computing the row sums it needs itself:
/// O(width x (height + threads x radius)) work, and per thread three rows of sums and one
/// of pixels. Throws blurtool::Error if the pixel buffer does not hold width x height x
/// channels samples or the radius is negative.
Image box_blur_host(const Image& image, int radius, EdgeMode edge, int threads = 0);

/// The same into `result`, whose pixel memory is reused where it holds enough (a batch's
/// worker filters image after image into one buffer: fresh image-sized memory costs page
/// faults that take longer than the filter itself).
void box_blur_host(const Image& image, int radius, EdgeMode edge, int threads, Image& result);

}  // namespace blurtool
