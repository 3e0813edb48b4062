// The Gaussian's table of schedules, and what the families share (see gauss_schedule.h).
#include "filters/gauss/gauss_schedule.h"

#include "filters/gauss/gauss_weights.h"
#include "util/error.h"

namespace blurtool {

const std::vector<GaussScheduleRow>& gauss_schedule_table() {
  static const std::vector<GaussScheduleRow> table = {
      {GaussVariant::naive, "naive", "one pass, (2R+1)^2 image reads per pixel", "gauss_window",
       false, false, make_gauss_window},
      {GaussVariant::naive_local, "naive-local", "one pass over a tile staged in local memory",
       "gauss_window", false, false, make_gauss_window},
      {GaussVariant::separable, "separable", "horizontal then vertical pass", "gauss_window", true,
       false, make_gauss_window},
      {GaussVariant::separable_linear, "separable-linear",
       "two passes, taps paired by the linear filter", "gauss_window", true, false,
       make_gauss_window},
      {GaussVariant::separable_local, "separable-local",
       "two passes, row/column segments in local memory", "gauss_window", true, true,
       make_gauss_window},
      {GaussVariant::fused_local, "fused-local", "one pass, both passes in local memory",
       "gauss_window", false, false, make_gauss_window},
      {GaussVariant::tiled, "tiled",
       "one pass over buffers, a tile per work-item, its rows in a ring (CPUs)", "gauss_buffer",
       false, false, make_gauss_tiled},
      {GaussVariant::fused, "fused",
       "one pass over buffers, built per radius: column sums then rows in local memory (GPUs)",
       "gauss_buffer", false, true, make_gauss_fused},
      {GaussVariant::separable_buffer, "separable-buffer",
       "two passes over buffers, built per radius: columns, then rows in local memory, "
       "through a 16-bit fixed-point intermediate (GPUs)",
       "gauss_buffer", false, true, make_gauss_separable_buffer},
      {GaussVariant::separable_mma, "separable-mma",
       "two passes as band-matrix products on NVIDIA tensor cores (compute capability 8.0+, "
       "RGBA8, R <= 64)",
       "gauss_mma", false, false, make_gauss_mma},
      {GaussVariant::fused_mma, "fused-mma",
       "separable-mma's products in one pass, the column results passed to the row products "
       "in local memory (compute capability 8.0+, RGBA8, R <= 32)",
       "gauss_mma", false, false, make_gauss_mma},
  };
  return table;
}

const GaussScheduleRow& gauss_schedule_row(GaussVariant variant) {
  for (const GaussScheduleRow& row : gauss_schedule_table())
    if (row.variant == variant) return row;
  throw Error("Gaussian: variant auto has no schedule (resolve it first)");
}

std::string GaussSchedule::variant_name() const {
  return gauss_schedule_row(s_.params.variant).name;
}

std::vector<cl::Event> GaussSchedule::enqueue(const cl::Image2D&, const cl::Image2D&) {
  throw Error("Gaussian schedule '" + variant_name() + "' runs on buffers, not images");
}

std::vector<cl::Event> GaussSchedule::enqueue_buffers(const cl::Buffer&, const cl::Buffer&) {
  throw Error("Gaussian schedule '" + variant_name() + "' runs on images, not buffers");
}

std::vector<PassInfo> GaussSchedule::pass_infos(std::uint64_t pixel_bytes) {
  const std::vector<std::string> names = kernel_names();
  const std::uint64_t pixels = static_cast<std::uint64_t>(s_.width) * s_.height;
  const std::uint64_t px = pixel_bytes * pixels, inter = pixels * intermediate_pixel_bytes();
  std::vector<PassInfo> passes;
  for (const std::string& name : names)
    passes.push_back({name, names.size() == 1 ? 2 * px : px + inter});
  return passes;
}

float GaussSchedule::upload_weights() {
  const std::vector<double> weights = gauss_weights(s_.params.sigma, radius());
  double sum = 0;
  for (double x : weights) sum += static_cast<float>(x);
  std::vector<float> w(weights.begin(), weights.end());
  weights_ = cl::Buffer(s_.runtime->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        w.size() * sizeof(float), w.data());
  return static_cast<float>(sum);
}

std::vector<cl::Event> GaussSchedule::enqueue_tile_pass(
    const cl::Buffer& src, const cl::Buffer& dst, size_t tile_w, size_t rows,
    const std::function<void(cl::Kernel&)>& last_arg) {
  cl::Kernel& k = kernels_[0];
  k.setArg(0, src);
  k.setArg(1, dst);
  k.setArg(2, static_cast<cl_int>(s_.width));
  k.setArg(3, static_cast<cl_int>(s_.height));
  k.setArg(4, static_cast<cl_int>(s_.params.edge));
  k.setArg(5, weights_);
  last_arg(k);
  const size_t g = s_.params.wg.x;
  const cl::NDRange global((s_.width + tile_w - 1) / tile_w * g, (s_.height + rows - 1) / rows);
  std::vector<cl::Event> events(1);
  s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange, global, cl::NDRange(g, 1), nullptr,
                                           &events[0]);
  return events;
}

std::vector<cl::Event> GaussSchedule::enqueue_buffer_passes(
    const cl::Buffer& src, const cl::Buffer& dst, const cl::NDRange (&global)[2],
    const std::function<void(size_t, cl::Kernel&)>& more_args) {
  std::vector<cl::Event> events(2);
  for (size_t i = 0; i < 2; ++i) {
    cl::Kernel& k = kernels_[i];
    k.setArg(0, i == 0 ? src : mid_);
    k.setArg(1, i == 0 ? mid_ : dst);
    k.setArg(2, static_cast<cl_int>(s_.width));
    k.setArg(3, static_cast<cl_int>(s_.height));
    k.setArg(4, static_cast<cl_int>(s_.params.edge));
    k.setArg(5, weights_);
    more_args(i, k);
    s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange, global[i],
                                             cl::NDRange(s_.params.wg.x, 1), nullptr, &events[i]);
  }
  return events;
}

void GaussSchedule::check_work_group(const cl::Kernel& kernel, size_t x, size_t y,
                                     size_t local_bytes) const {
  const DeviceInfo& device = s_.runtime->device();
  const std::string variant = variant_name();
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
                     std::to_string(radius()) + " needs " + std::to_string(fixed + local_bytes) +
                     " bytes of local memory; " + device.name + " has " +
                     std::to_string(device.local_mem) +
                     " (CL_DEVICE_LOCAL_MEM_SIZE); try a smaller " + parameter("wg"));
  }
}

}  // namespace blurtool
