// Benchmark reports for --bench: kernel times from OpenCL profiling events (median, min, max
// over repetitions after a warm-up), effective bandwidth, the device's bandwidth floor measured
// in the same run, and the host wall times around them. Printed as a table, CSV or JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "filters/filter.h"

namespace blurtool {

/// Median, minimum and maximum of a set of times (milliseconds).
struct Stats {
  double median = 0, min = 0, max = 0;
};

/// Stats of `values` (the median of an even count is the mean of the middle two).
Stats summarize(std::vector<double> values);

/// How many of `runs` timed repetitions to make after a warm-up that took `warm_ms`
/// milliseconds: all of them, at most 3 above 0.1 s, 1 above 1 s (the suite's and the probes'
/// rule, so that slow cases on a CPU device take seconds, not minutes).
int runs_after_warmup(double warm_ms, int runs);

/// One timed item: a kernel, the sum of all kernels, or the floor copy.
struct BenchRow {
  std::string name;
  Stats ms;
  std::uint64_t bytes = 0;  ///< bytes read plus written once
  /// Effective bandwidth of the median time, GB/s (1e9 bytes per second).
  double gbps() const { return ms.median > 0 ? bytes / (ms.median * 1e6) : 0; }
};

/// Everything --bench prints.
struct BenchReport {
  std::string device;
  std::string schedule;  ///< Filter::describe()
  int width = 0, height = 0, runs = 0;
  std::string pixels = "RGBA8";   ///< the filter's input and output: RGBA8 or RGBA16
  std::vector<BenchRow> kernels;  ///< one per pass
  BenchRow total;                 ///< all passes of one repetition together
  BenchRow floor;                 ///< clEnqueueCopyBuffer of the image's bytes (in + out)
  std::vector<std::pair<std::string, double>> host_ms;  ///< decode, upload, download, encode
};

/// Median time of copying `bytes` between two device buffers (clEnqueueCopyBuffer), after a
/// warm-up, over `runs` repetitions: reads `bytes` and writes `bytes`, so it is the least time
/// any kernel that reads an image of that size once and writes one once can take.
Stats measure_copy(Runtime& runtime, std::uint64_t bytes, int runs);

/// Builds the report of a run_filter() call made with `runs` repetitions and, with
/// `measure_floor`, measures the floor on the same device: a copy of the filter's compulsory
/// bytes (the image read and written once, RGBA8 or RGBA16 as the run's pixels).
BenchReport make_report(Runtime& runtime, Filter& filter, const FilterRun& run, int runs,
                        bool measure_floor = true);

/// Prints `report` as "table", "csv" or "json". Throws blurtool::UsageError for another format.
void print_report(const BenchReport& report, const std::string& format, std::ostream& out);

/// One work-group size of a sweep: its times, or why it was skipped.
struct SweepRow {
  WorkGroup wg;
  std::string skipped;  ///< empty if it ran; otherwise the reason (the limit it exceeds)
  std::vector<BenchRow> kernels;
  BenchRow total;
};

/// The sizes a sweep tries, as in the Gaussian write-up's tables: 2-D tiles WxH for W, H in
/// {4, 8, 16, 32}; row segments Gx1 for G in {4, 8, ..., 256}.
std::vector<WorkGroup> sweep_sizes(bool row_segments);

/// Runs `make(wg)`'s filter on `rgba` for every size of sweep_sizes(row_segments), `runs`
/// times after a warm-up each. A size the device or kernel refuses (make throws UsageError or
/// Error) is kept as a skipped row with the reason. The RGBA16 form takes filters made for
/// 16 bits.
std::vector<SweepRow> sweep_work_groups(
    Runtime& runtime, const Image& rgba, bool row_segments,
    const std::function<std::unique_ptr<Filter>(WorkGroup)>& make, int runs);
std::vector<SweepRow> sweep_work_groups(
    Runtime& runtime, const Image16& rgba, bool row_segments,
    const std::function<std::unique_ptr<Filter>(WorkGroup)>& make, int runs);

/// Prints a sweep as "table", "csv" or "json", with the floor measured for the image's size.
void print_sweep(const BenchReport& header, const std::vector<SweepRow>& rows,
                 const std::string& format, std::ostream& out);

}  // namespace blurtool
