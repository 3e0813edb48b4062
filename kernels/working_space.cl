// The working space of issue 10's fidelity modes: RGBA16 pixels are taken from their stored
// form (straight alpha, sRGB-encoded colour) into the form a blur must average, and back.
//   - linear light: colour channels through the exact sRGB transfer curves (IEC 61966-2-1), by
//     lookup tables of 65536 16-bit entries the host fills (core/working_space.cpp), so that a
//     black/white edge averages to linear mid-grey (sRGB 188 of 255), not to 128;
//   - premultiplied alpha: colour times alpha before, divided by alpha after, so that a pixel
//     counts in a mean by its coverage and transparent pixels' colours never bleed into the
//     opaque ones (no dark or coloured halos); alpha 0 comes back as 0 in every channel.
// Alpha itself is coverage: never converted. All arithmetic is integer, the same as the host's
// reference (working_space_reference), so results are exact.
//
// Both kernels: one work-item per pixel, n pixels of ushort4, `flags` a sum of:
#define WORKING_LINEAR 1       // colour through the transfer table
#define WORKING_PREMULTIPLY 2  // colour times alpha (prepare) or over alpha (finish)
#define WORKING_ALPHA8 4       // finish: the output keeps 8 bits, so an alpha that rounds to 0
                               // there (at most 128) is 0: the pixel is black-transparent, its
                               // colour not a sliver of premultiplied colour amplified

// Stored -> working: linearise (to_linear[v]), then c * a / 65535 rounded half down.
kernel void working_space_prepare(global const ushort4* src, global ushort4* dst, uint n,
                                  global const ushort* to_linear, int flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  uint4 c = convert_uint4(src[i]);
  if (flags & WORKING_LINEAR) c.xyz = (uint3)(to_linear[c.x], to_linear[c.y], to_linear[c.z]);
  if (flags & WORKING_PREMULTIPLY) c.xyz = (c.xyz * c.w + 32767u) / 65535u;  // < 2^32
  dst[i] = convert_ushort4(c);
}

// Working -> stored: c * 65535 / a rounded half up, at most 65535 (0 where a is 0, or at most
// 128 with WORKING_ALPHA8), then encoded (to_srgb[v]).
kernel void working_space_finish(global const ushort4* src, global ushort4* dst, uint n,
                                 global const ushort* to_srgb, int flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  uint4 c = convert_uint4(src[i]);
  if ((flags & WORKING_ALPHA8) && c.w <= 128u) c.w = 0;
  if (flags & WORKING_PREMULTIPLY) {
    if (c.w == 0)
      c = 0;
    else
      c.xyz = min((c.xyz * 65535u + c.w / 2) / c.w, 65535u);  // < 2^32
  }
  if (flags & WORKING_LINEAR) c.xyz = (uint3)(to_srgb[c.x], to_srgb[c.y], to_srgb[c.z]);
  dst[i] = convert_ushort4(c);
}
