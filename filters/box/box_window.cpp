// Host side of the box schedules that read each window whole (kernels/box_window.cl): single
// and single-linear in one pass, double and double-linear in two through an intermediate image.
#include "filters/box/box_schedule.h"

namespace blurtool {

namespace {

class BoxWindow : public BoxTwoPass {
 public:
  using BoxTwoPass::BoxTwoPass;

  std::vector<std::string> kernel_names() override {
    switch (s_.params.variant) {
      case BoxVariant::single:
        return {"box_single"};
      case BoxVariant::single_linear:
        return {"box_single_linear"};
      case BoxVariant::double_pass:
        return {"box_rows_direct", "box_cols_direct"};
      default:
        return {"box_rows_linear", "box_cols_linear"};
    }
  }

  void prepare(const std::string& family, const std::string& options,
               std::vector<std::string>& names, std::vector<cl::Kernel> kernels) override {
    if (one_pass())
      BoxSchedule::prepare(family, options, names, std::move(kernels));
    else
      BoxTwoPass::prepare(family, options, names, std::move(kernels));
  }

  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override {
    const cl::Device& device = s_.runtime->device().device;
    std::vector<cl::Event> events(kernels_.size());
    if (one_pass()) {
      cl::Kernel& k = kernels_[0];
      k.setArg(0, src);
      k.setArg(1, dst);
      k.setArg(2, static_cast<cl_int>(s_.params.radius));
      k.setArg(3, static_cast<cl_int>(s_.params.edge));
      set_box_divisor(k, 4, box_scaling(s_.params.intermediate, s_.params.radius, false, 0).d,
                      s_.wide_sum);
    } else {
      set_pass_arguments(src, dst);
    }
    for (size_t i = 0; i < kernels_.size(); ++i) {
      const cl::NDRange local = local_size_2d(kernels_[i], device);
      s_.runtime->queue().enqueueNDRangeKernel(kernels_[i], cl::NullRange,
                                               global_size_2d(s_.width, s_.height, local), local,
                                               nullptr, &events[i]);
    }
    return events;
  }

 private:
  bool one_pass() const {
    return s_.params.variant == BoxVariant::single ||
           s_.params.variant == BoxVariant::single_linear;
  }
};

}  // namespace

std::unique_ptr<BoxSchedule> make_box_window(const BoxSetup& setup) {
  return std::make_unique<BoxWindow>(setup);
}

}  // namespace blurtool
