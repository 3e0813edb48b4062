// The working space of issue 10's fidelity modes: RGBA16 pixels are taken from their stored
// form (straight alpha, sRGB-encoded colour) into the form a blur must average, and back.
//   - linear light: colour channels through the exact sRGB transfer curves (IEC 61966-2-1), by
//     lookup tables of 65536 16-bit entries the host fills (filters/working_space.cpp), so that a
//     black/white edge averages to linear mid-grey (sRGB 188 of 255), not to 128;
//   - premultiplied alpha: colour times alpha before, divided by alpha after, so that a pixel
//     counts in a mean by its coverage and transparent pixels' colours never bleed into the
//     opaque ones (no dark or coloured halos); alpha 0 comes back as 0 in every channel.
// Alpha itself is coverage: never converted. All arithmetic is integer, the same as the host's
// reference (working_space_reference), so results are exact.
//
// Every kernel: one work-item per pixel, n pixels (ushort4 in the working space; the stored
// form ushort4, or uchar4 for the 8-bit kernels), `flags` a sum of:
#define WORKING_LINEAR 1       // colour through the transfer table
#define WORKING_PREMULTIPLY 2  // colour times alpha (prepare) or over alpha (finish)
#define WORKING_ALPHA8 4       // finish: the output keeps 8 bits, so an alpha that rounds to 0
                               // there (at most 128) is 0: the pixel is black-transparent, its
                               // colour not a sliver of premultiplied colour amplified

// Stored -> working: linearise (to_linear[v]), then c * a / 65535 rounded half down.
inline uint4 to_working(uint4 c, global const ushort* to_linear, int flags) {
  if (flags & WORKING_LINEAR) c.xyz = (uint3)(to_linear[c.x], to_linear[c.y], to_linear[c.z]);
  if (flags & WORKING_PREMULTIPLY) c.xyz = (c.xyz * c.w + 32767u) / 65535u;  // < 2^32
  return c;
}

// Working -> stored: c * 65535 / a rounded half up, at most 65535 (0 where a is 0, or at most
// 128 with WORKING_ALPHA8), then encoded (to_srgb[v]).
inline uint4 to_stored(uint4 c, global const ushort* to_srgb, int flags) {
  if ((flags & WORKING_ALPHA8) && c.w <= 128u) c.w = 0;
  if (flags & WORKING_PREMULTIPLY) {
    if (c.w == 0)
      c = 0;
    else
      c.xyz = min((c.xyz * 65535u + c.w / 2) / c.w, 65535u);  // < 2^32
  }
  if (flags & WORKING_LINEAR) c.xyz = (uint3)(to_srgb[c.x], to_srgb[c.y], to_srgb[c.z]);
  return c;
}

kernel void working_space_prepare(global const ushort4* src, global ushort4* dst, uint n,
                                  global const ushort* to_linear, int flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  dst[i] = convert_ushort4(to_working(convert_uint4(src[i]), to_linear, flags));
}

kernel void working_space_finish(global const ushort4* src, global ushort4* dst, uint n,
                                 global const ushort* to_srgb, int flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  dst[i] = convert_ushort4(to_stored(convert_uint4(src[i]), to_srgb, flags));
}

// The same for an 8-bit stored form: widened on the way in (v * 257, exact) and reduced on the
// way out ((v * 255 + 32767) / 65535, rounded to nearest), as the host's widen() and narrow()
// (image/pixel_layout.cpp) would, so that 8-bit pixels go to and from the device as they are
// stored.
kernel void working_space_prepare8(global const uchar4* src, global ushort4* dst, uint n,
                                   global const ushort* to_linear, int flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  dst[i] = convert_ushort4(to_working(convert_uint4(src[i]) * 257u, to_linear, flags));
}

kernel void working_space_finish8(global const ushort4* src, global uchar4* dst, uint n,
                                  global const ushort* to_srgb, int flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  dst[i] = convert_uchar4((to_stored(convert_uint4(src[i]), to_srgb, flags) * 255u + 32767u) /
                          65535u);
}
