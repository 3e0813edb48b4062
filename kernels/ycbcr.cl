// JPEG's per-pixel colour stages on the device, exactly as libjpeg-turbo computes them on the
// host (image/jpeg_planes.h says which of libjpeg's functions each follows; jpeg_planes.cpp holds
// the host reference, ycbcr_to_rgba and rgba_to_ycbcr, that the tests compare these with):
//   - decoding: Y, Cb, Cr planes as coded -> fancy upsampling -> YCbCr -> RGB, into the RGBA8
//     input of a filter (a buffer of uchar4 or a CL_UNORM_INT8 image);
//   - encoding: a filter's RGBA8 output -> RGB -> YCbCr -> chroma downsampling, into planes in
//     libjpeg's raw-data layout (padded to whole blocks and MCU rows, the padding as libjpeg
//     makes it), which the host compresses.
// All planes live in one buffer of bytes: plane i at offset off_i, `pitch_i` samples a row.
// One work-item per output pixel or sample; integer arithmetic only.

// A plane sample with the edge repeated outside [0, w) x [0, h).
inline int plane_at(global const uchar* p, int pitch, int w, int h, int x, int y) {
  return p[clamp(y, 0, h - 1) * pitch + clamp(x, 0, w - 1)];
}

// libjpeg's fancy upsampling (jdsample.c) of a chroma plane (cw x ch samples of image data,
// each covering hf x vf pixels) at pixel (x, y).
inline int upsample(global const uchar* c, int pitch, int cw, int ch, int hf, int vf, int x,
                    int y) {
  if (hf == 1 && vf == 1) return plane_at(c, pitch, cw, ch, x, y);
  if (vf == 1) {  // h2v1
    const int cx = x >> 1, nx = (x & 1) ? cx + 1 : cx - 1;
    return (plane_at(c, pitch, cw, ch, cx, y) * 3 + plane_at(c, pitch, cw, ch, nx, y) + 1 +
            (x & 1)) >> 2;
  }
  const int cy = y >> 1, ny = (y & 1) ? cy + 1 : cy - 1;
  if (hf == 1)  // h1v2
    return (plane_at(c, pitch, cw, ch, x, cy) * 3 + plane_at(c, pitch, cw, ch, x, ny) + 1 +
            (y & 1)) >> 2;
  const int cx = x >> 1, nx = (x & 1) ? cx + 1 : cx - 1;  // h2v2
  const int near = plane_at(c, pitch, cw, ch, cx, cy) * 3 + plane_at(c, pitch, cw, ch, cx, ny);
  const int far = plane_at(c, pitch, cw, ch, nx, cy) * 3 + plane_at(c, pitch, cw, ch, nx, ny);
  return (near * 3 + far + 8 - (x & 1)) >> 4;
}

// The RGBA8 pixel (x, y) of the planes (components 1: grey, R = G = B = Y).
inline uint4 ycbcr_pixel(global const uchar* planes, int y_off, int y_pitch, int cb_off,
                         int cr_off, int c_pitch, int cw, int ch, int hf, int vf, int components,
                         int width, int height, int x, int y) {
  const int l = plane_at(planes + y_off, y_pitch, width, height, x, y);
  if (components == 1) return (uint4)(l, l, l, 255);
  const int b = upsample(planes + cb_off, c_pitch, cw, ch, hf, vf, x, y) - 128;
  const int r = upsample(planes + cr_off, c_pitch, cw, ch, hf, vf, x, y) - 128;
  // jdcolor.c: R = Y + 1.402 Cr, G = Y - 0.34414 Cb - 0.71414 Cr, B = Y + 1.772 Cb.
  const int3 rgb = (int3)(l + ((91881 * r + 32768) >> 16),
                          l + ((-22554 * b - 46802 * r + 32768) >> 16),
                          l + ((116130 * b + 32768) >> 16));
  const uint3 c = convert_uint3(clamp(rgb, 0, 255));
  return (uint4)(c, 255);
}

#define YCBCR_ARGS                                                                             \
  global const uchar *planes, int y_off, int y_pitch, int cb_off, int cr_off, int c_pitch,     \
      int cw, int ch, int hf, int vf, int components, int width, int height
#define YCBCR_PASS \
  planes, y_off, y_pitch, cb_off, cr_off, c_pitch, cw, ch, hf, vf, components, width, height

kernel void ycbcr_to_rgba_buffer(YCBCR_ARGS, global uchar4* dst) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  dst[y * width + x] = convert_uchar4(ycbcr_pixel(YCBCR_PASS, x, y));
}

kernel void ycbcr_to_rgba_image(YCBCR_ARGS, write_only image2d_t dst) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= width || y >= height) return;
  write_imagef(dst, (int2)(x, y), convert_float4(ycbcr_pixel(YCBCR_PASS, x, y)) / 255.0f);
}

// libjpeg's RGB -> YCbCr (jccolor.c): 16-bit fixed-point weights; Cb and Cr offset by 128
// with a rounding fudge of 1/2 - 2^-16.
inline int luma_of(uint4 c) {
  return (19595 * (int)c.x + 38470 * (int)c.y + 7471 * (int)c.z + 32768) >> 16;
}
inline int blue_chroma_of(uint4 c) {
  return (-11059 * (int)c.x - 21709 * (int)c.y + 32768 * (int)c.z + (128 << 16) + 32767) >> 16;
}
inline int red_chroma_of(uint4 c) {
  return (32768 * (int)c.x - 27439 * (int)c.y - 5329 * (int)c.z + (128 << 16) + 32767) >> 16;
}

inline uint4 buffer_pixel(global const uchar4* src, int width, int height, int x, int y) {
  return convert_uint4(src[clamp(y, 0, height - 1) * width + clamp(x, 0, width - 1)]);
}

inline uint4 image_pixel(read_only image2d_t src, int width, int height, int x, int y) {
  const sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE |
                            CLK_FILTER_NEAREST;
  const float4 v = read_imagef(src, nearest, (int2)(clamp(x, 0, width - 1),
                                                    clamp(y, 0, height - 1)));
  return convert_uint4(v * 255.0f + 0.5f);
}

inline int2 chroma_of(uint4 c) { return (int2)(blue_chroma_of(c), red_chroma_of(c)); }

// Cb and Cr sums of the hf x vf pixels a chroma sample covers, to their planes as the mean:
// jcsample.c's bias is 1, 2, 1, 2, ... across for 2x2 and 0, 1, ... for 2x1.
inline void store_chroma(global uchar* planes, int cb_off, int cr_off, int c_pitch, int x, int y,
                         int2 sum, int n) {
  const int bias = n == 4 ? 1 + (x & 1) : n == 2 ? (x & 1) : 0;
  const int shift = n == 4 ? 2 : n == 2 ? 1 : 0;
  planes[cb_off + y * c_pitch + x] = (uchar)((sum.x + bias) >> shift);
  planes[cr_off + y * c_pitch + x] = (uchar)((sum.y + bias) >> shift);
}

// The planes of an RGBA image, one launch for Y, Cb and Cr: work-item (x, y) makes Y at (x, y)
// of its plane (y_pitch x y_rows; the pixels past the image repeat its edge) and, with three
// components (`chroma`), Cb and Cr at (x, y) of theirs (c_pitch x c_rows; the range covers the
// larger plane in each direction): the mean of the hf x vf pixels the sample covers, the pixels past the right and bottom
// edges repeating the last column and row; the rows past the image's last chroma row (ch)
// repeat that row. FETCH(px, py): a pixel of the kernel's `src` as uint4.
#define PLANES_BODY(FETCH)                                                                 \
  const int x = get_global_id(0), y = get_global_id(1);                                    \
  if (x < y_pitch && y < y_rows) planes[y_off + y * y_pitch + x] = (uchar)luma_of(FETCH(x, y)); \
  if (!chroma || x >= c_pitch || y >= c_rows) return;                                      \
  const int cy = min(y, ch - 1);                                                           \
  int2 sum = 0;                                                                            \
  for (int dy = 0; dy < vf; ++dy)                                                          \
    for (int dx = 0; dx < hf; ++dx) sum += chroma_of(FETCH(x * hf + dx, cy * vf + dy));   \
  store_chroma(planes, cb_off, cr_off, c_pitch, x, y, sum, hf * vf)
#define FETCH_BUFFER(px, py) buffer_pixel(src, width, height, px, py)
#define FETCH_IMAGE(px, py) image_pixel(src, width, height, px, py)
#define PLANES_ARGS                                                                      \
  int width, int height, global uchar *planes, int y_off, int y_pitch, int y_rows, int chroma, \
      int cb_off, int cr_off, int c_pitch, int c_rows, int hf, int vf, int ch

kernel void rgba_to_planes_buffer(global const uchar4* restrict src, PLANES_ARGS) {
  PLANES_BODY(FETCH_BUFFER);
}

kernel void rgba_to_planes_image(read_only image2d_t src, PLANES_ARGS) {
  PLANES_BODY(FETCH_IMAGE);
}

// ---------------------------------------------------------------------------------------------
// JPEG's per-block stages on the device, with libjpeg-turbo's integer arithmetic (the host
// references are blocks_to_planes and planes_to_blocks in image/jpeg_planes.cpp):
//   - decoding: quantised DCT coefficients (libjpeg's JBLOCKs, 64 shorts in natural order) ->
//     dequantisation and the accurate integer inverse DCT (jidctint.c, Loeffler-Ligtenberg-
//     Moschytz with 13-bit constants) -> a plane of samples;
//   - encoding: a plane in the raw-data layout -> the forward DCT, fast integer (jfdctfst.c,
//     Arai-Agui-Nakajima with 8-bit constants, below quality 96) or accurate integer
//     (jfdctint.c) -> quantisation by reciprocal multiplication (jcdctmgr.c) -> coefficients.
// One work-item per 8x8 block, its two passes in private memory.

#define ISLOW_BITS 13
#define PASS1_BITS 2
// DESCALE of jdct.h: a right shift rounding half up.
#define DESCALE(x, n) (((x) + (1 << ((n)-1))) >> (n))

// The 1-D 8-point LLM inverse DCT of in[0..7] (already dequantised, or pass 1's output), the
// even part then the odd part; out[k] before its final descale.
// In 64 bits, as libjpeg's JLONG on LP64 (coefficients of damaged or crafted files would
// overflow 32).
inline void idct_1d(const long in[8], long out[8]) {
  long z2 = in[2], z3 = in[6];
  long z1 = (z2 + z3) * 4433;
  const long t2 = z1 + z3 * -15137, t3 = z1 + z2 * 6270;
  const long t0 = (in[0] + in[4]) * (1L << ISLOW_BITS), t1 = (in[0] - in[4]) * (1L << ISLOW_BITS);
  const long t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
  long o3 = in[1], o2 = in[3], o1 = in[5], o0 = in[7];
  long z4 = o1 + o3;
  z3 = o0 + o2;
  z2 = o1 + o2;
  z1 = o0 + o3;
  const long z5 = (z3 + z4) * 9633;
  o3 *= 12299;
  o2 *= 25172;
  o1 *= 16819;
  o0 *= 2446;
  z4 = z4 * -3196 + z5;
  z3 = z3 * -16069 + z5;
  z1 *= -7373;
  z2 *= -20995;
  o3 += z1 + z4;
  o2 += z2 + z3;
  o1 += z2 + z4;
  o0 += z1 + z3;
  out[0] = t10 + o3;
  out[7] = t10 - o3;
  out[1] = t11 + o2;
  out[6] = t11 - o2;
  out[2] = t12 + o1;
  out[5] = t12 - o1;
  out[3] = t13 + o0;
  out[4] = t13 - o0;
}

// libjpeg's post-IDCT range limit: the value plus 128, clamped to 0..255, taken modulo 1024
// first as its table lookup does (so that wild coefficients wrap as they do there).
#define DESCALE64(x, n) (((x) + (1L << ((n)-1))) >> (n))

inline uchar idct_sample(long v) {
  const int m = (int)(v & 1023);
  return (uchar)(m < 512 ? min(m + 128, 255) : m >= 896 ? m - 896 : 0);
}

// Component i of a per-component argument (i in 0..3).
inline int of_component(int4 v, int i) {
  return i == 0 ? v.s0 : i == 1 ? v.s1 : i == 2 ? v.s2 : v.s3;
}
inline long of_component_l(long4 v, int i) {
  return i == 0 ? v.s0 : i == 1 ? v.s1 : i == 2 ? v.s2 : v.s3;
}

// Block (bx, by) of component i = get_global_id(2), every component in one launch (the
// per-component arguments are vectors, component i in lane i): coefficients from coef +
// coef_offs[i] + (by * blocks_across[i] + bx) * 64, dequantised by quant_tables[64 i..+63],
// into the plane at offsets[i] (pitches[i] samples a row) where it lies inside widths[i] x
// heights[i] samples.
kernel void dct_to_plane(global const short* restrict coef, long4 coef_offs, int4 blocks_across_c,
                         int4 blocks_down_c, global const ushort* restrict quant_tables,
                         global uchar* planes, int4 offsets, int4 pitches, int4 widths,
                         int4 heights) {
  const int comp = get_global_id(2);
  const long coef_off = of_component_l(coef_offs, comp);
  const int blocks_across = of_component(blocks_across_c, comp),
            blocks_down = of_component(blocks_down_c, comp), offset = of_component(offsets, comp),
            pitch = of_component(pitches, comp), width = of_component(widths, comp),
            height = of_component(heights, comp), quant_off = 64 * comp;
  const int bx = get_global_id(0), by = get_global_id(1);
  if (bx >= blocks_across || by >= blocks_down || bx * 8 >= width || by * 8 >= height) return;
  global const short* b = coef + coef_off + ((size_t)by * blocks_across + bx) * 64;
  global const ushort* quant = quant_tables + quant_off;
  int ws[64];  // libjpeg's int workspace
  for (int c = 0; c < 8; ++c) {  // pass 1: columns, kept scaled by 2^PASS1_BITS
    long in[8], out[8];
    for (int k = 0; k < 8; ++k)
      in[k] = b[k * 8 + c] * (int)(short)quant[k * 8 + c];  // libjpeg's 16-bit multipliers
    idct_1d(in, out);
    // libjpeg keeps pass 1 in an int workspace (its all-zero-AC shortcut gives the same).
    for (int k = 0; k < 8; ++k) ws[k * 8 + c] = (int)DESCALE64(out[k], ISLOW_BITS - PASS1_BITS);
  }
  for (int r = 0; r < 8; ++r) {  // pass 2: rows, to samples
    const int y = by * 8 + r;
    if (y >= height) break;
    long in[8], out[8];
    for (int k = 0; k < 8; ++k) in[k] = ws[r * 8 + k];
    idct_1d(in, out);
    global uchar* row = planes + offset + (size_t)y * pitch + bx * 8;
    for (int k = 0; k < 8 && bx * 8 + k < width; ++k)
      row[k] = idct_sample(DESCALE64(out[k], ISLOW_BITS + PASS1_BITS + 3));
  }
}

// The 1-D 8-point AAN forward DCT of d[0..7] in place, in 16-bit DCTELEMs as jfdctfst.c.
#define FAST_MUL(v, c) ((short)(((int)(v) * (c)) >> 8))
inline void fdct_fast_1d(short d[8]) {
  const short t0 = d[0] + d[7], t7 = d[0] - d[7], t1 = d[1] + d[6], t6 = d[1] - d[6];
  const short t2 = d[2] + d[5], t5 = d[2] - d[5], t3 = d[3] + d[4], t4 = d[3] - d[4];
  short t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
  d[0] = t10 + t11;
  d[4] = t10 - t11;
  const short z1 = FAST_MUL(t12 + t13, 181);
  d[2] = t13 + z1;
  d[6] = t13 - z1;
  t10 = t4 + t5;
  t11 = t5 + t6;
  t12 = t6 + t7;
  const short z5 = FAST_MUL(t10 - t12, 98);
  const short z2 = FAST_MUL(t10, 139) + z5, z4 = FAST_MUL(t12, 334) + z5;
  const short z3 = FAST_MUL(t11, 181);
  const short z11 = t7 + z3, z13 = t7 - z3;
  d[5] = z13 + z2;
  d[3] = z13 - z2;
  d[1] = z11 + z4;
  d[7] = z11 - z4;
}

// The 1-D 8-point LLM forward DCT of d[0..7] in place (jfdctint.c); `last`: pass 2, which
// removes pass 1's scaling.
inline void fdct_slow_1d(short d[8], bool last) {
  const int t0 = d[0] + d[7], t7 = d[0] - d[7], t1 = d[1] + d[6], t6 = d[1] - d[6];
  const int t2 = d[2] + d[5], t5 = d[2] - d[5], t3 = d[3] + d[4], t4 = d[3] - d[4];
  const int t10 = t0 + t3, t13 = t0 - t3, t11 = t1 + t2, t12 = t1 - t2;
  const int shift = last ? ISLOW_BITS + PASS1_BITS : ISLOW_BITS - PASS1_BITS;
  d[0] = (short)(last ? DESCALE(t10 + t11, PASS1_BITS) : (t10 + t11) << PASS1_BITS);
  d[4] = (short)(last ? DESCALE(t10 - t11, PASS1_BITS) : (t10 - t11) << PASS1_BITS);
  const int e = (t12 + t13) * 4433;
  d[2] = (short)DESCALE(e + t13 * 6270, shift);
  d[6] = (short)DESCALE(e + t12 * -15137, shift);
  int z1 = t4 + t7, z2 = t5 + t6, z3 = t4 + t6, z4 = t5 + t7;
  const int z5 = (z3 + z4) * 9633;
  const int o4 = t4 * 2446, o5 = t5 * 16819, o6 = t6 * 25172, o7 = t7 * 12299;
  z1 *= -7373;
  z2 *= -20995;
  z3 = z3 * -16069 + z5;
  z4 = z4 * -3196 + z5;
  d[7] = (short)DESCALE(o4 + z1 + z3, shift);
  d[5] = (short)DESCALE(o5 + z2 + z4, shift);
  d[3] = (short)DESCALE(o6 + z2 + z3, shift);
  d[1] = (short)DESCALE(o7 + z1 + z4, shift);
}

// Blocks (bx, by) of component i = get_global_id(2)'s plane (at offsets[i], pitches[i] samples
// a row, every block inside it), every component in one launch, to quantised coefficients at
// coef + coef_offs[i] + (by * blocks_across[i] + bx) * 64. divisors (from divisor_tables + 192
// i): 64 reciprocals, 64 corrections and 64 shifts (jcdctmgr.c's compute_reciprocal); fast: the
// AAN DCT.
kernel void plane_to_dct(global const uchar* restrict planes, int4 offsets, int4 pitches,
                         global short* restrict coef, long4 coef_offs, int4 blocks_across_c,
                         int4 blocks_down_c, global const int* restrict divisor_tables,
                         int fast) {
  const int comp = get_global_id(2);
  const long coef_off = of_component_l(coef_offs, comp);
  const int offset = of_component(offsets, comp), pitch = of_component(pitches, comp),
            blocks_across = of_component(blocks_across_c, comp),
            blocks_down = of_component(blocks_down_c, comp), div_off = 192 * comp;
  global const int* divisors = divisor_tables + div_off;
  const int bx = get_global_id(0), by = get_global_id(1);
  if (bx >= blocks_across || by >= blocks_down) return;
  short d[64];
  for (int r = 0; r < 8; ++r) {
    global const uchar* row = planes + offset + (size_t)(by * 8 + r) * pitch + bx * 8;
    for (int k = 0; k < 8; ++k) d[r * 8 + k] = (short)(row[k] - 128);
  }
  for (int r = 0; r < 8; ++r) {
    if (fast)
      fdct_fast_1d(d + r * 8);
    else
      fdct_slow_1d(d + r * 8, false);
  }
  for (int c = 0; c < 8; ++c) {
    short col[8];
    for (int k = 0; k < 8; ++k) col[k] = d[k * 8 + c];
    if (fast)
      fdct_fast_1d(col);
    else
      fdct_slow_1d(col, true);
    for (int k = 0; k < 8; ++k) d[k * 8 + c] = col[k];
  }
  global short* out = coef + coef_off + ((size_t)by * blocks_across + bx) * 64;
  for (int i = 0; i < 64; ++i) {
    const int v = d[i];
    const uint a = (uint)((v < 0 ? -v : v) + divisors[64 + i]);
    const short q = (short)((a * (uint)divisors[i]) >> (divisors[128 + i] + 16));
    out[i] = v < 0 ? (short)-q : q;
  }
}

// ---------------------------------------------------------------------------------------------
// DCT blocks without their zeros (image/jpeg_planes.h SparseBlocks), the form in which a batch
// moves coefficients between host and device: a 64-bit mask a block (bit k: coefficient k, in
// natural order, is not zero) and the non-zero values block by block. Blocks are numbered
// through the components in order (block b is coefficients 64 b .. of the whole blocks). A
// work-group is a group of SPARSE_GROUP blocks: a block's values start at group_start[group]
// plus the bits of the masks before it in the group, which the work-group adds up in local
// memory.
#ifndef SPARSE_GROUP
#define SPARSE_GROUP 64  // the host builds these kernels with SparseBlocks::kGroup
#endif

// The sum of `n` over the work-items before this one in its work-group (SPARSE_GROUP of them),
// through `counts`.
inline uint group_prefix(local uint* counts, uint n) {
  const uint i = get_local_id(0);
  counts[i] = n;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint prefix = 0;
  for (uint k = 0; k < i; ++k) prefix += counts[k];
  return prefix;
}

// Where this work-item's block (b, below `blocks`) has its values, from its group's start and
// the masks before it in the group; *bits: its mask (0 past the last block).
inline uint values_start(global const ulong* mask, global const uint* group_start, uint blocks,
                         local uint* counts, ulong* bits) {
  const size_t b = get_global_id(0);
  *bits = b < blocks ? mask[b] : 0;
  return group_start[get_group_id(0)] + group_prefix(counts, (uint)popcount(*bits));
}

// Block b's coefficients whole (64 shorts at coef + 64 b) from its mask and values.
kernel __attribute__((reqd_work_group_size(SPARSE_GROUP, 1, 1))) void unpack_blocks(
    global const ulong* restrict mask, global const short* restrict values,
    global const uint* restrict group_start, uint blocks, global short* restrict coef) {
  local uint counts[SPARSE_GROUP];
  ulong bits;
  uint at = values_start(mask, group_start, blocks, counts, &bits);
  const size_t b = get_global_id(0);
  if (b >= blocks) return;
  global short* out = coef + b * 64;
  for (int r = 0; r < 8; ++r) {
    short v[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const uint set = (uint)(bits >> (r * 8 + c)) & 1;
      v[c] = set ? values[at] : 0;
      at += set;
    }
    vstore8((short8)(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]), r, out);
  }
}

// Pass 1 of packing whole blocks (coef, `blocks` of them): each block's mask, and each group's
// count of non-zero values (group_count[group]).
kernel __attribute__((reqd_work_group_size(SPARSE_GROUP, 1, 1))) void mask_blocks(
    global const short* restrict coef, uint blocks, global ulong* restrict mask,
    global uint* restrict group_count) {
  local uint counts[SPARSE_GROUP];
  const size_t b = get_global_id(0);
  ulong bits = 0;
  if (b < blocks) {
    global const short* in = coef + b * 64;
    for (int k = 0; k < 64; ++k) bits |= (ulong)(in[k] != 0) << k;
    mask[b] = bits;
  }
  const uint n = (uint)popcount(bits);
  const uint prefix = group_prefix(counts, n);
  if (get_local_id(0) == SPARSE_GROUP - 1) group_count[get_group_id(0)] = prefix + n;
}

// Pass 2, one work-group of SPARSE_GROUP: group_start[g] = the counts of the groups before g,
// and group_start[groups] their total. Each work-item adds up a run of groups.
kernel __attribute__((reqd_work_group_size(SPARSE_GROUP, 1, 1))) void scan_groups(
    global const uint* restrict group_count, uint groups, global uint* restrict group_start) {
  local uint counts[SPARSE_GROUP];
  const uint run = (groups + SPARSE_GROUP - 1) / SPARSE_GROUP;
  const uint first = min(groups, (uint)get_local_id(0) * run), end = min(groups, first + run);
  uint sum = 0;
  for (uint g = first; g < end; ++g) sum += group_count[g];
  uint start = group_prefix(counts, sum);
  for (uint g = first; g < end; ++g) {
    group_start[g] = start;
    start += group_count[g];
  }
  if (get_local_id(0) == SPARSE_GROUP - 1) group_start[groups] = start;
}

// Pass 3: block b's non-zero coefficients to values, from where its group and mask say.
kernel __attribute__((reqd_work_group_size(SPARSE_GROUP, 1, 1))) void pack_blocks(
    global const short* restrict coef, global const ulong* restrict mask,
    global const uint* restrict group_start, uint blocks, global short* restrict values) {
  local uint counts[SPARSE_GROUP];
  ulong bits;
  uint at = values_start(mask, group_start, blocks, counts, &bits);
  const size_t b = get_global_id(0);
  if (b >= blocks) return;
  global const short* in = coef + b * 64;
  for (int k = 0; k < 64; ++k)
    if ((bits >> k) & 1) values[at++] = in[k];
}
