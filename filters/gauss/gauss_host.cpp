// The Gaussian on the host's cores (see gauss_host.h).
#include "filters/gauss/gauss_host.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "filters/gauss/gauss_weights.h"
#include "filters/host_image.h"
#include "util/error.h"
#include "util/multiversion.h"
#include "util/parallel.h"

namespace blurtool {

namespace {

// The rounding of every schedule: to nearest, halves up, at most 255 (sums of non-negative
// weights times non-negative samples are never negative).
inline std::uint8_t to_level(float v) {
  const float up = v + 0.5f;
  return up >= 255.0f ? 255 : static_cast<std::uint8_t>(static_cast<int>(up));
}

// --- exact: the truncated Gaussian's weights, separable ---------------------------------------

// One thread's rows: the column pass's result with its halo, and the row pass's sums.
struct ExactScratch {
  std::vector<float> column;
  std::vector<float> sum;
};

// Output rows [y0, y1) of `image` (C channels) into `result`; w[i] the weight of offsets -i and
// +i (i = 0..R). Columns first, the rows y - R .. y + R into one row of floats (vectorised along
// the row, offsets -i and +i paired), its halo on both sides mapped through the edge mode
// (halo_x), then along that row.
template <int C>
BLURTOOL_MULTIVERSION void exact_band(const Image& image, Image& result,
                                      const std::vector<float>& w, EdgeMode edge,
                                      const std::vector<int>& halo_x, int y0, int y1,
                                      ExactScratch& s) {
  const int width = image.width, h = image.height, r = static_cast<int>(w.size()) - 1;
  const std::size_t samples = static_cast<std::size_t>(width) * C;
  const std::size_t halo = static_cast<std::size_t>(r) * C;
  s.column.resize(samples + 2 * halo);
  s.sum.resize(samples);
  float* column = s.column.data() + halo;
  float* sum = s.sum.data();
  auto row_at = [&](long long yy) -> const std::uint8_t* {
    const int y = edge_index(yy, h, edge);
    return y < 0 ? nullptr : image.pixels.data() + static_cast<std::size_t>(y) * samples;
  };
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* centre = row_at(y);
    const float w0 = w[0];
    for (std::size_t k = 0; k < samples; ++k) column[k] = w0 * static_cast<float>(centre[k]);
    for (int i = 1; i <= r; ++i) {
      const std::uint8_t* a = row_at(static_cast<long long>(y) - i);
      const std::uint8_t* b = row_at(static_cast<long long>(y) + i);
      const float wi = w[i];
      if (a && b) {
        for (std::size_t k = 0; k < samples; ++k)
          column[k] += wi * (static_cast<float>(a[k]) + static_cast<float>(b[k]));
      } else if (a || b) {
        const std::uint8_t* p = a ? a : b;
        for (std::size_t k = 0; k < samples; ++k) column[k] += wi * static_cast<float>(p[k]);
      }
    }
    for (int k = 0; k < r; ++k) {
      const int left = halo_x[k], right = halo_x[r + k];
      for (int c = 0; c < C; ++c) {
        column[(static_cast<long long>(k) - r) * C + c] = left < 0 ? 0.0f : column[left * C + c];
        column[(static_cast<std::size_t>(width) + k) * C + c] =
            right < 0 ? 0.0f : column[right * C + c];
      }
    }
    for (std::size_t k = 0; k < samples; ++k) sum[k] = w0 * column[k];
    for (int i = 1; i <= r; ++i) {
      const float* left = column - static_cast<std::size_t>(i) * C;
      const float* right = column + static_cast<std::size_t>(i) * C;
      const float wi = w[i];
      for (std::size_t k = 0; k < samples; ++k) sum[k] += wi * (left[k] + right[k]);
    }
    std::uint8_t* dst = result.pixels.data() + static_cast<std::size_t>(y) * samples;
    for (std::size_t k = 0; k < samples; ++k) dst[k] = to_level(sum[k]);
  }
}

template <int C>
void exact(const Image& image, Image& result, double sigma, int radius, EdgeMode edge,
           int threads) {
  const std::vector<double> weights = gauss_weights(sigma, radius);
  std::vector<float> w(static_cast<std::size_t>(radius) + 1);
  for (int i = 0; i <= radius; ++i) w[i] = static_cast<float>(weights[radius + i]);
  const std::vector<int> halo_x = row_halo(image.width, radius, edge);
  const int bands = (image.height + 7) / 8;  // rows are independent: bands of 8
  for_each_piece<ExactScratch>(bands, worker_threads(threads, bands),
                               [&](int band, ExactScratch& scratch) {
                                 const int y0 = band * 8, y1 = std::min(image.height, y0 + 8);
                                 exact_band<C>(image, result, w, edge, halo_x, y0, y1, scratch);
                               });
}

// --- pyramid: cells of f x f pixels, a coarse Gaussian, interpolation ------------------------

// One axis of n pixels on the grid of cells of f pixels: the cells [lo, lo + cells) that the
// outputs reach through the coarse Gaussian of radius rc, and for each pixel x the cell i0 left
// of it (as an index into the grid) and its place t between i0 and i0 + 1: pixel x lies at
// cell coordinate (2x + 1 - f) / (2f) = i0 + t, as kernels/gauss_pyramid.cl computes it.
struct PyramidAxis {
  long long lo = 0;
  int cells = 0;
  std::vector<int> first;  // i0 - lo
  std::vector<float> t;
};

PyramidAxis pyramid_axis(int n, int f, int rc) {
  PyramidAxis a;
  auto i0 = [&](long long x) { return floor_div(2 * x + 1 - f, 2LL * f); };
  a.lo = i0(0) - rc;
  a.cells = static_cast<int>(i0(n - 1) + 1 + rc - a.lo + 1);
  a.first.resize(n);
  a.t.resize(n);
  const float inv = 1.0f / static_cast<float>(2 * f);
  for (int x = 0; x < n; ++x) {
    const long long num = 2LL * x + 1 - f, cell = i0(x);
    a.first[x] = static_cast<int>(cell - a.lo);
    a.t[x] = static_cast<float>(num - 2LL * f * cell) * inv;
  }
  return a;
}

// Cell rows [j0, j1) of the grid: the mean of each cell's f x f pixels through the edge mode
// (pixels outside with EdgeMode::zero count as 0), summed in integers. xs[i f + u]: the pixel
// column of pixel u of grid cell i (-1: none).
template <int C>
BLURTOOL_MULTIVERSION void pyramid_cells(const Image& image, const PyramidAxis& ax,
                                         const PyramidAxis& ay, int f, EdgeMode edge,
                                         const std::vector<int>& xs, int j0, int j1,
                                         std::vector<float>& cells,
                                         std::vector<std::int32_t>& sums) {
  const std::size_t samples = static_cast<std::size_t>(image.width) * C;
  sums.resize(samples);
  const float scale = 1.0f / (static_cast<float>(f) * static_cast<float>(f));
  for (int j = j0; j < j1; ++j) {
    std::fill(sums.begin(), sums.end(), 0);
    for (int v = 0; v < f; ++v) {
      const int y = edge_index((ay.lo + j) * f + v, image.height, edge);
      if (y < 0) continue;
      const std::uint8_t* src = image.pixels.data() + static_cast<std::size_t>(y) * samples;
      for (std::size_t k = 0; k < samples; ++k) sums[k] += src[k];
    }
    float* out = cells.data() + static_cast<std::size_t>(j) * ax.cells * C;
    for (int i = 0; i < ax.cells; ++i) {
      std::int32_t acc[C] = {};
      for (int u = 0; u < f; ++u) {
        const int x = xs[static_cast<std::size_t>(i) * f + u];
        if (x < 0) continue;
        for (int c = 0; c < C; ++c) acc[c] += sums[static_cast<std::size_t>(x) * C + c];
      }
      for (int c = 0; c < C; ++c) out[static_cast<std::size_t>(i) * C + c] = acc[c] * scale;
    }
  }
}

// Output rows [y0, y1): the cell rows they fall between, each interpolated along x at every
// pixel column (a scalar step, but once a cell row, not once a pixel row), then each pixel row
// between its two such rows (vectorised along the row). Interpolating x first and y second is
// the same bilinear weight as the kernel's y then x, up to float rounding.
template <int C>
BLURTOOL_MULTIVERSION void pyramid_up(const std::vector<float>& grid, const PyramidAxis& ax,
                                      const PyramidAxis& ay, Image& result, int y0, int y1,
                                      std::vector<float>& rows) {
  const std::size_t row = static_cast<std::size_t>(ax.cells) * C;
  const std::size_t samples = static_cast<std::size_t>(result.width) * C;
  const int j0 = ay.first[y0], j1 = ay.first[y1 - 1] + 1;
  rows.resize(static_cast<std::size_t>(j1 - j0 + 1) * samples);
  for (int j = j0; j <= j1; ++j) {
    const float* cells = grid.data() + static_cast<std::size_t>(j) * row;
    float* h = rows.data() + static_cast<std::size_t>(j - j0) * samples;
    for (int x = 0; x < result.width; ++x) {
      const float* a = cells + static_cast<std::size_t>(ax.first[x]) * C;
      const float tx = ax.t[x];
      for (int c = 0; c < C; ++c) h[x * C + c] = a[c] + (a[C + c] - a[c]) * tx;
    }
  }
  for (int y = y0; y < y1; ++y) {
    const float* top = rows.data() + static_cast<std::size_t>(ay.first[y] - j0) * samples;
    const float* bottom = top + samples;
    const float ty = ay.t[y];
    std::uint8_t* dst = result.pixels.data() + static_cast<std::size_t>(y) * samples;
    for (std::size_t k = 0; k < samples; ++k) dst[k] = to_level(top[k] + (bottom[k] - top[k]) * ty);
  }
}

// One pass of the coarse Gaussian: out[q + first] = sum over k of g[k] in[q + k step], q in
// [0, n): along a row of cells (step C, first rc C) or down the grid (step a row, first 0,
// `in` the row rc above the output's).
BLURTOOL_MULTIVERSION void coarse_pass(const float* in, float* out, std::size_t step,
                                       std::size_t first, int rc, std::size_t n,
                                       const std::vector<float>& g) {
  out += first;
  for (std::size_t q = 0; q < n; ++q) out[q] = g[0] * in[q];
  for (int k = 1; k <= 2 * rc; ++k) {
    const float gk = g[k];
    const float* src = in + k * step;
    for (std::size_t q = 0; q < n; ++q) out[q] += gk * src[q];
  }
}

template <int C>
void pyramid(const Image& image, Image& result, double sigma, EdgeMode edge, int threads) {
  const GaussPyramid p = gauss_pyramid(sigma);
  const int f = p.factor, rc = p.coarse_radius;
  const PyramidAxis ax = pyramid_axis(image.width, f, rc), ay = pyramid_axis(image.height, f, rc);
  std::vector<int> xs(static_cast<std::size_t>(ax.cells) * f);
  for (int i = 0; i < ax.cells; ++i)
    for (int u = 0; u < f; ++u)
      xs[static_cast<std::size_t>(i) * f + u] = edge_index((ax.lo + i) * f + u, image.width, edge);
  const std::size_t row = static_cast<std::size_t>(ax.cells) * C;
  std::vector<float> cells(row * ay.cells), across(cells.size());

  // Bands of cell rows of about 64 pixel rows each.
  const int cell_band = std::max(1, 64 / f);
  const int cell_pieces = (ay.cells + cell_band - 1) / cell_band;
  for_each_piece<std::vector<std::int32_t>>(
      cell_pieces, worker_threads(threads, cell_pieces), [&](int piece, auto& sums) {
        const int j0 = piece * cell_band, j1 = std::min(ay.cells, j0 + cell_band);
        pyramid_cells<C>(image, ax, ay, f, edge, xs, j0, j1, cells, sums);
      });

  // The coarse Gaussian along the grid's rows, then its columns, at the grid's inner cells:
  // outputs interpolate between cells rc .. cells - 1 - rc of each axis, whose taps reach the
  // whole grid and no further.
  const std::vector<double> g64 = gauss_weights(p.coarse_sigma, rc);
  const std::vector<float> g(g64.begin(), g64.end());
  const int rows_pieces = (ay.cells + 15) / 16;
  for_each_piece<int>(rows_pieces, worker_threads(threads, rows_pieces), [&](int piece, int&) {
    for (int j = piece * 16; j < std::min(ay.cells, piece * 16 + 16); ++j)
      coarse_pass(cells.data() + static_cast<std::size_t>(j) * row,
                  across.data() + static_cast<std::size_t>(j) * row, C,
                  static_cast<std::size_t>(rc) * C, rc,
                  static_cast<std::size_t>(ax.cells - 2 * rc) * C, g);
  });
  const int inner = ay.cells - 2 * rc;
  const int cols_pieces = (inner + 7) / 8;
  for_each_piece<int>(cols_pieces, worker_threads(threads, cols_pieces), [&](int piece, int&) {
    for (int j = rc + piece * 8; j < std::min(rc + inner, rc + piece * 8 + 8); ++j)
      coarse_pass(across.data() + static_cast<std::size_t>(j - rc) * row,
                  cells.data() + static_cast<std::size_t>(j) * row, row, 0, rc, row, g);
  });

  // Bands of 32 rows: with f = 4, 10 cell rows interpolated along x for 32 pixel rows.
  const int bands = (image.height + 31) / 32;
  for_each_piece<std::vector<float>>(
      bands, worker_threads(threads, bands), [&](int band, std::vector<float>& rows) {
        const int y0 = band * 32, y1 = std::min(image.height, y0 + 32);
        pyramid_up<C>(cells, ax, ay, result, y0, y1, rows);
      });
}

template <int C>
void gauss_channels(const Image& image, Image& result, const GaussParams& params, int threads) {
  if (gauss_method_of(params) == GaussMethod::pyramid)
    pyramid<C>(image, result, params.sigma, params.edge, threads);
  else
    exact<C>(image, result, params.sigma, gauss_radius(params), params.edge, threads);
}

}  // namespace

std::string gauss_host_refusal(const GaussParams& params) {
  if (params.variant != GaussVariant::automatic || params.intermediate != Intermediate::rgba32f ||
      !params.wg.is_default() || params.segment != 0)
    return "--variant, --intermediate, --wg and --segment choose a device's schedule";
  switch (gauss_method_of(params)) {
    case GaussMethod::fast:
      return params.method == GaussMethod::fast
                 ? "the Gaussian's fast method (--gauss-method fast, a box cascade) runs on a "
                   "device"
                 : "a Gaussian of sigma above about 1030 takes the fast method (a box cascade), "
                   "which runs on a device";
    case GaussMethod::exact:
      if (gauss_radius(params) > kGaussHostMaxRadius)
        return "the exact Gaussian's radius " + std::to_string(gauss_radius(params)) +
               " (--radius, or 3 sigma) is above the host's " +
               std::to_string(kGaussHostMaxRadius) + "; it runs on a device";
      return "";
    default:
      return "";
  }
}

void gauss_blur_host(const Image& image, const GaussParams& params, int threads, Image& result) {
  validate(params);
  if (const std::string why = gauss_host_refusal(params); !why.empty()) throw UsageError(why);
  prepare_host_result(image, result, "Gaussian");
  if (image.pixels.empty()) return;
  with_channels(image.channels, [&](auto c) {
    gauss_channels<decltype(c)::value>(image, result, params, threads);
  });
}

Image gauss_blur_host(const Image& image, const GaussParams& params, int threads) {
  Image result;
  gauss_blur_host(image, params, threads, result);
  return result;
}

}  // namespace blurtool
