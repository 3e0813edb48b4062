// Benchmark statistics, floor measurement and report printing (see bench.h).
#include "tools/bench.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace blurtool {

int runs_after_warmup(double warm_ms, int runs) {
  return warm_ms > 1000 ? 1 : warm_ms > 100 ? std::min(runs, 3) : runs;
}

Stats summarize(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  s.min = values.front();
  s.max = values.back();
  return s;
}

Stats measure_copy(Runtime& runtime, std::uint64_t bytes, int runs) {
  cl::Buffer a(runtime.context(), CL_MEM_READ_WRITE, bytes);
  cl::Buffer b(runtime.context(), CL_MEM_READ_WRITE, bytes);
  cl::CommandQueue& queue = runtime.queue();
  const cl_uchar pattern = 0x5a;
  queue.enqueueFillBuffer(a, pattern, 0, bytes);
  std::vector<double> ms;
  for (int i = 0; i <= runs; ++i) {
    cl::Event event;
    queue.enqueueCopyBuffer(a, b, 0, 0, bytes, nullptr, &event);
    event.wait();
    if (i > 0) ms.push_back(event_ms(event));  // the first copy is the warm-up
  }
  return summarize(ms);
}

BenchReport make_report(Runtime& runtime, Filter& filter, const FilterRun& run, int runs,
                        bool measure_floor) {
  BenchReport r;
  r.device = runtime.device().name + " (" + runtime.device().platform + ", " +
             runtime.device().type_name() + ")";
  r.schedule = filter.describe();
  r.width = filter.io_width;  // run_filter's image (a timings-only run has no output)
  r.height = filter.io_height;
  r.pixels = filter.depth() == PixelDepth::u16 ? "RGBA16" : "RGBA8";
  r.runs = runs;
  std::vector<double> totals(run.pass_ms.empty() ? 0 : run.pass_ms[0].size(), 0.0);
  for (size_t p = 0; p < filter.passes().size(); ++p) {
    BenchRow row{filter.passes()[p].kernel, summarize(run.pass_ms[p]), filter.passes()[p].bytes};
    r.kernels.push_back(row);
    for (size_t i = 0; i < totals.size(); ++i) totals[i] += run.pass_ms[p][i];
  }
  // A copy of N bytes reads N and writes N: half the compulsory bytes, copied, move them all.
  const std::uint64_t bytes = filter.compulsory_bytes();
  r.total = {"all kernels", summarize(totals), bytes};
  r.floor = {"floor (device copy)", Stats{}, bytes};
  if (measure_floor) r.floor.ms = measure_copy(runtime, bytes / 2, runs);
  return r;
}

namespace {

void print_table(const BenchReport& r, std::ostream& out) {
  char line[256];
  out << "device:   " << r.device << "\n";
  out << "schedule: " << r.schedule << ", " << r.width << "x" << r.height << " " << r.pixels
      << ", median of " << r.runs << " runs after 1 warm-up\n";
  out << "kernel time (OpenCL profiling events):\n";
  std::snprintf(line, sizeof line, "  %-24s %10s %10s %10s %10s %9s\n", "kernel", "median ms",
                "min ms", "max ms", "MB moved", "GB/s");
  out << line;
  auto row = [&](const BenchRow& b) {
    std::snprintf(line, sizeof line, "  %-24s %10.3f %10.3f %10.3f %10.1f %9.1f\n", b.name.c_str(),
                  b.ms.median, b.ms.min, b.ms.max, b.bytes / 1e6, b.gbps());
    out << line;
  };
  for (const BenchRow& b : r.kernels) row(b);
  row(r.total);
  row(r.floor);
  out << "  (MB moved: each pass its input and output once; all kernels and floor: what the "
         "operation must read and write at least)\n";
  std::snprintf(
      line, sizeof line,
      "  all kernels / floor: %.2fx (floor: a device copy moving as many bytes, at %.1f GB/s)\n",
      r.floor.ms.median > 0 ? r.total.ms.median / r.floor.ms.median : 0.0, r.floor.gbps());
  out << line;
  out << "host wall time:";
  for (const auto& [name, ms] : r.host_ms) {
    std::snprintf(line, sizeof line, " %s %.2f ms", name.c_str(), ms);
    out << line << (&name == &r.host_ms.back().first ? "" : ",");
  }
  out << "\n";
}

void print_csv(const BenchReport& r, std::ostream& out) {
  out << "kind,name,median_ms,min_ms,max_ms,bytes,gbps\n";
  auto row = [&](const char* kind, const BenchRow& b) {
    out << kind << "," << b.name << "," << b.ms.median << "," << b.ms.min << "," << b.ms.max << ","
        << b.bytes << "," << b.gbps() << "\n";
  };
  for (const BenchRow& b : r.kernels) row("kernel", b);
  row("total", r.total);
  row("floor", r.floor);
  for (const auto& [name, ms] : r.host_ms) out << "host," << name << "," << ms << ",,,,\n";
}

nlohmann::json row_json(const BenchRow& b) {
  return {{"name", b.name},     {"median_ms", b.ms.median}, {"min_ms", b.ms.min},
          {"max_ms", b.ms.max}, {"bytes", b.bytes},         {"gbps", b.gbps()}};
}

// What every JSON report opens with: the device, the schedule, the image and the repetitions.
nlohmann::json header_json(const BenchReport& r) {
  return {{"device", r.device}, {"schedule", r.schedule}, {"width", r.width},
          {"height", r.height}, {"pixels", r.pixels},     {"runs", r.runs}};
}

void print_json(const BenchReport& r, std::ostream& out) {
  nlohmann::json j = header_json(r);
  j["time"] = "kernel time from OpenCL profiling events; host times are wall times";
  j["kernels"] = nlohmann::json::array();
  for (const BenchRow& b : r.kernels) j["kernels"].push_back(row_json(b));
  j["total"] = row_json(r.total);
  j["floor"] = row_json(r.floor);
  j["ratio_to_floor"] = r.floor.ms.median > 0 ? r.total.ms.median / r.floor.ms.median : 0.0;
  for (const auto& [name, ms] : r.host_ms) j["host_ms"][name] = ms;
  out << j.dump(2) << "\n";
}

}  // namespace

void print_report(const BenchReport& report, const std::string& format, std::ostream& out) {
  if (format == "table")
    print_table(report, out);
  else if (format == "csv")
    print_csv(report, out);
  else if (format == "json")
    print_json(report, out);
  else
    throw UsageError(parameter("bench_format") + " '" + format + "': choose table, csv or json");
}

std::vector<WorkGroup> sweep_sizes(bool row_segments) {
  std::vector<WorkGroup> sizes;
  if (row_segments) {
    for (int g = 4; g <= 256; g *= 2) sizes.push_back({g, 1});
  } else {
    for (int x = 4; x <= 32; x *= 2)
      for (int y = 4; y <= 32; y *= 2) sizes.push_back({x, y});
  }
  return sizes;
}

namespace {

FilterRun timings_of(FilterRun run) {
  return run;
}

template <typename T>
std::vector<SweepRow> sweep_at(Runtime& runtime, const BasicImage<T>& rgba, bool row_segments,
                               const std::function<std::unique_ptr<Filter>(WorkGroup)>& make,
                               int runs) {
  std::vector<SweepRow> rows;
  for (const WorkGroup& wg : sweep_sizes(row_segments)) {
    SweepRow row;
    row.wg = wg;
    try {
      std::unique_ptr<Filter> filter = make(wg);
      const FilterRun run = timings_of(run_filter(runtime, *filter, rgba, runs));
      BenchReport r = make_report(runtime, *filter, run, runs, false);
      row.kernels = r.kernels;
      row.total = r.total;
    } catch (const UsageError& e) {
      row.skipped = e.what();
    } catch (const Error& e) {
      row.skipped = e.what();
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

std::vector<SweepRow> sweep_work_groups(
    Runtime& runtime, const Image& rgba, bool row_segments,
    const std::function<std::unique_ptr<Filter>(WorkGroup)>& make, int runs) {
  return sweep_at(runtime, rgba, row_segments, make, runs);
}

std::vector<SweepRow> sweep_work_groups(
    Runtime& runtime, const Image16& rgba, bool row_segments,
    const std::function<std::unique_ptr<Filter>(WorkGroup)>& make, int runs) {
  return sweep_at(runtime, rgba, row_segments, make, runs);
}

void print_sweep(const BenchReport& h, const std::vector<SweepRow>& rows, const std::string& format,
                 std::ostream& out) {
  if (format == "json") {
    nlohmann::json j = header_json(h);
    j["floor"] = row_json(h.floor);
    j["sweep"] = nlohmann::json::array();
    for (const SweepRow& r : rows) {
      nlohmann::json e = {{"wg", r.wg.text()}};
      if (!r.skipped.empty()) {
        e["skipped"] = r.skipped;
      } else {
        e["total"] = row_json(r.total);
        for (const BenchRow& k : r.kernels) e["kernels"].push_back(row_json(k));
      }
      j["sweep"].push_back(e);
    }
    out << j.dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    out << "wg,name,median_ms,min_ms,max_ms,bytes,gbps,skipped\n";
    for (const SweepRow& r : rows) {
      if (!r.skipped.empty()) {
        out << r.wg.text() << ",,,,,,,\"" << r.skipped << "\"\n";
        continue;
      }
      std::vector<BenchRow> lines = r.kernels;
      lines.push_back(r.total);
      for (const BenchRow& b : lines)
        out << r.wg.text() << "," << b.name << "," << b.ms.median << "," << b.ms.min << ","
            << b.ms.max << "," << b.bytes << "," << b.gbps() << ",\n";
    }
    return;
  }
  if (format != "table")
    throw UsageError(parameter("bench_format") + " '" + format + "': choose table, csv or json");
  char line[512];
  out << "device:   " << h.device << "\n";
  out << "schedule: " << h.schedule << ", " << h.width << "x" << h.height << " " << h.pixels
      << ", work-group sweep, median kernel time of " << h.runs << " runs after 1 warm-up\n";
  std::snprintf(line, sizeof line, "  %-8s %12s %12s %12s %9s\n", "wg", "pass 1 ms", "pass 2 ms",
                "total ms", "GB/s");
  out << line;
  for (const SweepRow& r : rows) {
    if (!r.skipped.empty()) {
      std::snprintf(line, sizeof line, "  %-8s skipped: ", r.wg.text().c_str());
      out << line << r.skipped << "\n";
      continue;
    }
    char second[32] = "-";
    if (r.kernels.size() > 1) std::snprintf(second, sizeof second, "%.3f", r.kernels[1].ms.median);
    std::snprintf(line, sizeof line, "  %-8s %12.3f %12s %12.3f %9.1f\n", r.wg.text().c_str(),
                  r.kernels[0].ms.median, second, r.total.ms.median, r.total.gbps());
    out << line;
  }
  std::snprintf(line, sizeof line,
                "  floor (device copy moving the operation's bytes): %.3f ms, %.1f GB/s\n",
                h.floor.ms.median, h.floor.gbps());
  out << line;
}

}  // namespace blurtool
