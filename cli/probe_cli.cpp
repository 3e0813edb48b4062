// Options of `blurtool probe` (cxxopts), turned into a ProbeOptions for probe.
#include "cli/probe_cli.h"

#include <algorithm>
#include <cxxopts.hpp>
#include <iostream>

#include "cli/numbers.h"
#include "cli/subcommand.h"
#include "util/error.h"
#include "image/image_io.h"
#include "tools/probe.h"

namespace blurtool {

int run_probe_command(int argc, const char* const* argv) {
  cxxopts::Options spec(
      "blurtool probe",
      "The GPU performance model of the write-up on texture caches and branches (lecture notes "
      "timed on a GeForce GTX 280), measured on one device: cache (the "
      "5-fetch average as coordinates are scaled 0.1 to 16 apart, image and buffer reads), "
      "divergence (a three-way branch, coherent and incoherent, against no branch), stride (a "
      "read-modify-write walk over 32 MiB, strides 1 to 185, on the host CPU and the device). "
      "Prints ns per pixel or per access, the median kernel time of several runs after a "
      "warm-up. Ours beside them: transfer (host-device copies of 1 to 64 MiB, pageable and "
      "pinned, each way and two at once; GB/s of median wall times).\n");
  spec.custom_help("cache|divergence|stride|transfer [options]");
  spec.positional_help("");
  // clang-format off
  spec.add_options()
      ("device", kDeviceOptionHelp, cxxopts::value<std::string>(), "N|TEXT")
      ("runs", "timed runs per case after a warm-up, 1..1000 (slow cases fewer: 3 above 0.1 s, "
               "1 above 1 s)", cxxopts::value<std::string>()->default_value("10"), "N")
      ("size", "side of the square image in pixels, 16..16384 (cache: default 2048; "
               "divergence: default 1024, 256 on CPU devices)", cxxopts::value<std::string>(), "N")
      ("rounds", "divergence: cool_colors rounds in each branch body, 1..1000 (default 8)",
       cxxopts::value<std::string>(), "N")
      ("plot", "write the probe's chart as SVG to FILE", cxxopts::value<std::string>(), "FILE")
      ("bench-format", "table, csv or json", cxxopts::value<std::string>()->default_value("table"),
       "FMT")
      ("q,quiet", "no progress lines on stderr")
      ("h,help", "print this help")
      ("probe", "", cxxopts::value<std::string>());
  // clang-format on
  spec.parse_positional({"probe"});
  const cxxopts::ParseResult p = parse_subcommand(spec, argc, argv, "probe");
  if (p.count("help")) {
    std::cout << spec.help();
    return 0;
  }
  if (!p.unmatched().empty())
    throw UsageError("probe: unexpected argument '" + p.unmatched()[0] + "' (it takes no files)");
  if (!p.count("probe"))
    throw UsageError("probe: name a probe: cache, divergence, stride or transfer");

  ProbeOptions o;
  o.probe = p["probe"].as<std::string>();
  const auto& names = probe_names();
  if (std::find(names.begin(), names.end(), o.probe) == names.end())
    throw UsageError("probe '" + o.probe + "': choose cache, divergence, stride or transfer");
  o.runs = parse_int(p["runs"].as<std::string>(), "--runs", 1, 1000, "the run count");
  if (p.count("size")) {
    if (o.probe == "stride" || o.probe == "transfer")
      throw UsageError("--size: probe " + o.probe +
                       (o.probe == "stride" ? " walks a fixed 32 MiB buffer"
                                            : " copies 1 to 64 MiB, each in turn") +
                       "; give --size to cache or divergence");
    o.size = parse_int(p["size"].as<std::string>(), "--size", 16, 16384, "the image side");
  }
  if (p.count("rounds")) {
    if (o.probe != "divergence") throw UsageError("--rounds: only probe divergence takes it");
    o.rounds = parse_int(p["rounds"].as<std::string>(), "--rounds", 1, 1000, "the round count");
  }
  const std::string format = bench_format_option(p);
  const std::string plot = plot_option(p);  // before the probe runs, not after

  Runtime runtime(select_device(p.count("device") ? p["device"].as<std::string>() : ""));
  if (!p.count("quiet"))
    std::cerr << "blurtool probe " << o.probe << " on " << runtime.device().name << std::endl;
  const ProbeTable table = run_probe(runtime, o, p.count("quiet") ? nullptr : &std::cerr);
  print_probe(table, format, std::cout);
  if (!plot.empty()) {
    const std::string svg = line_chart_svg(table.chart);
    write_file_atomic(plot, std::vector<std::uint8_t>(svg.begin(), svg.end()));
  }
  return 0;
}

}  // namespace blurtool
