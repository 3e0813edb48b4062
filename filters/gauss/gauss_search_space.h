// The Gaussian's tuning search space (read by `blurtool tune`, tools/tune.h): which radii it is
// tuned at and which schedules it tries at each, kept beside the schedules they describe, as
// CLBlast keeps a kernel's tuning parameters beside the kernel.
#pragma once

#include <vector>

#include "filters/gauss/gauss_blur.h"

namespace blurtool {

/// The radii (pixels) the Gaussian is tuned at, sigma R/3 each: sigma 1.3 to 21, with 40 and 63
/// on both sides of where separable-buffer overtakes fused on an H100 (R 32-40).
const std::vector<int>& gauss_tuning_radii();

/// The candidate schedules for `radius` (sigma radius / 3) with `intermediate` on `device`:
/// tiled (on CPUs at tile widths 64, 128 and 256 too), separable-local at 32, 64 and 128
/// work-items, separable-linear, fused-local, and on GPUs separable, fused, separable-buffer,
/// separable-mma and fused-mma at their defaults and the shapes measured next best. Zeros mean
/// the schedule's default; the tuner skips candidates whose filter refuses them.
std::vector<GaussParams> gauss_tuning_candidates(int radius, Intermediate intermediate,
                                                 const DeviceInfo& device);

}  // namespace blurtool
