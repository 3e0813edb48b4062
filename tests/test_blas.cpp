// The BLAS comparison's tests: validate() refuses what CLBlast refuses and fills the tight
// leading dimensions; the CPU references give hand-computed answers; and every implementation
// (every entry of blas_impl_table(), both image sgemm forms) matches the reference over odd and
// power-of-two sizes, negative and unequal strides, every transposition, tight and padded
// leading dimensions, and beta = 0 on a C full of NaN, leaving untouched memory untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tools/blas/blas.h"
#include "util/error.h"
#include "tests/test_support.h"

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

const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Untouched memory must keep its exact bits (NaN included).
bool same_bits(float a, float b) {
  std::uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

// Offset of element i of a strided vector (BLAS: negative strides walk from the end).
size_t at(long long i, long long n, long long inc) {
  return static_cast<size_t>(inc > 0 ? i * inc : (n - 1 - i) * -inc);
}

// The message of the UsageError that validate() throws for `args` ("" if none).
template <class Args>
std::string refusal(Args args) {
  try {
    validate(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// validate()

TEST(BlasValidate, VectorArgumentsRefusedNamingTheOption) {
  SaxpyArgs s;
  s.n = -1;
  EXPECT_EQ(refusal(s), "--n -1: must be 0 or more");
  s = SaxpyArgs{};
  s.n = 4;
  s.incx = 0;
  EXPECT_EQ(refusal(s), "--incx 0: must not be 0");
  s.incx = -2;
  s.incy = 0;
  EXPECT_TRUE(has(refusal(s), "--incy 0")) << refusal(s);
  s.incy = -1;
  EXPECT_EQ(refusal(s), "");
  s.n = 0;  // an empty vector is fine
  EXPECT_EQ(refusal(s), "");

  SdotArgs d;
  d.n = -5;
  EXPECT_TRUE(has(refusal(d), "--n -5")) << refusal(d);
  d.n = 3;
  d.incx = 0;
  EXPECT_TRUE(has(refusal(d), "--incx 0")) << refusal(d);
  d.incx = 3;
  d.incy = 0;
  EXPECT_TRUE(has(refusal(d), "--incy 0")) << refusal(d);
  d.incy = -7;
  EXPECT_EQ(refusal(d), "");
}

TEST(BlasValidate, NegativeSizesRefused) {
  for (const char* which : {"--m", "--n", "--k"}) {
    SgemmArgs g;
    g.m = g.n = g.k = 4;
    (which[2] == 'm' ? g.m : which[2] == 'n' ? g.n : g.k) = -2;
    EXPECT_EQ(refusal(g), std::string(which) + " -2: must be 0 or more");
  }
}

// Every leading dimension, for every transposition: one short of its rows is refused (naming
// the option), exactly its rows is accepted. m, n, k differ so that the wrong rows would show.
TEST(BlasValidate, LeadingDimensionsRefusedBelowTheirRows) {
  const long long m = 5, n = 7, k = 3;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SgemmArgs g;
      g.m = m, g.n = n, g.k = k, g.trans_a = ta, g.trans_b = tb;
      const long long a_rows = ta ? k : m, b_rows = tb ? n : k;
      const std::string where = std::string(ta ? "T" : "N") + (tb ? "T" : "N");

      SgemmArgs bad = g;
      bad.lda = a_rows - 1;
      EXPECT_TRUE(has(refusal(bad), "--lda " + std::to_string(a_rows - 1) + ": must be at least " +
                                        std::to_string(a_rows)))
          << where << ": " << refusal(bad);
      bad = g;
      bad.ldb = b_rows - 1;
      EXPECT_TRUE(has(refusal(bad), "--ldb " + std::to_string(b_rows - 1) + ": must be at least " +
                                        std::to_string(b_rows)))
          << where << ": " << refusal(bad);
      bad = g;
      bad.ldc = m - 1;
      EXPECT_TRUE(has(refusal(bad), "--ldc " + std::to_string(m - 1) + ": must be at least 5"))
          << where << ": " << refusal(bad);
      // The other operand's rows are not enough (a check joined with || would accept these).
      bad = g;
      bad.lda = ta ? m : k;
      if (bad.lda < a_rows) {
        EXPECT_TRUE(has(refusal(bad), "--lda")) << where;
      }
      bad = g;
      bad.ldb = tb ? k : n;
      if (bad.ldb < b_rows) {
        EXPECT_TRUE(has(refusal(bad), "--ldb")) << where;
      }
      bad = g;
      bad.lda = -1;
      EXPECT_TRUE(has(refusal(bad), "--lda -1")) << where;

      SgemmArgs ok = g;
      ok.lda = a_rows, ok.ldb = b_rows, ok.ldc = m;
      EXPECT_EQ(refusal(ok), "") << where;
    }
  }
  SgemmArgs g;
  g.m = 5, g.n = 2, g.k = 5, g.lda = 3;
  EXPECT_EQ(refusal(g),
            "--lda 3: must be at least 5 (the rows of A, m without --trans-a, k with it)");
}

TEST(BlasValidate, FillsTightLeadingDimensions) {
  SgemmArgs g;
  g.m = 5, g.n = 7, g.k = 3;
  validate(g);
  EXPECT_EQ(g.lda, 5);
  EXPECT_EQ(g.ldb, 3);
  EXPECT_EQ(g.ldc, 5);

  g = SgemmArgs{};
  g.m = 5, g.n = 7, g.k = 3, g.trans_a = g.trans_b = true;
  validate(g);
  EXPECT_EQ(g.lda, 3);
  EXPECT_EQ(g.ldb, 7);
  EXPECT_EQ(g.ldc, 5);

  // Empty matrices still get leading dimensions of at least 1.
  g = SgemmArgs{};
  validate(g);
  EXPECT_EQ(g.lda, 1);
  EXPECT_EQ(g.ldb, 1);
  EXPECT_EQ(g.ldc, 1);

  // Explicit ones are kept.
  g = SgemmArgs{};
  g.m = 2, g.n = 2, g.k = 2, g.lda = 9, g.ldb = 8, g.ldc = 7;
  validate(g);
  EXPECT_EQ(g.lda, 9);
  EXPECT_EQ(g.ldb, 8);
  EXPECT_EQ(g.ldc, 7);
}

TEST(BlasReference, OperandLengths) {
  EXPECT_EQ(vector_length(0, 3), 0u);
  EXPECT_EQ(vector_length(1, -3), 1u);
  EXPECT_EQ(vector_length(4, -3), 10u);
  EXPECT_EQ(vector_length(4, 1), 4u);
  SgemmArgs g;
  g.m = 2, g.n = 3, g.k = 4, g.lda = 5, g.ldb = 6, g.ldc = 7;
  EXPECT_EQ(matrix_a_length(g), 5u * 4);
  EXPECT_EQ(matrix_b_length(g), 6u * 3);
  EXPECT_EQ(matrix_c_length(g), 7u * 3);
  g.trans_a = g.trans_b = true;
  EXPECT_EQ(matrix_a_length(g), 5u * 2);
  EXPECT_EQ(matrix_b_length(g), 6u * 4);
}

// ---------------------------------------------------------------------------------------------
// The references against hand-computed answers.

TEST(BlasReference, SaxpyWithStrides) {
  SaxpyArgs a;
  a.n = 3, a.alpha = 2, a.incx = 2, a.incy = -1;
  const std::vector<float> x = {1, 100, 2, 100, 3};  // elements 1, 2, 3
  std::vector<float> y = {10, 20, 30};               // elements 30, 20, 10 (walked from the end)
  saxpy_reference(a, x, y);
  EXPECT_EQ(y, (std::vector<float>{16, 24, 32}));

  // Gaps between strided elements stay as they were.
  a.incx = 1, a.incy = 2;
  std::vector<float> y2 = {1, -7, 1, -7, 1};
  saxpy_reference(a, {1, 2, 3}, y2);
  EXPECT_EQ(y2, (std::vector<float>{3, -7, 5, -7, 7}));
}

TEST(BlasReference, Sdot) {
  SdotArgs a;
  a.n = 3;
  EXPECT_EQ(sdot_reference(a, {1, 2, 3}, {4, 5, 6}), 32);
  a.incx = -2;
  EXPECT_EQ(sdot_reference(a, {1, 9, 2, 9, 3}, {4, 5, 6}), 3 * 4 + 2 * 5 + 1 * 6);
  a.n = 0;
  EXPECT_EQ(sdot_reference(a, {}, {}), 0);
}

// op(A) = [1 2 3; 4 5 6], op(B) = [7 8; 9 10; 11 12], op(A) op(B) = [58 64; 139 154], stored
// every way. Padding holds NaN, so reading it shows; C's third row (ldc = 3) must stay NaN.
TEST(BlasReference, SgemmEveryTransposition) {
  const float p = kNaN;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SgemmArgs a;
      a.m = 2, a.n = 2, a.k = 3, a.trans_a = ta, a.trans_b = tb;
      a.lda = 4;  // padded either way (rows: 2 or 3)
      a.ldb = tb ? 2 : 4;
      a.ldc = 3;
      const std::vector<float> A = ta ? std::vector<float>{1, 2, 3, p, 4, 5, 6, p}
                                      : std::vector<float>{1, 4, p, p, 2, 5, p, p, 3, 6, p, p};
      const std::vector<float> B = tb ? std::vector<float>{7, 8, 9, 10, 11, 12}
                                      : std::vector<float>{7, 9, 11, p, 8, 10, 12, p};
      std::vector<float> C(6, kNaN);
      sgemm_reference(a, A, B, C);  // beta = 0: the NaN in C must not matter
      const std::string where = std::string(ta ? "T" : "N") + (tb ? "T" : "N");
      EXPECT_EQ(C[0], 58) << where;
      EXPECT_EQ(C[1], 139) << where;
      EXPECT_EQ(C[3], 64) << where;
      EXPECT_EQ(C[4], 154) << where;
      EXPECT_TRUE(same_bits(C[2], kNaN) && same_bits(C[5], kNaN)) << where;

      a.alpha = 2, a.beta = -1;
      std::vector<float> C2 = {1, 2, -9, 3, 4, -9};
      sgemm_reference(a, A, B, C2);
      EXPECT_EQ(C2, (std::vector<float>{115, 276, -9, 125, 304, -9})) << where;
    }
  }
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
