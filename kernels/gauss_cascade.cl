// Gaussian, fast method: the extended box cascade (Gwosdek, Grewenig, Bruhn, Weickert,
// "Theoretical foundations of Gaussian convolution by extended box filtering", SSVM 2011; the
// method of Pillow's GaussianBlur). Along each axis, CASCADE_K boxes of integer radius r with
// weight alpha on the two taps at distance r + 1, divided by L = 2r + 1 + 2 alpha, so that the
// variance K (r(r+1)(2r+1)/3 + 2 alpha (r+1)^2) / L equals sigma^2
// (filters/gauss/gauss_weights.h, gauss_box_cascade). The cascade is one convolution with the
// K-fold box, reach K (r + 1), of the input extended by the edge mode: what
// gauss_cascade_reference() computes on the CPU, and what a tile with a halo of that reach gives.
//
// A work-item takes one line (a row in gauss_cascade_rows, a column in gauss_cascade_cols) and
// walks along it once, all K boxes fused: at step t box 1 produces its result at t + (K-1)(r+1),
// box k at t + (K-k)(r+1), box K the output at t. Each box keeps a running window sum (constant
// cost in r) of the previous box's results, which it reads from a ring of 2r + 3 of them in
// `ring` (box 1 reads the input itself; the layout: RING below).
// The walk starts 2 (K - 1)(r + 1) steps before its first output, while the rings fill (zeros
// count as not yet produced, so every window sum is exact once its window is produced). A line
// may be cut into segments of `segment` positions, one work-item each (global dimension 1), for
// more work-items at the price of that start per segment.
//
// Compile-time parameters (-D), with their defaults:
#ifndef CASCADE_K
#define CASCADE_K 3  // boxes along each axis
#endif

// Window sums are exact: each value enters and leaves them as the same fixed-point integer
// (cascade_fixed: CASCADE_ONE units a level), summed in 32 bits that wrap, so that a box's
// result is a function of its window alone, not of where the walk began: tiles, strips and
// segments give the same bytes as one run. A window sum is at most PIXEL_MAX CASCADE_ONE
// (2r + 3) < 2^32 for r <= 1364 (the reach limit, kMaxGaussRadius 4096, with three boxes), so
// its value survives the wrapping. A box's result is computed in float from the exact sum and
// kept as float; rounding it to 1/CASCADE_ONE of a level as it enters the next box's sums
// moves it at most 1/8192 of an 8-bit level or 1/32 of a 16-bit one.
#ifndef CASCADE_ONE
#ifdef PIXEL16
#define CASCADE_ONE 16.0f
#else
#define CASCADE_ONE 4096.0f
#endif
#endif
#define CASCADE_ONE_INV (1.0f / CASCADE_ONE)
inline uint4 cascade_fixed(float4 v) { return as_uint4(convert_int4(rint(v * CASCADE_ONE))); }

// A box's ring slot: by default [box][slot][walk], so that neighbouring work-items (neighbouring
// columns) touch neighbouring addresses (GPUs); with CASCADE_RING_WALK_MAJOR [walk][box][slot],
// a walk's rings contiguous in its core's cache (CPUs).
#ifdef CASCADE_RING_WALK_MAJOR
#define RING(k, s) ring[((size_t)line * (CASCADE_K - 1) + (k)) * m + (s)]
#else
#define RING(k, s) ring[((size_t)(k) * m + (s)) * lines + line]
#endif

// The walk along positions [p0, p1) of a line, as described above. The kernel defines
// LOAD(i) (position i of the line through the edge mode, in levels; any i) and STORE(i, v) (the
// result at i), and has radius, alpha, inv_l (1 / L), ring, lines (the rings' stride: lines
// times segments) and line (this walk's column of the rings) in scope.
#define CASCADE_WALK(p0, p1)                                                                 \
  do {                                                                                       \
    const int m = 2 * radius + 3, step = radius + 1;                                         \
    const int t0 = (p0) - 2 * (CASCADE_K - 1) * step;                                        \
    uint4 sum[CASCADE_K];                                                                    \
    float4 prev[CASCADE_K];                                                                  \
    for (int k = 0; k < CASCADE_K; ++k) {                                                    \
      sum[k] = 0;                                                                            \
      prev[k] = 0.0f;                                                                        \
    }                                                                                        \
    /* box 1's window of position q1 - 1, q1 its first position: [q1 - r - 1, q1 + r - 1] */ \
    const int q1 = t0 + (CASCADE_K - 1) * step;                                              \
    for (int i = q1 - radius - 1; i < q1 + radius; ++i) sum[0] += cascade_fixed(LOAD(i));    \
    for (int k = 0; k < CASCADE_K - 1; ++k)                                                  \
      for (int s = 0; s < m; ++s) RING(k, s) = 0.0f;                                         \
    for (int t = t0; t < (p1); ++t) {                                                         \
      const int slot = (t - t0) % m, old_slot = (t - t0 + 1) % m;                            \
      const int q = t + (CASCADE_K - 1) * step; /* box 1's position */                       \
      /* box k's input (the previous box's results; the input for box 1) at q_k + r + 1, */  \
      /* q_k + r and q_k - r - 1, q_k = q - (k - 1)(r + 1) its position */                   \
      float4 in_new = LOAD(q + radius + 1), in_last = LOAD(q + radius),                      \
             in_old = LOAD(q - radius - 1);                                                  \
      for (int k = 0; k < CASCADE_K; ++k) {                                                  \
        if (k > 0) {                                                                         \
          in_old = RING(k - 1, old_slot);                                                    \
          in_last = prev[k];                                                                 \
          prev[k] = in_new;                                                                  \
          RING(k - 1, slot) = in_new;                                                        \
        }                                                                                    \
        sum[k] += cascade_fixed(in_last) - cascade_fixed(in_old);                            \
        in_new = (convert_float4(sum[k]) * CASCADE_ONE_INV + alpha * (in_old + in_new)) *    \
                 inv_l;                                                                      \
      }                                                                                      \
      if (t >= (p0)) STORE(t, in_new);                                                          \
    }                                                                                        \
  } while (0)

// Pixel i of a row of n through the edge mode, in levels.
inline float4 cascade_pixel(global const pixel_word_t* row, int i, int n, int edge) {
  const int j = edge_index(i, n, edge);
  return j < 0 ? (float4)(0.0f) : convert_float4(pixel_samples(row[j]));
}

// Row i of column `col` (stride w) of the intermediate through the edge mode.
inline float4 cascade_mid(global const float4* col, int i, int n, int w, int edge) {
  const int j = edge_index(i, n, edge);
  return j < 0 ? (float4)(0.0f) : col[(size_t)j * w];
}

// The rows: src (w x h pixels) -> mid (w x h float4, levels). One work-item a segment of a row;
// ring: (K - 1) (2r + 3) h ceil(w / segment) float4.
kernel void gauss_cascade_rows(global const pixel_word_t* src, global float4* mid, int w, int h,
                               int edge, int radius, float alpha, float inv_l, global float4* ring,
                               int segment) {
  const int y = get_global_id(0), p0 = get_global_id(1) * segment;
  if (y >= h || p0 >= w) return;
  const size_t lines = (size_t)h * get_global_size(1), line = (size_t)get_global_id(1) * h + y;
  global const pixel_word_t* row = src + (size_t)y * w;
  global float4* out = mid + (size_t)y * w;
#define LOAD(i) cascade_pixel(row, (i), w, edge)
#define STORE(i, v) out[(i)] = (v)
  CASCADE_WALK(p0, min(p0 + segment, w));
#undef LOAD
#undef STORE
}

// The columns: mid -> dst (w x h pixels), rounded to the nearest level. One work-item a segment
// of a column; ring: (K - 1) (2r + 3) w ceil(h / segment) float4.
kernel void gauss_cascade_cols(global const float4* mid, global pixel_word_t* dst, int w, int h,
                               int edge, int radius, float alpha, float inv_l, global float4* ring,
                               int segment) {
  const int x = get_global_id(0), p0 = get_global_id(1) * segment;
  if (x >= w || p0 >= h) return;
  const size_t lines = (size_t)w * get_global_size(1), line = (size_t)get_global_id(1) * w + x;
  global const float4* col = mid + x;
#define LOAD(i) cascade_mid(col, (i), h, w, edge)
#define STORE(i, v) dst[(size_t)(i) * w + x] = pixel_word(convert_uint4(convert_pixel_t(v)))
  CASCADE_WALK(p0, min(p0 + segment, h));
#undef LOAD
#undef STORE
}
