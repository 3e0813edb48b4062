// libjpeg's whole-image DCT block arrays held where the caller wants them, and the layout of a
// file's blocks (internal to jpeg_planes.cpp and jpeg_entropy.cpp; includes jpeglib.h, which
// needs <cstdio> first).
//
// Reading a JPEG's coefficients (jpeg_read_coefficients) and writing them
// (jpeg_write_coefficients) go through libjpeg's "virtual block arrays": the memory manager
// (jmemmgr.c) allocates one per component for every image and frees it with the image. An
// image-sized allocation that is handed back to the system at each image costs its first-touch
// page faults again at the next one, and on virtual machines those cost as much as the entropy
// decoding itself (kernels/NOTES.md, "JPEG block arrays in place"); then the blocks were also
// copied once more, into or out of DctBlocks::coef. BlockArrays replaces the memory manager's
// three virtual-array methods (request_virt_barray, realize_virt_arrays, access_virt_barray; the
// memory manager is a table of function pointers that libjpeg documents as replaceable, see
// libjpeg.txt "Memory management") on one codec object, so that each block row of a component
// points straight into the caller's memory (DctBlocks::coef, reused from image to image), and
// only rows the caller has no room for (the padding libjpeg adds to whole MCUs) live in scratch
// memory of their own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

namespace blurtool {

struct YCbCrPlanes;  // image/jpeg_planes.h

/// The layout decode_jpeg_blocks decodes the blocks of the file whose header `in` has read
/// (jpeg_read_header) into: *planes gets decoder_sizes and its dct's block counts and offsets
/// (no coefficients, no tables); returns the coefficient count, or 0 (*planes untouched) for a
/// file the blocks do not take: other than 8-bit, or components other than grey or YCbCr with
/// chroma at 1x1 and luma at up to 2x2, or arithmetic coding. Huffman coding of any process:
/// baseline, extended or progressive. Throws blurtool::Error as decoder_sizes does.
std::size_t block_layout(const jpeg_decompress_struct& in, YCbCrPlanes* planes);

/// Where one component's block rows are to live: `rows` rows of `stride` blocks from `base`.
/// Rows realised there are zeroed (all `rows` x `stride` blocks) where libjpeg asks for
/// pre-zeroed arrays, as the decoder does; the caller need not zero them.
/// `padding_written`: libjpeg writes each row's blocks up to the MCU-padded width (the
/// decoder); the rows then alias the caller's memory only where that width fits in `stride`.
/// The encoder (jctrans.c) reads only the component's own blocks, so any stride will do.
struct BlockTarget {
  JBLOCK* base = nullptr;
  std::size_t stride = 0;  ///< blocks from one row to the next
  JDIMENSION rows = 0;
  bool padding_written = true;
};

/// The block arrays of one libjpeg codec object. install() before jpeg_read_coefficients (or
/// before requesting arrays for jpeg_write_coefficients); the object must outlive the codec
/// object's use of the arrays. The i-th array libjpeg requests is component i's, mapped to
/// targets[i]; components beyond the targets, or without a base, live in scratch memory.
class BlockArrays {
 public:
  BlockArrays() = default;
  BlockArrays(const BlockArrays&) = delete;
  BlockArrays& operator=(const BlockArrays&) = delete;

  /// Replaces the three virtual-block-array methods of `info`'s memory manager and keeps
  /// `targets`; uses info->client_data (to find this object from libjpeg's callbacks).
  void install(j_common_ptr info, const std::array<BlockTarget, 3>& targets);

  /// Whether array `i` (component i) was realised in place, in its target's memory; false for
  /// one in scratch memory, whose rows the caller copies (access_virt_barray still gives them).
  bool in_place(std::size_t i) const;

 private:
  struct Array {
    JDIMENSION across = 0, down = 0;  // as libjpeg asked, padded to whole MCUs
    bool pre_zero = false;            // zeroed before use (the decoder)
    bool in_place = false;
    std::vector<JBLOCKROW> rows;  // down of them, once realised
    std::vector<JCOEF> scratch;   // the rows that do not live in the target (64 a block)
  };

  static jvirt_barray_ptr request(j_common_ptr info, int pool_id, boolean pre_zero,
                                  JDIMENSION across, JDIMENSION down, JDIMENSION max_access);
  static void realize(j_common_ptr info);
  static JBLOCKARRAY access(j_common_ptr info, jvirt_barray_ptr array, JDIMENSION start_row,
                            JDIMENSION num_rows, boolean writable);
  static BlockArrays& of(j_common_ptr info);

  std::array<BlockTarget, 3> targets_{};
  std::deque<Array> arrays_;  // a deque: the handles given to libjpeg are their addresses
  void (*realize_others_)(j_common_ptr) = nullptr;  // the memory manager's own (sample arrays)
};

}  // namespace blurtool
