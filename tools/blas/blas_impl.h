// Internal to the BLAS comparison: the entry points of each implementation (blas_clblast.cpp,
// blas_image.cpp, blas_buffer.cpp) that the dispatcher in blas.cpp calls, and the timing and
// memory helpers they share.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tools/blas/blas.h"

namespace blurtool {

/// Calls `once` 1 + runs times (the first one untimed when runs > 0, a warm-up). Each call
/// uploads the operands, computes and downloads the result, and returns its kernel time in ms;
/// the host wall time of each call is its end-to-end time.
BlasTiming time_runs(int runs, const std::function<double()>& once);

/// Kernel time of a sequence of finished profiling events, in ms: from the first one's START
/// to the last one's END (so the gaps between kernels count, as they do for the user).
double events_ms(const std::vector<cl::Event>& events);

/// Throws blurtool::Error unless buffers of these sizes (bytes) fit the device: each at most
/// CL_DEVICE_MAX_MEM_ALLOC_SIZE, all together at most CL_DEVICE_GLOBAL_MEM_SIZE. `what` names
/// the routine and size for the message.
void check_fits(Runtime& rt, const std::vector<size_t>& bytes, const std::string& what);

/// A new device buffer holding `v` (at least one float, since buffers cannot be empty),
/// written with a blocking upload.
cl::Buffer upload_floats(Runtime& rt, const std::vector<float>& v);

BlasTiming saxpy_clblast(Runtime& rt, const SaxpyArgs& a, const std::vector<float>& x,
                         std::vector<float>& y, int runs);
BlasTiming sdot_clblast(Runtime& rt, const SdotArgs& a, const std::vector<float>& x,
                        const std::vector<float>& y, float& result, int runs);
BlasTiming sgemm_clblast(Runtime& rt, const SgemmArgs& a, const std::vector<float>& A,
                         const std::vector<float>& B, std::vector<float>& C, int runs);

BlasTiming saxpy_image(Runtime& rt, const SaxpyArgs& a, const std::vector<float>& x,
                       std::vector<float>& y, int runs);
BlasTiming sdot_image(Runtime& rt, const SdotArgs& a, const std::vector<float>& x,
                      const std::vector<float>& y, float& result, int runs);
BlasTiming sgemm_image(Runtime& rt, int form, const SgemmArgs& a, const std::vector<float>& A,
                       const std::vector<float>& B, std::vector<float>& C, int runs);

BlasTiming saxpy_buffer(Runtime& rt, const SaxpyArgs& a, const std::vector<float>& x,
                        std::vector<float>& y, int runs);
BlasTiming sdot_buffer(Runtime& rt, const SdotArgs& a, const std::vector<float>& x,
                       const std::vector<float>& y, float& result, int runs);
BlasTiming sgemm_buffer(Runtime& rt, const SgemmArgs& a, const std::vector<float>& A,
                        const std::vector<float>& B, std::vector<float>& C, int runs);

}  // namespace blurtool
