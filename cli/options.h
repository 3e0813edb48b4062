// Command-line options of blurtool: parsed once into CliOptions, every value range-checked,
// every error a blurtool::UsageError naming the option.
#pragma once

#include <string>

#include "pipeline/pipeline.h"

namespace blurtool {

/// Everything the command line asks for: the job (JobOptions, run by pipeline/pipeline.h) and the
/// options that are the command line's own.
struct CliOptions : JobOptions {
  bool help = false;
  bool version = false;
  bool list_devices = false;
  std::string help_text;
  int bench_runs = 0;     ///< 0: no benchmark
  bool sweep_wg = false;  ///< --sweep-wg: one benchmark row per work-group size
  std::string bench_format = "table";
};

/// Parses argv. Throws blurtool::UsageError for unknown options, bad values and a wrong number
/// of file arguments.
CliOptions parse_options(int argc, const char* const* argv);

/// The command line's spelling of a parameter key in the lower layers' messages (see
/// set_parameter_spelling): "--" and the key with '-' for '_' (per_item -> --per-item).
std::string option_spelling(const std::string& key);

}  // namespace blurtool
