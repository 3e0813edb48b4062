#include "runtime/fault_injection.h"

#include <cstdlib>
#include <string>

#include "runtime/cl_runtime.h"

namespace blurtool {

void inject_allocation_failure(int width, int height) {
  const char* fail = std::getenv("BLURTOOL_FAIL_ALLOCATION");
  if (fail && std::to_string(width) + "x" + std::to_string(height) == fail)
    throw cl::Error(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer");
}

}  // namespace blurtool
