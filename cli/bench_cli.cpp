// Options of `blurtool bench` (cxxopts), turned into a SuiteOptions for bench_suite.
#include "cli/bench_cli.h"

#include <algorithm>
#include <cmath>
#include <cxxopts.hpp>
#include <iostream>

#include "cli/numbers.h"
#include "cli/subcommand.h"
#include "image/image_io.h"
#include "tools/bench_suite.h"
#include "util/error.h"

namespace blurtool {

int run_bench_command(int argc, const char* const* argv) {
  cxxopts::Options spec("blurtool bench",
                        "The fixed benchmark suite on one device: box blur r=30 on 3024x4032 "
                        "(every variant and intermediate) and its radius sweep r=1..63, Gaussian "
                        "sigma 10 radius 16 on 1920x1080 (every variant), the Gaussian's methods "
                        "over sigma 1..250 on 3024x4032, bright points on 1920x1080; median "
                        "kernel time, GB/s and percent of the bandwidth floor measured in the "
                        "same run.\n");
  spec.custom_help("[options]");
  // clang-format off
  spec.add_options()
      ("device", kDeviceOptionHelp, cxxopts::value<std::string>(), "N|TEXT")
      ("runs", "timed repetitions per case after a warm-up, 1..1000 (slow cases fewer: 3 above "
               "0.1 s, 1 above 1 s)", cxxopts::value<std::string>()->default_value("10"), "N")
      ("quick", "skip the O(R^2) schedules (box single, single-linear; Gaussian naive, "
                "naive-local, and double-linear in the sweep), sweep r = 1, 8, 16, 24, 30, "
                "40, 48, 56, 63 only, and time the exact Gaussian only up to sigma 60")
      ("only", "comma-separated groups to run: box, sweep, gauss, sigma, bright (default: all)",
       cxxopts::value<std::string>(), "LIST")
      ("scale", "multiply the image sides by F, 0 < F <= 1 (default 1: the write-ups' sizes)",
       cxxopts::value<std::string>(), "F")
      ("plot", "write the radius sweep as an SVG chart (time against radius, one line per "
               "variant) to FILE", cxxopts::value<std::string>(), "FILE")
      ("bench-format", "table, csv or json", cxxopts::value<std::string>()->default_value("table"),
       "FMT")
      ("q,quiet", "no progress lines on stderr")
      ("h,help", "print this help");
  // clang-format on
  const cxxopts::ParseResult p = parse_subcommand(spec, argc, argv, "bench");
  if (p.count("help")) {
    std::cout << spec.help();
    return 0;
  }
  if (!p.unmatched().empty())
    throw UsageError("bench: unexpected argument '" + p.unmatched()[0] + "' (it takes no files)");

  SuiteOptions o;
  o.runs = parse_int(p["runs"].as<std::string>(), "--runs", 1, 1000, "the run count");
  o.quick = p.count("quick") > 0;
  if (p.count("scale")) {
    const std::string text = p["scale"].as<std::string>();
    o.scale = parse_decimal(text);
    if (!(o.scale > 0 && o.scale <= 1))
      throw UsageError("--scale '" + text + "': must be a number above 0 and at most 1");
  }
  if (p.count("only")) {
    const std::string list = p["only"].as<std::string>();
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      o.groups.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
    check_suite_groups(o.groups);  // before the device opens and the banner is printed
  }
  const std::string format = bench_format_option(p);
  const std::string plot = plot_option(p);  // before the suite runs (minutes), not after
  if (!plot.empty() && o.groups.size() &&
      std::find(o.groups.begin(), o.groups.end(), "sweep") == o.groups.end())
    throw UsageError("--plot draws the radius sweep: add sweep to --only");

  Runtime runtime(select_device(p.count("device") ? p["device"].as<std::string>() : ""));
  if (!p.count("quiet"))
    std::cerr << "blurtool bench on " << runtime.device().name << (o.quick ? " (quick)" : "")
              << std::endl;
  const std::vector<SuiteCase> cases =
      run_suite(runtime, o, p.count("quiet") ? nullptr : &std::cerr);
  print_suite(cases, runtime.device(), o, format, std::cout);
  if (!plot.empty()) {
    const std::string svg = sweep_chart_svg(cases, runtime.device());
    write_file_atomic(plot, std::vector<std::uint8_t>(svg.begin(), svg.end()));
  }
  return 0;
}

}  // namespace blurtool
