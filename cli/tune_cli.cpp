// Options of `blurtool tune` (cxxopts), turned into a TuneOptions for tune.
#include "cli/tune_cli.h"

#include <cxxopts.hpp>
#include <iostream>

#include "cli/numbers.h"
#include "cli/subcommand.h"
#include "util/error.h"
#include "tools/tune.h"

namespace blurtool {

int run_tune_command(int argc, const char* const* argv) {
  cxxopts::Options spec(
      "blurtool tune",
      "Measures which schedule is fastest on one device for each case (box blur at radii 1, 8, "
      "30, 63 and Gaussian blur at radii 4, 16, 30, 40, 63, each with every intermediate format; "
      "bright points with blocks 8 and 16), with its segment, unroll and work-group size, on a "
      "1920x1080 image and, on GPUs, on a 3024x4032 one, and stores the winners for --variant "
      "auto in the cache directory, one table per device and driver. A request uses the image "
      "size nearest its own, then the winner tuned at the smallest radius at or above its own; "
      "above the largest, and on devices without a table, auto keeps the defaults measured for "
      "the device class. BLURTOOL_TUNE=off ignores the tables.\n");
  spec.custom_help("[options]");
  // clang-format off
  spec.add_options()
      ("device", kDeviceOptionHelp, cxxopts::value<std::string>(), "N|TEXT")
      ("runs", "timed repetitions per candidate after a warm-up, 1..1000 (slow ones fewer: 3 "
               "above 0.1 s, 1 above 1 s)", cxxopts::value<std::string>()->default_value("5"), "N")
      ("scale", "multiply the image sides by F, 0 < F <= 1 (default 1: 1920x1080 and "
                "3024x4032)",
       cxxopts::value<std::string>(), "F")
      ("q,quiet", "print only the table's path")
      ("h,help", "print this help");
  // clang-format on
  const cxxopts::ParseResult p = parse_subcommand(spec, argc, argv, "tune");
  if (p.count("help")) {
    std::cout << spec.help();
    return 0;
  }
  if (!p.unmatched().empty())
    throw UsageError("tune: unexpected argument '" + p.unmatched()[0] + "' (it takes no files)");
  TuneOptions o;
  o.runs = parse_int(p["runs"].as<std::string>(), "--runs", 1, 1000, "the run count");
  if (p.count("scale")) {
    const std::string text = p["scale"].as<std::string>();
    o.scale = parse_decimal(text);
    if (!(o.scale > 0 && o.scale <= 1))
      throw UsageError("--scale '" + text + "': must be a number above 0 and at most 1");
  }
  Runtime runtime(select_device(p.count("device") ? p["device"].as<std::string>() : ""));
  const bool quiet = p.count("quiet") > 0;
  if (!quiet)
    std::cout << "blurtool tune on " << runtime.device().name << " ("
              << runtime.device().driver << "), median kernel time of each case's fastest "
              << "schedule:" << std::endl;
  tune(runtime, o, quiet ? nullptr : &std::cout);
  std::cout << (quiet ? "" : "table written to ") << tune_table_path(runtime.device())
            << std::endl;
  return 0;
}

}  // namespace blurtool
