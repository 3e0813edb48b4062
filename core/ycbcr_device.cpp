// JPEG's colour stages on the device (see ycbcr_device.h and kernels/ycbcr.cl).
#include "core/ycbcr_device.h"

#include <algorithm>

#include "core/filter.h"

namespace blurtool {

YCbCrConverter::YCbCrConverter(Runtime& runtime) : runtime_(runtime) {
  // One program of all six kernels: one compile for both directions.
  cl::Program& program = runtime.program("ycbcr", "");
  to_rgba_buffer_ = cl::Kernel(program, "ycbcr_to_rgba_buffer");
  to_rgba_image_ = cl::Kernel(program, "ycbcr_to_rgba_image");
  luma_buffer_ = cl::Kernel(program, "rgba_to_luma_buffer");
  luma_image_ = cl::Kernel(program, "rgba_to_luma_image");
  chroma_buffer_ = cl::Kernel(program, "rgba_to_chroma_buffer");
  chroma_image_ = cl::Kernel(program, "rgba_to_chroma_image");
  dct_to_plane_ = cl::Kernel(program, "dct_to_plane");
  plane_to_dct_ = cl::Kernel(program, "plane_to_dct");
}

namespace {

// A 2-D range of one work-item a block, blocks_across x blocks_down, in 8x8 work-groups where
// the kernel allows them.
void enqueue_blocks(Runtime& runtime, cl::Kernel& kernel, int across, int down, cl::Event* event) {
  const cl::NDRange local = local_size_2d(kernel, runtime.device().device);
  const std::size_t lx = std::min<std::size_t>(local[0], 8),
                    ly = std::min<std::size_t>(local[1], 8);
  runtime.queue().enqueueNDRangeKernel(kernel, cl::NullRange,
                                       global_size_2d(across, down, cl::NDRange(lx, ly)),
                                       cl::NDRange(lx, ly), nullptr, event);
}

}  // namespace

std::vector<cl::Event> YCbCrConverter::blocks_to_planes(const cl::Buffer& coef,
                                                        const YCbCrPlanes& p,
                                                        const cl::Buffer& planes) {
  const DctBlocks& dct = p.dct;
  if (!quant_set_ || quant_of_ != dct.quant) {
    if (!quant_()) quant_ = cl::Buffer(runtime_.context(), CL_MEM_READ_ONLY, sizeof dct.quant);
    runtime_.queue().enqueueWriteBuffer(quant_, CL_TRUE, 0, sizeof dct.quant, dct.quant.data());
    quant_of_ = dct.quant;
    quant_set_ = true;
  }
  std::vector<cl::Event> events(p.components);
  for (int i = 0; i < p.components; ++i) {
    int arg = 0;
    dct_to_plane_.setArg(arg++, coef);
    dct_to_plane_.setArg(arg++, static_cast<cl_long>(dct.offset[i]));
    dct_to_plane_.setArg(arg++, dct.blocks_across[i]);
    dct_to_plane_.setArg(arg++, dct.blocks_down[i]);
    dct_to_plane_.setArg(arg++, quant_);
    dct_to_plane_.setArg(arg++, static_cast<cl_int>(64 * i));
    dct_to_plane_.setArg(arg++, planes);
    dct_to_plane_.setArg(arg++, static_cast<cl_int>(p.offset[i]));
    dct_to_plane_.setArg(arg++, p.plane_width[i]);
    dct_to_plane_.setArg(arg++, p.plane_width[i]);
    dct_to_plane_.setArg(arg++, p.plane_height[i]);
    enqueue_blocks(runtime_, dct_to_plane_, dct.blocks_across[i], dct.blocks_down[i], &events[i]);
  }
  return events;
}

std::vector<cl::Event> YCbCrConverter::planes_to_blocks(const cl::Buffer& planes,
                                                        const YCbCrPlanes& p,
                                                        const cl::Buffer& coef) {
  const DctBlocks& dct = p.dct;
  const int fast = dct.fast_dct ? 1 : 0;
  if (divisors_fast_ != fast || divisors_of_ != dct.quant) {
    std::array<int, 3 * 192> table{};
    for (int i = 0; i < 3; ++i) {
      const std::array<int, 192> d = quantisation_divisors(dct.quant[i], dct.fast_dct);
      std::copy(d.begin(), d.end(), table.begin() + 192 * i);
    }
    if (!divisors_()) divisors_ = cl::Buffer(runtime_.context(), CL_MEM_READ_ONLY, sizeof table);
    runtime_.queue().enqueueWriteBuffer(divisors_, CL_TRUE, 0, sizeof table, table.data());
    divisors_of_ = dct.quant;
    divisors_fast_ = fast;
  }
  std::vector<cl::Event> events(p.components);
  for (int i = 0; i < p.components; ++i) {
    int arg = 0;
    plane_to_dct_.setArg(arg++, planes);
    plane_to_dct_.setArg(arg++, static_cast<cl_int>(p.offset[i]));
    plane_to_dct_.setArg(arg++, p.plane_width[i]);
    plane_to_dct_.setArg(arg++, coef);
    plane_to_dct_.setArg(arg++, static_cast<cl_long>(dct.offset[i]));
    plane_to_dct_.setArg(arg++, dct.blocks_across[i]);
    plane_to_dct_.setArg(arg++, dct.blocks_down[i]);
    plane_to_dct_.setArg(arg++, divisors_);
    plane_to_dct_.setArg(arg++, static_cast<cl_int>(192 * i));
    plane_to_dct_.setArg(arg++, fast);
    enqueue_blocks(runtime_, plane_to_dct_, dct.blocks_across[i], dct.blocks_down[i], &events[i]);
  }
  return events;
}

template <typename Dst>
cl::Event YCbCrConverter::enqueue_to_rgba(cl::Kernel& kernel, const cl::Buffer& planes,
                                          const YCbCrPlanes& p, const Dst& dst) {
  const bool colour = p.components == 3;
  int arg = 0;
  kernel.setArg(arg++, planes);
  kernel.setArg(arg++, static_cast<cl_int>(p.offset[0]));
  kernel.setArg(arg++, p.plane_width[0]);
  kernel.setArg(arg++, static_cast<cl_int>(colour ? p.offset[1] : 0));
  kernel.setArg(arg++, static_cast<cl_int>(colour ? p.offset[2] : 0));
  kernel.setArg(arg++, colour ? p.plane_width[1] : 1);
  kernel.setArg(arg++, p.chroma_width());
  kernel.setArg(arg++, p.chroma_height());
  kernel.setArg(arg++, p.h_factor);
  kernel.setArg(arg++, p.v_factor);
  kernel.setArg(arg++, p.components);
  kernel.setArg(arg++, p.width);
  kernel.setArg(arg++, p.height);
  kernel.setArg(arg++, dst);
  const cl::NDRange local = local_size_2d(kernel, runtime_.device().device);
  cl::Event event;
  runtime_.queue().enqueueNDRangeKernel(
      kernel, cl::NullRange, global_size_2d(p.width, p.height, local), local, nullptr, &event);
  return event;
}

cl::Event YCbCrConverter::to_rgba(const cl::Buffer& planes, const YCbCrPlanes& layout,
                                  const cl::Buffer& dst) {
  return enqueue_to_rgba(to_rgba_buffer_, planes, layout, dst);
}

cl::Event YCbCrConverter::to_rgba(const cl::Buffer& planes, const YCbCrPlanes& layout,
                                  const cl::Image2D& dst) {
  return enqueue_to_rgba(to_rgba_image_, planes, layout, dst);
}

template <typename Src>
std::vector<cl::Event> YCbCrConverter::enqueue_to_planes(cl::Kernel& luma, cl::Kernel& chroma,
                                                         const Src& src, const YCbCrPlanes& p,
                                                         const cl::Buffer& planes) {
  std::vector<cl::Event> events(p.components == 3 ? 2 : 1);
  int arg = 0;
  luma.setArg(arg++, src);
  luma.setArg(arg++, p.width);
  luma.setArg(arg++, p.height);
  luma.setArg(arg++, planes);
  luma.setArg(arg++, static_cast<cl_int>(p.offset[0]));
  luma.setArg(arg++, p.plane_width[0]);
  luma.setArg(arg++, p.plane_height[0]);
  cl::NDRange local = local_size_2d(luma, runtime_.device().device);
  runtime_.queue().enqueueNDRangeKernel(luma, cl::NullRange,
                                        global_size_2d(p.plane_width[0], p.plane_height[0], local),
                                        local, nullptr, &events[0]);
  if (p.components == 1) return events;
  arg = 0;
  chroma.setArg(arg++, src);
  chroma.setArg(arg++, p.width);
  chroma.setArg(arg++, p.height);
  chroma.setArg(arg++, planes);
  chroma.setArg(arg++, static_cast<cl_int>(p.offset[1]));
  chroma.setArg(arg++, static_cast<cl_int>(p.offset[2]));
  chroma.setArg(arg++, p.plane_width[1]);
  chroma.setArg(arg++, p.plane_height[1]);
  chroma.setArg(arg++, p.h_factor);
  chroma.setArg(arg++, p.v_factor);
  chroma.setArg(arg++, p.chroma_height());
  local = local_size_2d(chroma, runtime_.device().device);
  runtime_.queue().enqueueNDRangeKernel(chroma, cl::NullRange,
                                        global_size_2d(p.plane_width[1], p.plane_height[1], local),
                                        local, nullptr, &events[1]);
  return events;
}

std::vector<cl::Event> YCbCrConverter::to_planes(const cl::Buffer& src, const YCbCrPlanes& layout,
                                                 const cl::Buffer& planes) {
  return enqueue_to_planes(luma_buffer_, chroma_buffer_, src, layout, planes);
}

std::vector<cl::Event> YCbCrConverter::to_planes(const cl::Image2D& src, const YCbCrPlanes& layout,
                                                 const cl::Buffer& planes) {
  return enqueue_to_planes(luma_image_, chroma_image_, src, layout, planes);
}

}  // namespace blurtool
