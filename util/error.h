// Error types shared by every layer and cli/.
//
// Below cli/ every failure throws one of these; main() catches them, prints the one-line
// message (which names the file, option or OpenCL call at fault) and returns the exit code:
// UsageError -> 2 (bad command line), Error -> 1 (a file or the device failed).
#pragma once

#include <stdexcept>
#include <string>

namespace blurtool {

/// A run-time failure: unreadable or malformed input, unwritable output, OpenCL failure.
/// Exit status 1.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad command line: unknown option, value out of range, missing argument. Exit status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace blurtool
