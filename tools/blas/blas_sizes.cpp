// Memory of a blas run and the default sizes that fit (see blas_sizes.h).
#include "tools/blas/blas_sizes.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "pipeline/strip_pipeline.h"
#include "tools/blas/blas.h"

namespace blurtool {

namespace {

// The device operands of one run and the host bytes beside them (inputs, the reference's
// result and the device's result: four vectors for saxpy, two for sdot, three C matrices).
struct Footprint {
  std::vector<std::uint64_t> device;
  std::uint64_t host = 0;
};

Footprint footprint(const BlasBenchOptions& o, long long size) {
  Footprint f;
  if (o.routine == BlasRoutine::sgemm) {
    SgemmArgs a = o.sgemm;
    if (o.square) {
      a.m = a.n = a.k = size;
      a.lda = a.ldb = a.ldc = 0;
    }
    validate(a);
    const std::uint64_t A = matrix_a_length(a) * 4, B = matrix_b_length(a) * 4,
                        C = matrix_c_length(a) * 4;
    f.device = {A, B, C};
    f.host = A + B + 3 * C;
    return f;
  }
  long long incx = o.sdot.incx, incy = o.sdot.incy;
  if (o.routine == BlasRoutine::saxpy) {
    SaxpyArgs a = o.saxpy;
    a.n = size;
    validate(a);  // spans that overflow are refused, naming the options
    incx = a.incx;
    incy = a.incy;
  } else {
    SdotArgs a = o.sdot;
    a.n = size;
    validate(a);
  }
  const std::uint64_t x = vector_length(size, incx) * 4, y = vector_length(size, incy) * 4;
  f.device = {x, y};
  f.host = o.routine == BlasRoutine::saxpy ? x + 3 * y : x + y;
  return f;
}

std::string mib(std::uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

std::uint64_t blas_host_bytes(const BlasBenchOptions& o, long long size, bool shared) {
  const Footprint f = footprint(o, size);
  std::uint64_t bytes = f.host;
  if (shared)
    for (std::uint64_t b : f.device) bytes += b;
  return bytes;
}

std::string blas_size_options(const BlasBenchOptions& o) {
  return o.routine == BlasRoutine::sgemm
             ? parameter("m") + ", " + parameter("n") + " or " + parameter("k")
             : parameter("n");
}

BlasMemoryLimits blas_memory_limits(const DeviceInfo& device, std::uint64_t max_memory) {
  BlasMemoryLimits l;
  l.device = device.global_mem / 2;  // room for CLBlast's and the image design's own buffers
  l.max_alloc = device.max_alloc;
  l.host = max_memory ? max_memory : default_max_memory();
  l.host_source =
      max_memory ? parameter("max-memory") : "a quarter of physical memory, at most 4 GiB";
  l.shared = (device.type & CL_DEVICE_TYPE_CPU) != 0;
  return l;
}

std::string blas_misfit(const BlasBenchOptions& o, long long size, const BlasMemoryLimits& limits) {
  const Footprint f = footprint(o, size);
  std::uint64_t device = 0;
  for (std::uint64_t b : f.device) {
    if (b > limits.max_alloc)
      return "the device's largest allocation (" + mib(limits.max_alloc) + ")";
    device += b;
  }
  if (device > limits.device) return "the device's memory (half of it: " + mib(limits.device) + ")";
  if (blas_host_bytes(o, size, limits.shared) > limits.host)
    return "the host's memory (" + mib(limits.host) + ": " + limits.host_source +
           (limits.shared ? ", the device's operands included" : "") + ")";
  return "";
}

std::vector<long long> blas_default_sizes(const BlasBenchOptions& o, const BlasMemoryLimits& limits,
                                          std::string& note) {
  note.clear();
  const std::vector<long long> wanted =
      o.routine == BlasRoutine::sgemm ? std::vector<long long>{64, 512, 1024, 2048, 4096}
                                      : std::vector<long long>{1024, 1048576, 67108864, 268435456};
  std::vector<long long> sizes;
  for (long long size : wanted) {
    const std::string misfit = blas_misfit(o, size, limits);
    if (misfit.empty()) {
      sizes.push_back(size);
      continue;
    }
    long long cap = 1;  // the largest power of two below `size` that fits (1 always does)
    while (cap * 2 < size && blas_misfit(o, cap * 2, limits).empty()) cap *= 2;
    if (sizes.empty() || sizes.back() < cap) sizes.push_back(cap);
    if (note.empty())
      note = parameter("n") + " capped to " + std::to_string(cap) + " (from " +
             std::to_string(size) + ") to fit " + misfit;
    break;  // the larger sizes would be capped to the same
  }
  return sizes;
}

namespace {

// The work of one size, to which its time is taken as proportional.
double work(const BlasBenchOptions& o, long long size) {
  const double n = static_cast<double>(size);
  return o.routine == BlasRoutine::sgemm ? n * n * n : n;
}

// Seconds as a note gives them: "22 s", "0.8 s".
std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s >= 10 ? "%.0f s" : "%.1f s", s);
  return text;
}

}  // namespace

long long blas_next_size(const BlasBenchOptions& o, const std::vector<long long>& sizes,
                         const BlasSweepClock& clock, std::string& note) {
  note.clear();
  const auto next = std::upper_bound(sizes.begin(), sizes.end(), clock.last);
  if (next == sizes.end()) return 0;
  if (clock.last == 0) return *next;
  const double left = clock.budget_s - clock.spent_s;
  const auto predicted = [&](long long size) {
    return clock.last_s * work(o, size) / std::max(1.0, work(o, clock.last));
  };
  // Half of what is left: the prediction runs low where the operands outgrow the caches (PoCL
  // on 2 cores: saxpy at 2^24 takes about 1.4 times its time at 2^22 scaled by 4).
  const auto fits = [&](long long size) { return predicted(size) <= left / 2; };
  if (fits(*next)) return *next;
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", clock.budget_s);
  const std::string why = " would take about " + seconds(predicted(*next)) +
                          " on this device, more than half the " + seconds(std::max(0.0, left)) +
                          " left of the sweep's time budget (" + budget + " s, " +
                          parameter("time_budget") + ")";
  long long size = 1;  // the largest power of two below *next predicted to end in time
  while (size * 2 < *next) size *= 2;
  for (; size > clock.last; size /= 2)
    if (fits(size)) {
      note = parameter("n") + " " + std::to_string(size) + " in place of " + std::to_string(*next) +
             ", which" + why;
      return size;
    }
  note = "sizes from " + std::to_string(*next) + " up left out: " + std::to_string(*next) + why +
         "; " + parameter("time_budget") + " 0 runs them, " + parameter("n") + " one size";
  return 0;
}

}  // namespace blurtool
