// The fixed benchmark suite of `blurtool bench` (see bench_suite.h).
#include "tools/bench_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/intermediate.h"
#include "tools/svg_chart.h"
#include "util/error.h"

namespace blurtool {

namespace {

// The write-ups' image sizes and parameters.
constexpr int kBoxWidth = 3024, kBoxHeight = 4032, kBoxRadius = 30;
constexpr int kSmallWidth = 1920, kSmallHeight = 1080;
constexpr double kGaussSigma = 10;
constexpr int kGaussRadius = 16;
constexpr double kBrightThreshold = 0.5;
// The sigma group's sigmas (issue 34: any sigma at a constant cost).
constexpr double kSigmaSweep[] = {1, 3, 10, 30, 60, 120, 250};

SuiteCase new_case(const std::string& group, const std::string& variant,
                   const std::string& intermediate, int radius, int width, int height) {
  SuiteCase c;
  c.group = group;
  c.variant = variant;
  c.intermediate = intermediate;
  c.radius = radius;
  c.width = width;
  c.height = height;
  return c;
}

int scaled(int side, double scale) {
  return std::max(1, static_cast<int>(std::lround(side * scale)));
}

void time_case(Runtime& runtime, Filter& filter, const Image& rgba, int runs, SuiteCase& c) {
  c.ms = time_filter(runtime, filter, rgba, runs, &c.runs);
  c.schedule = filter.describe();
  c.bytes = filter.compulsory_bytes();
}

// Builds and times one case; a schedule the device cannot run becomes a skipped case.
void run_case(Runtime& runtime, const std::function<std::unique_ptr<Filter>()>& make,
              const Image& rgba, int runs, SuiteCase& c) {
  std::unique_ptr<Filter> filter;
  try {
    filter = make();
  } catch (const UsageError& e) {  // a work-group, local memory or feature the device lacks
    c.skipped = e.what();
    return;
  } catch (const Error& e) {
    c.skipped = e.what();
    return;
  }
  time_case(runtime, *filter, rgba, runs, c);
}

std::vector<int> sweep_radii(bool quick) {
  if (quick) return {1, 8, 16, 24, 30, 40, 48, 56, 63};
  std::vector<int> radii;
  for (int r = 1; r <= 63; ++r) radii.push_back(r);
  return radii;
}

bool wanted(const SuiteOptions& o, const std::string& group) {
  return o.groups.empty() || std::find(o.groups.begin(), o.groups.end(), group) != o.groups.end();
}

std::string percent(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", v);
  return text;
}

}  // namespace

Stats time_filter(Runtime& runtime, Filter& filter, const Image& rgba, int runs, int* made) {
  // Through the filter's own input and output, which the repetitions below reuse.
  filter.io_in_place = false;
  const FilterRun warm = run_filter(runtime, filter, rgba, 0);
  double warm_ms = 0;
  for (const auto& pass : warm.pass_ms) warm_ms += pass.empty() ? 0 : pass[0];
  const int n = runs_after_warmup(warm_ms, runs);
  std::vector<double> totals;
  for (int i = 0; i < n; ++i) {
    const std::vector<cl::Event> events = filter.enqueue_io();
    runtime.queue().finish();
    double total = 0;
    for (const cl::Event& e : events) total += event_ms(e);
    totals.push_back(total);
  }
  if (made) *made = n;
  return summarize(totals);
}

Image suite_image(int w, int h) {
  Image img{w, h, 4, PixelVector<std::uint8_t>(static_cast<size_t>(w) * h * 4)};
  std::mt19937 rng(2026);
  std::uniform_int_distribution<int> grain(-12, 12);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double shade = 110 + 70 * std::sin(x / 41.0) * std::cos(y / 57.0);
      const bool spot = (x % 97 - 48) * (x % 97 - 48) + (y % 89 - 44) * (y % 89 - 44) < 9;
      for (int c = 0; c < 3; ++c) {
        const int v = spot ? 250 : static_cast<int>(shade) + 15 * c + grain(rng);
        img.pixels[img.index(x, y, c)] = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
      }
      img.pixels[img.index(x, y, 3)] = 255;
    }
  }
  return img;
}

const std::vector<std::string>& suite_groups() {
  static const std::vector<std::string> groups = {"box", "sweep", "gauss", "sigma", "bright"};
  return groups;
}

void check_suite_groups(const std::vector<std::string>& groups) {
  for (const std::string& g : groups) {
    const auto& all = suite_groups();
    if (std::find(all.begin(), all.end(), g) == all.end())
      throw UsageError(parameter("only") + " '" + g +
                       "': choose from box, sweep, gauss, sigma, bright");
  }
}

std::vector<SuiteCase> run_suite(Runtime& runtime, const SuiteOptions& o, std::ostream* progress) {
  check_suite_groups(o.groups);
  std::vector<SuiteCase> cases;
  auto report = [&](const SuiteCase& c) {
    if (!progress) return;
    *progress << "  " << c.group << " " << c.variant
              << (c.intermediate.empty() ? "" : " " + c.intermediate) << " r=" << c.radius;
    if (c.sigma > 0) *progress << " sigma=" << c.sigma;
    *progress << ": ";
    if (c.skipped.empty()) {
      char text[64];
      std::snprintf(text, sizeof text, "%.4f ms", c.ms.median);
      *progress << text;
    } else {
      *progress << "skipped";
    }
    *progress << std::endl;
  };

  const int bw = scaled(kBoxWidth, o.scale), bh = scaled(kBoxHeight, o.scale);
  const int sw = scaled(kSmallWidth, o.scale), sh = scaled(kSmallHeight, o.scale);
  if (wanted(o, "box") || wanted(o, "sweep")) {
    const Image big = suite_image(bw, bh);
    auto box_case = [&](const char* group, BoxVariant v, Intermediate f, int radius) {
      SuiteCase c =
          new_case(group, name_of(box_variant_table(), v),
                   box_is_two_pass(v) ? name_of(intermediate_table(), f) : "", radius, bw, bh);
      BoxParams p;
      p.radius = radius;
      p.variant = v;
      p.intermediate = f;
      run_case(
          runtime, [&] { return std::make_unique<BoxFilter>(runtime, p, bw, bh); }, big, o.runs, c);
      report(c);
      cases.push_back(c);
    };
    if (wanted(o, "box")) {
      for (const auto& v : box_variant_table()) {
        if (v.value == BoxVariant::automatic) continue;
        const bool quadratic =
            v.value == BoxVariant::single || v.value == BoxVariant::single_linear;
        if (o.quick && quadratic) continue;
        if (!box_is_two_pass(v.value)) {
          box_case("box", v.value, Intermediate::rgba32f, kBoxRadius);
          continue;
        }
        for (const auto& f : intermediate_table()) box_case("box", v.value, f.value, kBoxRadius);
      }
    }
    if (wanted(o, "sweep")) {
      std::vector<BoxVariant> swept = {
          BoxVariant::accumulated, BoxVariant::unrolled,        BoxVariant::scan,
          BoxVariant::segmented,   BoxVariant::segmented_local, BoxVariant::fused};
      if (!o.quick) swept.insert(swept.begin(), BoxVariant::double_linear);
      // tiled is a CPU schedule: on a GPU (one work-item per tile) it is 50-100x slower than
      // the others there, and its line would flatten theirs in the chart.
      if (!(runtime.device().type & CL_DEVICE_TYPE_GPU)) swept.push_back(BoxVariant::tiled);
      for (BoxVariant v : swept)
        for (int r : sweep_radii(o.quick)) box_case("sweep", v, Intermediate::rgba32f, r);
    }
  }
  if (wanted(o, "sigma")) {
    // Each sigma by the exact method (its default schedule), the fast and pyramid ones, and
    // what auto takes, which is one of them: its case is that one's, not timed twice.
    const Image big = suite_image(bw, bh);
    for (double sigma : kSigmaSweep) {
      std::map<GaussMethod, SuiteCase> done;
      for (GaussMethod m :
           {GaussMethod::exact, GaussMethod::fast, GaussMethod::pyramid, GaussMethod::automatic}) {
        GaussParams p;
        p.sigma = sigma;
        p.method = m;
        const bool fast = gauss_method_of(p) != GaussMethod::exact;
        SuiteCase c =
            new_case("sigma", name_of(gauss_method_table(), m), "", gauss_radius(p), bw, bh);
        c.sigma = sigma;
        if (m == GaussMethod::automatic) {
          const SuiteCase& same = done.at(gauss_method_of(p));
          c.schedule = same.schedule;
          c.runs = same.runs;
          c.ms = same.ms;
          c.bytes = same.bytes;
          c.skipped = same.skipped;
        } else if (o.quick && !fast && sigma > 60) {
          c.skipped = "--quick: the exact method only up to sigma 60";
        } else {
          run_case(
              runtime, [&] { return std::make_unique<GaussFilter>(runtime, p, bw, bh); }, big,
              o.runs, c);
        }
        report(c);
        done[m] = c;
        cases.push_back(c);
      }
    }
  }
  if (wanted(o, "gauss") || wanted(o, "bright")) {
    const Image small = suite_image(sw, sh);
    if (wanted(o, "gauss")) {
      for (const auto& v : gauss_variant_table()) {
        if (v.value == GaussVariant::automatic) continue;
        const bool quadratic =
            v.value == GaussVariant::naive || v.value == GaussVariant::naive_local;
        if (o.quick && quadratic) continue;
        std::vector<Intermediate> formats = {Intermediate::rgba32f};
        if (gauss_is_two_pass(v.value)) {
          formats.clear();
          for (const auto& f : intermediate_table()) formats.push_back(f.value);
        }
        for (Intermediate f : formats) {
          SuiteCase c = new_case("gauss", v.name,
                                 gauss_is_two_pass(v.value) ? name_of(intermediate_table(), f) : "",
                                 kGaussRadius, sw, sh);
          GaussParams p;
          p.sigma = kGaussSigma;
          p.radius = kGaussRadius;
          p.variant = v.value;
          p.intermediate = f;
          run_case(
              runtime, [&] { return std::make_unique<GaussFilter>(runtime, p, sw, sh); }, small,
              o.runs, c);
          report(c);
          cases.push_back(c);
        }
      }
    }
    if (wanted(o, "bright")) {
      for (const auto& v : bright_variant_table()) {
        if (v.value == BrightVariant::automatic) continue;
        SuiteCase c = new_case("bright", v.name, "", 0, sw, sh);
        BrightParams p;
        p.threshold = kBrightThreshold;
        p.variant = v.value;
        run_case(
            runtime, [&] { return std::make_unique<BrightFinder>(runtime, p, sw, sh); }, small,
            o.runs, c);
        report(c);
        cases.push_back(c);
      }
    }
  }

  // The floor of each distinct byte count, measured now, on the same device and queue.
  std::map<std::uint64_t, double> floors;
  for (SuiteCase& c : cases) {
    if (!c.skipped.empty()) continue;
    auto [it, fresh] = floors.emplace(c.bytes, 0.0);
    if (fresh) it->second = measure_copy(runtime, c.bytes / 2, std::max(o.runs, 3)).median;
    c.floor_ms = it->second;
  }
  return cases;
}

void print_suite(const std::vector<SuiteCase>& cases, const DeviceInfo& device,
                 const SuiteOptions& o, const std::string& format, std::ostream& out) {
  if (format == "json") {
    nlohmann::ordered_json j;
    j["device"] = device.name;
    j["platform"] = device.platform;
    j["driver"] = device.driver;
    j["runs"] = o.runs;
    j["quick"] = o.quick;
    j["time"] = "median kernel time of all passes, ms (OpenCL profiling events)";
    j["floor"] = "device copy (clEnqueueCopyBuffer) of the compulsory bytes, same run";
    j["cases"] = nlohmann::ordered_json::array();
    for (const SuiteCase& c : cases) {
      nlohmann::ordered_json e = {
          {"group", c.group},   {"variant", c.variant}, {"intermediate", c.intermediate},
          {"radius", c.radius}, {"width", c.width},     {"height", c.height}};
      if (c.sigma > 0) e["sigma"] = c.sigma;
      if (!c.skipped.empty()) {
        e["skipped"] = c.skipped;
      } else {
        e["schedule"] = c.schedule;
        e["runs"] = c.runs;
        e["median_ms"] = c.ms.median;
        e["min_ms"] = c.ms.min;
        e["max_ms"] = c.ms.max;
        e["bytes"] = c.bytes;
        e["gbps"] = c.gbps();
        e["floor_ms"] = c.floor_ms;
        e["percent_of_floor"] = c.percent_of_floor();
      }
      j["cases"].push_back(e);
    }
    out << j.dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    out << "group,variant,intermediate,radius,width,height,schedule,runs,median_ms,min_ms,max_ms,"
           "bytes,gbps,floor_ms,percent_of_floor,skipped\n";
    for (const SuiteCase& c : cases) {
      std::string why = c.skipped;
      std::replace(why.begin(), why.end(), ',', ';');
      std::replace(why.begin(), why.end(), '"', '\'');
      out << c.group << "," << c.variant << "," << c.intermediate << "," << c.radius << ","
          << c.width << "," << c.height << "," << c.schedule << "," << c.runs << "," << c.ms.median
          << "," << c.ms.min << "," << c.ms.max << "," << c.bytes << "," << c.gbps() << ","
          << c.floor_ms << "," << c.percent_of_floor() << "," << why << "\n";
    }
    return;
  }
  if (format != "table")
    throw UsageError(parameter("bench_format") + " '" + format + "': choose table, csv or json");

  char line[512];
  out << "device: " << device.name << " (" << device.platform << ", driver " << device.driver
      << ")\n";
  out << "median kernel time of all passes over up to " << o.runs
      << " runs after a warm-up (OpenCL profiling events); floor: a device copy of the same "
         "bytes, measured in this run; % of floor: floor time / case time\n";
  std::string group;
  for (const SuiteCase& c : cases) {
    if (c.group == "sweep") continue;
    if (c.group == "sigma") {
      if (c.group != group) {
        group = c.group;
        std::snprintf(line, sizeof line,
                      "\nGaussian by --gauss-method over sigma, %dx%d RGBA8 (auto: the case of "
                      "the method it takes)\n  %6s %-6s %6s %11s %9s %10s %11s %5s  %s\n",
                      c.width, c.height, "sigma", "method", "reach", "median ms", "GB/s",
                      "floor ms", "% of floor", "runs", "schedule");
        out << line;
      }
      if (!c.skipped.empty()) {
        std::snprintf(line, sizeof line, "  %6g %-6s %6d skipped: ", c.sigma, c.variant.c_str(),
                      c.radius);
        out << line << c.skipped << "\n";
        continue;
      }
      std::snprintf(line, sizeof line, "  %6g %-6s %6d %11.4f %9.1f %10.4f %11s %5d  ", c.sigma,
                    c.variant.c_str(), c.radius, c.ms.median, c.gbps(), c.floor_ms,
                    percent(c.percent_of_floor()).c_str(), c.runs);
      out << line << c.schedule << "\n";
      continue;
    }
    if (c.group != group) {
      group = c.group;
      const char* title = group == "box"     ? "box blur r=30"
                          : group == "gauss" ? "Gaussian sigma=10 radius=16 (33x33)"
                                             : "bright points T=0.5 B=8";
      std::snprintf(line, sizeof line, "\n%s, %dx%d RGBA8\n  %-17s %-13s %11s %9s %10s %11s %5s\n",
                    title, c.width, c.height, "variant", "intermediate", "median ms", "GB/s",
                    "floor ms", "% of floor", "runs");
      out << line;
    }
    if (!c.skipped.empty()) {
      std::snprintf(line, sizeof line, "  %-17s %-13s skipped: ", c.variant.c_str(),
                    c.intermediate.c_str());
      out << line << c.skipped << "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "  %-17s %-13s %11.4f %9.1f %10.4f %11s %5d\n",
                  c.variant.c_str(), c.intermediate.c_str(), c.ms.median, c.gbps(), c.floor_ms,
                  percent(c.percent_of_floor()).c_str(), c.runs);
    out << line;
  }

  // The sweep as a matrix: one row per radius, one column per variant.
  std::vector<std::string> variants;
  std::vector<int> radii;
  std::map<std::pair<std::string, int>, const SuiteCase*> at;
  for (const SuiteCase& c : cases) {
    if (c.group != "sweep") continue;
    if (std::find(variants.begin(), variants.end(), c.variant) == variants.end())
      variants.push_back(c.variant);
    if (std::find(radii.begin(), radii.end(), c.radius) == radii.end()) radii.push_back(c.radius);
    at[{c.variant, c.radius}] = &c;
  }
  if (variants.empty()) return;
  const SuiteCase& first = *at.begin()->second;
  std::snprintf(line, sizeof line,
                "\nbox blur radius sweep, %dx%d RGBA8, rgba32f intermediate (tiled: none): "
                "median ms (floor %.4f ms)\n  %6s",
                first.width, first.height, first.floor_ms, "radius");
  out << line;
  for (const std::string& v : variants) {
    std::snprintf(line, sizeof line, " %16s", v.c_str());
    out << line;
  }
  out << "\n";
  for (int r : radii) {
    std::snprintf(line, sizeof line, "  %6d", r);
    out << line;
    for (const std::string& v : variants) {
      const auto it = at.find({v, r});
      if (it == at.end() || !it->second->skipped.empty())
        std::snprintf(line, sizeof line, " %16s", "-");
      else
        std::snprintf(line, sizeof line, " %16.4f", it->second->ms.median);
      out << line;
    }
    out << "\n";
  }
  // How far each variant strays from its own r = 30 time (issue target: within 15%).
  std::snprintf(line, sizeof line, "  %6s", "vs r30");
  out << line;
  for (const std::string& v : variants) {
    const auto ref = at.find({v, 30});
    double worst = 0;
    bool have = ref != at.end() && ref->second->skipped.empty() && ref->second->ms.median > 0;
    for (int r : radii) {
      const auto it = at.find({v, r});
      if (!have || it == at.end() || !it->second->skipped.empty()) continue;
      worst = std::max(worst, std::fabs(it->second->ms.median / ref->second->ms.median - 1));
    }
    std::snprintf(line, sizeof line, " %16s", have ? ("+-" + percent(100 * worst)).c_str() : "-");
    out << line;
  }
  out << "\n  (vs r30: the largest relative difference from the variant's own r = 30 time)\n";
}

std::string sweep_chart_svg(const std::vector<SuiteCase>& cases, const DeviceInfo& device) {
  LineChart chart;
  int max_r = 1, w = 0, h = 0;
  for (const SuiteCase& c : cases) {
    if (c.group != "sweep" || !c.skipped.empty()) continue;
    auto line = std::find_if(chart.series.begin(), chart.series.end(),
                             [&](const ChartSeries& s) { return s.name == c.variant; });
    if (line == chart.series.end()) line = chart.series.insert(chart.series.end(), {c.variant, {}});
    line->points.emplace_back(c.radius, c.ms.median);
    max_r = std::max(max_r, c.radius);
    w = c.width;
    h = c.height;
  }
  if (chart.series.empty())
    throw Error(parameter("plot") + ": the suite ran no radius sweep (see " + parameter("only") +
                ")");
  chart.title = "box blur " + std::to_string(w) + "x" + std::to_string(h) +
                ", rgba32f: kernel time against radius, " + device.name;
  chart.x_label = "radius R (pixels)";
  chart.y_label = "median kernel time (ms)";
  for (int r = 0; r <= max_r; r += max_r >= 32 ? 8 : 4) chart.x_ticks.push_back(r);
  // The variants' times span decades (0.06 to 3.3 ms on an H100): on a linear axis the fast
  // ones would lie flat along its foot, so a log axis where the slowest is 10x the fastest.
  double low = 0, high = 0;
  bool positive = true;  // a log axis needs every time above 0
  for (const ChartSeries& s : chart.series)
    for (const auto& [r, ms] : s.points) {
      positive = positive && ms > 0;
      low = low == 0 ? ms : std::min(low, ms);
      high = std::max(high, ms);
    }
  chart.log_y = positive && high >= 10 * low;
  if (chart.log_y) chart.y_label += ", log scale";
  return line_chart_svg(chart);
}

}  // namespace blurtool
