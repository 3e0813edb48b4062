// Number parsing for command-line values, shared by blurtool's options and `blurtool blas`:
// whole text only (no trailing garbage), plain decimals only (no hex, inf or nan), and errors
// that name the option.
#pragma once

#include <string>

namespace blurtool {

/// A whole decimal number (64-bit), or blurtool::UsageError "OPTION 'TEXT': must be a whole
/// number".
long long parse_whole(const std::string& text, const std::string& option);

/// A whole number in [lo, hi], or UsageError naming the option, `what` and the range.
int parse_int(const std::string& text, const std::string& option, long lo, long hi,
              const std::string& what);

/// A size in bytes: a whole number with an optional binary suffix K, M or G (KiB, MiB, GiB;
/// either case), in [lo, hi], or UsageError naming the option and the range.
unsigned long long parse_size(const std::string& text, const std::string& option,
                              unsigned long long lo, unsigned long long hi);

/// A plain decimal number (digits, sign, point, exponent) rounded to a double, subnormals
/// included (4e-320) and what is smaller still rounded to 0; NaN when `text` is not one or is
/// too large for a double.
double parse_decimal(const std::string& text);

}  // namespace blurtool
