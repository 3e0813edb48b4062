// The host side of the box filter's schedules, one small class per schedule family, and the
// table that names them: BoxFilter (box_blur.h) looks a variant up in box_schedule_table() and
// leaves choosing its kernels, their -D options, their scratch memory and their launch to the
// row's class. A new schedule adds its kernel to a kernels/box_<family>.cl file, its class (or
// a case of one) to the family's host file here, and one row to the table (box_schedule.cpp).
// Internal to filters/box: the rest of the project includes box_blur.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"

namespace blurtool {

/// What a box schedule is made for: the parameters with `auto` resolved (BoxFilter fills the
/// default segment and unroll of the default parameter table, filters/schedule_table.h, where
/// the user gave none; `fused` takes its work-group from it), the image size in pixels, the pixel
/// depth, and whether the window sums need 64 bits (kernels/box_common.cl WIDE_SUM).
struct BoxSetup {
  Runtime* runtime = nullptr;
  BoxParams params;
  int width = 0, height = 0;
  PixelDepth depth = PixelDepth::u8;
  bool wide_sum = false;
};

/// One box schedule built for one device, image size and depth. The filter calls, in order:
/// kernel_names() and options() to build the program, prepare() with the built kernels, then
/// enqueue() or enqueue_buffers() for every image.
class BoxSchedule {
 public:
  explicit BoxSchedule(const BoxSetup& setup) : s_(setup) {}
  virtual ~BoxSchedule() = default;

  /// The kernels, in pass order.
  virtual std::vector<std::string> kernel_names() = 0;
  /// -D options beyond the ones every box kernel takes (pixel depth, WIDE_SUM).
  virtual std::string options() { return ""; }
  /// Takes the built kernels (one a name, in order); checks the limits that need them and
  /// makes the schedule's own device memory. May replace a kernel by another of `family`
  /// (names[i] then says which). Throws blurtool::UsageError for a --wg or --segment the
  /// device cannot run, blurtool::Error for other device limits.
  virtual void prepare(const std::string& family, const std::string& options,
                       std::vector<std::string>& names, std::vector<cl::Kernel> kernels);
  /// Whether it runs on RGBA buffers (Filter::takes_buffers).
  virtual bool takes_buffers() const { return false; }
  /// Enqueues every pass on images (or buffers); one profiling event a pass.
  virtual std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst);
  virtual std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst);
  /// What describe() adds after "box r=R variant": the schedule's own shape.
  virtual std::string describe() const { return ""; }

  const BoxParams& params() const { return s_.params; }

 protected:
  BoxSetup s_;
  std::vector<cl::Kernel> kernels_;
};

/// One row of the table: a variant, its --variant name and one-line help, the kernel family
/// that holds its kernels (kernels/<family>.cl), its shape, its defaults and its class.
struct BoxScheduleRow {
  BoxVariant variant;
  const char* name;
  const char* help;
  const char* family;
  bool two_pass;  ///< through an intermediate image (--intermediate)
  std::unique_ptr<BoxSchedule> (*make)(const BoxSetup&);
};

/// Every schedule of the box filter, in --variant order (`auto` is not one).
const std::vector<BoxScheduleRow>& box_schedule_table();

/// The row of `variant`. Throws blurtool::Error for automatic (resolve it first).
const BoxScheduleRow& box_schedule_row(BoxVariant variant);

/// The families' classes (box_window.cpp, box_running.cpp, box_buffer.cpp).
std::unique_ptr<BoxSchedule> make_box_window(const BoxSetup& setup);
std::unique_ptr<BoxSchedule> make_box_running(const BoxSetup& setup);
std::unique_ptr<BoxSchedule> make_box_tiled(const BoxSetup& setup);
std::unique_ptr<BoxSchedule> make_box_fused(const BoxSetup& setup);

// Shared by the families.

/// Whether the window sums need 64 bits (kernels/box_common.cl WIDE_SUM): 32-bit sums and
/// exact_mean() need (M + 1) D < 2^32 for every divisor D, which is at most the larger of
/// (2R+1)^2 and 256 (2R+1): up to R = 2047 at 8 bits, R = 127 at 16.
bool box_wide_sum(int radius, PixelDepth depth);

/// How a two-pass schedule's intermediate image stores the row sums, and how its column pass
/// turns them back into exact integers (see the header of kernels/box_common.cl).
struct BoxScaling {
  float hscale;          ///< intermediate value = row sum * hscale
  float qscale;          ///< integer read back = rint(intermediate value * qscale)
  unsigned long long d;  ///< result = (column sum of integers + d/2) / d
};

/// The scaling of `format` at `radius`; `max` is the largest sample value (255 or 65535).
/// One-pass schedules divide by (2R+1)^2 and scale nothing.
BoxScaling box_scaling(Intermediate format, int radius, bool two_pass, float max);

/// Sets kernel argument `index` to the divisor d: 64-bit with WIDE_SUM kernels, else 32-bit.
void set_box_divisor(cl::Kernel& kernel, cl_uint index, unsigned long long d, bool wide_sum);

/// A schedule of two passes through an intermediate image (--intermediate): makes the image
/// and sets the arguments both passes share (src/intermediate/dst, radius, edge, scaling).
class BoxTwoPass : public BoxSchedule {
 public:
  using BoxSchedule::BoxSchedule;
  void prepare(const std::string& family, const std::string& options,
               std::vector<std::string>& names, std::vector<cl::Kernel> kernels) override;

 protected:
  /// Sets the shared arguments of kernels_[0] (rows) and kernels_[1] (columns).
  void set_pass_arguments(const cl::Image2D& src, const cl::Image2D& dst);
  cl::Image2D intermediate_;
};

}  // namespace blurtool
