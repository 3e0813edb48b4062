// Memory of a blas run and the default sizes that fit (see blas_sizes.h).
#include "tools/blas/blas_sizes.h"

#include <algorithm>
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

}  // namespace blurtool
