// Faults on demand, for the tests: the failures a device gives only under pressure (an
// allocation refused for want of memory), made to happen on any device, PoCL included, so that
// the paths that answer them (the tiled fallback, the out-of-memory messages) are tested.
#pragma once

namespace blurtool {

/// Throws cl::Error(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateBuffer"), as a device out of
/// memory would, when the environment variable BLURTOOL_FAIL_ALLOCATION names this image size
/// ("WxH", in pixels); does nothing otherwise. Called before a filter allocates the device
/// memory of a width x height image.
void inject_allocation_failure(int width, int height);

}  // namespace blurtool
