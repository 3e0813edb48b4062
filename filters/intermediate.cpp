// Intermediate format table (see intermediate.h).
#include "filters/intermediate.h"

namespace blurtool {

const std::vector<Named<Intermediate>>& intermediate_table() {
  static const std::vector<Named<Intermediate>> table = {
      {Intermediate::rgba8, "rgba8", "8 bits per channel, normalised"},
      {Intermediate::rgba16f, "rgba16f", "half float, 11 significant bits"},
      {Intermediate::rgba32f, "rgba32f", "float (default)"},
  };
  return table;
}

int intermediate_bytes(Intermediate format) {
  switch (format) {
    case Intermediate::rgba8:
      return 4;
    case Intermediate::rgba16f:
      return 8;
    case Intermediate::rgba32f:
      break;
  }
  return 16;
}

cl_channel_type intermediate_channel_type(Intermediate format) {
  switch (format) {
    case Intermediate::rgba8:
      return CL_UNORM_INT8;
    case Intermediate::rgba16f:
      return CL_HALF_FLOAT;
    case Intermediate::rgba32f:
      break;
  }
  return CL_FLOAT;
}

}  // namespace blurtool
