// The OpenCL runtime: device discovery and selection, one context and profiling queue, and the
// compiled-program cache.
//
// Every OpenCL call goes through the Khronos C++ bindings with exceptions enabled, so a failing
// call throws cl::Error carrying the call's name; describe_cl_error() turns that into a line
// such as "clCreateImage failed: CL_INVALID_IMAGE_SIZE (-40)". Programs are built from the
// sources embedded from kernels/*.cl, holding only the kernels a caller asks for (a family file
// holds many schedules, and a run uses one or two of them), and cached in memory, keyed by
// family, kernels and build options (the CLBlast approach); a failed build throws
// blurtool::Error with the build log and options. Their device binaries are also cached on disk
// (cache_directory()/programs), keyed by the kernels, the whole source text, the options, the
// platform, device and driver version, so that a second process skips the compiler (OpenCV's
// and Halide's approach).
#pragma once

#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_HPP_ENABLE_EXCEPTIONS
#include <CL/opencl.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "util/error.h"

namespace blurtool {

/// The name of an OpenCL error code, e.g. -40 -> "CL_INVALID_IMAGE_SIZE"; "CL_UNKNOWN_ERROR"
/// for codes outside the Khronos and common extension tables.
std::string cl_error_name(cl_int code);

/// One line for a failed OpenCL call: "<call> failed: <NAME> (<code>)", plus a hint for the
/// codes a user can act on (no platform: install pocl-opencl-icd or a GPU driver).
std::string describe_cl_error(const cl::Error& error);

/// What blurtool reports and uses about one OpenCL device.
struct DeviceInfo {
  int index = 0;            ///< position in the list printed by --list-devices
  std::string platform;     ///< platform name
  std::string name;         ///< device name
  std::string version;      ///< CL_DEVICE_VERSION
  std::string driver;       ///< CL_DRIVER_VERSION
  cl_device_type type = 0;  ///< CL_DEVICE_TYPE_GPU, _CPU, _ACCELERATOR, ...
  cl_uint compute_units = 0;
  cl_ulong global_mem = 0;    ///< bytes
  cl_ulong local_mem = 0;     ///< bytes
  cl_ulong max_alloc = 0;     ///< bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE
  size_t max_work_group = 0;  ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
  bool image_support = false;
  size_t image2d_max_width = 0;   ///< pixels
  size_t image2d_max_height = 0;  ///< pixels
  /// NVIDIA's compute capability, major number (cl_nv_device_attribute_query); 0 elsewhere.
  int nv_compute_major = 0;
  cl::Device device;

  /// "GPU", "CPU", "accelerator" or "other".
  std::string type_name() const;
  /// Whether CL_DEVICE_EXTENSIONS names `extension` (asks the driver each time).
  bool has_extension(const std::string& extension) const;
};

/// Every device of every platform, in platform then device order.
/// Throws blurtool::Error when no OpenCL platform is installed (error -1001).
std::vector<DeviceInfo> list_devices();

/// The error for a machine where list_devices() finds no device: the platforms that report none
/// by name (a platform without a device is mostly a driver that failed to start: PoCL, for one,
/// without a writable HOME or POCL_CACHE_DIR, or with a POCL_DEVICES naming no driver it has),
/// else how to install a driver.
std::string no_device_message();

/// The driver's short name in `device`'s version string, the word after "OpenCL x.y" ("PoCL",
/// "CUDA"); "" where the string has another form.
std::string device_driver_name(const DeviceInfo& device);

/// Picks a device: `spec` is an index into list_devices() or a case-insensitive substring of
/// "platform device", else of the driver's short name (device_driver_name: "pocl", "cuda"); an
/// empty spec falls back to the environment variable BLURTOOL_DEVICE, and
/// then to the first GPU, else the first CPU, else the first device.
/// Throws blurtool::UsageError naming `option` (the option that gave `spec`) when `spec` matches
/// nothing, blurtool::Error when there is no device at all.
DeviceInfo select_device(const std::string& spec, const std::string& option = parameter("device"));

/// The folder of blurtool's per-user caches (compiled programs, `blurtool tune` tables, CLBlast
/// tuning):
/// $BLURTOOL_CACHE_DIR, else $XDG_CACHE_HOME/blurtool, else $HOME/.cache/blurtool.
std::string cache_directory();

/// Whether `device`'s driver keeps compiled programs across processes itself: PoCL (unless
/// POCL_KERNEL_CACHE=0) and NVIDIA (unless CUDA_CACHE_DISABLE=1). There blurtool's program
/// cache only reads by default (see Runtime::program).
bool driver_caches_programs(const DeviceInfo& device);

/// `text` with every character but letters, digits, '.' and '-' replaced by '_' (for file names).
std::string file_name_safe(std::string text);

/// OpenCL C `source` with only the kernels named in `kernels` left: the definition of every
/// other kernel, and of every function that nothing left names, blanked out line by line, so
/// that the text keeps its line count and build-log line numbers still point at the right line.
/// Macros, types, declarations and preprocessor conditionals stay. `source` itself comes back
/// where `kernels` is empty, where it names a kernel the text does not define at file scope
/// (one a macro defines, say), or where the text cannot be split safely: braces that differ
/// between the branches of an #if, or a function whose lines hold a directive that later lines
/// may depend on (such a function just stays).
std::string select_kernels(const std::string& source, const std::vector<std::string>& kernels);

/// The OpenCL C text that Runtime::program compiles for `kernels` of family `family`:
/// kernels/common.cl; for a family "X_Y" where kernels/X_common.cl is embedded (what the
/// families of filter X share: box_window, box_running and box_buffer use box_common), that
/// file; then kernels/<family>.cl; each file after the first behind a
/// `#line 1 "kernels/<name>.cl"` directive, so that build logs give each file's own name and
/// line numbers; all of it passed through select_kernels. Throws blurtool::Error if no such
/// family is embedded.
std::string program_source(const std::string& family, const std::vector<std::string>& kernels);

/// A build log of program_source(family, ...) with NVIDIA's "<kernel>:N:" locations written as
/// "kernels/<file>.cl:N:" in the numbering of the file that holds physical line N: the family's
/// own, kernels/common.cl or the filter's kernels/X_common.cl. NVIDIA's compiler numbers the
/// physical lines of the program and ignores the #line directives that keep other drivers'
/// logs (PoCL's) in each file's numbering. Other text is left as it is.
std::string family_locations(const std::string& log, const std::string& family);

/// What Runtime::program did with the on-disk program cache, counted per Runtime.
struct ProgramCacheStats {
  int loaded = 0;  ///< programs created from a cached binary
  int built = 0;   ///< programs compiled from source
  int stored = 0;  ///< binaries written to the cache
};

/// A context and an in-order profiling command queue on one device, with a program cache.
class Runtime {
 public:
  /// Opens `device` (see select_device). Throws cl::Error if the context or queue fail.
  explicit Runtime(DeviceInfo device);

  const DeviceInfo& device() const { return device_; }
  cl::Context& context() { return context_; }
  /// In-order queue created with CL_QUEUE_PROFILING_ENABLE.
  cl::CommandQueue& queue() { return queue_; }

  /// The program for the kernels `kernels` of family `family` (kernels/<family>.cl; all of its
  /// kernels where `kernels` is empty), compiled from program_source(family, kernels) with
  /// `options` (-D definitions). A program holds no kernel beyond those asked for (unless the
  /// file cannot be split, see select_kernels), so a run compiles only what it uses: drivers
  /// compile every function of a program's text (NVIDIA down to machine code, PoCL to IR linked
  /// with its built-in library), and a family file holds several schedules. Kernels used together
  /// belong in one program (Runtime::kernels): each program costs a compiler front end. Compiled
  /// once per process for each family, kernel set (order and repeats do not matter) and
  /// options, and once per device and driver while the on-disk cache holds its binary:
  /// cache_directory()/programs/<hash>.bin, written atomically (a temporary file renamed into
  /// place, so concurrent processes never see half a file), holding the full key so that a
  /// hash collision or a damaged file is a miss, never a wrong program.
  /// BLURTOOL_PROGRAM_CACHE: unset or "auto" reads the cache and writes it only where the
  /// driver keeps no cache of its own (driver_caches_programs; see there why); "1" or "on"
  /// always writes; "0" or "off" neither reads nor writes. Failing to read or write it only
  /// costs a compile. Throws blurtool::Error with the build log and the options on a failed
  /// build, or if no such family is embedded.
  cl::Program& program(const std::string& family, const std::string& options,
                       const std::vector<std::string>& kernels = {});

  /// A Runtime on the same device and context with an in-order profiling queue of its own and
  /// the programs built so far, so that a second thread can keep the device busy while this
  /// one's transfers run (a kernel object is used by one thread only). Throws cl::Error if the
  /// queue cannot be created.
  std::unique_ptr<Runtime> sibling() const;

  /// What the on-disk program cache did in this Runtime so far.
  const ProgramCacheStats& program_cache_stats() const { return cache_stats_; }

  /// A new kernel object `name` from program(family, options, {name}): a program of that one
  /// kernel. Throws as program() does, and cl::Error (CL_INVALID_KERNEL_NAME) if the family
  /// defines no such kernel (after building the whole family: select_kernels keeps it all).
  cl::Kernel kernel(const std::string& family, const std::string& name, const std::string& options);

  /// New kernel objects for `names`, in that order, all from one program,
  /// program(family, options, names): for a schedule whose passes are built together (one
  /// compile instead of one a kernel). Throws as kernel() does.
  std::vector<cl::Kernel> kernels(const std::string& family, const std::vector<std::string>& names,
                                  const std::string& options);

 private:
  Runtime(const Runtime& base, cl::CommandQueue queue);

  DeviceInfo device_;
  cl::Context context_;
  cl::CommandQueue queue_;
  /// Keyed by family, options and the sorted kernel names ("" for the whole family).
  std::map<std::tuple<std::string, std::string, std::string>, cl::Program> programs_;
  ProgramCacheStats cache_stats_;
};

/// Kernel execution time of a finished event, in milliseconds, from its profiling counters
/// (CL_PROFILING_COMMAND_START to _END); 0 where the counters are no span (a start of 0 or an
/// end before the start, which NVIDIA's driver gives at times for a small copy).
double event_ms(const cl::Event& event);

/// The summed event_ms of finished events, 0 for any whose counters the driver does not give
/// (for the stage totals of untimed runs, which never fail for want of a timing).
double summed_event_ms(const std::vector<cl::Event>& events) noexcept;

/// The device-clock span of finished events, nanoseconds: the earliest CL_PROFILING_COMMAND_START
/// in *start and the latest _END in *end, over the events whose counters are a span (as
/// event_ms); both 0 where none is.
void event_span_ns(const std::vector<cl::Event>& events, std::uint64_t* start,
                   std::uint64_t* end) noexcept;

/// Throws cl::Error with the status of the first of `events` (finished; null ones skipped)
/// whose command failed (a negative CL_EVENT_COMMAND_EXECUTION_STATUS): clFinish need not
/// report the failure of a non-blocking command.
void throw_if_failed(const std::vector<cl::Event>& events);

/// Waits for what `queue` runs, ignoring its errors: for a caller already on its way out with
/// another error, so that no transfer outlives the host memory it reads or writes.
void finish_quietly(cl::CommandQueue& queue) noexcept;

/// Host wall time since `start`, in milliseconds (for the times profiling events cannot give:
/// decode, upload, download, encode, whole library calls).
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Rounds `n` up to a multiple of `m` (global sizes for padded NDRanges).
inline size_t round_up(size_t n, size_t m) {
  return (n + m - 1) / m * m;
}

}  // namespace blurtool
