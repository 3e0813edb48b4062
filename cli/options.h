// Command-line options of blurtool: parsed once into CliOptions, every value range-checked,
// every error a blurtool::UsageError naming the option.
#pragma once

#include <string>

#include "core/box_blur.h"
#include "core/bright_points.h"
#include "core/gauss_blur.h"

namespace blurtool {

/// Everything the command line asks for.
struct CliOptions {
  bool help = false;
  bool version = false;
  bool list_devices = false;
  std::string help_text;
  std::string device;  ///< --device: index or name substring; empty: BLURTOOL_DEVICE or default
  enum class Operation { box, gauss, bright } operation = Operation::box;
  BoxParams box_params;        ///< --box
  GaussParams gauss_params;    ///< --gauss
  BrightParams bright_params;  ///< --bright
  int quality = 95;            ///< JPEG quality, 1..100
  int bench_runs = 0;          ///< 0: no benchmark
  bool sweep_wg = false;       ///< --sweep-wg: one benchmark row per work-group size
  std::string bench_format = "table";
  std::string input, output;
};

/// Parses argv. Throws blurtool::UsageError for unknown options, bad values and a wrong number
/// of file arguments.
CliOptions parse_options(int argc, const char* const* argv);

}  // namespace blurtool
