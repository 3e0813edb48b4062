// OpenCL device discovery, selection, context, queue and program cache (see cl_runtime.h).
#include "core/cl_runtime.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/error.h"
#include "core/image_io.h"
#include "core/kernel_sources.h"

namespace blurtool {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back()))))
    s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

constexpr cl_int kPlatformNotFound = -1001;  // CL_PLATFORM_NOT_FOUND_KHR (cl_khr_icd)

const char* kNoPlatformHint =
    "no OpenCL platform found (CL_PLATFORM_NOT_FOUND_KHR, -1001): install pocl-opencl-icd "
    "for the CPU, or the GPU vendor's OpenCL driver";

// --- On-disk program cache -------------------------------------------------------------------
// A file is kProgramMagic, the key's length as 8 little-endian bytes, the key, the binary's
// FNV-1a hash as 8 little-endian bytes, then the device binary (CL_PROGRAM_BINARIES). The key
// holds everything the binary depends on; the hash is checked before the driver sees the
// binary, since some drivers abort the process on a damaged one (PoCL asserts).

const char kProgramMagic[] = "blurtool program binary 2\n";

template <class Bytes>
std::uint64_t fnv1a64(const Bytes& bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::uint64_t read_u64(const std::string& bytes, size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

void append_u64(std::vector<std::uint8_t>& bytes, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// BLURTOOL_PROGRAM_CACHE: "0"/"off" neither reads nor writes; "1"/"on" reads and writes;
// anything else ("auto", unset) reads, and writes only where the driver keeps no compile
// cache of its own.
enum class CacheMode { off, on, automatic };

CacheMode program_cache_mode() {
  const char* e = std::getenv("BLURTOOL_PROGRAM_CACHE");
  if (e && (std::strcmp(e, "0") == 0 || std::strcmp(e, "off") == 0)) return CacheMode::off;
  if (e && (std::strcmp(e, "1") == 0 || std::strcmp(e, "on") == 0)) return CacheMode::on;
  return CacheMode::automatic;
}

bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, value) == 0;
}

std::string program_cache_path(const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(fnv1a64(key)));
  return cache_directory() + "/programs/" + name;
}

// The binary cached under `key`, or empty when there is none (or the file is another key's,
// or damaged).
std::vector<unsigned char> load_program_binary(const std::string& key) {
  std::ifstream in(program_cache_path(key), std::ios::binary);
  if (!in) return {};
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const size_t magic = sizeof kProgramMagic - 1;
  if (bytes.size() < magic + 8 || bytes.compare(0, magic, kProgramMagic) != 0) return {};
  const std::uint64_t key_size = read_u64(bytes, magic);
  const size_t binary_at = magic + 8 + key.size() + 8;
  if (key_size != key.size() || bytes.size() <= binary_at ||
      bytes.compare(magic + 8, key.size(), key) != 0)
    return {};
  std::vector<unsigned char> binary(bytes.begin() + static_cast<long>(binary_at), bytes.end());
  if (fnv1a64(binary) != read_u64(bytes, binary_at - 8)) return {};
  return binary;
}

// Writes `binary` under `key`; false if it could not (the cache is only an optimisation).
bool store_program_binary(const std::string& key, const std::vector<unsigned char>& binary) {
  if (binary.empty()) return false;
  std::vector<std::uint8_t> bytes(kProgramMagic, kProgramMagic + sizeof kProgramMagic - 1);
  append_u64(bytes, key.size());
  bytes.insert(bytes.end(), key.begin(), key.end());
  append_u64(bytes, fnv1a64(binary));
  bytes.insert(bytes.end(), binary.begin(), binary.end());
  const std::string path = program_cache_path(key);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  try {
    write_file_atomic(path, bytes);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

bool driver_caches_programs(const DeviceInfo& device) {
  // PoCL keeps compiled kernels in ~/.cache/pocl unless POCL_KERNEL_CACHE=0, and asking it for
  // a program's binary compiles every kernel in it (3 s more for kernels/box.cl on 2 cores);
  // NVIDIA keeps its JIT output in ~/.nv/ComputeCache unless CUDA_CACHE_DISABLE=1.
  if (device.platform.find("Portable Computing Language") != std::string::npos)
    return !env_is("POCL_KERNEL_CACHE", "0");
  if (device.platform.find("NVIDIA") != std::string::npos)
    return !env_is("CUDA_CACHE_DISABLE", "1");
  return false;
}

std::string cache_directory() {
  if (const char* e = std::getenv("BLURTOOL_CACHE_DIR"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/blurtool";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/blurtool";
}

std::string file_name_safe(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return text;
}

std::string cl_error_name(cl_int code) {
#define BLURTOOL_CL_ERROR(name) \
  case name:                    \
    return #name;
  switch (code) {
    BLURTOOL_CL_ERROR(CL_SUCCESS)
    BLURTOOL_CL_ERROR(CL_DEVICE_NOT_FOUND)
    BLURTOOL_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    BLURTOOL_CL_ERROR(CL_OUT_OF_RESOURCES)
    BLURTOOL_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    BLURTOOL_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_MEM_COPY_OVERLAP)
    BLURTOOL_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    BLURTOOL_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    BLURTOOL_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    BLURTOOL_CL_ERROR(CL_MAP_FAILURE)
    BLURTOOL_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    BLURTOOL_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    BLURTOOL_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    BLURTOOL_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    BLURTOOL_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    BLURTOOL_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_INVALID_VALUE)
    BLURTOOL_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    BLURTOOL_CL_ERROR(CL_INVALID_PLATFORM)
    BLURTOOL_CL_ERROR(CL_INVALID_DEVICE)
    BLURTOOL_CL_ERROR(CL_INVALID_CONTEXT)
    BLURTOOL_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    BLURTOOL_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    BLURTOOL_CL_ERROR(CL_INVALID_HOST_PTR)
    BLURTOOL_CL_ERROR(CL_INVALID_MEM_OBJECT)
    BLURTOOL_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    BLURTOOL_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_SAMPLER)
    BLURTOOL_CL_ERROR(CL_INVALID_BINARY)
    BLURTOOL_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    BLURTOOL_CL_ERROR(CL_INVALID_PROGRAM)
    BLURTOOL_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL_NAME)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL)
    BLURTOOL_CL_ERROR(CL_INVALID_ARG_INDEX)
    BLURTOOL_CL_ERROR(CL_INVALID_ARG_VALUE)
    BLURTOOL_CL_ERROR(CL_INVALID_ARG_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    BLURTOOL_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    BLURTOOL_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    BLURTOOL_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    BLURTOOL_CL_ERROR(CL_INVALID_EVENT)
    BLURTOOL_CL_ERROR(CL_INVALID_OPERATION)
    BLURTOOL_CL_ERROR(CL_INVALID_GL_OBJECT)
    BLURTOOL_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_MIP_LEVEL)
    BLURTOOL_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_PROPERTY)
    BLURTOOL_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    BLURTOOL_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    BLURTOOL_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    BLURTOOL_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
    case kPlatformNotFound:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR";
  }
#undef BLURTOOL_CL_ERROR
}

std::string describe_cl_error(const cl::Error& error) {
  if (error.err() == kPlatformNotFound) return kNoPlatformHint;
  std::ostringstream out;
  out << error.what() << " failed: " << cl_error_name(error.err()) << " (" << error.err() << ")";
  return out.str();
}

bool DeviceInfo::has_extension(const std::string& extension) const {
  return device.getInfo<CL_DEVICE_EXTENSIONS>().find(extension) != std::string::npos;
}

std::string DeviceInfo::type_name() const {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

std::vector<DeviceInfo> list_devices() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    if (e.err() == kPlatformNotFound) throw Error(kNoPlatformHint);
    throw Error(describe_cl_error(e));
  }
  if (platforms.empty()) throw Error(kNoPlatformHint);

  std::vector<DeviceInfo> result;
  for (const cl::Platform& platform : platforms) {
    std::vector<cl::Device> devices;
    try {
      platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error& e) {
      if (e.err() == CL_DEVICE_NOT_FOUND) continue;  // a platform with no device is no error
      throw;
    }
    for (const cl::Device& d : devices) {
      DeviceInfo info;
      info.index = static_cast<int>(result.size());
      info.platform = trim(platform.getInfo<CL_PLATFORM_NAME>());
      info.name = trim(d.getInfo<CL_DEVICE_NAME>());
      info.version = trim(d.getInfo<CL_DEVICE_VERSION>());
      info.driver = trim(d.getInfo<CL_DRIVER_VERSION>());
      info.type = d.getInfo<CL_DEVICE_TYPE>();
      info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
      info.global_mem = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
      info.local_mem = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
      info.max_alloc = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
      info.max_work_group = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
      info.image_support = d.getInfo<CL_DEVICE_IMAGE_SUPPORT>() == CL_TRUE;
      if (info.image_support) {
        info.image2d_max_width = d.getInfo<CL_DEVICE_IMAGE2D_MAX_WIDTH>();
        info.image2d_max_height = d.getInfo<CL_DEVICE_IMAGE2D_MAX_HEIGHT>();
      }
      if (d.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_nv_device_attribute_query") !=
          std::string::npos) {
        constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000;  // cl_ext.h's name
        cl_uint major = 0;
        if (clGetDeviceInfo(d(), kComputeCapabilityMajorNv, sizeof major, &major, nullptr) ==
            CL_SUCCESS)
          info.nv_compute_major = static_cast<int>(major);
      }
      info.device = d;
      result.push_back(std::move(info));
    }
  }
  return result;
}

std::string device_driver_name(const DeviceInfo& device) {
  std::istringstream words(device.version);
  std::string opencl, number, name;
  if (!(words >> opencl >> number >> name) || opencl != "OpenCL") return "";
  return name;
}

DeviceInfo select_device(const std::string& spec_arg, const std::string& option) {
  std::string spec = spec_arg;
  std::string source = option;
  if (spec.empty()) {
    const char* env = std::getenv("BLURTOOL_DEVICE");
    if (env && *env) {
      spec = env;
      source = "BLURTOOL_DEVICE";
    }
  }
  std::vector<DeviceInfo> devices = list_devices();
  if (devices.empty()) {
    throw Error(
        "no OpenCL device found: install pocl-opencl-icd for the CPU, or the GPU vendor's "
        "OpenCL driver");
  }
  if (spec.empty()) {
    for (cl_device_type wanted : {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_CPU}) {
      for (const DeviceInfo& d : devices)
        if (d.type & wanted) return d;
    }
    return devices.front();
  }
  if (std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    size_t index = std::stoul(spec);
    if (index >= devices.size()) {
      throw UsageError(source + " " + spec + ": no such device index (devices 0.." +
                       std::to_string(devices.size() - 1) + "; see --list-devices)");
    }
    return devices[index];
  }
  // Names, then the driver's short name, the word after "OpenCL x.y" in the device version
  // ("OpenCL 3.0 PoCL HSTR: ...", "OpenCL 3.0 CUDA"): `--device pocl` and `--device cuda` work.
  const std::string needle = lower(spec);
  for (const DeviceInfo& d : devices) {
    if (lower(d.platform + " " + d.name).find(needle) != std::string::npos) return d;
  }
  for (const DeviceInfo& d : devices) {
    if (lower(device_driver_name(d)).find(needle) != std::string::npos) return d;
  }
  throw UsageError(source + " '" + spec +
                   "': no OpenCL device or platform name, nor driver name, contains it (see "
                   "--list-devices)");
}

Runtime::Runtime(DeviceInfo device)
    : device_(std::move(device)),
      context_(device_.device),
      queue_(context_, device_.device, CL_QUEUE_PROFILING_ENABLE) {}

Runtime::Runtime(const Runtime& base, cl::CommandQueue queue)
    : device_(base.device_),
      context_(base.context_),
      queue_(std::move(queue)),
      programs_(base.programs_) {}

std::unique_ptr<Runtime> Runtime::sibling() const {
  cl::CommandQueue queue(context_, device_.device, CL_QUEUE_PROFILING_ENABLE);
  return std::unique_ptr<Runtime>(new Runtime(*this, std::move(queue)));
}

cl::Program& Runtime::program(const std::string& family, const std::string& schedule_options) {
  // BLURTOOL_CL_OPTIONS: build options for kernel work (say -cl-nv-verbose for NVIDIA's
  // register counts), appended to every program's own; part of the cache key like them.
  std::string options = schedule_options;
  if (const char* extra = std::getenv("BLURTOOL_CL_OPTIONS"); extra && *extra)
    options += std::string(options.empty() ? "" : " ") + extra;
  const auto id = std::make_pair(family, options);
  auto found = programs_.find(id);
  if (found != programs_.end()) return found->second;

  const auto& sources = kernel_sources();
  auto source = sources.find(family);
  if (source == sources.end()) throw Error("no embedded kernel family '" + family + "'");

  // kernels/common.cl goes first; #line keeps the family's own line numbers in build logs.
  std::string text = source->second;
  auto common = sources.find("common");
  if (family != "common" && common != sources.end()) text = common->second + "\n#line 1\n" + text;

  const CacheMode mode = program_cache_mode();
  const bool use_disk = mode != CacheMode::off;
  const bool store = mode == CacheMode::on || !driver_caches_programs(device_);
  const std::string key = device_.platform + "\n" + device_.name + "\n" + device_.version + "\n" +
                          device_.driver + "\n" + options + "\n" + text;
  if (use_disk) {
    const std::vector<unsigned char> binary = load_program_binary(key);
    if (!binary.empty()) {
      try {
        cl::Program cached(context_, {device_.device}, {binary});
        cached.build({device_.device}, options.c_str());
        ++cache_stats_.loaded;
        return programs_.emplace(id, cached).first->second;
      } catch (const cl::Error&) {
        // A binary the driver no longer accepts: compile from source and replace it.
      }
    }
  }

  cl::Program program(context_, text);
  try {
    program.build({device_.device}, options.c_str());
  } catch (const cl::BuildError& e) {
    std::string log;
    for (const auto& entry : e.getBuildLog()) log += entry.second;
    throw Error("building kernels/" + family + ".cl failed on " + device_.name + " with options '" +
                options + "':\n" + log);
  } catch (const cl::Error& e) {
    std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
    throw Error("building kernels/" + family + ".cl failed on " + device_.name + " with options '" +
                options + "': " + describe_cl_error(e) + "\n" + log);
  }
  ++cache_stats_.built;
  if (const char* e = std::getenv("BLURTOOL_BUILD_LOG"); e && *e && std::strcmp(e, "0") != 0) {
    const std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
    std::fprintf(stderr, "blurtool: built kernels/%s.cl on %s with options '%s'%s%s\n",
                 family.c_str(), device_.name.c_str(), options.c_str(),
                 log.find_first_not_of(" \n\r\t") == std::string::npos ? "" : ":\n", log.c_str());
  }
  if (use_disk && store) {
    try {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (binaries.size() == 1 && store_program_binary(key, binaries[0])) ++cache_stats_.stored;
    } catch (const cl::Error&) {
      // A driver that cannot hand back binaries: nothing to cache.
    }
  }
  return programs_.emplace(id, program).first->second;
}

cl::Kernel Runtime::kernel(const std::string& family, const std::string& name,
                           const std::string& options) {
  return cl::Kernel(program(family, options), name.c_str());
}

double event_ms(const cl::Event& event) {
  cl_ulong start = event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  cl_ulong end = event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  return static_cast<double>(end - start) * 1e-6;
}

}  // namespace blurtool
