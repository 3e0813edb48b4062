// The Gaussian blur's meaning, computed on the CPU in double precision: the reference every
// device variant is tested against.
#pragma once

#include <vector>

#include "filters/edge_mode.h"
#include "filters/gauss/gauss_weights.h"
#include "image/image_io.h"

namespace blurtool {

/// Gaussian blur: out(x, y) = sum over i, j in [-R, R] of w(i) w(j) in(x + i, y + j), per
/// channel, pixels outside the image given by `edge`, the exact (double precision) 2-D
/// convolution rounded to the nearest 8-bit level, halves up. Any channel count; the result
/// has the input's size and channels. O(width * height * (2R+1)^2): for tests. Throws as
/// gauss_weights.
Image gauss_blur_reference(const Image& image, double sigma, int radius, EdgeMode edge);
/// The same for 16-bit samples, rounded to the nearest 16-bit level (0..65535).
Image16 gauss_blur_reference(const Image16& image, double sigma, int radius, EdgeMode edge);

/// The fast method's meaning: the extended box cascade of gauss_box_cascade(sigma) along rows,
/// then along columns, in double precision, i.e. the separable convolution with
/// box_cascade_weights() of the input extended by `edge` (each pass reads the previous one's
/// results at edge_index of its coordinate), rounded once at the end as
/// gauss_blur_reference(). O(width * height * reach): for tests and error measurements.
Image gauss_cascade_reference(const Image& image, double sigma, EdgeMode edge);
/// The same for 16-bit samples.
Image16 gauss_cascade_reference(const Image16& image, double sigma, EdgeMode edge);

/// The pyramid method's meaning (GaussPyramid, gauss_pyramid(sigma)): along rows, then
/// columns, in double precision, each output the interpolation of the coarse Gaussian of the
/// means of f pixels (edge_index of their coordinates, cells aligned to the image's origin),
/// rounded once at the end as gauss_blur_reference(). O(width * height * reach): for tests and
/// error measurements.
Image gauss_pyramid_reference(const Image& image, double sigma, EdgeMode edge);
/// The same for 16-bit samples.
Image16 gauss_pyramid_reference(const Image16& image, double sigma, EdgeMode edge);

/// gauss_blur_reference() computed separably (rows, then columns) in double precision: the
/// same sums in another order, for images too large for the direct 2-D reference.
Image gauss_separable_reference(const Image& image, double sigma, int radius, EdgeMode edge);

}  // namespace blurtool
