// The BLAS comparison's one statement of the maths (see blas.h): argument checking as CLBlast
// does it, the memory each operand occupies, and CPU references for saxpy, sdot and sgemm that
// every device implementation is tested against. Written for obviousness, not speed: strides
// and transpositions are spelled out element by element, and sums are kept in double.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/blas/blas.h"
#include "util/error.h"

namespace blurtool {
namespace {

void check_size(const std::string& option, long long value) {
  if (value < 0)
    throw UsageError(std::string(option) + " " + std::to_string(value) + ": must be 0 or more");
}

void check_inc(const std::string& option, long long value) {
  if (value == 0) throw UsageError(std::string(option) + " 0: must not be 0");
}

// 0 means "tight": the rows of the stored matrix, at least 1 (as BLAS requires even when the
// matrix is empty).
void fill_tight(long long& ld, long long rows) {
  if (ld == 0) ld = std::max(1LL, rows);
}

// One check per leading dimension, on its own: ld >= max(1, rows). (Joining these checks with
// || accepted bad values in one of the projects this tool re-implements.)
void check_ld(const std::string& option, long long ld, long long rows,
              const std::string& rows_are) {
  const long long least = std::max(1LL, rows);
  if (ld < least) {
    throw UsageError(std::string(option) + " " + std::to_string(ld) + ": must be at least " +
                     std::to_string(least) + " (" + rows_are + ")");
  }
}

// The most floats an operand may span: 2^60 (4 EiB), far beyond any device; above it, or where
// the product overflows, the arguments are refused here, before any size arithmetic can wrap.
constexpr unsigned long long kMaxFloats = 1ULL << 60;

unsigned long long magnitude(long long v) {
  return v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
}

// Refuses a strided vector of n elements that spans more than kMaxFloats, naming its options.
void check_vector_span(const char* vector, long long n, const std::string& inc_option,
                       long long inc) {
  unsigned long long span = 0;
  if (magnitude(inc) >= kMaxFloats)
    throw UsageError(std::string(inc_option) + " " + std::to_string(inc) +
                     ": must lie between -2^60 and 2^60");
  if (n > 0 &&
      (__builtin_mul_overflow(static_cast<unsigned long long>(n - 1), magnitude(inc), &span) ||
       span >= kMaxFloats))
    throw UsageError((magnitude(inc) == 1
                          ? std::string()
                          : std::string(inc_option) + " " + std::to_string(inc) + " with ") +
                     parameter("n") + " " + std::to_string(n) + ": " + vector +
                     " would span more than 2^60 floats, more than any device holds");
}

// The same for a matrix of `cols` columns of leading dimension ld; `ld_option` and
// `cols_option` name where they came from.
void check_matrix_span(const char* matrix, const std::string& ld_option, long long ld,
                       const std::string& cols_option, long long cols) {
  unsigned long long floats = 0;
  if (__builtin_mul_overflow(static_cast<unsigned long long>(ld),
                             static_cast<unsigned long long>(cols), &floats) ||
      floats > kMaxFloats)
    throw UsageError(ld_option + " " + std::to_string(ld) + " with " + cols_option + " " +
                     std::to_string(cols) + ": " + matrix +
                     " would hold more than 2^60 floats, more than any device holds");
}

// The arguments of an operation on two strided vectors x and y of n elements (saxpy, sdot):
// n, then each stride, then each vector's span; the first that fails is the one reported.
void check_vectors(long long n, long long incx, long long incy) {
  check_size(parameter("n"), n);
  check_inc(parameter("incx"), incx);
  check_inc(parameter("incy"), incy);
  check_vector_span("x", n, parameter("incx"), incx);
  check_vector_span("y", n, parameter("incy"), incy);
}

// Offset of element i of a strided vector of n elements: BLAS walks a negative stride from the
// far end, so element 0 is the last one in memory.
size_t at(long long i, long long n, long long inc) {
  return static_cast<size_t>(inc > 0 ? i * inc : (n - 1 - i) * -inc);
}

}  // namespace

void validate(SaxpyArgs& args) {
  check_vectors(args.n, args.incx, args.incy);
}

void validate(SdotArgs& args) {
  check_vectors(args.n, args.incx, args.incy);
}

void validate(SgemmArgs& args) {
  check_size(parameter("m"), args.m);
  check_size(parameter("n"), args.n);
  check_size(parameter("k"), args.k);
  const long long a_rows = args.trans_a ? args.k : args.m;
  const long long b_rows = args.trans_b ? args.n : args.k;
  // Where a leading dimension is left tight, the matrix's size comes from its rows' option.
  const std::string lda = args.lda       ? parameter("lda")
                          : args.trans_a ? parameter("k")
                                         : parameter("m");
  const std::string ldb = args.ldb       ? parameter("ldb")
                          : args.trans_b ? parameter("n")
                                         : parameter("k");
  const std::string ldc = args.ldc ? parameter("ldc") : parameter("m");
  fill_tight(args.lda, a_rows);
  fill_tight(args.ldb, b_rows);
  fill_tight(args.ldc, args.m);
  check_ld(parameter("lda"), args.lda, a_rows,
           "the rows of A, m without " + parameter("trans_a") + ", k with it");
  check_ld(parameter("ldb"), args.ldb, b_rows,
           "the rows of B, k without " + parameter("trans_b") + ", n with it");
  check_ld(parameter("ldc"), args.ldc, args.m, "the rows of C, m");
  check_matrix_span("A", lda, args.lda, args.trans_a ? parameter("m") : parameter("k"),
                    args.trans_a ? args.m : args.k);
  check_matrix_span("B", ldb, args.ldb, args.trans_b ? parameter("k") : parameter("n"),
                    args.trans_b ? args.k : args.n);
  check_matrix_span("C", ldc, args.ldc, parameter("n"), args.n);
}

size_t vector_length(long long n, long long inc) {
  return n == 0 ? 0
                : static_cast<size_t>(1 + static_cast<unsigned long long>(n - 1) * magnitude(inc));
}

size_t matrix_a_length(const SgemmArgs& a) {
  return static_cast<size_t>(a.lda * (a.trans_a ? a.m : a.k));
}

size_t matrix_b_length(const SgemmArgs& a) {
  return static_cast<size_t>(a.ldb * (a.trans_b ? a.k : a.n));
}

size_t matrix_c_length(const SgemmArgs& a) {
  return static_cast<size_t>(a.ldc * a.n);
}

void saxpy_reference(const SaxpyArgs& a, const std::vector<float>& x, std::vector<float>& y) {
  for (long long i = 0; i < a.n; ++i) {
    float& yi = y[at(i, a.n, a.incy)];
    yi = static_cast<float>(double(a.alpha) * x[at(i, a.n, a.incx)] + yi);
  }
}

double sdot_reference(const SdotArgs& a, const std::vector<float>& x, const std::vector<float>& y) {
  double sum = 0;
  for (long long i = 0; i < a.n; ++i) sum += double(x[at(i, a.n, a.incx)]) * y[at(i, a.n, a.incy)];
  return sum;
}

void sgemm_reference(const SgemmArgs& a, const std::vector<float>& A, const std::vector<float>& B,
                     std::vector<float>& C) {
  const auto A_at = [&](long long i, long long l) {
    return a.trans_a ? A[l + i * a.lda] : A[i + l * a.lda];
  };
  const auto B_at = [&](long long l, long long j) {
    return a.trans_b ? B[j + l * a.ldb] : B[l + j * a.ldb];
  };
  for (long long j = 0; j < a.n; ++j) {
    for (long long i = 0; i < a.m; ++i) {
      double sum = 0;
      for (long long l = 0; l < a.k; ++l) sum += double(A_at(i, l)) * B_at(l, j);
      float& c = C[i + j * a.ldc];
      // beta = 0: C is only written, so whatever it held (NaN too) does not leak through 0 * c.
      c = static_cast<float>(a.beta == 0 ? a.alpha * sum : a.alpha * sum + double(a.beta) * c);
    }
  }
}

}  // namespace blurtool
