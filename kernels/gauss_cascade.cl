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
// (2r + 3) < 2^31 for r <= 1364 (the reach limit, kMaxGaussRadius 4096, with three boxes), so
// its value survives the wrapping and converts as a signed integer (one instruction on CPUs).
// A box's result is computed in float from the exact sum, with an explicit fma (correctly
// rounded on every device, where a contracted a * b + c is the compiler's choice; the streams
// walk below computes each result twice and needs both the same), and kept as float; rounding
// it to 1/CASCADE_ONE of a level as it enters the next box's sums moves it at most 1/4096 of
// an 8-bit level or 1/16 of a 16-bit one.
#ifndef CASCADE_ONE
#ifdef PIXEL16
#define CASCADE_ONE 8.0f
#else
#define CASCADE_ONE 2048.0f
#endif
#endif
#define CASCADE_ONE_INV (1.0f / CASCADE_ONE)
// v CASCADE_ONE to the nearest integer, ties to even, for 0 <= v CASCADE_ONE < 2^22 (at most
// PIXEL_MAX CASCADE_ONE < 2^20 here): adding 1.5 2^23 leaves the rounded integer in the low
// mantissa bits. One add (or multiply-add) and one integer subtraction at full rate, where a
// float-to-integer conversion runs at a quarter of it on NVIDIA GPUs and is a library call on
// PoCL in round-to-nearest. Only the rounding's determinism matters: a value enters and leaves a
// sum as the same integer.
#define CASCADE_MAGIC 12582912.0f  // 1.5 2^23, whose bits are 0x4B400000
inline uint4 cascade_fixed(float4 v) {
  return as_uint4(v * CASCADE_ONE + CASCADE_MAGIC) - 0x4B400000u;
}
inline uint cascade_fixed1(float v) { return as_uint(v * CASCADE_ONE + CASCADE_MAGIC) - 0x4B400000u; }

// Lanes: neighbouring lines one work-item walks side by side (CASCADE_COLS in the columns pass;
// the rows pass walks one row). On a CPU, where a core runs a work-item's whole walk before the
// next, a walk down one column touches one pixel of every 48 KiB row; 16 columns side by side
// use whole cache lines. GPUs take 1: neighbouring work-items are the neighbouring columns.
#ifndef CASCADE_COLS
#define CASCADE_COLS 1
#endif

// A ring slot of lane c of `lanes` a walk: by default [box][slot][lane], lanes numbered across the work-items
// (lines of them in all), so that neighbouring work-items touch neighbouring addresses (GPUs);
// with CASCADE_RING_WALK_MAJOR [walk][box][slot][lane], a walk's rings contiguous in its core's
// cache (CPUs).
#ifdef CASCADE_RING_WALK_MAJOR
#define RING(k, s, c, lanes) ring[(((size_t)walk * (CASCADE_K - 1) + (k)) * m + (s)) * (lanes) + (c)]
#else
#define RING(k, s, c, lanes) ring[((size_t)(k) * m + (s)) * lines + walk * (lanes) + (c)]
#endif

// The walk along positions [p0, p1) of LANES lines of n, as described above, through the
// kernel's accessors LOAD(i, c) (position i of lane c through the edge mode, in levels; any i),
// LOAD_IN(i, c) (the same for i in [0, n), without the edge mode) and STORE(i, c, v) (the
// result at i); radius, alpha, inv_l (1 / L), ring, lines (lanes of all walks) and walk (this
// walk's number) in scope. The accessors are file-scope macros, so that each kernel's text
// holds no directive and can be built alone (runtime/cl_runtime.h, select_kernels).
#define CASCADE_WALK(p0, p1, n, LANES, LOAD, LOAD_IN, STORE)                                    \
  do {                                                                                          \
    const int m = 2 * radius + 3, step = radius + 1;                                            \
    const int t0 = (p0) - 2 * (CASCADE_K - 1) * step;                                           \
    uint4 sum[CASCADE_K][LANES];                                                                \
    float4 prev[CASCADE_K][LANES];                                                              \
    /* box 1's window of position q1 - 1, q1 its first position: [q1 - r - 1, q1 + r - 1] */    \
    const int q1 = t0 + (CASCADE_K - 1) * step;                                                 \
    for (int c = 0; c < LANES; ++c) {                                                           \
      for (int k = 0; k < CASCADE_K; ++k) {                                                     \
        sum[k][c] = 0;                                                                          \
        prev[k][c] = 0.0f;                                                                      \
      }                                                                                         \
      for (int i = q1 - radius - 1; i < q1 + radius; ++i) sum[0][c] += cascade_fixed(LOAD(i, c)); \
      for (int k = 0; k < CASCADE_K - 1; ++k)                                                   \
        for (int s = 0; s < m; ++s) RING(k, s, c, LANES) = 0.0f;                                       \
    }                                                                                           \
    for (int t = t0; t < (p1); ++t) {                                                           \
      const int slot = (t - t0) % m, old_slot = (t - t0 + 1) % m;                               \
      const int q = t + (CASCADE_K - 1) * step; /* box 1's position */                          \
      const bool inside = q - radius - 1 >= 0 && q + radius + 1 < (n);                          \
      for (int c = 0; c < LANES; ++c) {                                                         \
        /* box k's input (the previous box's results; the input for box 1) at q_k + r + 1, */   \
        /* q_k + r and q_k - r - 1, q_k = q - (k - 1)(r + 1) its position */                    \
        float4 in_new, in_last, in_old;                                                         \
        if (inside) {                                                                           \
          in_new = LOAD_IN(q + radius + 1, c);                                                  \
          in_last = LOAD_IN(q + radius, c);                                                     \
          in_old = LOAD_IN(q - radius - 1, c);                                                  \
        } else {                                                                                \
          in_new = LOAD(q + radius + 1, c);                                                     \
          in_last = LOAD(q + radius, c);                                                        \
          in_old = LOAD(q - radius - 1, c);                                                     \
        }                                                                                       \
        for (int k = 0; k < CASCADE_K; ++k) {                                                   \
          if (k > 0) {                                                                          \
            in_old = RING(k - 1, old_slot, c, LANES);                                                  \
            in_last = prev[k][c];                                                               \
            prev[k][c] = in_new;                                                                \
            RING(k - 1, slot, c, LANES) = in_new;                                                      \
          }                                                                                     \
          sum[k][c] += cascade_fixed(in_last) - cascade_fixed(in_old);                          \
          in_new = fma((float4)(alpha), in_old + in_new,                                        \
                       convert_float4(as_int4(sum[k][c])) * CASCADE_ONE_INV) *                  \
                   inv_l;                                                                       \
        }                                                                                       \
        if (t >= (p0)) STORE(t, c, in_new);                                                     \
      }                                                                                         \
    }                                                                                           \
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

// The rows pass's accessors (row, out: the kernel's row of src and of mid).
#define ROWS_LOAD(i, c) cascade_pixel(row, (i), w, edge)
#define ROWS_LOAD_IN(i, c) convert_float4(pixel_samples(row[(i)]))
#define ROWS_STORE(i, c, v) out[(i)] = (v)

// The rows: src (w x h pixels) -> mid (w x h float4, levels). One work-item a segment of a row;
// ring: (K - 1) (2r + 3) h ceil(w / segment) float4.
kernel void gauss_cascade_rows(global const pixel_word_t* src, global float4* mid, int w, int h,
                               int edge, int radius, float alpha, float inv_l, global float4* ring,
                               int segment) {
  const int y = get_global_id(0), p0 = get_global_id(1) * segment;
  if (y >= h || p0 >= w) return;
  const size_t lines = (size_t)h * get_global_size(1), walk = (size_t)get_global_id(1) * h + y;
  global const pixel_word_t* row = src + (size_t)y * w;
  global float4* out = mid + (size_t)y * w;
  CASCADE_WALK(p0, min(p0 + segment, w), w, 1, ROWS_LOAD, ROWS_LOAD_IN, ROWS_STORE);
}

// The columns pass's accessors (x0: the kernel's first column; lanes past the image read its
// last column and store nothing).
#define COLS_LOAD(i, c) cascade_mid(mid + min(x0 + (c), w - 1), (i), h, w, edge)
#define COLS_LOAD_IN(i, c) mid[(size_t)(i) * w + min(x0 + (c), w - 1)]
#define COLS_STORE(i, c, v) \
  if (x0 + (c) < w) dst[(size_t)(i) * w + x0 + (c)] = pixel_word(convert_uint4(convert_pixel_t(v)))

// The columns: mid -> dst (w x h pixels), rounded to the nearest level. One work-item a segment
// of CASCADE_COLS columns (lanes past the image repeat its last column and store nothing); ring:
// (K - 1) (2r + 3) CASCADE_COLS ceil(w / CASCADE_COLS) ceil(h / segment) float4.
kernel void gauss_cascade_cols(global const float4* mid, global pixel_word_t* dst, int w, int h,
                               int edge, int radius, float alpha, float inv_l, global float4* ring,
                               int segment) {
  const int x0 = get_global_id(0) * CASCADE_COLS, p0 = get_global_id(1) * segment;
  if (x0 >= w || p0 >= h) return;
  const size_t walks = get_global_size(0);
  const size_t lines = walks * CASCADE_COLS * get_global_size(1),
               walk = (size_t)get_global_id(1) * walks + get_global_id(0);
  CASCADE_WALK(p0, min(p0 + segment, h), h, CASCADE_COLS, COLS_LOAD, COLS_LOAD_IN, COLS_STORE);
}

// ---------------------------------------------------------------------------------------------
// The streams schedule (GPUs): the same cascade without rings. Box k + 1 at position q reads box
// k's results at q + r + 1 and q - r - 1; instead of keeping the latter in a ring, a second walk
// of box k computes it where it is needed. For K = 3 and s = r + 1, the output at t takes box 3
// at t, box 2 at t + s and t - s, box 1 at t + 2s, t and t - 2s: six running sums, fed by four
// streams of the input at t + 3s, t + s, t - s and t - 3s. Each box's result is a function of its
// window's exact sum (CASCADE_ONE above), so the two walks of a box give the same float at the
// same position, and the sums that add one and remove the other stay exact: the results are the
// rings schedule's, bit for bit (test: GaussFast.StreamsEqualRings). The rings' traffic (four
// float4 a step in global memory, beyond L2 at large sigma) becomes four reads of the input.
//
// A walk is latency-bound (each step waits on its loads), so a work-item walks one channel of a
// line (four times the walks of one a pixel) and loads STREAMS_UNROLL steps' streams at once
// before it computes them. A walk of positions [p0, p1) starts at t0 = p0 - 3 (2r + 1) + 1: box
// 1 adds from t0 and removes from t0 + 2r + 1 (what it removes was added 2r + 1 steps before),
// so its sums hold whole windows from t0 + 2r on; box 2 starts when box 1's results are whole,
// box 3 when box 2's are. Requires CASCADE_K 3.
#ifndef STREAMS_UNROLL
#define STREAMS_UNROLL 8  // steps whose loads a walk issues together
#endif

// Box (sum, prev) at step t, started at step a: nw its input at q + r + 1, od at q - r - 1, prev
// the input at q + r (the previous step's nw); out its result.
#define STREAMS_BOX(sum, prev, nw, od, t, a, out)                                               \
  do {                                                                                          \
    if ((t) >= (a)) sum += cascade_fixed1(prev);                                                \
    if ((t) >= (a) + 2 * radius + 1) sum -= cascade_fixed1(od);                                 \
    out = fma(alpha, (od) + (nw), (float)(int)(sum)*CASCADE_ONE_INV) * inv_l;                   \
    prev = (nw);                                                                                \
  } while (0)


// The same once both of its conditions hold.
#define STREAMS_BOX_STEADY(sum, prev, nw, od, out)                                              \
  do {                                                                                          \
    sum += cascade_fixed1(prev) - cascade_fixed1(od);                                           \
    out = fma(alpha, (od) + (nw), (float)(int)(sum)*CASCADE_ONE_INV) * inv_l;                   \
    prev = (nw);                                                                                \
  } while (0)

// The four streams of the STREAMS_UNROLL steps from tb (x3, x1, xm1, xm3, s in scope) through
// LOAD.
#define STREAMS_LOADS(LOAD)                                                                     \
  _Pragma("unroll") for (int k = 0; k < STREAMS_UNROLL; ++k) {                                  \
    x3[k] = LOAD(tb + k + 3 * s);                                                               \
    x1[k] = LOAD(tb + k + s);                                                                   \
    xm1[k] = LOAD(tb + k - s);                                                                  \
    xm3[k] = LOAD(tb + k - 3 * s);                                                              \
  }

// The walk of positions [p0, p1) of one channel of a line of n: LOAD(i) the input at position i
// through the edge mode, LOAD_IN(i) the same for i in [0, n), STORE(i, v) the output at i.
#define STREAMS_WALK(p0, p1, n, LOAD, LOAD_IN, STORE)                                           \
  do {                                                                                          \
    const int s = radius + 1, t0 = (p0) - 3 * (2 * radius + 1) + 1;                             \
    const int a2 = t0 + 2 * radius + 1, a3 = a2 + 2 * radius + 1;                               \
    uint s1a = 0, s1b = 0, s1c = 0, s2a = 0, s2b = 0, s3 = 0;                                   \
    float p1a = LOAD(t0 + 3 * s - 1), p1b = LOAD(t0 + s - 1), p1c = LOAD(t0 - s - 1);           \
    float p2a = 0.0f, p2b = 0.0f, p3 = 0.0f;                                                    \
    for (int tb = t0; tb < (p1); tb += STREAMS_UNROLL) {                                        \
      float x3[STREAMS_UNROLL], x1[STREAMS_UNROLL], xm1[STREAMS_UNROLL], xm3[STREAMS_UNROLL];  \
      if (tb - 3 * s >= 0 && tb + STREAMS_UNROLL - 1 + 3 * s < (n)) {                           \
        STREAMS_LOADS(LOAD_IN)                                                                  \
      } else {                                                                                  \
        STREAMS_LOADS(LOAD)                                                                     \
      }                                                                                         \
      if (tb > (p0)) { /* every box past its start and its first removal: t0 + 3 (2r + 1) */  \
        _Pragma("unroll") for (int k = 0; k < STREAMS_UNROLL; ++k) {                            \
          float b1a, b1b, b1c, b2a, b2b, v;                                                     \
          STREAMS_BOX_STEADY(s1a, p1a, x3[k], x1[k], b1a);                                      \
          STREAMS_BOX_STEADY(s1b, p1b, x1[k], xm1[k], b1b);                                     \
          STREAMS_BOX_STEADY(s1c, p1c, xm1[k], xm3[k], b1c);                                    \
          STREAMS_BOX_STEADY(s2a, p2a, b1a, b1b, b2a);                                          \
          STREAMS_BOX_STEADY(s2b, p2b, b1b, b1c, b2b);                                          \
          STREAMS_BOX_STEADY(s3, p3, b2a, b2b, v);                                              \
          if (tb + k < (p1)) STORE(tb + k, v);                                                  \
        }                                                                                       \
        continue;                                                                               \
      }                                                                                         \
      _Pragma("unroll") for (int k = 0; k < STREAMS_UNROLL; ++k) {                              \
        const int t = tb + k;                                                                   \
        float b1a, b1b, b1c, b2a, b2b, v;                                                       \
        STREAMS_BOX(s1a, p1a, x3[k], x1[k], t, t0, b1a);                                        \
        STREAMS_BOX(s1b, p1b, x1[k], xm1[k], t, t0, b1b);                                       \
        STREAMS_BOX(s1c, p1c, xm1[k], xm3[k], t, t0, b1c);                                      \
        STREAMS_BOX(s2a, p2a, b1a, b1b, t, a2, b2a);                                            \
        STREAMS_BOX(s2b, p2b, b1b, b1c, t, a2, b2b);                                            \
        STREAMS_BOX(s3, p3, b2a, b2b, t, a3, v);                                                \
        if (t >= (p0) && t < (p1)) STORE(t, v);                                                 \
      }                                                                                         \
    }                                                                                           \
  } while (0)

#ifdef PIXEL16
#define convert_sample_sat convert_ushort_sat_rte
#else
#define convert_sample_sat convert_uchar_sat_rte
#endif

// The rows pass's accessors (in: channel c of the kernel's row of src, 4 samples a pixel).
#define ROWS1_LOAD(i) ROWS1_AT(edge_index((i), w, edge))
#define ROWS1_AT(j) ((j) < 0 ? 0.0f : (float)in[(size_t)(j)*4])
#define ROWS1_LOAD_IN(i) ((float)in[(size_t)(i)*4])
#define ROWS1_STORE(i, v) out[(size_t)(i)*4] = (v)

// The rows: src (w x h pixels) -> mid (w x h float4, levels), as gauss_cascade_rows. One
// work-item a channel of a segment of a row (dimension 0: 4 y + channel).
kernel void gauss_cascade_rows_streams(global const pixel_sample_t* src, global float* mid, int w,
                                       int h, int edge, int radius, float alpha, float inv_l,
                                       int segment) {
  const int g = get_global_id(0), p0 = get_global_id(1) * segment;
  if (g >= 4 * h || p0 >= w) return;
  const size_t base = (size_t)(g / 4) * w * 4 + g % 4;
  global const pixel_sample_t* in = src + base;
  global float* out = mid + base;
  STREAMS_WALK(p0, min(p0 + segment, w), w, ROWS1_LOAD, ROWS1_LOAD_IN, ROWS1_STORE);
}

// The columns pass's accessors (g: the kernel's sample column, 4 w of them a row).
#define COLS1_LOAD(i) COLS1_AT(edge_index((i), h, edge))
#define COLS1_AT(j) ((j) < 0 ? 0.0f : mid[(size_t)(j)*w4 + g])
#define COLS1_LOAD_IN(i) mid[(size_t)(i)*w4 + g]
#define COLS1_STORE(i, v) dst[(size_t)(i)*w4 + g] = convert_sample_sat(v)

// The columns: mid -> dst (w x h pixels), rounded to the nearest level, as gauss_cascade_cols.
// One work-item a segment of one channel of a column (dimension 0: 4 x + channel), so that
// neighbouring work-items read and write neighbouring addresses.
kernel void gauss_cascade_cols_streams(global const float* mid, global pixel_sample_t* dst, int w,
                                       int h, int edge, int radius, float alpha, float inv_l,
                                       int segment) {
  const int g = get_global_id(0), p0 = get_global_id(1) * segment, w4 = 4 * w;
  if (g >= w4 || p0 >= h) return;
  STREAMS_WALK(p0, min(p0 + segment, h), h, COLS1_LOAD, COLS1_LOAD_IN, COLS1_STORE);
}
