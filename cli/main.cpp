// blurtool's entry point: parses the command line, runs the job, and turns every failure into
// one line on stderr and an exit status: 0 done, 1 a file or the device failed, 2 usage error.
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "cli/batch.h"
#include "cli/bench_cli.h"
#include "cli/blas_cli.h"
#include "cli/options.h"
#include "cli/probe_cli.h"
#include "cli/tune_cli.h"
#include "core/bench.h"
#include "core/box_blur.h"
#include "core/bright_points.h"
#include "core/cl_runtime.h"
#include "core/error.h"
#include "core/gauss_blur.h"
#include "core/host_memory.h"
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
  if (input == "-" || output == "-") return;
  std::error_code ec;
  bool same = fs::absolute(input, ec) == fs::absolute(output, ec) ||
              (fs::exists(output, ec) && fs::equivalent(input, output, ec));
  if (same) throw UsageError("output '" + output + "' is the input file; refusing to overwrite it");
}

// The encoded output to OUTPUT: standard output for "-", else the file, written atomically.
void write_output(const CliOptions& o, const std::vector<std::uint8_t>& bytes) {
  if (o.output == "-") {
    errno = 0;
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
        std::fflush(stdout) != 0) {
      const int err = errno;
      throw Error("<stdout>: cannot write" +
                  (err ? ": " + std::generic_category().message(err) : std::string()));
    }
  } else {
    write_file(o.output, bytes);
  }
}

// run_single's device part: the blur of the decoded `source` on `runtime` (in one piece or in
// tiles), the output written, the benchmark report printed when asked for.
// `prebuilt`: the filter made ahead for this image's size, depth and working space, or null.
int run_on_device(Runtime& runtime, const CliOptions& o, const Source& source, OutputKind kind,
                  double decode_ms, std::unique_ptr<Filter> prebuilt) {
  auto start = std::chrono::steady_clock::now();
  const int width = source.width(), height = source.height();
  const TileSize tiles = operation_tiles(runtime, o, width, height, source.wide());
  if (tiles.width < width || tiles.height < height) {
    write_output(o, encode_output(render_tiled(runtime, o, source, kind, tiles), kind, o, o.jobs));
    return 0;
  }
  auto make = [&](WorkGroup wg) {
    return make_filter(runtime, o, width, height, wg, source.depth(), source.space);
  };
  const bool row_segments =
      o.operation == CliOptions::Operation::gauss &&
      gauss_row_work_group(resolve_gauss_variant(o.gauss_params.variant,
                                                 gauss_radius(o.gauss_params), runtime.device()));
  std::unique_ptr<Filter> filter = std::move(prebuilt);
  try {
    if (!filter) filter = make(WorkGroup{});
  } catch (const UsageError&) {
    // A sweep with no --wg need not start from the default size: if that one does not fit
    // (local memory for a large radius), the output is made with the first size that does.
    if (!o.sweep_wg || !o.gauss_params.wg.is_default()) throw;
    for (const WorkGroup& wg : sweep_sizes(row_segments)) {
      try {
        filter = make(wg);
        break;
      } catch (const UsageError&) {
      }
    }
    if (!filter) throw;
  }
  SourceRun run = render_source(runtime, o, *filter, source, kind, o.bench_runs);
  const FilterRun& result = run.timings;

  start = std::chrono::steady_clock::now();
  write_output(o, encode_output(run.rendered, kind, o, o.jobs));
  const double encode_ms = ms_since(start);

  if (o.bench_runs > 0) {
    // The report goes to stdout, unless the image does.
    std::ostream& out = o.output == "-" ? std::cerr : std::cout;
    BenchReport report = make_report(runtime, *filter, result, o.bench_runs);
    if (o.sweep_wg) {
      print_sweep(report,
                  source.wide()
                      ? sweep_work_groups(runtime, source.rgba16, row_segments, make, o.bench_runs)
                      : sweep_work_groups(runtime, source.rgba, row_segments, make, o.bench_runs),
                  o.bench_format, out);
      return 0;
    }
    report.host_ms = {{"decode", decode_ms},
                      {"upload", result.upload_ms},
                      {"download", result.download_ms},
                      {"encode", encode_ms}};
    print_report(report, o.bench_format, out);
  }
  return 0;
}

// The device of --device (or the first of --devices), opened, and the filter for an image with
// `header`, made ahead of its decoding for the depth and working space the header predicts
// (transparency is assumed where the file has alpha); `key` says what it was made for.
struct PreparedDevice {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Filter> filter;
  FilterKey key;
};

PreparedDevice prepare_device(const CliOptions& o, const ImageHeader& header, OutputKind kind) {
  PreparedDevice p;
  p.runtime = std::make_unique<Runtime>(
      o.devices.empty() ? select_device(o.device) : select_device(o.devices.front(), "--devices"));
  if (o.operation == CliOptions::Operation::bright || o.sweep_wg ||
      (kind == OutputKind::jpeg && (header.width > 65535 || header.height > 65535)))
    return p;
  const WorkingSpace space = working_space(o, header.channels, header.sixteen_bit, true);
  const PixelDepth depth = device_depth(header.sixteen_bit, space);
  try {
    const TileSize tiles =
        operation_tiles(*p.runtime, o, header.width, header.height, depth == PixelDepth::u16);
    if (tiles.width < header.width || tiles.height < header.height) return p;
    p.filter = make_filter(*p.runtime, o, header.width, header.height, {}, depth, space);
    p.key = FilterKey{header.width, header.height, depth, space};
  } catch (...) {
    // Made again after decoding, where its error is reported in order.
    p.filter.reset();
  }
  return p;
}

// One image: INPUT (a file or "-") to OUTPUT (a file, replaced if it exists, or "-"), with the
// benchmark report when asked for.
int run_single(const CliOptions& o) {
  const std::string& input = o.inputs.front();
  const OutputKind kind = output_kind(o.output, input, o);  // bad names refused before work
  check_not_same_file(input, o.output);
  if (o.output == "-" && isatty(STDOUT_FILENO))
    throw UsageError("output '-' is a terminal; redirect standard output to a file or a pipe");

  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> warnings;
  const std::string name = input == "-" ? "<stdin>" : input;
  const std::vector<std::uint8_t> bytes = input == "-"
                                              ? read_all(STDIN_FILENO, name, o.max_file_bytes)
                                              : read_image_file(input, o.max_file_bytes);
  // The device is opened, and the filter built for the size the header gives, while the pixels
  // are decoded: context creation and program loading take as long as decoding a photo.
  const ImageHeader header = read_image_header(bytes, name, o.max_pixels, o.orient);
  std::future<PreparedDevice> device =
      std::async(std::launch::async, [&] { return prepare_device(o, header, kind); });
  Source source;
  try {
    source =
        make_source(decode_image_wide(bytes, name, &warnings, o.max_pixels, o.orient, true), o);
  } catch (...) {
    try {
      device.get();  // a decoding failure is reported before a device failure, as before
    } catch (...) {
    }
    throw;
  }
  const double decode_ms = ms_since(start);
  // --format over an output named for another format: done as asked, but said.
  if (!o.format.empty() && o.output != "-") {
    std::string ext = lower_extension(o.output);
    if (ext == ".jpeg") ext = ".jpg";
    static const char* const written[] = {"PNG", "JPEG", "CSV", "JSON"};  // by OutputKind
    if ((ext == ".png" || ext == ".jpg" || ext == ".csv" || ext == ".json") &&
        ext != "." + o.format)
      warnings.push_back("output '" + o.output + "' is named " + ext + " but --format " + o.format +
                         " writes " + written[static_cast<int>(kind)]);
  }
  if (!o.quiet)
    for (const std::string& w : warnings) std::cerr << "blurtool: warning: " << w << "\n";
  // JPEG stores each side in 16 bits: say so before the blur, naming the output.
  if (kind == OutputKind::jpeg && (source.width() > 65535 || source.height() > 65535))
    throw Error((o.output == "-" ? std::string("<stdout>") : o.output) + ": the image is " +
                std::to_string(source.width()) + "x" + std::to_string(source.height()) +
                ", too large for JPEG (at most 65535 pixels a side); write a PNG");

  PreparedDevice prepared = device.get();
  Runtime& runtime = *prepared.runtime;
  if (prepared.key != source.key()) prepared.filter.reset();
  int status = 0;
  with_device_faults(runtime, source.width(), source.height(), source.depth(), [&] {
    status = run_on_device(runtime, o, source, kind, decode_ms, std::move(prepared.filter));
  });
  return status;
}

// --version: the version, the OpenCL platforms found and the CLBlast this build links.
void print_version(std::ostream& out) {
  out << "blurtool " << BLURTOOL_VERSION << "\n";
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error&) {  // no ICD or no platform: say so, it is not an error here
  }
  if (platforms.empty()) out << "OpenCL: no platform found\n";
  for (const cl::Platform& p : platforms)
    out << "OpenCL: " << p.getInfo<CL_PLATFORM_NAME>() << " (" << p.getInfo<CL_PLATFORM_VERSION>()
        << ")\n";
  out << "CLBlast " << BLURTOOL_CLBLAST_VERSION << "\n";
}

// The whole command: its exit status, every failure reported.
int run_command(int argc, char** argv) {
  // Before OpenCL starts: PoCL's LLVM replaces an ignored signal's SIG_IGN with a handler of its
  // own, and the cleanup handlers would then no longer see that SIGHUP (nohup) or SIGINT (a
  // background job) is ignored; one arriving during a write removed that output.
  install_cleanup_handlers();
  // A usage error points to the help of the subcommand it came from.
  std::string help = "blurtool --help";
  try {
    const std::string first = argc > 1 ? argv[1] : "";
    using Command = int (*)(int, const char* const*);
    const std::pair<const char*, Command> subcommands[] = {{"blas", run_blas_command},
                                                           {"bench", run_bench_command},
                                                           {"tune", run_tune_command},
                                                           {"probe", run_probe_command}};
    for (const auto& [name, run] : subcommands) {
      if (first != name) continue;
      help = "blurtool " + first + " --help";
      return run(argc - 1, argv + 1);
    }
    CliOptions o = parse_options(argc, argv);
    if (o.help) {
      std::cout << o.help_text;
      return 0;
    }
    if (o.version) {
      print_version(std::cout);
      return 0;
    }
    if (o.list_devices) {
      print_devices(std::cout);
      return 0;
    }
    return o.batch ? run_batch(o) : run_single(o);
  } catch (const UsageError& e) {
    std::cerr << "blurtool: " << e.what() << " (see " << help << ")\n";
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

}  // namespace

int main(int argc, char** argv) {
  tune_host_allocator();  // image-sized buffers reused from image to image (host_memory.h)
  const int status = run_command(argc, argv);
  // Every output is written and renamed into place by now. std::exit would go on to unload
  // the OpenCL drivers (NVIDIA's, PoCL's LLVM) and run every library's teardown, tens of
  // milliseconds a process for nothing; _Exit skips them once standard output and error are
  // flushed. Sanitizer builds exit normally, so that LeakSanitizer still checks at exit.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__)
  return status;
#else
  std::_Exit(status);
#endif
}
