// The `blurtool blas` benchmark driver and its tables (see blas_bench.h).
#include "tools/blas/blas_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "tools/blas/blas_impl.h"
#include "tools/blas/blas_sizes.h"
#include "tools/blas/blas_tune.h"
#include "util/error.h"

namespace blurtool {

double blas_tolerance(BlasRoutine routine, long long n_or_k) {
  const double scale = std::sqrt(static_cast<double>(std::max(1LL, n_or_k)));
  switch (routine) {
    case BlasRoutine::saxpy:
      return 1e-4;
    case BlasRoutine::sdot:
    case BlasRoutine::sgemm:
      break;
  }
  return 1e-5 * scale;
}

namespace {

std::vector<float> random_floats(size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& f : v) f = u(rng);
  return v;
}

// Largest relative error of saxpy's y against the reference, per element.
double saxpy_error(const SaxpyArgs& a, const std::vector<float>& x, const std::vector<float>& y0,
                   const std::vector<float>& want, const std::vector<float>& got) {
  double worst = 0;
  for (long long i = 0; i < a.n; ++i) {
    const size_t xi = a.incx > 0 ? i * a.incx : (a.n - 1 - i) * -a.incx;
    const size_t yi = a.incy > 0 ? i * a.incy : (a.n - 1 - i) * -a.incy;
    const double scale = std::fabs(a.alpha * x[xi]) + std::fabs(y0[yi]) + 1e-30;
    const double error = std::fabs(double(got[yi]) - want[yi]) / scale;
    // A NaN or infinite result is an infinite error (std::max would pass a NaN over).
    if (!std::isfinite(got[yi]) || !std::isfinite(error))
      return std::numeric_limits<double>::infinity();
    worst = std::max(worst, error);
  }
  for (size_t i = 0; i < got.size(); ++i)  // elements between the strides stay as they were
    if (i % std::llabs(a.incy) != 0 && got[i] != want[i])
      return std::numeric_limits<double>::infinity();
  return worst;
}

// Relative error of sgemm at element (i, j) of C: against |alpha| sum |a b| + |beta c|.
double sgemm_element_error(const SgemmArgs& a, const std::vector<float>& A,
                           const std::vector<float>& B, const std::vector<float>& c0, float got,
                           long long i, long long j) {
  double sum = 0, mag = 0;
  for (long long l = 0; l < a.k; ++l) {
    const double av = a.trans_a ? A[l + i * a.lda] : A[i + l * a.lda];
    const double bv = a.trans_b ? B[j + l * a.ldb] : B[l + j * a.ldb];
    sum += av * bv;
    mag += std::fabs(av * bv);
  }
  const double c = a.beta != 0 ? c0[i + j * a.ldc] : 0.0;
  const double want = a.alpha * sum + a.beta * c;
  const double scale = std::fabs(a.alpha) * mag + std::fabs(a.beta * c) + 1e-30;
  const double err = std::fabs(got - want) / scale;
  return std::isfinite(got) ? err : std::numeric_limits<double>::infinity();
}

// Every element of C for small products, otherwise 4096 pseudo-random ones and the corners.
double sgemm_error(const SgemmArgs& a, const std::vector<float>& A, const std::vector<float>& B,
                   const std::vector<float>& c0, const std::vector<float>& got) {
  // Rows m .. ldc - 1 of each column (the padding of --ldc) stay as they were (NaN with beta 0).
  for (long long j = 0; j < a.n; ++j)
    for (long long i = a.m; i < a.ldc; ++i) {
      const size_t at = static_cast<size_t>(i + j * a.ldc);
      if (!(got[at] == c0[at] || (std::isnan(got[at]) && std::isnan(c0[at]))))
        return std::numeric_limits<double>::infinity();
    }
  double worst = 0;
  if (a.m * a.n * std::max(1LL, a.k) <= (1LL << 27)) {
    for (long long j = 0; j < a.n; ++j)
      for (long long i = 0; i < a.m; ++i)
        worst = std::max(worst, sgemm_element_error(a, A, B, c0, got[i + j * a.ldc], i, j));
    return worst;
  }
  std::mt19937 rng(7);
  std::vector<std::pair<long long, long long>> at = {
      {0, 0}, {a.m - 1, a.n - 1}, {a.m - 1, 0}, {0, a.n - 1}};
  for (int s = 0; s < 4096; ++s) at.push_back({rng() % a.m, rng() % a.n});
  for (auto [i, j] : at)
    worst = std::max(worst, sgemm_element_error(a, A, B, c0, got[i + j * a.ldc], i, j));
  return worst;
}

BlasCell make_cell(const std::string& name, const BlasTiming& t, double error, double tolerance) {
  BlasCell c;
  c.impl = name;
  c.kernel_ms = summarize(t.kernel_ms);
  c.total_ms = summarize(t.total_ms);
  c.error = error;
  c.ok = error <= tolerance;
  return c;
}

std::string human_bytes(double b) {
  char text[32];
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  std::snprintf(text, sizeof text, "%.4g %s", b, units[u]);
  return text;
}

}  // namespace

namespace {

// The operands x and y of a strided vector routine, named with the options that size them.
std::vector<std::pair<std::string, size_t>> vector_operands(long long n, long long incx,
                                                            long long incy) {
  const std::string count = parameter("n") + " " + std::to_string(n);
  return {{"x (" + count + ", " + parameter("incx") + " " + std::to_string(incx) + ")",
           vector_length(n, incx) * 4},
          {"y (" + count + ", " + parameter("incy") + " " + std::to_string(incy) + ")",
           vector_length(n, incy) * 4}};
}

// One size of the benchmark for `impls`; cell names get `suffix` (" tuned" for the second,
// tuned CLBlast pass). Inputs come from o.seed, so every pass sees the same operands.
BlasRow run_size(Runtime& rt, const BlasBenchOptions& o, long long size,
                 const std::vector<BlasImpl>& impls, const std::string& suffix) {
  {
    BlasRow row;
    std::mt19937 rng(o.seed);
    auto skipped = [](const std::string& name, const std::string& reason) {
      BlasCell c;
      c.impl = name;
      c.skipped = reason;
      return c;
    };
    // Each implementation runs in turn; `run` records its cell or why it was skipped.
    auto run = [&](const std::string& name, const std::function<BlasCell()>& body) {
      try {
        row.cells.push_back(body());
      } catch (const Error& e) {
        row.cells.push_back(skipped(name, e.what()));
      }
    };
    // A size whose operands do not fit the device is a row of skipped cells with the reason,
    // which names the operand that is too large and the options that made it so.
    auto does_not_fit = [&](const std::vector<std::pair<std::string, size_t>>& operands) {
      const std::string what = name_of(blas_routine_table(), o.routine) + (" " + row.size);
      try {
        std::vector<size_t> bytes;
        for (const auto& [operand, b] : operands) {
          check_fits(rt, {b}, what + ": " + operand);
          bytes.push_back(b);
        }
        check_fits(rt, bytes, what);
        // The host holds the inputs, the reference's result and the device's (and, on a CPU
        // device, the operands too): an explicit size beyond the budget is refused here rather
        // than by the kernel's out-of-memory killer; the default sizes are capped to fit.
        const BlasMemoryLimits limits = blas_memory_limits(rt.device(), o.max_memory);
        if (const std::uint64_t host = blas_host_bytes(o, size, limits.shared); host > limits.host)
          throw Error(what + ": needs " + std::to_string(host >> 20) + " MiB of host memory, " +
                      "more than " + std::to_string(limits.host >> 20) + " MiB (" +
                      limits.host_source +
                      (limits.shared ? "; the CPU device's operands are host memory too" : "") +
                      "); give a smaller " + blas_size_options(o));
        return false;
      } catch (const Error& e) {
        for (BlasImpl impl : impls)
          row.cells.push_back(skipped(name_of(blas_impl_table(), impl) + suffix, e.what()));
        return true;
      }
    };
    if (o.routine == BlasRoutine::saxpy) {
      SaxpyArgs a = o.saxpy;
      a.n = size;
      validate(a);
      row.size = std::to_string(a.n);
      row.bytes = 12.0 * a.n;  // read x and y, write y
      row.flops = 2.0 * a.n;
      if (does_not_fit(vector_operands(a.n, a.incx, a.incy))) return row;
      const std::vector<float> x = random_floats(vector_length(a.n, a.incx), rng);
      const std::vector<float> y0 = random_floats(vector_length(a.n, a.incy), rng);
      std::vector<float> want = y0;
      saxpy_reference(a, x, want);
      for (BlasImpl impl : impls) {
        const std::string name = name_of(blas_impl_table(), impl) + suffix;
        run(name, [&]() {
          std::vector<float> y = y0;
          BlasTiming t = saxpy_device(rt, impl, a, x, y, o.runs);
          return make_cell(name, t, saxpy_error(a, x, y0, want, y), blas_tolerance(o.routine, a.n));
        });
      }
    } else if (o.routine == BlasRoutine::sdot) {
      SdotArgs a = o.sdot;
      a.n = size;
      validate(a);
      row.size = std::to_string(a.n);
      row.bytes = 8.0 * a.n;
      row.flops = 2.0 * a.n;
      if (does_not_fit(vector_operands(a.n, a.incx, a.incy))) return row;
      const std::vector<float> x = random_floats(vector_length(a.n, a.incx), rng);
      const std::vector<float> y = random_floats(vector_length(a.n, a.incy), rng);
      const double want = sdot_reference(a, x, y);
      double mag = 1e-30;
      for (long long i = 0; i < a.n; ++i) {
        const size_t xi = a.incx > 0 ? i * a.incx : (a.n - 1 - i) * -a.incx;
        const size_t yi = a.incy > 0 ? i * a.incy : (a.n - 1 - i) * -a.incy;
        mag += std::fabs(double(x[xi]) * y[yi]);
      }
      for (BlasImpl impl : impls) {
        const std::string name = name_of(blas_impl_table(), impl) + suffix;
        run(name, [&]() {
          float got = std::numeric_limits<float>::quiet_NaN();
          BlasTiming t = sdot_device(rt, impl, a, x, y, got, o.runs);
          const double err = std::isfinite(got) ? std::fabs(got - want) / mag
                                                : std::numeric_limits<double>::infinity();
          return make_cell(name, t, err, blas_tolerance(o.routine, a.n));
        });
      }
    } else {
      SgemmArgs a = o.sgemm;
      if (o.square) {
        a.m = a.n = a.k = size;
        a.lda = a.ldb = a.ldc = 0;
      }
      validate(a);
      row.size = std::to_string(a.m) + "x" + std::to_string(a.n) + "x" + std::to_string(a.k);
      row.bytes = 4.0 * (a.m * a.k + a.k * a.n + (a.beta != 0 ? 2 : 1) * a.m * a.n);
      row.flops = 2.0 * a.m * a.n * a.k;
      // Which option gave each leading dimension: its own, or where it was left tight, the
      // option of the rows it takes.
      const SgemmArgs& given = o.square ? SgemmArgs{} : o.sgemm;
      auto ld_of = [](long long own, const std::string& own_option,
                      const std::string& rows_option) { return own ? own_option : rows_option; };
      auto label = [](const char* matrix, const std::string& ld_option, long long ld,
                      const std::string& cols_option, long long cols) {
        return std::string(matrix) + " (" + ld_option + " " + std::to_string(ld) + " x " +
               cols_option + " " + std::to_string(cols) + ")";
      };
      if (does_not_fit(
              {{label(
                    "A",
                    ld_of(given.lda, parameter("lda"), a.trans_a ? parameter("k") : parameter("m")),
                    a.lda, a.trans_a ? parameter("m") : parameter("k"), a.trans_a ? a.m : a.k),
                matrix_a_length(a) * 4},
               {label(
                    "B",
                    ld_of(given.ldb, parameter("ldb"), a.trans_b ? parameter("n") : parameter("k")),
                    a.ldb, a.trans_b ? parameter("k") : parameter("n"), a.trans_b ? a.k : a.n),
                matrix_b_length(a) * 4},
               {label("C", ld_of(given.ldc, parameter("ldc"), parameter("m")), a.ldc,
                      parameter("n"), a.n),
                matrix_c_length(a) * 4}}))
        return row;
      const std::vector<float> A = random_floats(matrix_a_length(a), rng);
      const std::vector<float> B = random_floats(matrix_b_length(a), rng);
      // beta = 0: C is never read, so it starts as NaN to prove it.
      const std::vector<float> c0 = a.beta != 0 ? random_floats(matrix_c_length(a), rng)
                                                : std::vector<float>(matrix_c_length(a), NAN);
      for (BlasImpl impl : impls) {
        for (int form : impl == BlasImpl::image ? std::vector<int>{1, 4} : std::vector<int>{1}) {
          const std::string name =
              std::string(name_of(blas_impl_table(), impl)) + (form == 4 ? " 4x4" : "") + suffix;
          run(name, [&]() {
            std::vector<float> C = c0;
            BlasTiming t = sgemm_device(rt, impl, form, a, A, B, C, o.runs);
            return make_cell(name, t, sgemm_error(a, A, B, c0, C), blas_tolerance(o.routine, a.k));
          });
        }
      }
    }
    return row;
  }
}

// The best own implementation's kernel-time improvement over CLBlast in percent (NaN where there
// is nothing to compare), and that implementation in `best`.
double improvement(const BlasRow& r, const BlasCell** best) {
  const BlasCell* clblast = nullptr;
  *best = nullptr;
  for (const BlasCell& c : r.cells) {
    if (!c.skipped.empty()) continue;
    if (c.impl.rfind("clblast", 0) == 0) {  // untuned or tuned: the faster counts
      if (!clblast || c.kernel_ms.median < clblast->kernel_ms.median) clblast = &c;
    } else if (!*best || c.kernel_ms.median < (*best)->kernel_ms.median) {
      *best = &c;
    }
  }
  // An empty operation (n, m or k 0: no multiply-add, often no own kernel launched) compares
  // nothing: not "+100%" against CLBlast's launch.
  if (!clblast || !*best || clblast->kernel_ms.median <= 0 || r.flops <= 0) return std::nan("");
  return 100.0 * (clblast->kernel_ms.median - (*best)->kernel_ms.median) /
         clblast->kernel_ms.median;
}

// GFLOP/s for sgemm, GB/s for the vectors, from a cell's kernel time.
double rate(const BlasRow& r, const BlasCell& c, bool gemm) {
  const double s = c.kernel_ms.median * 1e-3;
  return s > 0 ? (gemm ? r.flops / s * 1e-9 : r.bytes / s * 1e-9) : 0.0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<BlasRow> run_blas_bench(Runtime& rt, const BlasBenchOptions& o,
                                    const std::function<void(const BlasRow&)>& done) {
  // CLBlast cannot take an override back, so a tuned pass comes after every untuned run, and
  // rows wait for it where a tuning is cached for this device.
  const bool clblast =
      std::find(o.impls.begin(), o.impls.end(), BlasImpl::clblast) != o.impls.end();
  const bool tuned_pass =
      o.with_tuned && clblast && std::filesystem::exists(clblast_tuning_path(rt.device()));
  const char* routine = name_of(blas_routine_table(), o.routine);
  std::vector<BlasRow> rows;
  std::vector<long long> sizes;
  auto measure = [&](long long size) {
    sizes.push_back(size);
    rows.push_back(run_size(rt, o, size, o.impls, ""));
    if (!tuned_pass && done) done(rows.back());
  };
  if (o.time_budget_s > 0 && !o.sizes.empty()) {
    BlasBenchOptions warm = o;  // builds every program, so that no size's time counts builds
    warm.runs = 0;
    run_size(rt, warm, o.sizes.front(), o.impls, "");
    BlasSweepClock clock;
    clock.budget_s = o.time_budget_s;
    const auto start = std::chrono::steady_clock::now();
    std::string note;
    while (const long long size = blas_next_size(o, o.sizes, clock, note)) {
      if (!note.empty()) std::cerr << "blurtool: note: blas " << routine << ": " << note << "\n";
      const auto row_start = std::chrono::steady_clock::now();
      measure(size);
      clock.last = size;
      clock.last_s = seconds_since(row_start);
      clock.spent_s = seconds_since(start);
    }
    if (!note.empty()) std::cerr << "blurtool: note: blas " << routine << ": " << note << "\n";
  } else {
    for (long long size : o.sizes) measure(size);
  }
  if (!clblast || !o.with_tuned) return rows;
  const ClblastTuning tuning = apply_clblast_tuning(rt);
  const char* kernel = o.routine == BlasRoutine::saxpy  ? "Xaxpy"
                       : o.routine == BlasRoutine::sdot ? "Xdot"
                                                        : "Xgemm";
  if (std::find(tuning.applied.begin(), tuning.applied.end(), kernel) != tuning.applied.end()) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const BlasRow tuned = run_size(rt, o, sizes[i], {BlasImpl::clblast}, " tuned");
      rows[i].cells.insert(rows[i].cells.begin() + 1, tuned.cells.begin(), tuned.cells.end());
    }
  } else if (tuning.refused.count(kernel)) {  // a tuned column would only repeat the defaults
    std::cerr << "blurtool: no 'clblast tuned' column: blurtool blas " + parameter("tune") +
                     " refused the tuned "
              << kernel << " (" << tuning.refused.at(kernel) << "), see " << tuning.path << "\n";
  }
  if (tuned_pass && done)
    for (const BlasRow& r : rows) done(r);
  return rows;
}

BlasPrinter::BlasPrinter(BlasRoutine routine, std::string device, int runs, std::string format,
                         std::ostream& out)
    : routine_(routine),
      device_(std::move(device)),
      format_(std::move(format)),
      runs_(runs),
      out_(out) {
  if (format_ != "table" && format_ != "csv" && format_ != "json")
    throw UsageError(parameter("bench_format") + " '" + format_ + "': choose table, csv or json");
}

void BlasPrinter::row(const BlasRow& r) {
  const bool gemm = routine_ == BlasRoutine::sgemm;
  const char* routine_name = name_of(blas_routine_table(), routine_);
  const bool first = !started_;
  started_ = true;
  if (format_ == "json") {
    rows_.push_back(r);
    return;
  }
  if (format_ == "csv") {
    if (first)
      out_ << "routine,size,bytes,impl,kernel_ms,total_ms," << (gemm ? "gflops" : "gbps")
           << ",relative_error,ok,skipped\n";
    for (const BlasCell& c : r.cells) {
      out_ << routine_name << "," << r.size << "," << r.bytes << "," << c.impl << ",";
      if (!c.skipped.empty())
        out_ << ",,,,,\"" << c.skipped << "\"\n";
      else
        out_ << c.kernel_ms.median << "," << c.total_ms.median << "," << rate(r, c, gemm) << ","
             << c.error << "," << (c.ok ? 1 : 0) << ",\n";
    }
    out_ << std::flush;
    return;
  }
  char line[512];
  if (first) {
    out_ << "device:  " << device_ << "\n";
    out_ << routine_name << ": median of " << runs_
         << " runs after a warm-up; each cell: kernel ms / end-to-end ms (upload, compute, "
            "download)\n";
    std::snprintf(line, sizeof line, "  %-16s %-10s", "size", "bytes");
    out_ << line;
    for (const BlasCell& c : r.cells) {
      std::snprintf(line, sizeof line, " %22s", c.impl.c_str());
      out_ << line;
    }
    std::snprintf(line, sizeof line, " %12s %9s %10s\n", "own vs CLBl.", gemm ? "GFLOP/s" : "GB/s",
                  "max error");
    out_ << line;
  }
  std::snprintf(line, sizeof line, "  %-16s %-10s", r.size.c_str(), human_bytes(r.bytes).c_str());
  out_ << line;
  double worst = 0, best_rate = 0;
  for (const BlasCell& c : r.cells) {
    if (!c.skipped.empty()) {
      std::snprintf(line, sizeof line, " %22s", "skipped*");
      notes_.push_back(r.size + " " + c.impl + ": " + c.skipped);
    } else {
      char cell[64];
      std::snprintf(cell, sizeof cell, "%.4g / %.4g%s", c.kernel_ms.median, c.total_ms.median,
                    c.ok ? "" : " !");
      std::snprintf(line, sizeof line, " %22s", cell);
      worst = std::max(worst, c.error);
      best_rate = std::max(best_rate, rate(r, c, gemm));
      if (!c.ok)
        notes_.push_back(r.size + " " + c.impl + ": error " + std::to_string(c.error) +
                         " above tolerance");
    }
    out_ << line;
  }
  const BlasCell* best;
  const double imp = improvement(r, &best);
  char imp_text[32] = "-";
  if (std::isfinite(imp)) std::snprintf(imp_text, sizeof imp_text, "%+.1f%%", imp);
  std::snprintf(line, sizeof line, " %12s %9.1f %10.2e\n", imp_text, best_rate, worst);
  out_ << line << std::flush;
}

void BlasPrinter::finish() {
  const bool gemm = routine_ == BlasRoutine::sgemm;
  if (format_ == "json") {
    nlohmann::ordered_json j;
    j["device"] = device_;
    j["routine"] = name_of(blas_routine_table(), routine_);
    j["runs"] = runs_;
    j["times"] =
        "kernel_ms: device kernel time (profiling events; CLBlast: host clock around the "
        "call and clFinish); total_ms: upload, compute, download";
    j["rows"] = nlohmann::ordered_json::array();
    for (const BlasRow& r : rows_) {
      nlohmann::ordered_json jr = {{"size", r.size}, {"bytes", r.bytes}, {"flops", r.flops}};
      for (const BlasCell& c : r.cells) {
        nlohmann::ordered_json jc = {{"impl", c.impl}};
        if (!c.skipped.empty()) {
          jc["skipped"] = c.skipped;
        } else {
          jc["kernel_ms"] = c.kernel_ms.median;
          jc["total_ms"] = c.total_ms.median;
          jc[gemm ? "gflops" : "gbps"] = rate(r, c, gemm);
          jc["relative_error"] = c.error;
          jc["ok"] = c.ok;
        }
        jr["impls"].push_back(jc);
      }
      const BlasCell* best;
      const double imp = improvement(r, &best);
      if (std::isfinite(imp)) jr["best_own_vs_clblast_percent"] = imp;
      j["rows"].push_back(jr);
    }
    out_ << j.dump(2) << "\n";
    return;
  }
  if (format_ == "csv") return;
  out_ << "  own vs CLBl.: kernel-time improvement of the fastest own implementation over CLBlast"
          " (+: own faster); rate of the fastest implementation\n";
  for (const std::string& n : notes_) out_ << "  * " << n << "\n";
}

}  // namespace blurtool
