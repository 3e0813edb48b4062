// The bright-point reference: a plain scan of every block (see bright_points.h).
#include <algorithm>
#include <cmath>

#include "filters/bright/bright_points.h"
#include "util/error.h"

namespace blurtool {

void sort_points(std::vector<BrightPoint>& points) {
  std::sort(points.begin(), points.end(), [](const BrightPoint& a, const BrightPoint& b) {
    return a.y != b.y ? a.y < b.y : a.x < b.x;
  });
}

std::uint32_t bright_threshold_units(double threshold) {
  // T is a decimal as written (0.41), not its binary double (0.40999999999999998): 0.41 *
  // 2550000 comes out as 1045499.9999999999, whose floor let a pixel of exactly L = 0.41 be
  // reported. The double product is within 6e-10 of the decimal one, and a decimal of at most 9
  // places times 2550000 is an integer or at least 1e-5 below one, so 1e-6 restores the floor.
  return static_cast<std::uint32_t>(std::floor(threshold * 2550000.0 + 1e-6));
}

std::uint32_t bright_luminance_units(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return 2126u * r + 7152u * g + 722u * b;
}

std::uint32_t bright_luminance_units(std::uint16_t r, std::uint16_t g, std::uint16_t b) {
  return (2126u * r + 7152u * g + 722u * b + 128u) / 257u;  // the sum is below 2^30
}

namespace {

// The reference on RGBA image `rgba` of either depth; `colours` is the same image at 8 bits,
// where the points' colours are taken from.
template <typename T>
std::vector<BrightPoint> reference_points(const BasicImage<T>& rgba, const Image& colours,
                                          const BrightParams& p) {
  validate(p);
  const std::uint32_t threshold = bright_threshold_units(p.threshold);
  std::vector<BrightPoint> found;
  for (int y0 = 0; y0 < rgba.height; y0 += p.block) {
    for (int x0 = 0; x0 < rgba.width; x0 += p.block) {
      BrightPoint best;
      bool any = false;
      for (int y = y0; y < std::min(y0 + p.block, rgba.height); ++y) {
        for (int x = x0; x < std::min(x0 + p.block, rgba.width); ++x) {
          const T* px = &rgba.pixels[rgba.index(x, y)];
          const std::uint32_t units = bright_luminance_units(px[0], px[1], px[2]);
          if (!any || units > best.luminance_units) {  // strictly greater: the first one wins ties
            const std::uint8_t* c = &colours.pixels[colours.index(x, y)];
            best = {x, y, c[0], c[1], c[2], units};
          }
          any = true;
        }
      }
      if (best.luminance_units > threshold) found.push_back(best);
    }
  }
  sort_points(found);  // by the points' own (y, x), not by block: a block row spans B rows
  return found;
}

}  // namespace

std::vector<BrightPoint> bright_points_reference(const Image& image, const BrightParams& p) {
  const Image rgba = to_rgba(image);
  return reference_points(rgba, rgba, p);
}

std::vector<BrightPoint> bright_points_reference(const Image16& image, const BrightParams& p) {
  const Image16 rgba = to_rgba(image);
  return reference_points(rgba, narrow(rgba), p);
}

}  // namespace blurtool
