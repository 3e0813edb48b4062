// BLAS comparisons ("outperform cublas with opengl": saxpy, sdot and sgemm written as fragment
// shaders over RGBA32F textures, against cuBLAS), rebuilt in OpenCL: the same routines in three
// implementations on one device: CLBlast, the write-up's image design, and buffer kernels as a
// GPU programmer would write them today. Single precision, BLAS semantics, column-major.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/cl_runtime.h"
#include "util/named.h"

namespace blurtool {

/// The routines (`blurtool blas ROUTINE`).
enum class BlasRoutine { saxpy, sdot, sgemm };
const std::vector<Named<BlasRoutine>>& blas_routine_table();

/// The implementations (--impl). `image` has two forms for sgemm (1x1 and 4x4).
enum class BlasImpl { clblast, image, buffer };
const std::vector<Named<BlasImpl>>& blas_impl_table();

/// y = alpha x + y over n elements with strides incx, incy (BLAS: x[i * incx], y[i * incy],
/// negative strides walk from the end). x holds 1 + (n-1)|incx| floats, y 1 + (n-1)|incy|.
struct SaxpyArgs {
  long long n = 0;
  float alpha = 1;
  long long incx = 1, incy = 1;
};

/// result = sum over i of x[i * incx] y[i * incy] (strides as saxpy).
struct SdotArgs {
  long long n = 0;
  long long incx = 1, incy = 1;
};

/// C = alpha op(A) op(B) + beta C, column-major: op(A) is m x k, op(B) k x n, C m x n.
/// A is stored as (trans_a ? k x m : m x k) with leading dimension lda (>= its rows), likewise B
/// with ldb, C with ldc >= m. With beta = 0, C is only written (it may hold anything, NaN too).
struct SgemmArgs {
  long long m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  long long lda = 0, ldb = 0, ldc = 0;  ///< 0: the tight leading dimension
  float alpha = 1, beta = 0;
};

/// Fills the tight leading dimensions where they are 0, then checks every argument as CLBlast
/// would (n, m, k >= 0; inc != 0; ld >= rows). Throws blurtool::UsageError naming the argument
/// (--n, --incx, --lda, ...).
void validate(SaxpyArgs& args);
void validate(SdotArgs& args);
void validate(SgemmArgs& args);

/// Floats each operand occupies in memory.
size_t vector_length(long long n, long long inc);
size_t matrix_a_length(const SgemmArgs& a);  ///< lda * (trans_a ? m : k)
size_t matrix_b_length(const SgemmArgs& a);  ///< ldb * (trans_b ? k : n)
size_t matrix_c_length(const SgemmArgs& a);  ///< ldc * n

/// CPU references, accumulating in double. saxpy_reference updates y in place; sgemm_reference
/// updates c in place (reading c only when beta != 0).
void saxpy_reference(const SaxpyArgs& a, const std::vector<float>& x, std::vector<float>& y);
double sdot_reference(const SdotArgs& a, const std::vector<float>& x, const std::vector<float>& y);
void sgemm_reference(const SgemmArgs& a, const std::vector<float>& A, const std::vector<float>& B,
                     std::vector<float>& C);

/// Timings of one implementation run: kernel (device) time and end-to-end wall time
/// (upload, compute, download), milliseconds, one value per repetition.
struct BlasTiming {
  std::vector<double> kernel_ms;
  std::vector<double> total_ms;
};

/// Device implementations. Each runs `runs` timed repetitions after one warm-up (runs = 0: one
/// untimed run) and leaves its result in the output argument (y, the dot product, C).
/// `form` selects the image sgemm form: 1 (one work-item per element of C) or 4 (A or B
/// reordered first so that each fetch brings 4 useful floats). Throws blurtool::Error when the
/// operands do not fit in the device's memory or image limits, cl::Error on OpenCL failures.
BlasTiming saxpy_device(Runtime& rt, BlasImpl impl, const SaxpyArgs& a, const std::vector<float>& x,
                        std::vector<float>& y, int runs);
BlasTiming sdot_device(Runtime& rt, BlasImpl impl, const SdotArgs& a, const std::vector<float>& x,
                       const std::vector<float>& y, float& result, int runs);
BlasTiming sgemm_device(Runtime& rt, BlasImpl impl, int form, const SgemmArgs& a,
                        const std::vector<float>& A, const std::vector<float>& B,
                        std::vector<float>& C, int runs);

}  // namespace blurtool
