// The bright-point finder's tuning search space (see bright_search_space.h).
#include "filters/bright/bright_search_space.h"

namespace blurtool {

const std::vector<int>& bright_tuning_blocks() {
  static const std::vector<int> blocks = {8, 16};
  return blocks;
}

std::vector<BrightParams> bright_tuning_candidates(int block) {
  std::vector<BrightParams> cs;
  for (const auto& v : bright_variant_table()) {
    if (v.value == BrightVariant::automatic) continue;
    BrightParams p;
    p.threshold = 0.5;
    p.block = block;
    p.variant = v.value;
    cs.push_back(p);
  }
  return cs;
}

}  // namespace blurtool
