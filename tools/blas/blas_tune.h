// CLBlast tuning for `blurtool blas --tune`: runs CLBlast's own tuners (TuneXaxpy, TuneXdot,
// TuneXgemm) on a device, stores the parameters in a cache file keyed by device and driver, and
// applies them with OverrideParameters on later runs, so the tables can show CLBlast tuned and
// untuned side by side.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/cl_runtime.h"

namespace blurtool {

/// The cache file for `device`: $BLURTOOL_CACHE_DIR, else $XDG_CACHE_HOME/blurtool, else
/// ~/.cache/blurtool, then "clblast-<platform>-<device>-<driver>.json" (unsafe characters
/// replaced by '_').
std::string clblast_tuning_path(const DeviceInfo& device);

/// The random fraction of Xgemm's configurations that `tune_clblast` tries.
inline constexpr double kXgemmTuningFraction = 1.0 / 512;  // CLBlast's own tuner default

/// Runs the tuners for single precision on `rt`'s device (every configuration of Xaxpy and
/// Xdot, kXgemmTuningFraction of Xgemm's, which has tens of thousands), rewrites the cache
/// atomically after each kernel (an interrupted run keeps the kernels it finished) and prints
/// each kernel's best parameters and tuning time in seconds to `log`. A tuner that fails (or an
/// Xgemm pick that is wrong in the GEMM routine) is written to the cache's "refused" entries
/// with the reason, its routine keeps CLBlast's defaults, and the other tuners still run.
/// Throws blurtool::Error when the cache cannot be written.
void tune_clblast(Runtime& rt, std::ostream& log);

/// Checks the cached Xgemm parameters of `rt`'s device inside CLBlast's GEMM routine: C = A B
/// at 2n, 2n+17 and 4n (n = 1024 on a GPU, 256 otherwise), with CLBlast's defaults first, then
/// with the override, compared (relative error within 1e-5 sqrt(size)). Returns 0 when they
/// agree, 1 after writing why not to `out`. `blurtool blas --tune` runs it in a child process
/// (blurtool blas --check-tuning), since a wrong pick can also write outside its buffers.
int check_clblast_tuning(Runtime& rt, std::ostream& out);

/// What `apply_clblast_tuning` found in the cache.
struct ClblastTuning {
  std::string path;                            ///< the cache file (see clblast_tuning_path)
  std::vector<std::string> applied;            ///< kernels overridden: "Xaxpy", "Xdot", "Xgemm"
  std::map<std::string, std::string> refused;  ///< kernel -> why --tune left it out
};

/// Applies the cached parameters of `rt`'s device with OverrideParameters; `applied` is empty
/// when there is no cache for this device and driver. Throws blurtool::Error for an unreadable
/// cache or parameters CLBlast refuses. The override lasts for the rest of the process.
ClblastTuning apply_clblast_tuning(Runtime& rt);

}  // namespace blurtool
