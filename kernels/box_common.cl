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
// The schedules are in three family files, each built after kernels/common.cl and this file
// (the host prepends both: runtime/cl_runtime.cpp, program_prefix):
//   kernels/box_window.cl   single, single-linear, double, double-linear: every output reads its
//                           whole window (directly or through the bilinear sampler);
//   kernels/box_running.cl  accumulated, unrolled, scan, segmented, segmented-local: running
//                           sums, a cost a pixel independent of R;
//   kernels/box_buffer.cl   tiled (CPUs) and fused (GPUs): one pass over RGBA buffers.
// This file holds what they share: the sum types, the loads and stores of the image schedules
// and the exact mean.
//
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
