// Gaussian blur, buffer schedules: tiled (CPUs), fused and separable-buffer (GPUs), over
// buffers of pixels, no images: tiled and fused in one pass, separable-buffer in two through an
// intermediate buffer. fused and separable-buffer are built per radius (-DGAUSS_R), so that
// their loops unroll, and share the horizontal pass over local memory (rows_from_local). What
// they compute, the weights argument and unpack_pixel()/pack_pixel(): kernels/gauss_common.cl,
// which the host builds before this file.

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
// on 64 bytes. The host computes the same size (per_item in GaussTiled::prepare,
// filters/gauss/gauss_buffer.cpp).
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
