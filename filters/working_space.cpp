// Working-space conversions on the host (the reference) and on the device (see
// working_space.h and kernels/working_space.cl).
#include "filters/working_space.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace blurtool {

namespace {

// kernels/working_space.cl
constexpr int kWorkingLinear = 1, kWorkingPremultiply = 2, kWorkingAlpha8 = 4;

int flags_of(WorkingSpace space) {
  return (space.linear_light ? kWorkingLinear : 0) |
         (space.premultiplied ? kWorkingPremultiply : 0) |
         (space.eight_bit_alpha ? kWorkingAlpha8 : 0);
}

std::vector<std::uint16_t> table_of(double (*curve)(double)) {
  std::vector<std::uint16_t> table(65536);
  for (int v = 0; v < 65536; ++v)
    table[v] = static_cast<std::uint16_t>(std::lround(65535.0 * curve(v / 65535.0)));
  return table;
}

double srgb_to_linear(double v) {
  return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
}

double linear_to_srgb(double l) {
  return l <= 0.0031308 ? 12.92 * l : 1.055 * std::pow(l, 1.0 / 2.4) - 0.055;
}

// Applies `convert` to every RGBA16 pixel of `rgba` (as four 32-bit channels).
template <typename Convert>
Image16 convert_pixels(const Image16& rgba, Convert convert) {
  if (rgba.channels != 4) throw Error("working space: expected an RGBA image");
  Image16 out = rgba;
  for (size_t i = 0; i < out.pixels.size(); i += 4) {
    std::uint32_t c[4] = {out.pixels[i], out.pixels[i + 1], out.pixels[i + 2], out.pixels[i + 3]};
    convert(c);
    for (int k = 0; k < 4; ++k) out.pixels[i + k] = static_cast<std::uint16_t>(c[k]);
  }
  return out;
}

cl::Buffer table_buffer(Runtime& runtime, const std::vector<std::uint16_t>& table) {
  return cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                    table.size() * sizeof(table[0]), const_cast<std::uint16_t*>(table.data()));
}

}  // namespace

std::string WorkingSpace::text() const {
  if (linear_light && premultiplied) return "linear-light premultiplied";
  return linear_light ? "linear-light" : premultiplied ? "premultiplied" : "";
}

const std::vector<std::uint16_t>& srgb_to_linear_table() {
  static const std::vector<std::uint16_t> table = table_of(srgb_to_linear);
  return table;
}

const std::vector<std::uint16_t>& linear_to_srgb_table() {
  static const std::vector<std::uint16_t> table = table_of(linear_to_srgb);
  return table;
}

Image16 to_working_space(const Image16& rgba, WorkingSpace space) {
  const auto& lut = srgb_to_linear_table();
  return convert_pixels(rgba, [&](std::uint32_t* c) {
    for (int k = 0; k < 3; ++k) {
      if (space.linear_light) c[k] = lut[c[k]];
      if (space.premultiplied) c[k] = (c[k] * c[3] + 32767u) / 65535u;
    }
  });
}

Image16 from_working_space(const Image16& rgba, WorkingSpace space) {
  const auto& lut = linear_to_srgb_table();
  return convert_pixels(rgba, [&](std::uint32_t* c) {
    if (space.eight_bit_alpha && c[3] <= 128u) c[3] = 0;
    for (int k = 0; k < 3; ++k) {
      if (space.premultiplied)
        c[k] = c[3] == 0 ? 0 : std::min((c[k] * 65535u + c[3] / 2) / c[3], 65535u);
      if (space.linear_light) c[k] = lut[c[k]];
    }
  });
}

WorkingSpaceFilter::WorkingSpaceFilter(Runtime& runtime, std::shared_ptr<Filter> inner,
                                       WorkingSpace space, int width, int height, PixelDepth stored)
    : runtime_(runtime), inner_(std::move(inner)), space_(space), width_(width), height_(height) {
  if (inner_->depth() != PixelDepth::u16)
    throw Error("working space: schedule '" + inner_->describe() + "' is not built for 16 bits");
  depth_ = stored;
  const bool narrow = stored == PixelDepth::u8;
  const std::string prepare = narrow ? "working_space_prepare8" : "working_space_prepare";
  const std::string finish = narrow ? "working_space_finish8" : "working_space_finish";
  // One program for both: each program costs PoCL a compiler front end of its own.
  std::vector<cl::Kernel> kernels = runtime.kernels("working_space", {prepare, finish}, "");
  prepare_ = kernels[0];
  finish_ = kernels[1];
  to_linear_ = table_buffer(runtime, srgb_to_linear_table());
  to_srgb_ = table_buffer(runtime, linear_to_srgb_table());
  const std::uint64_t pixels = static_cast<std::uint64_t>(width) * height;
  const std::uint64_t bytes = pixels * 8, stored_bytes = pixels * pixel_bytes(stored);
  work_a_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, bytes);
  passes_.push_back({prepare, stored_bytes + bytes});
  if (inner_->takes_buffers()) {
    work_b_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, bytes);
  } else {
    image_a_ = make_image(runtime, width, height, CL_UNORM_INT16);
    image_b_ = make_image(runtime, width, height, CL_UNORM_INT16);
    passes_.push_back({"copy buffer to image", 2 * bytes});
  }
  for (const PassInfo& pass : inner_->passes()) passes_.push_back(pass);
  if (!inner_->takes_buffers()) passes_.push_back({"copy image to buffer", 2 * bytes});
  passes_.push_back({finish, bytes + stored_bytes});
}

std::uint64_t WorkingSpaceFilter::compulsory_bytes() const {
  // The inner filter's, at the stored form's bytes a pixel instead of 8.
  return inner_->compulsory_bytes() / 8 * pixel_bytes(depth_);
}

std::string WorkingSpaceFilter::describe() const {
  return inner_->describe() + (space_.is_stored_form() ? "" : " " + space_.text());
}

std::vector<cl::Event> WorkingSpaceFilter::enqueue(const cl::Image2D&, const cl::Image2D&) {
  throw Error("schedule '" + describe() + "' runs on buffers, not images");
}

std::vector<cl::Event> WorkingSpaceFilter::enqueue_buffers(const cl::Buffer& src,
                                                           const cl::Buffer& dst) {
  cl::CommandQueue& queue = runtime_.queue();
  const cl_uint n = static_cast<cl_uint>(static_cast<std::uint64_t>(width_) * height_);
  const cl::NDRange global(round_up(n, 64));
  auto convert = [&](cl::Kernel& k, const cl::Buffer& in, const cl::Buffer& out,
                     const cl::Buffer& table) {
    k.setArg(0, in);
    k.setArg(1, out);
    k.setArg(2, n);
    k.setArg(3, table);
    k.setArg(4, static_cast<cl_int>(flags_of(space_)));
    cl::Event event;
    queue.enqueueNDRangeKernel(k, cl::NullRange, global, cl::NullRange, nullptr, &event);
    return event;
  };
  std::vector<cl::Event> events;
  events.push_back(convert(prepare_, src, work_a_, to_linear_));
  std::vector<cl::Event> inner;
  if (inner_->takes_buffers()) {
    inner = inner_->enqueue_buffers(work_a_, work_b_);
    events.insert(events.end(), inner.begin(), inner.end());
    events.push_back(convert(finish_, work_b_, dst, to_srgb_));
    return events;
  }
  const cl::array<size_t, 3> origin = {0, 0, 0};
  const cl::array<size_t, 3> region = {static_cast<size_t>(width_), static_cast<size_t>(height_),
                                       1};
  cl::Event in_copy, out_copy;
  queue.enqueueCopyBufferToImage(work_a_, image_a_, 0, origin, region, nullptr, &in_copy);
  events.push_back(in_copy);
  inner = inner_->enqueue(image_a_, image_b_);
  events.insert(events.end(), inner.begin(), inner.end());
  queue.enqueueCopyImageToBuffer(image_b_, work_a_, origin, region, 0, nullptr, &out_copy);
  events.push_back(out_copy);
  events.push_back(convert(finish_, work_a_, dst, to_srgb_));
  return events;
}

}  // namespace blurtool
