// Edge modes: what a filter reads for coordinates outside the image. Shared by every operation,
// its CPU reference and its kernels (kernels/common.cl mirrors edge_index() exactly).
#pragma once

#include <vector>

#include "util/named.h"

namespace blurtool {

/// How pixels outside the image are defined. The numeric values are passed to the kernels.
enum class EdgeMode {
  clamp = 0,   ///< the edge pixel repeats: aaa|abc|ccc (clamp-to-edge)
  mirror = 1,  ///< reflection that repeats the edge pixel, periodic: cba|abc|cba|abc
  zero = 2,    ///< zero (transparent black) outside; the window still divides by its full size
};

/// Name table: clamp, mirror, zero.
inline const std::vector<Named<EdgeMode>>& edge_mode_table() {
  static const std::vector<Named<EdgeMode>> table = {
      {EdgeMode::clamp, "clamp", "the edge pixel repeats (default)"},
      {EdgeMode::mirror, "mirror", "reflection including the edge pixel (cba|abc|cba)"},
      {EdgeMode::zero, "zero", "black and transparent outside the image"},
  };
  return table;
}

/// Maps coordinate `i` on an axis of `n` pixels to the pixel it reads under `mode`: a value in
/// [0, n), or -1 where the zero edge mode reads zero.
inline int edge_index(long long i, int n, EdgeMode mode) {
  if (i >= 0 && i < n) return static_cast<int>(i);
  switch (mode) {
    case EdgeMode::clamp:
      return i < 0 ? 0 : n - 1;
    case EdgeMode::zero:
      return -1;
    case EdgeMode::mirror: {
      long long period = 2LL * n;
      long long m = i % period;
      if (m < 0) m += period;
      return static_cast<int>(m < n ? m : period - 1 - m);
    }
  }
  return -1;
}

}  // namespace blurtool
