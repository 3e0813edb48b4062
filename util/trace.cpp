// Milestones of a run on standard error (see trace.h).
#include "util/trace.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace blurtool {

namespace {

const std::chrono::steady_clock::time_point kStart = std::chrono::steady_clock::now();

}  // namespace

double process_seconds() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count();
}

bool tracing() noexcept {
  static const bool on = [] {
    const char* e = std::getenv("BLURTOOL_TRACE");
    return e && *e && std::strcmp(e, "0") != 0;
  }();
  return on;
}

void trace(const char* what) noexcept {
  if (!tracing()) return;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kStart).count();
  // One fprintf a line: stdio locks the stream for the call, so lines from threads never mix.
  std::fprintf(stderr, "blurtool: trace %.1f ms: %s\n", ms, what);
}

void trace(const char* what, std::size_t count) noexcept {
  if (!tracing()) return;
  char line[160];
  std::snprintf(line, sizeof line, "%s %zu", what, count);
  trace(line);
}

}  // namespace blurtool
