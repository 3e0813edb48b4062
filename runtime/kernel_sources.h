// The OpenCL C sources of kernels/*.cl, embedded into the binary at build time by
// cmake/embed_kernels.cmake, keyed by file name without extension ("box_window" for
// kernels/box_window.cl).
#pragma once

#include <map>
#include <string>

namespace blurtool {

/// Every embedded kernel family: name -> OpenCL C source text.
const std::map<std::string, std::string>& kernel_sources();

/// `source` (OpenCL C) without its comments: each `// ...` (up to the end of its line) and each
/// `/* ... */` becomes one space; string and character literals are kept whole. What the
/// tuning table's fingerprint hashes, so that editing a comment leaves tuned winners valid.
std::string kernel_code(const std::string& source);

}  // namespace blurtool
