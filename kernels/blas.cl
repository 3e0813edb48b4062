// BLAS routines on buffers, as a GPU programmer would write them today (the "buffer"
// implementation of `blurtool blas`, compared with CLBlast and with the image design of
// "outperform cublas with opengl"). Single precision, column-major, BLAS stride semantics:
// element i of a vector with increment inc < 0 is at (n - 1 - i) |inc|.

#ifndef SAXPY_WIDTH
#define SAXPY_WIDTH 4  // floats per work-item in the contiguous saxpy (one float4)
#endif
#ifndef DOT_WG
#define DOT_WG 256  // work-items per work-group of the sdot reduction
#endif
#ifndef TS
#define TS 64  // sgemm: a work-group computes a TS x TS tile of C
#endif
#ifndef TK
#define TK 16  // sgemm: k advances TK at a time through local memory
#endif
#ifndef WPT
#define WPT 4  // sgemm: a work-item computes WPT x WPT elements of C, TS/WPT apart
#endif
#define RTS (TS / WPT)  // work-items per dimension of a work-group

inline long element(long i, long n, long inc) { return inc > 0 ? i * inc : (n - 1 - i) * -inc; }

// saxpy with both increments 1: each work-item loads, updates and stores one float4; the last
// n % 4 elements are done one at a time by the last work-item.
kernel void blas_saxpy_contiguous(long n, float alpha, global const float* x, global float* y) {
  const long i = get_global_id(0) * SAXPY_WIDTH;
  if (i + SAXPY_WIDTH <= n) {
    const float4 xv = vload4(0, x + i);
    vstore4(mad(alpha, xv, vload4(0, y + i)), 0, y + i);
  } else {
    for (long e = i; e < n; ++e) y[e] = mad(alpha, x[e], y[e]);
  }
}

// saxpy with any increments: one element per work-item.
kernel void blas_saxpy_strided(long n, float alpha, global const float* x, long incx,
                               global float* y, long incy) {
  const long i = get_global_id(0);
  if (i >= n) return;
  const long yi = element(i, n, incy);
  y[yi] = mad(alpha, x[element(i, n, incx)], y[yi]);
}

// sdot, stage 1: every work-item sums products over a grid-stride loop (so any n fits a fixed
// number of work-groups), then a tree reduction in local memory leaves one partial sum per
// work-group. Stage 2 (blas_sdot_final) sums the partials in one work-group.
kernel void blas_sdot_partial(long n, global const float* x, long incx, global const float* y,
                              long incy, global float* partial) {
  local float sums[DOT_WG];
  const int lid = get_local_id(0);
  float sum = 0.0f;
  for (long i = get_global_id(0); i < n; i += get_global_size(0))
    sum = mad(x[element(i, n, incx)], y[element(i, n, incy)], sum);
  sums[lid] = sum;
  for (int span = DOT_WG / 2; span > 0; span >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < span) sums[lid] += sums[lid + span];
  }
  if (lid == 0) partial[get_group_id(0)] = sums[0];
}

kernel void blas_sdot_final(int groups, global const float* partial, global float* result) {
  local float sums[DOT_WG];
  const int lid = get_local_id(0);
  float sum = 0.0f;
  for (int i = lid; i < groups; i += DOT_WG) sum += partial[i];
  sums[lid] = sum;
  for (int span = DOT_WG / 2; span > 0; span >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < span) sums[lid] += sums[lid + span];
  }
  if (lid == 0) result[0] = sums[0];
}

// sgemm: C = alpha op(A) op(B) + beta C, tiled through local memory with register blocking.
// A work-group of RTS x RTS work-items computes a TS x TS tile of C; for every TK-deep slice of
// k it stages op(A)'s TS x TK and op(B)'s TK x TS slices in local memory (loading along each
// matrix's contiguous direction, so reads coalesce whatever the transposition; zeros outside),
// then each work-item accumulates its WPT x WPT elements from registers. C is read only when
// beta != 0, so an uninitialised C with beta = 0 is never used.
kernel void blas_sgemm_tiled(int m, int n, int k, float alpha, float beta,
                             global const float* A, int lda, int trans_a,
                             global const float* B, int ldb, int trans_b,
                             global float* C, int ldc) {
  local float As[TK][TS + 1];  // As[l][i] = op(A)(i0 + i, l0 + l); +1 avoids bank conflicts
  local float Bs[TK][TS + 1];  // Bs[l][j] = op(B)(l0 + l, j0 + j)
  const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * RTS + tx;
  const int i0 = get_group_id(0) * TS, j0 = get_group_id(1) * TS;
  float acc[WPT][WPT];
  for (int wi = 0; wi < WPT; ++wi)
    for (int wj = 0; wj < WPT; ++wj) acc[wi][wj] = 0.0f;

  for (int l0 = 0; l0 < k; l0 += TK) {
    for (int e = lid; e < TS * TK; e += RTS * RTS) {
      // op(A)(i, l): A[i + l lda] (contiguous along i) or, transposed, A[l + i lda].
      const int ii = trans_a ? e / TK : e % TS, ll = trans_a ? e % TK : e / TS;
      const int i = i0 + ii, l = l0 + ll;
      As[ll][ii] = (i < m && l < k) ? (trans_a ? A[l + (long)i * lda] : A[i + (long)l * lda]) : 0.0f;
      // op(B)(l, j): B[l + j ldb] (contiguous along l) or, transposed, B[j + l ldb].
      const int jj = trans_b ? e % TS : e / TK, lb = trans_b ? e / TS : e % TK;
      const int j = j0 + jj, lk = l0 + lb;
      Bs[lb][jj] = (lk < k && j < n) ? (trans_b ? B[j + (long)lk * ldb] : B[lk + (long)j * ldb]) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int l = 0; l < TK; ++l) {
      float a[WPT], b[WPT];
      for (int w = 0; w < WPT; ++w) {
        a[w] = As[l][tx + w * RTS];
        b[w] = Bs[l][ty + w * RTS];
      }
      for (int wi = 0; wi < WPT; ++wi)
        for (int wj = 0; wj < WPT; ++wj) acc[wi][wj] = mad(a[wi], b[wj], acc[wi][wj]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int wi = 0; wi < WPT; ++wi) {
    for (int wj = 0; wj < WPT; ++wj) {
      const int i = i0 + tx + wi * RTS, j = j0 + ty + wj * RTS;
      if (i >= m || j >= n) continue;
      global float* c = C + i + (long)j * ldc;
      *c = beta != 0.0f ? mad(alpha, acc[wi][wj], beta * *c) : alpha * acc[wi][wj];
    }
  }
}
