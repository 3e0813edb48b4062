// Definitions shared by every kernel family: edge modes and the bilinear sampler. The host
// prepends this file to each family's source, followed for a family "X_Y" by the filter's
// kernels/X_common.cl where there is one (box_common.cl, gauss_common.cl), each file after this
// one behind a #line directive, so that build-log line numbers still point into each file
// (runtime/cl_runtime.cpp, program_source).

// Pixel depth of the input and output (the host's pixel_options(), filters/filter.h): RGBA8 by
// default; with -DPIXEL16 RGBA16 (CL_UNORM_INT16 images, buffers of 8 bytes a pixel, 16-bit
// samples in native byte order), used for 16-bit PNGs, premultiplied alpha and linear light.
// Kernels work on sample values 0..PIXEL_MAX: pixel_t is a buffer pixel, pixel_word_t the same
// bytes as 32-bit words (one for RGBA8, two for RGBA16), convert_pixel_t the saturating
// round-to-nearest conversion from float4.
#ifdef PIXEL16
typedef ushort4 pixel_t;
typedef ushort pixel_sample_t;
typedef uint2 pixel_word_t;
#define PIXEL_MAX 65535
#define PIXEL_MAX_F 65535.0f
#define PIXEL_BYTES 8
#define convert_pixel_t convert_ushort4_sat_rte
#else
typedef uchar4 pixel_t;
typedef uchar pixel_sample_t;
typedef uint pixel_word_t;
#define PIXEL_MAX 255
#define PIXEL_MAX_F 255.0f
#define PIXEL_BYTES 4
#define convert_pixel_t convert_uchar4_sat_rte
#endif

// The samples of four pixels (16), as vload16 and vstore16 move them.
#ifdef PIXEL16
typedef ushort16 pixel_sample16_t;
#define convert_pixel_sample16_t convert_ushort16
#else
typedef uchar16 pixel_sample16_t;
#define convert_pixel_sample16_t convert_uchar16
#endif

// Stores four pixels' samples at `out`. Where `aligned` (out is a multiple of 4 pixels from the
// buffer's start, as in rows of a multiple of 4 pixels) as one vector store: PoCL compiles
// vstore16 of 8- and 16-bit samples into one store a sample, 16 of them (measured in the
// disassembly of its kernels), which took a good part of the CPU schedules' time.
inline void store_pixels4(pixel_sample16_t v, global pixel_t* out, bool aligned) {
  if (aligned)
    *(global pixel_sample16_t*)out = v;
  else
    vstore16(v, 0, (global pixel_sample_t*)out);
}

// Stores the first `count` (0..4) of four pixels' samples at `out`, one pixel at a time.
inline void store_pixels_first(pixel_sample16_t v, global pixel_t* out, int count) {
  pixel_t px[4];
  vstore16(v, 0, (private pixel_sample_t*)px);
  for (int p = 0; p < min(count, 4); ++p) out[p] = px[p];
}

// Stores four 16-lane vectors a0..a3, each four quads of 4 lanes, transposed: *d_j gets quad j
// of a0, a1, a2 and a3 side by side (T: the 16-lane type). The CPU tile schedules use it to
// turn four pixels of four rows into four columns of four rows, and back.
#define STORE_TRANSPOSED4(T, d0, d1, d2, d3, a0, a1, a2, a3)           \
  do {                                                                 \
    *(d0) = (T)((a0).s0123, (a1).s0123, (a2).s0123, (a3).s0123);       \
    *(d1) = (T)((a0).s4567, (a1).s4567, (a2).s4567, (a3).s4567);       \
    *(d2) = (T)((a0).s89ab, (a1).s89ab, (a2).s89ab, (a3).s89ab);       \
    *(d3) = (T)((a0).scdef, (a1).scdef, (a2).scdef, (a3).scdef);       \
  } while (0)

// Defines stage_rows4_T16(): four image rows staged side by side for the CPU tile schedules
// (gauss_tiled with T16 float16, box_tiled with uint16; T4 and S the 4-lane and scalar types).
// Rows ybase + min(j0 + r, jlast), r = 0..3, through the edge mode (a row the zero mode reads
// as zeros is multiplied by 0); staged[k], k = 0 .. span-1, is pixel xs + k of each of the four
// rows as one T16. Pixels inside the image go 4 at a time (four 16-sample loads, transposed),
// the others one at a time through the edge mode.
#define DEFINE_STAGE_ROWS4(T16, T4, S)                                                        \
  inline T4 edge_pixel_##T4(global const pixel_t* row, int x, int w, int edge, S keep) {     \
    const int xx = edge_index(x, w, edge);                                                   \
    return xx < 0 ? (T4)(0) : convert_##T4(row[xx]) * keep;                                  \
  }                                                                                          \
  inline T16 edge_column_##T16(global const pixel_t* const* row, const S* keep, int x, int w, \
                               int edge) {                                                   \
    return (T16)(edge_pixel_##T4(row[0], x, w, edge, keep[0]),                               \
                 edge_pixel_##T4(row[1], x, w, edge, keep[1]),                               \
                 edge_pixel_##T4(row[2], x, w, edge, keep[2]),                               \
                 edge_pixel_##T4(row[3], x, w, edge, keep[3]));                              \
  }                                                                                          \
  inline T16 four_pixels_##T16(global const pixel_t* row, int p, S keep) {                   \
    return convert_##T16(vload16(0, (global const pixel_sample_t*)(row + p))) * keep;        \
  }                                                                                          \
  inline void stage_rows4_##T16(global const pixel_t* src, int w, int h, int edge, int ybase, \
                                int j0, int jlast, int xs, int span, global T16* staged) {   \
    global const pixel_t* row[4];                                                            \
    S keep[4];                                                                               \
    for (int r = 0; r < 4; ++r) {                                                            \
      const int yy = edge_index(ybase + min(j0 + r, jlast), h, edge);                        \
      row[r] = src + (size_t)max(yy, 0) * w;                                                 \
      keep[r] = yy < 0 ? 0 : 1;                                                              \
    }                                                                                        \
    const int inner0 = clamp(-xs, 0, span), inner1 = clamp(w - xs, inner0, span);           \
    for (int k = 0; k < inner0; ++k) staged[k] = edge_column_##T16(row, keep, xs + k, w, edge); \
    int k = inner0;                                                                          \
    for (; k + 4 <= inner1; k += 4) {                                                        \
      const T16 v0 = four_pixels_##T16(row[0], xs + k, keep[0]);                             \
      const T16 v1 = four_pixels_##T16(row[1], xs + k, keep[1]);                             \
      const T16 v2 = four_pixels_##T16(row[2], xs + k, keep[2]);                             \
      const T16 v3 = four_pixels_##T16(row[3], xs + k, keep[3]);                             \
      STORE_TRANSPOSED4(T16, staged + k, staged + k + 1, staged + k + 2, staged + k + 3, v0, \
                        v1, v2, v3);                                                         \
    }                                                                                        \
    for (; k < span; ++k) staged[k] = edge_column_##T16(row, keep, xs + k, w, edge);         \
  }

// The samples of a buffer pixel's word(s) (little-endian: R in the low bits) as uint4, and back.
#ifdef PIXEL16
inline uint4 pixel_samples(uint2 u) { return (uint4)(u.x, u.x >> 16, u.y, u.y >> 16) & 0xFFFFu; }
inline uint2 pixel_word(uint4 s) { return (uint2)(s.x | s.y << 16, s.z | s.w << 16); }
#else
inline uint4 pixel_samples(uint u) { return (uint4)(u, u >> 8, u >> 16, u >> 24) & 0xFFu; }
inline uint pixel_word(uint4 s) { return s.x | s.y << 8 | s.z << 16 | s.w << 24; }
#endif

// Edge modes, as filters/edge_mode.h.
#define EDGE_CLAMP 0
#define EDGE_MIRROR 1
#define EDGE_ZERO 2

// Bilinear fetches for the -linear schedules: pixel coordinates, zero outside the image.
constant sampler_t bilinear = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR;

// The pixel that coordinate i on an axis of n pixels reads: [0, n), or -1 for zero. Mirror
// repeats the edge pixel and is periodic (cba|abc|cba), so any radius works. Same as the host's
// edge_index() in filters/edge_mode.h.
inline int edge_index(int i, int n, int edge) {
  if (i >= 0 && i < n) return i;
  if (edge == EDGE_CLAMP) return clamp(i, 0, n - 1);
  if (edge == EDGE_ZERO) return -1;
  int period = 2 * n;
  int m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - 1 - m;
}


// Coordinate of a bilinear fetch that returns (1 - t) * pixel(lo) + t * pixel(lo + 1) on an
// axis of n pixels, through the edge mode (the write-up's linear-sampling trick, 000 and 002).
// The edge-mapped neighbours m(lo), m(lo+1) are equal or adjacent in every mode (possibly in
// reverse order inside a mirrored region), so one fetch at m(lo) + 0.5 + (m(lo+1) - m(lo)) t
// does it; for the zero mode the raw coordinate is used and the sampler's CLK_ADDRESS_CLAMP
// supplies the zeros.
inline float linear_coord(int lo, float t, int n, int edge) {
  if (edge == EDGE_ZERO) return (float)lo + 0.5f + t;
  int a = edge_index(lo, n, edge), b = edge_index(lo + 1, n, edge);
  return (float)a + 0.5f + (float)(b - a) * t;
}
