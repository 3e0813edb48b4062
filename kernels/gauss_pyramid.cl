// Gaussian, pyramid method (filters/gauss/gauss_weights.h, GaussPyramid): the mean of f x f
// pixels a cell, the exact Gaussian of coarse_sigma cells on the cells, and linear
// interpolation back at the pixels. Cost independent of sigma: f grows with it, so the coarse
// grid shrinks as f^2 while the Gaussian's taps stay 2 ceil(3 coarse_sigma) + 1 (13 to 25).
//
// Cells are aligned to the image, not to the buffer: cell i of an axis covers image pixels
// [i f, (i + 1) f), and a buffer whose pixel 0 is image pixel o (a tile's or strip's input
// region) reads its pixel i - o. A tile or strip with a halo of GaussPyramid::reach() therefore
// computes every cell its outputs use from the same pixels as one run, in the same order: the
// same bytes. A grid of cells starts at cell c0 (kernel arguments cx0, cy0) and is cw x ch
// cells, row-major float4 (levels).
//
// The mean of f x f pixels is taken in levels: first of `a` x `a` pixels, a = min(f, 4)
// (gauss_pyramid_down_pixels), then of 2 x 2 cells, log2(f / a) times
// (gauss_pyramid_down_cells): the same mean up to float rounding, with short loops and many
// work-items at any f.

// Level 1: src (w x h pixels; its pixel (0, 0) is image pixel (ox, oy)) -> cells (cw x ch), cell
// (i, j) the mean of the a x a pixels of image cell (cx0 + i, cy0 + j) through the edge mode of
// the buffer (pixels past an image edge exist only where the buffer's edge is the image's).
kernel void gauss_pyramid_down_pixels(global const pixel_word_t* src, global float4* cells, int w,
                                      int h, int edge, int a, int ox, int oy, int cx0, int cy0,
                                      int cw, int ch) {
  const int i = get_global_id(0), j = get_global_id(1);
  if (i >= cw || j >= ch) return;
  const int x0 = (cx0 + i) * a - ox, y0 = (cy0 + j) * a - oy;
  float4 sum = 0.0f;
  if (x0 >= 0 && y0 >= 0 && x0 + a <= w && y0 + a <= h) {  // inside: no edge mode
    for (int v = 0; v < a; ++v) {
      global const pixel_word_t* row = src + (size_t)(y0 + v) * w + x0;
#ifndef PIXEL16
      if (a == 4) {  // one 16-byte load a row (four 4-byte loads left L1 a quarter used)
        const uint4 q = vload4(0, row);
        sum += (unpack_pixel(q.s0) + unpack_pixel(q.s1)) +
               (unpack_pixel(q.s2) + unpack_pixel(q.s3));
        continue;
      }
#endif
      for (int u = 0; u < a; ++u) sum += unpack_pixel(row[u]);
    }
  } else {
    for (int v = 0; v < a; ++v) {
      const int y = edge_index(y0 + v, h, edge);
      if (y < 0) continue;
      global const pixel_word_t* row = src + (size_t)y * w;
      for (int u = 0; u < a; ++u) {
        const int x = edge_index(x0 + u, w, edge);
        if (x >= 0) sum += unpack_pixel(row[x]);
      }
    }
  }
  cells[(size_t)j * cw + i] = sum * (1.0f / (float)(a * a));  // sums of integers: exact
}

// One level up: fine (2 cw x 2 ch cells from cell 2 c0) -> cells (cw x ch from c0), the mean of
// each 2 x 2 block.
kernel void gauss_pyramid_down_cells(global const float4* fine, global float4* cells, int cw,
                                     int ch) {
  const int i = get_global_id(0), j = get_global_id(1);
  if (i >= cw || j >= ch) return;
  global const float4* p = fine + (size_t)(2 * j) * (2 * cw) + 2 * i;
  cells[(size_t)j * cw + i] = ((p[0] + p[1]) + (p[2 * cw] + p[2 * cw + 1])) * 0.25f;
}

// The Gaussian along the rows of the grid (cw x ch cells), weights[rc + k] the weight of offset
// k; cells within rc of the grid's sides read its side cells (the grid is planned wide enough
// that no output uses them). A work-item makes PYRAMID_BLOCK neighbouring cells, each cell it
// loads serving all of them (rc / 2 loads a cell where one a cell would take 2 rc + 1), each
// sum in the order of its taps.
#define PYRAMID_BLOCK 4
#define PYRAMID_TAPS(LOAD)                                                  \
  float4 sum[PYRAMID_BLOCK];                                                \
  for (int b = 0; b < PYRAMID_BLOCK; ++b) sum[b] = 0.0f;                    \
  for (int k = -rc; k <= rc + PYRAMID_BLOCK - 1; ++k) {                     \
    const float4 v = LOAD(k);                                               \
    _Pragma("unroll") for (int b = 0; b < PYRAMID_BLOCK; ++b) {             \
      const int t = k - b; /* the tap of cell b */                          \
      if (t >= -rc && t <= rc)                                              \
        sum[b] = fma((float4)(weights[rc + t]), v, sum[b]);                 \
    }                                                                       \
  }

#define PYRAMID_ROW_AT(k) row[clamp(i0 + (k), 0, cw - 1)]
kernel void gauss_pyramid_rows(global const float4* in, global float4* out, int cw, int ch,
                               int rc, constant float* weights) {
  const int i0 = get_global_id(0) * PYRAMID_BLOCK, j = get_global_id(1);
  if (i0 >= cw || j >= ch) return;
  global const float4* row = in + (size_t)j * cw;
  PYRAMID_TAPS(PYRAMID_ROW_AT)
  for (int b = 0; b < PYRAMID_BLOCK && i0 + b < cw; ++b) out[(size_t)j * cw + i0 + b] = sum[b];
}

// The same along the columns, a work-item PYRAMID_BLOCK cells of a column.
#define PYRAMID_COL_AT(k) in[(size_t)clamp(j0 + (k), 0, ch - 1) * cw + i]
kernel void gauss_pyramid_cols(global const float4* in, global float4* out, int cw, int ch,
                               int rc, constant float* weights) {
  const int i = get_global_id(0), j0 = get_global_id(1) * PYRAMID_BLOCK;
  if (i >= cw || j0 >= ch) return;
  PYRAMID_TAPS(PYRAMID_COL_AT)
  for (int b = 0; b < PYRAMID_BLOCK && j0 + b < ch; ++b) out[(size_t)(j0 + b) * cw + i] = sum[b];
}

// The cells (cw x ch from c0) interpolated at the pixels of dst (w x h; its pixel (0, 0) is
// image pixel (ox, oy)), rounded to the nearest level: image pixel x lies at cell coordinate
// (x + 1/2) / f - 1/2 = i0 + t, (2x + 1 - f) / (2f) exactly; f = 2^(shift - 1), so that the
// floor of the division is an arithmetic shift and the remainder a mask. A work-item makes
// PYRAMID_UP_PIXELS pixels of a row (its row's cells interpolated once, its stores one vector).
#define PYRAMID_UP_PIXELS 4
kernel void gauss_pyramid_up(global const float4* cells, global pixel_word_t* dst, int w, int h,
                             int f, int shift, int ox, int oy, int cx0, int cy0, int cw) {
  const int x0 = get_global_id(0) * PYRAMID_UP_PIXELS, y = get_global_id(1);
  if (x0 >= w || y >= h) return;
  const int ny = 2 * (oy + y) + 1 - f, mask = 2 * f - 1;
  const float inv = 1.0f / (float)(2 * f);
  const int j0 = ny >> shift;
  const float ty = (float)(ny & mask) * inv;
  global const float4* top = cells + (size_t)(j0 - cy0) * cw;
  global const float4* bottom = top + cw;
  // The row's interpolation between cells ic and ic + 1 (va, vb), moved on as the pixels pass
  // a cell's centre (at most once a pixel): from f = 4 a work-item loads 2 or 3 pairs of
  // cells, where each pixel on its own would load 2.
  int ic = ((2 * (ox + x0) + 1 - f) >> shift) - cx0;
  float4 va = mix(top[ic], bottom[ic], ty), vb = mix(top[ic + 1], bottom[ic + 1], ty);
  pixel_word_t out[PYRAMID_UP_PIXELS];
#pragma unroll
  for (int k = 0; k < PYRAMID_UP_PIXELS; ++k) {
    const int nx = 2 * (ox + x0 + k) + 1 - f, i0 = (nx >> shift) - cx0;
    while (ic < i0) {
      ++ic;
      va = vb;
      vb = mix(top[ic + 1], bottom[ic + 1], ty);
    }
    out[k] = pack_pixel(mix(va, vb, (float)(nx & mask) * inv));
  }
  global pixel_word_t* row = dst + (size_t)y * w + x0;
  if (x0 + PYRAMID_UP_PIXELS <= w) {
#ifdef PIXEL16
#pragma unroll
    for (int k = 0; k < PYRAMID_UP_PIXELS; ++k) row[k] = out[k];
#else
    vstore4((uint4)(out[0], out[1], out[2], out[3]), 0, row);  // one 16-byte store
#endif
  } else {
    for (int k = 0; k < w - x0; ++k) row[k] = out[k];
  }
}
