#include "util/error.h"

#include <atomic>
#include <cstdio>
#include <cstring>

namespace blurtool {

std::string errno_text(int err) {
  return std::strerror(err);
}

namespace {
ParameterSpelling installed = nullptr;
}  // namespace

void set_parameter_spelling(ParameterSpelling spelling) {
  installed = spelling;
}

std::string parameter(const std::string& key) {
  return installed ? installed(key) : key;
}

namespace {
std::atomic<bool> warnings_quiet{false};
}  // namespace

void print_warning(const std::string& text) {
  if (warnings_quiet.load(std::memory_order_relaxed)) return;
  // One write, so that lines of several threads do not interleave.
  const std::string line = "blurtool: warning: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void set_warnings_quiet(bool quiet) {
  warnings_quiet.store(quiet, std::memory_order_relaxed);
}

}  // namespace blurtool
