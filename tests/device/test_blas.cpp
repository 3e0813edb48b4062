// The BLAS comparison on the device: every implementation (every entry of blas_impl_table(), both
// image sgemm forms) matches the CPU reference over odd and power-of-two sizes, negative and
// unequal strides, every transposition, tight and padded leading dimensions, and beta = 0 on a C
// full of NaN, leaving untouched memory untouched. The references themselves:
// tests/unit/test_blas.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "tools/blas/blas.h"
#include "util/error.h"

namespace blurtool {
namespace {

// ---------------------------------------------------------------------------------------------
// Accuracy bounds, in one place. Each is a multiple of the error that single-precision
// arithmetic may honestly make, loose enough for any summation order (sequential, tree, tiled)
// and tight enough that a wrong element, stride or transposition fails.

// saxpy: one multiply-add per element (fused or not): relative to |alpha x| + |y|.
bool saxpy_close(double got, double want, double alpha_x, double y) {
  return std::abs(got - want) <= 1e-4 * (std::abs(alpha_x) + std::abs(y));
}

// sdot: float sums drift like sqrt(n) in practice; relative to sum |x y|.
bool sdot_close(double got, double want, long long n, double sum_abs) {
  return std::abs(got - want) <= 1e-5 * std::sqrt(double(n)) * sum_abs + 1e-30;
}

// sgemm: per element of C, k products summed: relative to |alpha| sum |a b| + |beta c|.
bool sgemm_close(double got, double want, long long k, double magnitude) {
  return std::abs(got - want) <= 1e-5 * std::sqrt(double(std::max(k, 1LL))) * magnitude + 1e-30;
}

// ---------------------------------------------------------------------------------------------

std::vector<float> random_floats(size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& f : v) f = value(rng);
  return v;
}

// Offset of element i of a strided vector (BLAS: negative strides walk from the end).
size_t at(long long i, long long n, long long inc) {
  return static_cast<size_t>(inc > 0 ? i * inc : (n - 1 - i) * -inc);
}

// ---------------------------------------------------------------------------------------------
// Every implementation against the reference.

// An implementation that throws usually throws for every case (its program does not build, say):
// report the first few and give up on the rest of that test, which would only repeat them.
const int kMaxThrows = 3;

std::string describe(const std::exception& e) {
  if (const auto* cl_error = dynamic_cast<const cl::Error*>(&e))
    return std::string("cl::Error ") + cl_error->what() + " (" + std::to_string(cl_error->err()) +
           ")";
  return e.what();
}

// Stride pairs: each stride of {1, 2, -1, -3} for x with a different one for y, and 1, 1.
struct Strides {
  long long incx, incy;
};

const Strides kStrides[] = {{1, 1}, {1, 2}, {2, -1}, {-1, -3}, {-3, 1}};

const long long kLengths[] = {0, 1, 7, 1000, 4097};

// Collects the first few element failures of one comparison and counts the rest.
struct Mismatches {
  int count = 0;
  std::ostringstream first;
  void add(const std::string& what) {
    if (count++ < 3) first << "\n    " << what;
  }
  void report(const std::string& args) const {
    if (count > 0) ADD_FAILURE() << args << ": " << count << " wrong element(s)" << first.str();
  }
};

// Floats in messages: enough digits to tell neighbours apart.
std::string str(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

// The parameter of the device tests: an implementation and, for image sgemm, its form (1x1 or
// 4x4; 0 where there is no choice).
struct ImplForm {
  BlasImpl impl;
  int form;
};

void PrintTo(const ImplForm& p, std::ostream* os) {
  *os << name_of(blas_impl_table(), p.impl);
  if (p.form) *os << " form " << p.form;
}

std::string impl_name(const ::testing::TestParamInfo<ImplForm>& info) {
  std::string name = name_of(blas_impl_table(), info.param.impl);
  if (info.param.form) name += "_form" + std::to_string(info.param.form);
  return name;
}

// Every entry of the name table, so that a new implementation is tested without extra wiring.
std::vector<ImplForm> every_impl() {
  std::vector<ImplForm> all;
  for (const auto& i : blas_impl_table()) all.push_back({i.value, 0});
  return all;
}

std::vector<ImplForm> every_sgemm() {
  std::vector<ImplForm> all;
  for (const auto& i : blas_impl_table()) {
    if (i.value == BlasImpl::image) {
      all.push_back({i.value, 1});
      all.push_back({i.value, 4});
    } else {
      all.push_back({i.value, 0});
    }
  }
  return all;
}

class BlasVectors : public ::testing::TestWithParam<ImplForm> {};

TEST_P(BlasVectors, SaxpyMatchesReference) {
  const BlasImpl impl = GetParam().impl;
  std::mt19937 rng(11);
  int throws = 0;
  for (long long n : kLengths) {
    for (Strides s : kStrides) {
      SaxpyArgs a;
      a.n = n, a.alpha = -1.5f, a.incx = s.incx, a.incy = s.incy;
      validate(a);
      const std::vector<float> x = random_floats(vector_length(n, a.incx), rng);
      const std::vector<float> y0 = random_floats(vector_length(n, a.incy), rng);
      std::vector<float> want = y0;
      saxpy_reference(a, x, want);
      std::vector<float> got = y0;
      std::ostringstream args;
      args << "saxpy impl=" << name_of(blas_impl_table(), impl) << " n=" << n << " incx=" << a.incx
           << " incy=" << a.incy << " alpha=" << a.alpha;
      try {
        saxpy_device(runtime(), impl, a, x, got, 0);
      } catch (const std::exception& e) {
        ADD_FAILURE() << args.str() << ": threw " << describe(e);
        if (++throws == kMaxThrows) FAIL() << "giving up after " << kMaxThrows << " exceptions";
        continue;
      }
      if (got.size() != y0.size()) {
        ADD_FAILURE() << args.str() << ": resized the output to " << got.size() << " floats";
        continue;
      }
      std::vector<bool> touched(y0.size(), false);
      Mismatches bad;
      for (long long i = 0; i < n; ++i) {
        const size_t iy = at(i, n, a.incy);
        touched[iy] = true;
        const double ax = double(a.alpha) * x[at(i, n, a.incx)];
        if (!saxpy_close(got[iy], want[iy], ax, y0[iy]))
          bad.add("element " + std::to_string(i) + " (y[" + std::to_string(iy) + "]): expected " +
                  str(want[iy]) + ", got " + str(got[iy]));
      }
      for (size_t j = 0; j < y0.size(); ++j)
        if (!touched[j] && !same_bits(got[j], y0[j]))
          bad.add("y[" + std::to_string(j) + "] between strides changed from " + str(y0[j]) +
                  " to " + str(got[j]));
      bad.report(args.str());
    }
  }
}

TEST_P(BlasVectors, SdotMatchesReference) {
  const BlasImpl impl = GetParam().impl;
  std::mt19937 rng(12);
  int throws = 0;
  for (long long n : kLengths) {
    for (Strides s : kStrides) {
      SdotArgs a;
      a.n = n, a.incx = s.incx, a.incy = s.incy;
      validate(a);
      const std::vector<float> x = random_floats(vector_length(n, a.incx), rng);
      const std::vector<float> y = random_floats(vector_length(n, a.incy), rng);
      const double want = sdot_reference(a, x, y);
      double sum_abs = 0;
      for (long long i = 0; i < n; ++i)
        sum_abs += std::abs(double(x[at(i, n, a.incx)]) * y[at(i, n, a.incy)]);
      float got = kNaN;
      std::ostringstream args;
      args << "sdot impl=" << name_of(blas_impl_table(), impl) << " n=" << n << " incx=" << a.incx
           << " incy=" << a.incy;
      try {
        sdot_device(runtime(), impl, a, x, y, got, 0);
      } catch (const std::exception& e) {
        ADD_FAILURE() << args.str() << ": threw " << describe(e);
        if (++throws == kMaxThrows) FAIL() << "giving up after " << kMaxThrows << " exceptions";
        continue;
      }
      EXPECT_TRUE(sdot_close(got, want, n, sum_abs))
          << args.str() << ": expected " << str(want) << ", got " << str(got) << " (|diff| "
          << str(std::abs(got - want)) << ", sum |x y| " << str(sum_abs) << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BlasImpls, BlasVectors, ::testing::ValuesIn(every_impl()), impl_name);

// m, n, k from {1, 5, 16, 33}: every value in each place, odd sizes against multiples of 4
// (the image design's 4-float texels, tiles of 16) and the cubes.
struct Mnk {
  long long m, n, k;
};

const Mnk kShapes[] = {{1, 1, 1},   {5, 5, 5},  {16, 16, 16}, {33, 33, 33},
                       {1, 5, 16},  {5, 1, 33}, {16, 33, 1},  {33, 16, 5},
                       {5, 33, 16}, {33, 5, 1}, {16, 1, 33},  {1, 16, 5}};

class BlasSgemm : public ::testing::TestWithParam<ImplForm> {};

TEST_P(BlasSgemm, MatchesReference) {
  const ImplForm impl = GetParam();
  std::mt19937 rng(13);
  int throws = 0;
  for (Mnk shape : kShapes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (long long pad : {0, 3}) {
          for (float beta : {0.0f, 0.7f}) {
            SgemmArgs a;
            a.m = shape.m, a.n = shape.n, a.k = shape.k, a.trans_a = ta, a.trans_b = tb;
            a.alpha = -1.5f, a.beta = beta;
            if (pad) {
              a.lda = (ta ? a.k : a.m) + pad;
              a.ldb = (tb ? a.n : a.k) + pad;
              a.ldc = a.m + pad;
            }
            validate(a);
            const std::vector<float> A = random_floats(matrix_a_length(a), rng);
            const std::vector<float> B = random_floats(matrix_b_length(a), rng);
            // beta = 0: C is only written, so fill it with NaN that must not leak through.
            const std::vector<float> c0 = beta != 0 ? random_floats(matrix_c_length(a), rng)
                                                    : std::vector<float>(matrix_c_length(a), kNaN);
            std::vector<float> want = c0;
            sgemm_reference(a, A, B, want);
            std::vector<float> got = c0;
            std::ostringstream args;
            args << "sgemm impl=" << name_of(blas_impl_table(), impl.impl)
                 << (impl.form ? " form=" + std::to_string(impl.form) : "") << " m=" << a.m
                 << " n=" << a.n << " k=" << a.k << " trans_a=" << ta << " trans_b=" << tb
                 << " lda=" << a.lda << " ldb=" << a.ldb << " ldc=" << a.ldc << " alpha=" << a.alpha
                 << " beta=" << a.beta;
            try {
              sgemm_device(runtime(), impl.impl, std::max(impl.form, 1), a, A, B, got, 0);
            } catch (const std::exception& e) {
              ADD_FAILURE() << args.str() << ": threw " << describe(e);
              if (++throws == kMaxThrows)
                FAIL() << "giving up after " << kMaxThrows << " exceptions";
              continue;
            }
            if (got.size() != c0.size()) {
              ADD_FAILURE() << args.str() << ": resized the output to " << got.size() << " floats";
              continue;
            }
            Mismatches bad;
            for (long long j = 0; j < a.n; ++j) {
              for (long long i = 0; i < a.ldc; ++i) {
                const size_t ic = static_cast<size_t>(i + j * a.ldc);
                const std::string where =
                    "C(" + std::to_string(i) + "," + std::to_string(j) + "): expected ";
                if (i >= a.m) {  // padding rows: untouched
                  if (!same_bits(got[ic], c0[ic]))
                    bad.add(where + str(c0[ic]) + " (untouched), got " + str(got[ic]));
                  continue;
                }
                double magnitude = 0;
                for (long long l = 0; l < a.k; ++l) {
                  const float av = ta ? A[l + i * a.lda] : A[i + l * a.lda];
                  const float bv = tb ? B[j + l * a.ldb] : B[l + j * a.ldb];
                  magnitude += std::abs(double(av) * bv);
                }
                magnitude = std::abs(a.alpha) * magnitude +
                            (beta != 0 ? std::abs(double(beta) * c0[ic]) : 0.0);
                if (!sgemm_close(got[ic], want[ic], a.k, magnitude))
                  bad.add(where + str(want[ic]) + ", got " + str(got[ic]));
              }
            }
            bad.report(args.str());
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BlasImpls, BlasSgemm, ::testing::ValuesIn(every_sgemm()), impl_name);

}  // namespace
}  // namespace blurtool
