// JPEG's entropy decoding, host against device, on a folder of JPEGs (issue: JPEG on the device).
// For each file: libjpeg's own coefficient decode (decode_jpeg_blocks: jpeg_read_coefficients,
// the host's entropy stage as blurtool runs it), the host's share of the device path
// (parse_entropy_scan: the headers, Huffman tables and unstuffing; EntropyDecoder::pack), and
// the device's kernel (profiling events), whose blocks are compared with libjpeg's. Then the
// device's throughput over the whole folder: batches of --batch files (default 132) a launch,
// a work-group each, enqueued back to back on one queue; the wall time from the first upload
// to the finish, and the kernels' time alone.
//
//   entropy_bench [--device SPEC] [--runs N] [--limit N] [--batch N] [--single N] FOLDER|FILE...
//
// --single N times the kernel one image a launch (and checks its blocks against libjpeg's) for
// the first N files only (default: all); the others count in the batches alone, where a
// progressive image a launch takes half a second.
// Prints a table (medians over the files of each one's median over N runs) and the figures the
// notes need: files exact, files left to libjpeg, synchronisation passes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "filters/jpeg_entropy_device.h"
#include "image/image_io.h"
#include "image/jpeg_entropy.h"
#include "image/jpeg_planes.h"
#include "runtime/cl_runtime.h"

using namespace blurtool;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::vector<std::string> inputs(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    if (std::filesystem::is_directory(a)) {
      for (const auto& e : std::filesystem::directory_iterator(a)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".jpg" || ext == ".jpeg")) files.push_back(e.path());
      }
    } else {
      files.push_back(a);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec;
  int runs = 5, limit = 0, batch = 132, batch_left = 0, single = -1;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc)
      spec = argv[++i];
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--limit" && i + 1 < argc)
      limit = std::atoi(argv[++i]);
    else if (a == "--batch" && i + 1 < argc)
      batch = std::max(1, std::atoi(argv[++i]));
    else if (a == "--single" && i + 1 < argc)
      single = std::max(0, std::atoi(argv[++i]));
    else
      args.push_back(a);
  }
  std::vector<std::string> files = inputs(args);
  if (limit > 0 && files.size() > static_cast<std::size_t>(limit)) files.resize(limit);
  if (files.empty()) {
    std::fprintf(
        stderr,
        "usage: entropy_bench [--device SPEC] [--runs N] [--limit N] [--batch N] [--single N] "
        "FOLDER|FILE...\n");
    return 2;
  }
  try {
    Runtime runtime(select_device(spec));
    EntropyDecoder decoder(runtime);
    std::vector<double> host_blocks, host_parse, device_ms, passes_all;
    std::map<int, int> passes;
    int exact = 0, left = 0, refused = 0, wrong = 0;
    std::size_t bytes_in = 0, packed_bytes = 0, skipped = 0;
    std::vector<PixelVector<std::uint8_t>> packed_all;
    std::vector<YCbCrPlanes> layouts;
    std::size_t max_coef = 0;
    for (const std::string& path : files) {
      const std::vector<std::uint8_t> bytes = read_image_file(path, kDefaultMaxFileBytes);
      bytes_in += bytes.size();
      YCbCrPlanes expected;
      std::vector<double> t_blocks, t_parse, t_device;
      bool ok = false;
      for (int r = 0; r < runs; ++r) {
        const double t0 = now_ms();
        ok = decode_jpeg_blocks(bytes, &expected);
        t_blocks.push_back(now_ms() - t0);
      }
      YCbCrPlanes layout;
      EntropyScan scan;
      PixelVector<std::uint8_t> packed;
      bool parsed = false;
      for (int r = 0; r < runs; ++r) {
        const double t0 = now_ms();
        parsed = parse_entropy_scan(bytes.data(), bytes.size(), &layout, &scan, true);
        if (parsed) packed = EntropyDecoder::pack(scan, layout);
        t_parse.push_back(now_ms() - t0);
      }
      if (!parsed || !ok) {
        ++refused;
        std::fprintf(
            stderr, "%s: %s\n", path.c_str(),
            !parsed ? "the device decoder does not take it" : "libjpeg's blocks refused it");
        continue;
      }
      const std::size_t total = expected.dct.coef.size();
      max_coef = std::max(max_coef, total);
      const bool alone = single < 0 || static_cast<int>(device_ms.size()) < single;
      if (!alone) {  // in the batches only
        ++skipped;
        packed_bytes += packed.size();
        packed_all.push_back(std::move(packed));
        layouts.push_back(layout);
        continue;
      }
      cl::Buffer coef(runtime.context(), CL_MEM_READ_WRITE, std::max<std::size_t>(total, 1) * 2);
      std::int32_t status[4] = {};
      for (int r = 0; r < runs + 1; ++r) {
        const std::vector<cl::Event> e =
            decoder.decode({{packed.data(), packed.size(), &layout, 0}}, coef, status);
        runtime.queue().finish();
        if (r > 0) t_device.push_back(summed_event_ms(e));
      }
      std::vector<std::int16_t> got(total);
      runtime.queue().enqueueReadBuffer(coef, CL_TRUE, 0, total * 2, got.data());
      if (status[0] != 0) {
        ++left;
      } else if (got == expected.dct.coef) {
        ++exact;
      } else {
        ++wrong;
        std::fprintf(stderr, "%s: the device's blocks differ from libjpeg's\n", path.c_str());
      }
      passes[status[2]]++;
      host_blocks.push_back(median(t_blocks));
      host_parse.push_back(median(t_parse));
      device_ms.push_back(median(t_device));
      packed_bytes += packed.size();
      packed_all.push_back(std::move(packed));
      layouts.push_back(layout);
    }
    // Throughput: batches of --batch files a launch (a work-group each), back to back.
    double wall = 0, batch_kernel = 0;
    if (!packed_all.empty()) {
      const std::size_t per = std::min<std::size_t>(batch, packed_all.size());
      std::vector<std::size_t> offsets(packed_all.size());
      std::size_t coef_total = 0;
      for (std::size_t i = 0; i < packed_all.size(); ++i) {
        offsets[i] = coef_total;
        coef_total += EntropyDecoder::coefficients(layouts[i]);
      }
      cl::Buffer coef(runtime.context(), CL_MEM_READ_WRITE, coef_total * 2);
      std::vector<std::int32_t> status(4 * packed_all.size());
      std::vector<double> walls, kernels;
      for (int r = 0; r < 3; ++r) {
        double k = 0;
        std::vector<cl::Event> events;
        const double t0 = now_ms();
        for (std::size_t first = 0; first < packed_all.size(); first += per) {
          std::vector<EntropyDecoder::Item> items;
          for (std::size_t i = first; i < std::min(first + per, packed_all.size()); ++i)
            items.push_back({packed_all[i].data(), packed_all[i].size(), &layouts[i], offsets[i]});
          for (const cl::Event& k : decoder.decode(items, coef, status.data() + 4 * first))
            events.push_back(k);
        }
        runtime.queue().finish();
        walls.push_back(now_ms() - t0);
        for (const cl::Event& e : events) k += event_ms(e);
        kernels.push_back(k);
      }
      wall = median(walls);
      batch_kernel = median(kernels);
      for (std::size_t i = 0; i < packed_all.size(); ++i)
        if (status[4 * i] != 0) ++batch_left;
    }
    const std::size_t n = packed_all.size();
    std::printf("entropy_bench on %s, %zu files (%.1f MB of JPEG), work-group %d, %d runs each\n",
                runtime.device().name.c_str(), files.size(), bytes_in / 1e6, decoder.work_group(),
                runs);
    std::printf("  %-58s %8.3f ms an image\n", "host: libjpeg's coefficients (decode_jpeg_blocks)",
                median(host_blocks));
    std::printf("  %-58s %8.3f ms an image\n",
                "host: the device path's share (parse_entropy_scan, pack)", median(host_parse));
    std::printf("  %-58s %8.3f ms an image\n", "device: entropy_decode kernel (profiling)",
                median(device_ms));
    if (n) {
      const std::string label =
          "device: batches of " + std::to_string(batch) + ", wall (uploads in)";
      std::printf("  %-58s %8.1f images/s (%.3f ms an image; %.1f MB uploaded an image)\n",
                  label.c_str(), n / (wall / 1000), wall / n, packed_bytes / 1e6 / n);
      std::printf("  %-58s %8.1f images/s (%d left to libjpeg)\n",
                  "device: batches, the kernels' time alone", n / (batch_kernel / 1000),
                  batch_left);
    }
    std::printf(
        "  files: %d exact, %d left to libjpeg by the kernel, %d not taken, %d WRONG, %zu in the "
        "batches only (--single)\n",
        exact, left, refused, wrong, skipped);
    std::printf("  synchronisation passes (files):");
    for (const auto& [p, c] : passes) std::printf(" %d: %d", p, c);
    std::printf("\n");
    return wrong ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "entropy_bench: %s\n", e.what());
    return 1;
  }
}
