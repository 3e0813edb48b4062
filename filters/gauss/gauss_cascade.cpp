// Host side of the Gaussian's fast method, the extended box cascade (kernels/gauss_cascade.cl):
// rows into a float4 intermediate, then columns, each pass one walk a line segment with all of
// its boxes fused, keeping earlier boxes' results in rings (CPUs) or computing them again from
// streams of the input (GPUs).
#include <algorithm>
#include <cstdio>

#include "filters/gauss/gauss_schedule.h"
#include "filters/gauss/gauss_weights.h"

namespace blurtool {

namespace {

class CascadeSchedule : public GaussSchedule {
 public:
  explicit CascadeSchedule(const GaussSetup& setup)
      : GaussSchedule(setup), cascade_(gauss_box_cascade(setup.params.sigma)) {
    const DeviceInfo& device = setup.runtime->device();
    const bool gpu = device.type & CL_DEVICE_TYPE_GPU;
    streams_ = cascade_.boxes == 3 && (setup.params.cascade == CascadeWalk::streams ||
                                       (setup.params.cascade == CascadeWalk::automatic && gpu));
    // A CPU has few cores: one walk a whole line, no restarts. A GPU needs work-items: lines
    // cut into segments, for the streams walk 16 (r + 1) positions within [kGaussFastGpuSegment,
    // 4 kGaussFastGpuSegment]: long enough that a restart's 6r + 2 warm-up steps cost less than
    // the segment, short enough to leave walks for every core (rings: 512 whatever sigma, since
    // their memory grows with the walks; both measured in docs/notes/gauss.md, "segments of 512"
    // and "the streams walk").
    if (!gpu && !streams_) cols_ = 16;
    if (setup.params.segment > 0)
      segment_ = setup.params.segment;
    else if (gpu)
      segment_ = streams_ ? std::clamp(16 * (cascade_.radius + 1), kGaussFastGpuSegment,
                                       4 * kGaussFastGpuSegment)
                          : kGaussFastGpuSegment;
  }

  std::vector<std::string> kernel_names() override {
    if (streams_) return {"gauss_cascade_rows_streams", "gauss_cascade_cols_streams"};
    return {"gauss_cascade_rows", "gauss_cascade_cols"};
  }
  std::string options() override {
    // CPUs: each walk's rings contiguous (a core walks its lines alone; neighbouring walks'
    // slots would share no cache line).
    const bool gpu = s_.runtime->device().type & CL_DEVICE_TYPE_GPU;
    return " -DCASCADE_K=" + std::to_string(cascade_.boxes) +
           " -DCASCADE_COLS=" + std::to_string(cols_) + (gpu ? "" : " -DCASCADE_RING_WALK_MAJOR");
  }
  std::uint64_t intermediate_pixel_bytes() const override { return 16; }

  void prepare(std::vector<cl::Kernel> kernels) override {
    kernels_ = std::move(kernels);
    cl::Context context = s_.runtime->context();
    const size_t pixels = static_cast<size_t>(s_.width) * s_.height;
    mid_ = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * pixels);
    if (streams_) return;
    // The rings of both passes (one at a time): (K - 1)(2r + 3) float4 a walk.
    const size_t walks = std::max(static_cast<size_t>(s_.height) * segments(s_.width),
                                  column_walks() * cols_ * segments(s_.height));
    const size_t ring = static_cast<size_t>(cascade_.boxes - 1) * (2 * cascade_.radius + 3);
    ring_ = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * std::max<size_t>(1, ring * walks));
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    const double l = 2 * cascade_.radius + 1 + 2 * cascade_.alpha;
    std::vector<cl::Event> events(2);
    for (size_t i = 0; i < 2; ++i) {
      cl::Kernel& k = kernels_[i];
      k.setArg(0, i == 0 ? src : mid_);
      k.setArg(1, i == 0 ? mid_ : dst);
      k.setArg(2, static_cast<cl_int>(s_.width));
      k.setArg(3, static_cast<cl_int>(s_.height));
      k.setArg(4, static_cast<cl_int>(s_.params.edge));
      k.setArg(5, static_cast<cl_int>(cascade_.radius));
      k.setArg(6, static_cast<cl_float>(cascade_.alpha));
      k.setArg(7, static_cast<cl_float>(1.0 / l));
      const cl_int segment = std::min(segment_, i == 0 ? s_.width : s_.height);
      cl::NDRange global = i == 0 ? cl::NDRange(s_.height, segments(s_.width))
                                  : cl::NDRange(column_walks(), segments(s_.height));
      // CPUs: a work-group a walk, so that the walks spread over the cores (a work-group runs
      // on one); GPUs: the driver's choice.
      cl::NDRange local = cols_ > 1 ? cl::NDRange(1, 1) : cl::NullRange;
      if (streams_) {
        k.setArg(8, segment);
        // A work-item a channel of a line segment.
        global = i == 0 ? cl::NDRange(4 * static_cast<size_t>(s_.height), segments(s_.width))
                        : cl::NDRange(4 * static_cast<size_t>(s_.width), segments(s_.height));
      } else {
        k.setArg(8, ring_);
        k.setArg(9, segment);
      }
      s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr,
                                               &events[i]);
    }
    return events;
  }

  std::string describe() const override {
    char text[96];
    std::snprintf(text, sizeof text, " box-cascade K=%d r=%d alpha=%.4f reach=%d %s",
                  cascade_.boxes, cascade_.radius, cascade_.alpha, cascade_.reach(),
                  streams_ ? "streams" : "rings");
    return text;
  }

 private:
  // Work-items across the columns pass: CASCADE_COLS columns each.
  size_t column_walks() const { return (static_cast<size_t>(s_.width) + cols_ - 1) / cols_; }

  // Segments of a line of n positions.
  size_t segments(int n) const {
    const int seg = std::min(segment_, n);
    return static_cast<size_t>((n + seg - 1) / seg);
  }

  BoxCascade cascade_;
  bool streams_ = false;   // the streams walk (CascadeWalk)
  int segment_ = 1 << 30;  // positions a work-item walks
  // Columns a work-item of the columns pass walks side by side (kernels/gauss_cascade.cl,
  // CASCADE_COLS): 16 on CPUs (whole cache lines of the float4 intermediate), 1 on GPUs.
  int cols_ = 1;
  cl::Buffer ring_;
};

}  // namespace

std::unique_ptr<GaussSchedule> make_gauss_cascade(const GaussSetup& setup) {
  return std::make_unique<CascadeSchedule>(setup);
}

}  // namespace blurtool
