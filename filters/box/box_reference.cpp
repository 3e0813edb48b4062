// Exact CPU box filter (see box_reference.h). Written for obviousness, not speed: the window
// sum is a horizontal integer sum over the edge-mapped row followed by a vertical integer sum
// of those, which equals the 2-D window sum exactly because integer addition is associative.
#include "filters/box/box_reference.h"

#include <cstdint>
#include <vector>

namespace blurtool {

namespace {

template <typename T>
BasicImage<T> box_reference_at(const BasicImage<T>& image, int radius, EdgeMode edge) {
  const int w = image.width, h = image.height, c = image.channels;
  const long long r = radius;
  // Horizontal window sums for every row of the image, per channel.
  std::vector<std::uint64_t> rows(static_cast<size_t>(w) * h * c, 0);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      for (long long dx = -r; dx <= r; ++dx) {
        int xx = edge_index(x + dx, w, edge);
        if (xx < 0) continue;
        for (int ch = 0; ch < c; ++ch)
          rows[image.index(x, y, ch)] += image.pixels[image.index(xx, y, ch)];
      }
    }
  }
  BasicImage<T> out = image;
  const std::uint64_t count = static_cast<std::uint64_t>(2 * r + 1) * (2 * r + 1);
  std::vector<std::uint64_t> sum(c);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      std::fill(sum.begin(), sum.end(), 0);
      for (long long dy = -r; dy <= r; ++dy) {
        int yy = edge_index(y + dy, h, edge);
        if (yy < 0) continue;
        for (int ch = 0; ch < c; ++ch) sum[ch] += rows[image.index(x, yy, ch)];
      }
      // Nearest, halves up: floor(sum / count + 1/2) = (2 sum + count) / (2 count).
      for (int ch = 0; ch < c; ++ch)
        out.pixels[image.index(x, y, ch)] = static_cast<T>((2 * sum[ch] + count) / (2 * count));
    }
  }
  return out;
}

}  // namespace

Image box_blur_reference(const Image& image, int radius, EdgeMode edge) {
  return box_reference_at(image, radius, edge);
}

Image16 box_blur_reference(const Image16& image, int radius, EdgeMode edge) {
  return box_reference_at(image, radius, edge);
}

}  // namespace blurtool
