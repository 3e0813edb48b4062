// Command-line number parsing (see numbers.h).
#include "cli/numbers.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "util/error.h"

namespace blurtool {

long long parse_whole(const std::string& text, const std::string& option) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    throw UsageError(option + " '" + text + "': must be a whole number");
  return value;
}

int parse_int(const std::string& text, const std::string& option, long lo, long hi,
              const std::string& what) {
  long long value = lo - 1LL;
  try {
    value = parse_whole(text, option);
  } catch (const UsageError&) {
  }
  if (value < lo || value > hi) {
    throw UsageError(option + " '" + text + "': " + what + " must be an integer from " +
                     std::to_string(lo) + " to " + std::to_string(hi));
  }
  return static_cast<int>(value);
}

unsigned long long parse_size(const std::string& text, const std::string& option,
                              unsigned long long lo, unsigned long long hi) {
  const std::string range = "must be from " + std::to_string(lo) + " to " + std::to_string(hi) +
                            " bytes (a whole number, optionally with K, M or G)";
  std::string digits = text;
  int shift = 0;  // K, M, G (either case): 10, 20, 30
  const size_t suffix =
      digits.empty() ? std::string::npos : std::string("kKmMgG").find(digits.back());
  if (suffix != std::string::npos) {
    shift = 10 * static_cast<int>(suffix / 2 + 1);
    digits.pop_back();
  }
  long long value = -1;
  try {
    value = parse_whole(digits, option);
  } catch (const UsageError&) {
  }
  // 2^33 units of any suffix stay below 2^63: no overflow before the range check.
  if (value < 0 || value > (1LL << 33) || (static_cast<unsigned long long>(value) << shift) < lo ||
      (static_cast<unsigned long long>(value) << shift) > hi)
    throw UsageError(option + " '" + text + "': " + range);
  return static_cast<unsigned long long>(value) << shift;
}

double parse_decimal(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    return std::nan("");
  // strtod, not std::stod: stod throws out_of_range for a result that underflows, subnormals
  // such as 4e-320 included, and those are numbers (above 0 when positive). An overflow (ERANGE
  // with HUGE_VAL) is no finite number and stays NaN.
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nan("");
  if (errno == ERANGE && std::isinf(value)) return std::nan("");
  return value;
}

}  // namespace blurtool
