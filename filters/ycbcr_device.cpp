// JPEG's colour stages on the device (see ycbcr_device.h and kernels/ycbcr.cl).
#include "filters/ycbcr_device.h"

#include <algorithm>
#include <string>

#include "filters/filter.h"

namespace blurtool {

YCbCrConverter::YCbCrConverter(Runtime& runtime) : runtime_(runtime) {
  // One program of the colour and DCT kernels: one compile for both directions. The sparse
  // blocks' kernels, which only BLURTOOL_JPEG_DCT=sparse uses, are a program of their own,
  // built when first used (ensure_sparse_kernels).
  const std::vector<cl::Kernel> k =
      runtime.kernels("ycbcr",
                      {"ycbcr_to_rgba_buffer", "ycbcr_to_rgba_image", "rgba_to_planes_buffer",
                       "rgba_to_planes_image", "dct_to_plane", "plane_to_dct"},
                      "");
  to_rgba_buffer_ = k[0];
  to_rgba_image_ = k[1];
  to_planes_buffer_ = k[2];
  to_planes_image_ = k[3];
  dct_to_plane_ = k[4];
  plane_to_dct_ = k[5];
}

void YCbCrConverter::ensure_sparse_kernels() {
  if (unpack_blocks_()) return;
  const std::vector<cl::Kernel> k =
      runtime_.kernels("ycbcr", {"unpack_blocks", "mask_blocks", "scan_groups", "pack_blocks"},
                       "-DSPARSE_GROUP=" + std::to_string(SparseBlocks::kGroup));
  unpack_blocks_ = k[0];
  mask_blocks_ = k[1];
  scan_groups_ = k[2];
  pack_blocks_ = k[3];
}

namespace {

// Every block of `components` components in one launch: a 3-D range of one work-item a block,
// as many across and down as the largest component has, one layer a component (the kernels
// leave out the work-items past a smaller component's blocks), in 8x8 work-groups where the
// kernel allows them. One launch instead of one a component: a driver may serialise enqueues
// across queues, so a batch's lanes wait on each other's (kernels/NOTES.md).
void enqueue_components(Runtime& runtime, cl::Kernel& kernel, const DctBlocks& dct, int components,
                        cl::Event* event) {
  int across = 0, down = 0;
  for (int i = 0; i < components; ++i) {
    across = std::max(across, dct.blocks_across[i]);
    down = std::max(down, dct.blocks_down[i]);
  }
  const cl::NDRange local = local_size_2d(kernel, runtime.device().device);
  const std::size_t lx = std::min<std::size_t>(local[0], 8),
                    ly = std::min<std::size_t>(local[1], 8);
  const cl::NDRange plane = global_size_2d(across, down, cl::NDRange(lx, ly));
  runtime.queue().enqueueNDRangeKernel(kernel, cl::NullRange,
                                       cl::NDRange(plane[0], plane[1], components),
                                       cl::NDRange(lx, ly, 1), nullptr, event);
}

// The per-component arguments of dct_to_plane and plane_to_dct, component i in lane i (unused
// lanes 0): where its blocks start in the coefficients, its blocks across and down, where its
// plane starts in the planes, and the plane's width (also its pitch) and height.
struct ComponentArgs {
  cl_long4 coef_offs{};
  cl_int4 across{}, down{}, offsets{}, widths{}, heights{};
  explicit ComponentArgs(const YCbCrPlanes& p) {
    for (int i = 0; i < p.components; ++i) {
      coef_offs.s[i] = static_cast<cl_long>(p.dct.offset[i]);
      across.s[i] = p.dct.blocks_across[i];
      down.s[i] = p.dct.blocks_down[i];
      offsets.s[i] = static_cast<cl_int>(p.offset[i]);
      widths.s[i] = p.plane_width[i];
      heights.s[i] = p.plane_height[i];
    }
  }
};

}  // namespace

std::vector<cl::Event> YCbCrConverter::blocks_to_planes(const cl::Buffer& coef,
                                                        const YCbCrPlanes& p,
                                                        const cl::Buffer& planes,
                                                        std::size_t coef_base) {
  const DctBlocks& dct = p.dct;
  if (!quant_set_ || quant_of_ != dct.quant) {
    if (!quant_()) quant_ = cl::Buffer(runtime_.context(), CL_MEM_READ_ONLY, sizeof dct.quant);
    runtime_.queue().enqueueWriteBuffer(quant_, CL_TRUE, 0, sizeof dct.quant, dct.quant.data());
    quant_of_ = dct.quant;
    quant_set_ = true;
  }
  ComponentArgs c(p);
  for (int i = 0; i < p.components; ++i) c.coef_offs.s[i] += static_cast<cl_long>(coef_base);
  int arg = 0;
  dct_to_plane_.setArg(arg++, coef);
  dct_to_plane_.setArg(arg++, c.coef_offs);
  dct_to_plane_.setArg(arg++, c.across);
  dct_to_plane_.setArg(arg++, c.down);
  dct_to_plane_.setArg(arg++, quant_);
  dct_to_plane_.setArg(arg++, planes);
  dct_to_plane_.setArg(arg++, c.offsets);
  dct_to_plane_.setArg(arg++, c.widths);  // a plane's pitch is its width
  dct_to_plane_.setArg(arg++, c.widths);
  dct_to_plane_.setArg(arg++, c.heights);
  std::vector<cl::Event> events(1);
  enqueue_components(runtime_, dct_to_plane_, dct, p.components, &events[0]);
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
  const ComponentArgs c(p);
  int arg = 0;
  plane_to_dct_.setArg(arg++, planes);
  plane_to_dct_.setArg(arg++, c.offsets);
  plane_to_dct_.setArg(arg++, c.widths);  // a plane's pitch is its width
  plane_to_dct_.setArg(arg++, coef);
  plane_to_dct_.setArg(arg++, c.coef_offs);
  plane_to_dct_.setArg(arg++, c.across);
  plane_to_dct_.setArg(arg++, c.down);
  plane_to_dct_.setArg(arg++, divisors_);
  plane_to_dct_.setArg(arg++, fast);
  std::vector<cl::Event> events(1);
  enqueue_components(runtime_, plane_to_dct_, dct, p.components, &events[0]);
  return events;
}

namespace {

// `buffer` of at least `bytes` (kept while large enough; grown by a quarter more than asked).
void ensure(const cl::Context& context, cl::Buffer& buffer, std::size_t& size, std::size_t bytes) {
  if (buffer() && size >= bytes) return;
  buffer = cl::Buffer();
  size = std::max<std::size_t>(bytes + bytes / 4, 64);
  buffer = cl::Buffer(context, CL_MEM_READ_WRITE, size);
}

// A range of one work-item a block in work-groups of SparseBlocks::kGroup.
void enqueue_groups(cl::CommandQueue& queue, cl::Kernel& kernel, std::size_t blocks) {
  const std::size_t group = SparseBlocks::kGroup;
  queue.enqueueNDRangeKernel(kernel, cl::NullRange,
                             cl::NDRange((blocks + group - 1) / group * group), cl::NDRange(group));
}

}  // namespace

void YCbCrConverter::upload_sparse(const DctBlocks& dct, const cl::Buffer& coef) {
  const SparseBlocks& s = dct.sparse;
  if (s.group_start.size() != s.groups() + 1 || s.values.size() != s.group_start.back())
    throw Error("upload_sparse: the sparse blocks are not whole");
  ensure_sparse_kernels();
  const cl::Context& context = runtime_.context();
  cl::CommandQueue& queue = runtime_.queue();
  const std::size_t mask_bytes = s.mask.size() * sizeof(std::uint64_t),
                    values_bytes = s.values.size() * sizeof(std::int16_t),
                    start_bytes = s.group_start.size() * sizeof(std::uint32_t);
  ensure(context, mask_, mask_bytes_, mask_bytes);
  ensure(context, values_, values_bytes_, values_bytes);
  ensure(context, group_start_, group_start_bytes_, start_bytes);
  // The last write blocks: on the in-order queue the host memory is read once it returns, so
  // an error later in the caller cannot leave a transfer reading freed memory.
  try {
    queue.enqueueWriteBuffer(mask_, CL_FALSE, 0, mask_bytes, s.mask.data());
    if (values_bytes) queue.enqueueWriteBuffer(values_, CL_FALSE, 0, values_bytes, s.values.data());
    queue.enqueueWriteBuffer(group_start_, CL_TRUE, 0, start_bytes, s.group_start.data());
  } catch (...) {
    finish_quietly(queue);
    throw;
  }
  int arg = 0;
  unpack_blocks_.setArg(arg++, mask_);
  unpack_blocks_.setArg(arg++, values_);
  unpack_blocks_.setArg(arg++, group_start_);
  unpack_blocks_.setArg(arg++, static_cast<cl_uint>(s.blocks()));
  unpack_blocks_.setArg(arg++, coef);
  enqueue_groups(queue, unpack_blocks_, s.blocks());
}

void YCbCrConverter::download_sparse(const cl::Buffer& coef, DctBlocks* dct) {
  SparseBlocks& s = dct->sparse;
  const std::size_t blocks = s.blocks(), groups = s.groups();
  if (s.group_start.size() != groups + 1)
    throw Error("download_sparse: the sparse blocks are not sized for the image");
  ensure_sparse_kernels();
  const cl::Context& context = runtime_.context();
  cl::CommandQueue& queue = runtime_.queue();
  ensure(context, mask_, mask_bytes_, blocks * sizeof(std::uint64_t));
  ensure(context, values_, values_bytes_, blocks * 64 * sizeof(std::int16_t));
  ensure(context, group_start_, group_start_bytes_, (groups + 1) * sizeof(std::uint32_t));
  ensure(context, group_count_, group_count_bytes_, groups * sizeof(std::uint32_t));
  int arg = 0;
  mask_blocks_.setArg(arg++, coef);
  mask_blocks_.setArg(arg++, static_cast<cl_uint>(blocks));
  mask_blocks_.setArg(arg++, mask_);
  mask_blocks_.setArg(arg++, group_count_);
  enqueue_groups(queue, mask_blocks_, blocks);
  arg = 0;
  scan_groups_.setArg(arg++, group_count_);
  scan_groups_.setArg(arg++, static_cast<cl_uint>(groups));
  scan_groups_.setArg(arg++, group_start_);
  queue.enqueueNDRangeKernel(scan_groups_, cl::NullRange, cl::NDRange(SparseBlocks::kGroup),
                             cl::NDRange(SparseBlocks::kGroup));
  arg = 0;
  pack_blocks_.setArg(arg++, coef);
  pack_blocks_.setArg(arg++, mask_);
  pack_blocks_.setArg(arg++, group_start_);
  pack_blocks_.setArg(arg++, static_cast<cl_uint>(blocks));
  pack_blocks_.setArg(arg++, values_);
  enqueue_groups(queue, pack_blocks_, blocks);
  try {
    queue.enqueueReadBuffer(mask_, CL_FALSE, 0, blocks * sizeof(std::uint64_t), s.mask.data());
    queue.enqueueReadBuffer(group_start_, CL_TRUE, 0, (groups + 1) * sizeof(std::uint32_t),
                            s.group_start.data());
  } catch (...) {  // no read left running into `dct`
    finish_quietly(queue);
    throw;
  }
  // The host unpacks by these counts: they must add up before it trusts them.
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t end = std::min(blocks, (g + 1) * SparseBlocks::kGroup);
    std::size_t n = 0;
    for (std::size_t b = g * SparseBlocks::kGroup; b < end; ++b)
      n += static_cast<std::size_t>(__builtin_popcountll(s.mask[b]));
    if (s.group_start[g + 1] < s.group_start[g] || s.group_start[g + 1] - s.group_start[g] != n)
      throw Error("download_sparse: the device's group starts do not match its masks");
  }
  const std::size_t count = s.group_start.back();
  if (count > blocks * 64)
    throw Error("download_sparse: the device counted more values than the blocks hold");
  s.resize_values(count);
  if (count)
    queue.enqueueReadBuffer(values_, CL_TRUE, 0, count * sizeof(std::int16_t), s.values.data());
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
std::vector<cl::Event> YCbCrConverter::enqueue_to_planes(cl::Kernel& kernel, const Src& src,
                                                         const YCbCrPlanes& p,
                                                         const cl::Buffer& planes) {
  const bool chroma = p.components == 3;
  int arg = 0;
  kernel.setArg(arg++, src);
  kernel.setArg(arg++, p.width);
  kernel.setArg(arg++, p.height);
  kernel.setArg(arg++, planes);
  kernel.setArg(arg++, static_cast<cl_int>(p.offset[0]));
  kernel.setArg(arg++, p.plane_width[0]);
  kernel.setArg(arg++, p.plane_height[0]);
  kernel.setArg(arg++, static_cast<cl_int>(chroma));
  kernel.setArg(arg++, static_cast<cl_int>(chroma ? p.offset[1] : 0));
  kernel.setArg(arg++, static_cast<cl_int>(chroma ? p.offset[2] : 0));
  kernel.setArg(arg++, chroma ? p.plane_width[1] : 0);
  kernel.setArg(arg++, chroma ? p.plane_height[1] : 0);
  kernel.setArg(arg++, p.h_factor);
  kernel.setArg(arg++, p.v_factor);
  kernel.setArg(arg++, p.chroma_height());
  // Over the larger of the planes in each direction (the kernel leaves out what lies past each).
  const int across = chroma ? std::max(p.plane_width[0], p.plane_width[1]) : p.plane_width[0];
  const int down = chroma ? std::max(p.plane_height[0], p.plane_height[1]) : p.plane_height[0];
  const cl::NDRange local = local_size_2d(kernel, runtime_.device().device);
  std::vector<cl::Event> events(1);
  runtime_.queue().enqueueNDRangeKernel(kernel, cl::NullRange, global_size_2d(across, down, local),
                                        local, nullptr, &events[0]);
  return events;
}

std::vector<cl::Event> YCbCrConverter::to_planes(const cl::Buffer& src, const YCbCrPlanes& layout,
                                                 const cl::Buffer& planes) {
  return enqueue_to_planes(to_planes_buffer_, src, layout, planes);
}

std::vector<cl::Event> YCbCrConverter::to_planes(const cl::Image2D& src, const YCbCrPlanes& layout,
                                                 const cl::Buffer& planes) {
  return enqueue_to_planes(to_planes_image_, src, layout, planes);
}

}  // namespace blurtool
