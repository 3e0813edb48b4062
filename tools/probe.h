// `blurtool probe`: the GPU performance model of the write-up on texture caches, strides and branch
// divergence, measured on any OpenCL device.
//  - cache: the 5-fetch average as the coordinates are scaled apart (texture-cache locality),
//    through the sampler (image reads) and through a plain buffer;
//  - divergence: a three-way branch whose condition changes slowly (coherent) or every few
//    pixels (incoherent) across the image, against the same work without a branch;
//  - stride: the read-modify-write walk over 32 MiB with growing strides, on the host CPU and
//    as a device kernel;
//  - transfer (ours, not the write-up's): the host-device link, copies of 1 to 64 MiB each way
//    from pageable and from pinned host memory, and two at once on two queues, as a batch's
//    device lanes run them.
// Kernels are in kernels/probe.cl; their CPU references in probe_reference.cpp. Times are
// kernel times from OpenCL profiling events (host times for the host walk), the median of
// several runs after a warm-up; the transfer probe's are host wall times of whole transfers
// (what a thread waiting on them sees).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tools/bench.h"
#include "runtime/cl_runtime.h"
#include "filters/filter.h"
#include "image/image_io.h"
#include "tools/svg_chart.h"

namespace blurtool {

/// A coordinate scale of the cache probe, num / den (0.1 is 1 / 10).
struct ProbeScale {
  int num = 1, den = 1;
  double value() const { return static_cast<double>(num) / den; }
};

/// The write-up's scales: 0.1, 0.5, 1, 2, 4, 8, 16.
const std::vector<ProbeScale>& cache_scales();

/// How the cache probe reads its source.
enum class CacheRead { image, buffer };

/// The cache probe's kernels on one source image: output pixel (x, y) of a w x h RGBA8 image is
/// the rounded mean of the 5 source pixels ((floor(x s) + i w / 100) mod w, (floor(y s) + i h /
/// 100) mod h), i = 0..4, s the scale (the write-up's tex2D(texcoords * s + i * 0.01) in
/// texels, so that image and buffer reads fetch the same texels).
class CacheProbe {
 public:
  /// Uploads `rgba` (4 channels) as an image (CL_RGBA, CL_UNSIGNED_INT8) and as a buffer of
  /// RGBA8 words. Throws blurtool::UsageError if `rgba` is not RGBA or the device has no image
  /// support, cl::Error on device failures.
  CacheProbe(Runtime& runtime, const Image& rgba);
  /// Enqueues one run of the `read` kernel at scale `s`; returns its event.
  cl::Event enqueue(CacheRead read, ProbeScale s);
  /// The last run's output: width * height RGBA8 words (R in the low byte), row by row.
  std::vector<std::uint32_t> output();
  /// The 2-D work-group the kernels run with ("32x8", or "driver's choice").
  std::string work_group() const;

 private:
  Runtime& runtime_;
  int width_, height_;
  cl::Image2D image_;
  cl::Buffer buffer_, out_;
  cl::Kernel image_kernel_, buffer_kernel_;
};

/// What the divergence probe's kernel does per pixel.
enum class BranchKind {
  none,      ///< cool_colors once, no branch (the cost of one branch body)
  three_way  ///< the write-up's if / else if / else on fract(u * frequency)
};

/// The divergence probe's kernels: a w x h float4 image where each pixel is the write-up's
/// cool_colors (sin, log cos, exp, pow) made `rounds` times on a moving point, chosen by a
/// three-way branch on doit = fract(u * frequency), u = (x + 0.5) / w: doit < 0.3, < 0.7, else
/// (see kernels/probe.cl).
class BranchProbe {
 public:
  /// Allocates the output (w * h * 16 bytes). Throws cl::Error on device failures.
  BranchProbe(Runtime& runtime, int width, int height, int rounds);
  /// Enqueues one run; `frequency` is the number of branch periods across the image width
  /// (ignored for BranchKind::none). Returns its event.
  cl::Event enqueue(BranchKind kind, float frequency);
  /// The last run's output: width * height * 4 floats (RGBA), row by row.
  std::vector<float> output();
  std::string work_group() const;

 private:
  Runtime& runtime_;
  int width_, height_, rounds_;
  cl::Buffer out_;
  cl::Kernel branch_, none_;
};

/// The stride probe's kernel: access i (one work-item each) adds 1 to byte (i * stride) & (bytes
/// - 1) of a zeroed device buffer, neighbouring work-items `stride` bytes apart.
class StrideProbe {
 public:
  /// A device buffer of `bytes` (a power of two) and `accesses` work-items a run. Throws
  /// blurtool::Error if `bytes` is not a power of two, cl::Error on device failures.
  StrideProbe(Runtime& runtime, std::size_t bytes, std::size_t accesses);
  /// Sets every byte of the buffer to 0.
  void clear();
  /// Enqueues one run; returns its event.
  cl::Event enqueue(std::uint32_t stride);
  /// The buffer's bytes.
  std::vector<std::uint8_t> output();

 private:
  Runtime& runtime_;
  std::size_t bytes_, accesses_;
  cl::Buffer buffer_;
  cl::Kernel kernel_;
};

// ---- CPU side: the host walk and the references (probe_reference.cpp) ----

/// The write-up's host walk over `bytes` bytes at `buf` (a power of two): `accesses` times
/// sum += buf[loc & (bytes - 1)]++, loc += stride, loc starting at 0 (unsigned 32-bit). Returns
/// the sum, so that the walk cannot be optimised away.
std::uint32_t stride_walk(std::uint8_t* buf, std::size_t bytes, std::uint32_t stride,
                          std::size_t accesses);

/// The cache probe's output for `rgba` at scale `s`, as CacheProbe::output().
std::vector<std::uint32_t> cache_reference(const Image& rgba, ProbeScale s);

/// doit of pixel column x of a w-pixel-wide image: fract(((x + 0.5) * (1 / w)) * frequency),
/// each operation rounded to float as in the kernel. Branch 0 below 0.3, 1 below 0.7, else 2.
float branch_doit(int x, int width, float frequency);

/// The divergence probe's output, as BranchProbe::output() (float, the C library's sin, log,
/// cos, exp and pow: equal to the device's within their few-ulp error bounds).
std::vector<float> branch_reference(int width, int height, int rounds, BranchKind kind,
                                    float frequency);

// ---- The probes as a whole ----

/// What one transfer of the transfer probe moves, and from where.
enum class TransferKind {
  to_device_pageable,    ///< clEnqueueWriteBuffer from malloc'd memory
  to_device_pinned,      ///< clEnqueueWriteBuffer from a mapped CL_MEM_ALLOC_HOST_PTR buffer
  from_device_pageable,  ///< clEnqueueReadBuffer into malloc'd memory
  from_device_pinned,    ///< clEnqueueReadBuffer into mapped pinned memory
  both_ways_pinned,      ///< one of each direction at once, on two queues (pinned)
  two_to_device_pinned   ///< two uploads at once, on two queues (pinned)
};

/// The transfer probe's copies: device buffers, pageable and pinned host memory of `bytes`
/// each, for two queues (the runtime's and a sibling's). Throws cl::Error on device failures.
class TransferProbe {
 public:
  TransferProbe(Runtime& runtime, std::size_t bytes);
  /// Runs one `kind` transfer of the probe's bytes (two for the two-queue kinds) and waits for
  /// it.
  void run(TransferKind kind);
  /// Bytes a run of `kind` moves: the probe's size, twice that for the two-queue kinds.
  std::size_t moved(TransferKind kind) const;
  /// The host memory of queue `q` (0 or 1), pinned or pageable: what an upload sends, where a
  /// download lands.
  std::uint8_t* host(bool pinned, int q);
  std::size_t bytes() const { return bytes_; }

 private:
  Runtime& runtime_;
  std::unique_ptr<Runtime> second_;
  std::size_t bytes_;
  cl::Buffer device_[2];
  std::vector<std::uint8_t> pageable_[2];
  PinnedBuffer pinned_[2];
};

/// The probes, in order: "cache", "divergence", "stride", "transfer".
const std::vector<std::string>& probe_names();

/// What to run.
struct ProbeOptions {
  std::string probe;  ///< one of probe_names()
  int runs = 10;      ///< timed runs per case after a warm-up (3 above 0.1 s, 1 above 1 s)
  /// Image side in pixels (cache, divergence); 0: 2048 for cache; for divergence 1024, or 256
  /// on CPU devices (a body costs about 100 times a GPU's there).
  int size = 0;
  int rounds = 8;  ///< divergence: cool_colors rounds a branch body
};

/// One cell of a probe's table: its text, and its number where it is one (NaN otherwise).
struct ProbeCell {
  std::string text;
  double value = std::numeric_limits<double>::quiet_NaN();
};

/// A probe's results: a table with a title, notes under it, and a chart of the same numbers.
struct ProbeTable {
  std::string probe;  ///< one of probe_names()
  std::string device;
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<ProbeCell>> rows;
  std::vector<std::string> notes;  ///< summary lines (ratios, what the columns mean)
  LineChart chart;
};

/// Runs `options.probe` on `runtime`'s device, one progress line per case on `progress` (if not
/// null). Throws blurtool::UsageError for an unknown probe or a size the probe cannot take,
/// cl::Error or blurtool::Error for device failures.
ProbeTable run_probe(Runtime& runtime, const ProbeOptions& options, std::ostream* progress);

/// Prints `table` as "table" (aligned columns, then the notes), "csv" or "json". Throws
/// blurtool::UsageError for another format.
void print_probe(const ProbeTable& table, const std::string& format, std::ostream& out);

}  // namespace blurtool
