// The schedule tables `--variant auto` reads: the built-in defaults, a table of device classes
// (vendor, then device type, then any device, as CLBlast's database falls back from a device
// to its vendor to a default) with the reason for each entry; and the winners `blurtool tune`
// measured on a device (tools/tune.h writes them), one file per device and driver in the cache
// directory, which come first. The filters read both; they never include the tuner, which
// depends on them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "filters/filter.h"
#include "runtime/cl_runtime.h"

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

/// A built-in default: the schedule `auto` takes for `schedule.op` on the devices the entry
/// matches, where no tuned entry applies, provided the filter finds that it runs there (its
/// local memory, work-group and features; a capability, not a preference, so it stays in the
/// filter's code). Entries are tried in table order, the first that matches and runs wins.
struct DefaultSchedule {
  /// "" any vendor, else device_vendor()'s answer ("NVIDIA").
  std::string vendor;
  /// The device types it is for (CL_DEVICE_TYPE_GPU, or CL_DEVICE_TYPE_ALL for the default).
  cl_device_type types = CL_DEVICE_TYPE_ALL;
  /// op, variant and (0 where the variant computes its own) work-group, segment, unroll,
  /// per_item, as a tuned entry has them; radius: the largest it is the default for (0: any).
  TunedSchedule schedule;
  /// Why: the measurement that chose it, as the title of its note in docs/notes/.
  std::string reason;
};

/// The built-in defaults, in order of preference; the one place they are decided.
const std::vector<DefaultSchedule>& default_schedule_table();

/// The built-in default parameters of each schedule: the work-group, segment (tile rows,
/// outputs a work-item) and unroll a schedule takes where neither the user nor a tuned entry
/// gives them, by vendor and device type, as CLBlast's database gives a kernel's parameters for
/// a device, else its vendor, else a default. Entries of the same shape as
/// default_schedule_table()'s, each with the measurement that chose it; the first that matches
/// (vendor, type, radius up to schedule.radius, 0: any) wins. A schedule or parameter without
/// an entry (zeros) is one the schedule computes itself from the image and the device (fused's
/// tile rows, tiled's tile).
const std::vector<DefaultSchedule>& default_parameter_table();

/// The default parameters of schedule `variant` (its --variant name) of `op` at `radius` on
/// `device`: the first matching entry of default_parameter_table(), or zeros. A
/// default-constructed DeviceInfo matches only the entries for any device.
TunedSchedule default_parameters(const DeviceInfo& device, const std::string& op,
                                 const std::string& variant, int radius);

/// The vendor a default entry names a device by: "NVIDIA" for NVIDIA's driver (or a device
/// with a compute capability), "AMD", "Intel", "Apple" by platform and device name, else "".
std::string device_vendor(const DeviceInfo& device);

/// The default schedules for `op` at `radius` (pixels; bright points: the block side) on
/// `device`, in order of preference: the table's entries that match its vendor and type.
std::vector<TunedSchedule> default_schedules(const DeviceInfo& device, const std::string& op,
                                             int radius);

/// The table file of `device`: cache_directory()/tune-<platform>-<device>-<driver>.json
/// (unsafe characters replaced by '_'), so that a new driver starts without a table.
std::string tune_table_path(const DeviceInfo& device);

/// A fingerprint of the embedded kernel sources without their comments (kernel_code; FNV-1a,
/// 64 bits, as 16 hex digits). `blurtool
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
/// once per process and again when the file changes. A file that is no tuning table (empty, cut
/// short, not JSON, or a value the matching option would refuse: a segment of -5, a work-group
/// of 0x8) is ignored as if absent, with one warning naming it (print_warning), until it
/// changes.
std::optional<TunedSchedule> tuned_schedule(const DeviceInfo& device, const std::string& op,
                                            const std::string& intermediate, int radius,
                                            std::uint64_t pixels);

/// The table file's text for `device`: the device, platform and driver, the kernels'
/// fingerprint, `runs` (timed repetitions a candidate) and `entries`, as JSON that
/// tuned_schedule reads; each entry in the built-in tables' shape (DefaultSchedule): the
/// device's vendor and type, the schedule, and the reason (the measurement that chose it).
std::string schedule_table_text(const DeviceInfo& device, int runs,
                                const std::vector<TunedSchedule>& entries);

}  // namespace blurtool
