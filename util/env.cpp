// Settings read from the environment (see env.h).
#include "util/env.h"

#include <cerrno>
#include <cstdlib>

namespace blurtool {

int env_int(const char* name, int low, int high, int fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(text, &end, 10);
  if (errno || *end != '\0' || n < low || n > high) return fallback;
  return static_cast<int>(n);
}

}  // namespace blurtool
