// Intermediate formats: the image between the two passes of a separable filter (--intermediate).
// Shared by the box and Gaussian filters; each filter decides what it stores in it.
#pragma once

#include <vector>

#include "runtime/cl_runtime.h"
#include "util/named.h"

namespace blurtool {

/// Format of the image between two passes.
enum class Intermediate { rgba8, rgba16f, rgba32f };

/// Name table: rgba8, rgba16f, rgba32f.
const std::vector<Named<Intermediate>>& intermediate_table();

/// Bytes per pixel of an intermediate format (4, 8, 16).
int intermediate_bytes(Intermediate format);

/// The OpenCL channel type of the format: CL_UNORM_INT8, CL_HALF_FLOAT, CL_FLOAT.
cl_channel_type intermediate_channel_type(Intermediate format);

}  // namespace blurtool
