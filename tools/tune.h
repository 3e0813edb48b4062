// `blurtool tune`: measures, on one device, which schedule of each operation is fastest (box
// blur and Gaussian blur per radius and intermediate format, bright points per block size),
// with its segment, unroll and work-group size, and stores the winners in a table per device and
// driver in the cache directory (filters/schedule_table.h). `--variant auto` reads that table;
// without one it keeps the defaults measured best for the device class (GPU or CPU).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "runtime/cl_runtime.h"
#include "filters/filter.h"
#include "filters/schedule_table.h"

namespace blurtool {

/// What `blurtool tune` measures.
struct TuneOptions {
  int runs = 5;        ///< timed repetitions per candidate after one warm-up
  double scale = 1.0;  ///< image sides times this: 1 is 1920x1080 and 3024x4032 (tests use less)
};

/// Times every candidate schedule of each case on `runtime`'s device, on a 1920x1080
/// photo-like image and, on GPUs, on a 3024x4032 one too (both scaled), keeps the fastest of
/// each case and size and writes the table atomically to tune_table_path(); prints one line per
/// case to `log` (candidates, winner, time). A candidate the device cannot run (a work-group,
/// local memory or feature it lacks) is skipped. Returns the table's entries. Throws
/// blurtool::Error naming the folder before measuring anything where the table's folder cannot
/// be created or written, and when the table cannot be written; cl::Error for device failures.
std::vector<TunedSchedule> tune(Runtime& runtime, const TuneOptions& options, std::ostream* log);

}  // namespace blurtool
