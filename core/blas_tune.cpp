// CLBlast tuning cache (see blas_tune.h).
#include "core/blas_tune.h"

#include <clblast.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "core/error.h"
#include "core/image_io.h"

namespace blurtool {

namespace {

using Parameters = std::unordered_map<std::string, size_t>;

std::string safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return s;
}

void check(clblast::StatusCode s, const std::string& what) {
  if (s != clblast::StatusCode::kSuccess)
    throw Error("CLBlast " + what + " failed with status " + std::to_string(static_cast<int>(s)));
}

}  // namespace

std::string clblast_tuning_path(const DeviceInfo& d) {
  std::string dir;
  if (const char* e = std::getenv("BLURTOOL_CACHE_DIR"); e && *e) {
    dir = e;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/blurtool";
  } else {
    const char* home = std::getenv("HOME");
    dir = std::string(home && *home ? home : ".") + "/.cache/blurtool";
  }
  return dir + "/clblast-" + safe(d.platform) + "-" + safe(d.name) + "-" + safe(d.driver) + ".json";
}

void tune_clblast(Runtime& rt, std::ostream& log) {
  cl_command_queue q = rt.queue()();
  const bool gpu = rt.device().type & CL_DEVICE_TYPE_GPU;
  nlohmann::ordered_json cache = {{"device", rt.device().name}, {"driver", rt.device().driver}};
  auto keep = [&](const char* kernel, const Parameters& p) {
    nlohmann::ordered_json j;
    for (const auto& [name, value] : p) j[name] = value;
    cache["kernels"][kernel] = j;
    log << "  " << kernel << ": " << j.dump() << std::endl;  // flushed: tuning takes minutes
  };
  Parameters p;
  log << "tuning CLBlast on " << rt.device().name << " (single precision): Xaxpy, Xdot, Xgemm"
      << std::endl;
  check(clblast::TuneXaxpy<float>(&q, 1 << 22, 1.0, p), "TuneXaxpy");
  keep("Xaxpy", p);
  p.clear();
  check(clblast::TuneXdot<float>(&q, 1 << 22, 1.0, p), "TuneXdot");
  keep("Xdot", p);
  p.clear();
  const size_t n = gpu ? 1024 : 256;  // the CPU compiles every configuration slowly
  check(clblast::TuneXgemm<float>(&q, n, n, n, 1.0 / 64, p), "TuneXgemm");
  keep("Xgemm", p);

  const std::string path = clblast_tuning_path(rt.device());
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string text = cache.dump(2) + "\n";
  write_file_atomic(path, std::vector<std::uint8_t>(text.begin(), text.end()));
  log << "wrote " << path << "\n";
}

bool apply_clblast_tuning(Runtime& rt) {
  const std::string path = clblast_tuning_path(rt.device());
  std::ifstream in(path);
  if (!in) return false;
  nlohmann::json cache;
  try {
    cache = nlohmann::json::parse(in);
    for (const auto& [kernel, params] : cache.at("kernels").items()) {
      Parameters p;
      for (const auto& [name, value] : params.items()) p[name] = value.get<size_t>();
      check(
          clblast::OverrideParameters(rt.device().device(), kernel, clblast::Precision::kSingle, p),
          "OverrideParameters(" + kernel + ")");
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not a CLBlast tuning cache (" + e.what() +
                "); delete it or rerun "
                "blurtool blas --tune");
  }
  return true;
}

}  // namespace blurtool
