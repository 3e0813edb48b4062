// Box filter, window schedules: single, single-linear, double, double-linear. Every output sums
// its whole window: one pass over the (2R+1)^2 window (single, single-linear) or a horizontal
// pass into the intermediate image and a vertical pass (double, double-linear), each pixel read
// directly or, in the -linear schedules, two (four) neighbours at a time through the bilinear
// sampler. The cost grows with R. The sum types, loads, stores and the exact mean come from
// kernels/box_common.cl (its header: what the sums mean, and why they are exact), which the host
// builds before this file.

// Linear sampling (linear_coord() in kernels/common.cl): taps i and i+1 are averaged by one
// bilinear fetch with t = 1/2; a single tap i is a fetch with t = 0, at its centre.
// The window [c-R, c+R] on one axis is covered by R pairs starting at c-R+2j (j < R) and the
// single tap c+R (j == R): R+1 fetches instead of 2R+1.
inline float window_coord(int c, int j, int radius, int n, int edge) {
  int i = c - radius + 2 * j;
  return linear_coord(i, j < radius ? 0.5f : 0.0f, n, edge);
}

// ---------------------------------------------------------------------------------------------
// single: one pass, one work-item per pixel reading its whole (2R+1)^2 window. Cost grows with
// R^2; no intermediate image.
kernel void box_single(read_only image2d_t src, write_only image2d_t dst, int radius, int edge,
                       sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  sum4 sum = 0;
  for (int dy = -radius; dy <= radius; ++dy) {
    int yy = edge_index(y + dy, h, edge);
    if (yy < 0) continue;
    for (int dx = -radius; dx <= radius; ++dx) {
      int xx = edge_index(x + dx, w, edge);
      if (xx >= 0) sum += convert_sum4(load_u8(src, xx, yy));
    }
  }
  store_mean(dst, x, y, sum, divisor);
}

// single-linear: one pass, each bilinear fetch averaging a 2x2 quad: (R+1)^2 fetches. The fetch
// times the number of taps it covers (4, 2 or 1) times M is an integer sum of sample values;
// rounding it removes the sampler's arithmetic error as long as that stays under half a level.
kernel void box_single_linear(read_only image2d_t src, write_only image2d_t dst, int radius,
                              int edge, sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  sum4 sum = 0;
  for (int j = 0; j <= radius; ++j) {
    float cy = window_coord(y, j, radius, h, edge);
    float ty = j < radius ? 2.0f : 1.0f;
    for (int i = 0; i <= radius; ++i) {
      float cx = window_coord(x, i, radius, w, edge);
      float taps = (i < radius ? 2.0f : 1.0f) * ty;
      float4 v = read_imagef(src, bilinear, (float2)(cx, cy));
      sum += convert_sum4(convert_uint4_rte(v * (PIXEL_MAX_F * taps)));
    }
  }
  store_mean(dst, x, y, sum, divisor);
}

// ---------------------------------------------------------------------------------------------
// double: horizontal pass then vertical pass, one work-item per pixel each, 2R+1 reads each.
kernel void box_rows_direct(read_only image2d_t src, write_only image2d_t tmp, int radius,
                            int edge, float hscale) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  uint4 sum = 0;
  for (int dx = -radius; dx <= radius; ++dx) sum += load_row(src, x + dx, y, w, edge);
  store_intermediate(tmp, x, y, sum, hscale);
}

kernel void box_cols_direct(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                            int edge, float qscale, sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  sum4 sum = 0;
  for (int dy = -radius; dy <= radius; ++dy) sum += load_q(tmp, x, y + dy, h, edge, qscale);
  store_mean(dst, x, y, sum, divisor);
}

// double-linear: the same two passes, each fetch averaging two neighbours: R+1 fetches a pass.
kernel void box_rows_linear(read_only image2d_t src, write_only image2d_t tmp, int radius,
                            int edge, float hscale) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  float cy = (float)y + 0.5f;
  uint4 sum = 0;
  for (int i = 0; i <= radius; ++i) {
    float cx = window_coord(x, i, radius, w, edge);
    float taps = i < radius ? 2.0f : 1.0f;
    sum += convert_uint4_rte(read_imagef(src, bilinear, (float2)(cx, cy)) * (PIXEL_MAX_F * taps));
  }
  store_intermediate(tmp, x, y, sum, hscale);
}

kernel void box_cols_linear(read_only image2d_t tmp, write_only image2d_t dst, int radius,
                            int edge, float qscale, sum_t divisor) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_image_width(tmp), h = get_image_height(tmp);
  if (x >= w || y >= h) return;
  float cx = (float)x + 0.5f;
  sum4 sum = 0;
  for (int j = 0; j <= radius; ++j) {
    float cy = window_coord(y, j, radius, h, edge);
    float taps = j < radius ? 2.0f : 1.0f;
    sum += convert_sum4(
        convert_uint4_rte(read_imagef(tmp, bilinear, (float2)(cx, cy)) * (qscale * taps)));
  }
  store_mean(dst, x, y, sum, divisor);
}
