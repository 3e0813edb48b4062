// Benchmark statistics, floor measurement and report printing (see bench.h).
#include "core/bench.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace blurtool {

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

BenchReport make_report(Runtime& runtime, Filter& filter, const FilterRun& run, int runs) {
  BenchReport r;
  r.device = runtime.device().name + " (" + runtime.device().platform + ", " +
             runtime.device().type_name() + ")";
  r.schedule = filter.describe();
  r.width = run.output.width;
  r.height = run.output.height;
  r.runs = runs;
  std::vector<double> totals(run.pass_ms.empty() ? 0 : run.pass_ms[0].size(), 0.0);
  for (size_t p = 0; p < filter.passes().size(); ++p) {
    BenchRow row{filter.passes()[p].kernel, summarize(run.pass_ms[p]), filter.passes()[p].bytes};
    r.kernels.push_back(row);
    for (size_t i = 0; i < totals.size(); ++i) totals[i] += run.pass_ms[p][i];
  }
  const std::uint64_t image_bytes = 4ULL * r.width * r.height;
  r.total = {"all kernels", summarize(totals), 2 * image_bytes};
  r.floor = {"floor (device copy)", measure_copy(runtime, image_bytes, runs), 2 * image_bytes};
  return r;
}

namespace {

void print_table(const BenchReport& r, std::ostream& out) {
  char line[256];
  out << "device:   " << r.device << "\n";
  out << "schedule: " << r.schedule << ", " << r.width << "x" << r.height << " RGBA8, median of "
      << r.runs << " runs after 1 warm-up\n";
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
  std::snprintf(
      line, sizeof line,
      "  all kernels / floor: %.2fx (floor: read and write the image once at %.1f GB/s)\n",
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

void print_json(const BenchReport& r, std::ostream& out) {
  nlohmann::json j;
  j["device"] = r.device;
  j["schedule"] = r.schedule;
  j["width"] = r.width;
  j["height"] = r.height;
  j["runs"] = r.runs;
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
    throw UsageError("--bench-format '" + format + "': choose table, csv or json");
}

}  // namespace blurtool
