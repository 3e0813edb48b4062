// `blurtool tune` (see tune.h); the table it writes is read by filters/schedule_table.cpp.
#include "tools/tune.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "filters/box/box_search_space.h"
#include "filters/bright/bright_search_space.h"
#include "filters/gauss/gauss_search_space.h"
#include "filters/intermediate.h"
#include "image/image_io.h"
#include "tools/bench.h"
#include "tools/bench_suite.h"
#include "util/error.h"

namespace blurtool {

namespace {

constexpr int kTuneWidth = 1920, kTuneHeight = 1080;
// The second size class on GPUs: the box-blur write-up's photo size.
constexpr int kTuneLargeWidth = 3024, kTuneLargeHeight = 4032;
// One case: the candidates `make` builds, timed; the fastest becomes the case's entry.
struct Candidate {
  TunedSchedule schedule;
  std::function<std::unique_ptr<Filter>()> make;
  bool uses_intermediate = true;  ///< false: the same schedule for every intermediate format
};

std::string describe_candidate(const TunedSchedule& t) {
  std::string text = t.variant;
  if (t.segment) text += " segment=" + std::to_string(t.segment);
  if (t.unroll) text += " x" + std::to_string(t.unroll);
  if (!t.wg.is_default()) text += " wg=" + t.wg.text();
  return text;
}

}  // namespace

namespace {

// The cases of `blurtool tune` on one w x h image: appends each case's winner to `table`.
void tune_size(Runtime& runtime, const TuneOptions& o, int w, int h,
               std::vector<TunedSchedule>& table, std::ostream* log) {
  const Image image = suite_image(w, h);
  // Times of the schedules that ignore the intermediate format (tiled, fused, ...), by op,
  // radius and schedule: each is timed once and that time stands for it in every format's
  // case, so that noise cannot crown a different one of them in each (it did: the tiled
  // Gaussian's 64-column tile for rgba32f, 256 for rgba8 and rgba16f on one CPU).
  std::map<std::string, double> one_pass_ms;
  // Times the candidates of one case (all with the case's op, radius and intermediate) and
  // appends the fastest to the table.
  auto run_case = [&](const std::string& label, std::vector<Candidate> candidates) {
    const Candidate* best = nullptr;
    double best_ms = 0;
    int skipped = 0;
    auto consider = [&](const Candidate& c) {
      if (!best || c.schedule.ms < best_ms) {
        best = &c;
        best_ms = c.schedule.ms;
      }
    };
    for (Candidate& c : candidates) {
      // The one-pass time's key; empty where the schedule uses the intermediate.
      const std::string key = c.uses_intermediate
                                  ? std::string()
                                  : c.schedule.op + " r=" + std::to_string(c.schedule.radius) +
                                        " " + describe_candidate(c.schedule);
      if (!key.empty()) {
        if (auto it = one_pass_ms.find(key); it != one_pass_ms.end()) {
          c.schedule.ms = it->second;
          consider(c);
          continue;
        }
      }
      std::unique_ptr<Filter> filter;
      try {
        filter = c.make();
      } catch (const UsageError&) {  // a work-group, local memory or feature it lacks
        ++skipped;
        continue;
      } catch (const Error&) {  // an image size it cannot hold
        ++skipped;
        continue;
      }
      c.schedule.ms = time_filter(runtime, *filter, image, o.runs).median;
      if (!key.empty()) one_pass_ms[key] = c.schedule.ms;
      consider(c);
    }
    if (!best) throw Error("tune: no schedule of " + label + " runs on this device");
    TunedSchedule t = best->schedule;
    t.width = w;
    t.height = h;
    table.push_back(t);
    if (log) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.4f ms", t.ms);
      *log << "  " << label << ": " << describe_candidate(t) << " " << ms << " (best of "
           << candidates.size() - skipped
           << (skipped ? ", " + std::to_string(skipped) + " skipped" : "") << ")" << std::endl;
    }
  };

  // The search spaces live beside their filters (filters/*/..._search_space.h).
  for (int radius : box_tuning_radii()) {
    for (const auto& f : intermediate_table()) {
      std::vector<Candidate> cs;
      for (const BoxParams& p : box_tuning_candidates(radius, f.value, w, h, runtime.device())) {
        TunedSchedule t;
        t.op = "box";
        t.intermediate = f.name;
        t.radius = radius;
        t.variant = name_of(box_variant_table(), p.variant);
        t.segment = p.segment;
        t.unroll = p.unroll;
        t.wg = p.wg;
        cs.push_back({t,
                      [&runtime, p, w, h] { return std::make_unique<BoxFilter>(runtime, p, w, h); },
                      box_is_two_pass(p.variant)});
      }
      run_case("box r=" + std::to_string(radius) + " " + f.name, std::move(cs));
    }
  }
  for (int radius : gauss_tuning_radii()) {
    for (const auto& f : intermediate_table()) {
      std::vector<Candidate> cs;
      for (const GaussParams& p : gauss_tuning_candidates(radius, f.value, runtime.device())) {
        TunedSchedule t;
        t.op = "gauss";
        t.intermediate = f.name;
        t.radius = radius;
        t.variant = name_of(gauss_variant_table(), p.variant);
        t.wg = p.wg;
        t.segment = p.segment;
        cs.push_back(
            {t, [&runtime, p, w, h] { return std::make_unique<GaussFilter>(runtime, p, w, h); },
             gauss_is_two_pass(p.variant)});
      }
      run_case("gauss r=" + std::to_string(radius) + " " + f.name, std::move(cs));
    }
  }
  for (int block : bright_tuning_blocks()) {
    std::vector<Candidate> cs;
    for (const BrightParams& p : bright_tuning_candidates(block)) {
      TunedSchedule t;
      t.op = "bright";
      t.radius = block;
      t.variant = name_of(bright_variant_table(), p.variant);
      cs.push_back(
          {t, [&runtime, p, w, h] { return std::make_unique<BrightFinder>(runtime, p, w, h); }});
    }
    run_case("bright B=" + std::to_string(block), std::move(cs));
  }
}

}  // namespace

namespace {

// Creates the folder of the table at `path` and checks that a file can be written there, so
// that a cache folder that cannot take the table fails at once, naming the folder, rather than
// after minutes of measuring.
void check_table_folder(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error("tune: cannot create the cache folder '" + dir +
                "' for the table: " + ec.message());
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    throw Error("tune: cannot write the table into the cache folder '" + dir +
                "': " + errno_text(err));
  }
}

}  // namespace

std::vector<TunedSchedule> tune(Runtime& runtime, const TuneOptions& o, std::ostream* log) {
  check_table_folder(tune_table_path(runtime.device()));
  const bool gpu = runtime.device().type & CL_DEVICE_TYPE_GPU;
  std::vector<std::pair<int, int>> sizes = {{kTuneWidth, kTuneHeight}};
  if (gpu) sizes.push_back({kTuneLargeWidth, kTuneLargeHeight});
  std::vector<TunedSchedule> table;
  for (auto [full_w, full_h] : sizes) {
    const int w = std::max(1, static_cast<int>(full_w * o.scale));
    const int h = std::max(1, static_cast<int>(full_h * o.scale));
    if (log) *log << "on " << w << "x" << h << ":" << std::endl;
    tune_size(runtime, o, w, h, table, log);
  }

  const DeviceInfo& d = runtime.device();
  const std::string path = tune_table_path(d);
  const std::string text = schedule_table_text(d, o.runs, table);
  write_file_atomic(path, std::vector<std::uint8_t>(text.begin(), text.end()));
  return table;
}

}  // namespace blurtool
