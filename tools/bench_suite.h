// `blurtool bench`: one fixed benchmark suite on one device, so that any two machines (or two
// versions of blurtool) can be compared from one table. The cases are those of the write-ups:
// box blur r = 30 on 3024x4032 (002) for every variant and intermediate format, its radius sweep
// r = 1..63 for the schedules whose cost should not depend on R; Gaussian sigma 10, radius 16
// (33x33) on 1920x1080 (000) for every variant; bright points on 1920x1080 (003). Each case is
// timed as the median of its kernels' total time (OpenCL profiling events) after a warm-up, and
// compared with the bandwidth floor measured in the same run: a device copy
// (clEnqueueCopyBuffer) of the bytes the operation must read and write.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "runtime/cl_runtime.h"
#include "tools/bench.h"

namespace blurtool {

/// A photo-like RGBA8 image of `w` x `h` pixels: smooth shading with grain, and small bright
/// spots (so that bright points has points to report). Deterministic, so every run times the
/// same work.
Image suite_image(int w, int h);

/// Times `filter` on `rgba`: one warm-up run (which also uploads the image), then `runs`
/// repetitions of all its kernels, fewer when the warm-up shows the case is slow (3 above
/// 0.1 s, 1 above 1 s); stores the repetitions made in `*made` (if not null). Returns the stats
/// of the per-repetition totals, milliseconds (profiling events). Leaves filter.io_in_place
/// false: the repetitions rerun the kernels on the filter's own input and output, which the
/// warm-up fills. Errors as run_filter.
Stats time_filter(Runtime& runtime, Filter& filter, const Image& rgba, int runs,
                  int* made = nullptr);

/// The groups of the suite, in the order they run: "box" (r = 30, every variant and
/// intermediate), "sweep" (the box radius sweep), "gauss", "sigma" (the Gaussian's methods
/// over sigma 1 .. 250 on 3024x4032: exact, fast and auto's pick), "bright".
const std::vector<std::string>& suite_groups();

/// Throws blurtool::UsageError naming --only and the first of `groups` that is not one of
/// suite_groups() (run_suite checks too; the CLI calls it before opening a device).
void check_suite_groups(const std::vector<std::string>& groups);

/// What to run.
struct SuiteOptions {
  int runs = 10;  ///< timed repetitions per case after one warm-up (fewer for slow cases)
  /// Skip the schedules whose cost grows with R^2 (box single and single-linear, Gaussian
  /// naive and naive-local), sweep only r = 1, 8, 16, 24, 30, 40, 48, 56, 63, and time the
  /// exact Gaussian of the sigma group only up to sigma 60: minutes instead of an hour on a
  /// CPU device.
  bool quick = false;
  /// Image sides are multiplied by this (at least 1 pixel): 1 for the write-ups' sizes; smaller
  /// for a quick check of the suite itself (the tests use 0.01).
  double scale = 1.0;
  std::vector<std::string> groups;  ///< subset of suite_groups(); empty: all
};

/// One case of the suite and its times.
struct SuiteCase {
  std::string group;         ///< one of suite_groups()
  std::string variant;       ///< the --variant name; the sigma group: the --gauss-method name
  std::string intermediate;  ///< the --intermediate name of two-pass blurs, else ""
  int radius = 0;            ///< pixels (box R, Gaussian radius; 0 for bright points)
  double sigma = 0;          ///< the sigma group: the Gaussian's sigma; else 0
  int width = 0, height = 0;
  std::string schedule;     ///< Filter::describe(), with auto and defaults resolved
  int runs = 0;             ///< timed repetitions made (after one warm-up)
  Stats ms;                 ///< all kernels of one repetition, milliseconds
  std::uint64_t bytes = 0;  ///< compulsory bytes: the image read once and written once
  double floor_ms = 0;      ///< median device copy of `bytes` (reads + writes), same run
  std::string skipped;      ///< why the case did not run (e.g. the device lacks a feature)

  /// Effective bandwidth of the median, GB/s.
  double gbps() const { return ms.median > 0 ? bytes / (ms.median * 1e6) : 0; }
  /// The floor as a percentage of the median: 100 means as fast as a copy.
  double percent_of_floor() const { return ms.median > 0 ? 100 * floor_ms / ms.median : 0; }
};

/// Runs the suite on `runtime`'s device, writing one progress line per case to `progress`
/// (if not null). A case the device cannot run (a work-group or feature it lacks) is kept with
/// `skipped` set. Slow cases are repeated less: after a warm-up over 1 s once, over 0.1 s three
/// times. Throws blurtool::UsageError for an unknown group, cl::Error or blurtool::Error for
/// device failures.
std::vector<SuiteCase> run_suite(Runtime& runtime, const SuiteOptions& options,
                                 std::ostream* progress);

/// Prints the suite as "table" (one line per case; the sweep as a radius x variant matrix with
/// each variant's largest deviation from its r = 30 time), "csv" (one line per case) or "json".
/// Throws blurtool::UsageError for another format.
void print_suite(const std::vector<SuiteCase>& cases, const DeviceInfo& device,
                 const SuiteOptions& options, const std::string& format, std::ostream& out);

/// The radius sweep as an SVG line chart: kernel time (ms) against radius (pixels), one line
/// per variant, as in the box-blur write-up's charts. Throws blurtool::Error when `cases` holds
/// no sweep.
std::string sweep_chart_svg(const std::vector<SuiteCase>& cases, const DeviceInfo& device);

}  // namespace blurtool
