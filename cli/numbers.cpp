// Command-line number parsing (see numbers.h).
#include "cli/numbers.h"

#include <cmath>
#include <stdexcept>

#include "core/error.h"

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

double parse_decimal(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    return std::nan("");
  size_t used = 0;
  try {
    const double value = std::stod(text, &used);
    return used == text.size() ? value : std::nan("");
  } catch (const std::exception&) {
    return std::nan("");
  }
}

}  // namespace blurtool
