// The box filter's tuning search space (see box_search_space.h).
#include "filters/box/box_search_space.h"

namespace blurtool {

const std::vector<int>& box_tuning_radii() {
  static const std::vector<int> radii = {1, 8, 30, 63};
  return radii;
}

std::vector<BoxParams> box_tuning_candidates(int radius, Intermediate intermediate, int width,
                                             int height, const DeviceInfo& device) {
  std::vector<BoxParams> cs;
  auto add = [&](BoxVariant v, int segment, int unroll, WorkGroup wg) {
    BoxParams p;
    p.radius = radius;
    p.variant = v;
    p.intermediate = intermediate;
    p.segment = segment;
    p.unroll = unroll;
    p.wg = wg;
    cs.push_back(p);
  };
  // fused: its default (16x8, tile rows fitted to one wave: box_fused_default_segment), and
  // three work-groups with 32-, 64- and 128-row tiles (16x8 at the default's height only once).
  add(BoxVariant::fused, 0, 0, box_fused_preferred_group(device));
  const int fused_rows = box_fused_default_segment(width, height, box_fused_preferred_group(device),
                                                   device.compute_units);
  for (WorkGroup wg : {WorkGroup{16, 8}, WorkGroup{32, 4}, WorkGroup{16, 4}})
    for (int segment : {32, 64, 128})
      if (wg.x != box_fused_preferred_group(device).x ||
          wg.y != box_fused_preferred_group(device).y || segment != fused_rows)
        add(BoxVariant::fused, segment, 0, wg);
  // tiled: its default rows for the radius (box_tiled_default_segment), 256 and 1024.
  for (int segment : {0, 256, 1024}) add(BoxVariant::tiled, segment, 0, {});
  for (int unroll : {2, 4}) add(BoxVariant::segmented, 0, unroll, {});
  add(BoxVariant::segmented_local, 0, 0, {});
  if (!(device.type & CL_DEVICE_TYPE_GPU))
    add(BoxVariant::unrolled, 0, 8, {});  // images: slow on CPUs, but try one
  return cs;
}

}  // namespace blurtool
