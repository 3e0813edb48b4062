// The Gaussian's tuning search space (see gauss_search_space.h).
#include "filters/gauss/gauss_search_space.h"

namespace blurtool {

const std::vector<int>& gauss_tuning_radii() {
  static const std::vector<int> radii = {4, 16, 30, 40, 63};
  return radii;
}

std::vector<GaussParams> gauss_tuning_candidates(int radius, Intermediate intermediate,
                                                 const DeviceInfo& device) {
  const bool gpu = device.type & CL_DEVICE_TYPE_GPU;
  std::vector<GaussParams> cs;
  auto add = [&](GaussVariant v, WorkGroup wg, int segment = 0) {
    GaussParams p;
    p.sigma = radius / 3.0;
    p.radius = radius;
    p.variant = v;
    p.intermediate = intermediate;
    p.wg = wg;
    p.segment = segment;
    cs.push_back(p);
  };
  add(GaussVariant::tiled, {});  // its default width for the radius
  // Tile widths: the best follows the CPU's caches (64 on one 2-core EPYC at R 16, 256 on a
  // Zen 4 one; docs/notes/cpu.md). On GPUs tiled is far behind: its default only.
  if (!gpu)
    for (int columns : {64, 128, 256})
      if (columns != gauss_tile_width(radius)) add(GaussVariant::tiled, {}, columns);
  for (WorkGroup wg : {WorkGroup{32, 1}, WorkGroup{64, 1}, WorkGroup{128, 1}})
    add(GaussVariant::separable_local, wg);
  add(GaussVariant::separable_linear, {});
  add(GaussVariant::fused_local, {});
  if (!gpu) return cs;
  add(GaussVariant::separable, {});  // 0.5 s a run on a 2-core CPU
  // fused is built for each radius: on CPUs, seconds a build for a schedule that loses to
  // tiled (PoCL, 2 cores, R 16: 14.8 ms against 8.9).
  add(GaussVariant::fused, {});  // its defaults for the radius (256x1 or 128x1, 8 rows)
  for (auto [group, rows] : {std::pair{128, 8}, {256, 4}, {64, 16}})
    add(GaussVariant::fused, {group, 1}, rows);
  // Its defaults (128x1, 8 outputs a column work-item), then the next best measured on an H100
  // (64x1; 16 outputs).
  add(GaussVariant::separable_buffer, {});
  add(GaussVariant::separable_buffer, {64, 1});
  add(GaussVariant::separable_buffer, {128, 1}, 16);
  add(GaussVariant::separable_mma, {});  // refused (skipped) without tensor cores
  // Its rows a work-group walks down (default 64, 128 or 256 by radius; refused without tensor
  // cores, and above R 32).
  for (int rows : {64, 128, 256}) add(GaussVariant::fused_mma, {}, rows);
  return cs;
}

}  // namespace blurtool
