// Device side of the probes and their tables (see probe.h, kernels/probe.cl).
#include "tools/probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tools/bench_suite.h"
#include "util/error.h"

namespace blurtool {

namespace {

// The 2-D kernels' work-groups: 32x8 (a warp is 32 neighbouring pixels of one row) where the
// device takes 256 work-items, else the driver's choice.
cl::NDRange probe_local(const Runtime& runtime) {
  return runtime.device().max_work_group >= 256 ? cl::NDRange(32, 8) : cl::NullRange;
}

// A w x h NDRange, padded to whole work-groups of `local` (the kernels skip the padding).
cl::NDRange probe_global(const cl::NDRange& local, int w, int h) {
  if (local.dimensions() == 0) return cl::NDRange(w, h);
  return cl::NDRange(round_up(w, local[0]), round_up(h, local[1]));
}

std::string local_text(const cl::NDRange& local) {
  if (local.dimensions() == 0) return "driver's choice";
  return std::to_string(local[0]) + "x" + std::to_string(local[1]);
}

}  // namespace

const std::vector<ProbeScale>& cache_scales() {
  static const std::vector<ProbeScale> scales = {{1, 10}, {1, 2}, {1, 1}, {2, 1},
                                                 {4, 1},  {8, 1}, {16, 1}};
  return scales;
}

CacheProbe::CacheProbe(Runtime& runtime, const Image& rgba)
    : runtime_(runtime), width_(rgba.width), height_(rgba.height) {
  if (rgba.channels != 4) throw UsageError("probe cache: the source must be RGBA (4 channels)");
  if (!runtime.device().image_support)
    throw UsageError("probe cache: device '" + runtime.device().name +
                     "' has no image support (CL_DEVICE_IMAGE_SUPPORT)");
  const size_t bytes = rgba.pixels.size();
  image_ = cl::Image2D(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       cl::ImageFormat(CL_RGBA, CL_UNSIGNED_INT8), width_, height_, 0,
                       const_cast<std::uint8_t*>(rgba.pixels.data()));
  buffer_ = cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes,
                       const_cast<std::uint8_t*>(rgba.pixels.data()));
  out_ = cl::Buffer(runtime.context(), CL_MEM_WRITE_ONLY, bytes);
  std::vector<cl::Kernel> kernels =
      runtime.kernels("probe", {"probe_cache_image", "probe_cache_buffer"}, "");
  image_kernel_ = kernels[0];
  buffer_kernel_ = kernels[1];
}

cl::Event CacheProbe::enqueue(CacheRead read, ProbeScale s) {
  cl::Kernel& k = read == CacheRead::image ? image_kernel_ : buffer_kernel_;
  if (read == CacheRead::image)
    k.setArg(0, image_);
  else
    k.setArg(0, buffer_);
  k.setArg(1, out_);
  k.setArg(2, width_);
  k.setArg(3, height_);
  k.setArg(4, s.num);
  k.setArg(5, s.den);
  k.setArg(6, std::max(1, width_ / 100));
  k.setArg(7, std::max(1, height_ / 100));
  const cl::NDRange local = probe_local(runtime_);
  cl::Event e;
  runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, probe_global(local, width_, height_),
                                        local, nullptr, &e);
  return e;
}

std::vector<std::uint32_t> CacheProbe::output() {
  std::vector<std::uint32_t> out(static_cast<size_t>(width_) * height_);
  runtime_.queue().enqueueReadBuffer(out_, CL_TRUE, 0, out.size() * 4, out.data());
  return out;
}

std::string CacheProbe::work_group() const {
  return local_text(probe_local(runtime_));
}

BranchProbe::BranchProbe(Runtime& runtime, int width, int height, int rounds)
    : runtime_(runtime), width_(width), height_(height), rounds_(rounds) {
  out_ = cl::Buffer(runtime.context(), CL_MEM_WRITE_ONLY,
                    static_cast<size_t>(width) * height * 4 * sizeof(float));
  std::vector<cl::Kernel> kernels =
      runtime.kernels("probe", {"probe_branch", "probe_no_branch"}, "");
  branch_ = kernels[0];
  none_ = kernels[1];
}

cl::Event BranchProbe::enqueue(BranchKind kind, float frequency) {
  cl::Kernel& k = kind == BranchKind::none ? none_ : branch_;
  k.setArg(0, out_);
  k.setArg(1, width_);
  k.setArg(2, height_);
  k.setArg(3, 1.0f / static_cast<float>(width_));
  k.setArg(4, 1.0f / static_cast<float>(height_));
  k.setArg(5, frequency);
  k.setArg(6, rounds_);
  const cl::NDRange local = probe_local(runtime_);
  cl::Event e;
  runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, probe_global(local, width_, height_),
                                        local, nullptr, &e);
  return e;
}

std::vector<float> BranchProbe::output() {
  std::vector<float> out(static_cast<size_t>(width_) * height_ * 4);
  runtime_.queue().enqueueReadBuffer(out_, CL_TRUE, 0, out.size() * sizeof(float), out.data());
  return out;
}

std::string BranchProbe::work_group() const {
  return local_text(probe_local(runtime_));
}

StrideProbe::StrideProbe(Runtime& runtime, std::size_t bytes, std::size_t accesses)
    : runtime_(runtime), bytes_(bytes), accesses_(accesses) {
  if (bytes == 0 || (bytes & (bytes - 1)) != 0 || bytes > (std::size_t(1) << 31))
    throw Error("stride probe: the buffer size must be a power of two up to 2 GiB");
  buffer_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, bytes);
  kernel_ = runtime.kernel("probe", "probe_stride", "");
  clear();
}

void StrideProbe::clear() {
  runtime_.queue().enqueueFillBuffer(buffer_, static_cast<cl_uchar>(0), 0, bytes_);
  runtime_.queue().finish();
}

cl::Event StrideProbe::enqueue(std::uint32_t stride) {
  kernel_.setArg(0, buffer_);
  kernel_.setArg(1, static_cast<cl_uint>(stride));
  kernel_.setArg(2, static_cast<cl_uint>(bytes_ - 1));
  const bool fixed = runtime_.device().max_work_group >= 256 && accesses_ % 256 == 0;
  cl::Event e;
  runtime_.queue().enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(accesses_),
                                        fixed ? cl::NDRange(256) : cl::NullRange, nullptr, &e);
  return e;
}

std::vector<std::uint8_t> StrideProbe::output() {
  std::vector<std::uint8_t> out(bytes_);
  runtime_.queue().enqueueReadBuffer(buffer_, CL_TRUE, 0, bytes_, out.data());
  return out;
}

// ---------------------------------------------------------------------------------------------

TransferProbe::TransferProbe(Runtime& runtime, std::size_t bytes)
    : runtime_(runtime), second_(runtime.sibling()), bytes_(bytes) {
  for (int q = 0; q < 2; ++q) {
    Runtime& rt = q == 0 ? runtime_ : *second_;
    device_[q] = cl::Buffer(rt.context(), CL_MEM_READ_WRITE, bytes);
    // Written once, so that no timed copy pays the first touch of its pages.
    pageable_[q].assign(bytes, static_cast<std::uint8_t>(q + 1));
    pinned_[q] = PinnedBuffer(rt, bytes);
    std::memset(pinned_[q].data(), q + 1, bytes);
  }
}

std::uint8_t* TransferProbe::host(bool pinned, int q) {
  return pinned ? static_cast<std::uint8_t*>(pinned_[q].data()) : pageable_[q].data();
}

std::size_t TransferProbe::moved(TransferKind kind) const {
  return kind == TransferKind::both_ways_pinned || kind == TransferKind::two_to_device_pinned
             ? 2 * bytes_
             : bytes_;
}

void TransferProbe::run(TransferKind kind) {
  cl::CommandQueue& q0 = runtime_.queue();
  cl::CommandQueue& q1 = second_->queue();
  switch (kind) {
    case TransferKind::to_device_pageable:
    case TransferKind::to_device_pinned:
      q0.enqueueWriteBuffer(device_[0], CL_TRUE, 0, bytes_,
                            host(kind == TransferKind::to_device_pinned, 0));
      return;
    case TransferKind::from_device_pageable:
    case TransferKind::from_device_pinned:
      q0.enqueueReadBuffer(device_[0], CL_TRUE, 0, bytes_,
                           host(kind == TransferKind::from_device_pinned, 0));
      return;
    case TransferKind::both_ways_pinned:
      q0.enqueueWriteBuffer(device_[0], CL_FALSE, 0, bytes_, host(true, 0));
      q1.enqueueReadBuffer(device_[1], CL_FALSE, 0, bytes_, host(true, 1));
      break;
    case TransferKind::two_to_device_pinned:
      q0.enqueueWriteBuffer(device_[0], CL_FALSE, 0, bytes_, host(true, 0));
      q1.enqueueWriteBuffer(device_[1], CL_FALSE, 0, bytes_, host(true, 1));
      break;
  }
  q0.flush();
  q1.flush();
  q0.finish();
  q1.finish();
}

// ---------------------------------------------------------------------------------------------

const std::vector<std::string>& probe_names() {
  static const std::vector<std::string> names = {"cache", "divergence", "stride", "transfer"};
  return names;
}

namespace {

// The write-up's walk: a 32 MiB buffer, strides 1 .. 185, and (ours) 4 Mi accesses a run: the
// largest count at which no two of the device's work-items touch the same byte for any of these
// strides (their largest power-of-two factor is 8: 2^25 / 8 = 2^22).
constexpr std::size_t kStrideBytes = std::size_t(32) << 20;
constexpr std::size_t kStrideAccesses = std::size_t(1) << 22;
const std::uint32_t kStrides[] = {1, 2, 4, 8, 15, 28, 53, 99, 185};

// The divergence sweep's branch frequencies (periods across the image width); 1 and 100 are the
// write-up's coherent and incoherent cases.
const float kFrequencies[] = {1, 2, 4, 8, 16, 32, 64, 100, 128, 256, 512};

// Median kernel time (ms) of `enqueue` after one warm-up, over `runs` runs (3 when the warm-up
// took over 0.1 s, 1 over 1 s, as the bench suite).
Stats time_kernel(const std::function<cl::Event()>& enqueue, int runs) {
  cl::Event warm = enqueue();
  warm.wait();
  const int n = runs_after_warmup(event_ms(warm), runs);
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    cl::Event e = enqueue();
    e.wait();
    ms.push_back(event_ms(e));
  }
  return summarize(ms);
}

// Median host time (ms) of `run` after one warm-up, over `runs` runs.
Stats time_host(const std::function<void()>& run, int runs) {
  run();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(ms_since(start));
  }
  return summarize(ms);
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

// A time in ns with 3 significant digits (0.0123, 1.23, 123).
ProbeCell ns_cell(double ns) {
  const int digits = ns >= 100 ? 0 : ns >= 10 ? 1 : ns >= 1 ? 2 : ns >= 0.1 ? 3 : 4;
  return {fixed(ns, digits), ns};
}

ProbeCell ratio_cell(double r) {
  return {fixed(r, 2), r};
}

ProbeCell number_cell(double v, int digits) {
  return {fixed(v, digits), v};
}

// A chart with a logarithmic x axis, one empty series per name, ns on the y axis.
LineChart log_chart(const std::string& title, const std::string& x_label,
                    const std::string& y_label, const std::vector<std::string>& series) {
  LineChart c;
  c.title = title;
  c.x_label = x_label;
  c.y_label = y_label;
  c.log_x = true;
  for (const std::string& name : series) c.series.push_back({name, {}});
  return c;
}

void say(std::ostream* progress, const std::string& line) {
  if (progress) *progress << line << std::endl;
}

ProbeTable probe_cache(Runtime& runtime, const ProbeOptions& o, std::ostream* progress) {
  const int side = o.size ? o.size : 2048;
  const Image source = suite_image(side, side);
  CacheProbe probe(runtime, source);
  const double pixels = static_cast<double>(side) * side;
  ProbeTable t;
  t.title = "cache: mean of 5 fetches at (x, y) * scale + i * 1% (i = 0..4), " +
            std::to_string(side) + "x" + std::to_string(side) + " RGBA8, work-group " +
            probe.work_group() + ", ns per pixel (median kernel time)";
  t.columns = {"scale", "image ns/px", "buffer ns/px", "image x scale 1", "buffer x scale 1"};
  std::vector<double> image_ns, buffer_ns;
  for (const ProbeScale& s : cache_scales()) {
    for (CacheRead read : {CacheRead::image, CacheRead::buffer}) {
      const Stats ms = time_kernel([&] { return probe.enqueue(read, s); }, o.runs);
      (read == CacheRead::image ? image_ns : buffer_ns).push_back(ms.median * 1e6 / pixels);
      say(progress, "probe cache: scale " + fixed(s.value(), s.den > 1 ? 1 : 0) + " " +
                        (read == CacheRead::image ? "image" : "buffer") + " " +
                        fixed(ms.median, 3) + " ms");
    }
  }
  const size_t one = 2;  // index of scale 1
  t.chart = log_chart("cache probe, " + std::to_string(side) + "x" + std::to_string(side) + ", " +
                          runtime.device().name,
                      "coordinate scale (texels between neighbouring pixels)",
                      "ns per pixel (median kernel time)", {"image (sampler)", "buffer"});
  for (size_t i = 0; i < cache_scales().size(); ++i) {
    const double s = cache_scales()[i].value();
    t.rows.push_back({number_cell(s, s < 1 ? 1 : 0), ns_cell(image_ns[i]), ns_cell(buffer_ns[i]),
                      ratio_cell(image_ns[i] / image_ns[one]),
                      ratio_cell(buffer_ns[i] / buffer_ns[one])});
    t.chart.series[0].points.emplace_back(s, image_ns[i]);
    t.chart.series[1].points.emplace_back(s, buffer_ns[i]);
    t.chart.x_ticks.push_back(s);
  }
  const size_t last = cache_scales().size() - 1;
  t.notes = {
      "scale 16 against scale 1: image reads " + fixed(image_ns[last] / image_ns[one], 1) +
          "x, buffer reads " + fixed(buffer_ns[last] / buffer_ns[one], 1) +
          "x (the write-up's GTX 280: 30x from 0.1 to 3 ns)",
      "Below scale 1 neighbouring pixels share texels; above it each pixel's fetches land " +
          std::string("further from its neighbours', so fewer of them come from the cache."),
  };
  return t;
}

ProbeTable probe_divergence(Runtime& runtime, const ProbeOptions& o, std::ostream* progress) {
  const int side = o.size ? o.size : runtime.device().type & CL_DEVICE_TYPE_CPU ? 256 : 1024;
  BranchProbe probe(runtime, side, side, o.rounds);
  const double pixels = static_cast<double>(side) * side;
  auto ns_of = [&](BranchKind kind, float f) {
    const Stats ms = time_kernel([&] { return probe.enqueue(kind, f); }, o.runs);
    say(progress, std::string("probe divergence: ") +
                      (kind == BranchKind::none ? "no branch" : "frequency " + fixed(f, 0)) + " " +
                      fixed(ms.median, 3) + " ms");
    return ms.median * 1e6 / pixels;
  };
  ProbeTable t;
  t.title = "divergence: three-way branch on fract(u * frequency), " + std::to_string(side) + "x" +
            std::to_string(side) + ", " + std::to_string(o.rounds) +
            " cool_colors rounds a body, work-group " + probe.work_group() +
            ", ns per pixel (median kernel time)";
  t.columns = {"branch", "frequency", "period px", "ns/px", "x no branch"};
  const double none = ns_of(BranchKind::none, 0);
  t.rows.push_back({{"none"}, {"-"}, {"-"}, ns_cell(none), ratio_cell(1)});
  t.chart = log_chart("divergence probe, " + std::to_string(side) + "x" + std::to_string(side) +
                          ", " + runtime.device().name,
                      "branch frequency (periods across the image; 1 coherent, 100 incoherent)",
                      "ns per pixel (median kernel time)", {"three-way branch", "no branch"});
  double coherent = 0, incoherent = 0;
  for (float f : kFrequencies) {
    if (f != 1 && f != 100 && side / f < 2) continue;  // bands under 2 pixels: aliasing
    const double ns = ns_of(BranchKind::three_way, f);
    const std::string name = f == 1 ? "coherent" : f == 100 ? "incoherent" : "three-way";
    t.rows.push_back({{name},
                      number_cell(f, 0),
                      number_cell(side / f, side / f < 10 ? 1 : 0),
                      ns_cell(ns),
                      ratio_cell(ns / none)});
    t.chart.series[0].points.emplace_back(f, ns);
    t.chart.series[1].points.emplace_back(f, none);
    if (f == 1) coherent = ns;
    if (f == 100) incoherent = ns;
  }
  t.chart.x_ticks = {1, 4, 16, 64, 100, 256};
  t.notes = {
      "implied cost ratio, incoherent / coherent: " + fixed(incoherent / coherent, 2) +
          "x (the write-up's GTX 280: 0.285 / 0.11 ns = 2.6x; 3x when every SIMD group runs "
          "all three bodies)",
      "A coherent branch costs about one body (x no branch near 1); where neighbouring "
      "pixels disagree, the group of work-items that runs together runs every body some of "
      "them take.",
  };
  return t;
}

ProbeTable probe_stride(Runtime& runtime, const ProbeOptions& o, std::ostream* progress) {
  if (o.size) throw UsageError(parameter("size") + ": probe stride walks a fixed 32 MiB buffer");
  StrideProbe probe(runtime, kStrideBytes, kStrideAccesses);
  std::vector<std::uint8_t> host(kStrideBytes, 0);
  volatile std::uint32_t sink = 0;
  ProbeTable t;
  t.title = "stride: buf[loc & mask]++ over 32 MiB, " + std::to_string(kStrideAccesses >> 20) +
            " Mi accesses a run, ns per access (host: one thread, median wall time; device: one "
            "access a work-item, median kernel time)";
  t.columns = {"stride", "host ns", "device ns", "host x stride 1", "device x stride 1"};
  t.chart = log_chart("stride probe, 32 MiB, " + runtime.device().name + " and the host CPU",
                      "stride (bytes)", "ns per access", {"host CPU, one thread", "device kernel"});
  std::vector<double> host_ns, device_ns;
  for (std::uint32_t s : kStrides) {
    const Stats host_ms = time_host(
        [&] { sink = sink + stride_walk(host.data(), kStrideBytes, s, kStrideAccesses); }, o.runs);
    const Stats dev_ms = time_kernel([&] { return probe.enqueue(s); }, o.runs);
    host_ns.push_back(host_ms.median * 1e6 / kStrideAccesses);
    device_ns.push_back(dev_ms.median * 1e6 / kStrideAccesses);
    say(progress, "probe stride: " + std::to_string(s) + " host " + fixed(host_ms.median, 3) +
                      " ms, device " + fixed(dev_ms.median, 3) + " ms");
    t.rows.push_back({number_cell(s, 0), ns_cell(host_ns.back()), ns_cell(device_ns.back()),
                      ratio_cell(host_ns.back() / host_ns[0]),
                      ratio_cell(device_ns.back() / device_ns[0])});
    t.chart.series[0].points.emplace_back(s, host_ns.back());
    t.chart.series[1].points.emplace_back(s, device_ns.back());
    t.chart.x_ticks.push_back(s);
  }
  t.notes = {
      "stride 185 against stride 1: host " + fixed(host_ns.back() / host_ns[0], 1) + "x, device " +
          fixed(device_ns.back() / device_ns[0], 1) +
          "x (the write-up's quad-core Intel: 1.44 to 38.8 ns, 27x)",
      "Host: one thread walks the buffer, each access `stride` bytes after the last. Device: "
      "neighbouring work-items are `stride` bytes apart, so the stride decides how many cache "
      "lines (memory transactions) each group of work-items needs.",
  };
  return t;
}

// The transfer probe's sizes, MiB: from a small image's planes to a 12 Mpixel RGBA16 image.
const int kTransferMiB[] = {1, 4, 16, 64};

ProbeTable probe_transfer(Runtime& runtime, const ProbeOptions& o, std::ostream* progress) {
  if (o.size)
    throw UsageError(parameter("size") + ": probe transfer copies 1 to 64 MiB, each in turn");
  const TransferKind kinds[] = {
      TransferKind::to_device_pageable,   TransferKind::to_device_pinned,
      TransferKind::from_device_pageable, TransferKind::from_device_pinned,
      TransferKind::both_ways_pinned,     TransferKind::two_to_device_pinned};
  const char* names[] = {"to device, pageable",       "to device, pinned",
                         "from device, pageable",     "from device, pinned",
                         "both ways at once, pinned", "two to device at once, pinned"};
  ProbeTable t;
  t.title =
      "transfer: host-device copies, GB/s (bytes moved over the median wall time of a blocking "
      "transfer, or of two at once on two queues)";
  t.columns = {"MiB",
               "to dev pageable",
               "to dev pinned",
               "from dev pageable",
               "from dev pinned",
               "both ways pinned",
               "two to dev pinned"};
  t.chart = log_chart("transfer probe, " + runtime.device().name, "MiB a transfer",
                      "GB/s (wall time)", std::vector<std::string>(names, names + 6));
  std::vector<std::vector<double>> gbs(std::size(kTransferMiB));
  for (size_t i = 0; i < std::size(kTransferMiB); ++i) {
    const int mib = kTransferMiB[i];
    TransferProbe probe(runtime, static_cast<std::size_t>(mib) << 20);
    std::vector<ProbeCell> row = {number_cell(mib, 0)};
    for (size_t k = 0; k < std::size(kinds); ++k) {
      const Stats ms = time_host([&] { probe.run(kinds[k]); }, o.runs);
      const double rate = probe.moved(kinds[k]) / (ms.median * 1e6);
      gbs[i].push_back(rate);
      row.push_back(number_cell(rate, rate < 10 ? 2 : 1));
      t.chart.series[k].points.emplace_back(mib, rate);
      say(progress, "probe transfer: " + std::to_string(mib) + " MiB " + names[k] + " " +
                        fixed(ms.median, 3) + " ms");
    }
    t.rows.push_back(row);
    t.chart.x_ticks.push_back(mib);
  }
  const std::vector<double>& big = gbs.back();
  t.notes = {
      "64 MiB: pinned against pageable, to the device " + fixed(big[1] / big[0], 2) +
          "x, from it " + fixed(big[3] / big[2], 2) + "x; both ways at once " +
          fixed(big[4] / std::max(big[1], big[3]), 2) +
          "x one pinned direction alone, two "
          "uploads at once " +
          fixed(big[5] / big[1], 2) + "x one",
      "Pinned: a mapped CL_MEM_ALLOC_HOST_PTR buffer, which drivers copy by DMA without a "
      "staging copy; pageable: ordinary memory, written before timing. A batch's lanes move "
      "each image's planes or DCT blocks both ways on queues of their own, as the last two "
      "columns do.",
  };
  return t;
}

}  // namespace

ProbeTable run_probe(Runtime& runtime, const ProbeOptions& o, std::ostream* progress) {
  ProbeTable t;
  if (o.probe == "cache")
    t = probe_cache(runtime, o, progress);
  else if (o.probe == "divergence")
    t = probe_divergence(runtime, o, progress);
  else if (o.probe == "stride")
    t = probe_stride(runtime, o, progress);
  else if (o.probe == "transfer")
    t = probe_transfer(runtime, o, progress);
  else
    throw UsageError("probe '" + o.probe + "': choose cache, divergence, stride or transfer");
  t.probe = o.probe;
  t.device = runtime.device().name + " (" + runtime.device().platform + ")";
  return t;
}

void print_probe(const ProbeTable& t, const std::string& format, std::ostream& out) {
  if (format == "json") {
    nlohmann::ordered_json j;
    j["probe"] = t.probe;
    j["device"] = t.device;
    j["title"] = t.title;
    j["rows"] = nlohmann::json::array();
    for (const auto& row : t.rows) {
      nlohmann::ordered_json r;
      for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
        if (std::isnan(row[c].value))
          r[t.columns[c]] =
              row[c].text == "-" ? nlohmann::ordered_json() : nlohmann::ordered_json(row[c].text);
        else
          r[t.columns[c]] = row[c].value;
      }
      j["rows"].push_back(r);
    }
    j["notes"] = t.notes;
    out << j.dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    for (size_t c = 0; c < t.columns.size(); ++c) out << (c ? "," : "") << t.columns[c];
    out << "\n";
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << row[c].text;
      out << "\n";
    }
    return;
  }
  if (format != "table")
    throw UsageError(parameter("bench_format") + " '" + format + "': choose table, csv or json");
  std::vector<size_t> width(t.columns.size());
  for (size_t c = 0; c < t.columns.size(); ++c) {
    width[c] = t.columns[c].size();
    for (const auto& row : t.rows) width[c] = std::max(width[c], row[c].text.size());
  }
  out << t.title << "\n" << t.device << "\n";
  for (size_t c = 0; c < t.columns.size(); ++c)
    out << (c ? "  " : "") << std::setw(static_cast<int>(width[c])) << t.columns[c];
  out << "\n";
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < row.size(); ++c)
      out << (c ? "  " : "") << std::setw(static_cast<int>(width[c])) << row[c].text;
    out << "\n";
  }
  for (const std::string& note : t.notes) out << note << "\n";
}

}  // namespace blurtool
