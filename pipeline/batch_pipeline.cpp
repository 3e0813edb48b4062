// The batch driver (see batch_pipeline.h).
//
// Stages (pipeline.h): decode (host pool) -> device (threads per device, each with its own
// queue on the device's context and compiled programs for the whole batch) -> encode and write
// (host pool). The pool's threads take an encode when one is waiting, else a decode, so that
// they follow whichever stage is short of hands; a cap on the images held in memory keeps
// decoders from running far ahead of the devices or the encoders. The devices are opened
// (context, programs) while the first images decode: that set-up takes as long as decoding
// dozens of photos. With no device named, a box filter's or Gaussian's images are meanwhile
// filtered on the host's cores by the workers themselves (HostLane), their outputs written once the
// devices are open; with --device host, every image is.
#include "pipeline/batch_pipeline.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include "filters/filter.h"
#include "filters/jpeg_entropy_device.h"
#include "filters/ycbcr_device.h"
#include "pipeline/batch_report.h"
#include "pipeline/file_list.h"
#include "pipeline/pipeline.h"
#include "pipeline/strip_pipeline.h"
#include "util/env.h"
#include "util/host_memory.h"
#include "util/trace.h"

namespace fs = std::filesystem;

namespace blurtool {

namespace {

// One image of the batch.
struct Item {
  std::string input, output;
  OutputKind kind = OutputKind::png;
};

// What planning found: the images to make, and those already failed or skipped.
struct Plan {
  std::vector<Item> items;
  std::vector<std::pair<std::string, std::string>> failed;   // input, reason
  std::vector<std::pair<std::string, std::string>> skipped;  // input, its existing output
  size_t folders_without_images = 0;
  // Regular files of the folders walked whose names is_image_name refuses (not hidden ones,
  // where blurtool's own temporary files are, nor the --report file).
  size_t ignored = 0;
  size_t listed_in_output = 0;  // --files-from paths in the output folder, not inputs
};

// The output name for `input` found at `relative` under its root: --format's extension, else
// the input's own when it is an image name, else ".png".
fs::path output_name(const fs::path& relative, const JobOptions& o) {
  fs::path out = relative;
  if (!o.format.empty())
    out.replace_extension("." + o.format);
  else if (!is_image_name(relative.string()))
    out.replace_extension(".png");
  return out;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec) && !ec) return true;
  return fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

// The image files of the folder `dir` (found as `relative` under its input folder) and, with
// `recursive`, of its sub-folders, as (file, output path relative to the output folder). Hidden
// names are skipped, as is the output folder; links to files count as files, links to folders
// are not followed. The output path is built from the names as found, never from a link's
// target. A folder that cannot be read is a failure of the batch, not a silent gap.
void scan_folder(const fs::path& dir, const fs::path& relative, bool recursive,
                 const fs::path& out_canonical, const JobOptions& o,
                 std::vector<std::pair<fs::path, fs::path>>& found, Plan& p) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    p.failed.emplace_back(dir.string(), "cannot read the folder: " + ec.message());
    return;
  }
  std::vector<fs::directory_entry> entries;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      p.failed.emplace_back(dir.string(), "cannot read the folder: " + ec.message());
      return;
    }
    entries.push_back(*it);
  }
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (e.is_symlink(ec) ? false : e.is_directory(ec)) {
      if (recursive && fs::weakly_canonical(e.path(), ec) != out_canonical)
        scan_folder(e.path(), relative / name, recursive, out_canonical, o, found, p);
      continue;
    }
    if (e.is_regular_file(ec) && is_image_name(name))
      found.emplace_back(e.path(), output_name(relative / name, o));
    else if (e.is_regular_file(ec) && !(!o.report.empty() && same_file(o.report, e.path())))
      ++p.ignored;  // the one test of an image name decides what is ignored too
    else if (const std::string why = is_image_name(name) ? not_a_file_reason(e.path()) : "";
             !why.empty())
      p.failed.emplace_back(e.path().string(), why);  // a FIFO's open would wait for a writer
  }
}

// Throws UsageError where o's output folder names a file.
void check_output_folder(const JobOptions& o) {
  std::error_code ec;
  // "file/" does not exist to stat(): look at the name without its trailing slashes.
  std::string bare = o.output;
  while (bare.size() > 1 && bare.back() == '/') bare.pop_back();
  if (fs::exists(bare, ec) && !fs::is_directory(bare, ec))
    throw UsageError("output folder '" + o.output + "' is a file; name a folder");
}

// The images of o's inputs and of the paths --files-from listed (`listed_paths`), and what
// becomes of each (the output folder checked first:
// check_output_folder).
Plan plan(const JobOptions& o, const std::vector<std::string>& listed_paths) {
  std::error_code ec;
  const fs::path out_dir = o.output;
  const fs::path out_canonical = fs::weakly_canonical(out_dir, ec);

  // (input file, output path relative to the output folder)
  std::vector<std::pair<fs::path, fs::path>> found;
  Plan p;
  // A folder's images, sorted, added to `found` (relative to `mirror` under the output folder).
  auto add_folder = [&](const std::string& input, const fs::path& mirror) {
    std::vector<std::pair<fs::path, fs::path>> here;
    const size_t failed_before = p.failed.size();
    scan_folder(input, mirror, o.recursive, out_canonical, o, here, p);
    if (here.empty() && p.failed.size() == failed_before) ++p.folders_without_images;
    std::sort(here.begin(), here.end());
    found.insert(found.end(), here.begin(), here.end());
  };
  // --files-from: each path mirrored under the output folder, each named once; what lies in
  // the output folder is no input (a rerun of `find .` lists the outputs too), as in a scan.
  std::set<std::string> listed;
  const std::string out_prefix = out_canonical.string() + "/";
  for (const std::string& input : listed_paths) {
    if (!listed.insert(path_key(input)).second) continue;
    const std::string canonical = fs::weakly_canonical(input, ec).string();
    if (!ec && (canonical == out_canonical.string() || canonical.rfind(out_prefix, 0) == 0)) {
      ++p.listed_in_output;
      continue;
    }
    if (input == "-") {
      p.failed.emplace_back(input, "'-' (standard input) is no file of a list");
      continue;
    }
    const std::string mirror = mirrored_path(input);
    if (mirror.empty()) {
      p.failed.emplace_back(input, path_key(input) == "/"
                                       ? "the root folder has no place under the output folder; "
                                         "list the folders under it"
                                       : "a listed path that leaves its starting folder ('..') has "
                                         "no place under the output folder; list it from a folder "
                                         "that holds it");
      continue;
    }
    if (fs::is_directory(input, ec)) {
      add_folder(input, mirror);
    } else if (const std::string why = not_a_file_reason(input); !why.empty()) {
      p.failed.emplace_back(input, why);
    } else {
      found.emplace_back(input, output_name(mirror, o));
    }
  }
  for (const std::string& input : o.inputs) {
    if (!fs::is_directory(input, ec)) {
      const fs::path name = fs::path(input).filename();
      if (name.empty()) {  // "x/" that is no folder: say why, as opening it would
        struct stat st;
        const int err = ::stat(input.c_str(), &st) != 0 ? errno : ENOTDIR;
        p.failed.emplace_back(input, "cannot open: " + std::generic_category().message(err));
        continue;
      }
      if (const std::string why = not_a_file_reason(input); !why.empty()) {
        p.failed.emplace_back(input, why);  // a FIFO's open would wait for a writer
        continue;
      }
      found.emplace_back(input, output_name(name, o));
      continue;
    }
    add_folder(input, fs::path());
  }
  // --shard: this run's share of the failures found so far; of the files, below. Where two
  // inputs give one output, the one whose path sorts first makes it; sorted, every shard's run
  // agrees on which, whatever the order of its list.
  p.failed.erase(std::remove_if(p.failed.begin(), p.failed.end(),
                                [&](const auto& f) { return !o.shard.takes(f.first); }),
                 p.failed.end());
  if (o.shard.count > 1) {
    std::vector<std::pair<std::string, size_t>> keys;  // (path key, position in found)
    for (size_t i = 0; i < found.size(); ++i) keys.emplace_back(path_key(found[i].first), i);
    std::sort(keys.begin(), keys.end());
    std::vector<std::pair<fs::path, fs::path>> sorted;
    for (const auto& [key, i] : keys) sorted.push_back(std::move(found[i]));
    found = std::move(sorted);
  }

  // Every input file, by name and by identity, so that no output replaces another input (with
  // --force an output may otherwise land on an input of another name: a.png -> a.jpg).
  std::map<fs::path, std::string> inputs;
  std::map<std::pair<dev_t, ino_t>, std::string> input_ids;
  for (const auto& [input, relative] : found) {
    const fs::path canonical = fs::weakly_canonical(input, ec);
    if (!ec && !canonical.empty()) inputs.emplace(canonical, input.string());
    struct stat st;
    if (::stat(input.c_str(), &st) == 0) input_ids.emplace(std::pair{st.st_dev, st.st_ino}, input);
  }
  // The input that `out` is, by name or by identity (a hard link), or null.
  auto input_at = [&](const fs::path& out) -> const std::string* {
    const fs::path canonical = fs::weakly_canonical(out, ec);
    if (auto it = inputs.find(canonical); !ec && !canonical.empty() && it != inputs.end())
      return &it->second;
    struct stat st;
    if (::stat(out.c_str(), &st) != 0) return nullptr;
    const auto it = input_ids.find({st.st_dev, st.st_ino});
    return it == input_ids.end() ? nullptr : &it->second;
  };

  std::map<fs::path, std::string> claimed;          // output -> the input that makes it
  std::set<std::pair<std::string, fs::path>> seen;  // an input named twice is made once
  for (const auto& [input, relative] : found) {
    const fs::path out = out_dir / relative;
    const std::string in = input.string();
    if (!seen.emplace(path_key(in), relative).second) continue;
    // Every input is checked against all the others, whatever its shard, so that the shards'
    // runs agree on which input makes an output; each run reports and makes only its own.
    const bool mine = o.shard.takes(in);
    if (same_file(input, out)) {
      if (mine)
        p.failed.emplace_back(
            in, "output '" + out.string() + "' is the input file; refusing to overwrite it");
      continue;
    }
    if (const std::string* other = input_at(out)) {
      if (mine)
        p.failed.emplace_back(in, "output '" + out.string() + "' is another input ('" + *other +
                                      "'); refusing to overwrite it");
      continue;
    }
    const fs::path key = fs::weakly_canonical(out, ec);
    if (auto it = claimed.find(key); it != claimed.end()) {
      if (mine)
        p.failed.emplace_back(
            in, "output '" + out.string() + "' is also the output of '" + it->second + "'");
      continue;
    }
    claimed[key] = in;
    if (!mine) continue;
    if (!o.force && fs::exists(out, ec)) {
      p.skipped.emplace_back(in, out.string());
      continue;
    }
    Item item{in, out.string(), OutputKind::png};
    item.kind = output_kind(item.output, in, o);
    p.items.push_back(std::move(item));
  }
  return p;
}

// The devices of --devices (every one for "all"), or the one of --device.
std::vector<DeviceInfo> batch_devices(const JobOptions& o) {
  if (o.devices.empty()) return {select_device(o.device)};
  std::vector<DeviceInfo> all = every_device(list_devices()), chosen;
  std::set<int> seen;
  for (const std::string& spec : o.devices) {
    std::vector<DeviceInfo> add =
        spec == "all" ? all : std::vector{select_device(spec, parameter("devices"))};
    for (DeviceInfo& d : add)
      if (seen.insert(d.index).second) chosen.push_back(std::move(d));
  }
  if (chosen.empty()) throw Error(parameter("devices") + ": no OpenCL device found");
  return chosen;
}

// Where a batch's box filters and Gaussians run on the host's cores (box_blur_host,
// gauss_blur_host), in the workers' hands: on none; on the images decoded while the devices open
// (no device named: the host is then idle in a GPU driver's start, tenths of a second, and a
// filter costs a worker a few milliseconds an image); on every image (--device host, no device
// opened).
enum class HostLane { none, while_opening, only };

// The host lane's estimate of a batch's rest (host_finishes_first) below which a batch with no
// device named stays on the host though a GPU is there. A GPU's context takes 0.1-0.15 s to
// make and about 0.1 s to tear down at the process's exit (opencl_floor, H200 machine), and
// its JPEG stages and filter then save the workers about 40% of an image's host time (14 of
// 25 ms of CPU, --bench): it pays for itself past about 0.75 s of host work, 400-500 1920x1080
// JPEGs on 16 cores (docs/notes/whole-job.md, "A short batch stays on the host").
// BLURTOOL_HOST_BATCH_MS sets it (for measurements and tests).
constexpr int kHostBatchMs = 750;

// The host lane of o's batch. Throws UsageError where the host is named (--device host,
// --devices host, BLURTOOL_DEVICE=host) for a job it cannot run (host_job_refusal), or beside
// devices in --devices.
HostLane host_lane(const JobOptions& o) {
  if (o.devices.size() > 1 && std::any_of(o.devices.begin(), o.devices.end(), is_host_spec))
    throw UsageError(parameter("devices") +
                     ": host runs a batch alone; name OpenCL devices or host, not both");
  const NamedDevice named = named_device(o);
  if (named.spec.empty())
    return host_job_refusal(o).empty() ? HostLane::while_opening : HostLane::none;
  if (!is_host_spec(named.spec)) return HostLane::none;
  if (const std::string why = host_job_refusal(o); !why.empty())
    throw UsageError(named.source + ": " + why + "; name an OpenCL device instead of the host");
  return HostLane::only;
}

// What the last batch with the same device options found, kept in
// cache_directory()/batch-devices as lines of "KEY<tab>gpu" or "KEY<tab>other": whether every
// one of its devices ran JPEG's colour stages (jpeg_colour_on_device with --jpeg-codec auto).
// A batch decodes to colour planes from its start where this says gpu, instead of from when
// its devices are known (0.15-0.2 s into a batch on the H100 machine, 80 of 400 images); a
// stale answer only costs time (planes then go through a CPU device's conversion kernels) and
// is rewritten. KEY: the options and the variable that choose the devices (not the OpenCL
// loader's variables: launchers such as a GPU machine's wrapper point OCL_ICD_VENDORS at a
// fresh folder each run; a changed set of drivers costs one batch's head start).
std::string device_memo_key(const JobOptions& o) {
  std::string key = "device=" + o.device + " devices=";
  for (const std::string& d : o.devices) key += d + ",";
  const char* env = std::getenv("BLURTOOL_DEVICE");
  key += std::string(" BLURTOOL_DEVICE=") + (env ? env : "");
  for (char& c : key)
    if (c == '\t' || c == '\n') c = ' ';
  return key;
}

std::vector<std::string> device_memo_lines() {
  std::vector<std::string> lines;
  std::ifstream in(cache_directory() + "/batch-devices");
  for (std::string line; std::getline(in, line) && lines.size() < 64;) lines.push_back(line);
  return lines;
}

// The memo's answer for o's devices: 1 gpu, 0 other, -1 none.
int device_memo(const JobOptions& o) {
  const std::string key = device_memo_key(o) + "\t";
  for (const std::string& line : device_memo_lines())
    if (line.compare(0, key.size(), key) == 0) return line.substr(key.size()) == "gpu" ? 1 : 0;
  return -1;
}

// Records `gpu` for o's devices (the last 32 keys kept); failures are ignored.
void remember_devices(const JobOptions& o, bool gpu) {
  // Without HOME or a cache variable, cache_directory() is under the working folder: no
  // memory then rather than a .cache folder among the user's files.
  const std::string folder = cache_directory();
  if (folder.rfind("./", 0) == 0) return;
  const std::string key = device_memo_key(o) + "\t";
  std::string text;
  std::vector<std::string> lines = device_memo_lines();
  lines.erase(std::remove_if(lines.begin(), lines.end(),
                             [&](const std::string& l) { return l.rfind(key, 0) == 0; }),
              lines.end());
  if (lines.size() >= 32) lines.erase(lines.begin(), lines.end() - 31);
  for (const std::string& l : lines) text += l + "\n";
  text += key + (gpu ? "gpu" : "other") + "\n";
  try {
    std::error_code ec;
    fs::create_directories(folder, ec);
    write_file_atomic(folder + "/batch-devices",
                      std::vector<std::uint8_t>(text.begin(), text.end()));
  } catch (const Error&) {  // an unwritable cache: the next batch starts with whole decoding
  }
}

// CPU time of the calling thread, milliseconds.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// The CPU (of the calling thread) and wall milliseconds of one stage of one image, from its
// construction to lap().
class StageClock {
 public:
  struct Lap {
    double cpu_ms, wall_ms;
  };
  Lap lap() const { return {thread_cpu_ms() - cpu0_, ms_since(wall0_)}; }

 private:
  double cpu0_ = thread_cpu_ms();
  std::chrono::steady_clock::time_point wall0_ = std::chrono::steady_clock::now();
};

// The time a batch's stages took, summed over its images (--bench): CPU of the thread that ran
// each stage and wall time, milliseconds, and the images counted.
struct StageTimes {
  struct Stage {
    double cpu_ms = 0, wall_ms = 0;
    size_t images = 0;
  };
  Stage decode, device, encode;
  Stage host;  // filters run by the workers on the host's cores (HostLane)
  double upload_ms = 0, kernel_ms = 0, download_ms = 0;  // of the device stage
  double upload_copy_ms = 0, download_copy_ms = 0;       // the copies alone (events)
  size_t pinned_uploads = 0, pinned_downloads = 0;       // from and into pinned memory
  size_t in_place_uploads = 0, in_place_downloads = 0;   // not copied (runs_in_place)
  double known_s = 0;                    // seconds into the batch when the devices were known
  double ready_s = 0;                    // ... when every device was open
  double first_result_s = 0;             // ... when the first image came off a device
  size_t planes_in = 0, planes_out = 0;  // images decoded to, results made as, colour planes
  size_t blocks_in = 0, blocks_out = 0;  // ... of them as DCT blocks
  size_t sparse_in = 0, sparse_out = 0;  // ... of those sparse
  size_t entropy_in = 0;                 // ... of those entropy-coded (decoded on a device)
  size_t entropy_on_host = 0;            // ... of which the device left to libjpeg
  // The device's entropy decoding (EntropyDecoder), --bench only: launches, the images they
  // decoded, and the kernels' and the scans' uploads' device times summed.
  size_t entropy_launches = 0, entropy_images = 0;
  size_t entropy_timed_images = 0;   // of those, in launches the driver gave a kernel time for
  size_t entropy_timed_uploads = 0;  // the images whose scan's upload the driver gave a time for
  double entropy_kernel_ms = 0, entropy_upload_ms = 0;
  // The images the kernel left to libjpeg, by its reason (EntropyDecoder::decode's status[1]:
  // 2 not in step, 3 a run out of step or at a bad code, 4 a bad code or data past its
  // segment, 5 a segment's blocks ending early; 0 any other).
  std::array<size_t, 6> entropy_refused{};
  // Launches that failed (their images decoded by libjpeg), and the first one's reason.
  size_t entropy_failed_launches = 0, entropy_failed_images = 0;
  std::string entropy_failure;
  // Seconds the threads waited, summed over threads: workers while the devices opened, at the
  // cap of images in flight with images left to decode, with none left; device lanes for
  // decoded images.
  double wait_opening_s = 0, wait_cap_s = 0, wait_tail_s = 0, wait_lanes_s = 0;
  // Each image's round trip on its device's clock (FilterRun::device_start_ns, _end_ns), for
  // how busy the device was (device_busy); kept for --bench only.
  struct Span {
    const void* device;
    std::uint64_t start_ns, end_ns;
  };
  std::vector<Span> spans;
  // The host clock of the round trips (FilterRun), over the images that timed theirs.
  double enqueue_ms = 0, wait_ms = 0, check_ms = 0;
  size_t commands = 0, timed_round_trips = 0;
};

// For the spans of one device: the fraction of the time from the first round trip's start to
// the last one's end in which at least one round trip was on the device, and that time in
// seconds. (A round trip's span includes the gaps between its commands.)
std::pair<double, double> device_busy(std::vector<StageTimes::Span> spans) {
  if (spans.empty()) return {0, 0};
  std::sort(spans.begin(), spans.end(), [](const StageTimes::Span& a, const StageTimes::Span& b) {
    return a.start_ns < b.start_ns;
  });
  std::uint64_t busy = 0, from = spans[0].start_ns, to = spans[0].end_ns;
  for (const StageTimes::Span& s : spans) {
    if (s.start_ns > to) {
      busy += to - from;
      from = s.start_ns;
    }
    to = std::max(to, s.end_ns);
  }
  busy += to - from;
  const double whole = static_cast<double>(to - spans[0].start_ns);
  return {whole > 0 ? busy / whole : 0, whole * 1e-9};
}

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

// The message of the exception `e`, as a failed image reports it.
std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const cl::Error& error) {
    return "OpenCL: " + describe_cl_error(error);
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "unknown error";
  }
}

// The pipeline over plan.items: all state under one mutex, one condition variable.
class Pipeline {
 public:
  // `devices`: batch_devices(o), being resolved since before the plan was made.
  // `report`: --report's file, or null.
  // `host`: host_lane(o).
  Pipeline(const JobOptions& o, const Plan& plan, std::future<std::vector<DeviceInfo>> devices,
           BatchReport* report, HostLane host)
      : o_(o),
        items_(plan.items),
        plan_(plan),
        devices_found_(std::move(devices)),
        host_(host),
        report_(report) {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    workers_ = o.jobs > 0 ? static_cast<size_t>(o.jobs) : hw;
    opening_reserve_ = hw >= 8 && workers_ + 2 > hw ? workers_ + 2 - hw : 0;
    cap_ = workers_ + 2;  // until the devices are known (open_devices)
    if (o.jpeg_codec == JobOptions::JpegCodec::automatic) {
      memo_ = device_memo(o);
      planes_ = memo_ == 1;
      entropy_ = planes_ && jpeg_entropy_on_device(true);  // the memo says "gpu"
    }
    failed_ = plan.failed.size();
    skipped_ = plan.skipped.size();
    progress_ = !o.quiet && isatty(STDERR_FILENO);
  }

  // Runs the batch. A device that cannot be opened, or that cannot run the schedule asked for
  // (a usage error), ends the batch before any output is written: its error is rethrown here,
  // and what the images said while the devices opened is dropped.
  void run() {
    start_ = std::chrono::steady_clock::now();
    // The device list, until it is known; none to open with --device host.
    opening_ = items_.empty() || host_ == HostLane::only ? 0 : 1;
    if (report_) {  // what planning found: written once the devices are open, as the rest
      FileRecord r;
      r.status = FileRecord::Status::failed;
      for (const auto& [input, why] : plan_.failed) {
        r.input = input;
        r.reason = why;
        held_records_.push_back(r);
      }
      r.status = FileRecord::Status::skipped;
      r.reason = "the output exists; --force replaces it";
      for (const auto& [input, output] : plan_.skipped) {
        r.input = input;
        r.output = output;
        held_records_.push_back(r);
      }
      if (opening_ == 0) flush_held_records();
    }
    // Threads the system refuses (EAGAIN) are done without: the batch runs on those it got,
    // and fails with the reason only where it got no worker or no device thread.
    std::vector<std::thread> threads;
    for (size_t i = 0; i < workers_; ++i) {
      try {
        threads.emplace_back([this] { worker_loop(); });
      } catch (const std::system_error&) {
        if (threads.empty()) throw;
        break;
      }
    }
    if (opening_ > 0) {
      try {
        threads.emplace_back([this] { open_devices(); });
      } catch (const std::system_error&) {
        std::unique_lock<std::mutex> lock(mutex_);
        setup_error_ = std::current_exception();
        opening_ = 0;
        cv_.notify_all();
      }
    }
    for (std::thread& t : threads) t.join();
    trace("batch: every image done");
    if (progress_) std::cerr << "\r\033[K" << std::flush;
    if (setup_error_) std::rethrow_exception(setup_error_);
  }

  // Device threads (lanes) `device` gets: BLURTOOL_DEVICE_LANES (1-8, for measurements and
  // tests), else 2 on a GPU and 1 elsewhere.
  static int lanes_of(const DeviceInfo& device) {
    return env_int("BLURTOOL_DEVICE_LANES", 1, 8, device.type & CL_DEVICE_TYPE_GPU ? 2 : 1);
  }

  // Images a batch holds at once once its devices are open: BLURTOOL_IN_FLIGHT (2-1024, for
  // measurements), else `fallback`.
  static size_t in_flight_cap(size_t fallback) {
    return static_cast<size_t>(env_int("BLURTOOL_IN_FLIGHT", 2, 1024, static_cast<int>(fallback)));
  }

  size_t done() const { return done_; }
  size_t host_images() const { return times_.host.images; }
  const StageTimes& stage_times() const { return times_; }
  size_t workers() const { return workers_; }
  size_t lanes() const { return lanes_; }
  size_t failed() const { return failed_; }
  size_t skipped() const { return skipped_ + taken_; }
  // Of skipped(): outputs that existed when the batch planned (an earlier run's).
  size_t kept() const { return skipped_; }
  double seconds() const { return ms_since(start_) / 1000; }
  double input_bytes() const { return input_bytes_; }
  double output_bytes() const { return output_bytes_; }
  // The devices that ran the batch, once known.
  const std::vector<DeviceInfo>& devices() const { return devices_; }

  // Why an output is skipped that appeared while the batch ran.
  static constexpr const char* kAppeared =
      "the output appeared while the batch ran; --force replaces it";

 private:
  struct Decoded {
    size_t item = 0;
    Source source;          // the input decoded by the decoding thread (RGBA, colour planes, or for
                            // the host lane grey or RGB as stored)
    double bytes = 0;       // of the input file
    double held_bytes = 0;  // counted in held_bytes_ for it (set when a device lane takes it)
  };
  struct Finished {
    size_t item;
    Rendered rendered;
    double bytes;
    double held_bytes = 0;  // counted in held_bytes_ until written
  };
  // An output encoded by a worker on the host lane, waiting for a worker to write it: at once
  // once the devices are open, held while they open (unwritten if one fails: a device's
  // failure ends the batch before any output).
  struct HeldWrite {
    size_t item;
    std::vector<std::uint8_t> bytes;
    double bytes_in;      // of the input file
    StageClock::Lap lap;  // of its encoding
  };

  // Called with the lock held.
  static void add(StageTimes::Stage& stage, StageClock::Lap lap) {
    stage.cpu_ms += lap.cpu_ms;
    stage.wall_ms += lap.wall_ms;
    ++stage.images;
  }
  bool no_more_input() const { return next_ == items_.size() && decoding_ == 0 && large_.empty(); }
  bool all_settled() const {
    return no_more_input() && decoded_.empty() && on_device_ == 0 && finished_.empty() &&
           held_writes_.empty();
  }
  // Called with the lock held: whether an image waits for devices that failed to open late.
  bool may_fail_waiting() const {
    return !late_error_.empty() && opening_ == 0 && (!decoded_.empty() || !large_.empty());
  }
  // Called with the lock held: whether a worker may write a held output now.
  bool may_write() const { return opening_ == 0 && !held_writes_.empty(); }

  void fail(size_t item, const std::string& why) {
    std::unique_lock<std::mutex> lock(mutex_);
    ++failed_;
    say("blurtool: " + items_[item].input + ": " + why + "\n");
    settle(item, FileRecord::Status::failed, why);
  }

  // With the lock held, when the last device has opened (or failed to): unless one failed, the
  // messages and report lines kept meanwhile go out.
  void opened() {
    if (setup_error_) return;
    for (const std::string& line : held_lines_) say(line);
    held_lines_.clear();
    flush_held_records();
    times_.ready_s = seconds();
    trace("batch: every device ready");
  }

  // With the lock held (or before the threads start): the report lines kept while the devices
  // opened.
  void flush_held_records() {
    if (report_)
      for (const FileRecord& r : held_records_) report_->file(r);
    held_records_.clear();
  }

  // With the lock held: `item`'s report line (--report) with what its stages recorded, kept
  // with the messages while the devices open (say).
  void settle(size_t item, FileRecord::Status status, const std::string& reason = "") {
    if (!report_) return;
    FileRecord r = std::move(records_[item]);
    records_.erase(item);
    r.input = items_[item].input;
    r.output = items_[item].output;
    r.status = status;
    r.reason = reason;
    if (opening_ > 0)
      held_records_.push_back(std::move(r));
    else
      report_->file(r);
  }

  void warn(const std::string& text) {
    if (o_.quiet) return;
    std::unique_lock<std::mutex> lock(mutex_);
    say("blurtool: warning: " + text + "\n");
  }

  // With the lock held: `line` to stderr, or kept until every device is open, so that a batch
  // that ends in a device's usage error says only that.
  void say(const std::string& line) {
    if (opening_ > 0) {
      held_lines_.push_back(line);
      return;
    }
    clear_progress();
    std::cerr << line;
    draw_progress();
  }

  // The devices of --device or --devices (batch_devices: the OpenCL platforms are loaded and
  // asked), each then opened by its own device_main thread.
  void open_devices() {
    // With a host lane, a short batch needs no device at all: the first images the host lane
    // finishes tell how long the rest would take there (host_finishes_first). Where that is
    // short, or nothing is left, not even the platforms are loaded: a GPU driver loaded only to
    // be listed still costs the exit a tenth of a second.
    bool short_batch = false;
    if (host_ == HostLane::while_opening) {
      bool nothing_left = false;
      {
        // The first images the workers took, one a worker (the first to finish is the
        // smallest of them), or an image that needs a device, or nothing left to do.
        std::unique_lock<std::mutex> lock(mutex_);
        const size_t first = std::min(workers_, items_.size());
        cv_.wait(lock, [&] {
          return setup_error_ || host_done_ >= first || !decoded_.empty() || !large_.empty() ||
                 (next_ == items_.size() && decoding_ == 0 && host_filtering_ == 0);
        });
        nothing_left = decoded_.empty() && large_.empty() && next_ == items_.size() &&
                       decoding_ == 0 && host_filtering_ == 0;
        deciding_ = false;
        cv_.notify_all();  // the cores kept for the driver's start, from now on
      }
      short_batch = nothing_left || host_finishes_first();
    }
    if (!short_batch) {
      try {
        devices_ = devices_found_.get();
      } catch (...) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (host_ == HostLane::while_opening) {
          unlisted(std::current_exception());
        } else {
          setup_error_ = std::current_exception();
          --opening_;
          cv_.notify_all();
        }
        return;
      }
    }
    // On CPU devices alone the host lane takes every image it can: the host filters run on the
    // same cores as a CPU device's kernels, without the driver's compiler, transfers or
    // queues. So it does in a short batch. The devices are then listed and opened only for an
    // image the host lane cannot take (transparency, 16 bits, strips), whose outputs may
    // follow others already written.
    const bool cpus = std::all_of(devices_.begin(), devices_.end(), [](const DeviceInfo& d) {
      return (d.type & CL_DEVICE_TYPE_CPU) != 0;
    });
    if (host_ == HostLane::while_opening && (cpus || short_batch)) {
      std::unique_lock<std::mutex> lock(mutex_);
      host_always_ = true;
      if (!short_batch) times_.known_s = seconds();  // a short batch lists none
      opening_ = 0;
      opened();
      cv_.notify_all();
      // Until an image waits for a device, or every image has been decoded.
      cv_.wait(lock, [&] {
        return setup_error_ || !decoded_.empty() || !large_.empty() ||
               (next_ == items_.size() && decoding_ == 0);
      });
      if (setup_error_ || (decoded_.empty() && large_.empty())) {
        devices_.clear();
        return;
      }
      opening_ = 1;  // the device list, as below
      late_ = true;
      if (short_batch) {
        lock.unlock();
        try {
          devices_ = devices_found_.get();
        } catch (...) {
          lock.lock();
          unlisted(std::current_exception());
          return;
        }
      }
    }
    bool all = false, remember = false;  // every device takes the colour stages; memo stale
    {
      // Images held at once from now on: enough to keep every device and worker busy, no more.
      std::unique_lock<std::mutex> lock(mutex_);
      size_t lanes = 0;
      for (const DeviceInfo& d : devices_) lanes += lanes_of(d);
      // Entropy-coded JPEGs go to a lane in batches (decode_entropy): room for half of one a
      // lane beyond the workers' images.
      const bool gpus = std::all_of(devices_.begin(), devices_.end(), [](const DeviceInfo& d) {
        return (d.type & CL_DEVICE_TYPE_GPU) != 0;
      });
      const bool entropy = jpeg_entropy_on_device(gpus);
      cap_ = in_flight_cap(workers_ + (entropy ? lanes * (entropy_batch() / 2) : 2 * lanes));
      lanes_ = lanes;
      // JPEGs decoded from now on leave their colour stages to the devices, if all take them.
      all = std::all_of(devices_.begin(), devices_.end(),
                        [&](const DeviceInfo& d) { return jpeg_colour_on_device(o_, d); });
      planes_ = all;
      entropy_ = all && entropy;
      remember = o_.jpeg_codec == JobOptions::JpegCodec::automatic && memo_ != (all ? 1 : 0);
      times_.known_s = seconds();
      opening_ += devices_.size() - 1;  // batch_devices never returns an empty list
      cv_.notify_all();                 // workers may decode up to the new cap
    }
    std::vector<std::thread> threads;
    for (const DeviceInfo& d : devices_) {
      try {
        threads.emplace_back([this, &d] { device_main(d); });
      } catch (const std::system_error&) {  // the devices not started take no part
        std::unique_lock<std::mutex> lock(mutex_);
        opening_ -= devices_.size() - threads.size();
        if (threads.empty()) setup_error_ = std::current_exception();
        if (opening_ == 0) opened();
        cv_.notify_all();
        break;
      }
    }
    // Written while the devices open, outside the lock.
    if (remember) remember_devices(o_, all);
    for (std::thread& t : threads) t.join();
  }

  // With the lock held: no device could be listed (`error`: no OpenCL driver, say) for a batch
  // with a host lane, which takes every image it can; the others fail alone with the reason.
  void unlisted(std::exception_ptr error) {
    late_error_ = "it needs an OpenCL device, and none could be listed: " + what_of(error);
    host_always_ = true;
    opening_ = 0;
    opened();
    cv_.notify_all();
  }

  // Whether the host lane, at the rate its finished images show, will have done the whole batch
  // within host_batch_s_ (kHostBatchMs): too soon for a GPU's opening (platforms and a context,
  // tenths of a second) and the exit's teardown to pay for themselves. The rate is of input
  // bytes (decode, filter and encode wall time over the finished files' sizes), and the rest is
  // the other files' sizes, so that a folder whose first images are small still counts its large
  // ones: summed in the batch's order until they pass the limit, at most kSizedFiles of them
  // (the rest at their average). False before an image is done.
  bool host_finishes_first() {
    double done_ms = 0, done_bytes = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (host_done_ == 0) return false;
      done_ms = host_ms_;
      done_bytes = host_bytes_;
    }
    const double s_per_byte =
        done_ms / 1000 / std::max(done_bytes, 1.0) / static_cast<double>(workers_);
    const double limit = done_bytes + host_batch_s_ / s_per_byte;  // bytes of the whole batch
    double bytes = 0;
    size_t sized = 0;
    for (; sized < items_.size() && sized < kSizedFiles && bytes <= limit; ++sized) {
      std::error_code ec;
      const std::uintmax_t size = fs::file_size(items_[sized].input, ec);
      if (!ec) bytes += static_cast<double>(size);
    }
    if (sized < items_.size() && bytes <= limit)
      bytes *= static_cast<double>(items_.size()) / static_cast<double>(sized);
    const double left_s = std::max(0.0, bytes - done_bytes) * s_per_byte;
    trace("batch: the host lane's estimate of the rest, ms", static_cast<size_t>(left_s * 1000));
    return left_s < host_batch_s_;
  }
  // Files whose sizes host_finishes_first reads at most (stat calls, outside the lock; the
  // device's opening waits for them).
  static constexpr size_t kSizedFiles = 4096;

  // A device's threads: opens it (context, queue, the filter built once for a small image so
  // that a schedule it cannot run is found before any image), waits for the other devices,
  // then runs its lanes. A GPU gets more than one lane, each with its own queue, so that one
  // image's upload and download overlap another's kernels; a CPU device runs on the cores that
  // decode and encode, and gets one.
  void device_main(const DeviceInfo& device) {
    std::unique_ptr<Runtime> rt;
    std::vector<std::unique_ptr<Runtime>> lanes;
    try {
      rt = std::make_unique<Runtime>(device);
      make_filter(*rt, o_, 64, 64);
      // The colour kernels built once here, so that every lane's sibling has them.
      if (jpeg_colour_on_device(o_, device)) YCbCrConverter colour(*rt);
      // And the entropy decoder's, so that the lanes share one build rather than each
      // making its own at its first batch.
      // A failed build is no failure of the device: its lanes leave the files to libjpeg.
      if (entropy_) {
        try {
          EntropyDecoder entropy(*rt);
        } catch (...) {
        }
      }
      for (int i = 1; i < lanes_of(device); ++i) lanes.push_back(rt->sibling());
      // The images decoded from now on, and the results, in pinned memory of the first GPU
      // opened: its transfers then need no staging copies (the process keeps the pool).
      if (pins_host_memory(device)) {
        try {
          auto pool = std::make_unique<PinnedPool>(rt->sibling(), pinned_pool_bytes_);
          if (install_pixel_pool(pool.get())) {
            pool.release();
            trace("batch: pinned pool made");
          }
        } catch (const cl::Error&) {  // no queue for it: transfers are staged, as without
        }
      }
    } catch (...) {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!late_) {
        if (!setup_error_) setup_error_ = std::current_exception();
      } else if (late_error_.empty()) {
        // Opened late, after outputs were written: the images waiting for it fail alone.
        late_error_ =
            "the device, opened for this image, failed: " + what_of(std::current_exception());
      }
      if (--opening_ == 0 && late_) opened();
      cv_.notify_all();
      return;
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (--opening_ == 0) opened();
      cv_.notify_all();
      cv_.wait(lock, [&] { return opening_ == 0; });
      if (setup_error_ || !late_error_.empty()) return;
    }
    std::vector<std::thread> threads;
    for (auto& lane : lanes) {
      try {
        threads.emplace_back([this, &lane] { device_loop(*lane); });
      } catch (const std::system_error&) {  // fewer lanes, as many as the system gives
        break;
      }
    }
    device_loop(*rt);
    for (std::thread& t : threads) t.join();
  }

  // Runs `work` for `item`, turning any exception into a reported failure.
  template <class F>
  bool guarded(size_t item, F&& work) {
    try {
      work();
      return true;
    } catch (const cl::Error& e) {
      fail(item, "OpenCL: " + describe_cl_error(e));
    } catch (const std::exception& e) {
      // Messages of image_io already name the file; others get it from fail().
      std::string why = e.what();
      const std::string& in = items_[item].input;
      if (why.rfind(in + ":", 0) == 0) why = why.substr(in.size() + 1);
      while (!why.empty() && why[0] == ' ') why.erase(0, 1);
      fail(item, why);
    }
    return false;
  }

  // Called with the lock held: whether a worker may start decoding the next image. While the
  // devices open, decoding runs ahead of the cap up to opening_bytes_ of decoded pixels.
  bool may_decode() const {
    if (next_ >= items_.size()) return false;
    // The images held count against --max-memory too: fewer in flight, never a failure.
    if (held_ > 0 && held_bytes_ >= budget_) return false;
    // The host lane leaves cores to the driver while it opens the devices: on a 16-core GPU
    // machine, all 16 busy put the devices' start at 0.7 s instead of 0.26 s.
    if (host_ == HostLane::while_opening && opening_ > 0 && !deciding_ &&
        decoding_ + host_filtering_ + opening_reserve_ >= workers_)
      return false;
    return held_ < cap_ || (opening_ > 0 && decoded_bytes_ + held_write_bytes_ < opening_bytes_);
  }

  // Waits on cv_ until `ready`, adding the seconds waited (if any) to `waited`.
  template <class Ready>
  void timed_wait(std::unique_lock<std::mutex>& lock, Ready ready, double& waited) {
    if (ready()) return;
    const auto from = std::chrono::steady_clock::now();
    cv_.wait(lock, ready);
    waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  }

  void worker_loop() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto idle = [&] {
        return !(setup_error_ || may_write() || may_fail_waiting() || !finished_.empty() ||
                 may_decode() || all_settled());
      };
      if (idle()) {
        double& waited = opening_ > 0            ? times_.wait_opening_s
                         : next_ < items_.size() ? times_.wait_cap_s
                                                 : times_.wait_tail_s;
        timed_wait(
            lock, [&] { return !idle(); }, waited);
      }
      if (setup_error_) return;
      if (may_fail_waiting()) {
        size_t item;
        if (!decoded_.empty()) {
          const Decoded& d = decoded_.front();
          item = d.item;
          decoded_bytes_ -= d.source.bytes();
          held_bytes_ -= held_of(d.source);
          --held_;
          decoded_.pop_front();
        } else {
          item = large_.front();
          large_.pop_front();
        }
        lock.unlock();
        fail(item, late_error_);
        lock.lock();
        cv_.notify_all();
        continue;
      }
      if (may_write()) {
        HeldWrite w = std::move(held_writes_.front());
        held_writes_.pop_front();
        lock.unlock();
        const StageClock clock;
        bool taken = false;
        const bool ok = guarded(w.item, [&] { taken = write_item(w.item, w.bytes); });
        const StageClock::Lap lap = clock.lap();
        lock.lock();
        --held_;
        held_write_bytes_ -= static_cast<double>(w.bytes.size());
        written(w.item, ok, taken, w.bytes_in, static_cast<double>(w.bytes.size()),
                {w.lap.cpu_ms + lap.cpu_ms, w.lap.wall_ms + lap.wall_ms});
        continue;
      }
      if (!finished_.empty()) {
        Finished f = std::move(finished_.front());
        finished_.pop_front();
        lock.unlock();
        const StageClock clock;
        bool taken = false;  // the output appeared after planning: skipped, not replaced
        double bytes_out = 0;
        const bool ok = guarded(f.item, [&] {
          const std::vector<std::uint8_t> bytes = encode_item(f.item, f.rendered);
          taken = write_item(f.item, bytes);
          bytes_out = static_cast<double>(bytes.size());
        });
        const StageClock::Lap lap = clock.lap();
        lock.lock();
        --held_;
        held_bytes_ -= f.held_bytes;
        written(f.item, ok, taken, f.bytes, bytes_out, lap);
        continue;
      }
      if (may_decode()) {
        const size_t i = next_++;
        ++decoding_;
        ++held_;
        // On the host lane the worker filters the image itself (not as colour planes; grey and
        // RGB as they are, not expanded to RGBA).
        const bool host = host_ == HostLane::only || host_always_ ||
                          (host_ == HostLane::while_opening && opening_ > 0);
        const bool planes = planes_ && !host;
        lock.unlock();
        Decoded d{i, {}, 0};
        bool large = false;  // larger than --max-memory: to a device thread, in strips
        const StageClock clock;
        const bool ok = guarded(i, [&] {
          std::vector<std::string> warnings;
          const InputBytes in = read_input(items_[i].input, o_);
          const ImageHeader header = read_image_header(in.bytes, in.name, o_.max_pixels, o_.orient);
          large = plan_strips(o_, header, in.bytes, in.name).streams();
          if (large && host_ == HostLane::only)
            throw Error(
                "larger than the memory budget (" + parameter("max-memory") +
                "), which runs it in strips on an OpenCL device; name one instead of the host");
          if (large) return;
          // Decoded into pinned memory once the pool is installed (encoding's own buffers not).
          const UsePixelPool pinned;
          d.source = decode_source(in, o_, &warnings, planes, jpeg_dct_mode() == JpegDct::sparse,
                                   host, entropy_);
          for (const std::string& w : warnings) warn(w);  // each names the file
          if (host_ == HostLane::only && !runs_on_host(d.source))
            throw Error(std::string(d.source.wide()
                                        ? "it stores 16-bit samples, which blur"
                                        : "it has transparency, which blurs premultiplied at 16 "
                                          "bits,") +
                        " on an OpenCL device, not the host");
          d.bytes = static_cast<double>(in.bytes.size());  // read, not stat'ed again
        });
        const StageClock::Lap lap = clock.lap();
        if (ok && host && !large && runs_on_host(d.source)) {
          on_host(std::move(d), lap);
          continue;
        }
        lock.lock();
        --decoding_;
        if (ok && large) {
          --held_;
          large_.push_back(i);
        } else if (ok) {
          held_bytes_ += held_of(d.source);  // the source, and the result to come
          decoded(d, lap);
          if (d.source.has_planes()) ++times_.planes_in;
          if (d.source.planes.as_blocks()) ++times_.blocks_in;
          if (d.source.planes.dct.is_sparse()) ++times_.sparse_in;
          if (d.source.planes.dct.is_entropy()) ++times_.entropy_in;
          decoded_bytes_ += d.source.bytes();
          decoded_.push_back(std::move(d));
        } else {
          --held_;
        }
        cv_.notify_all();
        continue;
      }
      return;  // all_settled
    }
  }

  // With the lock held: `d` decoded, its decoding taking `lap`, counted and recorded.
  void decoded(const Decoded& d, StageClock::Lap lap) {
    if (times_.decode.images == 0) trace("batch: first image decoded");
    add(times_.decode, lap);
    if (!report_) return;
    FileRecord& r = records_[d.item];
    r.decode_ms = lap.wall_ms;
    r.width = d.source.width();
    r.height = d.source.height();
    r.bytes_in = d.bytes;
  }

  // The bytes of item i's output made from `rendered` (encode_output; warnings said). Throws
  // blurtool::Error naming the output for an image its format cannot hold.
  std::vector<std::uint8_t> encode_item(size_t i, const Rendered& rendered) {
    const Item& item = items_[i];
    std::vector<std::uint8_t> bytes;
    std::vector<std::string> warnings;
    try {
      // One image encodes on --jobs threads; several already fill them one each.
      bytes = encode_output(rendered, item.kind, o_, items_.size() > 1 ? 1 : o_.jobs, item.output,
                            &warnings);
    } catch (const Error& e) {  // e.g. too large for JPEG: the output is at fault
      throw Error("output '" + item.output + "': " + e.what());
    }
    for (const std::string& w : warnings) warn(w);  // each names the output
    return bytes;
  }

  // Writes item i's output; returns true where it appeared after planning and was left as it
  // is (without --force), false where written.
  bool write_item(size_t i, const std::vector<std::uint8_t>& bytes) {
    const Item& item = items_[i];
    std::error_code ec;
    fs::create_directories(fs::path(item.output).parent_path(), ec);
    return !write_file_atomic(item.output, bytes, o_.force ? IfExists::replace : IfExists::keep,
                              SyncFolder::caller);  // once a folder, after the run
  }

  // With the lock held: item i's output written (ok and not taken), left as another program
  // made it (taken), or failed (reported already); `lap` of its encoding and writing.
  void written(size_t i, bool ok, bool taken, double bytes_in, double bytes_out,
               StageClock::Lap lap) {
    if (ok && taken) {
      ++taken_;
      settle(i, FileRecord::Status::skipped, kAppeared);
    }
    if (ok && !taken) {
      ++done_;
      if (done_ == 1 || done_ % 100 == 0) trace("batch: written", done_);
      input_bytes_ += bytes_in;
      output_bytes_ += bytes_out;
      add(times_.encode, lap);
      if (report_) {
        records_[i].encode_ms = lap.wall_ms;
        records_[i].bytes_out = bytes_out;
      }
      settle(i, FileRecord::Status::done);
    }
    draw_progress();
    cv_.notify_all();
  }

  // A worker's image on the host lane (`d` decoded as RGBA, runs_on_host; `decode` the lap of
  // its decoding): filtered and encoded on this thread, and queued for writing (HeldWrite).
  void on_host(Decoded d, StageClock::Lap decode) {
    const size_t i = d.item;
    const double counted = 2 * d.source.bytes();  // the source, and the result
    {
      std::unique_lock<std::mutex> lock(mutex_);
      --decoding_;
      ++host_filtering_;
      held_bytes_ += counted;  // against --max-memory while filtered and encoded
      decoded(d, decode);
    }
    // Each worker filters into the memory of its last result: a fresh image-sized buffer costs
    // page faults that take longer than the filter.
    static thread_local Image spare;
    const StageClock filtering;
    Rendered rendered;
    bool ok = guarded(i, [&] { rendered = filter_on_host(o_, d.source, 1, std::move(spare)); });
    const StageClock::Lap filtered = filtering.lap();
    d.source = Source{};
    std::vector<std::uint8_t> bytes;
    const StageClock encoding;
    if (ok) ok = guarded(i, [&] { bytes = encode_item(i, rendered); });
    const StageClock::Lap encoded = encoding.lap();
    // Kept for the next image where small beside the memory budget.
    if (static_cast<double>(rendered.image.pixels.size()) * workers_ * 4 <= budget_)
      spare = std::move(rendered.image);
    rendered = Rendered{};
    std::unique_lock<std::mutex> lock(mutex_);
    --host_filtering_;
    held_bytes_ -= counted;
    if (!ok) {
      --held_;
      cv_.notify_all();
      return;
    }
    add(times_.host, filtered);
    ++host_done_;
    host_ms_ += decode.wall_ms + filtered.wall_ms + encoded.wall_ms;
    host_bytes_ += d.bytes;
    if (report_) {
      records_[i].device_ms = filtered.wall_ms;
      records_[i].device = "host";
    }
    // Written by the next free worker (may_write), this one first, once the devices are open.
    held_write_bytes_ += static_cast<double>(bytes.size());
    held_writes_.push_back({i, std::move(bytes), d.bytes, encoded});
    cv_.notify_all();
  }

  void device_loop(Runtime& rt) {
    const UsePixelPool pinned;  // the results in pinned memory
    // Keeps the previous image's filter, reused while size, depth and working space stay.
    DeviceStage stage(rt, o_);
    EntropyLane entropy;
    if (entropy_) {
      // Built before the first batch arrives, not in its way; a failure shows there again.
      try {
        entropy.decoder = std::make_unique<EntropyDecoder>(rt);
      } catch (...) {
      }
    }
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      Decoded d;
      if (!entropy.ready.empty()) {  // the rest of an entropy batch, decoded on this device
        d = std::move(entropy.ready.front());
        entropy.ready.pop_front();
        lock.unlock();
      } else {
        timed_wait(
            lock, [&] { return !decoded_.empty() || !large_.empty() || no_more_input(); },
            times_.wait_lanes_s);
        if (decoded_.empty() && large_.empty()) return;
        if (decoded_.empty()) {
          run_large(lock, rt);
          continue;
        }
        d = take_decoded();
        if (d.source.planes.dct.is_entropy()) {
          // Entropy-coded JPEGs go to the device in batches, one work-group an image: one
          // image alone would take one compute unit for milliseconds.
          std::vector<Decoded> batch;
          batch.push_back(std::move(d));
          while (batch.size() < entropy_batch() && !decoded_.empty() &&
                 decoded_.front().source.planes.dct.is_entropy())
            batch.push_back(take_decoded());
          lock.unlock();
          decode_entropy(rt, entropy, std::move(batch));
          continue;
        }
        lock.unlock();
      }
      Finished f{d.item, {}, d.bytes, d.held_bytes};
      FilterRun timings;
      const StageClock clock;
      const bool ok = guarded(d.item, [&] {
        SourceRun run = stage.run(d.source, items_[d.item].kind);
        f.rendered = std::move(run.rendered);
        timings = std::move(run.timings);
      });
      const StageClock::Lap lap = clock.lap();
      lock.lock();
      --on_device_;
      if (ok) {
        if (times_.device.images == 0) {
          times_.first_result_s = seconds();
          trace("batch: first image off a device");
        }
        if (!f.rendered.planes.empty()) ++times_.planes_out;
        if (f.rendered.planes.as_blocks()) ++times_.blocks_out;
        if (f.rendered.planes.dct.is_sparse()) ++times_.sparse_out;
        if (report_) {
          records_[f.item].device_ms = lap.wall_ms;
          records_[f.item].device = rt.device().name;
          records_[f.item].device_index = rt.device().index;
        }
        finished_.push_back(std::move(f));
        add(times_.device, lap);
        times_.upload_ms += timings.upload_ms;
        times_.download_ms += timings.download_ms;
        times_.upload_copy_ms += timings.upload_copy_ms;
        times_.download_copy_ms += timings.download_copy_ms;
        times_.pinned_uploads += timings.pinned_upload;
        times_.pinned_downloads += timings.pinned_download;
        times_.in_place_uploads += timings.in_place_upload;
        times_.in_place_downloads += timings.in_place_download;
        times_.enqueue_ms += timings.enqueue_ms;
        times_.wait_ms += timings.wait_ms;
        times_.check_ms += timings.check_ms;
        times_.commands += timings.commands;
        times_.timed_round_trips += timings.commands > 0;
        if (o_.stage_times && timings.device_end_ns > timings.device_start_ns)
          times_.spans.push_back(
              {rt.device().device(), timings.device_start_ns, timings.device_end_ns});
        for (const std::vector<double>& pass : timings.pass_ms)
          for (double ms : pass) times_.kernel_ms += ms;
      } else {
        --held_;
        held_bytes_ -= f.held_bytes;
      }
      cv_.notify_all();
    }
  }

  // The bytes an image holds from its decoding to its write: the source and the result to come;
  // an entropy-coded source as the DCT blocks it becomes (on the device, or on the host where
  // the device leaves it to libjpeg), not as its scan.
  static double held_of(const Source& s) {
    if (!s.planes.dct.is_entropy()) return 2 * s.bytes();
    return 2.0 * 2 * EntropyDecoder::coefficients(s.planes) + s.bytes();
  }

  // With the lock held: the next decoded image, taken for a device lane.
  Decoded take_decoded() {
    Decoded d = std::move(decoded_.front());
    decoded_.pop_front();
    decoded_bytes_ -= d.source.bytes();
    d.held_bytes = held_of(d.source);  // as counted in held_bytes_ when it was decoded
    ++on_device_;
    return d;
  }

  // A device lane's entropy decoding (EntropyDecoder): the decoder, made when the lane starts,
  // the coefficients of the batch's images in one buffer, and the images decoded there whose
  // filtering is still to come.
  struct EntropyLane {
    std::unique_ptr<EntropyDecoder> decoder;
    cl::Buffer coef;
    std::size_t coef_shorts = 0;
    std::deque<Decoded> ready;
  };
  // Images a lane's entropy batch takes at most: 64, or BLURTOOL_ENTROPY_BATCH (1-1024, for
  // measurements).
  static std::size_t entropy_batch() {
    static const std::size_t n =
        static_cast<std::size_t>(env_int("BLURTOOL_ENTROPY_BATCH", 1, 1024, 64));
    return n;
  }

  // Decodes the entropy-coded blocks of `batch` (taken from decoded_) on `rt` in one launch,
  // then queues the images in lane.ready: each with its blocks on the device, or, where the
  // device leaves a file to libjpeg (data libjpeg would warn about, or one that did not come
  // into step) or the image needs tiles, decoded again on the host as without entropy
  // decoding. An image that fails there is settled as failed.
  void decode_entropy(Runtime& rt, EntropyLane& lane, std::vector<Decoded> batch) {
    std::vector<std::int32_t> status(4 * batch.size(), 1);
    try {
      if (!lane.decoder) lane.decoder = std::make_unique<EntropyDecoder>(rt);
      std::vector<EntropyDecoder::Item> items;
      std::size_t shorts = 0;
      for (const Decoded& d : batch) {
        const DctBlocks& dct = d.source.planes.dct;
        items.push_back({dct.entropy.data(), dct.entropy.size(), &d.source.planes, shorts});
        shorts += EntropyDecoder::coefficients(d.source.planes);
      }
      if (shorts > lane.coef_shorts) {
        lane.coef = cl::Buffer(rt.context(), CL_MEM_READ_WRITE, shorts * 2);
        lane.coef_shorts = shorts;
      }
      std::vector<cl::Event> uploads;
      const std::vector<cl::Event> kernels = lane.decoder->decode(
          items, lane.coef, status.data(), o_.stage_times ? &uploads : nullptr);
      rt.queue().finish();
      for (std::size_t i = 0; i < batch.size(); ++i) {
        Source& s = batch[i].source;
        const TileSize tiles =
            operation_tiles(rt, o_, s.width(), s.height(), s.filter_depth() == PixelDepth::u16, "");
        if (status[4 * i] != 0 || tiles.width < s.width() || tiles.height < s.height()) continue;
        s.device_blocks = &lane.coef;
        s.device_blocks_base = items[i].coef_offset;
      }
      if (o_.stage_times) {  // 0 where the driver gives no counters: a timing never fails
        const double kernel_ms = summed_event_ms(kernels);
        std::unique_lock<std::mutex> lock(mutex_);
        ++times_.entropy_launches;
        times_.entropy_images += batch.size();
        if (kernel_ms > 0) {
          times_.entropy_timed_images += batch.size();
          times_.entropy_kernel_ms += kernel_ms;
        }
        for (const cl::Event& up : uploads) {
          const double ms = summed_event_ms({up});
          if (ms > 0) {
            ++times_.entropy_timed_uploads;
            times_.entropy_upload_ms += ms;
          }
        }
        for (std::size_t i = 0; i < batch.size(); ++i)
          if (status[4 * i] != 0) {
            const std::int32_t why = status[4 * i + 1];
            ++times_.entropy_refused[why >= 2 && why <= 5 ? why : 0];
          }
      }
    } catch (...) {  // the device's failure, if any, shows again on its next run
      std::fill(status.begin(), status.end(), 1);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ++times_.entropy_failed_launches;
        times_.entropy_failed_images += batch.size();
        if (times_.entropy_failure.empty()) {  // its first line (a build log may follow)
          const std::string what = what_of(std::current_exception());
          times_.entropy_failure = what.substr(0, what.find('\n'));
        }
      }
      // No upload may outlive the scans the fallback below replaces.
      try {
        rt.queue().finish();
      } catch (...) {
      }
    }
    for (Decoded& d : batch) {
      if (!d.source.device_blocks) {
        const bool ok = guarded(d.item, [&] {
          std::vector<std::string> warnings;
          const UsePixelPool pinned;
          // The metadata (and its warnings) came with the first decoding.
          JobOptions again = o_;
          again.keep_metadata = KeepMetadata::none;
          ImageMetadata kept = std::move(d.source.metadata);
          d.source = decode_source(read_input(items_[d.item].input, o_), again, &warnings, true,
                                   jpeg_dct_mode() == JpegDct::sparse, false, false);
          d.source.metadata = std::move(kept);
          for (const std::string& w : warnings) warn(w);
        });
        if (!ok) {
          std::unique_lock<std::mutex> lock(mutex_);
          --on_device_;
          --held_;
          held_bytes_ -= d.held_bytes;
          cv_.notify_all();
          continue;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        ++times_.entropy_on_host;
      }
      lane.ready.push_back(std::move(d));
    }
  }

  // With the lock held (released meanwhile): the next image larger than --max-memory, run in
  // strips on `rt` (run_strips: decoded, filtered, encoded strip by strip) and written.
  void run_large(std::unique_lock<std::mutex>& lock, Runtime& rt) {
    const size_t item = large_.front();
    large_.pop_front();
    ++on_device_;
    lock.unlock();
    const Item& it = items_[item];
    double file_bytes = 0;
    int width = -1, height = -1;
    bool taken = false;  // the output appeared after planning: skipped, not replaced
    const StageClock clock;
    const bool ok = guarded(item, [&] {
      std::vector<std::string> warnings;
      const InputBytes in = read_input(it.input, o_);
      const ImageHeader header = read_image_header(in.bytes, in.name, o_.max_pixels, o_.orient);
      const StripPlan plan = plan_strips(o_, header, in.bytes, in.name);
      width = header.width;
      height = header.height;
      check_strip_output(o_, it.kind, plan, in.name);
      check_jpeg_sides(it.kind, header.width, header.height, "output '" + it.output + "'");
      std::error_code ec;
      fs::create_directories(fs::path(it.output).parent_path(), ec);
      // Encoded rows go to the output's temporary file as each strip is done; its folder is
      // synced once, after the run.
      taken = !write_output_streamed(
          it.output, OutputFile::Special::refuse, o_.force ? IfExists::replace : IfExists::keep,
          SyncFolder::caller,
          [&](const OutputSink& sink) { run_strips(rt, o_, in, it.kind, plan, sink, &warnings); });
      for (const std::string& w : warnings) warn(w);
      file_bytes = static_cast<double>(in.bytes.size());
    });
    const StageClock::Lap lap = clock.lap();
    std::error_code ec;
    const auto written = ok && !taken ? fs::file_size(it.output, ec) : 0;
    lock.lock();
    --on_device_;
    if (report_ && ok) {  // a failure was settled by fail()
      FileRecord& r = records_[item];
      r.width = width;
      r.height = height;
      r.bytes_in = file_bytes;
      r.device_ms = lap.wall_ms;  // read, decode, filter, encode and write, strip by strip
      r.device = rt.device().name;
      r.device_index = rt.device().index;
      r.strips = true;
      if (ok && !taken && !ec) r.bytes_out = static_cast<double>(written);
    }
    if (ok && taken) {
      ++taken_;
      settle(item, FileRecord::Status::skipped, kAppeared);
    }
    if (ok && !taken) {
      ++done_;
      input_bytes_ += file_bytes;
      if (!ec) output_bytes_ += static_cast<double>(written);
      settle(item, FileRecord::Status::done);
    }
    draw_progress();
    cv_.notify_all();
  }

  // With the lock held: the progress line, at most 10 times a second and once at the end.
  void draw_progress() {
    if (!progress_) return;
    const size_t total = items_.size() + skipped_ + planned_failures();
    const size_t count = done_ + failed_ + skipped_ + taken_;
    const double s = seconds();
    if (count < total && s - drawn_at_ < 0.1) return;
    drawn_at_ = s;
    const double rate = done_ > 0 ? done_ / s : 0;
    const size_t left = total - std::min(total, count);
    std::string bar(20, ' ');
    const size_t filled = total ? count * bar.size() / total : bar.size();
    for (size_t i = 0; i < filled; ++i) bar[i] = '#';
    char line[160];
    std::snprintf(line, sizeof line, "\r[%s] %zu/%zu  %.1f images/s  %s left\033[K", bar.c_str(),
                  count, total, rate, rate > 0 ? clock_text(left / rate).c_str() : "-:--");
    std::cerr << line << std::flush;
  }
  void clear_progress() {
    if (progress_) std::cerr << "\r\033[K";
  }
  size_t planned_failures() const { return failed_at_plan_; }

  // Decoded pixels a batch may hold ahead of the cap while its devices open:
  // BLURTOOL_DECODE_AHEAD_MIB (16-16384, for measurements), else 256 MiB (40 images of
  // 1920x1080 as DCT blocks). More decoded ahead did not finish sooner on the H100 machine and
  // costs its memory (kernels/NOTES.md, "JPEG block arrays in place").
  const double opening_bytes_ =
      env_int("BLURTOOL_DECODE_AHEAD_MIB", 16, 16384, 256) * double{1 << 20};
  // Pinned memory for the images in flight and their results: 64 of 1920x1080 RGBA8 (a batch
  // of them holds at most --jobs + 4 images and as many results), 10 of 12 Mpixel; beyond it,
  // pageable memory and staging copies. BLURTOOL_PINNED_POOL_MIB (64-16384, for
  // measurements), else 512 MiB.
  const std::size_t pinned_pool_bytes_ =
      static_cast<std::size_t>(env_int("BLURTOOL_PINNED_POOL_MIB", 64, 16384, 512)) << 20;
  // A short batch's length (host_finishes_first): BLURTOOL_HOST_BATCH_MS (0-600000), else
  // kHostBatchMs.
  const double host_batch_s_ = env_int("BLURTOOL_HOST_BATCH_MS", 0, 600000, kHostBatchMs) / 1000.0;

  const JobOptions& o_;
  const std::vector<Item>& items_;
  const Plan& plan_;
  std::future<std::vector<DeviceInfo>> devices_found_;
  std::vector<DeviceInfo> devices_;  // set by open_devices
  // Whether workers decode JPEGs to colour planes (decode_source): with --jpeg-codec device
  // from the start; with auto from the start where the last batch on these devices ran the
  // colour stages on all of them (device_memo), else once the devices are known and every one
  // does (jpeg_colour_on_device).
  std::atomic<bool> planes_{o_.jpeg_codec == JobOptions::JpegCodec::device};
  // Whether workers leave JPEGs entropy-coded for the devices (decode_source's `entropy`):
  // jpeg_entropy_on_device, once the devices (or the memo) say whether they are GPUs; from the
  // start where both the colour stages and the entropy decoding are forced onto devices.
  std::atomic<bool> entropy_{o_.jpeg_codec == JobOptions::JpegCodec::device &&
                             jpeg_dct_mode() == JpegDct::entropy};
  int memo_ = -1;  // device_memo for --jpeg-codec auto: 1 gpu, 0 other, -1 none
  size_t workers_ = 1, cap_ = 1;
  size_t lanes_ = 0;  // device threads, once the devices are known

  std::mutex mutex_;
  std::condition_variable cv_;
  size_t next_ = 0;       // next item to decode
  size_t decoding_ = 0;   // items being decoded
  size_t on_device_ = 0;  // items on a device
  size_t held_ = 0;       // items between the start of decoding and the end of writing
  std::deque<Decoded> decoded_;
  double decoded_bytes_ = 0;  // pixels of decoded_, bytes
  // Images larger than --max-memory (plan_strips), left by the workers to a device thread.
  std::deque<size_t> large_;
  // Bytes of the images held (their sources and results), against budget_ (may_decode).
  double held_bytes_ = 0;
  const double budget_ = static_cast<double>(memory_budget(o_));
  std::deque<Finished> finished_;
  const HostLane host_;
  bool deciding_ = true;      // a host lane's batch until open_devices decides to list devices
  size_t host_done_ = 0;      // images the host lane has filtered and encoded
  double host_ms_ = 0;        // their decode, filter and encode, wall milliseconds
  double host_bytes_ = 0;     // their input files' bytes
  bool host_always_ = false;  // while_opening, and CPU devices, no driver or a short batch
  std::deque<HeldWrite> held_writes_;  // host-lane outputs waiting for the devices to open
  double held_write_bytes_ = 0;        // their bytes, counted as decoded ahead (may_decode)
  size_t host_filtering_ = 0;          // workers filtering or encoding a host-lane image
  // The devices were opened late (host_always_), after outputs were written; why the images
  // that waited for them fail (the whole message), where they could not be listed or opened.
  bool late_ = false;
  std::string late_error_;
  // Workers left idle while the devices open, so that two of a host's cores (if 8 or more)
  // are the OpenCL driver's.
  size_t opening_reserve_ = 0;
  size_t opening_ = 0;                   // devices still being opened
  std::exception_ptr setup_error_;       // the first device's failure to open, if any
  std::vector<std::string> held_lines_;  // messages kept while the devices open (say)
  size_t done_ = 0, failed_ = 0, skipped_ = 0, taken_ = 0, failed_at_plan_ = 0;
  double input_bytes_ = 0, output_bytes_ = 0;
  StageTimes times_;
  BatchReport* report_ = nullptr;
  std::map<size_t, FileRecord> records_;  // report lines of the items in flight, by item
  std::vector<FileRecord> held_records_;  // settled while the devices open (settle)
  bool progress_ = false;
  double drawn_at_ = -1;
  std::chrono::steady_clock::time_point start_;

 public:
  void set_planned_failures(size_t n) { failed_at_plan_ = n; }
};

// The --bench table of a batch: per image, each stage's CPU and wall milliseconds, and the CPU
// of the whole process (getrusage) against the stages' sum.
void print_stage_times(const Pipeline& pipeline) {
  const StageTimes& t = pipeline.stage_times();
  auto row = [](const char* name, const StageTimes::Stage& s, size_t threads, const char* what) {
    const double n = static_cast<double>(std::max<size_t>(1, s.images));
    std::printf("%-16s %7zu %10.2f %10.2f %8zu  %s\n", name, s.images, s.cpu_ms / n, s.wall_ms / n,
                threads, what);
  };
  std::printf("%-16s %7s %10s %10s %8s\n", "stage", "images", "CPU ms", "wall ms", "threads");
  row("decode", t.decode, pipeline.workers(),
      "read and decode the file (to RGBA, grey or RGB for the host, or to JPEG colour planes)");
  char device[320];
  const double n = static_cast<double>(std::max<size_t>(1, t.device.images));
  std::snprintf(device, sizeof device,
                "device times: upload %.2f ms (the copy %.2f), kernels %.3f ms, download %.2f ms "
                "(the copy %.2f); %zu uploads from pinned memory, %zu downloads into it; %zu "
                "inputs and %zu outputs filtered in place (no copy)",
                t.upload_ms / n, t.upload_copy_ms / n, t.kernel_ms / n, t.download_ms / n,
                t.download_copy_ms / n, t.pinned_uploads, t.pinned_downloads, t.in_place_uploads,
                t.in_place_downloads);
  row("device", t.device, pipeline.lanes(), device);
  row("host filter", t.host, pipeline.workers(),
      "box filter or Gaussian on the host's cores, by the workers (while the devices opened, or "
      "--device host)");
  row("encode", t.encode, pipeline.workers(), "reduce channels, encode, write atomically");
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double user = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6;
  const double system = usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  const double stages = (t.decode.cpu_ms + t.device.cpu_ms + t.host.cpu_ms + t.encode.cpu_ms) / 1e3;
  // The process's CPU time since its start, over the process's wall time (not the batch's:
  // the start and OpenCL set-up before the batch would count more cores than there are).
  const double wall = pipeline.seconds(), lived = process_seconds();
  std::printf(
      "process: %.2f s CPU (user %.2f, system %.2f) in %.2f s (%.1f cores), the batch %.2f s of "
      "it; %.2f s CPU outside the stages (start, OpenCL set-up and driver threads); devices "
      "known after %.2f s, open after %.2f s, the first image off a device after %.2f s\n",
      user + system, user, system, lived, lived > 0 ? (user + system) / lived : 0.0, wall,
      user + system - stages, t.known_s, t.ready_s, t.first_result_s);
  std::printf(
      "waits (seconds, summed over threads): workers %.2f while the devices opened, %.2f at the "
      "cap of images in flight, %.2f with nothing left to decode; device lanes %.2f for decoded "
      "images\n",
      t.wait_opening_s, t.wait_cap_s, t.wait_tail_s, t.wait_lanes_s);
  std::printf(
      "JPEG colour stages on the device (%s): %zu images decoded to colour planes "
      "(%zu as DCT blocks, %zu sparse, %zu entropy-coded of which %zu left to libjpeg by the "
      "device), %zu results returned as colour planes (%zu as DCT blocks, %zu sparse)\n",
      parameter("jpeg_codec").c_str(), t.planes_in, t.blocks_in, t.sparse_in, t.entropy_in,
      t.entropy_on_host, t.planes_out, t.blocks_out, t.sparse_out);
  // The stage split of the device's work, per image: the conversion kernels' time is the
  // upload's and the download's less their copies'.
  const double uploads_n = static_cast<double>(std::max<size_t>(1, t.entropy_timed_uploads));
  std::printf(
      "device stages an image: entropy decoding %.3f ms (%zu images, %zu %s; their scans' upload "
      "%.3f ms; left to libjpeg: %zu not in step, %zu a run out of step, %zu a bad code, %zu a "
      "segment short, %zu other; %zu failed %s of %zu images%s%s), transforms %.3f ms (in: "
      "dequantisation, IDCT, upsampling, colour; out: colour, downsampling, forward DCT, "
      "quantisation), copies %.3f ms, filter %.3f ms\n",
      t.entropy_kernel_ms / std::max<double>(1, t.entropy_timed_images), t.entropy_images,
      t.entropy_launches, t.entropy_launches == 1 ? "launch" : "launches",
      t.entropy_upload_ms / uploads_n, t.entropy_refused[2], t.entropy_refused[3],
      t.entropy_refused[4], t.entropy_refused[5], t.entropy_refused[0], t.entropy_failed_launches,
      t.entropy_failed_launches == 1 ? "launch" : "launches", t.entropy_failed_images,
      t.entropy_failure.empty() ? "" : ": ", t.entropy_failure.c_str(),
      (t.upload_ms - t.upload_copy_ms + t.download_ms - t.download_copy_ms) / n,
      (t.upload_copy_ms + t.download_copy_ms) / n, t.kernel_ms / n);
  std::map<const void*, std::vector<StageTimes::Span>> by_device;
  for (const StageTimes::Span& s : t.spans) by_device[s.device].push_back(s);
  const double timed = static_cast<double>(std::max<size_t>(1, t.timed_round_trips));
  std::printf(
      "device lanes' host clock an image: %.3f ms enqueuing %.1f commands, %.3f ms waiting for "
      "them, %.3f ms checking and timing them\n",
      t.enqueue_ms / timed, t.commands / timed, t.wait_ms / timed, t.check_ms / timed);
  for (const auto& [device, spans] : by_device) {
    double sum_ms = 0;
    for (const StageTimes::Span& s : spans) sum_ms += (s.end_ns - s.start_ns) * 1e-6;
    const auto [busy, seconds] = device_busy(spans);
    std::printf(
        "device busy: %.0f%% of the %.3f s from its first image's upload to its last image's "
        "download (%zu round trips of %.3f ms each on the device's clock, gaps between their "
        "commands included)\n",
        100 * busy, seconds, spans.size(), sum_ms / spans.size());
  }
}

}  // namespace

// Throws UsageError where --report names a file the batch reads: the list or an input (appended
// to, it would be changed).
static void check_report(const JobOptions& o, const Plan& p) {
  struct stat report;
  if (o.report == "-" || ::stat(o.report.c_str(), &report) != 0) return;
  auto same = [&](const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && st.st_dev == report.st_dev &&
           st.st_ino == report.st_ino;
  };
  const std::string why = "--report '" + o.report + "' is ";
  if (!o.files_from.empty() && o.files_from != "-" && same(o.files_from))
    throw UsageError(why + "the --files-from list; name another file");
  for (const Item& item : p.items)
    if (same(item.input)) throw UsageError(why + "the input '" + item.input + "'");
  for (const auto& [input, output] : p.skipped)
    if (same(input)) throw UsageError(why + "the input '" + input + "'");
}

std::vector<DeviceInfo> every_device(const std::vector<DeviceInfo>& devices) {
  const cl_device_type fast = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR;
  std::vector<DeviceInfo> chosen;
  for (const DeviceInfo& d : devices)
    if (d.type & fast) chosen.push_back(d);
  return chosen.empty() ? devices : chosen;
}

int run_batch(const JobOptions& o) {
  check_output_folder(o);  // a usage error that needs no driver loaded
  const HostLane host = host_lane(o);
  // The OpenCL platforms load (a tenth of a second or more on a GPU machine) while the folders
  // are listed and checked; none with --device host, and with a host lane only once its first
  // image says the batch is long enough to need them (open_devices).
  std::future<std::vector<DeviceInfo>> devices;
  try {
    if (host == HostLane::only)
      devices = std::async(std::launch::deferred, [] { return std::vector<DeviceInfo>{}; });
    else if (host == HostLane::while_opening)
      devices = std::async(std::launch::deferred, [&o] { return batch_devices(o); });
    else
      devices = std::async(std::launch::async, [&o] { return batch_devices(o); });
  } catch (const std::system_error&) {  // no thread for it: resolved when first needed
    devices = std::async(std::launch::deferred, [&o] { return batch_devices(o); });
  }
  // --files-from's paths (an empty list is a batch with nothing to do, as an empty folder is).
  const std::vector<std::string> listed = o.files_from.empty()
                                              ? std::vector<std::string>{}
                                              : read_file_list(o.files_from, o.files_from_nul);
  const Plan p = plan(o, listed);
  trace("batch: planned", p.items.size());
  // The outputs to write: the temporary files a killed run left beside them go first, their
  // folders are synced once the files are written.
  std::vector<std::string> outputs;
  for (const Item& item : p.items) outputs.push_back(item.output);
  const size_t stale = remove_stale_temp_files(outputs);
  for (const auto& [input, why] : p.failed)
    std::cerr << "blurtool: " << input << ": " << why << "\n";

  if (!o.quiet && !o.files_from.empty() && listed.empty())
    std::cerr << "blurtool: warning: --files-from '" << o.files_from << "' lists no path\n";
  if (!o.quiet && p.listed_in_output > 0)
    std::cerr << "blurtool: warning: " << p.listed_in_output
              << (p.listed_in_output == 1 ? " listed path lies" : " listed paths lie")
              << " in the output folder '" << o.output << "' and "
              << (p.listed_in_output == 1 ? "is no input" : "are no inputs") << "\n";
  // Encoder options that no output of the batch takes.
  std::set<OutputKind> kinds;
  for (const Item& item : p.items) kinds.insert(item.kind);
  for (const std::string& w : unused_encoder_options(o, kinds))
    if (!o.quiet) std::cerr << "blurtool: warning: " << w << "\n";
  if (p.folders_without_images > 0 && !o.quiet)
    std::cerr << "blurtool: warning: " << p.folders_without_images
              << (p.folders_without_images == 1 ? " input folder holds" : " input folders hold")
              << " no .png, .jpg, .jpeg, .tif, .tiff or .webp file"
              << (o.recursive ? "" : " (-r descends)") << "\n";

  // Resolved even when nothing is left to do, so that a bad --device or --devices is a usage
  // error of every run, not only of those with images to process; with images, the pipeline
  // opens the devices while it decodes the first ones.
  if (p.items.empty() && host != HostLane::while_opening) devices.get();
  std::error_code ec;
  const bool made_folder = fs::create_directories(o.output, ec);
  if (ec) throw Error("output folder '" + o.output + "': " + ec.message());
  // The report, once the output folder exists (it may be inside), never one of the files read.
  std::unique_ptr<BatchReport> report;
  try {
    if (!o.report.empty()) {
      check_report(o, p);
      report = std::make_unique<BatchReport>(o.report);
    }
  } catch (...) {
    if (made_folder) fs::remove(o.output, ec);  // only while still empty
    throw;
  }
  Pipeline pipeline(o, p, std::move(devices), report.get(), host);
  pipeline.set_planned_failures(p.failed.size());
  try {
    pipeline.run();
    sync_folders_of(outputs);  // the renames on disk before the summary says done
  } catch (...) {
    if (made_folder) fs::remove(o.output, ec);  // only while still empty
    throw;
  }

  if (!o.quiet) {
    const double s = pipeline.seconds();
    char line[512];
    // Outputs that existed before the run (an earlier run's) are kept, not remade: say how many
    // and how to remake them, since a rerun with other settings would otherwise change nothing.
    const size_t kept = pipeline.kept(), appeared = pipeline.skipped() - kept;
    std::string replaces;
    if (kept > 0)
      replaces = std::to_string(kept) + (kept == 1 ? " output" : " outputs") +
                 " kept from an earlier run; " + parameter("force") + " replaces " +
                 (kept == 1 ? "it" : "them");
    if (appeared > 0)
      replaces += (replaces.empty() ? "" : "; ") + std::to_string(appeared) +
                  (appeared == 1 ? " output" : " outputs") + " appeared while the batch ran";
    if (!replaces.empty()) replaces = " (" + replaces + ")";
    std::snprintf(line, sizeof line, "blurtool: %zu done, %zu skipped%s, %zu failed in %.1f s",
                  pipeline.done(), pipeline.skipped(), replaces.c_str(), pipeline.failed(), s);
    std::cerr << line;
    // Rates only of work done: a run that only skipped or failed has none to give.
    if (pipeline.done() > 0 && s > 0) {
      std::snprintf(line, sizeof line, ": %.1f images/s, %.1f MB/s", pipeline.done() / s,
                    pipeline.input_bytes() / s / 1e6);
      std::cerr << line;
    }
    if (p.ignored > 0)
      std::cerr << "; " << p.ignored << " ignored: not an image format blurtool reads";
    if (stale > 0)
      std::cerr << "; removed " << stale << " left-over temporary file" << (stale == 1 ? "" : "s")
                << " (older than an hour)";
    std::cerr << "\n";
  }
  if (report) {
    SummaryRecord sum;
    sum.done = pipeline.done();
    sum.skipped = pipeline.skipped();
    sum.failed = pipeline.failed();
    sum.ignored = p.ignored;
    sum.seconds = pipeline.seconds();
    sum.bytes_in = pipeline.input_bytes();
    sum.bytes_out = pipeline.output_bytes();
    if (o.shard.count > 1)
      sum.shard = std::to_string(o.shard.index % o.shard.count) + "/" +
                  std::to_string(o.shard.count);  // 4/4 as 0/4: one spelling a share
    for (const DeviceInfo& d : pipeline.devices()) sum.devices.push_back(d.name);
    if (pipeline.host_images() > 0) sum.devices.push_back("host");
    report->summary(sum);
  }
  if (o.stage_times) print_stage_times(pipeline);
  return pipeline.failed() > 0 ? 1 : 0;
}

}  // namespace blurtool
