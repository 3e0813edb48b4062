// The bright-point reference: a plain scan of every block (see bright_points.h).
#include <algorithm>
#include <cmath>

#include "core/bright_points.h"
#include "core/error.h"

namespace blurtool {

void sort_points(std::vector<BrightPoint>& points) {
  std::sort(points.begin(), points.end(), [](const BrightPoint& a, const BrightPoint& b) {
    return a.y != b.y ? a.y < b.y : a.x < b.x;
  });
}

std::uint32_t bright_threshold_units(double threshold) {
  return static_cast<std::uint32_t>(std::floor(threshold * 2550000.0));
}

std::vector<BrightPoint> bright_points_reference(const Image& image, const BrightParams& p) {
  validate(p);
  const Image rgba = to_rgba(image);
  const std::uint32_t threshold = bright_threshold_units(p.threshold);
  std::vector<BrightPoint> found;
  for (int y0 = 0; y0 < rgba.height; y0 += p.block) {
    for (int x0 = 0; x0 < rgba.width; x0 += p.block) {
      BrightPoint best;
      bool any = false;
      for (int y = y0; y < std::min(y0 + p.block, rgba.height); ++y) {
        for (int x = x0; x < std::min(x0 + p.block, rgba.width); ++x) {
          const std::uint8_t* px = &rgba.pixels[rgba.index(x, y)];
          const std::uint32_t units = 2126u * px[0] + 7152u * px[1] + 722u * px[2];
          if (!any || units > best.luminance_units)  // strictly greater: the first one wins ties
            best = {x, y, px[0], px[1], px[2], units};
          any = true;
        }
      }
      if (best.luminance_units > threshold) found.push_back(best);
    }
  }
  sort_points(found);  // by the points' own (y, x), not by block: a block row spans B rows
  return found;
}

}  // namespace blurtool
