// Gaussian blur, image schedules: naive, naive-local, separable, separable-linear,
// separable-local, fused-local (what they compute: kernels/gauss_common.cl, which the host
// builds before this file). Image schedules work on normalised floats (0..1) throughout, which
// read_imagef and write_imagef give for CL_UNORM_INT8 and CL_UNORM_INT16 alike: the output's
// write_imagef rounds to the nearest level of its depth.
// Two-pass schedules store the horizontal result in an intermediate image of the chosen format
// (rgba8, rgba16f, rgba32f; at 16 bits rgba8 and rgba16f lose precision, which is the user's
// choice). Work-group sizes come from the host (--wg); local memory is sized at run time
// through `local` kernel arguments, so a sweep over work-group sizes needs no rebuild.
//
// Arguments (weights: kernels/gauss_common.cl):
//   taps     separable-linear only: (lo, t, weight, 0) per fetch: one fetch returns
//            (1 - t) px(x + lo) + t px(x + lo + 1) through the sampler's linear filter

// Input pixel (x, y), through the edge mode on both axes, as integer samples 0..PIXEL_MAX (0
// for zero).
inline pixel_t load_pixel_edge(read_only image2d_t src, int x, int y, int w, int h, int edge) {
  int xx = edge_index(x, w, edge), yy = edge_index(y, h, edge);
  if (xx < 0 || yy < 0) return (pixel_t)(0);
  return convert_pixel_t(read_imagef(src, (int2)(xx, yy)) * PIXEL_MAX_F);
}

// Pixel (x, y) of a float or normalised image, edge mode on the y axis only (x inside).
inline float4 load_col(read_only image2d_t img, int x, int y, int h, int edge) {
  int yy = edge_index(y, h, edge);
  return yy < 0 ? (float4)(0.0f) : read_imagef(img, (int2)(x, yy));
}

// Pixel (x, y), edge mode on the x axis only (y inside).
inline float4 load_row(read_only image2d_t img, int x, int y, int w, int edge) {
  int xx = edge_index(x, w, edge);
  return xx < 0 ? (float4)(0.0f) : read_imagef(img, (int2)(xx, y));
}

// The work-group's input tile with its halo, (LX + 2R) x (LY + 2R) pixels starting at
// (x0, y0), into local memory as integer samples (pixel_t: 4 or 8 bytes a pixel, a quarter or
// a half of float4's, so larger work-groups fit). Every work-item loads an equal share.
inline void stage_tile(read_only image2d_t src, local pixel_t* tile, int x0, int y0, int tw,
                       int th, int edge) {
  const int w = get_image_width(src), h = get_image_height(src);
  const int step = get_local_size(0) * get_local_size(1);
  for (int i = get_local_id(1) * get_local_size(0) + get_local_id(0); i < tw * th; i += step)
    tile[i] = load_pixel_edge(src, x0 + i % tw, y0 + i / tw, w, h, edge);
}

// ---------------------------------------------------------------------------------------------
// naive: one work-item per pixel, the full (2R+1)^2 loop, every read from the image.
kernel void gauss_naive(read_only image2d_t src, write_only image2d_t dst, int radius, int edge,
                        constant float* weights) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  float4 sum = 0.0f;
  for (int j = -radius; j <= radius; ++j) {
    int yy = edge_index(y + j, h, edge);
    if (yy < 0) continue;
    float4 row = 0.0f;
    for (int i = -radius; i <= radius; ++i) {
      int xx = edge_index(x + i, w, edge);
      if (xx >= 0) row += weights[radius + i] * read_imagef(src, (int2)(xx, yy));
    }
    sum += weights[radius + j] * row;
  }
  write_imagef(dst, (int2)(x, y), sum);
}

// naive-local: the same loop over the work-group's tile plus halo, staged in local memory
// ((LX + 2R) (LY + 2R) pixel_t). Each input pixel is read from the image about once per
// work-group instead of (2R+1)^2 times in all.
kernel void gauss_naive_local(read_only image2d_t src, write_only image2d_t dst, int radius,
                              int edge, constant float* weights, local pixel_t* tile) {
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int tw = get_local_size(0) + 2 * radius, th = get_local_size(1) + 2 * radius;
  stage_tile(src, tile, get_group_id(0) * get_local_size(0) - radius,
             get_group_id(1) * get_local_size(1) - radius, tw, th, edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= get_image_width(src) || y >= get_image_height(src)) return;
  float4 sum = 0.0f;
  for (int j = 0; j <= 2 * radius; ++j) {
    float4 row = 0.0f;
    local const pixel_t* line = tile + (ly + j) * tw + lx;
    for (int i = 0; i <= 2 * radius; ++i) row += weights[i] * convert_float4(line[i]);
    sum += weights[j] * row;
  }
  write_imagef(dst, (int2)(x, y), sum * (1.0f / PIXEL_MAX_F));
}

// ---------------------------------------------------------------------------------------------
// separable: horizontal pass into the intermediate image, then vertical pass: 2 (2R+1) reads.
kernel void gauss_rows(read_only image2d_t src, write_only image2d_t tmp, int radius, int edge,
                       constant float* weights) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  float4 sum = 0.0f;
  for (int i = -radius; i <= radius; ++i) sum += weights[radius + i] * load_row(src, x + i, y, w, edge);
  write_imagef(tmp, (int2)(x, y), sum);
}

kernel void gauss_cols(read_only image2d_t tmp, write_only image2d_t dst, int radius, int edge,
                       constant float* weights) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  float4 sum = 0.0f;
  for (int j = -radius; j <= radius; ++j) sum += weights[radius + j] * load_col(tmp, x, y + j, h, edge);
  write_imagef(dst, (int2)(x, y), sum);
}

// separable-linear: each pass fetches neighbouring taps in pairs through the sampler's linear
// filter (rastergrid's trick in the write-up): 1 + 2 ceil(R/2) fetches a pass instead of 2R+1.
// The result depends on the precision of the device's filtering, which OpenCL leaves open.
kernel void gauss_rows_linear(read_only image2d_t src, write_only image2d_t tmp, int ntaps,
                              int edge, constant float4* taps) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  const float cy = (float)y + 0.5f;
  float4 sum = 0.0f;
  for (int k = 0; k < ntaps; ++k) {
    const float4 tap = taps[k];
    const float cx = linear_coord(x + (int)tap.x, tap.y, w, edge);
    sum += tap.z * read_imagef(src, bilinear, (float2)(cx, cy));
  }
  write_imagef(tmp, (int2)(x, y), sum);
}

kernel void gauss_cols_linear(read_only image2d_t tmp, write_only image2d_t dst, int ntaps,
                              int edge, constant float4* taps) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  const float cx = (float)x + 0.5f;
  float4 sum = 0.0f;
  for (int k = 0; k < ntaps; ++k) {
    const float4 tap = taps[k];
    const float cy = linear_coord(y + (int)tap.x, tap.y, h, edge);
    sum += tap.z * read_imagef(tmp, bilinear, (float2)(cx, cy));
  }
  write_imagef(dst, (int2)(x, y), sum);
}

// separable-local: each pass stages its work-group's segment plus halo in local memory: a row
// segment of G + 2R pixels for Gx1 work-groups, then a column segment for 1xG work-groups.
// Neighbours along the pass share almost all their reads; across it they share none.
kernel void gauss_rows_local(read_only image2d_t src, write_only image2d_t tmp, int radius,
                             int edge, constant float* weights, local float4* segment) {
  const int g = get_local_size(0), lx = get_local_id(0);
  const int y = get_global_id(1), w = get_image_width(src);
  const int x0 = get_group_id(0) * g - radius;
  for (int i = lx; i < g + 2 * radius; i += g) segment[i] = load_row(src, x0 + i, y, w, edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0);
  if (x >= w) return;
  float4 sum = 0.0f;
  for (int i = 0; i <= 2 * radius; ++i) sum += weights[i] * segment[lx + i];
  write_imagef(tmp, (int2)(x, y), sum);
}

kernel void gauss_cols_local(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                             int edge, constant float* weights, local float4* segment) {
  const int g = get_local_size(1), ly = get_local_id(1);
  const int x = get_global_id(0), h = get_image_height(tmp);
  const int y0 = get_group_id(1) * g - radius;
  for (int i = ly; i < g + 2 * radius; i += g) segment[i] = load_col(tmp, x, y0 + i, h, edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  const int y = get_global_id(1);
  if (y >= h) return;
  float4 sum = 0.0f;
  for (int j = 0; j <= 2 * radius; ++j) sum += weights[j] * segment[ly + j];
  write_imagef(dst, (int2)(x, y), sum);
}

// fused-local: one pass, no intermediate image. The tile plus halo goes to local memory; the
// horizontal pass runs over all LY + 2R tile rows into a second local array (float4, LX wide);
// the vertical pass reads that and writes the output.
kernel void gauss_fused_local(read_only image2d_t src, write_only image2d_t dst, int radius,
                              int edge, constant float* weights, local pixel_t* tile,
                              local float4* rows) {
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int lw = get_local_size(0), lh = get_local_size(1);
  const int tw = lw + 2 * radius, th = lh + 2 * radius;
  stage_tile(src, tile, get_group_id(0) * lw - radius, get_group_id(1) * lh - radius, tw, th,
             edge);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = ly * lw + lx; i < th * lw; i += lw * lh) {
    local const pixel_t* line = tile + (i / lw) * tw + i % lw;
    float4 sum = 0.0f;
    for (int k = 0; k <= 2 * radius; ++k) sum += weights[k] * convert_float4(line[k]);
    rows[i] = sum;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= get_image_width(src) || y >= get_image_height(src)) return;
  float4 sum = 0.0f;
  for (int k = 0; k <= 2 * radius; ++k) sum += weights[k] * rows[(ly + k) * lw + lx];
  write_imagef(dst, (int2)(x, y), sum * (1.0f / PIXEL_MAX_F));
}
