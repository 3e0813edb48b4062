// Box filter, buffer schedules: tiled (CPUs) and fused (GPUs), one pass each over RGBA buffers,
// with no image and no intermediate: a work-item (tiled) or a work-group (fused) owns a tile of
// the output at a time. Both write their means with mean_u8() (below). The sum types and the
// exact mean come from kernels/box_common.cl (its header: what the sums mean, and why they are
// exact), which the host builds before this file.

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
// each tile and (2R+1) / TILE_W to start each row window. Sums are exact integers, as in
// kernels/box_common.cl.
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
// (per_item in BoxTiled::prepare, filters/box/box_buffer.cpp); with the buffer's base aligned
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
#if defined(FUSED_RADIUS) && !defined(FUSED_OUT_STRIDE)
#error "FUSED_OUT_STRIDE is given by the host (filters/box/box_buffer.cpp, fused_out_stride)"
#endif
// FUSED_OUT_STRIDE: row stride of the output tile in local memory, in pixels, given by the host
// (filters/box/box_buffer.cpp, fused_out_stride, which also sizes the local memory): a multiple
// of 4 pixels (16-byte rows for phase 3) at least FUSED_W, and FUSED_CHUNKS banks past a
// multiple of 32 (rounded up to 4), so that the rows that share a sub-group in phase 2 write
// different banks.

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
