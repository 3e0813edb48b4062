// Box filter on the host's cores (see box_host.h).
#include "filters/box/box_host.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "filters/host_image.h"
#include "util/error.h"
#include "util/multiversion.h"
#include "util/parallel.h"

namespace blurtool {

namespace {

// One thread's rows of sums, kept for all the bands it takes.
template <typename Sum>
struct BandScratch {
  std::vector<Sum> column;  // the column sums of the window's rows, C a pixel
  std::vector<Sum> row;     // the column sums with the halo on both sides (edge-mapped)
  std::vector<Sum> window;  // the window sums of the output row
};

// The band's loops are multi-versioned (util/multiversion.h): 8-lane integer and 4-lane double
// vectors take a third off the filter's time where AVX2 is there.

// The band of output rows [y0, y1) of `image` with C channels, into `result`. Sum holds
// 255 x (2 radius + 1)^2. Columns first: a row enters and a row leaves the column sums (bytes
// in, vectorised across the row); then one running sum along the row of column sums.
template <int C, typename Sum>
BLURTOOL_MULTIVERSION void box_band(const Image& image, Image& result, int radius, EdgeMode edge,
                                    const std::vector<int>& halo_x, int y0, int y1,
                                    BandScratch<Sum>& s) {
  const int w = image.width, h = image.height, r = radius;
  const std::size_t samples = static_cast<std::size_t>(w) * C;
  s.column.assign(samples, 0);
  // One sample more in the row and the window: RGB's running sum loads and stores four.
  s.row.resize((static_cast<std::size_t>(w) + 2 * static_cast<std::size_t>(r)) * C + 1);
  s.window.resize(samples + 1);
  auto pixels = [&](int y) { return image.pixels.data() + static_cast<std::size_t>(y) * samples; };

  // The first output row's window of rows.
  Sum* column = s.column.data();
  for (long long yy = static_cast<long long>(y0) - r; yy <= static_cast<long long>(y0) + r; ++yy) {
    const int y = edge_index(yy, h, edge);
    if (y < 0) continue;
    const std::uint8_t* src = pixels(y);
    for (std::size_t i = 0; i < samples; ++i) column[i] += src[i];
  }
  // Nearest, halves up: floor((2 sum + count) / (2 count)) = floor(sum * scale + 1/2), where
  // scale = 1 / count rounded: the product's error (< 2^-40 for sums below 2^42) is smaller
  // than both the nudge 2^-38 added and the distance of a non-integer quotient from the next
  // integer (>= 1 / (2 count) >= 2^-32 for radii up to 16383), so truncation gives the exact
  // floor.
  const double count = static_cast<double>(2 * r + 1) * (2 * r + 1);
  const double scale = 1.0 / count, offset = 0.5 + 0x1p-38;
  const float scale_float = static_cast<float>(1.0 / count);
  Sum* row = s.row.data();
  Sum* window = s.window.data();
  for (int y = y0; y < y1; ++y) {
    // The row of column sums with its halo, then the running sum along it.
    std::memcpy(row + static_cast<std::size_t>(r) * C, column, samples * sizeof(Sum));
    for (int k = 0; k < r; ++k) {
      const int left = halo_x[k], right = halo_x[r + k];
      for (int c = 0; c < C; ++c) {
        row[k * C + c] = left < 0 ? 0 : column[left * C + c];
        row[(static_cast<std::size_t>(w) + r + k) * C + c] = right < 0 ? 0 : column[right * C + c];
      }
    }
    Sum acc[C] = {};
    for (int k = 0; k <= 2 * r; ++k)
      for (int c = 0; c < C; ++c) acc[c] += row[static_cast<std::size_t>(k) * C + c];
    for (int c = 0; c < C; ++c) window[c] = acc[c];
    const Sum* enter = row + static_cast<std::size_t>(2 * r + 1) * C;
    const Sum* leave = row;
    if constexpr ((C == 4 || C == 3) && sizeof(Sum) == 4) {
      // RGBA: the four channels' sums in one vector register. RGB: the same four lanes, a
      // pixel apart, the fourth summing the next pixel's red, which the next store overwrites
      // (and the last goes to the window's spare sample): a vector step where three scalar
      // chains would cost more than the channel saved.
      typedef Sum Quad __attribute__((vector_size(16)));
      Quad quad = {acc[0], acc[1], acc[2], C == 4 ? acc[C - 1] : 0};
      for (std::size_t i = C; i < samples; i += C, enter += C, leave += C) {
        Quad a, b;
        std::memcpy(&a, enter, sizeof a);
        std::memcpy(&b, leave, sizeof b);
        quad += a - b;
        std::memcpy(window + i, &quad, sizeof quad);
      }
    } else {
      for (std::size_t i = C; i < samples; i += C, enter += C, leave += C)
        for (int c = 0; c < C; ++c) window[i + c] = acc[c] += enter[c] - leave[c];
    }
    std::uint8_t* dst = result.pixels.data() + static_cast<std::size_t>(y) * samples;
    if (r <= kBoxHostFloatRadius) {  // twice the lanes of double
      for (std::size_t i = 0; i < samples; ++i)
        dst[i] = box_mean_float(static_cast<std::int32_t>(window[i]), scale_float);
    } else {
      for (std::size_t i = 0; i < samples; ++i)
        dst[i] = static_cast<std::uint8_t>(
            static_cast<std::int32_t>(static_cast<double>(window[i]) * scale + offset));
    }
    if (y + 1 == y1) break;
    // The next row's window: one row in, one row out.
    const int in = edge_index(static_cast<long long>(y) + r + 1, h, edge);
    const int out = edge_index(static_cast<long long>(y) - r, h, edge);
    if (in == out) continue;  // the same row (clamped at an edge): no change
    if (in >= 0 && out >= 0) {
      const std::uint8_t *a = pixels(in), *b = pixels(out);
      for (std::size_t i = 0; i < samples; ++i) column[i] += Sum(a[i]) - Sum(b[i]);
    } else if (in >= 0) {
      const std::uint8_t* a = pixels(in);
      for (std::size_t i = 0; i < samples; ++i) column[i] += a[i];
    } else if (out >= 0) {
      const std::uint8_t* b = pixels(out);
      for (std::size_t i = 0; i < samples; ++i) column[i] -= b[i];
    }
  }
}

template <int C, typename Sum>
void box_bands(const Image& image, Image& result, int radius, EdgeMode edge, int threads) {
  const int r = radius;
  const std::vector<int> halo_x = row_halo(image.width, r, edge);
  // Bands of at least 16 rows: fewer, longer bands where the first window's sums would
  // outweigh a short band's running ones.
  const int n = worker_threads(threads, (image.height + 15) / 16);
  const int band = (image.height + n - 1) / n;
  for_each_piece<BandScratch<Sum>>(n, n, [&](int piece, BandScratch<Sum>& scratch) {
    const int y0 = piece * band, y1 = std::min(image.height, y0 + band);
    if (y0 < y1) box_band<C, Sum>(image, result, r, edge, halo_x, y0, y1, scratch);
  });
}

template <int C>
void box_channels(const Image& image, Image& result, int radius, EdgeMode edge, int threads) {
  // 255 x (2 r + 1)^2 fits a signed 32-bit sum up to r = 1447 (signed: converted to double
  // in vector registers).
  if (radius <= 1447)
    box_bands<C, std::int32_t>(image, result, radius, edge, threads);
  else
    box_bands<C, std::int64_t>(image, result, radius, edge, threads);
}

}  // namespace

void box_blur_host(const Image& image, int radius, EdgeMode edge, int threads, Image& result) {
  if (radius < 0) throw Error("box filter: radius " + std::to_string(radius) + " is negative");
  prepare_host_result(image, result, "box filter");
  if (image.pixels.empty()) return;
  with_channels(image.channels, [&](auto c) {
    box_channels<decltype(c)::value>(image, result, radius, edge, threads);
  });
}

Image box_blur_host(const Image& image, int radius, EdgeMode edge, int threads) {
  Image result;
  box_blur_host(image, radius, edge, threads, result);
  return result;
}

}  // namespace blurtool
