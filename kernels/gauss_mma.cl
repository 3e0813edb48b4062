// Gaussian blur on NVIDIA tensor cores: separable-mma and fused-mma, the passes of
// separable-buffer (kernels/gauss_buffer.cl) as band-matrix products, over buffers (RGBA8),
// built per radius; the host builds them only where tensor cores are (compute capability 8.0
// and later). What they compute, the weights argument and pack_pixel():
// kernels/gauss_common.cl, which the host builds before this file.

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
