// The `blurtool blas` benchmark: runs a routine over sizes and implementations, checks every
// result against the CPU reference, and prints the write-up's tables (size, bytes, each
// implementation's time, the best own implementation's improvement over CLBlast, GB/s or
// GFLOP/s) as a table, CSV or JSON.
#pragma once

#include <cstdint>
#include <functional>
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
  /// Seconds a default sweep may take (blas_next_size): `sizes` are then the candidates, run
  /// while they are predicted to end within it; 0: every one of `sizes` runs.
  double time_budget_s = 0;
  std::vector<BlasImpl> impls;
  int runs = 10;
  unsigned seed = 1;
  /// Also run CLBlast with the parameters `blurtool blas --tune` cached for this device, if
  /// any, as a "clblast tuned" column (after every untuned run: an override cannot be undone).
  bool with_tuned = true;
  /// Host memory the run may take in bytes (--max-memory); 0: a quarter of physical memory,
  /// at most 4 GiB (see blas_sizes.h).
  std::uint64_t max_memory = 0;
};

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

/// Runs the benchmark on `rt`'s device and hands each row to `done` as soon as it is whole:
/// after its size ran, or where a "clblast tuned" column is due, after the tuned pass. Sizes
/// that do not fit the device are kept as rows whose cells say "skipped: ..."; results outside
/// tolerance are marked (ok = false). With a time budget, the sizes are chosen by
/// blas_next_size (each replacement or early end noted on standard error) once a first,
/// unprinted run of the smallest size has built the programs. Returns every row.
std::vector<BlasRow> run_blas_bench(Runtime& rt, const BlasBenchOptions& options,
                                    const std::function<void(const BlasRow&)>& done = {});

/// Prints rows as "table", "csv" or "json" as they come: a table or CSV line (or lines) at
/// once, flushed, so that a long sweep shows each size when it is measured; JSON, one document,
/// at finish(). `device` heads the table. Throws blurtool::UsageError for another format.
class BlasPrinter {
 public:
  BlasPrinter(BlasRoutine routine, std::string device, int runs, std::string format,
              std::ostream& out);
  void row(const BlasRow& r);
  /// The table's legend and the reasons of skipped cells; the JSON document.
  void finish();

 private:
  BlasRoutine routine_;
  std::string device_, format_;
  int runs_;
  std::ostream& out_;
  bool started_ = false;            // the table's head or the CSV header is printed
  std::vector<BlasRow> rows_;       // JSON: the rows so far
  std::vector<std::string> notes_;  // the table: skipped cells' reasons, results out of tolerance
};

}  // namespace blurtool
