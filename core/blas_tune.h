// CLBlast tuning for `blurtool blas --tune`: runs CLBlast's own tuners (TuneXaxpy, TuneXdot,
// TuneXgemm) on a device, stores the parameters in a cache file keyed by device and driver, and
// applies them with OverrideParameters on later runs, so the tables can show CLBlast tuned and
// untuned side by side.
#pragma once

#include <ostream>
#include <string>

#include "core/cl_runtime.h"

namespace blurtool {

/// The cache file for `device`: $BLURTOOL_CACHE_DIR, else $XDG_CACHE_HOME/blurtool, else
/// ~/.cache/blurtool, then "clblast-<platform>-<device>-<driver>.json" (unsafe characters
/// replaced by '_').
std::string clblast_tuning_path(const DeviceInfo& device);

/// Runs the tuners for single precision on `rt`'s device (fraction 1 of the configurations for
/// Xaxpy and Xdot, 1/64 for Xgemm, which has thousands), writes the cache atomically and prints
/// each kernel's best parameters to `log`. Throws blurtool::Error naming the tuner that failed.
void tune_clblast(Runtime& rt, std::ostream& log);

/// Applies the cached parameters of `rt`'s device with OverrideParameters. Returns false when
/// there is no cache for this device and driver. Throws blurtool::Error for an unreadable cache
/// or parameters CLBlast refuses. The override lasts for the rest of the process.
bool apply_clblast_tuning(Runtime& rt);

}  // namespace blurtool
