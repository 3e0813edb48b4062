// Performance-model probes (`blurtool probe`): the experiments of the GPU performance-model
// write-up (caches, strides, divergence), as kernels whose results can be checked exactly (cache,
// stride) or closely (divergence) against tools/probe_reference.cpp, so that a timing always
// belongs to a kernel that did what its name says.

// No multiply-add contraction: the host reference rounds every product and sum on its own.
#pragma OPENCL FP_CONTRACT OFF

// ---------------------------------------------------------------------------------------------
// cache: the write-up's 5-fetch average, sum of tex2D(texcoords * scale + i * 0.01), with the
// coordinates in texels so that the image (sampler) and buffer reads fetch the same texels:
// output pixel (x, y) of a w x h image is the mean, rounded to nearest, of the 5 source pixels
//   ((floor(x * num / den) + i * step_x) mod w, (floor(y * num / den) + i * step_y) mod h),
// i = 0..4, where num / den is the coordinate scale (0.1 = 1/10) and step is 1% of the side.
// Neighbouring work-items read texels num / den apart: at scale 16, a warp's 32 reads of one
// row fall on 32 different 64-byte lines; at 0.1, ten work-items read the same texel.
// Pixels are RGBA8 words (R in the low byte); the output is a buffer of such words.

constant sampler_t probe_texel =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

// The source coordinate of fetch i on an axis of n texels (s = floor(p * num / den) mod n).
inline int probe_wrap(int s, int i, int step, int n) {
  const int c = s + i * step;  // s < n and i * step <= 4 n / 100: below 2 n
  return c >= n ? c - n : c;
}

inline uint probe_pack(uint4 sum) {
  const uint4 m = (sum + 2u) / 5u;  // round half up; at most 255
  return m.x | m.y << 8 | m.z << 16 | m.w << 24;
}

kernel void probe_cache_image(read_only image2d_t src, global uint* dst, int w, int h, int num,
                              int den, int step_x, int step_y) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  const int sx = (int)((long)x * num / den % w), sy = (int)((long)y * num / den % h);
  uint4 sum = 0;
  for (int i = 0; i < 5; ++i)
    sum += read_imageui(src, probe_texel,
                        (int2)(probe_wrap(sx, i, step_x, w), probe_wrap(sy, i, step_y, h)));
  dst[(size_t)y * w + x] = probe_pack(sum);
}

kernel void probe_cache_buffer(global const uint* src, global uint* dst, int w, int h, int num,
                               int den, int step_x, int step_y) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  const int sx = (int)((long)x * num / den % w), sy = (int)((long)y * num / den % h);
  uint4 sum = 0;
  for (int i = 0; i < 5; ++i) {
    const uint p =
        src[(size_t)probe_wrap(sy, i, step_y, h) * w + probe_wrap(sx, i, step_x, w)];
    sum += (uint4)(p & 0xFFu, p >> 8 & 0xFFu, p >> 16 & 0xFFu, p >> 24);
  }
  dst[(size_t)y * w + x] = probe_pack(sum);
}

// ---------------------------------------------------------------------------------------------
// divergence: the write-up's three-way branch on doit = fract(u * frequency), u = (x + 0.5) / w
// the pixel's horizontal texture coordinate: doit < 0.3, < 0.7, else, each branch calling the
// expensive cool_colors on a different argument (so that no compiler can share one call between
// two branches). frequency 1 gives three vertical bands (coherent: a warp's pixels agree except
// at two borders); 100 gives bands w / 100 pixels wide (incoherent: a warp of 32 neighbouring
// pixels holds all three). probe_no_branch calls cool_colors once, as one branch does.
// cool_colors runs `rounds` times on a moving point, so that the bodies, not the 16-byte
// stores, set the time on fast devices. inv_w is 1 / w from the host (a multiplication rounds
// the same on every device; a division need not).

inline float4 cool_colors(float2 p, int rounds) {
  float4 c = 0.0f;
  for (int k = 0; k < rounds; ++k) {
    c += (float4)(sin(p.x), log(cos(p.y)), exp(p.x), pow(p.x, p.y));
    p = p * 0.999f + 0.0005f;  // stays inside (0, 1)
  }
  return c;
}

inline float2 probe_coords(int x, int y, float inv_w, float inv_h) {
  return (float2)(((float)x + 0.5f) * inv_w, ((float)y + 0.5f) * inv_h);
}

kernel void probe_branch(global float4* dst, int w, int h, float inv_w, float inv_h,
                         float frequency, int rounds) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  const float2 p = probe_coords(x, y, inv_w, inv_h);
  const float v = p.x * frequency, doit = v - floor(v);
  float4 c;
  if (doit < 0.3f)
    c = cool_colors(p, rounds).wxyz * 0.5f;
  else if (doit < 0.7f)
    c = cool_colors(1.0f - p, rounds) * 4.5f;
  else
    c = cool_colors(p.yx, rounds) * 0.15f;
  dst[(size_t)y * w + x] = c;
}

kernel void probe_no_branch(global float4* dst, int w, int h, float inv_w, float inv_h,
                            float frequency, int rounds) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h) return;
  (void)frequency;
  const float2 p = probe_coords(x, y, inv_w, inv_h);
  dst[(size_t)y * w + x] = cool_colors(p, rounds).wxyz * 0.5f;
}

// ---------------------------------------------------------------------------------------------
// stride: the write-up's read-modify-write walk, buf[loc & mask]++ with loc advancing by
// `stride` bytes, spread over work-items: work-item i makes access i, at byte (i * stride) &
// mask of a buffer of mask + 1 bytes (a power of two). Neighbouring work-items touch bytes
// `stride` apart, which is what decides how many cache lines (or memory transactions) a warp's
// accesses need. For fewer than (mask + 1) / (largest power of two dividing stride) accesses no
// two work-items touch the same byte, so the result is the host walk's, exactly.
kernel void probe_stride(global uchar* buf, uint stride, uint mask) {
  const uint i = get_global_id(0);
  buf[(i * stride) & mask] += 1;
}
