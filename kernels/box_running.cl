// Box filter, running-sum schedules: accumulated, unrolled, scan, segmented, segmented-local.
// The window sum slides along a row (box_rows_segmented; box_rows_segmented_local), then down a
// column (box_cols_segmented; box_cols_scan for scan; box_cols_ring for segmented and
// segmented-local, where its work-groups fit), so that a pixel's cost does not depend on R.
// The sum types, loads, stores and the exact mean come from kernels/box_common.cl (its header:
// what the sums mean, and why they are exact), which the host builds before this file.
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
