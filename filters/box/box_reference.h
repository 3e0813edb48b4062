// The box filter's meaning, computed exactly on the CPU: the reference every device variant is
// tested against.
#pragma once

#include "filters/edge_mode.h"
#include "image/image_io.h"

namespace blurtool {

/// Box filter of radius `radius` (pixels, >= 0): each output pixel, per channel, is the mean of
/// the (2 radius + 1) x (2 radius + 1) window centred on it, with pixels outside the image given
/// by `edge`; the 8-bit result is the exact mean rounded to nearest, halves up. Any channel
/// count; the result has the input's size and channels. Exact integer arithmetic (two
/// separable integer sums), O(width * height * radius).
Image box_blur_reference(const Image& image, int radius, EdgeMode edge);

/// The same on 16-bit samples, the result rounded to the nearest 16-bit level.
Image16 box_blur_reference(const Image16& image, int radius, EdgeMode edge);

}  // namespace blurtool
