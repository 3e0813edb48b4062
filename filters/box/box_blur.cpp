// Host side of the box filter schedules (see box_blur.h and kernels/box_*.cl).
#include "filters/box/box_blur.h"

#include <algorithm>

#include "filters/schedule_table.h"
#include "util/error.h"

namespace blurtool {

const std::vector<Named<BoxVariant>>& box_variant_table() {
  static const std::vector<Named<BoxVariant>> table = {
      {BoxVariant::automatic, "auto",
       "GPUs: fused (segmented where it does not fit local memory); CPUs: tiled"},
      {BoxVariant::single, "single", "one pass, every work-item reads its whole window"},
      {BoxVariant::single_linear, "single-linear", "one pass, 2x2 pixels per bilinear fetch"},
      {BoxVariant::double_pass, "double", "horizontal then vertical pass via an intermediate"},
      {BoxVariant::double_linear, "double-linear", "two passes, 2 pixels per bilinear fetch"},
      {BoxVariant::accumulated, "accumulated", "running sums, one work-item per row, then column"},
      {BoxVariant::unrolled, "unrolled", "accumulated, N pixels per loop iteration (unroll)"},
      {BoxVariant::scan, "scan", "running-sum rows, prefix-sum columns in local memory (MPS)"},
      {BoxVariant::segmented, "segmented",
       "running sums, one work-item per N pixels of a row (segment); columns in work-groups "
       "that keep their window in local memory"},
      {BoxVariant::segmented_local, "segmented-local",
       "segmented, each row read once into local memory as a prefix sum"},
      {BoxVariant::tiled, "tiled",
       "one pass over buffers, each work-item a tile of N rows (segment; CPUs)"},
      {BoxVariant::fused, "fused",
       "one pass over buffers, each work-group a tile of N rows (segment), row windows in local "
       "memory (GPUs)"},
  };
  return table;
}

// A new variant adds its row above and its family here (a new family: kernels/box_<name>.cl).
std::string box_kernel_family(BoxVariant variant) {
  switch (variant) {
    case BoxVariant::single:
    case BoxVariant::single_linear:
    case BoxVariant::double_pass:
    case BoxVariant::double_linear:
      return "box_window";
    case BoxVariant::accumulated:
    case BoxVariant::unrolled:
    case BoxVariant::scan:
    case BoxVariant::segmented:
    case BoxVariant::segmented_local:
      return "box_running";
    case BoxVariant::tiled:
    case BoxVariant::fused:
      return "box_buffer";
    case BoxVariant::automatic:
      break;
  }
  throw Error("box_kernel_family: variant auto has no kernels (resolve it first)");
}

const std::vector<int>& box_unroll_choices() {
  static const std::vector<int> choices = {1, 2, 4, 8, 12, 16, 24, 32};
  return choices;
}

int box_default_unroll(BoxVariant variant) {
  return variant == BoxVariant::segmented || variant == BoxVariant::segmented_local ? 2 : 8;
}

int box_default_segment(BoxVariant variant) {
  switch (variant) {
    case BoxVariant::segmented_local:
      return 8;
    case BoxVariant::tiled:
      return 256;
    case BoxVariant::segmented:
    case BoxVariant::fused:
      return 128;
    default:
      return 64;
  }
}

bool box_is_two_pass(BoxVariant variant) {
  return variant != BoxVariant::single && variant != BoxVariant::single_linear &&
         variant != BoxVariant::tiled && variant != BoxVariant::fused;
}

void validate(const BoxParams& params) {
  if (params.radius < 0 || params.radius > kMaxBoxRadius) {
    throw UsageError(parameter("box") + " " + std::to_string(params.radius) +
                     ": the radius must be an integer from 0 to " + std::to_string(kMaxBoxRadius) +
                     " pixels");
  }
  const auto& choices = box_unroll_choices();
  if (params.unroll != 0 &&
      std::find(choices.begin(), choices.end(), params.unroll) == choices.end()) {
    throw UsageError(parameter("unroll") + " " + std::to_string(params.unroll) +
                     ": must be one of 1, 2, 4, 8, 12, 16, 24, 32");
  }
  if (params.segment < 0 || params.segment > kMaxBoxSegment) {
    throw UsageError(parameter("segment") + " " + std::to_string(params.segment) +
                     ": the segment must be from 1 to " + std::to_string(kMaxBoxSegment) +
                     " pixels");
  }
}

namespace {

// Whether the window sums need 64 bits (kernels/box_common.cl WIDE_SUM): 32-bit sums and
// exact_mean() need (M + 1) D < 2^32 for every divisor D, which is at most the larger of
// (2R+1)^2 and 256 (2R+1): up to R = 2047 at 8 bits, R = 127 at 16.
bool box_wide_sum(int radius, PixelDepth depth) {
  const unsigned long long n = 2ULL * radius + 1;
  return (depth == PixelDepth::u8 ? 256ULL : 65536ULL) * std::max(n * n, 256 * n) >= (1ULL << 32);
}

// Whether box_cols_ring's ring can hold 16-bit values (kernels/box_running.cl RING_NARROW): the
// integer q it reads back from the intermediate is at most M with rgba8, 256 M with rgba16f
// and M (2R+1) with rgba32f (M = 255 or 65535).
bool ring_narrow(int radius, Intermediate intermediate, PixelDepth depth) {
  const unsigned long long m = depth == PixelDepth::u8 ? 255 : 65535;
  const unsigned long long q = intermediate == Intermediate::rgba8     ? m
                               : intermediate == Intermediate::rgba16f ? 256 * m
                                                                       : m * (2ULL * radius + 1);
  return q <= 65535;
}

// box_ring_local_bytes, as box_cols_ring's two local arguments: the ring (64 + 2R + 1 rows of
// kBoxRingColumns entries) and one sum a work-item.
std::pair<size_t, size_t> ring_local_parts(int radius, Intermediate intermediate,
                                           PixelDepth depth) {
  const size_t rows = kBoxRingLanes * kBoxRingRows + 2 * static_cast<size_t>(radius) + 1;
  const size_t entry = ring_narrow(radius, intermediate, depth) ? 8 : 16;
  const size_t sum = box_wide_sum(radius, depth) ? 32 : 16;
  return {kBoxRingColumns * rows * entry, kBoxRingColumns * kBoxRingLanes * sum};
}

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
  if (wg.is_default()) wg = kBoxFusedWorkGroup;
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

}  // namespace

size_t box_ring_local_bytes(int radius, Intermediate intermediate, PixelDepth depth) {
  const auto [ring, total] = ring_local_parts(radius, intermediate, depth);
  return ring + total;
}

size_t box_segmented_local_bytes(int radius, int segment, int items) {
  const size_t span = static_cast<size_t>(items) * segment + 2 * static_cast<size_t>(radius) + 1;
  return sizeof(cl_uint4) * (span + items);
}

size_t box_fused_local_bytes(int radius, WorkGroup wg, PixelDepth depth) {
  const FusedLocal parts = fused_local_parts(radius, wg, depth, 0);
  return parts.cols + parts.out;
}

int box_ring_segment(int width, int height, unsigned compute_units) {
  constexpr int batch = kBoxRingLanes * kBoxRingRows;
  const unsigned long long strips = (width + kBoxRingColumns - 1) / kBoxRingColumns;
  for (int rows = 1024; rows > batch; rows -= batch) {
    if (strips * ((height + rows - 1) / rows) >= 8ULL * compute_units) return rows;
  }
  return batch;
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

WorkGroup box_fused_default_group(int radius, size_t local_mem, PixelDepth depth) {
  std::vector<WorkGroup> candidates = {kBoxFusedWorkGroup, kBoxFusedWideGroup};
  if (depth == PixelDepth::u16) candidates.insert(candidates.end(), {{16, 4}, {8, 4}});
  for (const WorkGroup& wg : candidates)
    if (box_fused_local_bytes(radius, wg, depth) <= local_mem) return wg;
  return candidates.back();
}

bool box_variant_runs(BoxVariant variant, int radius, const DeviceInfo& device, PixelDepth depth) {
  if (variant != BoxVariant::fused) return true;
  const WorkGroup wg = box_fused_default_group(radius, device.local_mem, depth);
  return box_fused_local_bytes(radius, wg, depth) <= device.local_mem;
}

BoxVariant resolve_box_variant(BoxVariant variant, int radius, const DeviceInfo& device,
                               PixelDepth depth) {
  if (variant != BoxVariant::automatic) return variant;
  for (const TunedSchedule& d : default_schedules(device, "box", radius)) {
    const BoxVariant v = parse_named(box_variant_table(), d.variant, "the default box variant");
    if (box_variant_runs(v, radius, device, depth)) return v;
  }
  throw Error("no default box schedule for device '" + device.name + "'");
}

namespace {

// How the intermediate image stores the row sums, and how the vertical pass turns them back
// into exact integers (see the header of kernels/box_common.cl).
struct Scaling {
  float hscale;          // intermediate value = row sum * hscale
  float qscale;          // integer read back = rint(intermediate value * qscale)
  unsigned long long d;  // result = (column sum of integers + d/2) / d
};

// `max`: the largest sample value, M = 255 or 65535.
Scaling scaling_for(Intermediate format, int radius, bool two_pass, float max) {
  const unsigned long long n = 2ULL * radius + 1;
  if (!two_pass) return {1.0f, 1.0f, n * n};
  switch (format) {
    case Intermediate::rgba8:
      return {1.0f / (max * static_cast<float>(n)), max, n};
    case Intermediate::rgba16f:  // the row mean on a 0..255 scale, within half-float range
      return {255.0f / (max * static_cast<float>(n)), 256.0f * max / 255.0f, 256 * n};
    case Intermediate::rgba32f:
      break;
  }
  return {1.0f, 1.0f, n * n};
}

// Sets kernel argument `index` to the divisor d: 64-bit with WIDE_SUM kernels, else 32-bit.
void set_divisor(cl::Kernel& kernel, cl_uint index, unsigned long long d, bool wide_sum) {
  if (wide_sum)
    kernel.setArg(index, static_cast<cl_ulong>(d));
  else
    kernel.setArg(index, static_cast<cl_uint>(d));
}

// Work-items per work-group of the row-per-work-item and column-per-work-item passes: 32, as
// MPS's MIBox_Horizontal (one SIMD group), fewer if the kernel cannot run that many.
cl::NDRange local_size_1d(const cl::Kernel& kernel, const cl::Device& device) {
  size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device);
  return cl::NDRange(std::min<size_t>(32, limit));
}

constexpr int kScanCols = 16, kScanLanes = 16;  // kernels/box_running.cl SCAN_COLS, SCAN_LANES

}  // namespace

size_t BoxFilter::row_group_size() const {
  const int seg = params_.segment;
  auto local_bytes = [&](size_t items) {
    return box_segmented_local_bytes(params_.radius, seg, static_cast<int>(items));
  };
  const DeviceInfo& d = runtime_.device();
  const size_t limit = kernels_[0].getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d.device);
  if (!params_.wg.is_default()) {
    const size_t items = params_.wg.x;
    if (params_.wg.y != 1)
      throw UsageError(parameter("wg") + " " + params_.wg.text() +
                       ": segmented-local takes Lx1 (L work-items share one row)");
    if (items > limit || local_bytes(items) > d.local_mem) {
      throw UsageError(parameter("wg") + " " + params_.wg.text() + " with " + parameter("segment") +
                       " " + std::to_string(seg) + " and radius " + std::to_string(params_.radius) +
                       " needs " + std::to_string(items) + " work-items and " +
                       std::to_string(local_bytes(items)) + " bytes of local memory; device '" +
                       d.name + "' runs " + std::to_string(limit) +
                       " (CL_KERNEL_WORK_GROUP_SIZE) and has " + std::to_string(d.local_mem) +
                       " (CL_DEVICE_LOCAL_MEM_SIZE)");
    }
    return items;
  }
  size_t items = std::min<size_t>(128, limit);
  while (items > 1 && local_bytes(items) > d.local_mem) items /= 2;
  if (local_bytes(items) > d.local_mem) {
    throw UsageError("segmented-local with " + parameter("segment") + " " + std::to_string(seg) +
                     " and radius " + std::to_string(params_.radius) + " needs " +
                     std::to_string(local_bytes(1)) + " bytes of local memory; device '" + d.name +
                     "' has " + std::to_string(d.local_mem) +
                     " (CL_DEVICE_LOCAL_MEM_SIZE); use segmented");
  }
  return items;
}

void BoxFilter::check_fused_fits(size_t items, size_t limit) const {
  const DeviceInfo& d = runtime_.device();
  const WorkGroup wg = params_.wg;
  const size_t bytes = box_fused_local_bytes(params_.radius, wg, depth_);
  // Each limit in its own words: one message that gave both counts read "needs 1048576
  // work-items and ... bytes; device has 1048576 (CL_DEVICE_LOCAL_MEM_SIZE)".
  const std::string what = "fused with " + parameter("wg") + " " + wg.text() + " and radius " +
                           std::to_string(params_.radius) + " needs ";
  if (bytes > d.local_mem) {
    throw UsageError(what + std::to_string(bytes) + " bytes of local memory; device '" + d.name +
                     "' has " + std::to_string(d.local_mem) +
                     " (CL_DEVICE_LOCAL_MEM_SIZE); use a smaller " + parameter("wg") +
                     " or segmented");
  }
  if (items > limit) {
    throw UsageError(what + std::to_string(items) + " work-items a work-group; device '" + d.name +
                     "' runs at most " + std::to_string(limit) +
                     " of this kernel (CL_KERNEL_WORK_GROUP_SIZE); use a smaller " +
                     parameter("wg") + " or segmented");
  }
}

cl::NDRange BoxFilter::segmented_work_group(const cl::Kernel& kernel, WorkGroup wg,
                                            WorkGroup fallback, const char* pass) const {
  if (wg.is_default()) wg = fallback;
  const size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(runtime_.device().device);
  const size_t items = static_cast<size_t>(wg.x) * wg.y;
  if (items > limit) {
    if (!params_.wg.is_default()) {
      throw UsageError(parameter("wg") + " " + wg.text() + ": " + std::to_string(items) +
                       " work-items exceed the " + std::to_string(limit) + " that device '" +
                       runtime_.device().name + "' runs for the " + pass +
                       " pass (CL_KERNEL_WORK_GROUP_SIZE)");
    }
    while (static_cast<size_t>(wg.x) * wg.y > limit) (wg.y > 1 ? wg.y : wg.x) /= 2;
  }
  return cl::NDRange(wg.x, wg.y);
}

BoxParams resolve_box_schedule(const BoxParams& params, const DeviceInfo& device, int width,
                               int height, PixelDepth depth) {
  BoxParams p = params;
  if (p.variant == BoxVariant::automatic && depth == PixelDepth::u8) {
    const auto tuned = tuned_schedule(device, "box", name_of(intermediate_table(), p.intermediate),
                                      p.radius, static_cast<std::uint64_t>(width) * height);
    if (tuned) {
      p.variant =
          parse_named(box_variant_table(), tuned->variant, "the tuning table's box variant");
      if (p.segment == 0) p.segment = tuned->segment;
      if (p.unroll == 0) p.unroll = tuned->unroll;
      if (p.wg.is_default()) p.wg = tuned->wg;
    }
  }
  p.variant = resolve_box_variant(p.variant, p.radius, device, depth);
  return p;
}

BoxFilter::BoxFilter(Runtime& runtime, const BoxParams& params, int width, int height,
                     PixelDepth depth)
    : runtime_(runtime), params_(params), width_(width), height_(height) {
  depth_ = depth;
  validate(params_);
  params_ = resolve_box_schedule(params_, runtime.device(), width, height, depth);
  const BoxVariant v = params_.variant;
  if (v == BoxVariant::fused && params_.wg.is_default())
    params_.wg = box_fused_default_group(params_.radius, runtime.device().local_mem, depth);
  if (v == BoxVariant::fused && params_.segment == 0)
    params_.segment =
        box_fused_default_segment(width, height, params_.wg, runtime.device().compute_units);
  if (v == BoxVariant::tiled && params_.segment == 0)
    params_.segment =
        box_tiled_default_segment(params_.radius, width, height, runtime.device().compute_units);
  if (params_.segment == 0) params_.segment = box_default_segment(v);
  if (params_.unroll == 0) params_.unroll = box_default_unroll(v);
  const bool two_pass = box_is_two_pass(v);

  const bool u8 = depth == PixelDepth::u8;
  const unsigned long long n = 2ULL * params_.radius + 1;
  wide_sum_ = box_wide_sum(params_.radius, depth);
  const int unroll = v == BoxVariant::accumulated ? 1 : params_.unroll;
  std::string options = "-DUNROLL=" + std::to_string(unroll) +
                        " -DSCAN_COLS=" + std::to_string(kScanCols) +
                        " -DSCAN_LANES=" + std::to_string(kScanLanes) + pixel_options(depth);
  if (wide_sum_) options += " -DWIDE_SUM";

  std::vector<std::string> names;
  switch (v) {
    case BoxVariant::single:
      names = {"box_single"};
      break;
    case BoxVariant::single_linear:
      names = {"box_single_linear"};
      break;
    case BoxVariant::double_pass:
      names = {"box_rows_direct", "box_cols_direct"};
      break;
    case BoxVariant::double_linear:
      names = {"box_rows_linear", "box_cols_linear"};
      break;
    case BoxVariant::accumulated:
    case BoxVariant::unrolled:
      names = {"box_rows_segmented", "box_cols_segmented"};  // one segment a row (column)
      break;
    case BoxVariant::scan:
      names = {"box_rows_segmented", "box_cols_scan"};
      break;
    case BoxVariant::segmented:
    case BoxVariant::segmented_local:
      // The column pass keeps its window in local memory (box_cols_ring) where that fits.
      col_ring_ = box_ring_local_bytes(params_.radius, params_.intermediate, depth) <=
                  runtime.device().local_mem;
      names = {v == BoxVariant::segmented ? "box_rows_segmented" : "box_rows_segmented_local",
               col_ring_ ? "box_cols_ring" : "box_cols_segmented"};
      if (col_ring_ && ring_narrow(params_.radius, params_.intermediate, depth))
        options += " -DRING_NARROW";
      options += " -DRING_COLS=" + std::to_string(kBoxRingColumns) +
                 " -DRING_LANES=" + std::to_string(kBoxRingLanes) +
                 " -DRING_ROWS=" + std::to_string(kBoxRingRows);
      break;
    case BoxVariant::tiled:
      names = {"box_tiled"};
      options += " -DTILE_W=" + std::to_string(kBoxTileWidth);
      if (u8 && n * n < (1ULL << 14)) options += " -DROUND_BY_FLOAT";  // see mean_u8()
      break;
    case BoxVariant::fused: {
      names = {"box_fused"};
      const WorkGroup wg = params_.wg;
      options += " -DFUSED_CHUNKS=" + std::to_string(wg.x) +
                 " -DFUSED_ROWS=" + std::to_string(wg.y) +
                 " -DFUSED_K=" + std::to_string(kBoxFusedOutputs) +
                 " -DFUSED_RADIUS=" + std::to_string(params_.radius) +
                 " -DFUSED_OUT_STRIDE=" + std::to_string(fused_out_stride(wg));
      const size_t local_mem = runtime.device().local_mem;
      fused_exchange_ = fused_chunk_exchange(
          params_.radius, wg, depth,
          params_.fused_local_limit ? std::min(params_.fused_local_limit, local_mem) : local_mem);
      options += " -DFUSED_EXCHANGE=" + std::to_string(fused_exchange_);
      // The edge mode as a constant: the masks of clamp and mirror compile away.
      options += " -DFUSED_EDGE=" + std::to_string(static_cast<int>(params_.edge));
      if (fused_alternate()) options += " -DFUSED_FLIP";
      // Every input column of the tile read at once in phase 1, up to kBoxFusedMaxColumns a
      // work-item (kernels/NOTES.md: more reads in flight).
      const size_t items = static_cast<size_t>(wg.x) * wg.y;
      const size_t columns = fused_tile_width(wg) + 2 * params_.radius;
      const size_t reads = std::min<size_t>((columns + items - 1) / items, kBoxFusedMaxColumns);
      options += " -DFUSED_COLS=" + std::to_string(reads);
      // From 4 columns a work-item NVIDIA's compiler takes more than the 168 registers that let
      // kBoxFusedGroupsPerUnit groups of 128 share a compute unit's 65536 (measured with 17
      // outputs a work-item: 178 at R 63 with the alternating walk, 0.13 ms on the H100 against
      // 0.106 capped, with 12 bytes spilled). Below 4 columns the cap costs (19 outputs, R 1:
      // 0.058 against 0.055), so it is not set there.
      const size_t registers = 65536 / (kBoxFusedGroupsPerUnit * items) / 8 * 8;
      if (reads >= 4 && registers < 255 && runtime.device().has_extension("cl_nv_compiler_options"))
        options += " -cl-nv-maxrregcount=" + std::to_string(registers);
      // Column sums (at most 255 (2R+1)) added this many at a time in their 16-bit lanes.
      const int pack = std::clamp(65535 / (255 * (2 * params_.radius + 1)), 1, 8);
      if (pack > 1 && u8) options += " -DFUSED_PACK=" + std::to_string(pack);
      if (fused_wide(params_.radius, depth)) options += " -DFUSED_WIDE";
      if (u8 && n * n < (1ULL << 14)) options += " -DROUND_BY_FLOAT";
      break;
    }
    case BoxVariant::automatic:
      break;
  }
  if (v == BoxVariant::fused) check_fused_fits(0, 0);  // local memory, before building
  const std::uint64_t pixels = static_cast<std::uint64_t>(width) * height;
  const std::uint64_t inter = pixels * intermediate_bytes(params_.intermediate);
  const std::uint64_t io = pixels * pixel_bytes(depth);  // the input, or the output
  // The schedule's passes from one program (each program costs a compiler front end).
  const std::string family = box_kernel_family(v);
  kernels_ = runtime.kernels(family, names, options);
  for (size_t i = 0; i < names.size(); ++i) {
    // A device that cannot run box_cols_ring's 16x8 work-groups gets the per-work-item pass.
    if (names[i] == "box_cols_ring" &&
        kernels_[i].getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(runtime.device().device) <
            static_cast<size_t>(kBoxRingColumns) * kBoxRingLanes) {
      col_ring_ = false;
      names[i] = "box_cols_segmented";
      kernels_[i] = runtime.kernel(family, names[i], options);
    }
    std::uint64_t bytes = !two_pass ? 2 * io : io + inter;
    passes_.push_back({names[i], bytes});
  }
  if (two_pass)
    intermediate_ =
        make_image(runtime, width, height, intermediate_channel_type(params_.intermediate));
  if (v == BoxVariant::tiled) {
    const size_t tiles = static_cast<size_t>((width + kBoxTileWidth - 1) / kBoxTileWidth) *
                         ((height + params_.segment - 1) / params_.segment);
    tile_items_ = tile_work_items(tiles, runtime.device());
    // Per work-item (box_tiled in kernels/box_buffer.cl lays it out): V, TILE_W sums of 16 or 32
    // bytes; four staged rows, TILE_W + 2R + 8 uint4 each; and the row sums: a ring of 2R+5
    // rows where all fit params.tiled_ring_bytes, else 8 (the leaving rows computed again),
    // of TILE_W + 4 uint4.
    const size_t row_bytes = (kBoxTileWidth + 4) * sizeof(cl_uint4);
    const size_t ring_rows = 2 * static_cast<size_t>(params_.radius) + 5;
    ring_ = tile_items_ * ring_rows * row_bytes <= params_.tiled_ring_bytes;
    const size_t per_item =
        kBoxTileWidth * (wide_sum_ ? 32 : 16) +
        4 * (kBoxTileWidth + 2 * static_cast<size_t>(params_.radius) + 8) * sizeof(cl_uint4) +
        (ring_ ? ring_rows : 8) * row_bytes;
    scratch_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, tile_items_ * per_item);
  }
  if (v == BoxVariant::fused) {
    const size_t limit =
        kernels_[0].getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(runtime.device().device);
    check_fused_fits(static_cast<size_t>(params_.wg.x) * params_.wg.y, limit);
  }
}

std::string BoxFilter::describe() const {
  std::string text = "box r=" + std::to_string(params_.radius) + " " +
                     name_of(box_variant_table(), params_.variant);
  if (params_.variant == BoxVariant::unrolled || params_.variant == BoxVariant::scan ||
      params_.variant == BoxVariant::segmented)
    text += " x" + std::to_string(params_.unroll);
  if (params_.variant == BoxVariant::segmented || params_.variant == BoxVariant::segmented_local) {
    text += " segment=" + std::to_string(params_.segment);
    if (!params_.wg.is_default()) text += " wg=" + params_.wg.text();
    // Where the column pass's ring does not fit local memory: one work-item a column segment.
    if (!col_ring_) text += " columns=per-work-item";
  }
  if (params_.variant == BoxVariant::tiled)
    text += " tile=" + std::to_string(kBoxTileWidth) + "x" + std::to_string(params_.segment);
  if (params_.variant == BoxVariant::fused) {
    text += " tile=" + std::to_string(fused_tile_width(params_.wg)) + "x" +
            std::to_string(params_.segment) + " wg=" + params_.wg.text() +
            " chunk-sums=" + std::to_string(fused_exchange_);
    if (fused_alternate()) text += " walk=alternating";
  }
  if (box_is_two_pass(params_.variant))
    text += std::string(" ") + name_of(intermediate_table(), params_.intermediate);
  return text + " edge=" + name_of(edge_mode_table(), params_.edge) + depth_text();
}

std::vector<cl::Event> BoxFilter::enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) {
  if (!takes_buffers()) return Filter::enqueue_buffers(src, dst);
  const unsigned long long d = scaling_for(params_.intermediate, params_.radius, false, 0).d;
  // box_tiled and box_fused share their first nine arguments (--segment: rows of a tile).
  cl::Kernel& k = kernels_[0];
  k.setArg(0, src);
  k.setArg(1, dst);
  k.setArg(2, static_cast<cl_int>(width_));
  k.setArg(3, static_cast<cl_int>(height_));
  k.setArg(4, static_cast<cl_int>(params_.radius));
  k.setArg(5, static_cast<cl_int>(params_.edge));
  set_divisor(k, 6, d, wide_sum_);
  k.setArg(7, 1.0f / static_cast<float>(d));
  k.setArg(8, static_cast<cl_int>(params_.segment));
  std::vector<cl::Event> events(1);
  if (params_.variant == BoxVariant::fused) {
    const WorkGroup wg = params_.wg;
    const FusedLocal parts = fused_local_parts(params_.radius, wg, depth_, fused_exchange_);
    k.setArg(9, cl::Local(parts.cols));
    k.setArg(10, cl::Local(parts.out));
    k.setArg(11, cl::Local(std::max<size_t>(parts.chunk_sums, 16)));  // 0 is not a valid size
    const size_t tile_w = fused_tile_width(wg);
    const size_t tiles_x = (width_ + tile_w - 1) / tile_w;
    const size_t tiles_y = (height_ + params_.segment - 1) / params_.segment;
    runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange,
                                          cl::NDRange(tiles_x * wg.x, tiles_y * wg.y),
                                          cl::NDRange(wg.x, wg.y), nullptr, &events[0]);
    return events;
  }
  k.setArg(9, static_cast<cl_int>(ring_));
  k.setArg(10, scratch_);
  runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(tile_items_), cl::NDRange(1),
                                        nullptr, &events[0]);
  return events;
}

std::vector<cl::Event> BoxFilter::enqueue(const cl::Image2D& src, const cl::Image2D& dst) {
  if (takes_buffers()) throw Error("schedule '" + describe() + "' runs on buffers, not images");
  const bool two_pass = box_is_two_pass(params_.variant);
  const Scaling s = scaling_for(params_.intermediate, params_.radius, two_pass,
                                depth_ == PixelDepth::u16 ? 65535.0f : 255.0f);
  const cl::Device& device = runtime_.device().device;
  cl::CommandQueue& queue = runtime_.queue();
  const cl_int radius = params_.radius, edge = static_cast<cl_int>(params_.edge);

  std::vector<cl::Event> events(kernels_.size());
  if (!two_pass) {
    cl::Kernel& k = kernels_[0];
    k.setArg(0, src);
    k.setArg(1, dst);
    k.setArg(2, radius);
    k.setArg(3, edge);
    set_divisor(k, 4, s.d, wide_sum_);
    cl::NDRange local = local_size_2d(k, device);
    queue.enqueueNDRangeKernel(k, cl::NullRange, global_size_2d(width_, height_, local), local,
                               nullptr, &events[0]);
    return events;
  }

  cl::Kernel& rows = kernels_[0];
  rows.setArg(0, src);
  rows.setArg(1, intermediate_);
  rows.setArg(2, radius);
  rows.setArg(3, edge);
  rows.setArg(4, s.hscale);
  cl::Kernel& cols = kernels_[1];
  cols.setArg(0, intermediate_);
  cols.setArg(1, dst);
  cols.setArg(2, radius);
  cols.setArg(3, edge);
  cols.setArg(4, s.qscale);
  set_divisor(cols, 5, s.d, wide_sum_);

  const BoxVariant v = params_.variant;
  if (v == BoxVariant::double_pass || v == BoxVariant::double_linear) {
    for (size_t i = 0; i < 2; ++i) {
      cl::NDRange local = local_size_2d(kernels_[i], device);
      queue.enqueueNDRangeKernel(kernels_[i], cl::NullRange, global_size_2d(width_, height_, local),
                                 local, nullptr, &events[i]);
    }
    return events;
  }

  if (v == BoxVariant::segmented || v == BoxVariant::segmented_local) {
    const int seg = params_.segment;
    rows.setArg(5, static_cast<cl_int>(seg));
    if (v == BoxVariant::segmented_local) {
      const size_t items = row_group_size();
      const size_t chunk = items * seg, span = chunk + 2 * static_cast<size_t>(params_.radius) + 1;
      rows.setArg(6, cl::Local(sizeof(cl_uint4) * span));   // the prefix sums
      rows.setArg(7, cl::Local(sizeof(cl_uint4) * items));  // one total per work-item
      queue.enqueueNDRangeKernel(rows, cl::NullRange,
                                 cl::NDRange((width_ + chunk - 1) / chunk * items, height_),
                                 cl::NDRange(items, 1), nullptr, &events[0]);
    } else {
      const size_t row_segments = (width_ + seg - 1) / seg;
      const cl::NDRange row_local = segmented_work_group(rows, params_.wg, {4, 16}, "rows");
      queue.enqueueNDRangeKernel(
          rows, cl::NullRange,
          cl::NDRange(round_up(row_segments, row_local[0]), round_up(height_, row_local[1])),
          row_local, nullptr, &events[0]);
    }
    if (col_ring_) {  // the column pass with its windows in local memory (box_cols_ring)
      const size_t strips = (width_ + kBoxRingColumns - 1) / kBoxRingColumns;
      const int col_seg = box_ring_segment(width_, height_, runtime_.device().compute_units);
      const size_t col_segments = (height_ + col_seg - 1) / col_seg;
      const auto [ring, total] = ring_local_parts(radius, params_.intermediate, depth_);
      cols.setArg(6, static_cast<cl_int>(col_seg));
      cols.setArg(7, cl::Local(ring));
      cols.setArg(8, cl::Local(total));
      queue.enqueueNDRangeKernel(
          cols, cl::NullRange, cl::NDRange(strips * kBoxRingColumns, col_segments * kBoxRingLanes),
          cl::NDRange(kBoxRingColumns, kBoxRingLanes), nullptr, &events[1]);
      return events;
    }
    // The column pass is segmented's; segmented-local's keeps segmented's default segment and
    // work-group (its --segment and --wg shape the row pass only).
    const bool local_rows = v == BoxVariant::segmented_local;
    const int col_seg = local_rows ? box_default_segment(BoxVariant::segmented) : seg;
    const cl::NDRange col_local =
        segmented_work_group(cols, local_rows ? WorkGroup{} : params_.wg, {64, 1}, "columns");
    cols.setArg(6, static_cast<cl_int>(col_seg));
    const size_t col_segments = (height_ + col_seg - 1) / col_seg;
    queue.enqueueNDRangeKernel(
        cols, cl::NullRange,
        cl::NDRange(round_up(width_, col_local[0]), round_up(col_segments, col_local[1])),
        col_local, nullptr, &events[1]);
    return events;
  }

  // accumulated, unrolled and scan's row pass: the segmented kernels with one segment per
  // whole row (column), one work-item each, in work-groups of 32.
  rows.setArg(5, static_cast<cl_int>(width_));
  const size_t row_items = local_size_1d(rows, device)[0];
  queue.enqueueNDRangeKernel(rows, cl::NullRange, cl::NDRange(1, round_up(height_, row_items)),
                             cl::NDRange(1, row_items), nullptr, &events[0]);
  if (v == BoxVariant::scan) {
    size_t limit = cols.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device);
    if (limit < static_cast<size_t>(kScanCols * kScanLanes)) {
      throw Error("variant scan needs work-groups of " + std::to_string(kScanCols * kScanLanes) +
                  " work-items; device '" + runtime_.device().name + "' runs at most " +
                  std::to_string(limit) + " for this kernel");
    }
    queue.enqueueNDRangeKernel(cols, cl::NullRange,
                               cl::NDRange(round_up(width_, kScanCols), kScanLanes),
                               cl::NDRange(kScanCols, kScanLanes), nullptr, &events[1]);
  } else {
    cols.setArg(6, static_cast<cl_int>(height_));
    const size_t col_items = local_size_1d(cols, device)[0];
    queue.enqueueNDRangeKernel(cols, cl::NullRange, cl::NDRange(round_up(width_, col_items), 1),
                               cl::NDRange(col_items, 1), nullptr, &events[1]);
  }
  return events;
}

Image box_blur(Runtime& runtime, const Image& rgba, const BoxParams& params) {
  BoxFilter filter(runtime, params, rgba.width, rgba.height);
  return run_filter(runtime, filter, rgba).output;
}

Image16 box_blur(Runtime& runtime, const Image16& rgba, const BoxParams& params) {
  BoxFilter filter(runtime, params, rgba.width, rgba.height, PixelDepth::u16);
  return run_filter(runtime, filter, rgba).output;
}

}  // namespace blurtool
