// Bright-point extraction on an OpenCL device (the write-up "Optimising a Compute Shader", on a
// lens-flare effect): the pixel of highest Rec. 709 luminance in every BxB block, reported when it
// exceeds a threshold, with every reduction strategy the write-up tried plus tree and sub-group
// ones; and the glow that draws the points onto the image. bright_points_reference() defines the
// meaning.
//
// Every operation runs on RGBA8 (Image) and RGBA16 (Image16: 16-bit PNGs, linear light)
// images. At 16 bits luminance keeps the 8-bit units and a point's colour is reported at 8 bits
// (see bright_luminance_units and BrightPoint), so thresholds, keys and outputs do not change
// with the depth; what 16 bits add is that pixels differing only below 8-bit precision are
// still told apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cl_runtime.h"
#include "filters/filter.h"
#include "image/image_io.h"
#include "util/named.h"
#include "filters/tiled_run.h"

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
/// From a 16-bit image the colour is the pixel's rounded to the nearest 8-bit level,
/// (v * 255 + 32767) / 65535 a sample (as narrow()), and the luminance is computed from the
/// 16-bit samples (bright_luminance_units), not from the rounded colour.
struct BrightPoint {
  int x = 0, y = 0;
  std::uint8_t r = 0, g = 0, b = 0;
  std::uint32_t luminance_units = 0;  ///< bright_luminance_units; luminance = this / 2550000
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

/// Luminance of an 8-bit RGB pixel in integer units: 2126 R + 7152 G + 722 B (Rec. 709 weights
/// times 10000), 0..2550000; luminance in [0, 1] is units / 2550000.
std::uint32_t bright_luminance_units(std::uint8_t r, std::uint8_t g, std::uint8_t b);

/// Luminance of a 16-bit RGB pixel in the same units as the 8-bit one:
/// floor((2126 R + 7152 G + 722 B + 128) / 257), the 8-bit formula on samples scaled to 0..255
/// and rounded to the nearest unit. A widened 8-bit pixel (every sample v * 257) gives exactly
/// its 8-bit units; one 16-bit level more in any channel gives at least 2 units more, so pixels
/// that differ only below 8-bit precision do not tie.
std::uint32_t bright_luminance_units(std::uint16_t r, std::uint16_t g, std::uint16_t b);

/// The threshold in luminance units: a pixel is reported when its units exceed this
/// (floor(T * 2550000) for T as the decimal written, to 9 places: 0.41 gives 1045500, not the
/// 1045499 of its binary double; so "L > T" is decided exactly in integers).
std::uint32_t bright_threshold_units(double threshold);

/// The reference: for every BxB block of `image` (1-4 channels, as to_rgba() expands them;
/// blocks at the right and bottom edges are partial and count only their real pixels), the
/// pixel of highest luminance L = 0.2126 R + 0.7152 G + 0.0722 B (as bright_luminance_units),
/// the first in raster order within the block on ties, when L > threshold; sorted by (y, x).
/// Throws blurtool::UsageError for invalid parameters (validate).
std::vector<BrightPoint> bright_points_reference(const Image& image, const BrightParams& params);
/// The same for a 16-bit image: L from the 16-bit samples (the 16-bit bright_luminance_units),
/// the colour rounded to 8 bits (BrightPoint). On widen(image) it gives the 8-bit points.
std::vector<BrightPoint> bright_points_reference(const Image16& image, const BrightParams& params);

/// A bright-point schedule for `width` x `height` RGBA images of `depth` (RGBA8 or RGBA16) on
/// one device; every variant runs at both depths. enqueue() ignores `dst`: the points stay on
/// the device until points() reads them back.
/// Throws blurtool::UsageError for invalid parameters or a block the device cannot run as one
/// work-group (naming CL_KERNEL_WORK_GROUP_SIZE), or for `subgroup` on a device without
/// sub-groups (naming cl_khr_subgroups); blurtool::Error / cl::Error as the other filters.
class BrightFinder : public Filter {
 public:
  BrightFinder(Runtime& runtime, const BrightParams& params, int width, int height,
               PixelDepth depth = PixelDepth::u8);

  std::string describe() const override;
  const std::vector<PassInfo>& passes() const override { return passes_; }
  /// The image read once: pixel_bytes(depth()) a pixel (the points written are negligible).
  std::uint64_t compulsory_bytes() const override {
    return static_cast<std::uint64_t>(pixel_bytes(depth_)) * width_ * height_;
  }
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

/// Finds the bright points of RGBA8 host image `rgba` on the runtime's device. Errors as
/// BrightFinder and run_filter.
std::vector<BrightPoint> find_bright_points(Runtime& runtime, const Image& rgba,
                                            const BrightParams& params);
/// The same for RGBA16 (a PixelDepth::u16 schedule; the meaning of the 16-bit reference).
std::vector<BrightPoint> find_bright_points(Runtime& runtime, const Image16& rgba,
                                            const BrightParams& params);

/// The image with a soft additive glow drawn on the device around every point (the colour of
/// the point, falling off as a Gaussian of sigma 0.75 B pixels, stronger the further the point
/// exceeds the threshold), so a person can see what was found. `rgba` is RGBA8; the result too.
/// Points outside the image are skipped. Errors as run_filter.
Image draw_glow(Runtime& runtime, const Image& rgba, const std::vector<BrightPoint>& points,
                const BrightParams& params);
/// The same on RGBA16, giving RGBA16: the image keeps its 16 bits (with no point within reach a
/// pixel is unchanged); the glow's colour is the points' 8-bit colour. On widen(image) every
/// sample is within 129 levels of 257 times the 8-bit glow's (both round the same value to
/// their levels), so narrow() of it is within 1 level of the 8-bit glow.
Image16 draw_glow(Runtime& runtime, const Image16& rgba, const std::vector<BrightPoint>& points,
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
/// The same for RGBA16; with `linear_light` the luminance is taken in linear light (each tile
/// converted on the device by a WorkingSpaceFilter around the finder) and the points keep the
/// stored colour (stored_colours).
std::vector<BrightPoint> find_bright_points_tiled(Runtime& runtime, const Image16& rgba,
                                                  const BrightParams& params, TileSize tile,
                                                  bool linear_light = false);

/// The BrightFinder that `filter` is, or that it runs in a working space (WorkingSpaceFilter).
/// Throws blurtool::Error for any other filter.
BrightFinder& bright_finder_of(Filter& filter);

/// Sets each point's r, g, b to the pixel of RGBA16 `rgba` at its (x, y), rounded to the
/// nearest 8-bit level: the stored colour, for points found in a working space.
void stored_colours(std::vector<BrightPoint>& points, const Image16& rgba);

/// draw_glow over output tiles of `tile` pixels (multiples of B), each read with
/// bright_glow_halo() pixels of context: the same image as draw_glow.
Image draw_glow_tiled(Runtime& runtime, const Image& rgba, const std::vector<BrightPoint>& points,
                      const BrightParams& params, TileSize tile);
/// The same for RGBA16: the same image as the 16-bit draw_glow.
Image16 draw_glow_tiled(Runtime& runtime, const Image16& rgba,
                        const std::vector<BrightPoint>& points, const BrightParams& params,
                        TileSize tile);

/// The points as CSV (header x,y,r,g,b,luminance) or JSON (an array of the same records).
std::string bright_points_csv(const std::vector<BrightPoint>& points);
std::string bright_points_json(const std::vector<BrightPoint>& points);

}  // namespace blurtool
