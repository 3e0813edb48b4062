// blurtool's entry point: parses the command line, runs the job, and turns every failure into
// one line on stderr and an exit status: 0 done, 1 a file or the device failed, 2 usage error.
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/blas_cli.h"
#include "cli/options.h"
#include "core/bench.h"
#include "core/box_blur.h"
#include "core/bright_points.h"
#include "core/cl_runtime.h"
#include "core/error.h"
#include "core/gauss_blur.h"
#include "core/image_io.h"

namespace fs = std::filesystem;
using namespace blurtool;

namespace {

void print_devices(std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line, "%-3s %-28s %-40s %-5s %4s %10s %10s %6s %s\n", "#", "platform",
                "device", "type", "CUs", "global MiB", "local KiB", "images", "max image");
  out << line;
  for (const DeviceInfo& d : list_devices()) {
    std::string max_image = d.image_support ? std::to_string(d.image2d_max_width) + "x" +
                                                  std::to_string(d.image2d_max_height)
                                            : "-";
    std::snprintf(line, sizeof line, "%-3d %-28.28s %-40.40s %-5s %4u %10llu %10llu %6s %s\n",
                  d.index, d.platform.c_str(), d.name.c_str(), d.type_name().c_str(),
                  d.compute_units, static_cast<unsigned long long>(d.global_mem >> 20),
                  static_cast<unsigned long long>(d.local_mem >> 10),
                  d.image_support ? "yes" : "no", max_image.c_str());
    out << line;
  }
}

// Refuses an output that is the input itself (same path, or another name for the same file).
void check_not_same_file(const std::string& input, const std::string& output) {
  std::error_code ec;
  bool same = fs::absolute(input, ec) == fs::absolute(output, ec) ||
              (fs::exists(output, ec) && fs::equivalent(input, output, ec));
  if (same) throw UsageError("output '" + output + "' is the input file; refusing to overwrite it");
}

// Lower-case extension of `path`, with the dot ("" if none).
std::string extension(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

int run(const CliOptions& o) {
  const bool bright = o.operation == CliOptions::Operation::bright;
  const std::string ext = extension(o.output);
  const bool point_list = bright && (ext == ".csv" || ext == ".json");
  if (bright && !point_list && ext != ".png" && ext != ".jpg" && ext != ".jpeg")
    throw UsageError("output '" + o.output + "': with --bright it must end in .csv or .json " +
                     "(the points) or .png, .jpg or .jpeg (the image with a glow at each point)");
  if (!point_list) output_format_for(o.output);  // unknown extensions are refused before work
  check_not_same_file(o.input, o.output);

  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> warnings;
  Image image = load_image(o.input, &warnings);
  const double decode_ms = ms_since(start);
  for (const std::string& w : warnings) std::cerr << "blurtool: warning: " << w << "\n";

  Runtime runtime(select_device(o.device));
  // The operation's filter with a given work-group size (the sweep builds one per size).
  auto make_filter = [&](WorkGroup wg) -> std::unique_ptr<Filter> {
    if (bright)
      return std::make_unique<BrightFinder>(runtime, o.bright_params, image.width, image.height);
    if (o.operation == CliOptions::Operation::box)
      return std::make_unique<BoxFilter>(runtime, o.box_params, image.width, image.height);
    GaussParams params = o.gauss_params;
    if (!wg.is_default()) params.wg = wg;
    return std::make_unique<GaussFilter>(runtime, params, image.width, image.height);
  };
  const bool row_segments =
      o.operation == CliOptions::Operation::gauss &&
      gauss_row_work_group(resolve_gauss_variant(o.gauss_params.variant, runtime.device()));
  std::unique_ptr<Filter> filter;
  try {
    filter = make_filter(WorkGroup{});
  } catch (const UsageError&) {
    // A sweep with no --wg need not start from the default size: if that one does not fit
    // (local memory for a large radius), the output is made with the first size that does.
    if (!o.sweep_wg || !o.gauss_params.wg.is_default()) throw;
    for (const WorkGroup& wg : sweep_sizes(row_segments)) {
      try {
        filter = make_filter(wg);
        break;
      } catch (const UsageError&) {
      }
    }
    if (!filter) throw;
  }
  const Image rgba = to_rgba(image);
  FilterRun result = run_filter(runtime, *filter, rgba, o.bench_runs);

  start = std::chrono::steady_clock::now();
  if (bright) {
    const std::vector<BrightPoint> points = static_cast<BrightFinder&>(*filter).points();
    if (point_list) {
      const std::string text =
          ext == ".csv" ? bright_points_csv(points) : bright_points_json(points);
      write_file_atomic(o.output, std::vector<std::uint8_t>(text.begin(), text.end()));
    } else {
      const Image glow = draw_glow(runtime, rgba, points, o.bright_params);
      save_image(from_rgba(glow, image.channels), o.output, o.quality);
    }
  } else {
    save_image(from_rgba(result.output, image.channels), o.output, o.quality);
  }
  const double encode_ms = ms_since(start);

  if (o.bench_runs > 0) {
    BenchReport report = make_report(runtime, *filter, result, o.bench_runs);
    if (o.sweep_wg) {
      print_sweep(report, sweep_work_groups(runtime, rgba, row_segments, make_filter, o.bench_runs),
                  o.bench_format, std::cout);
      return 0;
    }
    report.host_ms = {{"decode", decode_ms},
                      {"upload", result.upload_ms},
                      {"download", result.download_ms},
                      {"encode", encode_ms}};
    print_report(report, o.bench_format, std::cout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "blas") return run_blas_command(argc - 1, argv + 1);
    CliOptions o = parse_options(argc, argv);
    if (o.help) {
      std::cout << o.help_text;
      return 0;
    }
    if (o.version) {
      std::cout << "blurtool " << BLURTOOL_VERSION << "\n";
      return 0;
    }
    if (o.list_devices) {
      print_devices(std::cout);
      return 0;
    }
    return run(o);
  } catch (const UsageError& e) {
    std::cerr << "blurtool: " << e.what() << " (see blurtool --help)\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "blurtool: " << e.what() << "\n";
    return 1;
  } catch (const cl::Error& e) {
    std::cerr << "blurtool: OpenCL: " << describe_cl_error(e) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "blurtool: " << e.what() << "\n";
    return 1;
  }
}
