// Host side of the Gaussian schedules over buffers (kernels/gauss_buffer.cl): tiled, a tile a
// work-item with its rows in a ring (CPUs); fused, one pass built per radius with column sums
// then rows in local memory (GPUs); separable-buffer, columns then rows through a 16-bit
// fixed-point intermediate buffer (GPUs).
#include <algorithm>

#include "filters/gauss/gauss_schedule.h"
#include "filters/schedule_table.h"
#include "util/error.h"

namespace blurtool {

namespace {

// Rows of gauss_tiled's ring at `radius`: 4 ceil(R/2) + 4, whole groups of four input rows
// covering the 2R + 4 rows a group of four outputs needs (kernels/gauss_buffer.cl, `slots`).
size_t gauss_tiled_ring_rows(int radius) {
  return 4 * ((static_cast<size_t>(radius) + 1) / 2) + 4;
}

// Refuses a radius over kMaxGaussUnrolledRadius for `variant` (fused or separable-buffer).
void check_unrolled_radius(int radius, const char* variant) {
  if (radius > kMaxGaussUnrolledRadius)
    throw UsageError(parameter("radius") + " " + std::to_string(radius) + ": variant " + variant +
                     " is built with its loops unrolled for the radius and takes radii up to " +
                     std::to_string(kMaxGaussUnrolledRadius) +
                     "; use tiled on CPUs, separable-local on GPUs");
}

class GaussTiled : public GaussSchedule {
 public:
  explicit GaussTiled(const GaussSetup& setup) : GaussSchedule(setup) {
    if (!s_.params.wg.is_default()) {
      throw UsageError(parameter("wg") + " " + s_.params.wg.text() +
                       ": variant tiled runs one work-item per tile and takes no work-group size");
    }
    s_.params.wg = {16, 16};  // not used: one work-item a tile
    upload_weights();
  }

  std::vector<std::string> kernel_names() override { return {"gauss_tiled"}; }

  void prepare(std::vector<cl::Kernel> kernels) override {
    GaussSchedule::prepare(std::move(kernels));
    // Fewer work-items where a large radius makes each one's ring large.
    const size_t tile_w = tile_columns();
    const size_t tiles = static_cast<size_t>((s_.width + tile_w - 1) / tile_w) *
                         ((s_.height + kGaussTileRows - 1) / kGaussTileRows);
    // Four staged rows of tile_w + 2R + 8 float4 each, and the ring: 4 ceil(R/2) + 4 rows of
    // tile_w + 4 float4 (gauss_tiled in kernels/gauss_buffer.cl lays them out).
    const size_t per_item =
        sizeof(cl_float4) * (4 * (tile_w + 2 * static_cast<size_t>(radius()) + 8) +
                             gauss_tiled_ring_rows(radius()) * (tile_w + 4));
    constexpr size_t kMaxScratchBytes = 256 << 20;
    items_ = std::max<size_t>(
        1, std::min(tile_work_items(tiles, s_.runtime->device()), kMaxScratchBytes / per_item));
    scratch_ = cl::Buffer(s_.runtime->context(), CL_MEM_READ_WRITE, items_ * per_item);
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    cl::Kernel& k = kernels_[0];
    k.setArg(0, src);
    k.setArg(1, dst);
    k.setArg(2, static_cast<cl_int>(s_.width));
    k.setArg(3, static_cast<cl_int>(s_.height));
    k.setArg(4, static_cast<cl_int>(radius()));
    k.setArg(5, static_cast<cl_int>(s_.params.edge));
    k.setArg(6, weights_);
    k.setArg(7, static_cast<cl_int>(tile_columns()));
    k.setArg(8, static_cast<cl_int>(kGaussTileRows));
    k.setArg(9, scratch_);
    std::vector<cl::Event> events(1);
    s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(items_), cl::NDRange(1),
                                             nullptr, &events[0]);
    return events;
  }

  std::string describe() const override {
    return " tile=" + std::to_string(tile_columns()) + "x" + std::to_string(kGaussTileRows);
  }

 private:
  int tile_columns() const {
    return s_.params.segment ? s_.params.segment : gauss_tile_width(radius());
  }

  cl::Buffer scratch_;  // each work-item's staged rows and ring
  size_t items_ = 0;    // work-items
};

class GaussFused : public GaussSchedule {
 public:
  explicit GaussFused(const GaussSetup& setup) : GaussSchedule(setup) {
    WorkGroup& wg = s_.params.wg;
    const DeviceInfo& d = s_.runtime->device();
    rows_ = s_.params.segment ? s_.params.segment
                              : default_parameters(d, "gauss", "fused", radius()).segment;
    if (wg.is_default()) {
      // Within the device's work-group limit: the tile is built for the size.
      const size_t limit = std::max<size_t>(1, d.max_work_group);
      wg = {static_cast<int>(std::min<size_t>(gauss_fused_default_group(radius(), d), limit)), 1};
    } else if (wg.y != 1) {
      throw UsageError(parameter("wg") + " " + wg.text() +
                       ": variant fused takes Gx1 (G work-items share a tile of output rows)");
    }
    upload_weights();
    // Checked before the build: the program is unrolled for the radius, and a radius too
    // large for local memory would take long to build only to be refused.
    check_unrolled_radius(radius(), "fused");
    local_bytes_ = gauss_fused_local_bytes(radius(), wg.x, rows());
    if (local_bytes_ > d.local_mem) {
      throw UsageError(parameter("radius") + " " + std::to_string(radius()) +
                       ": variant fused with " + parameter("wg") + " " + wg.text() + " needs " +
                       std::to_string(local_bytes_) + " bytes of local memory; " + d.name +
                       " has " + std::to_string(d.local_mem) +
                       " (CL_DEVICE_LOCAL_MEM_SIZE); use a smaller " + parameter("wg") + " or " +
                       parameter("segment") + ", or separable-local or tiled");
    }
  }

  std::vector<std::string> kernel_names() override { return {"gauss_fused"}; }

  std::string options() override {
    return "-DGAUSS_R=" + std::to_string(radius()) +
           " -DFUSED_TILE_W=" + std::to_string(tile_width()) +
           " -DFUSED_ROWS=" + std::to_string(rows());
  }

  void prepare(std::vector<cl::Kernel> kernels) override {
    GaussSchedule::prepare(std::move(kernels));
    check_work_group(kernels_[0], s_.params.wg.x, s_.params.wg.y, local_bytes_);
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    return enqueue_tile_pass(src, dst, tile_width(), rows(),
                             [this](cl::Kernel& k) { k.setArg(6, cl::Local(local_bytes_)); });
  }

  std::string describe() const override {
    return " tile=" + std::to_string(tile_width()) + "x" + std::to_string(rows()) +
           " wg=" + s_.params.wg.text();
  }

 private:
  int rows() const { return rows_; }
  int tile_width() const { return gauss_fused_tile_width(radius(), s_.params.wg.x); }

  int rows_ = 0;  // output rows of a tile: --segment, else the default parameter table's
  size_t local_bytes_ = 0;
};

class GaussSeparableBuffer : public GaussSchedule {
 public:
  explicit GaussSeparableBuffer(const GaussSetup& setup) : GaussSchedule(setup) {
    WorkGroup& wg = s_.params.wg;
    const DeviceInfo& d = s_.runtime->device();
    const TunedSchedule defaults = default_parameters(d, "gauss", "separable-buffer", radius());
    outputs_ = s_.params.segment ? s_.params.segment : defaults.segment;
    if (wg.is_default()) {
      const size_t limit = std::max<size_t>(8, d.max_work_group);
      wg = {static_cast<int>(std::min<size_t>(defaults.wg.x, limit / 8 * 8)), 1};
    } else if (wg.y != 1 || wg.x % 8) {
      throw UsageError(parameter("wg") + " " + wg.text() +
                       ": variant separable-buffer takes Gx1 with G a multiple of 8 (the row "
                       "pass's tile is G columns of 8 rows, 8 outputs a work-item)");
    }
    weight_sum_ = upload_weights();
    check_unrolled_radius(radius(), "separable-buffer");
    local_bytes_ = gauss_sep_local_bytes(radius(), wg.x);
    if (local_bytes_ > d.local_mem) {
      throw UsageError(parameter("radius") + " " + std::to_string(radius()) +
                       ": variant separable-buffer with " + parameter("wg") + " " + wg.text() +
                       " needs " + std::to_string(local_bytes_) + " bytes of local memory; " +
                       d.name + " has " + std::to_string(d.local_mem) +
                       " (CL_DEVICE_LOCAL_MEM_SIZE); use a smaller " + parameter("wg") +
                       ", or separable-local");
    }
  }

  std::vector<std::string> kernel_names() override { return {"gauss_sep_cols", "gauss_sep_rows"}; }

  std::string options() override {
    return "-DGAUSS_R=" + std::to_string(radius()) + " -DSEP_K=" + std::to_string(outputs());
  }

  std::uint64_t intermediate_pixel_bytes() const override {
    return gauss_sep_intermediate_bytes(s_.depth);
  }

  void prepare(std::vector<cl::Kernel> kernels) override {
    GaussSchedule::prepare(std::move(kernels));
    const size_t wx = s_.params.wg.x, wy = s_.params.wg.y;
    check_work_group(kernels_[0], wx, wy, 0);  // the column pass takes no local memory
    check_work_group(kernels_[1], wx, wy, local_bytes_);
    mid_ =
        cl::Buffer(s_.runtime->context(), CL_MEM_READ_WRITE,
                   static_cast<std::uint64_t>(s_.width) * s_.height * intermediate_pixel_bytes());
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    const size_t g = s_.params.wg.x, k = outputs();
    const cl::NDRange global[2] = {{round_up(s_.width, g), (s_.height + k - 1) / k},
                                   {round_up(s_.width, g), static_cast<size_t>(s_.height + 7) / 8}};
    return enqueue_buffer_passes(src, dst, global, [this](size_t i, cl::Kernel& kernel) {
      if (i == 0)
        kernel.setArg(6, weight_sum_);
      else
        kernel.setArg(6, cl::Local(local_bytes_));
    });
  }

  std::string describe() const override {
    return " columns=1x" + std::to_string(outputs()) + " rows=" + std::to_string(s_.params.wg.x) +
           "x8 wg=" + s_.params.wg.text();
  }

 private:
  int outputs() const { return outputs_; }

  int outputs_ = 0;         // outputs a column-pass work-item: --segment, else the table's
  size_t local_bytes_ = 0;  // the row pass's tile
  float weight_sum_ = 0;    // the sum of the float weights
};

}  // namespace

int gauss_tile_width(int radius) {
  const double columns =
      262144.0 / (static_cast<double>(gauss_tiled_ring_rows(radius)) * sizeof(cl_float4)) - 4;
  return 16 * std::clamp(static_cast<int>(columns / 16), 1, 16);
}

int gauss_fused_default_group(int radius, const DeviceInfo& device) {
  return default_parameters(device, "gauss", "fused", radius).wg.x;
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

std::unique_ptr<GaussSchedule> make_gauss_tiled(const GaussSetup& setup) {
  return std::make_unique<GaussTiled>(setup);
}

std::unique_ptr<GaussSchedule> make_gauss_fused(const GaussSetup& setup) {
  return std::make_unique<GaussFused>(setup);
}

std::unique_ptr<GaussSchedule> make_gauss_separable_buffer(const GaussSetup& setup) {
  return std::make_unique<GaussSeparableBuffer>(setup);
}

}  // namespace blurtool
