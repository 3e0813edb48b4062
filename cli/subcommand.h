// Option handling shared by blurtool's subcommands (bench, tune, probe, blas) and the blurs'
// own options: cxxopts errors as usage errors, --bench-format and --plot checked before anything
// runs.
#pragma once

#include <cxxopts.hpp>
#include <string>

namespace blurtool {

/// Help text of --device, the same for every command.
inline constexpr const char* kDeviceOptionHelp =
    "device index or case-insensitive part of its platform or device name, or of its "
    "version (pocl, cuda) (default: $BLURTOOL_DEVICE, else the first GPU, else the first CPU); "
    "for a blur, 'host': the host's cores, which take a box filter or Gaussian with no device "
    "named";

/// Refuses `--name=value` where --name is a switch and `value` is none that cxxopts takes for
/// one (true, false, 1, 0, ...): blurtool::UsageError naming the argument (cxxopts' own message,
/// "Argument 'no' failed to parse", names no option).
void check_switch_values(const cxxopts::Options& spec, int argc, const char* const* argv);

/// Refuses an ImageMagick-style single-dash long option (`-box 8`, `-quality=90`), which cxxopts
/// would read as a cluster of short options ("Option 'b' does not exist"): blurtool::UsageError
/// "unknown option '-box': did you mean --box?". Only names of `spec`'s long options (two or
/// more characters) are caught; a cluster of `spec`'s short switches, a negative number and the
/// value of an option that takes one pass through.
void check_single_dash_long(const cxxopts::Options& spec, int argc, const char* const* argv);

/// Parses `argv` with `spec` (after check_switch_values and check_single_dash_long); a cxxopts
/// error (unknown option, missing value) becomes blurtool::UsageError "NAME: <cxxopts' message>".
cxxopts::ParseResult parse_subcommand(cxxopts::Options& spec, int argc, const char* const* argv,
                                      const std::string& name);

/// The value of --bench-format: "table", "csv" or "json", else blurtool::UsageError naming it.
std::string bench_format_option(const cxxopts::ParseResult& parsed);

/// The value of --plot ("" when not given), checked before a measurement of minutes: a file
/// name whose folder exists and is writable, else blurtool::UsageError naming it.
std::string plot_option(const cxxopts::ParseResult& parsed);

}  // namespace blurtool
