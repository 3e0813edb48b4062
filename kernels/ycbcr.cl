// JPEG's per-pixel colour stages on the device, exactly as libjpeg-turbo computes them on the
// host (core/jpeg_planes.h says which of libjpeg's functions each follows; jpeg_planes.cpp holds
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

// Y at (x, y) of its plane (y_pitch x y_rows; the pixels past the image repeat its edge).
kernel void rgba_to_luma_buffer(global const uchar4* restrict src, int width, int height,
                                global uchar* planes, int y_off, int y_pitch, int y_rows) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= y_pitch || y >= y_rows) return;
  planes[y_off + y * y_pitch + x] = (uchar)luma_of(buffer_pixel(src, width, height, x, y));
}

kernel void rgba_to_luma_image(read_only image2d_t src, int width, int height,
                               global uchar* planes, int y_off, int y_pitch, int y_rows) {
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= y_pitch || y >= y_rows) return;
  planes[y_off + y * y_pitch + x] = (uchar)luma_of(image_pixel(src, width, height, x, y));
}

// Cb and Cr at (x, y) of their planes (c_pitch x c_rows): the mean of the hf x vf pixels the
// sample covers, the pixels past the right and bottom edges repeating the last column and row;
// the rows past the image's last chroma row (ch) repeat that row. FETCH(px, py): a pixel of
// the kernel's `src` as uint4.
#define CHROMA_BODY(FETCH)                                                               \
  const int x = get_global_id(0), y = get_global_id(1);                                  \
  if (x >= c_pitch || y >= c_rows) return;                                               \
  const int cy = min(y, ch - 1);                                                         \
  int2 sum = 0;                                                                          \
  for (int dy = 0; dy < vf; ++dy)                                                        \
    for (int dx = 0; dx < hf; ++dx) sum += chroma_of(FETCH(x * hf + dx, cy * vf + dy)); \
  store_chroma(planes, cb_off, cr_off, c_pitch, x, y, sum, hf * vf)
#define FETCH_BUFFER(px, py) buffer_pixel(src, width, height, px, py)
#define FETCH_IMAGE(px, py) image_pixel(src, width, height, px, py)

kernel void rgba_to_chroma_buffer(global const uchar4* restrict src, int width, int height,
                                  global uchar* planes, int cb_off, int cr_off, int c_pitch,
                                  int c_rows, int hf, int vf, int ch) {
  CHROMA_BODY(FETCH_BUFFER);
}

kernel void rgba_to_chroma_image(read_only image2d_t src, int width, int height,
                                 global uchar* planes, int cb_off, int cr_off, int c_pitch,
                                 int c_rows, int hf, int vf, int ch) {
  CHROMA_BODY(FETCH_IMAGE);
}
