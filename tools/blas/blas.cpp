// BLAS comparison: name tables, the dispatcher over implementations, and the timing and memory
// helpers the implementations share (see blas.h and blas_impl.h).
#include <algorithm>
#include <chrono>

#include "tools/blas/blas_impl.h"
#include "util/error.h"

namespace blurtool {

const std::vector<Named<BlasRoutine>>& blas_routine_table() {
  static const std::vector<Named<BlasRoutine>> table = {
      {BlasRoutine::saxpy, "saxpy", "y = alpha x + y"},
      {BlasRoutine::sdot, "sdot", "x . y"},
      {BlasRoutine::sgemm, "sgemm", "C = alpha op(A) op(B) + beta C"},
  };
  return table;
}

const std::vector<Named<BlasImpl>>& blas_impl_table() {
  static const std::vector<Named<BlasImpl>> table = {
      {BlasImpl::clblast, "clblast", "the CLBlast routine"},
      {BlasImpl::image, "image", "the write-up's design: RGBA32F images, 4 floats per texel"},
      {BlasImpl::buffer, "buffer", "buffer kernels: float4 saxpy, tree sdot, tiled sgemm"},
  };
  return table;
}

BlasTiming time_runs(int runs, const std::function<double()>& once) {
  BlasTiming t;
  const int total = runs > 0 ? runs + 1 : 1;
  for (int r = 0; r < total; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const double kernel_ms = once();
    const double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (runs > 0 && r == 0) continue;  // warm-up: builds, first-touch allocations
    t.kernel_ms.push_back(kernel_ms);
    t.total_ms.push_back(wall_ms);
  }
  return t;
}

double events_ms(const std::vector<cl::Event>& events) {
  if (events.empty()) return 0;
  const cl_ulong start = events.front().getProfilingInfo<CL_PROFILING_COMMAND_START>();
  const cl_ulong end = events.back().getProfilingInfo<CL_PROFILING_COMMAND_END>();
  return static_cast<double>(end - start) * 1e-6;
}

void check_fits(Runtime& rt, const std::vector<size_t>& bytes, const std::string& what) {
  const DeviceInfo& d = rt.device();
  size_t total = 0;
  for (size_t b : bytes) {
    if (b > d.max_alloc) {
      throw Error(what + ": a buffer of " + std::to_string(b >> 20) + " MiB exceeds '" + d.name +
                  "''s largest allocation (" + std::to_string(d.max_alloc >> 20) +
                  " MiB, CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
    }
    total += b;
  }
  if (total > d.global_mem) {
    throw Error(what + ": " + std::to_string(total >> 20) + " MiB of operands exceed '" + d.name +
                "''s memory (" + std::to_string(d.global_mem >> 20) + " MiB)");
  }
}

cl::Buffer upload_floats(Runtime& rt, const std::vector<float>& v) {
  cl::Buffer b(rt.context(), CL_MEM_READ_WRITE, std::max<size_t>(1, v.size()) * sizeof(float));
  if (!v.empty()) rt.queue().enqueueWriteBuffer(b, CL_TRUE, 0, v.size() * sizeof(float), v.data());
  return b;
}

BlasTiming saxpy_device(Runtime& rt, BlasImpl impl, const SaxpyArgs& a, const std::vector<float>& x,
                        std::vector<float>& y, int runs) {
  switch (impl) {
    case BlasImpl::clblast:
      return saxpy_clblast(rt, a, x, y, runs);
    case BlasImpl::image:
      return saxpy_image(rt, a, x, y, runs);
    case BlasImpl::buffer:
      break;
  }
  return saxpy_buffer(rt, a, x, y, runs);
}

BlasTiming sdot_device(Runtime& rt, BlasImpl impl, const SdotArgs& a, const std::vector<float>& x,
                       const std::vector<float>& y, float& result, int runs) {
  switch (impl) {
    case BlasImpl::clblast:
      return sdot_clblast(rt, a, x, y, result, runs);
    case BlasImpl::image:
      return sdot_image(rt, a, x, y, result, runs);
    case BlasImpl::buffer:
      break;
  }
  return sdot_buffer(rt, a, x, y, result, runs);
}

BlasTiming sgemm_device(Runtime& rt, BlasImpl impl, int form, const SgemmArgs& a,
                        const std::vector<float>& A, const std::vector<float>& B,
                        std::vector<float>& C, int runs) {
  switch (impl) {
    case BlasImpl::clblast:
      return sgemm_clblast(rt, a, A, B, C, runs);
    case BlasImpl::image:
      return sgemm_image(rt, form, a, A, B, C, runs);
    case BlasImpl::buffer:
      break;
  }
  return sgemm_buffer(rt, a, A, B, C, runs);
}

}  // namespace blurtool
