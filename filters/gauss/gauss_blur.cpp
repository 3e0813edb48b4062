// Host side of the Gaussian schedules (see gauss_blur.h and kernels/gauss_*.cl).
#include "filters/gauss/gauss_blur.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "filters/gauss/gauss_weights.h"
#include "filters/schedule_table.h"
#include "util/error.h"

namespace blurtool {

const std::vector<Named<GaussVariant>>& gauss_variant_table() {
  static const std::vector<Named<GaussVariant>> table = {
      {GaussVariant::automatic, "auto",
       "the tuning table's pick, else GPUs: with tensor cores fused-mma (separable-mma above R "
       "32), else fused (separable-buffer above R 32); CPUs: tiled"},
      {GaussVariant::naive, "naive", "one pass, (2R+1)^2 image reads per pixel"},
      {GaussVariant::naive_local, "naive-local", "one pass over a tile staged in local memory"},
      {GaussVariant::separable, "separable", "horizontal then vertical pass"},
      {GaussVariant::separable_linear, "separable-linear",
       "two passes, taps paired by the linear filter"},
      {GaussVariant::separable_local, "separable-local",
       "two passes, row/column segments in local memory"},
      {GaussVariant::fused_local, "fused-local", "one pass, both passes in local memory"},
      {GaussVariant::tiled, "tiled",
       "one pass over buffers, a tile per work-item, its rows in a ring (CPUs)"},
      {GaussVariant::fused, "fused",
       "one pass over buffers, built per radius: column sums then rows in local memory (GPUs)"},
      {GaussVariant::separable_buffer, "separable-buffer",
       "two passes over buffers, built per radius: columns, then rows in local memory, "
       "through a 16-bit fixed-point intermediate (GPUs)"},
      {GaussVariant::separable_mma, "separable-mma",
       "two passes as band-matrix products on NVIDIA tensor cores (compute capability 8.0+, "
       "RGBA8, R <= 64)"},
      {GaussVariant::fused_mma, "fused-mma",
       "separable-mma's products in one pass, the column results passed to the row products "
       "in local memory (compute capability 8.0+, RGBA8, R <= 32)"},
  };
  return table;
}

// A new variant adds its row above and its family here (a new family: kernels/gauss_<name>.cl).
std::string gauss_kernel_family(GaussVariant variant) {
  switch (variant) {
    case GaussVariant::naive:
    case GaussVariant::naive_local:
    case GaussVariant::separable:
    case GaussVariant::separable_linear:
    case GaussVariant::separable_local:
    case GaussVariant::fused_local:
      return "gauss_window";
    case GaussVariant::tiled:
    case GaussVariant::fused:
    case GaussVariant::separable_buffer:
      return "gauss_buffer";
    case GaussVariant::separable_mma:
    case GaussVariant::fused_mma:
      return "gauss_mma";
    case GaussVariant::automatic:
      break;
  }
  throw Error("gauss_kernel_family: variant auto has no kernels (resolve it first)");
}

bool gauss_is_two_pass(GaussVariant v) {
  return v == GaussVariant::separable || v == GaussVariant::separable_linear ||
         v == GaussVariant::separable_local;
}

bool gauss_row_work_group(GaussVariant v) {
  return v == GaussVariant::separable_local || v == GaussVariant::fused ||
         v == GaussVariant::separable_buffer;
}

int gauss_radius(const GaussParams& p) {
  return p.radius >= 0 ? p.radius : gauss_default_radius(p.sigma);
}

void validate(const GaussParams& p) {
  gauss_weights(p.sigma, 0);  // sigma range
  const int r = gauss_radius(p);
  if (p.radius < 0 && r > kMaxGaussRadius) {
    char sigma[32];
    std::snprintf(sigma, sizeof sigma, "%g", p.sigma);
    throw UsageError(parameter("gauss") + " " + sigma +
                     ": the default radius ceil(3 SIGMA) is over " +
                     std::to_string(kMaxGaussRadius) + " pixels; give " + parameter("radius") +
                     " R (0.." + std::to_string(kMaxGaussRadius) + ") or a smaller SIGMA");
  }
  if (r < 0 || r > kMaxGaussRadius) {
    throw UsageError(parameter("radius") + " " + std::to_string(r) +
                     ": the radius must be from 0 to " + std::to_string(kMaxGaussRadius) +
                     " pixels");
  }
  if (!p.wg.is_default() && (p.wg.x < 1 || p.wg.y < 1))
    throw UsageError(parameter("wg") + " " + p.wg.text() + ": both sizes must be 1 or more");
  if (p.segment != 0 && p.variant != GaussVariant::fused &&
      p.variant != GaussVariant::separable_buffer && p.variant != GaussVariant::fused_mma &&
      p.variant != GaussVariant::tiled)
    throw UsageError(parameter("segment") + " " + std::to_string(p.segment) + ": goes with " +
                     parameter("gauss") + " only for " + parameter("variant") +
                     " fused (its tile rows), "
                     "separable-buffer (its column-pass outputs a work-item), fused-mma (the "
                     "rows a work-group walks down) or tiled (its tile columns)");
  if (p.variant == GaussVariant::tiled) {
    if (p.segment < 0 || p.segment % 16 || p.segment > kMaxGaussTileColumns)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": tiled's tile columns must be a multiple of 16 from 16 to " +
                       std::to_string(kMaxGaussTileColumns));
  } else if (p.variant == GaussVariant::separable_buffer) {
    if (p.segment < 0 || p.segment > kMaxGaussSepColumnOutputs)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": the column-pass outputs a work-item must be from 1 to " +
                       std::to_string(kMaxGaussSepColumnOutputs));
  } else if (p.variant == GaussVariant::fused_mma) {
    if (p.segment < 0 || p.segment % 16 || p.segment > kMaxGaussMmaFusedRows)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": fused-mma's rows a work-group must be a multiple of 16 from 16 to " +
                       std::to_string(kMaxGaussMmaFusedRows));
  } else if (p.segment < 0 || p.segment > kMaxGaussFusedRows) {
    throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                     ": the tile rows must be from 1 to " + std::to_string(kMaxGaussFusedRows));
  }
}

MmaStrips gauss_mma_strips(int radius) {
  return radius <= 32 ? MmaStrips{128, 64} : MmaStrips{256, 256};
}

namespace {

// The groups of 8 columns a fused-mma tile `width` columns wide reads at `radius`
// (kernels/gauss_mma.cl MMA_NG, with KS blocks of 16 inputs).
int mma_column_groups(int radius, int width) {
  const int blocks = (16 + 2 * radius + 15) / 16;  // KS
  return 2 * (width / 16 + blocks - 1);
}

}  // namespace

MmaTile gauss_mma_tile(int radius) {
  const int width = 64;
  return {width,
          radius <= 8    ? 64
          : radius <= 24 ? 128
                         : 256,
          (mma_column_groups(radius, width) + 1) / 2};
}

size_t gauss_mma_fused_local_bytes(int radius, const MmaTile& tile) {
  // Two buffers of two row groups of each column group's 32 lanes' uint4.
  return 2 * 2 * static_cast<size_t>(mma_column_groups(radius, tile.width)) * 32 * 16;
}

bool gauss_is_mma(GaussVariant v) {
  return v == GaussVariant::separable_mma || v == GaussVariant::fused_mma;
}

bool gauss_has_tensor_cores(const DeviceInfo& device) {
  return device.nv_compute_major >= 8;
}

namespace {

// Refuses a radius over kMaxGaussUnrolledRadius for `variant` (fused or separable-buffer).
void check_unrolled_radius(int radius, const char* variant) {
  if (radius > kMaxGaussUnrolledRadius)
    throw UsageError(parameter("radius") + " " + std::to_string(radius) + ": variant " + variant +
                     " is built with its loops unrolled for the radius and takes radii up to " +
                     std::to_string(kMaxGaussUnrolledRadius) +
                     "; use tiled on CPUs, separable-local on GPUs");
}

}  // namespace

bool gauss_variant_runs(GaussVariant v, const DeviceInfo& device, PixelDepth depth, int radius) {
  if (!gauss_is_mma(v)) return true;
  return gauss_has_tensor_cores(device) && depth == PixelDepth::u8 &&
         radius <= (v == GaussVariant::fused_mma ? kMaxGaussMmaFusedRadius : kMaxGaussMmaRadius) &&
         (v != GaussVariant::fused_mma ||
          gauss_mma_fused_local_bytes(radius, gauss_mma_tile(radius)) <= device.local_mem);
}

bool gauss_variant_fits(GaussVariant v, const DeviceInfo& device, PixelDepth depth, int radius) {
  switch (v) {
    case GaussVariant::fused:
      return radius <= kMaxGaussUnrolledRadius &&
             gauss_fused_local_bytes(radius, gauss_fused_default_group(radius), kGaussFusedRows) <=
                 device.local_mem;
    case GaussVariant::separable_buffer:
      return radius <= kMaxGaussUnrolledRadius &&
             gauss_sep_local_bytes(radius, kGaussSepGroup) <= device.local_mem;
    default:
      return gauss_variant_runs(v, device, depth, radius);
  }
}

GaussVariant resolve_gauss_variant(GaussVariant variant, int radius, const DeviceInfo& device,
                                   PixelDepth depth) {
  if (variant != GaussVariant::automatic) return variant;
  for (const TunedSchedule& d : default_schedules(device, "gauss", radius)) {
    const GaussVariant v =
        parse_named(gauss_variant_table(), d.variant, "the default Gaussian variant");
    if (gauss_variant_fits(v, device, depth, radius)) return v;
  }
  throw Error("no default Gaussian schedule for device '" + device.name + "'");
}

namespace {

// Rows of gauss_tiled's ring at `radius`: 4 ceil(R/2) + 4, whole groups of four input rows
// covering the 2R + 4 rows a group of four outputs needs (kernels/gauss_buffer.cl, `slots`).
size_t gauss_tiled_ring_rows(int radius) {
  return 4 * ((static_cast<size_t>(radius) + 1) / 2) + 4;
}

}  // namespace

int gauss_tile_width(int radius) {
  const double columns =
      262144.0 / (static_cast<double>(gauss_tiled_ring_rows(radius)) * sizeof(cl_float4)) - 4;
  return 16 * std::clamp(static_cast<int>(columns / 16), 1, 16);
}

int gauss_fused_default_group(int radius) {
  return radius <= 32 ? 256 : 128;
}

int gauss_fused_tile_width(int radius, int group) {
  const long long columns = std::min(2LL * group, static_cast<long long>(kGaussFusedColumns));
  const long long width = (columns - 2LL * radius) / 8 * 8;
  return static_cast<int>(std::max(8LL, width));
}

size_t gauss_fused_local_bytes(int radius, int group, int rows) {
  const size_t columns = gauss_fused_tile_width(radius, group) + 2 * static_cast<size_t>(radius);
  return rows * (columns + 1) * sizeof(cl_float4);
}

size_t gauss_sep_local_bytes(int radius, int group) {
  return 8 * (static_cast<size_t>(group) + 2 * static_cast<size_t>(radius) + 1) * sizeof(cl_float4);
}

size_t gauss_sep_intermediate_bytes(PixelDepth depth) {
  return depth == PixelDepth::u8 ? 8 : 16;
}

std::vector<LinearTap> gauss_linear_taps(const std::vector<double>& w) {
  const int r = static_cast<int>(w.size() / 2);
  std::vector<LinearTap> taps = {{0, 0.0f, static_cast<float>(w[r])}};
  for (int j = 1; j <= r; j += 2) {
    const double a = w[r + j], b = j + 1 <= r ? w[r + j + 1] : 0.0, sum = a + b;
    if (b == 0) {  // the last tap has no partner: fetch it alone, at its centre
      taps.push_back({j, 0.0f, static_cast<float>(a)});
      taps.push_back({-j, 0.0f, static_cast<float>(a)});
      continue;
    }
    taps.push_back({j, static_cast<float>(b / sum), static_cast<float>(sum)});       // j, j+1
    taps.push_back({-j - 1, static_cast<float>(a / sum), static_cast<float>(sum)});  // -j-1, -j
  }
  return taps;
}

namespace {

// Refuses a work-group size the kernel or device cannot run, naming the limit.
void check_work_group(const cl::Kernel& kernel, const DeviceInfo& device, size_t x, size_t y,
                      size_t local_bytes, const std::string& variant, int radius) {
  const std::string wg = std::to_string(x) + "x" + std::to_string(y);
  const size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device);
  if (x * y > limit) {
    throw UsageError(parameter("wg") + " " + wg + ": " + std::to_string(x * y) +
                     " work-items; variant " + variant + " runs at most " + std::to_string(limit) +
                     " per work-group on " + device.name + " (CL_KERNEL_WORK_GROUP_SIZE)");
  }
  const auto sizes = device.device.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
  if (x > sizes[0] || y > sizes[1]) {
    throw UsageError(parameter("wg") + " " + wg + ": " + device.name + " allows at most " +
                     std::to_string(sizes[0]) + "x" + std::to_string(sizes[1]) +
                     " (CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  }
  const size_t fixed = kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(device.device);
  if (fixed + local_bytes > device.local_mem) {
    throw UsageError(parameter("wg") + " " + wg + ": variant " + variant + " with radius " +
                     std::to_string(radius) + " needs " + std::to_string(fixed + local_bytes) +
                     " bytes of local memory; " + device.name + " has " +
                     std::to_string(device.local_mem) +
                     " (CL_DEVICE_LOCAL_MEM_SIZE); try a smaller " + parameter("wg"));
  }
}

}  // namespace

GaussParams resolve_gauss_schedule(const GaussParams& params, const DeviceInfo& device, int width,
                                   int height, PixelDepth depth) {
  GaussParams p = params;
  p.radius = gauss_radius(p);
  if (p.variant == GaussVariant::automatic && depth == PixelDepth::u8) {
    const auto tuned =
        tuned_schedule(device, "gauss", name_of(intermediate_table(), p.intermediate), p.radius,
                       static_cast<std::uint64_t>(width) * height);
    if (tuned) {
      p.variant =
          parse_named(gauss_variant_table(), tuned->variant, "the tuning table's Gaussian variant");
      if (p.wg.is_default()) p.wg = tuned->wg;
      // The tuned segment of the variants that take one (tiled: its tile width, which tune
      // measures on CPUs), unless --segment gave one.
      if (p.segment == 0 &&
          (p.variant == GaussVariant::fused || p.variant == GaussVariant::separable_buffer ||
           p.variant == GaussVariant::fused_mma || p.variant == GaussVariant::tiled))
        p.segment = tuned->segment;
    }
  }
  p.variant = resolve_gauss_variant(p.variant, p.radius, device, depth);
  return p;
}

GaussFilter::GaussFilter(Runtime& runtime, const GaussParams& params, int width, int height,
                         PixelDepth depth)
    : runtime_(runtime), params_(params), width_(width), height_(height) {
  depth_ = depth;
  validate(params_);
  params_ = resolve_gauss_schedule(params_, runtime.device(), width, height, depth);
  validate(params_);  // again: a tuned segment (from a table file) for the resolved variant
  radius_ = params_.radius;
  const GaussVariant v = params_.variant;
  const bool row = gauss_row_work_group(v);
  if (v == GaussVariant::tiled && !params_.wg.is_default()) {
    throw UsageError(parameter("wg") + " " + params_.wg.text() +
                     ": variant tiled runs one work-item per tile and takes no work-group size");
  }
  if (gauss_is_mma(v)) {
    const DeviceInfo& d = runtime.device();
    const std::string name = name_of(gauss_variant_table(), v);
    if (!gauss_has_tensor_cores(d))
      throw UsageError(parameter("variant") + " " + name +
                       ": needs an NVIDIA GPU with tensor cores (compute capability 8.0 or "
                       "later); '" +
                       d.name + "' has none; use separable-buffer or fused");
    if (depth != PixelDepth::u8)
      throw UsageError(parameter("variant") + " " + name +
                       ": takes 8-bit samples only (f16 holds 11 bits of a 16-bit sample), and "
                       "16-bit images, images with transparency (blurred premultiplied) and " +
                       parameter("linear_light") +
                       " blur at 16 bits; use separable-buffer or fused");
    const bool fused = v == GaussVariant::fused_mma;
    const int max_radius = fused ? kMaxGaussMmaFusedRadius : kMaxGaussMmaRadius;
    if (radius_ > max_radius)
      throw UsageError(parameter("radius") + " " + std::to_string(radius_) + ": variant " + name +
                       " takes radii up to " + std::to_string(max_radius) + "; use " +
                       (fused ? "separable-mma" : "separable-buffer"));
    if (!params_.wg.is_default())
      throw UsageError(parameter("wg") + " " + params_.wg.text() + ": variant " + name +
                       " sets its own work-group and takes no work-group size");
    if (fused) {
      const MmaTile tile = gauss_mma_tile(radius_);
      const size_t bytes = gauss_mma_fused_local_bytes(radius_, tile);
      if (bytes > d.local_mem)
        throw UsageError(
            parameter("radius") + " " + std::to_string(radius_) + ": variant fused-mma needs " +
            std::to_string(bytes) + " bytes of local memory; " + d.name + " has " +
            std::to_string(d.local_mem) + " (CL_DEVICE_LOCAL_MEM_SIZE); use separable-mma");
      params_.wg = {32 * tile.warps, 1};
    } else {
      params_.wg = {128, 1};
    }
  }
  if (params_.wg.is_default() && v == GaussVariant::fused) {
    // Within the device's work-group limit: the tile is built for the size.
    const size_t limit = std::max<size_t>(1, runtime.device().max_work_group);
    params_.wg = {static_cast<int>(std::min<size_t>(gauss_fused_default_group(radius_), limit)), 1};
  } else if (params_.wg.is_default() && v == GaussVariant::separable_buffer) {
    const size_t limit = std::max<size_t>(8, runtime.device().max_work_group);
    params_.wg = {static_cast<int>(std::min<size_t>(kGaussSepGroup, limit / 8 * 8)), 1};
  } else if (params_.wg.is_default()) {
    params_.wg = row ? WorkGroup{64, 1} : WorkGroup{16, 16};
  } else if (v == GaussVariant::fused && params_.wg.y != 1) {
    throw UsageError(parameter("wg") + " " + params_.wg.text() +
                     ": variant fused takes Gx1 (G work-items share a tile of output rows)");
  } else if (v == GaussVariant::separable_buffer && (params_.wg.y != 1 || params_.wg.x % 8)) {
    throw UsageError(parameter("wg") + " " + params_.wg.text() +
                     ": variant separable-buffer takes Gx1 with G a multiple of 8 (the row "
                     "pass's tile is G columns of 8 rows, 8 outputs a work-item)");
  } else if (row && params_.wg.y != 1) {
    throw UsageError(parameter("wg") + " " + params_.wg.text() +
                     ": variant separable-local takes Gx1 (rows in " +
                     "Gx1 work-groups, columns in 1xG)");
  }
  const std::vector<double> weights = gauss_weights(params_.sigma, radius_);
  double weight_sum = 0;
  for (double x : weights) weight_sum += static_cast<float>(x);
  weight_sum_ = static_cast<float>(weight_sum);
  if (v == GaussVariant::separable_linear) {
    std::vector<cl_float4> packed;
    for (const LinearTap& t : gauss_linear_taps(weights))
      packed.push_back({{static_cast<float>(t.lo), t.t, t.weight, 0.0f}});
    taps_ = static_cast<cl_int>(packed.size());
    weights_ = cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          packed.size() * sizeof(cl_float4), packed.data());
  } else {
    std::vector<float> w(weights.begin(), weights.end());
    weights_ = cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          w.size() * sizeof(float), w.data());
  }

  std::vector<std::string> names;
  std::string options;
  const size_t wx = params_.wg.x, wy = params_.wg.y, r2 = 2 * static_cast<size_t>(radius_);
  const size_t px = pixel_bytes(depth);  // a staged tile keeps the input's samples
  switch (v) {
    case GaussVariant::naive:
      names = {"gauss_naive"};
      break;
    case GaussVariant::naive_local:
      names = {"gauss_naive_local"};
      local_bytes_ = {(wx + r2) * (wy + r2) * px};
      break;
    case GaussVariant::separable:
      names = {"gauss_rows", "gauss_cols"};
      break;
    case GaussVariant::separable_linear:
      names = {"gauss_rows_linear", "gauss_cols_linear"};
      break;
    case GaussVariant::separable_local:
      names = {"gauss_rows_local", "gauss_cols_local"};
      local_bytes_ = {(wx + r2) * 16};
      break;
    case GaussVariant::fused_local:
      names = {"gauss_fused_local"};
      local_bytes_ = {(wx + r2) * (wy + r2) * px, (wy + r2) * wx * 16};
      break;
    case GaussVariant::tiled:
      names = {"gauss_tiled"};
      break;
    case GaussVariant::fused: {
      // Checked before the build: the program is unrolled for the radius, and a radius too
      // large for local memory would take long to build only to be refused.
      check_unrolled_radius(radius_, "fused");
      const int g = static_cast<int>(wx);
      local_bytes_ = {gauss_fused_local_bytes(radius_, g, fused_rows())};
      if (local_bytes_[0] > runtime.device().local_mem) {
        throw UsageError(parameter("radius") + " " + std::to_string(radius_) +
                         ": variant fused with " + parameter("wg") + " " + params_.wg.text() +
                         " needs " + std::to_string(local_bytes_[0]) + " bytes of local memory; " +
                         runtime.device().name + " has " +
                         std::to_string(runtime.device().local_mem) +
                         " (CL_DEVICE_LOCAL_MEM_SIZE); use a smaller " + parameter("wg") + " or " +
                         parameter("segment") +
                         ", or "
                         "separable-local or tiled");
      }
      names = {"gauss_fused"};
      options = "-DGAUSS_R=" + std::to_string(radius_) +
                " -DFUSED_TILE_W=" + std::to_string(gauss_fused_tile_width(radius_, g)) +
                " -DFUSED_ROWS=" + std::to_string(fused_rows());
      break;
    }
    case GaussVariant::separable_buffer: {
      check_unrolled_radius(radius_, "separable-buffer");
      local_bytes_ = {gauss_sep_local_bytes(radius_, static_cast<int>(wx))};
      if (local_bytes_[0] > runtime.device().local_mem) {
        throw UsageError(parameter("radius") + " " + std::to_string(radius_) +
                         ": variant separable-buffer with " + parameter("wg") + " " +
                         params_.wg.text() + " needs " + std::to_string(local_bytes_[0]) +
                         " bytes of local memory; " + runtime.device().name + " has " +
                         std::to_string(runtime.device().local_mem) +
                         " (CL_DEVICE_LOCAL_MEM_SIZE); use a smaller " + parameter("wg") +
                         ", or separable-local");
      }
      names = {"gauss_sep_cols", "gauss_sep_rows"};
      options =
          "-DGAUSS_R=" + std::to_string(radius_) + " -DSEP_K=" + std::to_string(sep_outputs());
      break;
    }
    case GaussVariant::separable_mma: {
      const MmaStrips strips = gauss_mma_strips(radius_);
      names = {"gauss_mma_cols", "gauss_mma_rows"};
      options = "-DGAUSS_R=" + std::to_string(radius_) +
                " -DMMA_STRIP=" + std::to_string(strips.rows) +
                " -DMMA_STRIPX=" + std::to_string(strips.pixels);
      break;
    }
    case GaussVariant::fused_mma: {
      const MmaTile tile = gauss_mma_tile(radius_);
      names = {"gauss_mma_fused"};
      options = "-DGAUSS_R=" + std::to_string(radius_) + " -DMMA_TX=" + std::to_string(tile.width) +
                " -DMMA_WARPS=" + std::to_string(tile.warps);
      break;
    }
    case GaussVariant::automatic:
      break;
  }
  options += pixel_options(depth);
  size_t local_total = 0;
  for (size_t b : local_bytes_) local_total += b;
  const std::uint64_t pixels = static_cast<std::uint64_t>(width) * height;
  const std::uint64_t inter =
      pixels * (v == GaussVariant::separable_buffer ? gauss_sep_intermediate_bytes(depth)
                : v == GaussVariant::separable_mma  ? 8  // f16 RGBA
                                                    : intermediate_bytes(params_.intermediate));
  const std::string variant = name_of(gauss_variant_table(), v);
  // The schedule's passes from one program (each program costs a compiler front end).
  kernels_ = runtime.kernels(gauss_kernel_family(v), names, options);
  for (size_t i = 0; i < names.size(); ++i) {
    const bool tiled = v == GaussVariant::tiled;
    // One pass reads the input and writes the output; of two, each moves one of them and the
    // intermediate.
    passes_.push_back({names[i], names.size() == 1 ? 2 * px * pixels : px * pixels + inter});
    if (tiled) break;
    // Row segments: rows run Gx1, columns 1xG (separable-buffer: Gx1 both).
    const bool transposed = row && i == 1 && v != GaussVariant::separable_buffer;
    const size_t local =
        (v == GaussVariant::separable_buffer && i == 0) || gauss_is_mma(v) ? 0 : local_total;
    check_work_group(kernels_[i], runtime.device(), transposed ? 1 : wx, transposed ? wx : wy,
                     local, variant, radius_);
  }
  if (v == GaussVariant::tiled) {
    // Fewer work-items where a large radius makes each one's ring large.
    const size_t tile_w = tile_columns();
    const size_t tiles = static_cast<size_t>((width + tile_w - 1) / tile_w) *
                         ((height + kGaussTileRows - 1) / kGaussTileRows);
    // Four staged rows of tile_w + 2R + 8 float4 each, and the ring: 4 ceil(R/2) + 4 rows of
    // tile_w + 4 float4 (gauss_tiled in kernels/gauss_buffer.cl lays them out).
    const size_t per_item =
        sizeof(cl_float4) * (4 * (tile_w + r2 + 8) + gauss_tiled_ring_rows(radius_) * (tile_w + 4));
    constexpr size_t kMaxScratchBytes = 256 << 20;
    tile_items_ = std::max<size_t>(
        1, std::min(tile_work_items(tiles, runtime.device()), kMaxScratchBytes / per_item));
    scratch_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, tile_items_ * per_item);
  }
  if (v == GaussVariant::separable_buffer || v == GaussVariant::separable_mma)
    mid_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, inter);
  if (gauss_is_two_pass(v))
    intermediate_ =
        make_image(runtime, width, height, intermediate_channel_type(params_.intermediate));
}

std::string GaussFilter::describe() const {
  char sigma[32];
  std::snprintf(sigma, sizeof sigma, "%g", params_.sigma);
  std::string text = std::string("gauss sigma=") + sigma + " r=" + std::to_string(radius_) + " " +
                     name_of(gauss_variant_table(), params_.variant);
  if (gauss_is_two_pass(params_.variant))
    text += std::string(" ") + name_of(intermediate_table(), params_.intermediate);
  if (params_.variant == GaussVariant::tiled)
    text += " tile=" + std::to_string(tile_columns()) + "x" + std::to_string(kGaussTileRows);
  else if (params_.variant == GaussVariant::fused)
    text += " tile=" + std::to_string(gauss_fused_tile_width(radius_, params_.wg.x)) + "x" +
            std::to_string(fused_rows()) + " wg=" + params_.wg.text();
  else if (params_.variant == GaussVariant::separable_mma)
    text += " columns=8x" + std::to_string(gauss_mma_strips(radius_).rows) +
            " rows=" + std::to_string(gauss_mma_strips(radius_).pixels) +
            "x8 wg=" + params_.wg.text();
  else if (params_.variant == GaussVariant::fused_mma)
    text += " tile=" + std::to_string(gauss_mma_tile(radius_).width) + "x" +
            std::to_string(mma_rows()) + " wg=" + params_.wg.text();
  else if (params_.variant == GaussVariant::separable_buffer)
    text += " columns=1x" + std::to_string(sep_outputs()) +
            " rows=" + std::to_string(params_.wg.x) + "x8 wg=" + params_.wg.text();
  else
    text += " wg=" + params_.wg.text();
  return text + " edge=" + name_of(edge_mode_table(), params_.edge) + depth_text();
}

std::vector<cl::Event> GaussFilter::enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) {
  if (!takes_buffers()) return Filter::enqueue_buffers(src, dst);
  if (params_.variant == GaussVariant::fused) return enqueue_fused(src, dst);
  if (params_.variant == GaussVariant::separable_buffer) return enqueue_separable_buffer(src, dst);
  if (params_.variant == GaussVariant::separable_mma) return enqueue_separable_mma(src, dst);
  if (params_.variant == GaussVariant::fused_mma) return enqueue_fused_mma(src, dst);
  cl::Kernel& k = kernels_[0];
  k.setArg(0, src);
  k.setArg(1, dst);
  k.setArg(2, static_cast<cl_int>(width_));
  k.setArg(3, static_cast<cl_int>(height_));
  k.setArg(4, static_cast<cl_int>(radius_));
  k.setArg(5, static_cast<cl_int>(params_.edge));
  k.setArg(6, weights_);
  k.setArg(7, static_cast<cl_int>(tile_columns()));
  k.setArg(8, static_cast<cl_int>(kGaussTileRows));
  k.setArg(9, scratch_);
  std::vector<cl::Event> events(1);
  runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(tile_items_), cl::NDRange(1),
                                        nullptr, &events[0]);
  return events;
}

std::vector<cl::Event> GaussFilter::enqueue_fused(const cl::Buffer& src, const cl::Buffer& dst) {
  const size_t tile_w = gauss_fused_tile_width(radius_, params_.wg.x);
  return enqueue_tile_pass(src, dst, tile_w, fused_rows(),
                           [this](cl::Kernel& k) { k.setArg(6, cl::Local(local_bytes_[0])); });
}

std::vector<cl::Event> GaussFilter::enqueue_tile_pass(
    const cl::Buffer& src, const cl::Buffer& dst, size_t tile_w, size_t rows,
    const std::function<void(cl::Kernel&)>& last_arg) {
  cl::Kernel& k = kernels_[0];
  k.setArg(0, src);
  k.setArg(1, dst);
  k.setArg(2, static_cast<cl_int>(width_));
  k.setArg(3, static_cast<cl_int>(height_));
  k.setArg(4, static_cast<cl_int>(params_.edge));
  k.setArg(5, weights_);
  last_arg(k);
  const size_t g = params_.wg.x;
  const cl::NDRange global((width_ + tile_w - 1) / tile_w * g, (height_ + rows - 1) / rows);
  std::vector<cl::Event> events(1);
  runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(g, 1), nullptr,
                                        &events[0]);
  return events;
}

std::vector<cl::Event> GaussFilter::enqueue_buffer_passes(
    const cl::Buffer& src, const cl::Buffer& dst, const cl::NDRange (&global)[2],
    const std::function<void(size_t, cl::Kernel&)>& more_args) {
  std::vector<cl::Event> events(2);
  for (size_t i = 0; i < 2; ++i) {
    cl::Kernel& k = kernels_[i];
    k.setArg(0, i == 0 ? src : mid_);
    k.setArg(1, i == 0 ? mid_ : dst);
    k.setArg(2, static_cast<cl_int>(width_));
    k.setArg(3, static_cast<cl_int>(height_));
    k.setArg(4, static_cast<cl_int>(params_.edge));
    k.setArg(5, weights_);
    more_args(i, k);
    runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, global[i], cl::NDRange(params_.wg.x, 1),
                                          nullptr, &events[i]);
  }
  return events;
}

std::vector<cl::Event> GaussFilter::enqueue_separable_buffer(const cl::Buffer& src,
                                                             const cl::Buffer& dst) {
  const size_t g = params_.wg.x, k = sep_outputs();
  const cl::NDRange global[2] = {{round_up(width_, g), (height_ + k - 1) / k},
                                 {round_up(width_, g), static_cast<size_t>(height_ + 7) / 8}};
  return enqueue_buffer_passes(src, dst, global, [this](size_t i, cl::Kernel& kernel) {
    if (i == 0)
      kernel.setArg(6, weight_sum_);
    else
      kernel.setArg(6, cl::Local(local_bytes_[0]));
  });
}

std::vector<cl::Event> GaussFilter::enqueue_separable_mma(const cl::Buffer& src,
                                                          const cl::Buffer& dst) {
  // A warp (32 work-items) a strip: 8 columns of strips.rows rows, then 8 rows of strips.pixels.
  const MmaStrips strips = gauss_mma_strips(radius_);
  const size_t g = params_.wg.x;
  const cl::NDRange global[2] = {
      {round_up((width_ + 7) / 8 * 32, g),
       static_cast<size_t>(height_ + strips.rows - 1) / static_cast<size_t>(strips.rows)},
      {round_up((width_ + strips.pixels - 1) / strips.pixels * 32, g),
       static_cast<size_t>(height_ + 7) / 8}};
  return enqueue_buffer_passes(src, dst, global, [](size_t, cl::Kernel&) {});
}

std::vector<cl::Event> GaussFilter::enqueue_fused_mma(const cl::Buffer& src,
                                                      const cl::Buffer& dst) {
  // A work-group a tile of tile.width columns down mma_rows() rows.
  return enqueue_tile_pass(src, dst, gauss_mma_tile(radius_).width, mma_rows(),
                           [this](cl::Kernel& k) { k.setArg(6, static_cast<cl_int>(mma_rows())); });
}

std::vector<cl::Event> GaussFilter::enqueue(const cl::Image2D& src, const cl::Image2D& dst) {
  if (takes_buffers()) throw Error("schedule '" + describe() + "' runs on buffers, not images");
  const GaussVariant v = params_.variant;
  const bool two_pass = gauss_is_two_pass(v), row = gauss_row_work_group(v);
  const cl_int edge = static_cast<cl_int>(params_.edge);
  const size_t wx = params_.wg.x, wy = params_.wg.y;
  std::vector<cl::Event> events(kernels_.size());
  for (size_t i = 0; i < kernels_.size(); ++i) {
    cl::Kernel& k = kernels_[i];
    k.setArg(0, two_pass && i == 1 ? intermediate_ : src);
    k.setArg(1, two_pass && i == 0 ? intermediate_ : dst);
    k.setArg(2, v == GaussVariant::separable_linear ? taps_ : static_cast<cl_int>(radius_));
    k.setArg(3, edge);
    k.setArg(4, weights_);
    for (size_t a = 0; a < local_bytes_.size(); ++a)
      k.setArg(static_cast<cl_uint>(5 + a), cl::Local(local_bytes_[a]));
    cl::NDRange local = row && i == 1 ? cl::NDRange(1, wx) : cl::NDRange(wx, wy);
    cl::NDRange global(round_up(width_, local[0]), round_up(height_, local[1]));
    runtime_.queue().enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr, &events[i]);
  }
  return events;
}

Image gauss_blur(Runtime& runtime, const Image& rgba, const GaussParams& params) {
  GaussFilter filter(runtime, params, rgba.width, rgba.height);
  return run_filter(runtime, filter, rgba).output;
}

Image16 gauss_blur(Runtime& runtime, const Image16& rgba, const GaussParams& params) {
  GaussFilter filter(runtime, params, rgba.width, rgba.height, PixelDepth::u16);
  return run_filter(runtime, filter, rgba).output;
}

}  // namespace blurtool
