// Bright-point extraction on an OpenCL device (../shared/reference/003, lens flares): the pixel
// of highest Rec. 709 luminance in every BxB block, reported when it exceeds a threshold, with
// every reduction strategy the write-up tried plus tree and sub-group ones; and the glow that
// draws the points onto the image. bright_points_reference() defines the meaning.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cl_runtime.h"
#include "core/filter.h"
#include "core/image_io.h"
#include "core/named.h"
#include "core/tiled_run.h"

namespace blurtool {

/// Reduction strategies (--variant). See kernels/bright.cl for what each costs.
enum class BrightVariant { automatic, serial, per_thread, tree, hybrid, subgroup, buffer };

/// Name table: auto, serial, per-thread, tree, hybrid, subgroup, buffer.
const std::vector<Named<BrightVariant>>& bright_variant_table();

/// Largest block side: keys hold the raster index in 10 bits.
constexpr int kMaxBrightBlock = 32;

/// What to find and how.
struct BrightParams {
  double threshold = 0.5;  ///< luminance in [0, 1]; a point is reported when L > threshold
  int block = 8;           ///< B, pixels, 1..32
  int per_item = 2;        ///< K of `hybrid`: pixels per work-item are KxK, 1..B
  BrightVariant variant = BrightVariant::automatic;
};

/// One point found: its position (pixels), colour (8-bit RGB) and luminance in [0, 1].
struct BrightPoint {
  int x = 0, y = 0;
  std::uint8_t r = 0, g = 0, b = 0;
  std::uint32_t luminance_units = 0;  ///< 2126 R + 7152 G + 722 B; luminance = this / 2550000
  double luminance() const { return luminance_units / 2550000.0; }
  bool operator==(const BrightPoint& o) const {
    return x == o.x && y == o.y && r == o.r && g == o.g && b == o.b &&
           luminance_units == o.luminance_units;
  }
};

/// Sorts points by (y, x), the output order, which must not depend on the order in which
/// work-groups finish.
void sort_points(std::vector<BrightPoint>& points);

/// Checks ranges. Throws blurtool::UsageError naming --bright, --block or --per-item.
void validate(const BrightParams& params);

/// The threshold in luminance units: a pixel is reported when its units exceed this
/// (floor(T * 2550000), so "L > T" is decided exactly in integers).
std::uint32_t bright_threshold_units(double threshold);

/// The reference: for every BxB block of `image` (1-4 channels, as to_rgba() expands them;
/// blocks at the right and bottom edges are partial and count only their real pixels), the
/// pixel of highest luminance L = 0.2126 R + 0.7152 G + 0.0722 B (8-bit values scaled to
/// [0, 1]), the first in raster order within the block on ties, when L > threshold; sorted by
/// (y, x).
std::vector<BrightPoint> bright_points_reference(const Image& image, const BrightParams& params);

/// A bright-point schedule for `width` x `height` RGBA8 images on one device. enqueue() ignores
/// `dst`: the points stay on the device until points() reads them back.
/// Throws blurtool::UsageError for invalid parameters or a block the device cannot run as one
/// work-group (naming CL_KERNEL_WORK_GROUP_SIZE), or for `subgroup` on a device without
/// sub-groups (naming cl_khr_subgroups); blurtool::Error / cl::Error as the other filters.
class BrightFinder : public Filter {
 public:
  BrightFinder(Runtime& runtime, const BrightParams& params, int width, int height);

  std::string describe() const override;
  const std::vector<PassInfo>& passes() const override { return passes_; }
  /// The image read once: 4 bytes a pixel (the points written are negligible).
  std::uint64_t compulsory_bytes() const override { return 4ULL * width_ * height_; }
  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override;
  bool takes_buffers() const override { return params_.variant == BrightVariant::buffer; }
  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override;

  /// The points of the last enqueue(), sorted by (y, x) (waits for the queue).
  std::vector<BrightPoint> points();

  const BrightParams& params() const { return params_; }

 private:
  /// Resets the point counter and runs the kernel, its arguments set.
  std::vector<cl::Event> launch();

  Runtime& runtime_;
  BrightParams params_;
  int width_, height_, blocks_x_, blocks_y_;
  std::vector<PassInfo> passes_;
  cl::Kernel kernel_;
  cl::NDRange global_, local_;
  size_t local_bytes_ = 0;
  cl::Buffer count_, points_;
};

/// Finds the bright points of RGBA8 host image `rgba` on the runtime's device.
std::vector<BrightPoint> find_bright_points(Runtime& runtime, const Image& rgba,
                                            const BrightParams& params);

/// The image with a soft additive glow drawn on the device around every point (the colour of
/// the point, falling off as a Gaussian of sigma 0.75 B pixels, stronger the further the point
/// exceeds the threshold), so a person can see what was found. `rgba` is RGBA8; the result too.
Image draw_glow(Runtime& runtime, const Image& rgba, const std::vector<BrightPoint>& points,
                const BrightParams& params);

/// Pixels of context the glow of draw_glow reads around a tile: its reach, ceil(3 sigma / B)
/// blocks of B pixels (sigma 0.75 B), a multiple of B.
int bright_glow_halo(const BrightParams& params);

/// find_bright_points over output tiles of `tile` pixels (sides multiples of the block side B,
/// so that every tile holds whole blocks of the image's grid): the same points, sorted by
/// (y, x), for images larger than the device holds. Throws blurtool::Error if a side is not a
/// multiple of B, and what find_bright_points throws.
std::vector<BrightPoint> find_bright_points_tiled(Runtime& runtime, const Image& rgba,
                                                  const BrightParams& params, TileSize tile);

/// draw_glow over output tiles of `tile` pixels (multiples of B), each read with
/// bright_glow_halo() pixels of context: the same image as draw_glow.
Image draw_glow_tiled(Runtime& runtime, const Image& rgba, const std::vector<BrightPoint>& points,
                      const BrightParams& params, TileSize tile);

/// The points as CSV (header x,y,r,g,b,luminance) or JSON (an array of the same records).
std::string bright_points_csv(const std::vector<BrightPoint>& points);
std::string bright_points_json(const std::vector<BrightPoint>& points);

}  // namespace blurtool
