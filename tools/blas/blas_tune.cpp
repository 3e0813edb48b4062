// CLBlast tuning cache (see blas_tune.h).
#include "tools/blas/blas_tune.h"

#include <clblast.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <unordered_map>

#include "image/image_io.h"
#include "tools/blas/blas_impl.h"
#include "util/error.h"

namespace blurtool {

namespace {

using Parameters = std::unordered_map<std::string, size_t>;

void check(clblast::StatusCode s, const std::string& what) {
  if (s != clblast::StatusCode::kSuccess)
    throw Error("CLBlast " + what + " failed with status " + std::to_string(static_cast<int>(s)));
}

// C = A B for n x n column-major operands filled from a fixed seed, through CLBlast's GEMM
// routine with whatever parameters are in force.
std::vector<float> gemm_routine(Runtime& rt, long long n) {
  SgemmArgs a;
  a.m = a.n = a.k = n;
  validate(a);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(n * n), B(n * n), C(n * n, 0.0f);
  for (float& v : A) v = u(rng);
  for (float& v : B) v = u(rng);
  sgemm_clblast(rt, a, A, B, C, 0);
  return C;
}

// max |x - y| / max |y|
double relative_difference(const std::vector<float>& x, const std::vector<float>& y) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(x[i]) - y[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(y[i])));
  }
  return std::isfinite(diff) ? diff / std::max(scale, 1e-30) : INFINITY;
}

// Runs `blurtool blas --check-tuning` on `device` in a child process; returns "" when the
// cached Xgemm passed, else why not (its message, or the signal that ended it).
std::string check_in_child(const DeviceInfo& device) {
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || exe.find('\'') != std::string::npos) return "cannot run the check: no path to blurtool";
  const std::string command =
      "'" + exe + "' blas --check-tuning --device " + std::to_string(device.index) + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "cannot run the check: " + std::string(std::strerror(errno));
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = pclose(pipe);
  while (!output.empty() && std::isspace(static_cast<unsigned char>(output.back())))
    output.pop_back();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) > 128) signal = WEXITSTATUS(status) - 128;
  if (signal) return "the GEMM routine crashed with it (signal " + std::to_string(signal) + ")";
  if (output.rfind("blurtool: ", 0) == 0) output.erase(0, 10);
  return output.empty() ? "the check failed" : output;
}

}  // namespace

int check_clblast_tuning(Runtime& rt, std::ostream& out) {
  const long long n = (rt.device().type & CL_DEVICE_TYPE_GPU) ? 1024 : 256;
  const std::vector<long long> checks = {2 * n, 2 * n + 17, 4 * n};
  std::vector<std::vector<float>> untuned;
  for (long long size : checks) untuned.push_back(gemm_routine(rt, size));
  const ClblastTuning t = apply_clblast_tuning(rt);
  if (std::find(t.applied.begin(), t.applied.end(), "Xgemm") == t.applied.end()) {
    out << "no tuned Xgemm in " << t.path << "\n";
    return 1;
  }
  for (size_t i = 0; i < checks.size(); ++i) {
    const double error = relative_difference(gemm_routine(rt, checks[i]), untuned[i]);
    if (error > 1e-5 * std::sqrt(static_cast<double>(checks[i]))) {
      out << "wrong in the GEMM routine at " << checks[i] << "x" << checks[i] << "x" << checks[i]
          << ": relative error " << error << " against CLBlast's defaults\n";
      return 1;
    }
  }
  return 0;
}

std::string clblast_tuning_path(const DeviceInfo& d) {
  return cache_directory() + "/clblast-" + file_name_safe(d.platform) + "-" +
         file_name_safe(d.name) + "-" + file_name_safe(d.driver) + ".json";
}

void tune_clblast(Runtime& rt, std::ostream& log) {
  cl_command_queue q = rt.queue()();
  const bool gpu = rt.device().type & CL_DEVICE_TYPE_GPU;
  const std::string path = clblast_tuning_path(rt.device());
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  nlohmann::ordered_json cache = {{"device", rt.device().name}, {"driver", rt.device().driver}};
  auto save = [&]() {
    const std::string text = cache.dump(2) + "\n";
    write_file_atomic(path, std::vector<std::uint8_t>(text.begin(), text.end()));
  };
  // The cache is rewritten after each kernel, so an interrupted run keeps what it found. A
  // tuner that fails (on PoCL, TuneXdot stops with CL_BUILD_PROGRAM_FAILURE on a configuration
  // the compiler refuses) is recorded as refused, its routine keeps CLBlast's defaults, and the
  // other tuners still run. Returns whether the kernel was tuned.
  auto tune = [&](const char* kernel, const std::function<clblast::StatusCode(Parameters&)>& run) {
    const auto start = std::chrono::steady_clock::now();
    Parameters p;
    try {
      check(run(p), std::string("Tune") + kernel);
    } catch (const Error& e) {
      const std::string why = e.what();
      log << "  " << kernel << " not tuned (" << static_cast<long>(ms_since(start) / 1000)
          << " s): " << why << "; it keeps CLBlast's defaults" << std::endl;
      cache["kernels"].erase(kernel);
      cache["refused"][kernel] = {{"why", why}};
      save();
      return false;
    }
    if (cache.contains("refused")) cache["refused"].erase(kernel);
    nlohmann::ordered_json j;
    for (const auto& [name, value] : p) j[name] = value;
    cache["kernels"][kernel] = j;
    save();
    log << "  " << kernel << " (" << static_cast<long>(ms_since(start) / 1000)
        << " s): " << j.dump() << std::endl;  // flushed: tuning takes minutes
    return true;
  };
  log << "tuning CLBlast on " << rt.device().name << " (single precision): Xaxpy, Xdot, Xgemm"
      << std::endl;
  tune("Xaxpy", [&](Parameters& p) { return clblast::TuneXaxpy<float>(&q, 1 << 22, 1.0, p); });
  tune("Xdot", [&](Parameters& p) { return clblast::TuneXdot<float>(&q, 1 << 22, 1.0, p); });
  // Xgemm has tens of thousands of configurations, each compiled: a random fraction of them.
  // The tuner checks each configuration on the Xgemm kernel alone, at one size; inside the GEMM
  // routine, at other sizes, the one it keeps can still be wrong (seen on an H100: a GEMMK=1
  // choice tuned at 1024 off by 20% at 2048; CLBlast issue #545), or write outside its buffers
  // (seen on PoCL, where device memory is the process's heap). So a child process checks each
  // pick in the routine (see check_clblast_tuning), where a crash costs nothing; a wrong pick
  // is tuned once more at 2n, and left out of the cache (GEMM keeping CLBlast's defaults) if
  // that one fails too.
  const long long n = gpu ? 1024 : 256;  // the CPU compiles every configuration slowly
  for (long long tune_n : {n, 2 * n}) {
    if (tune_n != n)
      log << "  Xgemm: tuning again at " << tune_n << "x" << tune_n << "x" << tune_n << std::endl;
    const bool tuned = tune("Xgemm", [&](Parameters& p) {
      return clblast::TuneXgemm<float>(&q, tune_n, tune_n, tune_n, kXgemmTuningFraction, p);
    });
    if (!tuned) continue;  // the tuner itself failed: recorded; try the second size
    std::string why = check_in_child(rt.device());
    if (why.empty()) break;
    why = "tuned at " + std::to_string(tune_n) + ", " + why;
    log << "  Xgemm refused: " << why << std::endl;
    cache["refused"]["Xgemm"] = {{"parameters", cache["kernels"]["Xgemm"]}, {"why", why}};
    cache["kernels"].erase("Xgemm");
    save();
  }
  log << "wrote " << path << "\n";
}

ClblastTuning apply_clblast_tuning(Runtime& rt) {
  ClblastTuning t;
  t.path = clblast_tuning_path(rt.device());
  std::ifstream in(t.path);
  if (!in) return t;
  try {
    const nlohmann::json cache = nlohmann::json::parse(in);
    for (const auto& [kernel, params] : cache.at("kernels").items()) {
      Parameters p;
      for (const auto& [name, value] : params.items()) p[name] = value.get<size_t>();
      check(
          clblast::OverrideParameters(rt.device().device(), kernel, clblast::Precision::kSingle, p),
          "OverrideParameters(" + kernel + ")");
      t.applied.push_back(kernel);
    }
    if (cache.contains("refused"))
      for (const auto& [kernel, entry] : cache["refused"].items())
        t.refused[kernel] = entry.at("why").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(t.path + ": not a CLBlast tuning cache (" + e.what() +
                "); delete it or rerun blurtool blas " + parameter("tune"));
  }
  return t;
}

}  // namespace blurtool
