// End-to-end tests of `blurtool blas`: tables and JSON, usage errors, and the cached CLBlast
// tuning. Each test runs the real binary (fork + execve, no shell, so paths with spaces need no
// quoting) in its own temporary directory, whose name holds spaces on purpose, with stdout and
// stderr captured to files (support/cli_fixture.h). Successful runs are decoded and compared with
// the exact CPU reference; failures must give the documented exit status (1 file or device, 2
// usage), a stderr line naming the file or option at fault, and leave the output directory exactly
// as it was (no output, no hidden .NAME.blurtool-XXXXXX temporary file).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cl_runtime.h"
#include "tests/support/cli_fixture.h"
#include "tools/blas/blas.h"
#include "tools/blas/blas_tune.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// `blurtool blas`: the table names every implementation and is within tolerance (exit 0); the
// JSON has a row per size with every implementation; bad BLAS arguments are usage errors that
// name the argument, as CLBlast would refuse them.
TEST_F(Cli, BlasTablesAndJson) {
  Result r = run({"blas", "sgemm", "--n", "33", "--m", "17", "--k", "9", "--trans-b", "--ldb", "40",
                  "--beta", "0.5", "--runs", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& impl : blas_impl_table())
    EXPECT_NE(r.out.find(impl.name), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("image 4x4"), std::string::npos) << r.out;
  r = run({"blas", "sdot", "--n=1000", "--incx", "-2", "--incy", "3", "--runs", "1",
           "--bench-format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["size"], "1000");
  ASSERT_EQ(j["rows"][0]["impls"].size(), blas_impl_table().size());
  for (const auto& cell : j["rows"][0]["impls"]) EXPECT_TRUE(cell["ok"].get<bool>()) << cell.dump();
  // An empty product compares nothing: no "+100.0%" for own kernels that never ran.
  for (const std::vector<std::string>& empty :
       {std::vector<std::string>{"blas", "saxpy", "--n", "0", "--runs", "1"},
        std::vector<std::string>{"blas", "sgemm", "--m", "0", "--n", "4", "--k", "4", "--runs",
                                 "1"}}) {
    r = run(empty);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find('%'), std::string::npos) << r.out;
  }
}

TEST_F(Cli, BlasUsageErrorsNameTheArgument) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"blas"}, {"saxpy, sdot or sgemm"}},
      {{"blas", "sgemv"}, {"sgemv", "sgemm"}},
      {{"blas", "saxpy", "--n", "-1"}, {"--n -1"}},
      {{"blas", "saxpy", "--n", "10", "--incx", "0"}, {"--incx 0"}},
      {{"blas", "sdot", "--n", "10", "--incy", "0"}, {"--incy 0"}},
      {{"blas", "sgemm", "--n", "10", "--lda", "3"}, {"--lda 3", "at least 10"}},
      {{"blas", "sgemm", "--n", "10", "--k", "4", "--trans-b", "--ldb", "5"}, {"--ldb 5"}},
      {{"blas", "sgemm", "--n", "10", "--m", "12", "--ldc", "11"}, {"--ldc 11"}},
      {{"blas", "saxpy", "--n", "10", "--impl", "cublas"},
       {"--impl 'cublas'", "clblast", "or all", "(see blurtool blas --help)"}},
      {{"blas", "saxpy", "--n", "10", "--lda", "4"}, {"--lda", "sgemm"}},
      {{"blas", "saxpy", "--n", "10", "--time-budget", "1"},
       {"--time-budget goes with the default sizes; --n 10 runs as given"}},
      {{"blas", "sdot", "--time-budget", "-1"},
       {"--time-budget '-1': give seconds from 0 to 1000000"}},
      {{"blas", "sgemm", "--time-budget", "soon"}, {"--time-budget 'soon'"}},
      // 2^40 floats (4 TiB) fit no device.
      {{"blas", "saxpy", "--n", "1099511627776", "--runs", "1"}, {"--n 1099511627776", "MiB"}},
      // Sizes whose products overflow 64 bits (they crashed the program), named by option.
      {{"blas", "saxpy", "--n", "9", "--incx", "2305843009213693953"},
       {"--incx 2305843009213693953"}},
      {{"blas", "sdot", "--n", "3", "--incy", "-9223372036854775808"},
       {"--incy -9223372036854775808"}},
      {{"blas", "saxpy", "--n", "2000", "--incx", "1152921504606847"},
       {"--incx 1152921504606847 with --n 2000", "2^60"}},
      {{"blas", "sgemm", "--n", "4", "--ldc", "4611686018427387905"},
       {"--ldc 4611686018427387905 with --n 4", "C"}},
      {{"blas", "sgemm", "--n", "4", "--m", "4611686018427387905", "--k", "4", "--impl", "buffer"},
       {"--m 4611686018427387905 with --k 4", "A"}},
      // Too large for the device, not for 64 bits: the operand and its options are named.
      {{"blas", "sgemm", "--n", "4", "--lda", "4294967297", "--runs", "1"},
       {"A (--lda 4294967297 x --k 4)", "MiB"}},
      {{"blas", "saxpy", "--n", "3", "--incx", "4611686018427", "--runs", "1"},
       {"x (--n 3, --incx 4611686018427)", "MiB"}},
      // Finite as a float: 1e39 is not.
      {{"blas", "saxpy", "--n", "4", "--alpha", "1e39"}, {"--alpha '1e39'", "finite"}},
      {{"blas", "saxpy", "--n", "10", "extra"}, {"unexpected argument 'extra'"}},
      {{"blas", "sdot", "--n", "2305843009213693952"},
       {"--n 2305843009213693952: x would span more than 2^60"}},
      {{"blas", "sgemm", "--n", "10", "--trans-a=yes"}, {"'--trans-a=yes'", "switch"}},
      // --tune takes --device only (it ignored the others and tuned for minutes); a device that
      // does not exist keeps a regression from starting the tuners.
      {{"blas", "--tune", "--n", "4", "--device", "no such device"}, {"--n", "--tune"}}};
  for (const auto& [args, parts] : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_failure(run(args), 2, parts, Files{});
  }
}

// With no --n, the sizes are the write-up's capped to what the host (and device) hold, and the
// run says so; an explicit size beyond that is a usage error naming the option. --max-memory
// sets a small host budget, so that this runs in moments (PoCL: the device's operands are host
// memory too, 24 bytes a saxpy element: 2097152 is the largest power of two in 64 MiB);
// --time-budget 0 runs every size that fits, however long.
TEST_F(Cli, BlasDefaultSizesAreCappedToTheMemory) {
  Result r = run({"blas", "saxpy", "--max-memory", "64M", "--runs", "1", "--impl", "buffer",
                  "--time-budget", "0", "--bench-format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("blurtool: note: blas saxpy: --n capped to 2097152 (from 67108864) to fit "
                       "the host's memory (64 MiB: --max-memory"),
            std::string::npos)
      << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::vector<std::string> sizes;
  for (const auto& row : j["rows"]) sizes.push_back(row["size"]);
  EXPECT_EQ(sizes, (std::vector<std::string>{"1024", "1048576", "2097152"}));
  for (const std::string& size : sizes) EXPECT_LE(std::stoll(size) * 24, 64LL << 20) << size;

  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"blas", "saxpy", "--n", "4194304", "--max-memory", "64M", "--runs", "1"},
       {"saxpy 4194304: needs 96 MiB of host memory, more than 64 MiB (--max-memory",
        "give a smaller --n"}},
      {{"blas", "sgemm", "--n", "1024", "--max-memory", "16M", "--runs", "1"},
       {"sgemm 1024x1024x1024: needs 32 MiB of host memory", "give a smaller --m, --n or --k"}},
      {{"blas", "sdot", "--max-memory", "12"}, {"--max-memory"}}};
  for (const auto& [args, parts] : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    expect_failure(run(args), 2, parts, Files{});
  }
}

// `blurtool blas saxpy` with no sizes took minutes on a 2-core CPU device and printed nothing
// until the end. Its default sweep now keeps to a time budget (5 s, --time-budget), saying
// what it left out, and each size's row comes out as soon as it is measured: the first row is
// in the output while the legend that ends the table is not yet.
TEST_F(Cli, BlasDefaultSweepKeepsToItsTimeBudgetAndPrintsEachRowWhenMeasured) {
  const fs::path printed = root_ / "stdout.txt";  // where run_blurtool sends stdout
  const std::string legend = "own vs CLBl.: kernel-time improvement";
  bool first_row_alone = false;
  Spawn spawn;
  spawn.while_running = [&](pid_t pid) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
      const std::string out = read_file(printed.string());
      if (out.find("\n  1024 ") != std::string::npos) {
        first_row_alone = out.find(legend) == std::string::npos;
        break;
      }
      siginfo_t info = {};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
          info.si_pid == pid)
        break;  // it ended
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    kill_after(std::chrono::seconds(60))(pid);  // it hung
  };
  const Result r = run_blurtool({"blas", "saxpy"}, root_, root_, spawn);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(first_row_alone) << "the rows came out together at the end:\n" << r.out;
  EXPECT_NE(r.out.find(legend), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("of the sweep's time budget (5 s, --time-budget)"), std::string::npos)
      << r.err;

  // A budget spent by the first size: the sweep ends there, and the note says with what.
  const Result small = run({"blas", "sgemm", "--impl", "buffer", "--runs", "1", "--time-budget",
                            "0.001", "--bench-format", "json"});
  ASSERT_EQ(small.status, 0) << small.err;
  const nlohmann::json j = nlohmann::json::parse(small.out);
  ASSERT_EQ(j["rows"].size(), 1u) << small.out;
  EXPECT_EQ(j["rows"][0]["size"], "64x64x64");
  EXPECT_NE(small.err.find("blurtool: note: blas sgemm: sizes from 512 up left out: 512 would "
                           "take about "),
            std::string::npos)
      << small.err;
  EXPECT_NE(small.err.find("(0.001 s, --time-budget); --time-budget 0 runs them, --n one size"),
            std::string::npos)
      << small.err;
}

// Parameters cached by `blurtool blas --tune` are applied on later runs as a "clblast tuned"
// column; a damaged cache is an error naming the file. (The tuners themselves take over ten
// minutes on this CPU device, so the cache here is written by hand, with parameters any
// device accepts.)
TEST_F(Cli, BlasAppliesCachedClblastTuning) {
  const fs::path cache_dir = out_ / "cache";
  fs::create_directories(cache_dir);
  ::setenv("BLURTOOL_CACHE_DIR", cache_dir.c_str(), 1);
  const std::string cache = clblast_tuning_path(select_device(""));
  write_file(cache, R"({"kernels": {"Xaxpy": {"VW": 1, "WGS": 64, "WPT": 1}}})");
  Result r = run({"blas", "saxpy", "--n", "5000", "--runs", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("clblast tuned"), std::string::npos) << r.out;
  // A kernel that --tune refused gives no tuned column (it would repeat the defaults), and
  // says why on stderr.
  write_file(cache, R"({"kernels": {"Xaxpy": {"VW": 1, "WGS": 64, "WPT": 1}},
      "refused": {"Xgemm": {"parameters": {}, "why": "wrong results at 2048x2048x2048"}}})");
  r = run({"blas", "sgemm", "--n", "40", "--runs", "1", "--impl", "clblast"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("clblast tuned"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("refused the tuned Xgemm (wrong results at 2048"), std::string::npos)
      << r.err;
  write_file(cache, "not json");
  r = run({"blas", "saxpy", "--n", "5000", "--runs", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(cache), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--tune"), std::string::npos) << r.err;
  ::unsetenv("BLURTOOL_CACHE_DIR");
}

}  // namespace
}  // namespace blurtool
