// The OpenCL C sources of kernels/*.cl, embedded into the binary at build time by
// cmake/embed_kernels.cmake, keyed by file name without extension ("box_window" for
// kernels/box_window.cl).
#pragma once

#include <map>
#include <string>

namespace blurtool {

/// Every embedded kernel family: name -> OpenCL C source text.
const std::map<std::string, std::string>& kernel_sources();

}  // namespace blurtool
