// The host side of the Gaussian's schedules, one small class per schedule family, and the
// table that names them: GaussFilter (gauss_blur.h) looks a variant up in
// gauss_schedule_table() and leaves its work-group, kernels, -D options, memory and launch to
// the row's class. A new schedule adds its kernel to a kernels/gauss_<family>.cl file, its class
// (or a case of one) to the family's host file here, and one row to the table
// (gauss_schedule.cpp). Internal to filters/gauss: the rest of the project includes
// gauss_blur.h.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "filters/gauss/gauss_blur.h"

namespace blurtool {

/// What a Gaussian schedule is made for: the parameters with `auto` and the radius resolved,
/// the image size in pixels and the pixel depth.
struct GaussSetup {
  Runtime* runtime = nullptr;
  GaussParams params;
  int width = 0, height = 0;
  PixelDepth depth = PixelDepth::u8;
};

/// One Gaussian schedule built for one device, image size and depth. Its constructor settles
/// the work-group (a default, or a check of --wg's shape) and the checks that need no kernel;
/// the filter then calls kernel_names() and options() to build the program, prepare() with the
/// built kernels, and enqueue() or enqueue_buffers() for every image.
class GaussSchedule {
 public:
  explicit GaussSchedule(const GaussSetup& setup) : s_(setup) {}
  virtual ~GaussSchedule() = default;

  /// The kernels, in pass order.
  virtual std::vector<std::string> kernel_names() = 0;
  /// -D options beyond the pixel depth's.
  virtual std::string options() { return ""; }
  /// Bytes a pixel of the intermediate between two passes (0 for one pass).
  virtual std::uint64_t intermediate_pixel_bytes() const { return 0; }
  /// Takes the built kernels (one a name, in order); checks the work-groups against them and
  /// makes the schedule's own device memory. Throws blurtool::UsageError naming --wg or the
  /// radius at fault.
  virtual void prepare(std::vector<cl::Kernel> kernels) { kernels_ = std::move(kernels); }
  /// Whether it runs on RGBA buffers (Filter::takes_buffers).
  virtual bool takes_buffers() const { return true; }
  /// Enqueues every pass on images (or buffers); one profiling event a pass.
  virtual std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst);
  virtual std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst);
  /// What describe() says between the variant's name and the edge mode: the schedule's shape.
  virtual std::string describe() const = 0;
  /// The buffers' pixel (0, 0) in the image, for a schedule whose output depends on it
  /// (Filter::set_origin); the others ignore it.
  virtual void set_origin(int x, int y) {
    (void)x;
    (void)y;
  }
  /// The passes enqueue_buffers() launches, one a profiling event, with the bytes each moves
  /// (`pixel_bytes`: bytes an input or output pixel). The default: one a kernel name; one pass
  /// moves the input and the output, of two each moves one of them and the intermediate.
  virtual std::vector<PassInfo> pass_infos(std::uint64_t pixel_bytes);

  const GaussParams& params() const { return s_.params; }

 protected:
  int radius() const { return s_.params.radius; }
  /// Uploads the 2R+1 weights (gauss_weights) as floats into weights_; returns their sum in
  /// float arithmetic.
  float upload_weights();
  /// kernels_[0] (src -> dst) with (in, out, width, height, edge, weights), last_arg(kernel) for
  /// argument 6, one Gx1 work-group a tile of tile_w columns by `rows` rows.
  std::vector<cl::Event> enqueue_tile_pass(const cl::Buffer& src, const cl::Buffer& dst,
                                           size_t tile_w, size_t rows,
                                           const std::function<void(cl::Kernel&)>& last_arg);
  /// kernels_[0] (src -> mid_), then kernels_[1] (mid_ -> dst), each with (in, out, width,
  /// height, edge, weights), more_args(pass, kernel) for the rest, over global[pass] in Gx1.
  std::vector<cl::Event> enqueue_buffer_passes(
      const cl::Buffer& src, const cl::Buffer& dst, const cl::NDRange (&global)[2],
      const std::function<void(size_t, cl::Kernel&)>& more_args);
  /// Refuses a work-group of x by y work-items with `local_bytes` of local arguments that
  /// `kernel` or the device cannot run, naming the limit.
  void check_work_group(const cl::Kernel& kernel, size_t x, size_t y, size_t local_bytes) const;
  /// The variant's --variant name.
  std::string variant_name() const;

  GaussSetup s_;
  std::vector<cl::Kernel> kernels_;
  cl::Buffer weights_;
  cl::Buffer mid_;  // two passes over buffers: the first pass's results
};

/// One row of the table: a variant, its --variant name and one-line help, the kernel family
/// that holds its kernels (kernels/<family>.cl), whether it has two passes through an
/// intermediate image (--intermediate), whether its work-group is a row segment (--wg Gx1),
/// and its class.
struct GaussScheduleRow {
  GaussVariant variant;
  const char* name;
  const char* help;
  const char* family;
  bool two_pass;
  bool row_work_group;
  std::unique_ptr<GaussSchedule> (*make)(const GaussSetup&);
};

/// Every schedule of the Gaussian, in --variant order (`auto` is not one).
const std::vector<GaussScheduleRow>& gauss_schedule_table();

/// The row of `variant`. Throws blurtool::Error for automatic (resolve it first).
const GaussScheduleRow& gauss_schedule_row(GaussVariant variant);

/// The families' classes (gauss_window.cpp, gauss_buffer.cpp, gauss_mma.cpp).
std::unique_ptr<GaussSchedule> make_gauss_window(const GaussSetup& setup);
std::unique_ptr<GaussSchedule> make_gauss_tiled(const GaussSetup& setup);
std::unique_ptr<GaussSchedule> make_gauss_fused(const GaussSetup& setup);
std::unique_ptr<GaussSchedule> make_gauss_separable_buffer(const GaussSetup& setup);
std::unique_ptr<GaussSchedule> make_gauss_mma(const GaussSetup& setup);
/// The fast method's schedule (gauss_cascade.cpp, kernels/gauss_cascade.cl): no row of the
/// table, since --variant names the exact method's schedules.
std::unique_ptr<GaussSchedule> make_gauss_cascade(const GaussSetup& setup);
/// The pyramid method's schedule (gauss_pyramid.cpp, kernels/gauss_pyramid.cl).
std::unique_ptr<GaussSchedule> make_gauss_pyramid(const GaussSetup& setup);

}  // namespace blurtool
