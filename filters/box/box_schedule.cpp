// The box filter's table of schedules, and what the families share (see box_schedule.h).
#include "filters/box/box_schedule.h"

#include <algorithm>

#include "util/error.h"

namespace blurtool {

const std::vector<BoxScheduleRow>& box_schedule_table() {
  static const std::vector<BoxScheduleRow> table = {
      {BoxVariant::single, "single", "one pass, every work-item reads its whole window",
       "box_window", false, make_box_window},
      {BoxVariant::single_linear, "single-linear", "one pass, 2x2 pixels per bilinear fetch",
       "box_window", false, make_box_window},
      {BoxVariant::double_pass, "double", "horizontal then vertical pass via an intermediate",
       "box_window", true, make_box_window},
      {BoxVariant::double_linear, "double-linear", "two passes, 2 pixels per bilinear fetch",
       "box_window", true, make_box_window},
      {BoxVariant::accumulated, "accumulated", "running sums, one work-item per row, then column",
       "box_running", true, make_box_running},
      {BoxVariant::unrolled, "unrolled", "accumulated, N pixels per loop iteration (unroll)",
       "box_running", true, make_box_running},
      {BoxVariant::scan, "scan", "running-sum rows, prefix-sum columns in local memory (MPS)",
       "box_running", true, make_box_running},
      {BoxVariant::segmented, "segmented",
       "running sums, one work-item per N pixels of a row (segment); columns in work-groups "
       "that keep their window in local memory",
       "box_running", true, make_box_running},
      {BoxVariant::segmented_local, "segmented-local",
       "segmented, each row read once into local memory as a prefix sum", "box_running", true,
       make_box_running},
      {BoxVariant::tiled, "tiled",
       "one pass over buffers, each work-item a tile of N rows (segment; CPUs)", "box_buffer",
       false, make_box_tiled},
      {BoxVariant::fused, "fused",
       "one pass over buffers, each work-group a tile of N rows (segment), row windows in local "
       "memory (GPUs)",
       "box_buffer", false, make_box_fused},
  };
  return table;
}

const BoxScheduleRow& box_schedule_row(BoxVariant variant) {
  for (const BoxScheduleRow& row : box_schedule_table())
    if (row.variant == variant) return row;
  throw Error("box filter: variant auto has no schedule (resolve it first)");
}

void BoxSchedule::prepare(const std::string&, const std::string&, std::vector<std::string>&,
                          std::vector<cl::Kernel> kernels) {
  kernels_ = std::move(kernels);
}

std::vector<cl::Event> BoxSchedule::enqueue(const cl::Image2D&, const cl::Image2D&) {
  throw Error("box schedule '" + std::string(box_schedule_row(s_.params.variant).name) +
              "' runs on buffers, not images");
}

std::vector<cl::Event> BoxSchedule::enqueue_buffers(const cl::Buffer&, const cl::Buffer&) {
  throw Error("box schedule '" + std::string(box_schedule_row(s_.params.variant).name) +
              "' runs on images, not buffers");
}

bool box_wide_sum(int radius, PixelDepth depth) {
  const unsigned long long n = 2ULL * radius + 1;
  return (depth == PixelDepth::u8 ? 256ULL : 65536ULL) * std::max(n * n, 256 * n) >= (1ULL << 32);
}

BoxScaling box_scaling(Intermediate format, int radius, bool two_pass, float max) {
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

void set_box_divisor(cl::Kernel& kernel, cl_uint index, unsigned long long d, bool wide_sum) {
  if (wide_sum)
    kernel.setArg(index, static_cast<cl_ulong>(d));
  else
    kernel.setArg(index, static_cast<cl_uint>(d));
}

void BoxTwoPass::prepare(const std::string& family, const std::string& options,
                         std::vector<std::string>& names, std::vector<cl::Kernel> kernels) {
  BoxSchedule::prepare(family, options, names, std::move(kernels));
  intermediate_ = make_image(*s_.runtime, s_.width, s_.height,
                             intermediate_channel_type(s_.params.intermediate));
}

void BoxTwoPass::set_pass_arguments(const cl::Image2D& src, const cl::Image2D& dst) {
  const BoxScaling s = box_scaling(s_.params.intermediate, s_.params.radius, true,
                                   s_.depth == PixelDepth::u16 ? 65535.0f : 255.0f);
  const cl_int radius = s_.params.radius, edge = static_cast<cl_int>(s_.params.edge);
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
  set_box_divisor(cols, 5, s.d, s_.wide_sum);
}

}  // namespace blurtool
