// The memory a `blurtool blas` run takes at one size, on the device and on the host, and the
// default sizes capped to what fits: the write-up's sweep goes up to 2^28 floats a vector (1 GiB
// each, several copies on the host), more than a small machine or device holds. The sweep is
// also held to a time budget (blas_next_size): its sizes above 2^20 take minutes on a CPU
// device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cl_runtime.h"
#include "tools/blas/blas_bench.h"

namespace blurtool {

/// What a blas run may take. A device whose memory is the host's (a CPU device) counts its
/// operands against `host` as well.
struct BlasMemoryLimits {
  std::uint64_t device = 0;     ///< bytes of all operands together on the device
  std::uint64_t max_alloc = 0;  ///< bytes of one operand (CL_DEVICE_MAX_MEM_ALLOC_SIZE)
  std::uint64_t host = 0;       ///< bytes of host memory
  bool shared = false;          ///< the device's memory is host memory
  std::string host_source;      ///< where `host` comes from, for messages
};

/// The limits on `device`: half its global memory, its largest allocation, and `max_memory`
/// bytes of the host (0: --max-memory's default, a quarter of physical memory, at most 4 GiB).
BlasMemoryLimits blas_memory_limits(const DeviceInfo& device, std::uint64_t max_memory);

/// Host bytes of a run of `o`'s routine at `size` (see blas_misfit): its inputs, the reference's
/// result and the device's, and with `shared` (a CPU device) the device's operands too.
std::uint64_t blas_host_bytes(const BlasBenchOptions& o, long long size, bool shared);

/// The options that set a run's size, for messages: "--n", or "--m, --n or --k" for sgemm.
std::string blas_size_options(const BlasBenchOptions& o);

/// Why a run of `o`'s routine at `size` (n, or m = n = k of a square sgemm; ignored for an
/// sgemm that is not square) does not fit `limits`, e.g. "the host's memory (4096 MiB: a
/// quarter of physical memory, at most 4 GiB)"; "" when it fits.
std::string blas_misfit(const BlasBenchOptions& o, long long size, const BlasMemoryLimits& limits);

/// The write-up's sizes of o.routine (saxpy and sdot 1024..268435456, sgemm 64..4096), those
/// that do not fit `limits` replaced by the largest power of two that does (once). `note`
/// receives "n capped to N to fit <what>" when a size was capped, else "".
std::vector<long long> blas_default_sizes(const BlasBenchOptions& o, const BlasMemoryLimits& limits,
                                          std::string& note);

/// The default sweep's time budget in seconds (--time-budget).
inline constexpr double kBlasTimeBudget = 5;

/// Where a default sweep within a time budget stands: the last size measured and the seconds it
/// took, the seconds spent so far and the budget.
struct BlasSweepClock {
  long long last = 0;  ///< 0: nothing measured yet
  double last_s = 0, spent_s = 0, budget_s = kBlasTimeBudget;
};

/// The next size of a default sweep over `sizes` (ascending, blas_default_sizes'), 0 when it
/// ends. The first size always runs; a later one's time is predicted from the last one measured,
/// in proportion to the work (n; n^3 for sgemm): high where fixed costs weigh, low where the
/// operands outgrow the caches. The first of `sizes` above the last runs if it is predicted to
/// take at most half the budget left, else the largest power of two between them that is (the
/// sweep then goes on towards that size of `sizes`), else the sweep ends. `note` receives why a
/// size was replaced or the sweep ended, else "".
long long blas_next_size(const BlasBenchOptions& o, const std::vector<long long>& sizes,
                         const BlasSweepClock& clock, std::string& note);

}  // namespace blurtool
