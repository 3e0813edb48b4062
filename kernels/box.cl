// Box filter kernels: every schedule from "Reverse Engineering Metal Performance Shaders (MPS)
// Box Blur", for one meaning: the mean of the (2R+1)x(2R+1) window, rounded half up to the
// nearest level of the output's depth.
//
// Images are RGBA. The input and output are CL_UNORM_INT8, or CL_UNORM_INT16 with -DPIXEL16
// (M = PIXEL_MAX below: 255 or 65535); the intermediate image of the two-pass schedules is
// rgba8 (CL_UNORM_INT8), rgba16f (CL_HALF_FLOAT) or rgba32f (CL_FLOAT). All sums are kept as
// exact integers so no schedule drifts, whatever the row length:
//   - input pixels are read as their integer sample values (0..M);
//   - the horizontal pass writes H = hsum * hscale, where hsum is the exact integer row-window
//     sum and hscale is 1 (rgba32f: H is the exact sum), 255/(M (2R+1)) (rgba16f: the row mean
//     on a 0..255 scale) or 1/(M (2R+1)) (rgba8: the row mean, normalised);
//   - the vertical pass turns each H it reads back into an integer q = rint(H * qscale)
//     (qscale 1, 256 M/255, M) and sums those exactly; the result is (sum + D/2) / D with
//     D = (2R+1)^2, 256 (2R+1) or 2R+1: the mean rounded half up.
// With rgba32f the result is therefore bit-exact (at 16 bits while M (2R+1) < 2^24, R <= 127;
// beyond, H's float rounding costs a small fraction of a level); with rgba16f and rgba8 the only
// error is the rounding of H when it is stored (at 8 bits at most 1/16 and 1/2 of a level
// before the final rounding; at 16 bits half-float and 8-bit storage keep 11 and 8 bits of H).
//
// Compile-time parameters (-D), with their defaults:
#ifndef UNROLL
#define UNROLL 8  // pixels per loop iteration in the running-sum passes (write-up: x1..x32)
#endif
#ifndef SCAN_COLS
#define SCAN_COLS 16  // columns per work-group in the scan pass (MPS: 16)
#endif
#ifndef SCAN_LANES
#define SCAN_LANES 16  // work-items cooperating on one column in the scan pass (MPS: 16)
#endif
// WIDE_SUM: 64-bit window sums, needed when 256 (2R+1)^2 no longer fits in 32 bits (R > 2047).
#ifdef WIDE_SUM
typedef ulong sum_t;
typedef ulong4 sum4;
#define convert_sum4 convert_ulong4
#else
typedef uint sum_t;
typedef uint4 sum4;
#define convert_sum4 convert_uint4
#endif

// edge_index(), EDGE_* and the bilinear sampler come from kernels/common.cl.

// Sample values (0..M) of pixel (x, y) of the input, both coordinates already inside the image.
inline uint4 load_u8(read_only image2d_t img, int x, int y) {
  return convert_uint4_rte(read_imagef(img, (int2)(x, y)) * PIXEL_MAX_F);
}

// A mean (0..M) as a buffer pixel.
#ifdef PIXEL16
#define pixel_from_uint4 convert_ushort4
#else
#define pixel_from_uint4 convert_uchar4
#endif

// Input pixel at column x (any integer) of row y (inside), through the edge mode.
inline uint4 load_row(read_only image2d_t img, int x, int y, int w, int edge) {
  int xx = edge_index(x, w, edge);
  return xx < 0 ? (uint4)(0) : load_u8(img, xx, y);
}

// Intermediate value at row y (any integer) of column x (inside), as the integer q.
inline sum4 load_q(read_only image2d_t tmp, int x, int y, int h, int edge, float qscale) {
  int yy = edge_index(y, h, edge);
  return yy < 0 ? (sum4)(0) : convert_sum4(convert_uint4_rte(read_imagef(tmp, (int2)(x, yy)) * qscale));
}

inline void store_intermediate(write_only image2d_t tmp, int x, int y, uint4 hsum, float hscale) {
  write_imagef(tmp, (int2)(x, y), convert_float4(hsum) * hscale);
}

// The window mean sum / divisor, rounded half up; store_mean() writes it to the output. The
// mean is at most M, so with 32-bit sums a float quotient is within 1 of the integer one and
// one correction step each way makes it exact, without the integer division (tens of
// instructions a channel on GPUs). (q + 1) * divisor cannot wrap: (M + 1) * divisor < 2^32
// whenever WIDE_SUM is off (the host's choice).
inline sum4 exact_mean(sum4 sum, sum_t divisor) {
#ifdef WIDE_SUM
  return (sum + divisor / 2) / divisor;
#else
  const uint4 n = sum + divisor / 2;
  uint4 mean = convert_uint4(convert_float4(n) * (1.0f / (float)divisor));
  mean += as_uint4(mean * divisor > n);        // true is -1: one less
  mean -= as_uint4((mean + 1) * divisor <= n);  // one more
  return mean;
#endif
}

inline void store_mean(write_only image2d_t dst, int x, int y, sum4 sum, sum_t divisor) {
  write_imagef(dst, (int2)(x, y), convert_float4(exact_mean(sum, divisor)) * (1.0f / PIXEL_MAX_F));
}

// Linear sampling (linear_coord() in kernels/common.cl): taps i and i+1 are averaged by one
// bilinear fetch with t = 1/2; a single tap i is a fetch with t = 0, at its centre.
// The window [c-R, c+R] on one axis is covered by R pairs starting at c-R+2j (j < R) and the
// single tap c+R (j == R): R+1 fetches instead of 2R+1.
inline float window_coord(int c, int j, int radius, int n, int edge) {
  int i = c - radius + 2 * j;
  return linear_coord(i, j < radius ? 0.5f : 0.0f, n, edge);
}

// ---------------------------------------------------------------------------------------------
// single: one pass, one work-item per pixel reading its whole (2R+1)^2 window. Cost grows with
// R^2; no intermediate image.
kernel void box_single(read_only image2d_t src, write_only image2d_t dst, int radius, int edge,
                       sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  sum4 sum = 0;
  for (int dy = -radius; dy <= radius; ++dy) {
    int yy = edge_index(y + dy, h, edge);
    if (yy < 0) continue;
    for (int dx = -radius; dx <= radius; ++dx) {
      int xx = edge_index(x + dx, w, edge);
      if (xx >= 0) sum += convert_sum4(load_u8(src, xx, yy));
    }
  }
  store_mean(dst, x, y, sum, divisor);
}

// single-linear: one pass, each bilinear fetch averaging a 2x2 quad: (R+1)^2 fetches. The fetch
// times the number of taps it covers (4, 2 or 1) times M is an integer sum of sample values;
// rounding it removes the sampler's arithmetic error as long as that stays under half a level.
kernel void box_single_linear(read_only image2d_t src, write_only image2d_t dst, int radius,
                              int edge, sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  sum4 sum = 0;
  for (int j = 0; j <= radius; ++j) {
    float cy = window_coord(y, j, radius, h, edge);
    float ty = j < radius ? 2.0f : 1.0f;
    for (int i = 0; i <= radius; ++i) {
      float cx = window_coord(x, i, radius, w, edge);
      float taps = (i < radius ? 2.0f : 1.0f) * ty;
      float4 v = read_imagef(src, bilinear, (float2)(cx, cy));
      sum += convert_sum4(convert_uint4_rte(v * (PIXEL_MAX_F * taps)));
    }
  }
  store_mean(dst, x, y, sum, divisor);
}

// ---------------------------------------------------------------------------------------------
// double: horizontal pass then vertical pass, one work-item per pixel each, 2R+1 reads each.
kernel void box_rows_direct(read_only image2d_t src, write_only image2d_t tmp, int radius,
                            int edge, float hscale) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  uint4 sum = 0;
  for (int dx = -radius; dx <= radius; ++dx) sum += load_row(src, x + dx, y, w, edge);
  store_intermediate(tmp, x, y, sum, hscale);
}

kernel void box_cols_direct(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                            int edge, float qscale, sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  sum4 sum = 0;
  for (int dy = -radius; dy <= radius; ++dy) sum += load_q(tmp, x, y + dy, h, edge, qscale);
  store_mean(dst, x, y, sum, divisor);
}

// double-linear: the same two passes, each fetch averaging two neighbours: R+1 fetches a pass.
kernel void box_rows_linear(read_only image2d_t src, write_only image2d_t tmp, int radius,
                            int edge, float hscale) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  float cy = (float)y + 0.5f;
  uint4 sum = 0;
  for (int i = 0; i <= radius; ++i) {
    float cx = window_coord(x, i, radius, w, edge);
    float taps = i < radius ? 2.0f : 1.0f;
    sum += convert_uint4_rte(read_imagef(src, bilinear, (float2)(cx, cy)) * (PIXEL_MAX_F * taps));
  }
  store_intermediate(tmp, x, y, sum, hscale);
}

kernel void box_cols_linear(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                            int edge, float qscale, sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  float cx = (float)x + 0.5f;
  sum4 sum = 0;
  for (int j = 0; j <= radius; ++j) {
    float cy = window_coord(y, j, radius, h, edge);
    float taps = j < radius ? 2.0f : 1.0f;
    sum += convert_sum4(
        convert_uint4_rte(read_imagef(tmp, bilinear, (float2)(cx, cy)) * (qscale * taps)));
  }
  store_mean(dst, x, y, sum, divisor);
}

// ---------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------
// scan: the vertical pass as Metal Performance Shaders lays it out (MIBox_Vertical_Scan): a
// work-group of SCAN_COLS x SCAN_LANES work-items owns SCAN_COLS neighbouring columns (reads of
// a row are contiguous); the SCAN_LANES work-items of a column take SCAN_LANES consecutive rows
// at a time. Each computes the change of the window sum at its row, d(y) = q(y+R) - q(y-R-1);
// an inclusive prefix sum of d over the lanes in local memory (Hillis-Steele, log2(SCAN_LANES)
// steps) plus the window sum carried from the previous rows gives every lane its window sum.
// The first window is summed by all lanes together. Pairs with box_rows_segmented (one segment
// per row).
kernel void box_cols_scan(read_only image2d_t tmp, write_only image2d_t dst, int radius, int edge,
                          float qscale, sum_t divisor) {
  local sum4 part[SCAN_LANES][SCAN_COLS];
  const int lx = get_local_id(0), lane = get_local_id(1);
  const int x = get_group_id(0) * SCAN_COLS + lx;
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  const bool column = x < w;

  sum4 first = 0;  // this lane's share of the window of y = -1: [-R-1, R-1]
  if (column)
    for (int k = -radius - 1 + lane; k < radius; k += SCAN_LANES)
      first += load_q(tmp, x, k, h, edge, qscale);
  part[lane][lx] = first;
  barrier(CLK_LOCAL_MEM_FENCE);
  sum4 carry = 0;
  for (int i = 0; i < SCAN_LANES; ++i) carry += part[i][lx];
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int y0 = 0; y0 < h; y0 += SCAN_LANES) {
    const int y = y0 + lane;
    sum4 d = 0;
    if (column && y < h)
      d = load_q(tmp, x, y + radius, h, edge, qscale) -
          load_q(tmp, x, y - radius - 1, h, edge, qscale);
    part[lane][lx] = d;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int offset = 1; offset < SCAN_LANES; offset <<= 1) {
      sum4 left = lane >= offset ? part[lane - offset][lx] : (sum4)(0);
      barrier(CLK_LOCAL_MEM_FENCE);
      part[lane][lx] += left;
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (column && y < h) store_mean(dst, x, y, carry + part[lane][lx], divisor);
    carry += part[SCAN_LANES - 1][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// ---------------------------------------------------------------------------------------------
// Running sums (sliding window): the window sum moves by adding the pixel that enters and
// subtracting the one that leaves, so each pixel is read twice and the cost does not depend on
// R (after the first window, 2R+1 reads). Integer sums wrap modulo 2^32 (or 2^64) but the
// window sum itself always fits, so the result is exact. UNROLL pixels are loaded per
// iteration before they are summed and written, so that loads and stores are issued together
// (the write-up's fast_double_pass_xN); the last ones are finished one at a time.
//
// accumulated and unrolled: one work-item walks a whole row, then a whole column (segment =
// the width, then the height). segmented: one work-item per `segment` pixels of a row (then of
// a column) instead of a whole row: the window of its first pixel costs 2R+1 reads, each further
// pixel 2, so a pixel costs 2 + (2R+1)/segment reads (the extra ones hit the cache) and a
// 3024x4032 image gives 12 Mpixel / segment work-items, enough to fill a GPU, where
// accumulated gives one per row (4032). In the column pass neighbouring work-items take
// neighbouring columns, so every row they read or write together is contiguous.
kernel void box_rows_segmented(read_only image2d_t src, write_only image2d_t tmp, int radius,
                               int edge, float hscale, int segment) {
  const int x0 = get_global_id(0) * segment, y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x0 >= w || y >= h) return;
  const int x1 = min(x0 + segment, w);
  uint4 sum = 0;  // window of x0 - 1: [x0-R-1, x0+R-1]
  for (int k = x0 - radius - 1; k < x0 + radius; ++k) sum += load_row(src, k, y, w, edge);
  int x = x0;
#if UNROLL > 1
  for (; x + UNROLL <= x1; x += UNROLL) {  // UNROLL fetches of each kind in flight at once
    uint4 enter[UNROLL], leave[UNROLL];
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
      enter[i] = load_row(src, x + i + radius, y, w, edge);
      leave[i] = load_row(src, x + i - radius - 1, y, w, edge);
    }
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
      sum += enter[i] - leave[i];
      store_intermediate(tmp, x + i, y, sum, hscale);
    }
  }
#endif
  for (; x < x1; ++x) {
    sum += load_row(src, x + radius, y, w, edge) - load_row(src, x - radius - 1, y, w, edge);
    store_intermediate(tmp, x, y, sum, hscale);
  }
}

kernel void box_cols_segmented(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                               int edge, float qscale, sum_t divisor, int segment) {
  const int x = get_global_id(0), y0 = get_global_id(1) * segment;
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y0 >= h) return;
  const int y1 = min(y0 + segment, h);
  sum4 sum = 0;  // window of y0 - 1
  for (int k = y0 - radius - 1; k < y0 + radius; ++k) sum += load_q(tmp, x, k, h, edge, qscale);
  int y = y0;
#if UNROLL > 1
  for (; y + UNROLL <= y1; y += UNROLL) {
    sum4 enter[UNROLL], leave[UNROLL];
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
      enter[i] = load_q(tmp, x, y + i + radius, h, edge, qscale);
      leave[i] = load_q(tmp, x, y + i - radius - 1, h, edge, qscale);
    }
#pragma unroll
    for (int i = 0; i < UNROLL; ++i) {
      sum += enter[i] - leave[i];
      store_mean(dst, x, y + i, sum, divisor);
    }
  }
#endif
  for (; y < y1; ++y) {
    sum += load_q(tmp, x, y + radius, h, edge, qscale) -
           load_q(tmp, x, y - radius - 1, h, edge, qscale);
    store_mean(dst, x, y, sum, divisor);
  }
}

// segmented-local: the row pass of segmented with its row staged in local memory as a prefix
// sum, so that a window costs two local-memory reads whatever R is. A work-group of L
// work-items (local size Lx1: one row) owns L * segment consecutive pixels of a row; local k
// holds pixel x = x_start - R + k, for the n = L * segment + 2R pixels its windows cover, read
// once with neighbouring work-items reading neighbouring pixels. `prefix` becomes the exclusive
// prefix sum E (E[0] = 0, E[k+1] = E[k] + pixel k): each work-item sums a contiguous piece, the
// pieces' totals are scanned across the group (Hillis-Steele in `partial`), and each piece adds
// its offset. The window of output x_start + i is local [i, i + 2R], so its sum is
// E[i + 2R + 1] - E[i], written neighbour by neighbour. Sums are exact modulo 2^32 (at 16 bits
// E may wrap), and a window's sum, at most M (2R+1), fits: the difference is exact.
// Pairs with box_cols_segmented.
kernel void box_rows_segmented_local(read_only image2d_t src, write_only image2d_t tmp,
                                     int radius, int edge, float hscale, int segment,
                                     local uint4* prefix, local uint4* partial) {
  const int lid = get_local_id(0), items = get_local_size(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (y >= h) return;  // the whole work-group: it holds one row
  const int chunk = items * segment, x_start = get_group_id(0) * chunk;
  const int n = chunk + 2 * radius;  // pixels staged; prefix has n + 1 entries
  for (int k = lid; k < n; k += items)
    prefix[k + 1] = load_row(src, x_start - radius + k, y, w, edge);
  if (lid == 0) prefix[0] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  // Each work-item's piece [k0, k1) of the pixels: an inclusive scan of it in place.
  const int per = (n + items - 1) / items, k0 = min(lid * per, n), k1 = min(k0 + per, n);
  uint4 run = 0;
  for (int k = k0; k < k1; ++k) {
    run += prefix[k + 1];
    prefix[k + 1] = run;
  }
  partial[lid] = run;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int offset = 1; offset < items; offset <<= 1) {  // inclusive scan of the pieces' totals
    const uint4 left = lid >= offset ? partial[lid - offset] : (uint4)(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    partial[lid] += left;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const uint4 before = lid > 0 ? partial[lid - 1] : (uint4)(0);
  for (int k = k0; k < k1; ++k) prefix[k + 1] += before;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = lid; i < chunk && x_start + i < w; i += items)
    store_intermediate(tmp, x_start + i, y, prefix[i + 2 * radius + 1] - prefix[i], hscale);
}

// The column pass of segmented-local, with each column's window held in local memory: the
// values leaving the window come from there, not from the image 2R+1 rows back (which, beyond
// small R, has left the cache: kernels/NOTES.md), so each input value is read from the image
// once whatever R is, plus (2R+1) / segment to start a segment.
// A work-group of RING_COLS x RING_LANES work-items owns RING_COLS neighbouring columns (reads
// of a row are contiguous) for `segment` rows, taken RING_BATCH = RING_LANES * RING_ROWS rows
// at a time; lane l takes RING_ROWS consecutive rows of the batch:
//  1. it reads the value entering the window of each of its rows, q(y + R), and stores it in
//     the ring: n = RING_BATCH + 2R + 1 rows of the work-group's columns, slot (row - base) % n
//     with base = y0 - R - 1;
//  2. it subtracts each row's leaving value q(y - R - 1), read back from the ring, and keeps the
//     running sum of these changes over its rows; the lane's total goes to `total`;
//  3. the totals of the lanes before it, plus the window sum carried from the previous batch,
//     give each of its rows its window sum, and the mean is written.
// Two barriers a batch. The segment's first window (2R+1 rows) is read by all lanes together.
// With RING_NARROW (the host's choice, when q never exceeds 65535) the ring holds 16-bit values.
#ifndef RING_COLS
#define RING_COLS 16
#endif
#ifndef RING_LANES
#define RING_LANES 8
#endif
#ifndef RING_ROWS
#define RING_ROWS 8
#endif
#define RING_BATCH (RING_LANES * RING_ROWS)
#ifdef RING_NARROW
typedef ushort4 ring_t;
#define convert_ring_t convert_ushort4
#else
typedef uint4 ring_t;
#define convert_ring_t convert_uint4
#endif

kernel void box_cols_ring(read_only image2d_t tmp, write_only image2d_t dst, int radius, int edge,
                          float qscale, sum_t divisor, int segment, local ring_t* ring,
                          local sum4* total) {
  const int lx = get_local_id(0), lane = get_local_id(1);
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  const int x = get_group_id(0) * RING_COLS + lx;
  const int xr = min(x, w - 1);  // columns past the image read the last one and store nothing
  const int y0 = get_group_id(1) * segment, y1 = min(y0 + segment, h);
  const int base = y0 - radius - 1, n = RING_BATCH + 2 * radius + 1;

  sum4 first = 0;  // this lane's share of the window of y0 - 1: rows base .. y0 + R - 1
  for (int k = lane; k < 2 * radius + 1; k += RING_LANES) {
    const sum4 q = load_q(tmp, xr, base + k, h, edge, qscale);
    ring[k * RING_COLS + lx] = convert_ring_t(q);
    first += q;
  }
  total[lane * RING_COLS + lx] = first;
  barrier(CLK_LOCAL_MEM_FENCE);
  sum4 carry = 0;
#pragma unroll
  for (int j = 0; j < RING_LANES; ++j) carry += total[j * RING_COLS + lx];

  for (int y = y0; y < y1; y += RING_BATCH) {
    const int r0 = y + lane * RING_ROWS;  // this lane's first row
    sum4 d[RING_ROWS];
#pragma unroll
    for (int i = 0; i < RING_ROWS; ++i) d[i] = load_q(tmp, xr, r0 + i + radius, h, edge, qscale);
    int slot = (r0 + radius - base) % n;  // of row r0 + R
#pragma unroll
    for (int i = 0; i < RING_ROWS; ++i) {
      ring[slot * RING_COLS + lx] = convert_ring_t(d[i]);
      slot = slot + 1 == n ? 0 : slot + 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // also: every lane has read `total` of the previous batch
    slot = (r0 - y0) % n;          // of row r0 - R - 1
    sum4 run = 0;
#pragma unroll
    for (int i = 0; i < RING_ROWS; ++i) {
      run += d[i] - convert_sum4(ring[slot * RING_COLS + lx]);
      d[i] = run;
      slot = slot + 1 == n ? 0 : slot + 1;
    }
    total[lane * RING_COLS + lx] = run;
    barrier(CLK_LOCAL_MEM_FENCE);  // also: every lane has read its leaving values
    sum4 before = carry;
#pragma unroll
    for (int j = 0; j < RING_LANES; ++j) {
      const sum4 t = total[j * RING_COLS + lx];
      if (j < lane) before += t;
      carry += t;
    }
    if (x < w) {
#pragma unroll
      for (int i = 0; i < RING_ROWS; ++i)
        if (r0 + i < y1) store_mean(dst, x, r0 + i, before + d[i], divisor);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// tiled: one pass over RGBA buffers (pixel_t: 4 or 8 bytes a pixel, no row padding), for CPUs,
// where image reads are software and an intermediate image is a round trip through memory.
// Each work-item owns tiles of TILE_W x tile_h pixels in turn (work-item g takes tiles g,
// g + items, ...: a persistent loop, so that its scratch is bounded by the number of
// work-items, not by the image size). Input row j of a tile is image row y0 - R - 1 + j; its
// row window sums S_j (the window of each of the tile's columns) are computed four rows at a
// time (row_sums4): the four rows are staged side by side (staged column k: pixel
// x0 - R - 1 + k of each row, one uint16), and one running sum of 16 lanes slides along them,
// so that a step (add the entering column, subtract the leaving one) serves four rows. The
// vertical running sums V of the tile's columns start as S_0 + ... + S_2R; output row p then
// takes V += S_{p+2R+1} - S_p, four pixels (16 lanes) at a time, and its mean is written out.
// The S rows live in a ring of 2R+5 rows, so that the leaving row's sums are the ones computed
// 2R+1 rows earlier; where the ring would not fit the scratch (ring == 0, large R), the leaving
// rows' sums are computed again instead. A pixel therefore costs one row step and one column
// step whatever R is (two row steps without the ring), plus (2R+1) / tile_h row steps to start
// each tile and (2R+1) / TILE_W to start each row window. Sums are exact integers, as above.
#ifndef TILE_W
#define TILE_W 256  // columns per tile
#endif
#define TILE_STRIDE (TILE_W + 4)  // uint4 between ring rows: not a power of two (cache sets)

#ifdef WIDE_SUM
typedef ulong16 sum16;
#define convert_sum16 convert_ulong16
#else
typedef uint16 sum16;
#define convert_sum16 convert_uint16
#endif


// The mean sum / divisor rounded half up, as a pixel. With ROUND_BY_FLOAT (the host sets it for
// an odd divisor d < 2^14, 8-bit pixels only) the nearest integer to sum * inverse (1/d rounded to float,
// from the host) is exact: sum / d is never a half-integer, so it lies at least 1/(2d) >
// 3.05e-5 from the nearest half-integer, while sum < 2^24 is exact in float and the product
// is off by at most 255.5 * (2^-23 + 2^-48) < 3.05e-5. Otherwise exact_mean().
inline pixel_t mean_u8(sum4 sum, sum_t divisor, float inverse) {
#ifdef ROUND_BY_FLOAT
  // Adding 1.5 * 2^23 rounds to the nearest integer and leaves it in the low mantissa bits.
  const float4 rounded = convert_float4(as_int4(sum)) * inverse + 12582912.0f;
  return pixel_from_uint4(as_uint4(as_int4(rounded) - 0x4B400000));
#else
  return pixel_from_uint4(exact_mean(sum, divisor));
#endif
}

// The means of four pixels (16 sums) as their samples; as mean_u8() and exact_mean().
inline pixel_sample16_t means16(sum16 sum, sum_t divisor, float inverse) {
#ifdef ROUND_BY_FLOAT
  const float16 rounded = convert_float16(as_int16(sum)) * inverse + 12582912.0f;
  return convert_pixel_sample16_t(as_int16(rounded) - 0x4B400000);
#else
  return (pixel_sample16_t)(pixel_from_uint4(convert_uint4(exact_mean(sum.s0123, divisor))),
                            pixel_from_uint4(convert_uint4(exact_mean(sum.s4567, divisor))),
                            pixel_from_uint4(convert_uint4(exact_mean(sum.s89ab, divisor))),
                            pixel_from_uint4(convert_uint4(exact_mean(sum.scdef, divisor))));
#endif
}

DEFINE_STAGE_ROWS4(uint16, uint4, uint)

// Row window sums S_j of input rows j = j0 .. j0+3 (image rows ytop + j, j past jlast read as
// jlast) for the tile's columns x0 .. x0+n-1 (and on to the next multiple of 4: never used), into
// ring rows slot[0] .. slot[3].
inline void row_sums4(global const pixel_t* src, int w, int h, int edge, int radius, int ytop,
                      int j0, int jlast, int x0, int n, global uint16* staged,
                      global uint4* ring, const int* slot) {
  // Staged column k is pixel x0 - R - 1 + k of each row.
  stage_rows4_uint16(src, w, h, edge, ytop, j0, jlast, x0 - radius - 1, n + 2 * radius + 1,
                     staged);
  // The window of column x0 - 1 (staged 0 .. 2R), then one step a column.
  uint16 sum = 0;
  for (int t = 0; t <= 2 * radius; ++t) sum += staged[t];
  global uint4* out0 = ring + (size_t)slot[0] * TILE_STRIDE;
  global uint4* out1 = ring + (size_t)slot[1] * TILE_STRIDE;
  global uint4* out2 = ring + (size_t)slot[2] * TILE_STRIDE;
  global uint4* out3 = ring + (size_t)slot[3] * TILE_STRIDE;
  global const uint16* enter = staged + 2 * radius + 1;
  for (int i = 0; i < n; i += 4) {
    const uint16 a0 = (sum += enter[i] - staged[i]);
    const uint16 a1 = (sum += enter[i + 1] - staged[i + 1]);
    const uint16 a2 = (sum += enter[i + 2] - staged[i + 2]);
    const uint16 a3 = (sum += enter[i + 3] - staged[i + 3]);
    // a_c holds column i + c of the four rows; ring row r takes columns i .. i+3 of row r.
    STORE_TRANSPOSED4(uint16, (global uint16*)(out0 + i), (global uint16*)(out1 + i),
                      (global uint16*)(out2 + i), (global uint16*)(out3 + i), a0, a1, a2, a3);
  }
}

// The ring rows of S rows j .. j+3: j mod slots .. with the ring (`slots` rows), else rows
// first .. first+3.
inline void ring_slots(int* slot, int j, int slots, int ring, int first) {
  for (int r = 0; r < 4; ++r) slot[r] = ring ? (j + r) % slots : first + r;
}

// scratch, per work-item (uint4 units): V, TILE_W sum4 (as many uint4, twice as many with
// WIDE_SUM); the staged rows, TILE_W + 2R + 8 uint16; the ring, 2R + 5 rows (ring != 0) or 8
// (four entering and four leaving rows) of TILE_STRIDE uint4. The host computes the same size
// (per_item in BoxFilter's constructor, filters/box/box_blur.cpp); with the buffer's base aligned
// (CL_DEVICE_MEM_BASE_ADDR_ALIGN is at least 1024 bits) every uint16 and every ring row starts
// on 64 bytes.
kernel void box_tiled(global const pixel_t* src, global pixel_t* dst, int w, int h, int radius,
                      int edge, sum_t divisor, float inverse, int tile_h, int ring,
                      global uint4* scratch) {
  const int items = get_global_size(0), id = get_global_id(0);
  const int slots = ring ? 2 * radius + 5 : 8;
  const size_t v_size = TILE_W * (sizeof(sum4) / sizeof(uint4));
  const size_t staged_size = 4 * (size_t)(TILE_W + 2 * radius + 8);
  global uint4* base =
      scratch + (size_t)id * (v_size + staged_size + (size_t)slots * TILE_STRIDE);
  global sum16* column = (global sum16*)base;  // V, four pixels an element
  global uint16* staged = (global uint16*)(base + v_size);
  global uint4* rows = base + v_size + staged_size;
  const int tiles_x = (w + TILE_W - 1) / TILE_W, tiles_y = (h + tile_h - 1) / tile_h;
  // Where rows are a multiple of 4 pixels, every run of 4 output pixels is (16-byte) aligned.
  const bool aligned = w % 4 == 0;
  for (int t = id; t < tiles_x * tiles_y; t += items) {
    const int x0 = (t % tiles_x) * TILE_W, y0 = (t / tiles_x) * tile_h;
    const int n = min(TILE_W, w - x0), m = min(tile_h, h - y0);
    const int ytop = y0 - radius - 1, jlast = m + 2 * radius;  // the last row any output needs
    const int quads = (n + 3) / 4;
    // V of output row -1: S_0 + ... + S_2R, four rows at a time (the rows past 2R of the last
    // four are computed, and kept in the ring, but not added).
    for (int q = 0; q < quads; ++q) column[q] = 0;
    for (int j0 = 0; j0 <= 2 * radius; j0 += 4) {
      int slot[4];
      ring_slots(slot, j0, slots, ring, 0);
      row_sums4(src, w, h, edge, radius, ytop, j0, jlast, x0, n, staged, rows, slot);
      for (int r = 0; r < min(4, 2 * radius + 1 - j0); ++r) {
        global const uint16* s = (global const uint16*)(rows + (size_t)slot[r] * TILE_STRIDE);
        for (int q = 0; q < quads; ++q) column[q] += convert_sum16(s[q]);
      }
    }
    for (int p0 = 0; p0 < m; p0 += 4) {
      // Output rows p0 .. p0+3: entering S rows p0 + 2R + 1 .., leaving S rows p0 ...
      int enter_slot[4], leave_slot[4];
      ring_slots(enter_slot, p0 + 2 * radius + 1, slots, ring, 0);
      ring_slots(leave_slot, p0, slots, ring, 4);
      row_sums4(src, w, h, edge, radius, ytop, p0 + 2 * radius + 1, jlast, x0, n, staged, rows,
                enter_slot);
      if (!ring) row_sums4(src, w, h, edge, radius, ytop, p0, jlast, x0, n, staged, rows, leave_slot);
      global const uint16* enter[4];
      global const uint16* leave[4];
      for (int r = 0; r < 4; ++r) {
        enter[r] = (global const uint16*)(rows + (size_t)enter_slot[r] * TILE_STRIDE);
        leave[r] = (global const uint16*)(rows + (size_t)leave_slot[r] * TILE_STRIDE);
      }
      const int outputs = min(4, m - p0);
      global pixel_t* out = dst + (size_t)(y0 + p0) * w + x0;
      // Whole quads of four output rows: nothing to test in the loop.
      int q = 0;
      if (outputs == 4) {
        for (; q < n / 4; ++q) {
          sum16 v = column[q];
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            v += convert_sum16(enter[r][q]) - convert_sum16(leave[r][q]);
            store_pixels4(means16(v, divisor, inverse), out + r * (size_t)w + 4 * q, aligned);
          }
          column[q] = v;
        }
      }
      // The rest: the last rows of the tile, or its last 1-3 columns.
      for (; q < quads; ++q) {
        sum16 v = column[q];
        for (int r = 0; r < outputs; ++r) {
          v += convert_sum16(enter[r][q]) - convert_sum16(leave[r][q]);
          store_pixels_first(means16(v, divisor, inverse), out + r * (size_t)w + 4 * q, n - 4 * q);
        }
        column[q] = v;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// fused: one pass over RGBA8 buffers for GPUs. A work-group of FUSED_CHUNKS x FUSED_ROWS
// work-items owns an output tile of FUSED_CHUNKS * FUSED_K columns by tile_h rows, and the
// n = tile width + 2R input columns its windows cover. It walks down the tile FUSED_ROWS
// output rows at a time, in three phases separated by barriers:
//   1. columns: work-item t owns input columns t, t + items, ... (FUSED_COLS of them, read
//      together: every read of the batch in flight at once); for each it moves the vertical
//      running sum V by the entering row y + R and the leaving row y - R - 1 (two coalesced
//      reads a pixel, the leaving one from the cache) and writes V of each of the batch's rows
//      to local memory. V of the batch's last row is the next batch's start. The next batch's
//      reads are issued before this batch's barrier, so that they load during phases 2 and 3.
//   2. rows: work-item (i, b) slides the row window along FUSED_K outputs of batch row b over
//      the V in local memory (its first window from chunk sums, see below; then 2 columns an
//      output, the leaving one from registers) and writes the 8-bit means to a local output
//      tile;
//   3. stores: the output tile goes out with neighbouring work-items writing neighbouring
//      pixels, 16 bytes each (FUSED_VEC pixels) where rows are a multiple of FUSED_VEC pixels.
// Global memory sees each input pixel read about (n / tile width) (1 + (2R+1) / tile_h)
// times, mostly from the cache, and each output written once: no intermediate image.
// FUSED_K is odd, so that the work-items of phase 2, FUSED_K entries apart, read and write
// different local-memory banks without padding.
#ifndef FUSED_CHUNKS
#define FUSED_CHUNKS 16  // work-items along a row in phase 2 (local size x)
#endif
#ifndef FUSED_ROWS
#define FUSED_ROWS 8  // output rows per batch (local size y)
#endif
#ifndef FUSED_K
#define FUSED_K 19  // outputs per work-item in phase 2
#endif
#ifndef FUSED_COLS
#define FUSED_COLS 1  // input columns a work-item reads at once (the host: n / items, up to 8)
#endif
#ifndef FUSED_PACK
#define FUSED_PACK 1  // column sums added at a time in their 16-bit lanes (FUSED_SUM_COLUMNS)
#endif
#define FUSED_W (FUSED_CHUNKS * FUSED_K)  // output columns of a tile
#define FUSED_STEP (FUSED_COLS * FUSED_CHUNKS * FUSED_ROWS)
// Pixels in a 16-byte store: 4 RGBA8 or 2 RGBA16.
#define FUSED_VEC (16 / (int)sizeof(pixel_t))
// Row stride of the output tile in local memory: a multiple of 4 pixels (16-byte rows for
// phase 3) at least FUSED_W, and FUSED_CHUNKS banks past a multiple of 32 (rounded up to 4), so
// that the rows that share a sub-group in phase 2 write different banks (16x8 with K 19: 304,
// no padding).
#define FUSED_W4 ((FUSED_W + 3) / 4 * 4)
#define FUSED_OUT_BANK ((((FUSED_CHUNKS % 32) + 3) / 4) * 4)
#define FUSED_OUT_STRIDE (FUSED_W4 + ((FUSED_OUT_BANK - FUSED_W4 % 32 + 32) % 32))

// V of one column is at most 255 (2R+1) at 8 bits. Up to R = 128 that fits 16 bits a channel,
// so V is kept as two words of two 16-bit lanes (channels 0 and 2, 1 and 3) and moved with two
// adds a pixel instead of four: the lanes never carry into each other, because sums and
// differences are exact modulo 2^32 and every final lane value lies in 0..65535. FUSED_WIDE
// (above R = 128, and always for 16-bit pixels): 32 bits a channel.
#if defined(PIXEL16) && !defined(FUSED_WIDE)
#define FUSED_WIDE
#endif
#ifdef FUSED_WIDE
typedef uint4 column_t;
inline column_t column_of(pixel_word_t p) { return pixel_samples(p); }
inline uint4 column_value(column_t v) { return v; }
#else
typedef uint2 column_t;
inline column_t column_of(uint p) { return (uint2)(p & 0x00ff00ffu, (p >> 8) & 0x00ff00ffu); }
inline uint4 column_value(column_t v) {
  return (uint4)(v.x & 0xffffu, v.y & 0xffffu, v.x >> 16, v.y >> 16);
}
#endif

// FUSED_FLIP: the tiles of odd tile rows walk up, as a tile of the image turned upside down
// (the last row first, a row pitch of -w; every edge mode is symmetric, so the box sums are the
// same). Two neighbouring tiles then start at their shared edge at the same time, reading the
// same 2R+1 rows for their first windows (one of them mostly from the cache). The host sets it
// from R 40, where it measured 2-5% faster on the H100 (4% at R 63 with a register cap; no gain
// below: NOTES: fused, 19 outputs a work-item).
#ifdef FUSED_FLIP
#define FUSED_ROW_OFFSET(y, pitch) ((long)(y) * (pitch))
#else
#define FUSED_ROW_OFFSET(y, pitch) ((size_t)(y) * (pitch))
#endif
// Row y (any integer) through the edge mode as a pointer that can always be read (the zero
// mode's rows outside the image point at row 0) and a mask that zeroes what it reads there.
// Loads stay unconditional, so that a work-item can have many in flight: a load under a
// condition is a branch, and the GPU waits for it before going on.
inline global const pixel_word_t* masked_row(global const pixel_t* src, int y, int pitch, int h,
                                             int edge, uint* mask) {
  const int yy = edge_index(y, h, edge);
  *mask = yy < 0 ? 0u : ~0u;
  return (global const pixel_word_t*)(src + FUSED_ROW_OFFSET(max(yy, 0), pitch));
}

// Image column of tile column c (from x0 - R) through the edge mode, always readable, and the
// mask that zeroes what is read there; c past the tile (n and up) reads column n - 1.
inline int fused_column(int c, int n, int x0, int radius, int w, int edge, uint* mask) {
  const int xi = edge_index(x0 - radius + min(c, n - 1), w, edge);
  *mask = xi < 0 ? 0u : ~0u;
  return max(xi, 0);
}

#ifdef FUSED_RADIUS  // box_fused is built for one radius
// Phase 2's first window, from chunk sums. Work-item (i, b) owns the FUSED_K columns
// o0 = i K .. o0 + K - 1 of batch row b (its chunk) and their outputs; the first output's window
// is columns o0 .. o0 + 2R. With Q = (2R+1) / K whole chunks in it and F = (2R+1) % K columns
// past them, the window is built from chunk sums (each work-item sums its own chunk once, from
// the registers that also give the slide its leaving columns; FUSED_EXCHANGE more are passed
// through local memory) and single columns:
//   Q = 0:      the first F columns of the own chunk (registers only);
//   otherwise:  chunks i .. i + E (E = FUSED_EXCHANGE) and the columns after them up to o0 + 2R
//               (F of them where E = Q - 1), or, where E = Q and F > K / 2 (FUSED_LESS), chunks
//               i .. i + Q less their last K - F columns (the slide's first entering columns).
// FUSED_NC is the most a window can use: Q - 1, or Q where F > K / 2. The host passes the
// largest E <= FUSED_NC whose sums fit local memory (all of them up to R 127 with 16x8 in 48
// KiB; E = 0 needs no local memory and no barrier). The chunks past the tile's last (halo
// columns) are summed by work-items 0 .. E - 1.
// Against one column read at a time (2R reads a window, then 2 an output), phase 2's local
// reads a work-item (K 17 then) go from 94 to about 61 at R 30, from 160 to about 65 at R 63, and
// from 36 to 34 at R 1 (NOTES: fused, 17 outputs a work-item). The radius is a build constant
// (FUSED_RADIUS).
#define FUSED_FQ ((2 * FUSED_RADIUS + 1) / FUSED_K)
#define FUSED_FR ((2 * FUSED_RADIUS + 1) % FUSED_K)
#define FUSED_NC (FUSED_FQ > 0 && FUSED_FR > FUSED_K / 2 ? FUSED_FQ : FUSED_FQ - 1)
#ifndef FUSED_EXCHANGE
#define FUSED_EXCHANGE 0
#endif
#if FUSED_EXCHANGE > FUSED_NC && FUSED_EXCHANGE > 0
#error "FUSED_EXCHANGE is more than a window uses"
#endif
#define FUSED_LESS (FUSED_FQ > 0 && FUSED_FR > FUSED_K / 2 && FUSED_EXCHANGE == FUSED_FQ)

// The sum of columns v[0 .. count - 1], FUSED_PACK at a time in their 16-bit lanes.
#define FUSED_SUM_COLUMNS(s, v, count)                                   \
  do {                                                                   \
    _Pragma("unroll") for (int c_ = 0; c_ < (count); c_ += FUSED_PACK) { \
      column_t a_ = (v)[c_];                                             \
      _Pragma("unroll") for (int q_ = 1; q_ < FUSED_PACK; ++q_) {        \
        if (c_ + q_ < (count)) a_ += (v)[c_ + q_];                       \
      }                                                                  \
      (s) += convert_sum4(column_value(a_));                             \
    }                                                                    \
  } while (0)

// Phase 1's reads for the batch of output rows yb .. yb + FUSED_ROWS - 1: the entering and
// leaving pixel of each row in tile columns c0, c0 + items, ... (FUSED_COLS of them), unmasked,
// all in flight at once.
inline void fused_reads(global const pixel_t* src, int w, int pitch, int h, int edge, int radius,
                        int x0, int n, int yb, int c0, int items,
                        pixel_word_t enter[FUSED_ROWS][FUSED_COLS],
                        pixel_word_t leave[FUSED_ROWS][FUSED_COLS]) {
  int x[FUSED_COLS];
#pragma unroll
  for (int j = 0; j < FUSED_COLS; ++j) {
    uint column_mask;
    x[j] = fused_column(c0 + j * items, n, x0, radius, w, edge, &column_mask);
  }
#pragma unroll
  for (int b = 0; b < FUSED_ROWS; ++b) {
    uint mask;
    global const pixel_word_t* enter_row = masked_row(src, yb + b + radius, pitch, h, edge, &mask);
    global const pixel_word_t* leave_row =
        masked_row(src, yb + b - radius - 1, pitch, h, edge, &mask);
#pragma unroll
    for (int j = 0; j < FUSED_COLS; ++j) {
      enter[b][j] = enter_row[x[j]];
      leave[b][j] = leave_row[x[j]];
    }
  }
}

// Adds rows k .. k + rows - 1 (rows <= FUSED_START_ROWS, a constant at each call) of tile
// columns x[] to the column sums v[], every read in flight at once. 16 rows a block, and the
// last (2R+1) % 16 rows as one block instead of one row at a time: 1-3% faster than 8 rows and
// single rows on the H100 (NOTES: fused, 19 outputs a work-item).
#ifndef FUSED_START_ROWS
#define FUSED_START_ROWS 16
#endif
#define FUSED_START_REST ((2 * FUSED_RADIUS + 1) % FUSED_START_ROWS)
inline void fused_start_block(global const pixel_t* src, int pitch, int h, int edge, int k,
                              int rows, const int x[FUSED_COLS],
                              const uint column_mask[FUSED_COLS], column_t v[FUSED_COLS]) {
  pixel_word_t p[FUSED_START_ROWS][FUSED_COLS];
  uint mask[FUSED_START_ROWS];
#pragma unroll
  for (int r = 0; r < FUSED_START_ROWS; ++r) {
    if (r < rows) {
      global const pixel_word_t* row = masked_row(src, k + r, pitch, h, edge, &mask[r]);
#pragma unroll
      for (int j = 0; j < FUSED_COLS; ++j) p[r][j] = row[x[j]];
    }
  }
#pragma unroll
  for (int r = 0; r < FUSED_START_ROWS; ++r)
    if (r < rows) {
#pragma unroll
      for (int j = 0; j < FUSED_COLS; ++j) v[j] += column_of(p[r][j] & mask[r] & column_mask[j]);
    }
}

// cols: FUSED_ROWS rows of n column_t; out: FUSED_ROWS rows of FUSED_OUT_STRIDE pixels,
// declared as uint4 so that it is 16-byte aligned for phase 3; chunk_sums: FUSED_ROWS rows of
// FUSED_CHUNKS + FUSED_EXCHANGE sums (unused where FUSED_EXCHANGE is 0). The radius and edge
// arguments (box_tiled's layout) are the build constants FUSED_RADIUS and FUSED_EDGE: the masks of
// the clamp and mirror modes then compile away, 1-6% faster on the H100.
kernel void box_fused(global const pixel_t* src_arg, global pixel_t* dst_arg, int w, int h,
                      int radius_arg, int edge_arg, sum_t divisor, float inverse, int tile_h,
                      local column_t* cols, local uint4* out_tile, local sum4* chunk_sums) {
  const int radius = FUSED_RADIUS, edge = FUSED_EDGE;
  local pixel_t* out = (local pixel_t*)out_tile;
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int t = ly * FUSED_CHUNKS + lx, items = FUSED_CHUNKS * FUSED_ROWS;
  const int x0 = get_group_id(0) * FUSED_W, n = FUSED_W + 2 * radius;
  int y0 = get_group_id(1) * tile_h, y1 = min(y0 + tile_h, h);
#ifdef FUSED_FLIP
  const bool flip = get_group_id(1) & 1;
  global const pixel_t* src = flip ? src_arg + (size_t)(h - 1) * w : src_arg;
  global pixel_t* dst = flip ? dst_arg + (size_t)(h - 1) * w : dst_arg;
  const int pitch = flip ? -w : w;
  if (flip) {
    const int f0 = h - y1;
    y1 = h - y0;
    y0 = f0;
  }
#else
  global const pixel_t* src = src_arg;
  global pixel_t* dst = dst_arg;
  const int pitch = w;
#endif
  local column_t* last = cols + (FUSED_ROWS - 1) * n;
  // V of row y0 - 1 (input rows y0 - R - 1 .. y0 + R - 1), where phase 1 expects the last
  // batch's; FUSED_START_ROWS rows of FUSED_COLS columns' reads in flight at a time.
  for (int c0 = t; c0 < n; c0 += FUSED_STEP) {
    int x[FUSED_COLS];
    uint column_mask[FUSED_COLS];
    column_t v[FUSED_COLS];
#pragma unroll
    for (int j = 0; j < FUSED_COLS; ++j) {
      x[j] = fused_column(c0 + j * items, n, x0, radius, w, edge, &column_mask[j]);
      v[j] = 0;
    }
    // 2R + 1 rows: whole blocks of FUSED_START_ROWS, then the rest as one block (every read of
    // a block in flight at once).
    int k = y0 - radius - 1;
    for (; k + FUSED_START_ROWS <= y0 + radius; k += FUSED_START_ROWS)
      fused_start_block(src, pitch, h, edge, k, FUSED_START_ROWS, x, column_mask, v);
#if FUSED_START_REST > 0
    fused_start_block(src, pitch, h, edge, k, FUSED_START_REST, x, column_mask, v);
#endif
#pragma unroll
    for (int j = 0; j < FUSED_COLS; ++j)
      if (c0 + j * items < n) last[c0 + j * items] = v[j];
  }
  // 16-byte stores need x0 (FUSED_CHUNKS % FUSED_VEC == 0) and every row (w % FUSED_VEC == 0)
  // 16-byte aligned.
#if FUSED_CHUNKS % (16 / PIXEL_BYTES) == 0
  const bool vector_stores = (w % FUSED_VEC) == 0;
#else
  const bool vector_stores = false;
#endif
  // Phase 1's reads of a batch's first round of columns are issued one batch ahead, so that
  // they are in flight during the previous batch's phases 2 and 3.
  pixel_word_t enter[FUSED_ROWS][FUSED_COLS], leave[FUSED_ROWS][FUSED_COLS];
  fused_reads(src, w, pitch, h, edge, radius, x0, n, y0, t, items, enter, leave);
  for (int yb = y0; yb < y1; yb += FUSED_ROWS) {
    uint enter_mask[FUSED_ROWS], leave_mask[FUSED_ROWS];
#pragma unroll
    for (int b = 0; b < FUSED_ROWS; ++b) {
      masked_row(src, yb + b + radius, pitch, h, edge, &enter_mask[b]);
      masked_row(src, yb + b - radius - 1, pitch, h, edge, &leave_mask[b]);
    }
    for (int c0 = t; c0 < n; c0 += FUSED_STEP) {  // phase 1
      if (c0 != t) fused_reads(src, w, pitch, h, edge, radius, x0, n, yb, c0, items, enter, leave);
#pragma unroll
      for (int j = 0; j < FUSED_COLS; ++j) {
        const int c = c0 + j * items;
        if (c >= n) break;
        uint column_mask;
        fused_column(c, n, x0, radius, w, edge, &column_mask);
        column_t v = last[c];
#pragma unroll
        for (int b = 0; b < FUSED_ROWS; ++b) {
          v += column_of(enter[b][j] & enter_mask[b] & column_mask) -
               column_of(leave[b][j] & leave_mask[b] & column_mask);
          cols[b * n + c] = v;
        }
      }
    }
    // The next batch's first round (past the tile: rows that can be read, never used).
    fused_reads(src, w, pitch, h, edge, radius, x0, n, yb + FUSED_ROWS, t, items, enter, leave);
    barrier(CLK_LOCAL_MEM_FENCE);
    {  // phase 2: outputs o0 .. o0 + FUSED_K - 1 of batch row ly read columns o0 .. o0 + K + 2R
      local const column_t* row = cols + ly * n + lx * FUSED_K;
      local pixel_t* means = out + ly * FUSED_OUT_STRIDE + lx * FUSED_K;
      column_t own[FUSED_K];  // the chunk: the slide's leaving columns
#pragma unroll
      for (int i = 0; i < FUSED_K; ++i) own[i] = row[i];
      sum4 s = 0;
#if FUSED_FQ == 0
      FUSED_SUM_COLUMNS(s, own, FUSED_FR);
#else
      FUSED_SUM_COLUMNS(s, own, FUSED_K);
#if FUSED_EXCHANGE > 0
      local sum4* sums = chunk_sums + ly * (FUSED_CHUNKS + FUSED_EXCHANGE);
      sums[lx] = s;
      for (int c = lx; c < FUSED_EXCHANGE; c += FUSED_CHUNKS) {  // the halo's chunks
        local const column_t* halo = row + (FUSED_CHUNKS + c - lx) * FUSED_K;
        sum4 hs = 0;
        FUSED_SUM_COLUMNS(hs, halo, FUSED_K);
        sums[FUSED_CHUNKS + c] = hs;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
      for (int j = 1; j <= FUSED_EXCHANGE; ++j) s += sums[lx + j];
#endif
#if FUSED_LESS
      {
        sum4 less = 0;
        FUSED_SUM_COLUMNS(less, row + 2 * FUSED_RADIUS + 1, FUSED_K - FUSED_FR);
        s -= less;
      }
#else
      FUSED_SUM_COLUMNS(s, row + (FUSED_EXCHANGE + 1) * FUSED_K,
                        2 * FUSED_RADIUS + 1 - (FUSED_EXCHANGE + 1) * FUSED_K);
#endif
#endif
#pragma unroll
      for (int i = 0; i < FUSED_K; ++i) {
        means[i] = mean_u8(s, divisor, inverse);
        if (i + 1 < FUSED_K)
          s += convert_sum4(column_value(row[i + 2 * FUSED_RADIUS + 1])) -
               convert_sum4(column_value(own[i]));
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (vector_stores) {  // phase 3, FUSED_VEC pixels a work-item at a time
      for (int k = t; k < FUSED_ROWS * (FUSED_W / FUSED_VEC); k += items) {
        const int b = k / (FUSED_W / FUSED_VEC), q = k % (FUSED_W / FUSED_VEC), y = yb + b,
                  x = x0 + FUSED_VEC * q;
        if (y < y1 && x < w)
          *(global uint4*)(dst + FUSED_ROW_OFFSET(y, pitch) + x) =
              ((local const uint4*)(out + b * FUSED_OUT_STRIDE))[q];
      }
    } else {
      for (int k = t; k < FUSED_ROWS * FUSED_W; k += items) {
        const int b = k / FUSED_W, o = k % FUSED_W, y = yb + b, x = x0 + o;
        if (y < y1 && x < w) dst[FUSED_ROW_OFFSET(y, pitch) + x] = out[b * FUSED_OUT_STRIDE + o];
      }
    }
    // The next batch's phase 1 writes `cols`, which phase 2 has finished reading; its phase 2
    // writes `out` (and the chunk sums) only after the next barrier, when every phase 3 here
    // (and every read of the chunk sums) is done.
  }
}

#endif  // FUSED_RADIUS
