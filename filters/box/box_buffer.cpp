// Host side of the box schedules of one pass over buffers (kernels/box_buffer.cl): tiled, a
// tile of running sums a work-item (CPUs), and fused, a tile a work-group with its row windows
// in local memory (GPUs).
#include <algorithm>

#include "filters/box/box_schedule.h"
#include "filters/schedule_table.h"
#include "util/error.h"

namespace blurtool {

namespace {

// The first nine arguments box_tiled and box_fused share (--segment: rows of a tile).
void set_tile_arguments(cl::Kernel& k, const BoxSetup& s, const cl::Buffer& src,
                        const cl::Buffer& dst) {
  const unsigned long long d = box_scaling(s.params.intermediate, s.params.radius, false, 0).d;
  k.setArg(0, src);
  k.setArg(1, dst);
  k.setArg(2, static_cast<cl_int>(s.width));
  k.setArg(3, static_cast<cl_int>(s.height));
  k.setArg(4, static_cast<cl_int>(s.params.radius));
  k.setArg(5, static_cast<cl_int>(s.params.edge));
  set_box_divisor(k, 6, d, s.wide_sum);
  k.setArg(7, 1.0f / static_cast<float>(d));
  k.setArg(8, static_cast<cl_int>(s.params.segment));
}

// Whether 8-bit means may round through a float (kernels/box_common.cl ROUND_BY_FLOAT, see
// mean_u8()): where the divisor (2R+1)^2 is below 2^14.
std::string round_by_float(const BoxSetup& s) {
  const unsigned long long n = 2ULL * s.params.radius + 1;
  return s.depth == PixelDepth::u8 && n * n < (1ULL << 14) ? " -DROUND_BY_FLOAT" : "";
}

class BoxTiled : public BoxSchedule {
 public:
  explicit BoxTiled(const BoxSetup& setup) : BoxSchedule(setup) {
    if (s_.params.segment == 0)
      s_.params.segment = box_tiled_default_segment(s_.params.radius, s_.width, s_.height,
                                                    s_.runtime->device().compute_units);
  }

  std::vector<std::string> kernel_names() override { return {"box_tiled"}; }
  std::string options() override {
    return " -DTILE_W=" + std::to_string(kBoxTileWidth) + round_by_float(s_);
  }
  bool takes_buffers() const override { return true; }

  void prepare(const std::string& family, const std::string& options,
               std::vector<std::string>& names, std::vector<cl::Kernel> kernels) override {
    BoxSchedule::prepare(family, options, names, std::move(kernels));
    const size_t tiles = static_cast<size_t>((s_.width + kBoxTileWidth - 1) / kBoxTileWidth) *
                         ((s_.height + s_.params.segment - 1) / s_.params.segment);
    items_ = tile_work_items(tiles, s_.runtime->device());
    // Per work-item (box_tiled in kernels/box_buffer.cl lays it out): V, TILE_W sums of 16 or 32
    // bytes; four staged rows, TILE_W + 2R + 8 uint4 each; and the row sums: a ring of 2R+5
    // rows where all fit params.tiled_ring_bytes, else 8 (the leaving rows computed again),
    // of TILE_W + 4 uint4.
    const size_t radius = s_.params.radius;
    const size_t row_bytes = (kBoxTileWidth + 4) * sizeof(cl_uint4);
    const size_t ring_rows = 2 * radius + 5;
    ring_ = items_ * ring_rows * row_bytes <= s_.params.tiled_ring_bytes;
    const size_t per_item = kBoxTileWidth * (s_.wide_sum ? 32 : 16) +
                            4 * (kBoxTileWidth + 2 * radius + 8) * sizeof(cl_uint4) +
                            (ring_ ? ring_rows : 8) * row_bytes;
    scratch_ = cl::Buffer(s_.runtime->context(), CL_MEM_READ_WRITE, items_ * per_item);
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    cl::Kernel& k = kernels_[0];
    set_tile_arguments(k, s_, src, dst);
    k.setArg(9, static_cast<cl_int>(ring_));
    k.setArg(10, scratch_);
    std::vector<cl::Event> events(1);
    s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(items_), cl::NDRange(1),
                                             nullptr, &events[0]);
    return events;
  }

  std::string describe() const override {
    return " tile=" + std::to_string(kBoxTileWidth) + "x" + std::to_string(s_.params.segment);
  }

 private:
  cl::Buffer scratch_;  // the running sums of each work-item
  size_t items_ = 0;    // work-items
  bool ring_ = false;   // row sums kept in a ring (else recomputed)
};

// Output columns of a `fused` tile with work-group wg (kernels/box_buffer.cl FUSED_W).
size_t fused_tile_width(WorkGroup wg) {
  return static_cast<size_t>(wg.x) * kBoxFusedOutputs;
}

// Whether `fused` keeps 32 bits a channel for its column sums (kernels/box_buffer.cl FUSED_WIDE):
// above R = 128 (255 (2R+1) > 65535) and for 16-bit pixels.
bool fused_wide(int radius, PixelDepth depth) {
  return radius > 128 || depth == PixelDepth::u16;
}

// The most chunk sums of other work-items that a `fused` work-item's first row window can use
// (kernels/box_buffer.cl FUSED_NC): with Q = (2R+1) / K whole chunks of K columns in the window
// and F = (2R+1) % K columns past them, Q - 1, or Q where the window is Q + 1 chunks less their
// last K - F columns (F > K / 2); 0 where Q is 0.
int fused_chunk_exchange_max(int radius) {
  const int q = (2 * radius + 1) / kBoxFusedOutputs, f = (2 * radius + 1) % kBoxFusedOutputs;
  if (q == 0) return 0;
  return f > kBoxFusedOutputs / 2 ? q : q - 1;
}

// The local arguments of box_fused: the column sums, the output tile and the chunk sums of
// `exchange` chunks past each row's own (FUSED_EXCHANGE; none where 0).
struct FusedLocal {
  size_t cols, out, chunk_sums;
};

// Row stride, in pixels, of `fused`'s output tile in local memory (kernels/box_buffer.cl
// FUSED_OUT_STRIDE, passed as a -D option): at least the tile width, a multiple of 4 (16-byte
// rows), and congruent to FUSED_CHUNKS (wg.x, rounded up to 4) modulo 32, so that the rows that
// share a sub-group write different banks (16x8 with 19 outputs: 304, no padding).
size_t fused_out_stride(WorkGroup wg) {
  const size_t w4 = (fused_tile_width(wg) + 3) / 4 * 4, bank = ((wg.x % 32) + 3) / 4 * 4;
  return w4 + (bank + 32 - w4 % 32) % 32;
}

FusedLocal fused_local_parts(int radius, WorkGroup wg, PixelDepth depth, int exchange) {
  if (wg.is_default()) wg = box_fused_preferred_group();
  const size_t tile_w = fused_tile_width(wg);
  const size_t n = tile_w + 2 * static_cast<size_t>(radius);
  const size_t entry = fused_wide(radius, depth) ? sizeof(cl_uint4) : sizeof(cl_uint2);
  const size_t out_stride = fused_out_stride(wg);
  const size_t sum = box_wide_sum(radius, depth) ? 32 : 16;
  return {wg.y * n * entry, wg.y * out_stride * pixel_bytes(depth),
          exchange == 0 ? 0 : wg.y * (wg.x + static_cast<size_t>(exchange)) * sum};
}

// The chunk sums `fused` exchanges (FUSED_EXCHANGE): as many as its first windows use, or as
// many as fit `local_mem` beside the column sums and the output tile.
int fused_chunk_exchange(int radius, WorkGroup wg, PixelDepth depth, size_t local_mem) {
  for (int e = fused_chunk_exchange_max(radius); e > 0; --e) {
    const FusedLocal parts = fused_local_parts(radius, wg, depth, e);
    if (parts.cols + parts.out + parts.chunk_sums <= local_mem) return e;
  }
  return 0;
}

class BoxFused : public BoxSchedule {
 public:
  explicit BoxFused(const BoxSetup& setup) : BoxSchedule(setup) {
    const DeviceInfo& d = s_.runtime->device();
    if (s_.params.wg.is_default())
      s_.params.wg = box_fused_default_group(s_.params.radius, d.local_mem, s_.depth, d);
    if (s_.params.segment == 0)
      s_.params.segment =
          box_fused_default_segment(s_.width, s_.height, s_.params.wg, d.compute_units);
    check_fits(0, 0);  // local memory, before building
  }

  std::vector<std::string> kernel_names() override { return {"box_fused"}; }
  bool takes_buffers() const override { return true; }

  std::string options() override {
    const WorkGroup wg = s_.params.wg;
    const int radius = s_.params.radius;
    const DeviceInfo& d = s_.runtime->device();
    std::string options = " -DFUSED_CHUNKS=" + std::to_string(wg.x) +
                          " -DFUSED_ROWS=" + std::to_string(wg.y) +
                          " -DFUSED_K=" + std::to_string(kBoxFusedOutputs) +
                          " -DFUSED_RADIUS=" + std::to_string(radius) +
                          " -DFUSED_OUT_STRIDE=" + std::to_string(fused_out_stride(wg));
    const size_t limit = s_.params.fused_local_limit;
    exchange_ = fused_chunk_exchange(radius, wg, s_.depth,
                                     limit ? std::min(limit, d.local_mem) : d.local_mem);
    options += " -DFUSED_EXCHANGE=" + std::to_string(exchange_);
    // The edge mode as a constant: the masks of clamp and mirror compile away.
    options += " -DFUSED_EDGE=" + std::to_string(static_cast<int>(s_.params.edge));
    if (alternate()) options += " -DFUSED_FLIP";
    // Every input column of the tile read at once in phase 1, up to kBoxFusedMaxColumns a
    // work-item (docs/notes/box.md: more reads in flight).
    const size_t items = static_cast<size_t>(wg.x) * wg.y;
    const size_t columns = fused_tile_width(wg) + 2 * radius;
    const size_t reads = std::min<size_t>((columns + items - 1) / items, kBoxFusedMaxColumns);
    options += " -DFUSED_COLS=" + std::to_string(reads);
    // From 4 columns a work-item NVIDIA's compiler takes more than the 168 registers that let
    // kBoxFusedGroupsPerUnit groups of 128 share a compute unit's 65536 (measured with 17
    // outputs a work-item: 178 at R 63 with the alternating walk, 0.13 ms on the H100 against
    // 0.106 capped, with 12 bytes spilled). Below 4 columns the cap costs (19 outputs, R 1:
    // 0.058 against 0.055), so it is not set there.
    const size_t registers = 65536 / (kBoxFusedGroupsPerUnit * items) / 8 * 8;
    if (reads >= 4 && registers < 255 && d.has_extension("cl_nv_compiler_options"))
      options += " -cl-nv-maxrregcount=" + std::to_string(registers);
    // Column sums (at most 255 (2R+1)) added this many at a time in their 16-bit lanes.
    const int pack = std::clamp(65535 / (255 * (2 * radius + 1)), 1, 8);
    if (pack > 1 && s_.depth == PixelDepth::u8) options += " -DFUSED_PACK=" + std::to_string(pack);
    if (fused_wide(radius, s_.depth)) options += " -DFUSED_WIDE";
    return options + round_by_float(s_);
  }

  void prepare(const std::string& family, const std::string& options,
               std::vector<std::string>& names, std::vector<cl::Kernel> kernels) override {
    BoxSchedule::prepare(family, options, names, std::move(kernels));
    const size_t limit =
        kernels_[0].getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(s_.runtime->device().device);
    check_fits(static_cast<size_t>(s_.params.wg.x) * s_.params.wg.y, limit);
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    cl::Kernel& k = kernels_[0];
    set_tile_arguments(k, s_, src, dst);
    const WorkGroup wg = s_.params.wg;
    const FusedLocal parts = fused_local_parts(s_.params.radius, wg, s_.depth, exchange_);
    k.setArg(9, cl::Local(parts.cols));
    k.setArg(10, cl::Local(parts.out));
    k.setArg(11, cl::Local(std::max<size_t>(parts.chunk_sums, 16)));  // 0 is not a valid size
    const size_t tile_w = fused_tile_width(wg);
    const size_t tiles_x = (s_.width + tile_w - 1) / tile_w;
    const size_t tiles_y = (s_.height + s_.params.segment - 1) / s_.params.segment;
    std::vector<cl::Event> events(1);
    s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange,
                                             cl::NDRange(tiles_x * wg.x, tiles_y * wg.y),
                                             cl::NDRange(wg.x, wg.y), nullptr, &events[0]);
    return events;
  }

  std::string describe() const override {
    std::string text = " tile=" + std::to_string(fused_tile_width(s_.params.wg)) + "x" +
                       std::to_string(s_.params.segment) + " wg=" + s_.params.wg.text() +
                       " chunk-sums=" + std::to_string(exchange_);
    if (alternate()) text += " walk=alternating";
    return text;
  }

 private:
  // Whether odd tile rows walk up (kernels/box_buffer.cl FUSED_FLIP).
  bool alternate() const { return s_.params.radius >= kBoxFusedAlternateRadius; }

  // Throws blurtool::UsageError when the local memory exceeds the device's, or `items`
  // work-items exceed `limit` (the kernel's CL_KERNEL_WORK_GROUP_SIZE; 0: not yet known).
  void check_fits(size_t items, size_t limit) const {
    const DeviceInfo& d = s_.runtime->device();
    const WorkGroup wg = s_.params.wg;
    const size_t bytes = box_fused_local_bytes(s_.params.radius, wg, s_.depth);
    // Each limit in its own words: one message that gave both counts read "needs 1048576
    // work-items and ... bytes; device has 1048576 (CL_DEVICE_LOCAL_MEM_SIZE)".
    const std::string what = "fused with " + parameter("wg") + " " + wg.text() + " and radius " +
                             std::to_string(s_.params.radius) + " needs ";
    if (bytes > d.local_mem) {
      throw UsageError(what + std::to_string(bytes) + " bytes of local memory; device '" + d.name +
                       "' has " + std::to_string(d.local_mem) +
                       " (CL_DEVICE_LOCAL_MEM_SIZE); use a smaller " + parameter("wg") +
                       " or segmented");
    }
    if (items > limit) {
      throw UsageError(what + std::to_string(items) + " work-items a work-group; device '" +
                       d.name + "' runs at most " + std::to_string(limit) +
                       " of this kernel (CL_KERNEL_WORK_GROUP_SIZE); use a smaller " +
                       parameter("wg") + " or segmented");
    }
  }

  int exchange_ = 0;  // chunk sums exchanged for the first row windows
};

}  // namespace

size_t box_fused_local_bytes(int radius, WorkGroup wg, PixelDepth depth) {
  const FusedLocal parts = fused_local_parts(radius, wg, depth, 0);
  return parts.cols + parts.out;
}

int box_fused_default_segment(int width, int height, WorkGroup wg, unsigned compute_units) {
  const size_t tile_w = fused_tile_width(wg), tiles_x = (width + tile_w - 1) / tile_w;
  const size_t wave = static_cast<size_t>(kBoxFusedGroupsPerUnit) * compute_units;
  for (int rows = 32; rows <= 128; rows += 8)
    if (tiles_x * ((height + rows - 1) / rows) <= wave) return rows;
  return 128;
}

int box_tiled_default_segment(int radius, int width, int height, unsigned compute_units) {
  const size_t items = 4 * static_cast<size_t>(std::max(1u, compute_units));  // tile_work_items
  const size_t tiles_x = (static_cast<size_t>(width) + kBoxTileWidth - 1) / kBoxTileWidth;
  int rows = static_cast<int>(
      std::clamp(16LL * (2LL * radius + 1), 256LL, static_cast<long long>(kMaxBoxSegment)));
  while (rows > 256 && tiles_x * ((height + rows - 1) / rows) < items)
    rows = std::max(256, rows / 2);
  return rows;
}

WorkGroup box_fused_preferred_group(const DeviceInfo& device) {
  return default_parameters(device, "box", "fused", 0).wg;
}

WorkGroup box_fused_default_group(int radius, size_t local_mem, PixelDepth depth,
                                  const DeviceInfo& device) {
  std::vector<WorkGroup> candidates = {box_fused_preferred_group(device), kBoxFusedWideGroup};
  if (depth == PixelDepth::u16) candidates.insert(candidates.end(), {{16, 4}, {8, 4}});
  for (const WorkGroup& wg : candidates)
    if (box_fused_local_bytes(radius, wg, depth) <= local_mem) return wg;
  return candidates.back();
}

std::unique_ptr<BoxSchedule> make_box_tiled(const BoxSetup& setup) {
  return std::make_unique<BoxTiled>(setup);
}

std::unique_ptr<BoxSchedule> make_box_fused(const BoxSetup& setup) {
  return std::make_unique<BoxFused>(setup);
}

}  // namespace blurtool
