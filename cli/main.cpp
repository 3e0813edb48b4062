// blurtool's entry point: parses the command line, runs the job, and turns every failure into
// one line on stderr and an exit status: 0 done, 1 a file or the device failed, 2 usage error.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/bench_cli.h"
#include "cli/blas_cli.h"
#include "cli/options.h"
#include "cli/probe_cli.h"
#include "cli/tune_cli.h"
#include "filters/gauss/gauss_blur.h"
#include "image/image_io.h"
#include "pipeline/batch_pipeline.h"
#include "pipeline/pipeline.h"
#include "runtime/cl_runtime.h"
#include "tools/bench.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/host_memory.h"
#include "util/trace.h"

using namespace blurtool;

namespace {

void print_devices(std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line, "%-3s %-28s %-40s %-5s %4s %10s %10s %6s %s\n", "#", "platform",
                "device", "type", "CUs", "global MiB", "local KiB", "images", "max image");
  const std::vector<DeviceInfo> devices = list_devices();
  if (devices.empty()) throw Error(no_device_message());
  out << line;
  for (const DeviceInfo& d : devices) {
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

// Whether o's Gaussian runs as row segments on `device` (the work-group sizes a sweep tries).
bool row_segments(const CliOptions& o, const DeviceInfo& device) {
  return o.operation == CliOptions::Operation::gauss &&
         gauss_row_work_group(
             resolve_gauss_variant(o.gauss_params.variant, gauss_radius(o.gauss_params), device));
}

#if defined(BLURTOOL_SANITIZED)       // CMake: BLURTOOL_SANITIZE or BLURTOOL_FUZZ
constexpr bool kExitQuickly = false;  // LeakSanitizer checks at a normal exit
#else
constexpr bool kExitQuickly = true;  // main ends with _Exit
#endif

// Leaves `run`'s device and filter to the process's end: releasing them frees the programs,
// the context and, on PoCL, its compiler's state (a few hundredths of a second) just before
// _Exit would drop them anyway.
void keep_until_exit(SingleRun& run) {
  if (!kExitQuickly) return;
  static_cast<void>(run.filter.release());
  static_cast<void>(run.runtime.release());
}

// One image through the pipeline (run_single), then the --bench report or the --sweep-wg rows
// from what it returns: to stdout, unless the image goes there.
int run_single_image(const CliOptions& o) {
  DeviceRequest request;
  request.runs = o.bench_runs;
  if (o.bench_runs > 0) request.timed_by = o.sweep_wg ? "--sweep-wg" : "--bench";
  // A sweep makes its filters after decoding; with no --wg it need not start from the default
  // size: if that one does not fit (local memory for a large radius), the output is made with
  // the first size that does.
  request.make_ahead = !o.sweep_wg;
  if (o.sweep_wg && o.gauss_params.wg.is_default())
    request.fallback_work_groups = [&o](const Runtime& runtime) {
      return sweep_sizes(row_segments(o, runtime.device()));
    };
  // What a killed run over this output left (a batch counts them in its summary).
  if (const size_t stale = remove_stale_temp_files({o.output}); stale > 0 && !o.quiet)
    std::cerr << "blurtool: note: removed " << stale << " left-over temporary file"
              << (stale == 1 ? "" : "s") << " of '" << o.output << "' (older than an hour)\n";
  SingleRun run = run_single(o, request);
  if (o.bench_runs == 0) {
    keep_until_exit(run);
    return 0;
  }

  Runtime& runtime = *run.runtime;
  const Source& source = run.source;
  std::ostream& out = o.output == "-" ? std::cerr : std::cout;
  with_device_faults(runtime, source.width(), source.height(), source.depth(), [&] {
    BenchReport report = make_report(runtime, *run.filter, run.timings, o.bench_runs);
    if (o.sweep_wg) {
      // A schedule that sets its own work-group (tiled, the tensor-core ones; auto picks tiled
      // on CPUs) skips every size: say which would sweep, rather than leave only skipped rows.
      if (const auto* gauss = dynamic_cast<const GaussFilter*>(run.filter.get())) {
        const GaussVariant v = gauss->params().variant;
        if (v == GaussVariant::tiled || gauss_is_mma(v))
          std::cerr << "blurtool: note: --sweep-wg: variant " << name_of(gauss_variant_table(), v)
                    << (o.gauss_params.variant == GaussVariant::automatic ? " (auto's pick here)"
                                                                          : "")
                    << " takes no work-group size, so every size is skipped; sweep one that "
                       "does with --variant naive, naive-local, separable, separable-linear, "
                       "separable-local, fused-local, fused or separable-buffer\n";
      }
      const bool rows = row_segments(o, runtime.device());
      auto make = [&](WorkGroup wg) {
        return make_filter(runtime, o, source.width(), source.height(), wg, source.depth(),
                           source.space);
      };
      print_sweep(
          report,
          source.wide() ? sweep_work_groups(runtime, source.rgba16, rows, make, o.bench_runs)
          : source.has_planes()
              ? sweep_work_groups(runtime, ycbcr_to_rgba(source.planes), rows, make, o.bench_runs)
              : sweep_work_groups(runtime, source.rgba, rows, make, o.bench_runs),
          o.bench_format, out);
      return;
    }
    // "+colour": JPEG colour planes moved, converted on the device (--jpeg-codec)
    report.host_ms = {
        {"decode", run.decode_ms},
        {run.timings.planes_in ? "upload+colour" : "upload", run.timings.upload_ms},
        {run.timings.planes_out ? "download+colour" : "download", run.timings.download_ms},
        {"encode", run.encode_ms}};
    print_report(report, o.bench_format, out);
  });
  keep_until_exit(run);
  return 0;
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
    set_warnings_quiet(o.quiet);  // a tuning table ignored, told by the layers below
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
    return o.batch ? run_batch(o) : run_single_image(o);
  } catch (const UsageError& e) {
    // A message that already says where to look (e.g. --list-devices) gets no second pointer.
    const std::string what = e.what();
    std::cerr << "blurtool: " << what
              << (what.find("; see ") == std::string::npos &&
                          what.find("(see ") == std::string::npos
                      ? " (see " + help + ")"
                      : "")
              << "\n";
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
  set_parameter_spelling(option_spelling);  // messages name options as they are typed
  const int status = run_command(argc, argv);
  // Every output is written and renamed into place by now. std::exit would go on to unload
  // the OpenCL drivers (NVIDIA's, PoCL's LLVM) and run every library's teardown, tens of
  // milliseconds a process for nothing; _Exit skips them once standard output and error are
  // flushed. Sanitizer builds exit normally, so that LeakSanitizer still checks at exit.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  trace("exit");  // the kernel's teardown of the device context comes after
  if (!kExitQuickly) return status;
  std::_Exit(status);
}
