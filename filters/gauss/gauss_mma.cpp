// Host side of the Gaussian schedules on NVIDIA tensor cores (kernels/gauss_mma.cl):
// separable-mma, both passes as band-matrix products, and fused-mma, its products in one pass
// through local memory.
#include "filters/gauss/gauss_schedule.h"
#include "util/error.h"

namespace blurtool {

namespace {

// The groups of 8 columns a fused-mma tile `width` columns wide reads at `radius`
// (kernels/gauss_mma.cl MMA_NG, with KS blocks of 16 inputs).
int mma_column_groups(int radius, int width) {
  const int blocks = (16 + 2 * radius + 15) / 16;  // KS
  return 2 * (width / 16 + blocks - 1);
}

class GaussMma : public GaussSchedule {
 public:
  explicit GaussMma(const GaussSetup& setup) : GaussSchedule(setup) {
    const DeviceInfo& d = s_.runtime->device();
    const std::string name = variant_name();
    if (!gauss_has_tensor_cores(d))
      throw UsageError(parameter("variant") + " " + name +
                       ": needs an NVIDIA GPU with tensor cores (compute capability 8.0 or "
                       "later); '" +
                       d.name + "' has none; use separable-buffer or fused");
    if (s_.depth != PixelDepth::u8)
      throw UsageError(parameter("variant") + " " + name +
                       ": takes 8-bit samples only (f16 holds 11 bits of a 16-bit sample), and "
                       "16-bit images, images with transparency (blurred premultiplied) and " +
                       parameter("linear_light") +
                       " blur at 16 bits; use separable-buffer or fused");
    const int max_radius = fused() ? kMaxGaussMmaFusedRadius : kMaxGaussMmaRadius;
    if (radius() > max_radius)
      throw UsageError(parameter("radius") + " " + std::to_string(radius()) + ": variant " + name +
                       " takes radii up to " + std::to_string(max_radius) + "; use " +
                       (fused() ? "separable-mma" : "separable-buffer"));
    if (!s_.params.wg.is_default())
      throw UsageError(parameter("wg") + " " + s_.params.wg.text() + ": variant " + name +
                       " sets its own work-group and takes no work-group size");
    if (fused()) {
      const MmaTile tile = gauss_mma_tile(radius());
      const size_t bytes = gauss_mma_fused_local_bytes(radius(), tile);
      if (bytes > d.local_mem)
        throw UsageError(
            parameter("radius") + " " + std::to_string(radius()) + ": variant fused-mma needs " +
            std::to_string(bytes) + " bytes of local memory; " + d.name + " has " +
            std::to_string(d.local_mem) + " (CL_DEVICE_LOCAL_MEM_SIZE); use separable-mma");
      s_.params.wg = {32 * tile.warps, 1};
    } else {
      s_.params.wg = {128, 1};
    }
    upload_weights();
  }

  std::vector<std::string> kernel_names() override {
    if (fused()) return {"gauss_mma_fused"};
    return {"gauss_mma_cols", "gauss_mma_rows"};
  }

  std::string options() override {
    if (fused()) {
      const MmaTile tile = gauss_mma_tile(radius());
      return "-DGAUSS_R=" + std::to_string(radius()) + " -DMMA_TX=" + std::to_string(tile.width) +
             " -DMMA_WARPS=" + std::to_string(tile.warps);
    }
    const MmaStrips strips = gauss_mma_strips(radius());
    return "-DGAUSS_R=" + std::to_string(radius()) + " -DMMA_STRIP=" + std::to_string(strips.rows) +
           " -DMMA_STRIPX=" + std::to_string(strips.pixels);
  }

  std::uint64_t intermediate_pixel_bytes() const override {
    return fused() ? 0 : 8;  // f16 RGBA between the passes
  }

  void prepare(std::vector<cl::Kernel> kernels) override {
    GaussSchedule::prepare(std::move(kernels));
    for (const cl::Kernel& k : kernels_) check_work_group(k, s_.params.wg.x, s_.params.wg.y, 0);
    if (!fused())
      mid_ =
          cl::Buffer(s_.runtime->context(), CL_MEM_READ_WRITE,
                     static_cast<std::uint64_t>(s_.width) * s_.height * intermediate_pixel_bytes());
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    if (fused()) {
      // A work-group a tile of tile.width columns down rows() rows.
      return enqueue_tile_pass(src, dst, gauss_mma_tile(radius()).width, rows(),
                               [this](cl::Kernel& k) { k.setArg(6, static_cast<cl_int>(rows())); });
    }
    // A warp (32 work-items) a strip: 8 columns of strips.rows rows, then 8 rows of
    // strips.pixels.
    const MmaStrips strips = gauss_mma_strips(radius());
    const size_t g = s_.params.wg.x;
    const cl::NDRange global[2] = {
        {round_up((s_.width + 7) / 8 * 32, g),
         static_cast<size_t>(s_.height + strips.rows - 1) / static_cast<size_t>(strips.rows)},
        {round_up((s_.width + strips.pixels - 1) / strips.pixels * 32, g),
         static_cast<size_t>(s_.height + 7) / 8}};
    return enqueue_buffer_passes(src, dst, global, [](size_t, cl::Kernel&) {});
  }

  std::string describe() const override {
    if (fused())
      return " tile=" + std::to_string(gauss_mma_tile(radius()).width) + "x" +
             std::to_string(rows()) + " wg=" + s_.params.wg.text();
    return " columns=8x" + std::to_string(gauss_mma_strips(radius()).rows) +
           " rows=" + std::to_string(gauss_mma_strips(radius()).pixels) +
           "x8 wg=" + s_.params.wg.text();
  }

 private:
  bool fused() const { return s_.params.variant == GaussVariant::fused_mma; }
  int rows() const { return s_.params.segment ? s_.params.segment : gauss_mma_tile(radius()).rows; }
};

}  // namespace

MmaStrips gauss_mma_strips(int radius) {
  return radius <= 32 ? MmaStrips{128, 64} : MmaStrips{256, 256};
}

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

std::unique_ptr<GaussSchedule> make_gauss_mma(const GaussSetup& setup) {
  return std::make_unique<GaussMma>(setup);
}

}  // namespace blurtool
