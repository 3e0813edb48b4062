// BLAS routines on images: the design of "outperform cublas with opengl" (saxpy, sdot and sgemm
// as fragment shaders over RGBA32F textures), in OpenCL. The "image" implementation of
// `blurtool blas`, compared with CLBlast and with the buffer kernels of kernels/blas.cl.
//
// Storage: every vector and matrix lives in a CL_RGBA / CL_FLOAT image, 4 floats per texel, in
// rows of `width` texels (the host picks the narrowest width up to the device's maximum). Element
// e sits in texel e / 4, component e % 4; texel t at (t % width, t / width). The last texel is
// padded with zeros. Strided vectors are packed (gathered) by the host, so vector kernels see
// contiguous data; matrices keep their leading dimension (element (i, j) of C at i + j ldc).
//
// saxpy: one work-item per texel, out = alpha x + y, 4 elements at a time.
// sdot: an element-wise product into an image, then halving passes (texel t += texel t + half)
//   until one texel remains; the host adds its 4 components. Sums stay in float, as the
//   write-up's shaders do (a tree: the error grows like log n, not n).
// sgemm: C = alpha op(A) op(B) + beta C, column-major. One work-item per element of C, in the
//   order of C's image (1-D: e = i + j ldc). An image is written a texel at a time, so the 4
//   work-items of a texel meet in local memory and the first one writes it.
//   - 1x1: the write-up's first shader: each l fetches a texel of A and one of B and keeps one
//     component of each (4 k texel fetches per element).
//   - 4x4: the write-up's optimisation: op(A)'s row i and op(B)'s column j are made contiguous
//     along l, starting on a texel (blas_image_reorder, run first where the operand's layout is
//     not already so), so each fetch brings 4 useful values: k / 2 fetches per element.
//
// Indices: elements as long (a matrix may hold more than 2^31 floats), texels as uint (the host
// refuses images of 2^32 texels or more).

// Position of texel t in an image whose rows are `width` texels.
inline int2 texel_coord(uint t, int width) {
  return (int2)((int)(t % (uint)width), (int)(t / (uint)width));
}

inline float4 load_texel(read_only image2d_t img, uint t) {
  return read_imagef(img, texel_coord(t, get_image_width(img)));
}

inline void store_texel(write_only image2d_t img, uint t, float4 v) {
  write_imagef(img, texel_coord(t, get_image_width(img)), v);
}

// Element e: component e % 4 of texel e / 4 (the write-up's switch on xindex % 4).
inline float load_element(read_only image2d_t img, long e) {
  const float4 v = load_texel(img, (uint)(e >> 2));
  switch ((int)(e & 3)) {
    case 0: return v.x;
    case 1: return v.y;
    case 2: return v.z;
    default: return v.w;
  }
}

// ---------------------------------------------------------------------------------------------
// saxpy: x, y and out share one layout, so one coordinate serves all three.
kernel void blas_image_saxpy(read_only image2d_t x, read_only image2d_t y,
                             write_only image2d_t out, uint texels, float alpha) {
  const uint t = get_global_id(0);
  if (t >= texels) return;
  const int2 p = texel_coord(t, get_image_width(out));
  write_imagef(out, p, alpha * read_imagef(x, p) + read_imagef(y, p));
}

// ---------------------------------------------------------------------------------------------
// sdot, step 1: z = x * y, texel by texel (the padding is 0 * 0).
kernel void blas_image_mul(read_only image2d_t x, read_only image2d_t y, write_only image2d_t z,
                           uint texels) {
  const uint t = get_global_id(0);
  if (t >= texels) return;
  const int2 p = texel_coord(t, get_image_width(z));
  write_imagef(z, p, read_imagef(x, p) * read_imagef(y, p));
}

// sdot, step 2, one pass: the first `texels` texels of `in` become rest = ceil(texels / 2)
// texels of `out`, texel t being in[t] + in[t + rest] (the write-up adds the second half to the
// first: the reads of neighbouring work-items are neighbours). An odd count keeps its middle
// texel as it is.
// `in` and `out` have the same width, so the host ping-pongs between two images of one layout.
kernel void blas_image_halve(read_only image2d_t in, write_only image2d_t out, uint texels) {
  const uint rest = texels - texels / 2, t = get_global_id(0);
  if (t >= rest) return;
  float4 sum = load_texel(in, t);
  if (t + rest < texels) sum += load_texel(in, t + rest);
  store_texel(out, t, sum);
}

// ---------------------------------------------------------------------------------------------
// sgemm: the end of every work-item. Element e of C (its image holds `texels` texels) gets `v`:
// work-items 4t .. 4t+3 share texel t and are neighbours in a work-group whose size is a
// multiple of 4, so they pool their values in `share` and the first of them writes the texel.
// Every work-item reaches the barrier, those past the end of C included.
inline void store_element(local float* share, write_only image2d_t out, long e, uint texels,
                          float v) {
  const int lid = get_local_id(0);
  share[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint t = (uint)(e >> 2);
  if ((lid & 3) == 0 && t < texels) store_texel(out, t, vload4(0, share + lid));
}

// 1x1: op(A)(i, l) is A[lda i + l] (trans_a) or A[lda l + i]; op(B)(l, j) is B[ldb l + j]
// (trans_b) or B[ldb j + l]. C is read only when beta != 0 (with beta = 0 it may hold NaN, and
// the host does not even upload it). Rows i >= m of C's leading dimension are left as 0: the
// host does not copy them back.
kernel void blas_image_sgemm_1x1(read_only image2d_t A, read_only image2d_t B,
                                 read_only image2d_t C, write_only image2d_t out,
                                 local float* share, uint texels, long m, long n, long k, long lda,
                                 long ldb, long ldc, int trans_a, int trans_b, float alpha,
                                 float beta) {
  const long e = get_global_id(0), i = e % ldc, j = e / ldc;
  float v = 0.0f;
  if (i < m && j < n) {
    float sum = 0.0f;
    for (long l = 0; l < k; ++l) {
      const long aindex = trans_a ? lda * i + l : lda * l + i;
      const long bindex = trans_b ? ldb * l + j : ldb * j + l;
      sum += load_element(A, aindex) * load_element(B, bindex);
    }
    v = alpha * sum;
    if (beta != 0.0f) v += beta * load_element(C, e);
  }
  store_element(share, out, e, texels, v);
}

// 4x4, step 1 (where needed): copies the `rows` rows of an operand, element (r, l) at
// src[r r_stride + l l_stride], into dst so that row r is texels r k4t .. r k4t + k4t - 1 (k
// rounded up to 4 floats; the l >= k are zeros). A is reordered by rows i, B by columns j.
// One work-item per texel of dst, gathering its 4 elements.
kernel void blas_image_reorder(read_only image2d_t src, write_only image2d_t dst, uint texels,
                               uint k4t, long k, long r_stride, long l_stride) {
  const uint t = get_global_id(0);
  if (t >= texels) return;
  const long r = t / k4t, l0 = 4 * (long)(t % k4t);
  float v[4];
  for (int c = 0; c < 4; ++c)
    v[c] = l0 + c < k ? load_element(src, r * r_stride + (l0 + c) * l_stride) : 0.0f;
  store_texel(dst, t, vload4(0, v));
}

// 4x4, step 2: op(A)'s row i starts at texel i a_stride of A, op(B)'s column j at texel
// j b_stride of B, both contiguous along l: one fetch of each per 4 values of l, and a float4
// dot. The last texel of a row may reach past k into a leading dimension's padding (anything,
// NaN too, where the operand was not reordered), so its components l >= k are masked to 0.
kernel void blas_image_sgemm_4x4(read_only image2d_t A, read_only image2d_t B,
                                 read_only image2d_t C, write_only image2d_t out,
                                 local float* share, uint texels, long m, long n, long k,
                                 uint a_stride, uint b_stride, long ldc, float alpha, float beta) {
  const long e = get_global_id(0), i = e % ldc, j = e / ldc;
  float v = 0.0f;
  if (i < m && j < n) {
    const uint ta = (uint)(i * a_stride), tb = (uint)(j * b_stride), full = (uint)(k / 4);
    float sum = 0.0f;
    for (uint q = 0; q < full; ++q) sum += dot(load_texel(A, ta + q), load_texel(B, tb + q));
    if (k % 4 != 0) {
      const int4 keep = (int4)(0, 1, 2, 3) < (int4)((int)(k % 4));
      const float4 a = select((float4)(0.0f), load_texel(A, ta + full), keep);
      const float4 b = select((float4)(0.0f), load_texel(B, tb + full), keep);
      sum += dot(a, b);
    }
    v = alpha * sum;
    if (beta != 0.0f) v += beta * load_element(C, e);
  }
  store_element(share, out, e, texels, v);
}
