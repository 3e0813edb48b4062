// JPEG's entropy decoding on a device (kernels/jpeg_entropy.cl): a Huffman-coded file's scans
// (image/jpeg_entropy.h) -> its quantised DCT blocks in DctBlocks' layout, on the device, ready
// for YCbCrConverter::blocks_to_planes. A baseline scan by self-synchronising parallel Huffman
// decoding after Weissenberger and Schmidt ("Massively parallel Huffman decoding on GPUs", ICPP
// 2018; their JPEG decoder, HiPC 2021); a progressive file's scans in turn, each by one
// work-item, as libjpeg's jdphuff.c decodes them. One work-group an image.
#pragma once

#include <cstdint>
#include <vector>

#include "image/jpeg_entropy.h"
#include "runtime/cl_runtime.h"
#include "util/host_memory.h"

namespace blurtool {

/// The entropy decoder of one Runtime's queue (its program built on construction).
/// Not thread-safe: one per device thread.
class EntropyDecoder {
 public:
  /// Builds kernels/jpeg_entropy.cl's baseline decoder on `runtime`, which must outlive this (the
  /// progressive decoder at the first progressive image). The work-group takes
  /// min(256, what the device and kernel allow) work-items unless BLURTOOL_ENTROPY_WG says
  /// otherwise (a power of two, for measurements). Throws blurtool::Error on a failed build.
  explicit EntropyDecoder(Runtime& runtime);

  /// The one buffer the kernel reads for `scan` (baseline: header, tables, segments,
  /// subsequences of `subsequence_bits` bits, then the data; progressive: header, tables, scans,
  /// segments, then the data; the layouts kernels/jpeg_entropy.cl gives), for the image `layout`
  /// (parse_entropy_scan's). subsequence_bits (baseline only): a multiple of 32, at least 32; 0
  /// takes the default (1024, or 32 x BLURTOOL_ENTROPY_SUB_WORDS, a power of two). Throws
  /// std::bad_alloc.
  static PixelVector<std::uint8_t> pack(const EntropyScan& scan, const YCbCrPlanes& layout,
                                        int subsequence_bits = 0);

  /// One image of a batch: its packed input (pack's; `bytes` bytes, unchanged until the queue
  /// has read it), its layout (parse_entropy_scan's) and where its coefficients go: from short
  /// `coef_offset` of the batch's coefficient buffer (the layout's coefficient count of shorts,
  /// zeroed by decode first: it zeroes from the lowest item offset to the highest item end).
  struct Item {
    const std::uint8_t* packed = nullptr;
    std::size_t bytes = 0;
    const YCbCrPlanes* layout = nullptr;
    std::size_t coef_offset = 0;
  };

  /// Enqueues the decoding of `items` in one launch for the baseline images and one for the
  /// progressive ones (a work-group an image, so that a batch fills the device where one image
  /// fills at most one compute unit) into `coef`, and the read of
  /// their statuses into `statuses` (4 ints an item: [0] 0 when the blocks are libjpeg's, 1 when
  /// the data is something libjpeg would warn about or did not come into step within the kernel's
  /// passes, and the caller must decode that file with libjpeg; [1] why: 2 not in step after the
  /// kernel's passes (data with next to no end-of-block codes, as noise at quality 100), 3 a run's
  /// start out of step or at a bad code, 4 a bad code or data past its segment, 5 a segment's
  /// blocks ending early or whole bytes before its end; a progressive image: 4 a bad code, a
  /// refinement's new coefficient of a size other than 1 or data past its segment, 5 whole
  /// bytes left over in a segment; [2] the passes the synchronisation took, 0 for progressive).
  /// The inputs go up from the items' memory without a copy and without blocking (pinned memory
  /// uploads fastest): it, and `statuses`, must stay until the queue has finished. Returns the
  /// kernels' events (none for no items); `uploads`, where given, gets the events of the inputs'
  /// uploads (for their time). The progressive decoder is built at the first progressive image;
  /// where it cannot be built or does not fit the device (its tables take 35 KiB of local
  /// memory), progressive images get status 1 (reason 1) and stay undecoded. Throws cl::Error,
  /// std::bad_alloc.
  std::vector<cl::Event> decode(const std::vector<Item>& items, const cl::Buffer& coef,
                                std::int32_t* statuses, std::vector<cl::Event>* uploads = nullptr);

  /// The coefficient count (shorts) of `layout` (parse_entropy_scan's, whose dct holds none).
  static std::size_t coefficients(const YCbCrPlanes& layout);

  /// Work-items of the work-group (WG).
  int work_group() const { return wg_; }

 private:
  Runtime& runtime_;
  // Builds the progressive decoder once; false where it cannot be built or run here.
  bool progressive_ready();

  cl::Kernel kernel_, progressive_;
  bool progressive_failed_ = false;
  int wg_ = 256, lane_ = 32;
  cl::Buffer input_, where_, progressive_where_, scratch_, status_;
  std::size_t input_bytes_ = 0, where_bytes_ = 0, progressive_where_bytes_ = 0, scratch_bytes_ = 0,
              status_bytes_ = 0;
  std::vector<cl_ulong> where_of_;
};

}  // namespace blurtool
