// Host side of the Gaussian schedules on images (kernels/gauss_window.cl): naive and
// naive-local in one pass, separable, separable-linear and separable-local in two through an
// intermediate image, fused-local in one pass with both passes in local memory.
#include "filters/gauss/gauss_schedule.h"
#include "filters/gauss/gauss_weights.h"
#include "util/error.h"

namespace blurtool {

namespace {

class GaussWindow : public GaussSchedule {
 public:
  explicit GaussWindow(const GaussSetup& setup)
      : GaussSchedule(setup), row_(gauss_schedule_row(setup.params.variant)) {
    WorkGroup& wg = s_.params.wg;
    if (wg.is_default()) {
      wg = row_.row_work_group ? WorkGroup{64, 1} : WorkGroup{16, 16};
    } else if (row_.row_work_group && wg.y != 1) {
      throw UsageError(parameter("wg") + " " + wg.text() +
                       ": variant separable-local takes Gx1 (rows in " +
                       "Gx1 work-groups, columns in 1xG)");
    }
    if (s_.params.variant == GaussVariant::separable_linear) {
      std::vector<cl_float4> packed;
      for (const LinearTap& t : gauss_linear_taps(gauss_weights(s_.params.sigma, radius())))
        packed.push_back({{static_cast<float>(t.lo), t.t, t.weight, 0.0f}});
      taps_ = static_cast<cl_int>(packed.size());
      weights_ = cl::Buffer(s_.runtime->context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            packed.size() * sizeof(cl_float4), packed.data());
    } else {
      upload_weights();
    }
    const size_t wx = wg.x, wy = wg.y, r2 = 2 * static_cast<size_t>(radius());
    const size_t px = pixel_bytes(s_.depth);  // a staged tile keeps the input's samples
    switch (s_.params.variant) {
      case GaussVariant::naive_local:
        local_bytes_ = {(wx + r2) * (wy + r2) * px};
        break;
      case GaussVariant::separable_local:
        local_bytes_ = {(wx + r2) * 16};
        break;
      case GaussVariant::fused_local:
        local_bytes_ = {(wx + r2) * (wy + r2) * px, (wy + r2) * wx * 16};
        break;
      default:
        break;
    }
  }

  std::vector<std::string> kernel_names() override {
    switch (s_.params.variant) {
      case GaussVariant::naive:
        return {"gauss_naive"};
      case GaussVariant::naive_local:
        return {"gauss_naive_local"};
      case GaussVariant::separable:
        return {"gauss_rows", "gauss_cols"};
      case GaussVariant::separable_linear:
        return {"gauss_rows_linear", "gauss_cols_linear"};
      case GaussVariant::separable_local:
        return {"gauss_rows_local", "gauss_cols_local"};
      default:
        return {"gauss_fused_local"};
    }
  }

  std::uint64_t intermediate_pixel_bytes() const override {
    return row_.two_pass ? blurtool::intermediate_bytes(s_.params.intermediate) : 0;
  }

  bool takes_buffers() const override { return false; }

  void prepare(std::vector<cl::Kernel> kernels) override {
    GaussSchedule::prepare(std::move(kernels));
    size_t local_total = 0;
    for (size_t b : local_bytes_) local_total += b;
    const size_t wx = s_.params.wg.x, wy = s_.params.wg.y;
    for (size_t i = 0; i < kernels_.size(); ++i) {
      // Row segments: rows run Gx1, columns 1xG.
      const bool transposed = row_.row_work_group && i == 1;
      check_work_group(kernels_[i], transposed ? 1 : wx, transposed ? wx : wy, local_total);
    }
    if (row_.two_pass)
      intermediate_ = make_image(*s_.runtime, s_.width, s_.height,
                                 intermediate_channel_type(s_.params.intermediate));
  }

  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override {
    const bool two_pass = row_.two_pass;
    const cl_int edge = static_cast<cl_int>(s_.params.edge);
    const size_t wx = s_.params.wg.x, wy = s_.params.wg.y;
    std::vector<cl::Event> events(kernels_.size());
    for (size_t i = 0; i < kernels_.size(); ++i) {
      cl::Kernel& k = kernels_[i];
      k.setArg(0, two_pass && i == 1 ? intermediate_ : src);
      k.setArg(1, two_pass && i == 0 ? intermediate_ : dst);
      k.setArg(2, s_.params.variant == GaussVariant::separable_linear
                      ? taps_
                      : static_cast<cl_int>(radius()));
      k.setArg(3, edge);
      k.setArg(4, weights_);
      for (size_t a = 0; a < local_bytes_.size(); ++a)
        k.setArg(static_cast<cl_uint>(5 + a), cl::Local(local_bytes_[a]));
      const cl::NDRange local =
          row_.row_work_group && i == 1 ? cl::NDRange(1, wx) : cl::NDRange(wx, wy);
      const cl::NDRange global(round_up(s_.width, local[0]), round_up(s_.height, local[1]));
      s_.runtime->queue().enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr,
                                               &events[i]);
    }
    return events;
  }

  std::string describe() const override {
    std::string text;
    if (row_.two_pass)
      text += std::string(" ") + name_of(intermediate_table(), s_.params.intermediate);
    return text + " wg=" + s_.params.wg.text();
  }

 private:
  const GaussScheduleRow& row_;
  std::vector<size_t> local_bytes_;  // per local array argument, in order
  cl_int taps_ = 0;                  // separable-linear: fetches a pass
  cl::Image2D intermediate_;
};

}  // namespace

std::unique_ptr<GaussSchedule> make_gauss_window(const GaussSetup& setup) {
  return std::make_unique<GaussWindow>(setup);
}

}  // namespace blurtool
