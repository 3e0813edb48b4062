// The schedule table of a device (see schedule_table.h).
#include "filters/schedule_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/intermediate.h"
#include "runtime/kernel_sources.h"
#include "util/error.h"

namespace blurtool {

namespace {

nlohmann::ordered_json to_json(const TunedSchedule& t) {
  return {{"op", t.op},           {"intermediate", t.intermediate},
          {"radius", t.radius},   {"variant", t.variant},
          {"segment", t.segment}, {"unroll", t.unroll},
          {"wg", t.wg.text()},    {"ms", t.ms},
          {"width", t.width},     {"height", t.height}};
}

// Why a table is not one `blurtool tune` writes.
class InvalidTable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Entry field `key`: a string.
std::string text_field(const nlohmann::json& e, const char* key) {
  const nlohmann::json& v = e.at(key);
  if (!v.is_string()) throw InvalidTable(std::string("\"") + key + "\" is not a string");
  return v.get<std::string>();
}

// Entry field `key`: a whole number that an int holds.
int int_field(const nlohmann::json& e, const char* key) {
  const nlohmann::json& v = e.at(key);
  if (!v.is_number_integer() || v.get<long long>() < std::numeric_limits<int>::min() ||
      v.get<long long>() > std::numeric_limits<int>::max() ||
      (v.is_number_unsigned() && v.get<unsigned long long>() > std::numeric_limits<int>::max()))
    throw InvalidTable(std::string("\"") + key + "\": " + v.dump() + " is not a whole number");
  return v.get<int>();
}

// "WxH" as --wg takes it (both sides 1..4096), or "0x0": the schedule's own.
WorkGroup wg_field(const nlohmann::json& e) {
  const std::string text = text_field(e, "wg");
  WorkGroup wg;
  char end = 0;
  if (text == "0x0") return wg;
  if (std::sscanf(text.c_str(), "%5dx%5d%c", &wg.x, &wg.y, &end) != 2 ||
      text.find_first_not_of("0123456789x") != std::string::npos || wg.x < 1 || wg.y < 1 ||
      wg.x > 4096 || wg.y > 4096)
    throw UsageError(parameter("wg") + " '" + text +
                     "': expected WxH with W and H from 1 to 4096, e.g. 16x16 or 64x1");
  return wg;
}

// Entry `e` of a table, each value checked as the option it stands for is on the command line
// (--variant, --intermediate, --segment, --unroll, --wg; the radius or block side as --box,
// --radius or --block; the variants a parameter goes with), so that a table can make auto run
// nothing that the command line would refuse (a segment of -5 made every pixel 0). Throws
// InvalidTable or UsageError with the reason.
TunedSchedule checked_entry(const nlohmann::json& e) {
  if (!e.is_object()) throw InvalidTable("an entry is not an object");
  TunedSchedule t;
  t.op = text_field(e, "op");
  t.intermediate = text_field(e, "intermediate");
  t.radius = int_field(e, "radius");
  t.variant = text_field(e, "variant");
  t.segment = int_field(e, "segment");
  t.unroll = int_field(e, "unroll");
  t.wg = wg_field(e);
  if (!e.at("ms").is_number() || !std::isfinite(e.at("ms").get<double>()) ||
      e.at("ms").get<double>() < 0)
    throw InvalidTable("\"ms\": " + e.at("ms").dump() + " is not a time");
  t.ms = e.at("ms").get<double>();
  t.width = int_field(e, "width");
  t.height = int_field(e, "height");
  if (t.width < 1 || t.height < 1)
    throw InvalidTable("the image size " + std::to_string(t.width) + "x" +
                       std::to_string(t.height) + " is not one");
  const std::string variant = parameter("variant");
  if (t.op == "box") {
    BoxParams p;
    p.radius = t.radius;
    p.variant = parse_named(box_variant_table(), t.variant, variant);
    p.intermediate = parse_named(intermediate_table(), t.intermediate, parameter("intermediate"));
    p.segment = t.segment;
    p.unroll = t.unroll;
    p.wg = t.wg;
    const BoxVariant v = p.variant;
    const bool segmented = v == BoxVariant::segmented || v == BoxVariant::segmented_local;
    if (v == BoxVariant::automatic) throw InvalidTable(variant + " auto is no schedule");
    if (p.segment != 0 && !segmented && v != BoxVariant::tiled && v != BoxVariant::fused)
      throw UsageError(parameter("segment") + " goes with " + variant +
                       " segmented, segmented-local, tiled or fused, not " + t.variant);
    if (!p.wg.is_default() && !segmented && v != BoxVariant::fused)
      throw UsageError(parameter("wg") + " goes with " + variant +
                       " segmented, segmented-local or fused of " + parameter("box") + ", not " +
                       t.variant);
    validate(p);
  } else if (t.op == "gauss") {
    GaussParams p;
    p.sigma = 1;  // any: a tuned entry stands for every sigma of its radius
    p.radius = t.radius;
    p.variant = parse_named(gauss_variant_table(), t.variant, variant);
    p.intermediate = parse_named(intermediate_table(), t.intermediate, parameter("intermediate"));
    p.segment = t.segment;
    p.wg = t.wg;
    if (p.variant == GaussVariant::automatic) throw InvalidTable(variant + " auto is no schedule");
    if (t.unroll != 0) throw UsageError(parameter("unroll") + " goes with --box, not --gauss");
    validate(p);
  } else if (t.op == "bright") {
    BrightParams p;
    p.block = t.radius;
    p.per_item = std::min(p.per_item, std::max(1, p.block));
    p.variant = parse_named(bright_variant_table(), t.variant, variant);
    if (p.variant == BrightVariant::automatic) throw InvalidTable(variant + " auto is no schedule");
    if (!t.intermediate.empty() || t.segment != 0 || t.unroll != 0 || !t.wg.is_default())
      throw InvalidTable("a bright-point entry with an intermediate, segment, unroll or wg");
    validate(p);
  } else {
    throw InvalidTable("\"op\": '" + t.op + "' is none of box, gauss, bright");
  }
  return t;
}

struct CachedTable {
  std::filesystem::file_time_type written;
  std::uintmax_t size = 0;
  std::vector<TunedSchedule> entries;
};

// The entries of the table at `path`: none where it was tuned on other kernels (an earlier or
// later blurtool: its winners are stale). Throws (InvalidTable, UsageError, a JSON error, Error)
// with the reason where it is no table blurtool tune writes: empty, cut short, not JSON, or an
// entry checked_entry refuses.
std::vector<TunedSchedule> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read it: " + errno_text(errno));
  const nlohmann::json j = nlohmann::json::parse(in);
  if (!j.is_object()) throw InvalidTable("not a JSON object");
  if (!j.contains("kernels") || j["kernels"] != tune_kernels_fingerprint()) return {};
  if (!j.contains("entries") || !j["entries"].is_array()) throw InvalidTable("no \"entries\" list");
  std::vector<TunedSchedule> entries;
  for (const auto& e : j["entries"]) {
    try {
      entries.push_back(checked_entry(e));
    } catch (const std::exception& why) {
      throw InvalidTable("entry " + std::to_string(entries.size() + 1) + ": " + why.what());
    }
  }
  return entries;
}

}  // namespace

std::string tune_kernels_fingerprint() {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a offset basis
  auto add = [&hash](const std::string& text) {
    for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    hash = (hash ^ 0) * 1099511628211ULL;  // a separator, so that names and texts cannot shift
  };
  for (const auto& [name, source] : kernel_sources()) {
    add(name);
    add(kernel_code(source));  // a comment edited leaves the winners valid
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::string tune_table_path(const DeviceInfo& d) {
  return cache_directory() + "/tune-" + file_name_safe(d.platform) + "-" + file_name_safe(d.name) +
         "-" + file_name_safe(d.driver) + ".json";
}

std::optional<TunedSchedule> tuned_schedule(const DeviceInfo& device, const std::string& op,
                                            const std::string& intermediate, int radius,
                                            std::uint64_t pixels) {
  if (const char* off = std::getenv("BLURTOOL_TUNE"); off && std::string(off) == "off")
    return std::nullopt;
  const std::string path = tune_table_path(device);
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return std::nullopt;  // no table for this device and driver
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  static std::mutex mutex;
  static std::map<std::string, CachedTable> tables;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = tables.find(path);
  if (it == tables.end() || it->second.written != written || it->second.size != size) {
    // A table that is no tuning table is input gone bad, not a reason to stop or to blur
    // wrongly: auto runs as without it, after one warning (again only when the file changes).
    CachedTable table{written, size, {}};
    try {
      table.entries = read_table(path);
    } catch (const std::exception& e) {
      print_warning(path + ": ignored, not a valid tuning table (" + e.what() +
                    "); blurtool tune writes a new one");
    }
    it = tables.insert_or_assign(path, std::move(table)).first;
  }
  // The size class: of the image sizes the table holds for this op and format, the one
  // nearest to `pixels` by ratio (the larger on a tie, and when `pixels` is 0).
  double size_class = 0, nearest = 0;
  for (const TunedSchedule& t : it->second.entries) {
    if (t.op != op || t.intermediate != intermediate) continue;
    const double size = std::max(1.0, static_cast<double>(t.width) * t.height);
    const double distance = pixels ? std::abs(std::log(size / static_cast<double>(pixels))) : 0;
    if (size_class == 0 || distance < nearest || (distance == nearest && size > size_class)) {
      size_class = size;
      nearest = distance;
    }
  }
  const TunedSchedule* best = nullptr;
  for (const TunedSchedule& t : it->second.entries) {
    if (t.op != op || t.intermediate != intermediate || t.radius < radius ||
        std::max(1.0, static_cast<double>(t.width) * t.height) != size_class)
      continue;
    if (!best || t.radius < best->radius) best = &t;
  }
  if (!best) return std::nullopt;
  return *best;
}

const std::vector<DefaultSchedule>& default_schedule_table() {
  auto entry = [](const char* vendor, cl_device_type types, const char* op, const char* variant,
                  int radius, const char* reason) {
    DefaultSchedule d;
    d.vendor = vendor;
    d.types = types;
    d.schedule.op = op;
    d.schedule.variant = variant;
    d.schedule.radius = radius;
    d.reason = reason;
    return d;
  };
  constexpr cl_device_type gpu = CL_DEVICE_TYPE_GPU, any = CL_DEVICE_TYPE_ALL;
  static const std::vector<DefaultSchedule> table = {
      // Box blur.
      entry("", gpu, "box", "fused", 0,
            "docs/notes/box.md, 'Box blur: one fused pass on the GPU (fused)': one pass, exact "
            "with any intermediate, the fastest box schedule on the GPUs measured, where its tile "
            "fits local memory"),
      entry("", gpu, "box", "segmented", 0,
            "docs/notes/box.md, 'Box blur: one work-item per segment instead of per row "
            "(segmented)': the fastest GPU schedule that needs no local memory at any radius"),
      entry("", any, "box", "tiled", 0,
            "docs/notes/cpu.md, 'CPU (PoCL, 2 AMD EPYC cores with AVX-512): the tiled schedules "
            "on buffers': buffers and sums kept in the cache; a tenth of the image schedules' "
            "time on CPUs"),
      // Gaussian.
      entry("NVIDIA", gpu, "gauss", "fused-mma", 0,
            "docs/notes/gauss.md, 'Gaussian fused-mma: separable-mma in one pass, through local "
            "memory': tensor cores, the fastest Gaussian up to its largest radius"),
      entry("NVIDIA", gpu, "gauss", "separable-mma", 0,
            "docs/notes/gauss.md, 'Gaussian separable-mma: both passes on the tensor cores': "
            "beyond fused-mma's radii, a third of separable-buffer's time at R 63"),
      entry("", gpu, "gauss", "fused", 32,
            "docs/notes/gauss.md, 'Gaussian: one pass over buffers, built per radius (fused)': "
            "the fastest without tensor cores up to R 32; beyond, its halo outgrows its tile"),
      entry("", gpu, "gauss", "separable-buffer", 0,
            "docs/notes/gauss.md, 'Gaussian separable-buffer: two passes over buffers, and why "
            "the Gaussian kernels stall': the fastest two-pass schedule where its tile fits"),
      entry("", gpu, "gauss", "separable-local", 0,
            "the write-up's local-memory schedule, which fits every device and radius"),
      entry("", any, "gauss", "tiled", 0,
            "docs/notes/cpu.md, 'Gaussian tiled: four rows at a time, four outputs in registers "
            "(kept)': buffers and a ring of rows in the cache, the fastest on CPUs"),
      // Bright points.
      entry("", any, "bright", "buffer", 0,
            "docs/notes/bright.md, 'Bright points over a plain buffer (buffer)': the fastest "
            "measured on a GPU and on a CPU"),
  };
  return table;
}

const std::vector<DefaultSchedule>& default_parameter_table() {
  auto entry = [](const char* op, const char* variant, int radius, WorkGroup wg, int segment,
                  int unroll, const char* reason) {
    DefaultSchedule d;
    d.schedule.op = op;
    d.schedule.variant = variant;
    d.schedule.radius = radius;
    d.schedule.wg = wg;
    d.schedule.segment = segment;
    d.schedule.unroll = unroll;
    d.reason = reason;
    return d;
  };
  // Measured on the H100 and kept on every device until another is measured: a device's own
  // entry (vendor, type) goes above the one for any device.
  static const std::vector<DefaultSchedule> table = {
      // Box blur.
      entry("box", "fused", 0, {16, 8}, 0, 0,
            "docs/notes/box.md, 'Box fused: first row windows from chunk sums, 17 outputs a "
            "work-item': 16x8 the fastest work-group measured; where its tile does not fit local "
            "memory the filter takes the next that fits (box_fused_default_group)"),
      entry("box", "segmented", 0, {}, 128, 2,
            "docs/notes/box.md, 'Box segmented and segmented-local: longer segments against "
            "the radius band' and 'Box blur: unrolled segmented loops': 128 pixels a work-item, "
            "2 a loop iteration (more fetches in flight a work-item slowed it)"),
      entry("box", "segmented-local", 0, {}, 8, 2,
            "docs/notes/box.md, 'Box segmented and segmented-local: longer segments against "
            "the radius band': its first windows are summed in local memory, so short segments "
            "cost little"),
      entry("box", "unrolled", 0, {}, 0, 8, "the box-blur write-up's best unroll"),
      entry("box", "scan", 0, {}, 0, 8, "the box-blur write-up's best unroll"),
      // Gaussian.
      entry("gauss", "fused", 32, {256, 1}, 8, 0,
            "docs/notes/gauss.md, 'Gaussian: one pass over buffers, built per radius (fused)': "
            "256 work-items and 8 rows a tile up to R 32"),
      entry("gauss", "fused", 0, {128, 1}, 8, 0,
            "docs/notes/gauss.md, 'Gaussian: one pass over buffers, built per radius (fused)': "
            "beyond R 32 a 128-column tile would leave half of 256 work-items idle in the row "
            "pass"),
      entry("gauss", "separable-buffer", 0, {128, 1}, 8, 0,
            "docs/notes/gauss.md, 'Gaussian separable-buffer: two passes over buffers, and why "
            "the Gaussian kernels stall': 128 work-items (the row tile's width), 8 outputs a "
            "column-pass work-item (more hold more registers)"),
  };
  return table;
}

TunedSchedule default_parameters(const DeviceInfo& device, const std::string& op,
                                 const std::string& variant, int radius) {
  const std::string vendor = device_vendor(device);
  for (const DefaultSchedule& d : default_parameter_table()) {
    if (d.schedule.op != op || d.schedule.variant != variant) continue;
    if (d.types != CL_DEVICE_TYPE_ALL && !(d.types & device.type)) continue;
    if (!d.vendor.empty() && d.vendor != vendor) continue;
    if (d.schedule.radius != 0 && radius > d.schedule.radius) continue;
    return d.schedule;
  }
  TunedSchedule none;
  none.op = op;
  none.variant = variant;
  return none;
}

std::string device_vendor(const DeviceInfo& device) {
  const std::string text = device.platform + " " + device.name;
  auto has = [&text](const char* word) { return text.find(word) != std::string::npos; };
  if (device.nv_compute_major > 0 || has("NVIDIA")) return "NVIDIA";
  if (has("AMD") || has("Advanced Micro Devices")) return "AMD";
  if (has("Intel")) return "Intel";
  if (has("Apple")) return "Apple";
  return "";
}

std::vector<TunedSchedule> default_schedules(const DeviceInfo& device, const std::string& op,
                                             int radius) {
  const std::string vendor = device_vendor(device);
  std::vector<TunedSchedule> out;
  for (const DefaultSchedule& d : default_schedule_table()) {
    if (d.schedule.op != op) continue;
    if (d.types != CL_DEVICE_TYPE_ALL && !(d.types & device.type)) continue;
    if (!d.vendor.empty() && d.vendor != vendor) continue;
    if (d.schedule.radius != 0 && radius > d.schedule.radius) continue;
    out.push_back(d.schedule);
  }
  return out;
}

std::string schedule_table_text(const DeviceInfo& d, int runs,
                                const std::vector<TunedSchedule>& entries) {
  nlohmann::ordered_json j = {{"device", d.name},   {"platform", d.platform},
                              {"driver", d.driver}, {"kernels", tune_kernels_fingerprint()},
                              {"runs", runs},       {"entries", nlohmann::ordered_json::array()}};
  // Each entry in the built-in tables' shape: who it is for (the device's vendor and type) and
  // why (the measurement), beside the schedule; tuned_schedule reads the schedule's fields.
  const std::string type = d.type & CL_DEVICE_TYPE_GPU   ? "GPU"
                           : d.type & CL_DEVICE_TYPE_CPU ? "CPU"
                                                         : "other";
  for (const TunedSchedule& t : entries) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.4f", t.ms);
    nlohmann::ordered_json e = {{"vendor", device_vendor(d)}, {"type", type}};
    e.update(to_json(t));
    e["reason"] = "blurtool tune on " + d.name + ": the fastest of its candidates, median " + ms +
                  " ms of " + std::to_string(runs) + " runs on " + std::to_string(t.width) + "x" +
                  std::to_string(t.height);
    j["entries"].push_back(e);
  }
  return j.dump(2) + "\n";
}

}  // namespace blurtool
