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

/// The C library's text for an errno value ("No such file or directory"), for messages.
std::string errno_text(int err);

/// Spells a parameter's key for a message; see set_parameter_spelling.
using ParameterSpelling = std::string (*)(const std::string& key);

/// Installs how messages spell parameters. The layers below the front end name a parameter a
/// caller chose (a radius, a work-group size, a device) by its own key, the field's name in the
/// parameter structures (radius, wg, segment, per_item, max_pixels, device, ...), and never by
/// a command line's syntax; the front end that owns the syntax installs its spelling once, at
/// start and before any thread (cli/: "--" and the key with '-' for '_'). Without one a key is
/// spelled as it is.
void set_parameter_spelling(ParameterSpelling spelling);

/// The key of a parameter as the installed spelling writes it, for messages ("segment" ->
/// "--segment" under the command line's spelling).
std::string parameter(const std::string& key);

/// Prints "blurtool: warning: TEXT" on standard error, for a warning of the layers below the
/// front end that belongs to no one file's report (a tuning table ignored), unless the front
/// end has silenced warnings (set_warnings_quiet). Thread-safe.
void print_warning(const std::string& text);

/// Silences print_warning (the front end's --quiet: nothing but errors); set once, at start.
void set_warnings_quiet(bool quiet);

}  // namespace blurtool
