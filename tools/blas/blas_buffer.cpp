// The buffer implementation of the BLAS comparison (kernels/blas.cl): float4 saxpy, a
// two-stage work-group tree reduction for sdot, a tiled local-memory sgemm with register
// blocking. Operands are uploaded as they are (strides and leading dimensions included).
#include <algorithm>
#include <climits>

#include "tools/blas/blas_impl.h"
#include "util/error.h"

namespace blurtool {

namespace {

constexpr size_t kDotWg = 256, kDotGroups = 1024;  // kernels/blas.cl DOT_WG; stage-1 groups
constexpr size_t kTile = 64, kPerItem = 4;         // kernels/blas.cl TS, WPT

void download(Runtime& rt, const cl::Buffer& b, std::vector<float>& v) {
  if (!v.empty()) rt.queue().enqueueReadBuffer(b, CL_TRUE, 0, v.size() * sizeof(float), v.data());
}

}  // namespace

BlasTiming saxpy_buffer(Runtime& rt, const SaxpyArgs& a, const std::vector<float>& x,
                        std::vector<float>& y, int runs) {
  check_fits(rt, {x.size() * 4, y.size() * 4}, "saxpy n=" + std::to_string(a.n));
  const bool contiguous = a.incx == 1 && a.incy == 1;
  cl::Kernel kernel =
      rt.kernel("blas", contiguous ? "blas_saxpy_contiguous" : "blas_saxpy_strided", "");
  const std::vector<float> y0 = y;
  return time_runs(runs, [&]() {
    cl::Buffer bx = upload_floats(rt, x), by = upload_floats(rt, y0);
    std::vector<cl::Event> events;
    if (a.n > 0) {
      events.emplace_back();
      kernel.setArg(0, static_cast<cl_long>(a.n));
      kernel.setArg(1, a.alpha);
      kernel.setArg(2, bx);
      if (contiguous) {
        kernel.setArg(3, by);
      } else {
        kernel.setArg(3, static_cast<cl_long>(a.incx));
        kernel.setArg(4, by);
        kernel.setArg(5, static_cast<cl_long>(a.incy));
      }
      const size_t items = contiguous ? (a.n + 3) / 4 : a.n;
      rt.queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(round_up(items, 256)),
                                      cl::NDRange(256), nullptr, &events.back());
      events.back().wait();
    }
    download(rt, by, y);
    return events_ms(events);
  });
}

BlasTiming sdot_buffer(Runtime& rt, const SdotArgs& a, const std::vector<float>& x,
                       const std::vector<float>& y, float& result, int runs) {
  check_fits(rt, {x.size() * 4, y.size() * 4}, "sdot n=" + std::to_string(a.n));
  std::vector<cl::Kernel> kernels =
      rt.kernels("blas", {"blas_sdot_partial", "blas_sdot_final"}, "");
  cl::Kernel partial = kernels[0];
  cl::Kernel final_sum = kernels[1];
  // Enough work-groups to fill a large GPU, no more than the data needs.
  const size_t groups = std::clamp<size_t>((a.n + kDotWg - 1) / kDotWg, 1, kDotGroups);
  return time_runs(runs, [&]() {
    cl::Buffer bx = upload_floats(rt, x), by = upload_floats(rt, y);
    cl::Buffer sums(rt.context(), CL_MEM_READ_WRITE, groups * sizeof(float));
    cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, sizeof(float));
    partial.setArg(0, static_cast<cl_long>(a.n));
    partial.setArg(1, bx);
    partial.setArg(2, static_cast<cl_long>(a.incx));
    partial.setArg(3, by);
    partial.setArg(4, static_cast<cl_long>(a.incy));
    partial.setArg(5, sums);
    final_sum.setArg(0, static_cast<cl_int>(groups));
    final_sum.setArg(1, sums);
    final_sum.setArg(2, out);
    std::vector<cl::Event> events(2);
    rt.queue().enqueueNDRangeKernel(partial, cl::NullRange, cl::NDRange(groups * kDotWg),
                                    cl::NDRange(kDotWg), nullptr, &events[0]);
    rt.queue().enqueueNDRangeKernel(final_sum, cl::NullRange, cl::NDRange(kDotWg),
                                    cl::NDRange(kDotWg), nullptr, &events[1]);
    rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, sizeof(float), &result);
    return events_ms(events);
  });
}

BlasTiming sgemm_buffer(Runtime& rt, const SgemmArgs& a, const std::vector<float>& A,
                        const std::vector<float>& B, std::vector<float>& C, int runs) {
  check_fits(
      rt, {A.size() * 4, B.size() * 4, C.size() * 4},
      "sgemm " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k));
  // The kernel indexes with 32-bit ints (lda * columns and the like).
  for (size_t floats : {A.size(), B.size(), C.size()})
    if (floats > static_cast<size_t>(INT_MAX))
      throw Error("sgemm buffer: a matrix of " + std::to_string(floats) +
                  " floats is beyond its 32-bit indices (at most 2^31 - 1)");
  cl::Kernel kernel = rt.kernel("blas", "blas_sgemm_tiled", "");
  const size_t side = kTile / kPerItem;
  if (kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(rt.device().device) < side * side) {
    throw Error("sgemm buffer: '" + rt.device().name + "' cannot run work-groups of " +
                std::to_string(side * side) + " work-items (CL_KERNEL_WORK_GROUP_SIZE)");
  }
  const std::vector<float> c0 = C;
  return time_runs(runs, [&]() {
    cl::Buffer ba = upload_floats(rt, A), bb = upload_floats(rt, B), bc = upload_floats(rt, c0);
    std::vector<cl::Event> events;
    if (a.m > 0 && a.n > 0) {
      const cl_int args_i[] = {static_cast<cl_int>(a.m), static_cast<cl_int>(a.n),
                               static_cast<cl_int>(a.k)};
      for (cl_uint i = 0; i < 3; ++i) kernel.setArg(i, args_i[i]);
      kernel.setArg(3, a.alpha);
      kernel.setArg(4, a.beta);
      kernel.setArg(5, ba);
      kernel.setArg(6, static_cast<cl_int>(a.lda));
      kernel.setArg(7, static_cast<cl_int>(a.trans_a));
      kernel.setArg(8, bb);
      kernel.setArg(9, static_cast<cl_int>(a.ldb));
      kernel.setArg(10, static_cast<cl_int>(a.trans_b));
      kernel.setArg(11, bc);
      kernel.setArg(12, static_cast<cl_int>(a.ldc));
      events.emplace_back();
      const cl::NDRange global((a.m + kTile - 1) / kTile * side, (a.n + kTile - 1) / kTile * side);
      rt.queue().enqueueNDRangeKernel(kernel, cl::NullRange, global, cl::NDRange(side, side),
                                      nullptr, &events.back());
      events.back().wait();
    }
    download(rt, bc, C);
    return events_ms(events);
  });
}

}  // namespace blurtool
