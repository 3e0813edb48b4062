// The CLBlast implementation: the reference every own implementation is compared with.
//
// CLBlast takes positive increments only, so a vector with a negative increment is reversed on
// the host while it is uploaded (and y back while it is downloaded): BLAS reads element i of
// such a vector at (n-1-i)|inc|, so the reversed copy holds it at i|inc|. A routine that
// launches several kernels (GEMM with its pre-processing, DOT with its second reduction stage)
// returns an event for its last kernel only, so its kernel time is the host time around the
// call and clFinish, after the warm-up run.
#include <clblast.h>

#include <algorithm>
#include <chrono>

#include "tools/blas/blas_impl.h"
#include "util/error.h"

namespace blurtool {

namespace {

std::string status_text(clblast::StatusCode s) {
  const int code = static_cast<int>(s);
  if (code > -1000) return cl_error_name(code) + " (" + std::to_string(code) + ")";
  switch (s) {
    case clblast::StatusCode::kNotImplemented:
      return "kNotImplemented (-1024)";
    case clblast::StatusCode::kInvalidLocalMemUsage:
      return "kInvalidLocalMemUsage (-2046)";
    case clblast::StatusCode::kDatabaseError:
      return "kDatabaseError (-2041)";
    case clblast::StatusCode::kInsufficientMemoryTemp:
      return "kInsufficientMemoryTemp (-2050)";
    default:
      return "CLBlast status " + std::to_string(code);
  }
}

void check(clblast::StatusCode s, const char* routine) {
  if (s != clblast::StatusCode::kSuccess)
    throw Error(std::string("CLBlast ") + routine + " failed: " + status_text(s));
}

// `v` with its n elements, |inc| apart, in reverse order (its own inverse).
std::vector<float> reversed(const std::vector<float>& v, long long n, long long inc) {
  std::vector<float> r = v;
  const size_t step = static_cast<size_t>(std::llabs(inc));
  for (long long i = 0; i < n; ++i) r[i * step] = v[(n - 1 - i) * step];
  return r;
}

}  // namespace

BlasTiming saxpy_clblast(Runtime& rt, const SaxpyArgs& a, const std::vector<float>& x,
                         std::vector<float>& y, int runs) {
  check_fits(rt, {x.size() * 4, y.size() * 4}, "saxpy n=" + std::to_string(a.n));
  const std::vector<float> y0 = y;
  // Reversed copies only where an increment is negative, so that the end-to-end time of the
  // common case holds no host copies that the other implementations do not make either.
  const std::vector<float> x_rev = a.incx < 0 ? reversed(x, a.n, a.incx) : std::vector<float>();
  const std::vector<float> y_rev = a.incy < 0 ? reversed(y0, a.n, a.incy) : std::vector<float>();
  return time_runs(runs, [&]() {
    cl::Buffer bx = upload_floats(rt, a.incx < 0 ? x_rev : x);
    cl::Buffer by = upload_floats(rt, a.incy < 0 ? y_rev : y0);
    cl_command_queue q = rt.queue()();
    const auto start = std::chrono::steady_clock::now();
    if (a.n > 0)
      check(clblast::Axpy<float>(a.n, a.alpha, bx(), 0, std::llabs(a.incx), by(), 0,
                                 std::llabs(a.incy), &q),
            "Axpy");
    rt.queue().finish();
    const double ms = ms_since(start);
    if (!y.empty())
      rt.queue().enqueueReadBuffer(by, CL_TRUE, 0, y.size() * sizeof(float), y.data());
    if (a.incy < 0) y = reversed(y, a.n, a.incy);
    return ms;
  });
}

BlasTiming sdot_clblast(Runtime& rt, const SdotArgs& a, const std::vector<float>& x,
                        const std::vector<float>& y, float& result, int runs) {
  check_fits(rt, {x.size() * 4, y.size() * 4}, "sdot n=" + std::to_string(a.n));
  // A dot product does not care about the common order: reverse x only when exactly one of
  // the two walks backwards.
  const bool flip = (a.incx < 0) != (a.incy < 0);
  const std::vector<float> x_rev = flip ? reversed(x, a.n, a.incx) : std::vector<float>();
  return time_runs(runs, [&]() {
    cl::Buffer bx = upload_floats(rt, flip ? x_rev : x);
    cl::Buffer by = upload_floats(rt, y);
    cl::Buffer dot(rt.context(), CL_MEM_READ_WRITE, sizeof(float));
    cl_command_queue q = rt.queue()();
    const auto start = std::chrono::steady_clock::now();
    result = 0;
    if (a.n > 0)
      check(clblast::Dot<float>(a.n, dot(), 0, bx(), 0, std::llabs(a.incx), by(), 0,
                                std::llabs(a.incy), &q),
            "Dot");
    rt.queue().finish();
    const double ms = ms_since(start);
    if (a.n > 0) rt.queue().enqueueReadBuffer(dot, CL_TRUE, 0, sizeof(float), &result);
    return ms;
  });
}

BlasTiming sgemm_clblast(Runtime& rt, const SgemmArgs& a, const std::vector<float>& A,
                         const std::vector<float>& B, std::vector<float>& C, int runs) {
  check_fits(
      rt, {A.size() * 4, B.size() * 4, C.size() * 4},
      "sgemm " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k));
  const std::vector<float> c0 = C;
  using clblast::Transpose;
  const Transpose ta = a.trans_a ? Transpose::kYes : Transpose::kNo;
  const Transpose tb = a.trans_b ? Transpose::kYes : Transpose::kNo;
  // GEMM's indirect kernel pads and transposes its operands into temporary buffers, which
  // CLBlast allocates on every call unless it is given one: allocate it once, outside the
  // timed runs, as a program calling CLBlast repeatedly would.
  cl_command_queue q = rt.queue()();
  size_t temp_bytes = 0;
  if (a.m > 0 && a.n > 0 && a.k > 0)
    check(clblast::GemmTempBufferSize<float>(clblast::Layout::kColMajor, ta, tb, a.m, a.n, a.k, 0,
                                             a.lda, 0, a.ldb, 0, a.ldc, &q, temp_bytes),
          "GemmTempBufferSize");
  cl::Buffer temp;
  if (temp_bytes > 0) temp = cl::Buffer(rt.context(), CL_MEM_READ_WRITE, temp_bytes);
  return time_runs(runs, [&]() {
    cl::Buffer ba = upload_floats(rt, A), bb = upload_floats(rt, B), bc = upload_floats(rt, c0);
    // The host copy of C stays outside the timed window: 64 MB at n = 4096 is about 10x the
    // GEMM itself on a GPU.
    std::vector<float> out = c0;
    rt.queue().finish();
    const auto start = std::chrono::steady_clock::now();
    if (a.m > 0 && a.n > 0) {
      if (a.k > 0) {
        check(clblast::Gemm<float>(clblast::Layout::kColMajor, ta, tb, a.m, a.n, a.k, a.alpha, ba(),
                                   0, a.lda, bb(), 0, a.ldb, a.beta, bc(), 0, a.ldc, &q, nullptr,
                                   temp_bytes > 0 ? temp() : nullptr),
              "Gemm");
      } else {  // k = 0: C = beta C, which CLBlast refuses (kInvalidDimension); BLAS allows it
        for (long long j = 0; j < a.n; ++j)
          for (long long i = 0; i < a.m; ++i) {
            float& c = out[i + j * a.ldc];
            c = a.beta == 0 ? 0.0f : a.beta * c;
          }
        rt.queue().enqueueWriteBuffer(bc, CL_TRUE, 0, out.size() * sizeof(float), out.data());
      }
    }
    rt.queue().finish();
    const double ms = ms_since(start);
    if (!out.empty())
      rt.queue().enqueueReadBuffer(bc, CL_TRUE, 0, out.size() * sizeof(float), out.data());
    C = out;
    return ms;
  });
}

}  // namespace blurtool
