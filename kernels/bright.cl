// Bright-point extraction ("Optimising a Compute Shader", lens flares): the pixel of
// highest luminance in every BxB block, reported when its luminance exceeds a threshold; plus
// the additive glow that draws the points found.
//
// Exactness: luminance is kept as the integer L = 2126 R + 7152 G + 722 B (Rec. 709 weights
// times 10000 on 8-bit values; L / 2550000 is the luminance in [0, 1]), so every device and the
// CPU reference compare the same numbers. Each pixel gets a 32-bit key (L << 10) | (1023 - i),
// i its raster index inside the block (B <= 32, so i < 1024; L < 2^22): the largest key is the
// brightest pixel, the first in raster order on ties, so every reduction order gives the same
// point. Pixels outside the image (partial blocks) get key 0, which never wins: pixel 0 of a
// block is always inside and its key is at least 1023.
//
// 16-bit pixels (-DPIXEL16, kernels/common.cl): L stays in the same units, computed from the
// 16-bit samples as floor((2126 R + 7152 G + 722 B + 128) / 257) (the sum is below 2^30), so
// that a widened 8-bit image (every sample v * 257) gives exactly its 8-bit L, keys stay 32 bits
// and thresholds do not change; samples that differ below 8-bit precision still give different
// L (one 16-bit level of B, the smallest weight, is 722 / 257 > 2 units). A point's colour is
// reported at 8 bits: each sample rounded to the nearest 8-bit level, (v * 255 + 32767) / 65535.
//
// Points are appended through an atomic counter into a buffer with one slot per block, so it
// cannot overflow; the host sorts them by (y, x).
//
// Arguments shared by the finder kernels:
//   block      B, the block side in pixels
//   threshold  report when L > threshold (the host's floor(T * 2550000))
//   count      the atomic counter; points: uint4 (x, y, packed RGBA8, L) per point

// L of samples r, g, b (0..PIXEL_MAX), and a point's colour as 8-bit RGBA packed with R in the
// low byte.
#ifdef PIXEL16
inline uint luminance3(uint r, uint g, uint b) {
  return (2126u * r + 7152u * g + 722u * b + 128u) / 257u;
}
inline uint rgba8(uint4 p) {
  const uint4 n = (p * 255u + 32767u) / 65535u;  // the nearest 8-bit level, as narrow()
  return n.x | n.y << 8 | n.z << 16 | n.w << 24;
}
#else
inline uint luminance3(uint r, uint g, uint b) { return 2126u * r + 7152u * g + 722u * b; }
inline uint rgba8(uint4 p) { return p.x | p.y << 8 | p.z << 16 | p.w << 24; }
#endif

// The samples of image pixel (x, y), 0..PIXEL_MAX.
inline uint4 load_samples(read_only image2d_t src, int x, int y) {
  return convert_uint4_sat_rte(read_imagef(src, (int2)(x, y)) * PIXEL_MAX_F);
}

inline uint luminance(uint4 p) { return luminance3(p.x, p.y, p.z); }

// Key of pixel (x, y) at raster index i of its block; 0 outside the image.
inline uint pixel_key(read_only image2d_t src, int x, int y, int i) {
  if (x >= get_image_width(src) || y >= get_image_height(src)) return 0u;
  return (luminance(load_samples(src, x, y)) << 10) | (1023u - (uint)i);
}

// Appends the winner of block (bx, by) whose best key is `key`, if it beats the threshold.
inline void emit(read_only image2d_t src, uint key, int bx, int by, int block, uint threshold,
                 volatile global uint* count, global uint4* points) {
  if ((key >> 10) <= threshold) return;
  const int i = 1023 - (int)(key & 1023u);
  const int x = bx * block + i % block, y = by * block + i / block;
  const uint slot = atomic_inc(count);
  points[slot] = (uint4)(x, y, rgba8(load_samples(src, x, y)), key >> 10);
}

// Largest key of local keys[0..n) by pairwise (tree) reduction; every work-item of the
// work-group must call it; the result is in keys[0].
inline void tree_max(local uint* keys, int lid, int n) {
  int span = 1;
  while (span < n) span <<= 1;
  for (span >>= 1; span > 0; span >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < span && lid + span < n) keys[lid] = max(keys[lid], keys[lid + span]);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

// serial (the write-up's first version, 360 us): BxB work-groups, each work-item loads one
// pixel into local memory, then one work-item scans the whole block while the others wait.
kernel void bright_serial(read_only image2d_t src, int block, uint threshold,
                          volatile global uint* count, global uint4* points, local uint* keys) {
  const int lx = get_local_id(0), ly = get_local_id(1), lid = ly * block + lx;
  keys[lid] = pixel_key(src, get_global_id(0), get_global_id(1), lid);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid != 0) return;
  uint best = 0;
  for (int i = 0; i < block * block; ++i) best = max(best, keys[i]);
  emit(src, best, get_group_id(0), get_group_id(1), block, threshold, count, points);
}

// per-thread (the write-up's second version, 900 us): one work-item scans a whole block alone;
// all work-items busy, but each does B^2 dependent reads and neighbours read far apart.
kernel void bright_per_thread(read_only image2d_t src, int block, uint threshold,
                              volatile global uint* count, global uint4* points) {
  const int bx = get_global_id(0), by = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (bx * block >= w || by * block >= h) return;
  uint best = 0;
  for (int j = 0; j < block; ++j)
    for (int i = 0; i < block; ++i)
      best = max(best, pixel_key(src, bx * block + i, by * block + j, j * block + i));
  emit(src, best, bx, by, block, threshold, count, points);
}

// tree: BxB work-groups, one pixel each, then a pairwise reduction in local memory
// (log2(B^2) steps, half the work-items dropping out each step).
kernel void bright_tree(read_only image2d_t src, int block, uint threshold,
                        volatile global uint* count, global uint4* points, local uint* keys) {
  const int lid = get_local_id(1) * block + get_local_id(0);
  keys[lid] = pixel_key(src, get_global_id(0), get_global_id(1), lid);
  tree_max(keys, lid, block * block);
  if (lid == 0) emit(src, keys[0], get_group_id(0), get_group_id(1), block, threshold, count, points);
}

// hybrid (the write-up's fastest, 110 us): each work-item scans a KxK square of its block
// (K = per_item), then a tree reduction over the ceil(B/K)^2 work-items of the work-group.
kernel void bright_hybrid(read_only image2d_t src, int block, uint threshold,
                          volatile global uint* count, global uint4* points, int per_item,
                          local uint* keys) {
  const int lx = get_local_id(0), ly = get_local_id(1), side = get_local_size(0);
  const int lid = ly * side + lx;
  const int bx = get_group_id(0), by = get_group_id(1);
  uint best = 0;
  for (int j = ly * per_item; j < min((ly + 1) * per_item, block); ++j)
    for (int i = lx * per_item; i < min((lx + 1) * per_item, block); ++i)
      best = max(best, pixel_key(src, bx * block + i, by * block + j, j * block + i));
  keys[lid] = best;
  tree_max(keys, lid, side * side);
  if (lid == 0) emit(src, keys[0], bx, by, block, threshold, count, points);
}

#if defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
// subgroup: BxB work-groups; each sub-group reduces its keys with sub_group_reduce_max (no
// local memory, no barrier), then the sub-group maxima meet in local memory.
kernel void bright_subgroup(read_only image2d_t src, int block, uint threshold,
                            volatile global uint* count, global uint4* points,
                            local uint* keys) {
  const int lid = get_local_id(1) * block + get_local_id(0);
  const uint best = sub_group_reduce_max(pixel_key(src, get_global_id(0), get_global_id(1), lid));
  if (get_sub_group_local_id() == 0) keys[get_sub_group_id()] = best;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid != 0) return;
  uint top = 0;
  for (uint s = 0; s < get_num_sub_groups(); ++s) top = max(top, keys[s]);
  emit(src, top, get_group_id(0), get_group_id(1), block, threshold, count, points);
}
#endif

// ---------------------------------------------------------------------------------------------
// Glow: the input plus, for every point within reach, its colour times
// strength * excess * exp(-d^2 / (2 sigma^2)), d the distance in pixels and excess how far the
// point's luminance exceeds the threshold (0..1); a simple bloom that shows what was found.
// grid holds one entry per block: the index of its point or -1, so each pixel only visits the
// blocks within `reach` blocks of its own. The image is read and written as normalised floats,
// so the same code serves RGBA8 and RGBA16 images; a point's colour is 8-bit at either depth
// (its 1/255 is the point's scale, not the image's).
kernel void bright_glow(read_only image2d_t src, write_only image2d_t dst, int block,
                        global const int* grid, global const uint4* points, int reach,
                        float sigma, float strength, float threshold) {
  const int x = get_global_id(0), y = get_global_id(1);
  const int w = get_image_width(src), h = get_image_height(src);
  if (x >= w || y >= h) return;
  const int blocks_x = (w + block - 1) / block, blocks_y = (h + block - 1) / block;
  const int bx = x / block, by = y / block;
  float4 c = read_imagef(src, (int2)(x, y));
  const float k = -0.5f / (sigma * sigma);
  for (int j = max(by - reach, 0); j <= min(by + reach, blocks_y - 1); ++j) {
    for (int i = max(bx - reach, 0); i <= min(bx + reach, blocks_x - 1); ++i) {
      const int index = grid[j * blocks_x + i];
      if (index < 0) continue;
      const uint4 p = points[index];
      const float dx = (float)x - (float)p.x, dy = (float)y - (float)p.y;
      const float3 colour =
          (float3)(p.z & 255u, (p.z >> 8) & 255u, (p.z >> 16) & 255u) * (1.0f / 255.0f);
      // Brighter points glow more: weight by how far the point exceeds the threshold.
      const float excess = clamp(((float)p.w - threshold) / (2550000.0f - threshold), 0.05f, 1.0f);
      c.xyz += strength * excess * exp(k * (dx * dx + dy * dy)) * colour;
    }
  }
  write_imagef(dst, (int2)(x, y), clamp(c, 0.0f, 1.0f));
}

// buffer: per-thread over a plain buffer of pixel words (pixel_word_t: one uint a pixel for
// RGBA8, two for RGBA16; rows of width pixels, R in the low bits) instead of an image: no
// sampler and no float conversion, and with the block side known at build time
// (-DBRIGHT_BLOCK=B) its loops unroll. Where a block's rows are whole and 16-byte aligned (B and
// the width multiples of LOAD_PIXELS, the pixels of 16 bytes: 4 RGBA8 or 2 RGBA16) each row is
// B / LOAD_PIXELS 16-byte loads; neighbouring work-items take neighbouring blocks of a row, so a
// warp's loads cover whole cache lines.
#ifdef BRIGHT_BLOCK
// The key of pixel word u at raster index i, as pixel_key. Written on scalars rather than
// through luminance() on a uint4: on PoCL that form was 2-3x slower (alternating runs, best
// of 10: 2.6-4.5 ms against 0.86-1.3). load_key: the largest key of the pixels of one 16-byte
// load whose first pixel has index i; word_rgba8: a point's colour as emit() packs it.
#ifdef PIXEL16
#define LOAD_PIXELS 2
inline uint word_key(uint2 u, int i) {
  return (luminance3(u.x & 0xFFFFu, u.x >> 16, u.y & 0xFFFFu) << 10) | (1023u - (uint)i);
}
inline uint load_key(uint4 p, int i) { return max(word_key(p.xy, i), word_key(p.zw, i + 1)); }
inline uint word_rgba8(uint2 u) { return rgba8(pixel_samples(u)); }
#else
#define LOAD_PIXELS 4
inline uint word_key(uint u, int i) {
  return (luminance3(u & 0xFFu, u >> 8 & 0xFFu, u >> 16 & 0xFFu) << 10) | (1023u - (uint)i);
}
inline uint load_key(uint4 p, int i) {
  return max(max(word_key(p.x, i), word_key(p.y, i + 1)),
             max(word_key(p.z, i + 2), word_key(p.w, i + 3)));
}
inline uint word_rgba8(uint u) { return u; }
#endif

kernel void bright_buffer(global const pixel_word_t* src, int w, int h, uint threshold,
                          volatile global uint* count, global uint4* points) {
  const int x0 = get_global_id(0) * BRIGHT_BLOCK, y0 = get_global_id(1) * BRIGHT_BLOCK;
  if (x0 >= w || y0 >= h) return;
  uint best = 0;
  if (BRIGHT_BLOCK % LOAD_PIXELS == 0 && w % LOAD_PIXELS == 0 && x0 + BRIGHT_BLOCK <= w &&
      y0 + BRIGHT_BLOCK <= h) {
#pragma unroll
    for (int j = 0; j < BRIGHT_BLOCK; ++j) {
      global const uint4* row = (global const uint4*)(src + (size_t)(y0 + j) * w + x0);
#pragma unroll
      for (int q = 0; q < BRIGHT_BLOCK / LOAD_PIXELS; ++q)
        best = max(best, load_key(row[q], j * BRIGHT_BLOCK + LOAD_PIXELS * q));
    }
  } else {  // a partial block, or rows that are not 16-byte aligned
    const int bw = min(BRIGHT_BLOCK, w - x0), bh = min(BRIGHT_BLOCK, h - y0);
    for (int j = 0; j < bh; ++j)
      for (int i = 0; i < bw; ++i)
        best = max(best, word_key(src[(size_t)(y0 + j) * w + x0 + i], j * BRIGHT_BLOCK + i));
  }
  if ((best >> 10) <= threshold) return;
  const int i = 1023 - (int)(best & 1023u);
  const int x = x0 + i % BRIGHT_BLOCK, y = y0 + i / BRIGHT_BLOCK;
  const uint slot = atomic_inc(count);
  points[slot] = (uint4)(x, y, word_rgba8(src[(size_t)y * w + x]), best >> 10);
}
#endif
