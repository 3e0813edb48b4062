// The box filter on the host's cores, for a job that ends before an OpenCL device could be
// opened: a single photo, whose box filter is one read and one write of the image, costs a
// GPU process more in its driver's start (tenths of a second) than the whole filter costs a
// few CPU cores (milliseconds). The same bytes as box_blur_reference() and every device
// schedule, so where it runs never shows in the output.
#pragma once

#include "filters/edge_mode.h"
#include "image/pixel_layout.h"

namespace blurtool {

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
