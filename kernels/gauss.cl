// Gaussian blur kernels: every schedule from "Compute shaders in graphics: Gaussian blur",
// for one meaning: out(x, y) = sum over i, j in [-R, R] of w(i) w(j) in(x + i, y + j), with the
// host's normalised weights w (sum 1 after truncation at R) and the edge mode for pixels outside.
//
// Every kernel builds for RGBA8 and, with -DPIXEL16, RGBA16 input and output (pixel_t and
// PIXEL_MAX in common.cl); only types and constants differ. Image schedules work on normalised
// floats (0..1) throughout, which read_imagef and write_imagef give for CL_UNORM_INT8 and
// CL_UNORM_INT16 alike: the output's write_imagef rounds to the nearest level of its depth.
// Two-pass schedules store the horizontal result in an intermediate image of the chosen format
// (rgba8, rgba16f, rgba32f; at 16 bits rgba8 and rgba16f lose precision, which is the user's
// choice). Work-group sizes come from the host (--wg); local memory is sized at run time
// through `local` kernel arguments, so a sweep over work-group sizes needs no rebuild.
//
// Arguments shared by the kernels:
//   weights  2R+1 floats, weights[R + i] = w(i)
//   taps     separable-linear only: (lo, t, weight, 0) per fetch: one fetch returns
//            (1 - t) px(x + lo) + t px(x + lo + 1) through the sampler's linear filter

// Input pixel (x, y), through the edge mode on both axes, as integer samples 0..PIXEL_MAX (0
// for zero).
inline pixel_t load_pixel_edge(read_only image2d_t src, int x, int y, int w, int h, int edge) {
  int xx = edge_index(x, w, edge), yy = edge_index(y, h, edge);
  if (xx < 0 || yy < 0) return (pixel_t)(0);
  return convert_pixel_t(read_imagef(src, (int2)(xx, yy)) * PIXEL_MAX_F);
}

// Pixel (x, y) of a float or normalised image, edge mode on the y axis only (x inside).
inline float4 load_col(read_only image2d_t img, int x, int y, int h, int edge) {
  int yy = edge_index(y, h, edge);
  return yy < 0 ? (float4)(0.0f) : read_imagef(img, (int2)(x, yy));
}

// Pixel (x, y), edge mode on the x axis only (y inside).
inline float4 load_row(read_only image2d_t img, int x, int y, int w, int edge) {
  int xx = edge_index(x, w, edge);
  return xx < 0 ? (float4)(0.0f) : read_imagef(img, (int2)(xx, y));
}

// The work-group's input tile with its halo, (LX + 2R) x (LY + 2R) pixels starting at
// (x0, y0), into local memory as integer samples (pixel_t: 4 or 8 bytes a pixel, a quarter or
// a half of float4's, so larger work-groups fit). Every work-item loads an equal share.
inline void stage_tile(read_only image2d_t src, local pixel_t* tile, int x0, int y0, int tw,
                       int th, int edge) {
  const int w = get_image_width(src), h = get_image_height(src);
  const int step = get_local_size(0) * get_local_size(1);
  for (int i = get_local_id(1) * get_local_size(0) + get_local_id(0); i < tw * th; i += step)
    tile[i] = load_pixel_edge(src, x0 + i % tw, y0 + i / tw, w, h, edge);
}

// ---------------------------------------------------------------------------------------------
// naive: one work-item per pixel, the full (2R+1)^2 loop, every read from the image.
kernel void gauss_naive(read_only image2d_t src, write_only image2d_t dst, int radius, int edge,
                        constant float* weights) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  float4 sum = 0.0f;
  for (int j = -radius; j <= radius; ++j) {
    int yy = edge_index(y + j, h, edge);
    if (yy < 0) continue;
    float4 row = 0.0f;
    for (int i = -radius; i <= radius; ++i) {
      int xx = edge_index(x + i, w, edge);
      if (xx >= 0) row += weights[radius + i] * read_imagef(src, (int2)(xx, yy));
    }
    sum += weights[radius + j] * row;
  }
  write_imagef(dst, (int2)(x, y), sum);
}

// naive-local: the same loop over the work-group's tile plus halo, staged in local memory
// ((LX + 2R) (LY + 2R) pixel_t). Each input pixel is read from the image about once per
// work-group instead of (2R+1)^2 times in all.
kernel void gauss_naive_local(read_only image2d_t src, write_only image2d_t dst, int radius,
                              int edge, constant float* weights, local pixel_t* tile) {
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int tw = get_local_size(0) + 2 * radius, th = get_local_size(1) + 2 * radius;
  stage_tile(src, tile, get_group_id(0) * get_local_size(0) - radius,
             get_group_id(1) * get_local_size(1) - radius, tw, th, edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= get_image_width(src) || y >= get_image_height(src)) return;
  float4 sum = 0.0f;
  for (int j = 0; j <= 2 * radius; ++j) {
    float4 row = 0.0f;
    local const pixel_t* line = tile + (ly + j) * tw + lx;
    for (int i = 0; i <= 2 * radius; ++i) row += weights[i] * convert_float4(line[i]);
    sum += weights[j] * row;
  }
  write_imagef(dst, (int2)(x, y), sum * (1.0f / PIXEL_MAX_F));
}

// ---------------------------------------------------------------------------------------------
// separable: horizontal pass into the intermediate image, then vertical pass: 2 (2R+1) reads.
kernel void gauss_rows(read_only image2d_t src, write_only image2d_t tmp, int radius, int edge,
                       constant float* weights) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  float4 sum = 0.0f;
  for (int i = -radius; i <= radius; ++i) sum += weights[radius + i] * load_row(src, x + i, y, w, edge);
  write_imagef(tmp, (int2)(x, y), sum);
}

kernel void gauss_cols(read_only image2d_t tmp, write_only image2d_t dst, int radius, int edge,
                       constant float* weights) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  float4 sum = 0.0f;
  for (int j = -radius; j <= radius; ++j) sum += weights[radius + j] * load_col(tmp, x, y + j, h, edge);
  write_imagef(dst, (int2)(x, y), sum);
}

// separable-linear: each pass fetches neighbouring taps in pairs through the sampler's linear
// filter (rastergrid's trick in the write-up): 1 + 2 ceil(R/2) fetches a pass instead of 2R+1.
// The result depends on the precision of the device's filtering, which OpenCL leaves open.
kernel void gauss_rows_linear(read_only image2d_t src, write_only image2d_t tmp, int ntaps,
                              int edge, constant float4* taps) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  const float cy = (float)y + 0.5f;
  float4 sum = 0.0f;
  for (int k = 0; k < ntaps; ++k) {
    const float4 tap = taps[k];
    const float cx = linear_coord(x + (int)tap.x, tap.y, w, edge);
    sum += tap.z * read_imagef(src, bilinear, (float2)(cx, cy));
  }
  write_imagef(tmp, (int2)(x, y), sum);
}

kernel void gauss_cols_linear(read_only image2d_t tmp, write_only image2d_t dst, int ntaps,
                              int edge, constant float4* taps) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  const float cx = (float)x + 0.5f;
  float4 sum = 0.0f;
  for (int k = 0; k < ntaps; ++k) {
    const float4 tap = taps[k];
    const float cy = linear_coord(y + (int)tap.x, tap.y, h, edge);
    sum += tap.z * read_imagef(tmp, bilinear, (float2)(cx, cy));
  }
  write_imagef(dst, (int2)(x, y), sum);
}

// separable-local: each pass stages its work-group's segment plus halo in local memory: a row
// segment of G + 2R pixels for Gx1 work-groups, then a column segment for 1xG work-groups.
// Neighbours along the pass share almost all their reads; across it they share none.
kernel void gauss_rows_local(read_only image2d_t src, write_only image2d_t tmp, int radius,
                             int edge, constant float* weights, local float4* segment) {
  const int g = get_local_size(0), lx = get_local_id(0);
  const int y = get_global_id(1), w = get_image_width(src);
  const int x0 = get_group_id(0) * g - radius;
  for (int i = lx; i < g + 2 * radius; i += g) segment[i] = load_row(src, x0 + i, y, w, edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0);
  if (x >= w) return;
  float4 sum = 0.0f;
  for (int i = 0; i <= 2 * radius; ++i) sum += weights[i] * segment[lx + i];
  write_imagef(tmp, (int2)(x, y), sum);
}

kernel void gauss_cols_local(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                             int edge, constant float* weights, local float4* segment) {
  const int g = get_local_size(1), ly = get_local_id(1);
  const int x = get_global_id(0), h = get_image_height(tmp);
  const int y0 = get_group_id(1) * g - radius;
  for (int i = ly; i < g + 2 * radius; i += g) segment[i] = load_col(tmp, x, y0 + i, h, edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int y = get_global_id(1);
  if (y >= h) return;
  float4 sum = 0.0f;
  for (int j = 0; j <= 2 * radius; ++j) sum += weights[j] * segment[ly + j];
  write_imagef(dst, (int2)(x, y), sum);
}

// fused-local: one pass, no intermediate image. The tile plus halo goes to local memory; the
// horizontal pass runs over all LY + 2R tile rows into a second local array (float4, LX wide);
// the vertical pass reads that and writes the output.
kernel void gauss_fused_local(read_only image2d_t src, write_only image2d_t dst, int radius,
                              int edge, constant float* weights, local pixel_t* tile,
                              local float4* rows) {
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lw = get_local_size(0), lh = get_local_size(1);
  const int tw = lw + 2 * radius, th = lh + 2 * radius;
  stage_tile(src, tile, get_group_id(0) * lw - radius, get_group_id(1) * lh - radius, tw, th,
             edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = ly * lw + lx; i < th * lw; i += lw * lh) {
    local const pixel_t* line = tile + (i / lw) * tw + i % lw;
    float4 sum = 0.0f;
    for (int k = 0; k <= 2 * radius; ++k) sum += weights[k] * convert_float4(line[k]);
    rows[i] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= get_image_width(src) || y >= get_image_height(src)) return;
  float4 sum = 0.0f;
  for (int k = 0; k <= 2 * radius; ++k) sum += weights[k] * rows[(ly + k) * lw + lx];
  write_imagef(dst, (int2)(x, y), sum * (1.0f / PIXEL_MAX_F));
}

// ---------------------------------------------------------------------------------------------
// tiled: one pass over buffers of pixel_t (RGBA8 or RGBA16, rows of width pixels), for CPUs,
// where image reads are software and an intermediate image is a round trip through memory.
// Each work-item owns tiles of tile_w x tile_h pixels in turn (work-item g takes tiles g,
// g + items, ...: a persistent loop, so that its scratch is bounded by the number of
// work-items, not by the image size). Down a tile it works on four rows at a time and keeps the
// horizontal results of the last 4 ceil(R/2) + 4 input rows in a ring:
//  - four input rows are staged side by side as floats (with their halo, through the edge
//    mode): staged column k is one float16, the pixel at x0 - R + k of each of the four rows;
//  - horizontal: four staged columns at a time; for tap k each of the four outputs needs the
//    columns at -k and +k of its own, and stepping k by one shifts them by one column, so the
//    eight are kept in registers and only two are loaded a tap (loading them all would make the
//    loop wait on the cache: two loads a multiply-add, against half a load here). The four
//    results are transposed into the four ring rows, 16 floats (four pixels) a store;
//  - vertical: the four output rows whose windows are now complete, four pixels at a time,
//    with the same register window down the ring rows.
// Every multiply-add works on 16 floats (four pixels, or one pixel of four rows), so that the
// CPU's vector units are full; the weights are symmetric, so the taps at -k and +k are added
// first and additions and multiply-adds run on different units. A pixel costs 2 (R+1)
// multiply-adds and 2R additions, plus 4 ceil(R/2) / tile_h horizontal rows to start each
// tile. Values are on the 0..PIXEL_MAX scale; the output is rounded to the nearest level.
// tile_w is a multiple of 16 chosen by the host (gauss_tile_width(), or --segment). Ring rows
// are tile_w + 4 pixels apart (a multiple of 4 float4: rows stay 64-byte aligned): at a
// power-of-two stride the rows read together would share one set of the cache and evict each
// other (measured with tile_w 256 on the earlier kernel: 7.5 ms of 14.6).


// 0..PIXEL_MAX values (slightly outside is clamped) rounded to the nearest integer, as samples:
// adding 1.5 * 2^23 rounds and leaves the integer in the low mantissa bits (exact for values
// below 2^22, 16-bit samples included).
inline pixel_sample16_t round_samples16(float16 v) {
  const int16 i = as_int16(clamp(v, 0.0f, PIXEL_MAX_F) + 12582912.0f) - 0x4B400000;
  return convert_pixel_sample16_t(i);
}

DEFINE_STAGE_ROWS4(float16, float4, float)

// The four window sums a_j = sum over t = -R..R of w[R + t] c(j + t), j = 0..3, of a sequence of
// float16 c(t): AT(t) loads c(t) for t = -1..4, and NEXT_LEFT(k) and NEXT_RIGHT(k) load
// c(-k - 1) and c(k + 4) (one column or ring row past the window after the last tap: loaded,
// never used).
#define WINDOW4(AT, NEXT_LEFT, NEXT_RIGHT, radius, weights, a0, a1, a2, a3)             \
  do {                                                                                  \
    const float w0 = weights[radius];                                                   \
    float16 l0 = AT(-1), l1 = AT(0), l2 = AT(1), l3 = AT(2);                            \
    float16 r0 = l2, r1 = l3, r2 = AT(3), r3 = AT(4);                                   \
    a0 = w0 * l1;                                                                       \
    a1 = w0 * l2;                                                                       \
    a2 = w0 * l3;                                                                       \
    a3 = w0 * r2;                                                                       \
    int k = 1;                                                                          \
    /* Four taps a round, the registers' roles rotating instead of their contents */    \
    for (; k + 3 <= radius; k += 4) {                                                   \
      WINDOW4_TAP(NEXT_LEFT, NEXT_RIGHT, weights[radius + k], k, l0, l1, l2, l3, r0, r1, r2, r3); \
      WINDOW4_TAP(NEXT_LEFT, NEXT_RIGHT, weights[radius + k + 1], k + 1, l3, l0, l1, l2, r1, r2, r3, r0); \
      WINDOW4_TAP(NEXT_LEFT, NEXT_RIGHT, weights[radius + k + 2], k + 2, l2, l3, l0, l1, r2, r3, r0, r1); \
      WINDOW4_TAP(NEXT_LEFT, NEXT_RIGHT, weights[radius + k + 3], k + 3, l1, l2, l3, l0, r3, r0, r1, r2); \
    }                                                                                   \
    for (; k <= radius; ++k) {                                                          \
      WINDOW4_TAP(NEXT_LEFT, NEXT_RIGHT, weights[radius + k], k, l0, l1, l2, l3, r0, r1, r2, r3); \
      const float16 l = l3, r = r0;                                                     \
      l3 = l2;                                                                          \
      l2 = l1;                                                                          \
      l1 = l0;                                                                          \
      l0 = l;                                                                           \
      r0 = r1;                                                                          \
      r1 = r2;                                                                          \
      r2 = r3;                                                                          \
      r3 = r;                                                                           \
    }                                                                                   \
  } while (0)

// One tap k of WINDOW4 with the left elements of outputs 0..3 in L0..L3 and the right ones in
// R0..R3. For tap k + 1 output j's left element is output j - 1's at tap k and its right one
// output j + 1's, so only two are new: the left one goes into L3 (now output 0's) and the
// right one into R0 (now output 3's).
#define WINDOW4_TAP(NEXT_LEFT, NEXT_RIGHT, wk, k, L0, L1, L2, L3, R0, R1, R2, R3) \
  do {                                                                            \
    const float w = wk;                                                           \
    a0 = fma(w, L0 + R0, a0);                                                     \
    a1 = fma(w, L1 + R1, a1);                                                     \
    a2 = fma(w, L2 + R2, a2);                                                     \
    a3 = fma(w, L3 + R3, a3);                                                     \
    L3 = NEXT_LEFT(k);                                                            \
    R0 = NEXT_RIGHT(k);                                                           \
  } while (0)

// scratch, per work-item (float4 units): the four staged rows, tile_w + 2R + 8 float16 (one
// float16 of padding in front: the register window loads one column past each end), then the
// ring, 4 ceil(R/2) + 4 rows of tile_w + 4 float4. With the buffer's base aligned
// (CL_DEVICE_MEM_BASE_ADDR_ALIGN is at least 1024 bits) every float16 and every ring row starts
// on 64 bytes. The host computes the same size (per_item in GaussFilter's constructor,
// filters/gauss/gauss_blur.cpp).
kernel void gauss_tiled(global const pixel_t* src, global pixel_t* dst, int w, int h, int radius,
                        int edge, constant float* weights, int tile_w, int tile_h,
                        global float4* scratch) {
  const int stride = tile_w + 4;  // of the ring's rows, in float4
  const int ahead = (radius + 1) / 2;  // input groups of 4 rows before the first output group
  const int slots = 4 * ahead + 4;     // ring rows: a multiple of 4, at least 2R + 4
  const int items = get_global_size(0), id = get_global_id(0);
  global float4* base =
      scratch + (size_t)id * (4 * (size_t)(tile_w + 2 * radius + 8) + (size_t)slots * stride);
  global float16* staged = (global float16*)base + 1;
  global float4* ring = base + 4 * (size_t)(tile_w + 2 * radius + 8);
  const int tiles_x = (w + tile_w - 1) / tile_w, tiles_y = (h + tile_h - 1) / tile_h;
  // Where rows are a multiple of 4 pixels, every run of 4 output pixels is (16-byte) aligned.
  const bool aligned = w % 4 == 0;
  for (int t = id; t < tiles_x * tiles_y; t += items) {
    const int x0 = (t % tiles_x) * tile_w, y0 = (t / tiles_x) * tile_h;
    const int n = min(tile_w, w - x0), y1 = min(y0 + tile_h, h);
    // Input row j (0 at y0 - R) is in ring row j mod slots. Output group o (rows y0 + 4o ..
    // y0 + 4o + 3) needs input rows 4o .. 4o + 3 + 2R, all staged after input group o + ahead.
    const int last_row = y1 - y0 - 1 + 2 * radius;  // the last input row any output needs
    const int groups = (y1 - y0 + 3) / 4;
    for (int g = 0; g < groups + ahead; ++g) {
      // Stage input rows 4g .. 4g+3 (past last_row: last_row again, never stored), columns
      // x0 - R .. x0 + n + R - 1.
      stage_rows4_float16(src, w, h, edge, y0 - radius, 4 * g, last_row, x0 - radius,
                          n + 2 * radius, staged);
      // Horizontal: four outputs at a time (past n: never stored) into ring rows 4g .. 4g+3.
      global float4* slot = ring + (size_t)((4 * g) % slots) * stride;
      for (int i = 0; i < n; i += 4) {
        global const float16* c = staged + i + radius;
#define STAGED_AT(t) c[t]
#define STAGED_LEFT(k) c[-(k)-1]
#define STAGED_RIGHT(k) c[(k) + 4]
        float16 a0, a1, a2, a3;
        WINDOW4(STAGED_AT, STAGED_LEFT, STAGED_RIGHT, radius, weights, a0, a1, a2, a3);
#undef STAGED_AT
#undef STAGED_LEFT
#undef STAGED_RIGHT
        // a_j holds pixel i + j of the four rows; ring row r takes pixels i .. i+3 of row r.
        STORE_TRANSPOSED4(float16, (global float16*)(slot + i),
                          (global float16*)(slot + stride + i),
                          (global float16*)(slot + 2 * stride + i),
                          (global float16*)(slot + 3 * stride + i), a0, a1, a2, a3);
      }
      // Vertical: output group o = g - ahead, centred on input rows 4o + R .. 4o + R + 3.
      const int o = g - ahead;
      if (o < 0) continue;
      // Ring rows of input rows centre - 1 .. centre + 4; the window steps on from there, one
      // row each way a tap, wrapping around the ring.
      const int centre = 4 * o + radius;
      int at[6];
      for (int u = 0; u < 6; ++u) at[u] = (centre - 1 + u + slots) % slots;
      for (int i = 0; i < n; i += 4) {
        global const float4* column = ring + i;
        int left = at[0], right = at[5];
#define RING_ROW(s) (*(global const float16*)(column + (size_t)(s) * stride))
#define RING_AT(t) RING_ROW(at[(t) + 1])
#define RING_LEFT(k) (left = left == 0 ? slots - 1 : left - 1, RING_ROW(left))
#define RING_RIGHT(k) (right = right + 1 == slots ? 0 : right + 1, RING_ROW(right))
        float16 a0, a1, a2, a3;
        WINDOW4(RING_AT, RING_LEFT, RING_RIGHT, radius, weights, a0, a1, a2, a3);
#undef RING_ROW
#undef RING_AT
#undef RING_LEFT
#undef RING_RIGHT
        global pixel_t* out = dst + (size_t)(y0 + 4 * o) * w + x0 + i;
        const int rows = y1 - (y0 + 4 * o);  // output rows left in the tile
        // One call site of each store, in loops over the rows: written out four times each,
        // the stores and roundings took PoCL a third of this kernel's code generation.
        const pixel_sample16_t p[4] = {round_samples16(a0), round_samples16(a1),
                                       round_samples16(a2), round_samples16(a3)};
        if (i + 4 <= n && rows >= 4) {
          for (int r = 0; r < 4; ++r) store_pixels4(p[r], out + r * (size_t)w, aligned);
        } else {  // the tile's last rows or last 1-3 columns
          for (int r = 0; r < min(rows, 4); ++r)
            store_pixels_first(p[r], out + r * (size_t)w, n - i);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// fused: one pass over buffers of pixel_word_t (one 32-bit word a pixel for RGBA8, two for
// RGBA16; rows of width pixels), for GPUs.
// Built per radius (-DGAUSS_R=R) with the tile (-DFUSED_TILE_W=TW, a multiple of 8, and
// -DFUSED_ROWS, 8), so
// that every loop below unrolls and every weight index is a constant: no index arithmetic and
// no bounds tests in the multiply-adds, which are then nearly all the work-item's instructions.
// A work-group (Gx1) owns a tile of TW x FUSED_ROWS output pixels:
//  1. vertical: work-item c takes input columns x0 - R + c, c + G, ... (TW + 2R of them): it
//     reads the FUSED_ROWS + 2R pixels of the column (neighbouring work-items read neighbouring
//     pixels: whole 128-byte lines a warp), unpacks each once and adds it into the 8 outputs
//     it reaches, then writes the 8 vertical sums to local memory (float4);
//  2. horizontal: work-item i takes row i % 8 and the 8 outputs from 8 (i / 8) on: it reads
//     the 8 + 2R vertical sums it needs, each once, and stores 8 pixels (16-byte stores where
//     the row allows). Local rows are TW + 2R + 1 float4 apart: an odd stride puts the 8 rows
//     that a quarter-warp reads together in 8 different banks.
// Per pixel: (2R+1) multiply-adds a channel in each direction, (1 + 2R/TW) columns of the
// vertical pass, (1 + 2R/8) reads of each input pixel (mostly from the cache).
#ifdef GAUSS_R
#define FUSED_COLS (FUSED_TILE_W + 2 * GAUSS_R)
#define FUSED_STRIDE (FUSED_COLS + 1)
#define FUSED_TAPS (2 * GAUSS_R + 1)

// A buffer pixel as floats 0..PIXEL_MAX. 0x4B000000 | b is the float 2^23 + b (exact for
// b < 2^23, so for 16-bit samples too): one bit operation and one subtraction a channel, where
// convert_float4 costs four integer-to-float conversions (a quarter of the multiply-add rate on
// NVIDIA GPUs).
inline float4 unpack_pixel(pixel_word_t u) {
  return as_float4(pixel_samples(u) | 0x4B000000u) - 8388608.0f;
}

// 0..PIXEL_MAX floats (slightly outside is clamped) rounded to the nearest level, as a buffer
// pixel: adding 1.5 * 2^23 leaves the rounded value in the low mantissa bits.
inline pixel_word_t pack_pixel(float4 v) {
  return pixel_word(as_uint4(clamp(v, 0.0f, PIXEL_MAX_F) + 12582912.0f) & (uint)PIXEL_MAX);
}

// Pixels of one 16-byte store: 4 RGBA8 or 2 RGBA16.
#define STORE_PIXELS (16 / (int)sizeof(pixel_word_t))

// Pixels acc[0 .. STORE_PIXELS - 1] packed as the 16 bytes of one store.
inline uint4 pack_store(const float4* acc) {
#ifdef PIXEL16
  return (uint4)(pack_pixel(acc[0]), pack_pixel(acc[1]));
#else
  return (uint4)(pack_pixel(acc[0]), pack_pixel(acc[1]), pack_pixel(acc[2]), pack_pixel(acc[3]));
#endif
}

#ifdef FUSED_TILE_W  // the fused build
// Adds input row j of the window (0 .. FUSED_ROWS + 2R - 1) into the outputs it reaches. With
// j a constant (the callers' loops unroll) every index below is one too, and acc stays in
// registers.
inline void fused_accumulate(float4* acc, int j, float4 v, constant float* weights) {
#pragma unroll
  for (int i = 0; i < FUSED_ROWS; ++i)
    if (j - i >= 0 && j - i < FUSED_TAPS) acc[i] = fma(weights[j - i], v, acc[i]);
}

#endif

// The horizontal pass of a tile whose `rows` rows of input sums are in local memory, `stride`
// float4 apart (odd: the rows that a quarter-warp reads together fall in different banks).
// Work-item i takes row i % rows and the 8 outputs from 8 (i / rows) on (`items` = tile width / 8
// * rows in all): it reads the 8 + 2R sums it needs, each once, and stores 8 pixels, times
// `scale`, at (x0 + 8 (i / rows), y0 + i % rows) (16-byte stores where the row allows).
inline void rows_from_local(local const float4* sums, int stride, int items, int rows, int x0,
                            int y0, int w, int h, global pixel_word_t* dst,
                            constant float* weights, float scale) {
  for (int t = get_local_id(0); t < items; t += get_local_size(0)) {
    const int row = t % rows, first = t / rows * 8;
    local const float4* line = sums + row * stride + first;
    float4 acc[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] = 0.0f;
#pragma unroll
    for (int j = 0; j < 8 + 2 * GAUSS_R; ++j) {
      const float4 v = line[j];
#pragma unroll
      for (int i = 0; i < 8; ++i)
        if (j - i >= 0 && j - i < FUSED_TAPS) acc[i] = fma(weights[j - i], v, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[i] *= scale;
    const int x = x0 + first, y = y0 + row;
    if (y >= h) continue;
    global pixel_word_t* out = dst + (size_t)y * w + x;
    if (x + 8 <= w && ((size_t)y * w + x) % STORE_PIXELS == 0) {
#pragma unroll
      for (int i = 0; i < 8; i += STORE_PIXELS) *(global uint4*)(out + i) = pack_store(acc + i);
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i)
        if (x + i < w) out[i] = pack_pixel(acc[i]);
    }
  }
}

#ifdef FUSED_TILE_W
kernel void gauss_fused(global const pixel_word_t* src, global pixel_word_t* dst, int w, int h,
                        int edge, constant float* weights, local float4* vsum) {
  const int g = get_local_size(0), lid = get_local_id(0);
  const int x0 = get_group_id(0) * FUSED_TILE_W, y0 = get_group_id(1) * FUSED_ROWS;
  const bool inner_rows = y0 - GAUSS_R >= 0 && y0 + FUSED_ROWS + GAUSS_R <= h;
  for (int c = lid; c < FUSED_COLS; c += g) {
    float4 acc[FUSED_ROWS];
#pragma unroll
    for (int i = 0; i < FUSED_ROWS; ++i) acc[i] = 0.0f;
    const int xx = edge_index(x0 - GAUSS_R + c, w, edge);
    if (xx >= 0) {
      if (inner_rows) {
        global const pixel_word_t* p = src + (size_t)(y0 - GAUSS_R) * w + xx;
#pragma unroll
        for (int j = 0; j < FUSED_ROWS + 2 * GAUSS_R; ++j) {
          const float4 v = unpack_pixel(p[(size_t)j * w]);
          fused_accumulate(acc, j, v, weights);
        }
      } else {
#pragma unroll
        for (int j = 0; j < FUSED_ROWS + 2 * GAUSS_R; ++j) {
          const int yy = edge_index(y0 - GAUSS_R + j, h, edge);
          const float4 v = yy < 0 ? (float4)(0.0f) : unpack_pixel(src[(size_t)yy * w + xx]);
          fused_accumulate(acc, j, v, weights);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < FUSED_ROWS; ++i) vsum[i * FUSED_STRIDE + c] = acc[i];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  rows_from_local(vsum, FUSED_STRIDE, FUSED_TILE_W / 8 * FUSED_ROWS, FUSED_ROWS, x0, y0, w, h, dst,
                  weights, 1.0f);
}
#endif
#endif

// ---------------------------------------------------------------------------------------------
// separable-buffer: two passes over buffers, built per radius like fused (-DGAUSS_R, and
// -DSEP_K), vertical first, through an intermediate buffer of the width x height vertical
// results: for RGBA8 four 16-bit fixed-point samples a pixel (256 v for v in levels 0..255: a
// 2^-9 level rounding, 8 bytes a pixel where float4 would be 16); for RGBA16 float4.
//  1. gauss_sep_cols: work-item x takes SEP_K consecutive outputs of column x (a warp reads
//     whole lines); it reads the SEP_K + 2R input pixels, each once, and adds each into the
//     outputs it reaches: (SEP_K + 2R) / SEP_K reads a pixel, no local memory, no barrier.
//  2. gauss_sep_rows: a Gx1 work-group stages 8 rows of G + 2R intermediate pixels as float4
//     in local memory, then rows_from_local() as in fused.
// Each input pixel goes through the vertical multiply-adds once, where fused's tiles (at most
// 256 input columns) repeat them for their 2R halo columns: slower than fused up to R 32 (one
// more trip through memory), faster beyond (an NVIDIA H100, 1920x1080: 0.127 against 0.191 ms
// at R 40, 0.187 against 0.357 at R 63). Both passes are latency-bound: the column pass's
// loads are issued one row ahead of their multiply-adds (see kernels/NOTES.md).
#if defined(GAUSS_R) && defined(SEP_K)
#ifdef PIXEL16
typedef float4 sep_t;
#define SEP_ZERO ((float4)(0.0f))
#define SEP_SCALE 1.0f
inline float4 sep_unpack_input(pixel_word_t u) { return unpack_pixel(u); }
inline sep_t sep_pack(float4 acc, float wsum) { return acc; }
inline float4 sep_unpack(sep_t v) { return v; }
#else
typedef uint2 sep_t;
// Each sample b as the float 1 + b / 256 (b in the mantissa's top 8 bits): one shift and one
// and-or a channel. The 1s add up to the sum of the weights, which sep_pack() removes.
#define SEP_ZERO ((float4)(1.0f))
#define SEP_SCALE (1.0f / 256.0f)
inline float4 sep_unpack_input(uint u) {
  return as_float4(((uint4)(u << 15, u << 7, u >> 1, u >> 9) & 0x7F8000u) | 0x3F800000u);
}
// acc = wsum + v / 256 (see above) as four 16-bit samples 256 v: acc - wsum is exact (the two
// are within a factor of 2), and adding 1.5 * 2^23 rounds 65536 (acc - wsum) to an integer in
// the low mantissa bits (255 levels give 65280). The weights are positive, so acc falls below
// wsum only by the roundings of its 2R+1 additions near 1 (a few 2^-24 each); the clamp keeps
// a large R's sum of them from wrapping a black pixel's 16 bits to 65535.
inline uint2 sep_pack(float4 acc, float wsum) {
  const uint4 t = as_uint4(fmax(fma(acc - wsum, 65536.0f, 12582912.0f), 12582912.0f));
  return (uint2)((t.x & 0xFFFFu) | (t.y << 16), (t.z & 0xFFFFu) | (t.w << 16));
}
// Four 16-bit samples as floats (256 times the level): 0x4B000000 | s is 2^23 + s.
inline float4 sep_unpack(uint2 u) {
  return as_float4(((uint4)(u.x, u.x >> 16, u.y, u.y >> 16) & 0xFFFFu) | 0x4B000000u) -
         8388608.0f;
}
#endif

// Adds input row j (0 .. SEP_K + 2R - 1) of a work-item's window into the outputs it reaches.
inline void sep_accumulate(float4* acc, int j, float4 v, constant float* weights) {
#pragma unroll
  for (int i = 0; i < SEP_K; ++i)
    if (j - i >= 0 && j - i < FUSED_TAPS) acc[i] = fma(weights[j - i], v, acc[i]);
}

// wsum: the sum of the weights (sep_pack).
kernel void gauss_sep_cols(global const pixel_word_t* src, global sep_t* mid, int w, int h,
                           int edge, constant float* weights, float wsum) {
  const int x = get_global_id(0), y0 = get_global_id(1) * SEP_K;
  if (x >= w || y0 >= h) return;
  float4 acc[SEP_K];
#pragma unroll
  for (int i = 0; i < SEP_K; ++i) acc[i] = 0.0f;
  if (y0 - GAUSS_R >= 0 && y0 + SEP_K + GAUSS_R <= h) {
    global const pixel_word_t* p = src + (size_t)(y0 - GAUSS_R) * w + x;
#pragma unroll
    for (int j = 0; j < SEP_K + 2 * GAUSS_R; ++j)
      sep_accumulate(acc, j, sep_unpack_input(p[(size_t)j * w]), weights);
  } else {
#pragma unroll
    for (int j = 0; j < SEP_K + 2 * GAUSS_R; ++j) {
      const int yy = edge_index(y0 - GAUSS_R + j, h, edge);
      sep_accumulate(acc, j, yy < 0 ? SEP_ZERO : sep_unpack_input(src[(size_t)yy * w + x]),
                     weights);
    }
  }
  global sep_t* q = mid + (size_t)y0 * w + x;
#pragma unroll
  for (int i = 0; i < SEP_K; ++i)
    if (y0 + i < h) q[(size_t)i * w] = sep_pack(acc[i], wsum);
}

// line: 8 rows of G + 2R + 1 float4 (G = get_local_size(0), a multiple of 8, also the tile's
// width).
kernel void gauss_sep_rows(global const sep_t* mid, global pixel_word_t* dst, int w, int h,
                           int edge, constant float* weights, local float4* line) {
  const int g = get_local_size(0), lid = get_local_id(0);
  const int x0 = get_group_id(0) * g, y0 = get_group_id(1) * 8;
  const int cols = g + 2 * GAUSS_R, stride = cols + 1;
  for (int row = 0; row < 8; ++row) {
    const int y = min(y0 + row, h - 1);  // rows past the image: any row (none is stored)
    global const sep_t* p = mid + (size_t)y * w;
    for (int c = lid; c < cols; c += g) {
      const int xx = edge_index(x0 - GAUSS_R + c, w, edge);
      line[row * stride + c] = xx < 0 ? (float4)(0.0f) : sep_unpack(p[xx]);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  rows_from_local(line, stride, g, 8, x0, y0, w, h, dst, weights, SEP_SCALE);
}
#endif

// ---------------------------------------------------------------------------------------------
// separable-mma: the two passes of separable-buffer as products with band matrices on NVIDIA
// tensor cores (mma.sync.m16n8k16 through inline PTX: compute capability 8.0 and later; the
// host builds it only there, and only for RGBA8). Built per radius (-DGAUSS_R) and strip
// lengths (-DMMA_STRIP, -DMMA_STRIPX, multiples of 16).
// A pass over 16 outputs (along the pass) of 8 lines (across it) is Out = W In: W is the 16 x
// (16 KS) band matrix W[i][k] = w(k - i) (KS = ceil((16 + 2R) / 16) blocks of 16 inputs; its
// f16 fragments stay in registers, the same for every block and both passes), In the 16 KS x 8
// inputs, one channel a product (4 products a block, sharing their loads).
//  1. gauss_mma_cols: a warp walks down MMA_STRIP rows of 8 columns; lane (g, t) = (lane / 4,
//     lane % 4) reads pixel x0 + g of rows 2t, 2t+1, 2t+8, 2t+9 of each block of 16 input rows
//     (one block ahead of its products), so that every input row is read once a strip (plus
//     the 2R rows that start it). Bytes go in as the exact f16 1024 + b (0x6400 | b), the
//     1024s removed after the products. Out: the intermediate as f16 RGBA (8 bytes a pixel).
//  2. gauss_mma_rows: a warp walks along MMA_STRIPX pixels of 8 rows of the intermediate, in
//     the same way with x and y exchanged, and writes RGBA8.
// Accuracy: f16 weights (a relative 2^-11 each) and the f16 intermediate (1/16 level at most
// above 128) add up to well under a level; outputs round differently from the exact result in
// about 0.5 % of samples, by 1. On an NVIDIA H100 (1920x1080, sigma 10): 0.034 ms at R 16
// (columns 0.020, rows 0.014), against fused's 0.053; 0.050 at R 63 against 0.187.
#if defined(GAUSS_R) && (defined(MMA_STRIPX) || defined(MMA_TX))
#define KS ((16 + 2 * GAUSS_R + 15) / 16)
// The f16 pair (hi, lo) of two floats, rounded to nearest (lo in the low half).
inline uint f16x2(float hi, float lo) {
  uint r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// The low f16 of a pair as a float.
inline float f16_low(uint h) {
  float f;
  asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }" : "=f"(f) : "r"(h));
  return f;
}
// d += A B for one 16x16 A (4 f16 pairs a lane), 16x8 B (2 pairs) and 16x8 f32 d (4 a lane).
inline void mma16816(float* d, const uint* a, const uint* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
inline float mma_tap(constant float* weights, int k) {
  return k >= 0 && k <= 2 * GAUSS_R ? weights[k] : 0.0f;
}
// Lane (g, t)'s A fragments of the band matrix, KS blocks of 16 inputs: rows g and g + 8,
// columns 2t, 2t + 1, 2t + 8, 2t + 9 of W[i][k] = w(16 s + k - i), as f16 pairs.
inline void mma_weights(uint a[KS][4], constant float* weights, int g, int t) {
#pragma unroll
  for (int s = 0; s < KS; ++s)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = g + (r & 1) * 8, col = 2 * t + (r >> 1) * 8, k = 16 * s + col - row;
      a[s][r] = f16x2(mma_tap(weights, k + 1), mma_tap(weights, k));
    }
}
// d[c] = W In for channel c over the KS blocks in b.
inline void mma_products(float d[4][4], const uint a[KS][4], const uint b[KS][4][2]) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    d[c][0] = d[c][1] = d[c][2] = d[c][3] = 0.0f;
#pragma unroll
    for (int s = 0; s < KS; ++s) mma16816(d[c], a[s], b[s][c]);
  }
}
// The window moves on by a block: b[s] = b[s + 1].
inline void mma_shift(uint b[KS][4][2]) {
#pragma unroll
  for (int s = 0; s < KS - 1; ++s)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      b[s][c][0] = b[s + 1][c][0];
      b[s][c][1] = b[s + 1][c][1];
    }
}
// Byte c of p0 and p1 as the f16 pair (1024 + b0, 1024 + b1) (0x6400 is 1024.0).
inline uint byte_pair(uint p0, uint p1, int c) {
  return 0x64006400u | ((p0 >> (8 * c)) & 0xFFu) | (((p1 >> (8 * c)) & 0xFFu) << 16);
}
// Lane (g, t)'s pixels of a block of 16 input rows from y: column x, rows y + 2t, 2t + 1,
// 2t + 8, 2t + 9 through the edge mode (0 for the zero mode's rows outside), and'ed with
// xmask (0 for the zero mode's columns outside).
inline void mma_load(uint p[4], global const uint* src, int w, int h, int edge, int x, uint xmask,
                     int y, int t) {
  const int rows[4] = {2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int yy = edge_index(y + rows[r], h, edge);
    p[r] = src[(size_t)max(yy, 0) * w + x] & (yy < 0 ? 0u : xmask);
  }
}
// The B fragments of the 4 channels (k = the rows above, n = g) from mma_load's pixels.
inline void mma_convert(uint b[4][2], const uint p[4]) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    b[c][0] = byte_pair(p[0], p[1], c);
    b[c][1] = byte_pair(p[2], p[3], c);
  }
}
// A column window's start from input row y (the top of a strip less R): the B fragments of its
// first KS - 1 blocks, and the pixels of the next block in `next`.
inline void mma_column_start(uint b[KS][4][2], uint next[4], global const uint* src, int w,
                             int h, int edge, int x, uint xmask, int y, int t) {
#pragma unroll
  for (int s = 0; s < KS - 1; ++s) {
    uint p[4];
    mma_load(p, src, w, h, edge, x, xmask, y + 16 * s, t);
    mma_convert(b[s], p);
  }
  mma_load(next, src, w, h, edge, x, xmask, y + 16 * (KS - 1), t);
}
// The window's last block from `next`, then the pixels of the block from input row y into
// `next`, loaded one block ahead of its products.
inline void mma_column_advance(uint b[KS][4][2], uint next[4], global const uint* src, int w,
                               int h, int edge, int x, uint xmask, int y, int t) {
  mma_convert(b[KS - 1], next);
  mma_load(next, src, w, h, edge, x, xmask, y, t);
}
// 1024 times the sum of the f16 weights: what the 1024s of the byte inputs add to a sum.
inline float mma_bias(constant float* weights) {
  float bias = 0;
  for (int k = 0; k <= 2 * GAUSS_R; ++k) bias += f16_low(f16x2(0.0f, weights[k]));
  return 1024.0f * bias;
}
#ifdef MMA_STRIPX
kernel void gauss_mma_cols(global const uint* src, global uint2* mid, int w, int h, int edge,
                           constant float* weights) {
  const int lane = get_local_id(0) & 31, g = lane >> 2, t = lane & 3;
  const int px0 = (int)(get_global_id(0) / 32) * 8;
  const int y_start = get_global_id(1) * MMA_STRIP;
  if (px0 >= w || y_start >= h) return;  // uniform in the warp
  uint a[KS][4];
  mma_weights(a, weights, g, t);
  const float bias = mma_bias(weights);
  const int x = min(px0 + g, w - 1);
  uint b[KS][4][2], next[4];  // the window, and the next block's pixels
  mma_column_start(b, next, src, w, h, edge, x, ~0u, y_start - GAUSS_R, t);
  for (int mb = 0; mb < MMA_STRIP / 16; ++mb) {
    const int y0 = y_start + 16 * mb;
    if (y0 >= h) break;
    mma_column_advance(b, next, src, w, h, edge, x, ~0u, y0 + 16 - GAUSS_R + 16 * (KS - 1), t);
    float d[4][4];
    mma_products(d, a, b);
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // (row g or g + 8, pixel 2t or 2t + 1)
      const int y = y0 + g + (e >> 1) * 8, xo = px0 + 2 * t + (e & 1);
      if (y < h && xo < w)
        mid[(size_t)y * w + xo] = (uint2)(f16x2(d[1][e] - bias, d[0][e] - bias),
                                          f16x2(d[3][e] - bias, d[2][e] - bias));
    }
    mma_shift(b);
  }
}
// Channel c of pixels p0 and p1 (f16 RGBA, two words each) as one f16 pair.
inline uint channel_pair(uint2 p0, uint2 p1, int c) {
  const uint w0 = c < 2 ? p0.x : p0.y, w1 = c < 2 ? p1.x : p1.y;
  return (c & 1) ? ((w0 >> 16) | (w1 & 0xFFFF0000u)) : ((w0 & 0xFFFFu) | (w1 << 16));
}
// Lane (g, t)'s intermediate pixels of a block of 16 inputs from x along one row: x + 2t,
// 2t + 1, 2t + 8, 2t + 9 through the edge mode.
inline void mma_row_load(uint2 p[4], global const uint2* mid, int w, int edge, size_t row, int x,
                         int t) {
  const int cols[4] = {2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9};
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int xx = edge_index(x + cols[r], w, edge);
    p[r] = mid[row + max(xx, 0)] & (xx < 0 ? 0u : ~0u);
  }
}
// The B fragments of the 4 channels from mma_row_load's pixels.
inline void mma_row_convert(uint b[4][2], const uint2 p[4]) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    b[c][0] = channel_pair(p[0], p[1], c);
    b[c][1] = channel_pair(p[2], p[3], c);
  }
}
kernel void gauss_mma_rows(global const uint2* mid, global uint* dst, int w, int h, int edge,
                           constant float* weights) {
  const int lane = get_local_id(0) & 31, g = lane >> 2, t = lane & 3;
  const int x_start = (int)(get_global_id(0) / 32) * MMA_STRIPX;
  const int y0 = get_global_id(1) * 8;
  if (x_start >= w || y0 >= h) return;  // uniform in the warp
  uint a[KS][4];
  mma_weights(a, weights, g, t);
  const size_t row = (size_t)min(y0 + g, h - 1) * w;  // B's column n = g: row y0 + g
  uint b[KS][4][2];
#pragma unroll
  for (int s = 0; s < KS - 1; ++s) {
    uint2 p[4];
    mma_row_load(p, mid, w, edge, row, x_start - GAUSS_R + 16 * s, t);
    mma_row_convert(b[s], p);
  }
  uint2 next[4];  // the next block's pixels, loaded one block ahead
  mma_row_load(next, mid, w, edge, row, x_start - GAUSS_R + 16 * (KS - 1), t);
  for (int mb = 0; mb < MMA_STRIPX / 16; ++mb) {
    const int x0 = x_start + 16 * mb;
    if (x0 >= w) break;
    mma_row_convert(b[KS - 1], next);
    mma_row_load(next, mid, w, edge, row, x0 + 16 - GAUSS_R + 16 * (KS - 1), t);
    float d[4][4];
    mma_products(d, a, b);
#pragma unroll
    for (int e = 0; e < 4; ++e) {  // (output x0 + g or x0 + g + 8, row y0 + 2t or 2t + 1)
      const int x = x0 + g + (e >> 1) * 8, y = y0 + 2 * t + (e & 1);
      if (x < w && y < h)
        dst[(size_t)y * w + x] = pack_pixel((float4)(d[0][e], d[1][e], d[2][e], d[3][e]));
    }
    mma_shift(b);
  }
}
#endif  // MMA_STRIPX

// fused-mma: both products in one kernel, the column products' results passed to the row
// products through local memory instead of an intermediate image. A work-group of MMA_WARPS
// warps owns an output tile MMA_TX pixels wide and walks down `strip` rows of it (a multiple of
// 16), 16 at a time:
//  1. columns: the MMA_NG groups of 8 input columns from x0 - R that the tile's row products
//     read (group j: columns x0 - R + 8j ..; the edge mode applied to x here) are spread over
//     the warps; each walks down as gauss_mma_cols does, keeping its groups' last KS blocks of
//     B fragments in registers, and writes its 16 x 8 result as f16 pairs.
//  2. rows: unit (row group rg, output block m) takes the 16 x 8 product of W with the
//     intermediate of rows 8 rg .. 8 rg + 7, columns x0 + 16 m - R .. + 16 KS: groups 2 m ..
//     2 m + 2 KS - 1.
// The column products' accumulator fragment (lane (g, t): rows g and g + 8, columns 2t and
// 2t + 1) is, packed in f16 pairs, exactly the row products' B fragment (k = column 2t, 2t + 1
// of a half block, n = row g) of row groups 0 and 1, so lane l of a warp of phase 2 reads what
// lane l of some warp of phase 1 wrote: frag[rg][j][lane], a uint4 of the 4 channels' pairs,
// with no bank conflicts. Two buffers, so one barrier a step. On an NVIDIA H100 (1920x1080,
// sigma 10): 0.027 ms at R 16 (separable-mma 0.035), 0.020 at R 4 and 8, 0.036 at R 32.
#ifdef MMA_TX
#define MMA_M (MMA_TX / 16)                                // output blocks of a tile's row
#define MMA_NG (2 * (MMA_M + KS - 1))                      // column groups the rows read
#define MMA_GPW ((MMA_NG + MMA_WARPS - 1) / MMA_WARPS)     // column groups a warp
kernel __attribute__((reqd_work_group_size(32 * MMA_WARPS, 1, 1))) void gauss_mma_fused(
    global const uint* src, global uint* dst, int w, int h, int edge, constant float* weights,
    int strip) {
  local uint4 frag[2][2][MMA_NG][32];
  const int lane = get_local_id(0) & 31, warp = get_local_id(0) >> 5, g = lane >> 2, t = lane & 3;
  const int x0 = get_group_id(0) * MMA_TX, y_start = get_group_id(1) * strip;
  uint a[KS][4];
  mma_weights(a, weights, g, t);
  const float bias = mma_bias(weights);
  int xs[MMA_GPW];  // lane's input column of each of its groups, through the edge mode
  uint xmask[MMA_GPW];
  uint b[MMA_GPW][KS][4][2], next[MMA_GPW][4];
#pragma unroll
  for (int q = 0; q < MMA_GPW; ++q) {
    const int xi = edge_index(x0 - GAUSS_R + 8 * (warp + q * MMA_WARPS) + g, w, edge);
    xmask[q] = xi < 0 ? 0u : ~0u;
    xs[q] = max(xi, 0);
    mma_column_start(b[q], next[q], src, w, h, edge, xs[q], xmask[q], y_start - GAUSS_R, t);
  }
  for (int mb = 0; mb < strip / 16; ++mb) {
    const int y0 = y_start + 16 * mb;
    if (y0 >= h) break;  // uniform in the work-group
    local uint4(*buf)[MMA_NG][32] = frag[mb & 1];
#pragma unroll
    for (int q = 0; q < MMA_GPW; ++q) {  // phase 1
      const int j = warp + q * MMA_WARPS;
      if (MMA_NG % MMA_WARPS != 0 && j >= MMA_NG) break;  // uniform in the warp
      mma_column_advance(b[q], next[q], src, w, h, edge, xs[q], xmask[q],
                         y0 + 16 - GAUSS_R + 16 * (KS - 1), t);
      float d[4][4];
      mma_products(d, a, b[q]);
      buf[0][j][lane] = (uint4)(f16x2(d[0][1] - bias, d[0][0] - bias),
                                f16x2(d[1][1] - bias, d[1][0] - bias),
                                f16x2(d[2][1] - bias, d[2][0] - bias),
                                f16x2(d[3][1] - bias, d[3][0] - bias));
      buf[1][j][lane] = (uint4)(f16x2(d[0][3] - bias, d[0][2] - bias),
                                f16x2(d[1][3] - bias, d[1][2] - bias),
                                f16x2(d[2][3] - bias, d[2][2] - bias),
                                f16x2(d[3][3] - bias, d[3][2] - bias));
      mma_shift(b[q]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int u = warp; u < 2 * MMA_M; u += MMA_WARPS) {  // phase 2
      const int rg = u & 1, m = u >> 1;
      uint bb[KS][4][2];
#pragma unroll
      for (int s = 0; s < KS; ++s) {
        const uint4 lo = buf[rg][2 * m + 2 * s][lane], hi = buf[rg][2 * m + 2 * s + 1][lane];
        bb[s][0][0] = lo.x;
        bb[s][1][0] = lo.y;
        bb[s][2][0] = lo.z;
        bb[s][3][0] = lo.w;
        bb[s][0][1] = hi.x;
        bb[s][1][1] = hi.y;
        bb[s][2][1] = hi.z;
        bb[s][3][1] = hi.w;
      }
      float d[4][4];
      mma_products(d, a, bb);
#pragma unroll
      for (int e = 0; e < 4; ++e) {  // (output x0 + 16m + g (+ 8), row y0 + 8rg + 2t (+ 1))
        const int x = x0 + 16 * m + g + (e >> 1) * 8, y = y0 + 8 * rg + 2 * t + (e & 1);
        if (x < w && y < h)
          dst[(size_t)y * w + x] = pack_pixel((float4)(d[0][e], d[1][e], d[2][e], d[3][e]));
      }
    }
  }
}
#endif  // MMA_TX
#endif  // GAUSS_R && (MMA_STRIPX || MMA_TX)
