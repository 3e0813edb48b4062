// The `blurtool blas` benchmark: runs a routine over sizes and implementations, checks every
// result against the CPU reference, and prints the write-up's tables (size, bytes, each
// implementation's time, the best own implementation's improvement over CLBlast, GB/s or
// GFLOP/s) as a table, CSV or JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tools/bench.h"
#include "tools/blas/blas.h"

namespace blurtool {

/// What to run: the routine's arguments (their size fields are overridden per size when
/// `sizes` has several entries), the sizes, the implementations, the repetitions.
struct BlasBenchOptions {
  BlasRoutine routine = BlasRoutine::saxpy;
  SaxpyArgs saxpy;
  SdotArgs sdot;
  SgemmArgs sgemm;
  std::vector<long long> sizes;  ///< n for saxpy/sdot; m = n = k for sgemm (square)
  bool square = true;            ///< sgemm: sizes set m, n and k; false: use sgemm's own
  std::vector<BlasImpl> impls;
  int runs = 10;
  unsigned seed = 1;
  /// Also run CLBlast with the parameters `blurtool blas --tune` cached for this device, if
  /// any, as a "clblast tuned" column (after every untuned run: an override cannot be undone).
  bool with_tuned = true;
  /// Host memory the run may take in bytes (--max-memory); 0: a quarter of physical memory,
  /// at most 4 GiB (see blas_sizes.h).
  std::uint64_t max_memory = 0;
  /// Seconds the sweep may take, 0 for no limit: a size predicted to end past it (blas_size_fits
  /// _budget) is not run, and a note on standard error names it. The default sweep's limit.
  double budget_s = 0;
};

/// The seconds the default sweep may take (blurtool blas --time-budget): its largest sizes take
/// over a minute on a 2-core CPU device.
constexpr double kBlasDefaultBudgetS = 20.0;

/// Whether a run at `next` is predicted to end within `budget_s` seconds of the sweep's start,
/// `elapsed_s` seconds in, where the last size `last` took `last_s` (run_blas_bench: its wall
/// time; for the first size, whose wall time holds the compiles, its timed runs): twice that,
/// scaled with the size (n for saxpy and sdot) or its cube for sgemm (`cubic`), since larger
/// operands also pay page faults and cache misses.
bool blas_size_fits_budget(double elapsed_s, double last_s, long long last, long long next,
                           bool cubic, double budget_s);

/// One implementation at one size: its medians, or why it was skipped; its error.
struct BlasCell {
  std::string impl;  ///< "clblast", "clblast tuned", "image", "image 4x4", "buffer"
  std::string skipped;
  Stats kernel_ms, total_ms;
  double error = 0;  ///< relative error against the reference (see blas_tolerance)
  bool ok = true;    ///< error within tolerance
};

/// One size: its description, bytes moved, flops, and a cell per implementation.
struct BlasRow {
  std::string size;
  double bytes = 0, flops = 0;
  std::vector<BlasCell> cells;
};

/// Relative tolerance of a routine at a size: 1e-4 for saxpy (per element), 1e-5 sqrt(n) for
/// sdot (against sum |x y|), 1e-5 sqrt(k) for sgemm (per element, against
/// |alpha| sum |a b| + |beta c|).
double blas_tolerance(BlasRoutine routine, long long n_or_k);

/// Runs the benchmark on `rt`'s device. Sizes that do not fit the device are kept as rows whose
/// cells say "skipped: ..."; results outside tolerance are marked (ok = false).
std::vector<BlasRow> run_blas_bench(Runtime& rt, const BlasBenchOptions& options);

/// Prints the rows as "table", "csv" or "json"; `device` heads the table.
void print_blas(const std::vector<BlasRow>& rows, BlasRoutine routine, const std::string& device,
                int runs, const std::string& format, std::ostream& out);

}  // namespace blurtool
