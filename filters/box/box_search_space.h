// The box filter's tuning search space (read by `blurtool tune`, tools/tune.h): which radii it
// is tuned at and which schedules it tries at each, kept beside the schedules they describe, as
// CLBlast keeps a kernel's tuning parameters beside the kernel.
#pragma once

#include <vector>

#include "filters/box/box_blur.h"

namespace blurtool {

/// The radii (pixels) the box filter is tuned at: the box-blur write-up's sweep, 1 to 63. A
/// request is served by the smallest tuned radius at or above it.
const std::vector<int>& box_tuning_radii();

/// The candidate schedules for `radius` with `intermediate` on a `width` x `height` image on
/// `device`: fused at its default and at three work-groups with 32-, 64- and 128-row tiles;
/// tiled at its default tile rows, 256 and 1024; segmented at unroll 2 and 4; segmented-local;
/// on CPUs unrolled too. Zeros in a candidate mean the schedule's default. Candidates a device
/// cannot run are made anyway: the tuner skips those whose filter refuses them.
std::vector<BoxParams> box_tuning_candidates(int radius, Intermediate intermediate, int width,
                                             int height, const DeviceInfo& device);

}  // namespace blurtool
