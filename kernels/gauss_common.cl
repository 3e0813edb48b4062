// Gaussian blur kernels: every schedule from "Compute shaders in graphics: Gaussian blur",
// for one meaning: out(x, y) = sum over i, j in [-R, R] of w(i) w(j) in(x + i, y + j), with the
// host's normalised weights w (sum 1 after truncation at R) and the edge mode for pixels outside.
//
// Every kernel builds for RGBA8 and, with -DPIXEL16, RGBA16 input and output (pixel_t and
// PIXEL_MAX in common.cl); only types and constants differ.
//
// The schedules are in three family files, each built after kernels/common.cl and this file
// (the host prepends both: runtime/cl_runtime.cpp, program_prefix):
//   kernels/gauss_window.cl  naive, naive-local, separable, separable-linear, separable-local,
//                            fused-local: over images, the radius an argument;
//   kernels/gauss_buffer.cl  tiled (CPUs), fused and separable-buffer (GPUs, built per radius):
//                            over buffers;
//   kernels/gauss_mma.cl     separable-mma, fused-mma: band-matrix products on NVIDIA tensor
//                            cores, over buffers, built per radius.
// This file holds what they share: a buffer pixel as floats and back.
//
// Arguments shared by the kernels:
//   weights  2R+1 floats, weights[R + i] = w(i)

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
