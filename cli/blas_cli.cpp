// Options of `blurtool blas` (cxxopts), turned into a BlasBenchOptions for blas_bench.
#include "cli/blas_cli.h"

#include <algorithm>
#include <cmath>
#include <cxxopts.hpp>
#include <iostream>

#include "cli/numbers.h"
#include "cli/subcommand.h"
#include "tools/blas/blas_bench.h"
#include "tools/blas/blas_sizes.h"
#include "tools/blas/blas_tune.h"
#include "util/error.h"

namespace blurtool {

namespace {

float parse_float(const std::string& text, const std::string& option) {
  const double v = parse_decimal(text);
  // Finite as a float too: 1e39 is a finite double but an infinite float.
  if (!std::isfinite(v) || !std::isfinite(static_cast<float>(v)))
    throw UsageError(option + " '" + text + "': must be a finite number (as a float, at most " +
                     "3.4e38 in magnitude)");
  return static_cast<float>(v);
}

}  // namespace

int run_blas_command(int argc, const char* const* argv) {
  cxxopts::Options spec("blurtool blas",
                        "Own OpenCL saxpy, sdot and sgemm (image and buffer designs) against "
                        "CLBlast on one device, checked against a CPU reference.\n");
  spec.custom_help("saxpy|sdot|sgemm [options]  |  blurtool blas --tune [--device D]");
  spec.positional_help("");
  // clang-format off
  spec.add_options()
      ("routine", "saxpy, sdot or sgemm", cxxopts::value<std::string>())
      ("n", "vector length (saxpy, sdot) or columns of C (sgemm), >= 0 (default: the "
            "write-up's sizes, 1024..268435456; sgemm 64..4096 square; capped to fit the "
            "device's and the host's memory, and run while they fit --time-budget)",
       cxxopts::value<std::string>(), "N")
      ("m", "sgemm: rows of C, >= 0 (default: N)", cxxopts::value<std::string>(), "M")
      ("k", "sgemm: inner dimension, >= 0 (default: N)", cxxopts::value<std::string>(), "K")
      ("alpha", "scalar alpha (default: 1.5 for saxpy, 1 for sgemm)",
       cxxopts::value<std::string>(), "A")
      ("beta", "sgemm: scalar beta; 0 means C is not read",
       cxxopts::value<std::string>()->default_value("0"), "B")
      ("incx", "stride of x in elements, not 0; negative walks backwards",
       cxxopts::value<std::string>()->default_value("1"), "INC")
      ("incy", "stride of y in elements, not 0; negative walks backwards",
       cxxopts::value<std::string>()->default_value("1"), "INC")
      ("trans-a", "sgemm: op(A) = A^T")
      ("trans-b", "sgemm: op(B) = B^T")
      ("lda", "sgemm: leading dimension of A, >= its rows (default: its rows)",
       cxxopts::value<std::string>(), "LD")
      ("ldb", "sgemm: leading dimension of B, >= its rows (default: its rows)",
       cxxopts::value<std::string>(), "LD")
      ("ldc", "sgemm: leading dimension of C, >= M (default: M)",
       cxxopts::value<std::string>(), "LD")
      ("impl", "clblast, image, buffer or all", cxxopts::value<std::string>()->default_value("all"),
       "NAME")
      ("runs", "timed repetitions after a warm-up, median reported, >= 1",
       cxxopts::value<std::string>()->default_value("10"), "N")
      ("bench-format", "table, csv or json", cxxopts::value<std::string>()->default_value("table"),
       "FMT")
      ("device", "device index or name part (as for blurtool)", cxxopts::value<std::string>(),
       "N|TEXT")
      ("max-memory", "host memory the run may take, its operands' copies (and on a CPU device "
                     "the operands) included: default sizes are capped to fit it, a larger --n "
                     "is refused; K, M or G for KiB, MiB, GiB (default: a quarter of physical "
                     "memory, at most 4G)", cxxopts::value<std::string>(), "SIZE")
      ("time-budget", "seconds the default sizes may take: each size's time is predicted "
                      "from the last one's, and one predicted to take more than half the time "
                      "left is replaced by a smaller power of two or left out, with a note "
                      "(default " +
                      std::to_string(static_cast<int>(kBlasTimeBudget)) +
                      "; 0: every default size, however long; not with --n)",
       cxxopts::value<std::string>(), "S")
      ("tune", "run CLBlast's tuners (Xaxpy, Xdot, Xgemm) on the device and cache the "
               "parameters for it; later runs add a 'clblast tuned' column")
      ("h,help", "print this help");
  // Run by --tune in a child process, where a crashing kernel costs nothing (not in --help).
  spec.add_options("internal")("check-tuning", "check the cached Xgemm parameters");
  // clang-format on
  spec.parse_positional({"routine"});
  // cxxopts takes one-letter names only as short options: accept BLAS's --n, --m, --k (and
  // --n=V) by rewriting them to -n, -m, -k.
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    for (const char* name : {"n", "m", "k"}) {
      const std::string long_form = std::string("--") + name;
      if (args[i] == long_form) {
        args[i] = std::string("-") + name;
      } else if (args[i].rfind(long_form + "=", 0) == 0) {
        const std::string value = args[i].substr(long_form.size() + 1);
        args[i] = std::string("-") + name;
        args.insert(args.begin() + static_cast<long>(i) + 1, value);
      }
    }
  }
  std::vector<const char*> cargs;
  for (const std::string& a : args) cargs.push_back(a.c_str());
  const cxxopts::ParseResult p =
      parse_subcommand(spec, static_cast<int>(cargs.size()), cargs.data(), "blas");
  if (p.count("help")) {
    // cxxopts shows the one-letter names as short options ("-n N"); the command line takes
    // them as --n, --m, --k, so show that, aligned with the long options.
    std::string help = spec.help({""});
    for (const char* name : {"n N", "m M", "k K"}) {
      const std::string shown = std::string("  -") + name + "     ",
                        meant = std::string("      --") + name;
      if (size_t at = help.find(shown); at != std::string::npos)
        help.replace(at, shown.size(), meant);
    }
    std::cout << help;
    return 0;
  }
  if (!p.unmatched().empty())
    throw UsageError("blas: unexpected argument '" + p.unmatched()[0] +
                     "' (one routine: saxpy, sdot or sgemm)");
  if (p.count("check-tuning")) {
    Runtime rt(select_device(p.count("device") ? p["device"].as<std::string>() : ""));
    return check_clblast_tuning(rt, std::cout);
  }
  if (p.count("tune")) {
    if (p.count("routine")) throw UsageError("blas --tune: give no routine; it tunes all three");
    // --tune takes --device only: any other option would be ignored, so it is refused.
    for (const auto& kv : p.arguments())
      if (kv.key() != "tune" && kv.key() != "device")
        throw UsageError("blas --tune: --" + kv.key() +
                         " does not go with --tune (it takes --device only)");
    Runtime rt(select_device(p.count("device") ? p["device"].as<std::string>() : ""));
    tune_clblast(rt, std::cout);
    return 0;
  }
  if (!p.count("routine")) throw UsageError("blas: name a routine: saxpy, sdot or sgemm");

  BlasBenchOptions o;
  o.routine = parse_named(blas_routine_table(), p["routine"].as<std::string>(), "blas");
  const std::string impl = p["impl"].as<std::string>();
  if (impl == "all") {
    for (const auto& e : blas_impl_table()) o.impls.push_back(e.value);
  } else {
    try {
      o.impls = {parse_named(blas_impl_table(), impl, "--impl")};
    } catch (const UsageError& e) {
      throw UsageError(std::string(e.what()) + " or all");  // all: every implementation
    }
  }
  o.runs = static_cast<int>(parse_whole(p["runs"].as<std::string>(), "--runs"));
  if (o.runs < 1 || o.runs > 100000) throw UsageError("--runs: must be from 1 to 100000");
  const bool gemm = o.routine == BlasRoutine::sgemm;
  if (!gemm)
    for (const char* only : {"m", "k", "beta", "trans-a", "trans-b", "lda", "ldb", "ldc"})
      if (p.count(only)) throw UsageError(std::string("--") + only + " goes with sgemm");
  if (gemm)
    for (const char* only : {"incx", "incy"})
      if (p.count(only)) throw UsageError(std::string("--") + only + " goes with saxpy and sdot");

  auto get = [&](const char* name) {
    return parse_whole(p[name].as<std::string>(), std::string("--") + name);
  };
  if (o.routine == BlasRoutine::saxpy) {
    o.saxpy.incx = get("incx");
    o.saxpy.incy = get("incy");
    o.saxpy.alpha = p.count("alpha") ? parse_float(p["alpha"].as<std::string>(), "--alpha") : 1.5f;
  } else if (o.routine == BlasRoutine::sdot) {
    o.sdot.incx = get("incx");
    o.sdot.incy = get("incy");
    if (p.count("alpha")) throw UsageError("--alpha goes with saxpy and sgemm");
  } else {
    SgemmArgs& a = o.sgemm;
    a.trans_a = p.count("trans-a") > 0;
    a.trans_b = p.count("trans-b") > 0;
    a.alpha = p.count("alpha") ? parse_float(p["alpha"].as<std::string>(), "--alpha") : 1.0f;
    a.beta = parse_float(p["beta"].as<std::string>(), "--beta");
  }
  if (p.count("n")) {
    const long long n = get("n");
    o.sizes = {n};
    if (gemm) {
      SgemmArgs& a = o.sgemm;
      a.n = n;
      a.m = p.count("m") ? get("m") : n;
      a.k = p.count("k") ? get("k") : n;
      if (p.count("lda")) a.lda = get("lda");
      if (p.count("ldb")) a.ldb = get("ldb");
      if (p.count("ldc")) a.ldc = get("ldc");
      // An explicit 0 would mean "tight" to validate(); refuse it like any too-small value.
      for (const char* ld : {"lda", "ldb", "ldc"})
        if (p.count(ld) && get(ld) < 1)
          throw UsageError(std::string("--") + ld + " must be at least 1");
      o.square = false;
    }
    if (p.count("time-budget"))
      throw UsageError("--time-budget goes with the default sizes; --n " + std::to_string(n) +
                       " runs as given");
  } else {
    for (const char* only : {"m", "k", "lda", "ldb", "ldc"})
      if (p.count(only)) throw UsageError(std::string("--") + only + " needs --n");
    o.time_budget_s = kBlasTimeBudget;
    if (p.count("time-budget")) {
      const std::string text = p["time-budget"].as<std::string>();
      o.time_budget_s = parse_decimal(text);
      if (!(o.time_budget_s >= 0 && o.time_budget_s <= 1e6))
        throw UsageError("--time-budget '" + text + "': give seconds from 0 to 1000000");
    }
    // The smallest default size, to validate the arguments with; the sweep itself is chosen
    // once the device is known (blas_default_sizes).
    o.sizes = {gemm ? 64LL : 1024LL};
  }
  // Validate the arguments once up front, so a bad one fails before any device work.
  if (o.routine == BlasRoutine::saxpy) {
    SaxpyArgs a = o.saxpy;
    a.n = o.sizes[0];
    validate(a);
  } else if (o.routine == BlasRoutine::sdot) {
    SdotArgs a = o.sdot;
    a.n = o.sizes[0];
    validate(a);
  } else if (!o.square) {
    SgemmArgs a = o.sgemm;
    validate(a);
  }
  const std::string format = bench_format_option(p);
  if (p.count("max-memory"))
    o.max_memory =
        parse_size(p["max-memory"].as<std::string>(), "--max-memory", 1 << 20, 1ULL << 42);

  Runtime rt(select_device(p.count("device") ? p["device"].as<std::string>() : ""));
  if (!p.count("n")) {
    // The write-up's sizes, capped to what this device and host hold (a 2^28 saxpy takes
    // gigabytes and over a minute on a small machine); an explicit --n is checked by the run.
    std::string note;
    o.sizes = blas_default_sizes(o, blas_memory_limits(rt.device(), o.max_memory), note);
    if (!note.empty())
      std::cerr << "blurtool: note: blas " << name_of(blas_routine_table(), o.routine) << ": "
                << note << "\n";
  }
  BlasPrinter printer(o.routine, rt.device().name + " (" + rt.device().platform + ")", o.runs,
                      format, std::cout);
  const std::vector<BlasRow> rows = run_blas_bench(rt, o, [&](const BlasRow& row) {
    // A size asked for with --n that fits nowhere is a bad argument, as CLBlast would say; the
    // default sweep instead keeps such sizes as rows marked skipped.
    if (p.count("n") && !row.cells.empty() &&
        std::all_of(row.cells.begin(), row.cells.end(),
                    [](const BlasCell& c) { return !c.skipped.empty(); }))
      throw UsageError(row.cells[0].skipped);
    printer.row(row);
  });
  printer.finish();
  for (const BlasRow& r : rows)
    for (const BlasCell& c : r.cells)
      if (c.skipped.empty() && !c.ok) {
        std::cerr << "blurtool: blas " << name_of(blas_routine_table(), o.routine) << " " << r.size
                  << ": " << c.impl << " is outside tolerance (relative error " << c.error << ")\n";
        return 1;
      }
  return 0;
}

}  // namespace blurtool
