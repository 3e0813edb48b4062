// The schedule table of a device (see schedule_table.h).
#include "filters/schedule_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "runtime/kernel_sources.h"

namespace blurtool {

namespace {

nlohmann::ordered_json to_json(const TunedSchedule& t) {
  return {{"op", t.op},           {"intermediate", t.intermediate},
          {"radius", t.radius},   {"variant", t.variant},
          {"segment", t.segment}, {"unroll", t.unroll},
          {"wg", t.wg.text()},    {"ms", t.ms},
          {"width", t.width},     {"height", t.height}};
}

TunedSchedule from_json(const nlohmann::json& j) {
  TunedSchedule t;
  t.op = j.at("op").get<std::string>();
  t.intermediate = j.at("intermediate").get<std::string>();
  t.radius = j.at("radius").get<int>();
  t.variant = j.at("variant").get<std::string>();
  t.segment = j.at("segment").get<int>();
  t.unroll = j.at("unroll").get<int>();
  const std::string wg = j.at("wg").get<std::string>();
  if (std::sscanf(wg.c_str(), "%dx%d", &t.wg.x, &t.wg.y) != 2)
    throw nlohmann::json::other_error::create(501, "wg '" + wg + "' is not WxH", &j);
  t.ms = j.at("ms").get<double>();
  t.width = j.at("width").get<int>();
  t.height = j.at("height").get<int>();
  return t;
}

struct CachedTable {
  std::filesystem::file_time_type written;
  std::uintmax_t size = 0;
  std::vector<TunedSchedule> entries;
};

std::vector<TunedSchedule> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the tuning table");
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    // Tuned on other kernels (an earlier or later blurtool): its winners are stale.
    if (!j.is_object() || !j.contains("kernels") || j["kernels"] != tune_kernels_fingerprint())
      return {};
    std::vector<TunedSchedule> entries;
    for (const auto& e : j.at("entries")) entries.push_back(from_json(e));
    return entries;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not a blurtool tuning table (" + e.what() +
                "); run blurtool tune again or delete it");
  }
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
    add(source);
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
  if (it == tables.end() || it->second.written != written || it->second.size != size)
    it = tables.insert_or_assign(path, CachedTable{written, size, read_table(path)}).first;
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

std::string schedule_table_text(const DeviceInfo& d, int runs,
                                const std::vector<TunedSchedule>& entries) {
  nlohmann::ordered_json j = {{"device", d.name},   {"platform", d.platform},
                              {"driver", d.driver}, {"kernels", tune_kernels_fingerprint()},
                              {"runs", runs},       {"entries", nlohmann::ordered_json::array()}};
  for (const TunedSchedule& t : entries) j["entries"].push_back(to_json(t));
  return j.dump(2) + "\n";
}

}  // namespace blurtool
