// The schedule table of a device: the winners `blurtool tune` measured (tools/tune.h writes it)
// and `--variant auto` reads, one file per device and driver in the cache directory. The
// filters read it; they never include the tuner, which depends on them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/cl_runtime.h"
#include "filters/filter.h"

namespace blurtool {

/// One measured winner: the schedule that was fastest for `op` ("box", "gauss" or "bright")
/// at `radius` (pixels; for bright points the block side B) with `intermediate` (the
/// --intermediate name of the case: one-pass schedules qualify for every format; "" for bright
/// points).
struct TunedSchedule {
  std::string op, intermediate;
  int radius = 0;
  std::string variant;        ///< the --variant name
  int segment = 0;            ///< --segment of box, and of Gaussian fused (0: the default)
  int unroll = 0;             ///< box --unroll (0: the variant's default)
  int per_item = 0;           ///< bright --per-item K (0: the default)
  WorkGroup wg;               ///< --wg (0x0: the variant's default)
  double ms = 0;              ///< median kernel time when tuned, milliseconds
  int width = 0, height = 0;  ///< image it was tuned on, pixels
};

/// The table file of `device`: cache_directory()/tune-<platform>-<device>-<driver>.json
/// (unsafe characters replaced by '_'), so that a new driver starts without a table.
std::string tune_table_path(const DeviceInfo& device);

/// A fingerprint of the embedded kernel sources (FNV-1a, 64 bits, as 16 hex digits). `blurtool
/// tune` stores it in the table; a table with another (or none) was measured on other kernels,
/// whose winners may no longer be the fastest, and is ignored until tune runs again.
std::string tune_kernels_fingerprint();

/// The tuned schedule `auto` uses for `op` at `radius` with `intermediate` on an image of
/// `pixels` pixels on `device`: among the image sizes the table was tuned on (1920x1080, and on
/// GPUs 3024x4032), the one nearest to `pixels` by ratio (the largest when `pixels` is 0); in
/// it, the entry tuned at the smallest radius at or above `radius` (tables hold radii 1..63
/// for the box, 4..63 for the Gaussian, blocks 8 and 16 for bright points); none above the
/// largest tuned radius, without a table, with a table tuned on other kernels
/// (tune_kernels_fingerprint), or when $BLURTOOL_TUNE is "off". The table is read
/// once per process and again when the file changes. Throws blurtool::Error naming the file
/// when it is not a tuning table.
std::optional<TunedSchedule> tuned_schedule(const DeviceInfo& device, const std::string& op,
                                            const std::string& intermediate, int radius,
                                            std::uint64_t pixels);

/// The table file's text for `device`: the device, platform and driver, the kernels'
/// fingerprint, `runs` (timed repetitions a candidate) and `entries`, as JSON that
/// tuned_schedule reads.
std::string schedule_table_text(const DeviceInfo& device, int runs,
                                const std::vector<TunedSchedule>& entries);

}  // namespace blurtool
