// JPEG's entropy decoding on a device (kernels/jpeg_entropy.cl): a baseline scan
// (image/jpeg_entropy.h) -> its quantised DCT blocks in DctBlocks' layout, on the device, ready
// for YCbCrConverter::blocks_to_planes. Self-synchronising parallel Huffman decoding after
// Weissenberger and Schmidt ("Massively parallel Huffman decoding on GPUs", ICPP 2018; their
// JPEG decoder, HiPC 2021); one work-group an image.
#pragma once

#include <cstdint>
#include <vector>

#include "image/jpeg_entropy.h"
#include "runtime/cl_runtime.h"

namespace blurtool {

/// The entropy decoder of one Runtime's queue (its program built on construction).
/// Not thread-safe: one per device thread.
class EntropyDecoder {
 public:
  /// Builds kernels/jpeg_entropy.cl on `runtime`, which must outlive this. The work-group takes
  /// min(256, what the device and kernel allow) work-items unless BLURTOOL_ENTROPY_WG says
  /// otherwise (a power of two, for measurements). Throws blurtool::Error on a failed build.
  explicit EntropyDecoder(Runtime& runtime);

  /// The one buffer the kernel reads for `scan` (header, tables, segments, subsequences of
  /// `subsequence_bits` bits, then the data; the layout kernels/jpeg_entropy.cl gives), for
  /// the image `layout` (parse_entropy_scan's). subsequence_bits: a multiple of 32, at least 32;
  /// 0 takes the default (1024, or BLURTOOL_ENTROPY_SUB_BITS). Throws std::bad_alloc.
  static std::vector<std::uint8_t> pack(const EntropyScan& scan, const YCbCrPlanes& layout,
                                        int subsequence_bits = 0);

  /// Enqueues the decoding of `packed` (pack's, `bytes` bytes, which must stay unchanged until
  /// the queue has read it) into `coef` (layout.dct's coefficient count of shorts, zeroed
  /// here first), and the read of its status into *status (4 ints: [0] 0 when the blocks are
  /// libjpeg's, 1 when the data is something libjpeg would warn about or did not come into
  /// step within the kernel's passes, and the caller must decode the file with libjpeg; [1]
  /// why: 2 not in step after the kernel's passes (data with next to no end-of-block codes, as
  /// noise at quality 100), 3 a run's start out of step or at a bad code, 4 a bad code or data
  /// past its segment, 5 a segment's blocks ending early or whole bytes before its end; [2] the
  /// passes the synchronisation took). *status must stay until the queue has written it.
  /// Returns the kernel's event. Throws cl::Error.
  cl::Event decode(const std::uint8_t* packed, std::size_t bytes, const YCbCrPlanes& layout,
                   const cl::Buffer& coef, std::int32_t* status);

  /// Work-items of the work-group (WG).
  int work_group() const { return wg_; }

 private:
  Runtime& runtime_;
  cl::Kernel kernel_;
  int wg_ = 256;
  cl::Buffer input_, scratch_, status_;
  std::size_t input_bytes_ = 0, scratch_bytes_ = 0;
};

}  // namespace blurtool
