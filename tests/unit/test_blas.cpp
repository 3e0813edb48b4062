// The BLAS comparison on the host: validate() refuses what CLBlast refuses and fills the tight
// leading dimensions, and the CPU references give hand-computed answers. Every implementation
// against these references on the device: tests/device/test_blas.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "tools/blas/blas.h"
#include "tools/blas/blas_sizes.h"
#include "util/error.h"

namespace blurtool {
namespace {

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
  EXPECT_EQ(refusal(s), "n -1: must be 0 or more");
  s = SaxpyArgs{};
  s.n = 4;
  s.incx = 0;
  EXPECT_EQ(refusal(s), "incx 0: must not be 0");
  s.incx = -2;
  s.incy = 0;
  EXPECT_TRUE(has(refusal(s), "incy 0")) << refusal(s);
  s.incy = -1;
  EXPECT_EQ(refusal(s), "");
  s.n = 0;  // an empty vector is fine
  EXPECT_EQ(refusal(s), "");

  SdotArgs d;
  d.n = -5;
  EXPECT_TRUE(has(refusal(d), "n -5")) << refusal(d);
  d.n = 3;
  d.incx = 0;
  EXPECT_TRUE(has(refusal(d), "incx 0")) << refusal(d);
  d.incx = 3;
  d.incy = 0;
  EXPECT_TRUE(has(refusal(d), "incy 0")) << refusal(d);
  d.incy = -7;
  EXPECT_EQ(refusal(d), "");
}

TEST(BlasValidate, NegativeSizesRefused) {
  for (const char* which : {"m", "n", "k"}) {
    SgemmArgs g;
    g.m = g.n = g.k = 4;
    (which[0] == 'm' ? g.m : which[0] == 'n' ? g.n : g.k) = -2;
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
      EXPECT_TRUE(has(refusal(bad), "lda " + std::to_string(a_rows - 1) + ": must be at least " +
                                        std::to_string(a_rows)))
          << where << ": " << refusal(bad);
      bad = g;
      bad.ldb = b_rows - 1;
      EXPECT_TRUE(has(refusal(bad), "ldb " + std::to_string(b_rows - 1) + ": must be at least " +
                                        std::to_string(b_rows)))
          << where << ": " << refusal(bad);
      bad = g;
      bad.ldc = m - 1;
      EXPECT_TRUE(has(refusal(bad), "ldc " + std::to_string(m - 1) + ": must be at least 5"))
          << where << ": " << refusal(bad);
      // The other operand's rows are not enough (a check joined with || would accept these).
      bad = g;
      bad.lda = ta ? m : k;
      if (bad.lda < a_rows) {
        EXPECT_TRUE(has(refusal(bad), "lda")) << where;
      }
      bad = g;
      bad.ldb = tb ? k : n;
      if (bad.ldb < b_rows) {
        EXPECT_TRUE(has(refusal(bad), "ldb")) << where;
      }
      bad = g;
      bad.lda = -1;
      EXPECT_TRUE(has(refusal(bad), "lda -1")) << where;

      SgemmArgs ok = g;
      ok.lda = a_rows, ok.ldb = b_rows, ok.ldc = m;
      EXPECT_EQ(refusal(ok), "") << where;
    }
  }
  SgemmArgs g;
  g.m = 5, g.n = 2, g.k = 5, g.lda = 3;
  EXPECT_EQ(refusal(g), "lda 3: must be at least 5 (the rows of A, m without trans_a, k with it)");
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

// The default sizes of every routine are capped to the device's memory, its largest allocation
// and the host's memory, each in turn, and every size chosen fits.
TEST(BlasSizes, DefaultsAreCappedToEachLimit) {
  const std::uint64_t huge = 1ULL << 40, MiB = 1ULL << 20;
  auto limits = [](std::uint64_t device, std::uint64_t max_alloc, std::uint64_t host, bool shared) {
    BlasMemoryLimits l;
    l.device = device;
    l.max_alloc = max_alloc;
    l.host = host;
    l.shared = shared;
    l.host_source = "test";
    return l;
  };
  struct Case {
    BlasRoutine routine;
    BlasMemoryLimits limits;
    std::vector<long long> sizes;
    std::string note;  // part of the note; "" for none
  };
  const std::vector<Case> cases = {
      {BlasRoutine::saxpy,
       limits(huge, huge, huge, false),
       {1024, 1048576, 67108864, 268435456},
       ""},
      // x and y, 8n bytes, in half the device's memory.
      {BlasRoutine::saxpy,
       limits(64 * MiB, huge, huge, false),
       {1024, 1048576, 8388608},
       "capped to 8388608 (from 67108864) to fit the device's memory"},
      // One vector, 4n bytes, in one allocation.
      {BlasRoutine::sdot,
       limits(huge, 16 * MiB, huge, false),
       {1024, 1048576, 4194304},
       "capped to 4194304 (from 67108864) to fit the device's largest allocation"},
      // saxpy's host: x, y, its reference and its result, 16n; shared: the operands too, 24n.
      {BlasRoutine::saxpy,
       limits(huge, huge, 48 * MiB, false),
       {1024, 1048576, 2097152},
       "capped to 2097152 (from 67108864) to fit the host's memory (48 MiB: test)"},
      {BlasRoutine::saxpy,
       limits(huge, huge, 48 * MiB, true),
       {1024, 1048576, 2097152},
       "to fit the host's memory"},
      {BlasRoutine::saxpy,
       limits(huge, huge, 47 * MiB, true),
       {1024, 1048576},
       "capped to 1048576 (from 67108864)"},
      // sgemm's host: A, B and three C, 20 n^2 bytes.
      {BlasRoutine::sgemm,
       limits(huge, huge, 20 * MiB, false),
       {64, 512, 1024},
       "capped to 1024 (from 2048) to fit the host's memory"},
      {BlasRoutine::sgemm,
       limits(huge, huge, 1 * MiB, false),
       {64, 128},
       "capped to 128 (from 512)"}};
  for (const Case& c : cases) {
    BlasBenchOptions o;
    o.routine = c.routine;
    SCOPED_TRACE(std::string(name_of(blas_routine_table(), c.routine)) + " " + c.note);
    std::string note = "stale";
    EXPECT_EQ(blas_default_sizes(o, c.limits, note), c.sizes);
    for (long long size : c.sizes) EXPECT_EQ(blas_misfit(o, size, c.limits), "") << size;
    if (c.note.empty()) {
      EXPECT_EQ(note, "");
    } else {
      EXPECT_NE(note.find(c.note), std::string::npos) << note;
      // Capped to the largest power of two that fits.
      EXPECT_NE(blas_misfit(o, c.sizes.back() * 2, c.limits), "") << c.sizes.back() * 2;
    }
  }
}

// The default sweep within a time budget: the first size always runs; a later one runs when its
// time, predicted in proportion to the work from the last size's, is at most half what is left,
// else the largest power of two below it that is, else the sweep ends; each with its note (the
// options are spelled by the front end, so the notes are matched up to them here).
TEST(BlasSizes, TheDefaultSweepKeepsToItsTimeBudget) {
  const std::vector<long long> vectors = {1024, 1048576, 67108864, 134217728};
  const std::vector<long long> squares = {64, 512, 1024, 2048, 4096};
  struct Case {
    BlasRoutine routine;
    long long last;
    double last_s, spent_s, budget_s;
    long long next;
    std::string note;  // part of the note; "" for none
  };
  const std::vector<Case> cases = {
      // Nothing measured yet: the smallest size, whatever the budget.
      {BlasRoutine::saxpy, 0, 0, 0, 0.001, 1024, ""},
      // 1024 in 1 ms: 2^20 would take 1.02 s, within half of 4.9 s.
      {BlasRoutine::saxpy, 1024, 0.001, 0.1, 5, 1048576, ""},
      // 2^20 in 0.3 s: 2^26 would take 19 s; 2^22 (1.2 s) is the largest within half of 4.4 s.
      {BlasRoutine::sdot, 1048576, 0.3, 0.6, 5, 4194304,
       "4194304 in place of 67108864, which would take about 19 s on this device, more than half "
       "the 4.4 s left of the sweep's time budget (5 s, "},
      // Then 2^26 would take 4.8 s, more than half of 3.2 s, and no power of two between fits.
      {BlasRoutine::sdot, 4194304, 1.2, 1.8, 5, 0,
       "sizes from 67108864 up left out: 67108864 would take about 19 s on this device, more "
       "than half the 3.2 s left of the sweep's time budget (5 s, "},
      // sgemm's work is n^3: 64 in 0.1 s makes 512 51 s and 128 0.8 s.
      {BlasRoutine::sgemm, 64, 0.1, 0.1, 5, 128,
       " 128 in place of 512, which would take about 51 s"},
      {BlasRoutine::sgemm, 64, 0.1, 0.1, 1, 0, "sizes from 512 up left out"},
      // The budget spent: nothing more, even a size that would take no time.
      {BlasRoutine::saxpy, 1024, 0, 6, 5, 0, "more than half the 0.0 s left"},
      // The last size done: the sweep ends without a note.
      {BlasRoutine::saxpy, 134217728, 1, 1, 1000, 0, ""},
      {BlasRoutine::sgemm, 4096, 1, 1, 1000, 0, ""}};
  for (const Case& c : cases) {
    BlasBenchOptions o;
    o.routine = c.routine;
    const BlasSweepClock clock{c.last, c.last_s, c.spent_s, c.budget_s};
    SCOPED_TRACE(std::string(name_of(blas_routine_table(), c.routine)) + " after " +
                 std::to_string(c.last));
    std::string note = "stale";
    EXPECT_EQ(blas_next_size(o, c.routine == BlasRoutine::sgemm ? squares : vectors, clock, note),
              c.next);
    if (c.note.empty())
      EXPECT_EQ(note, "");
    else
      EXPECT_NE(note.find(c.note), std::string::npos) << note;
  }
}

}  // namespace
}  // namespace blurtool
