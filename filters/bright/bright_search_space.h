// The bright-point finder's tuning search space (read by `blurtool tune`, tools/tune.h), kept
// beside the schedules it describes.
#pragma once

#include <vector>

#include "filters/bright/bright_points.h"

namespace blurtool {

/// The block sides B (pixels) the finder is tuned at: 8 and 16.
const std::vector<int>& bright_tuning_blocks();

/// The candidate schedules for block side `block`: every variant at its defaults (threshold
/// 0.5); the tuner skips those whose finder refuses them (sub-groups a device lacks).
std::vector<BrightParams> bright_tuning_candidates(int block);

}  // namespace blurtool
