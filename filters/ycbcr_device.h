// JPEG's per-pixel colour stages on the device (kernels/ycbcr.cl): a decoded JPEG's planes
// (image/jpeg_planes.h) turned into a filter's RGBA8 input, and a filter's RGBA8 output into the
// planes the host compresses, with the bytes libjpeg-turbo's own stages give. run_filter uses
// it when asked for planes (PlaneTransfer, filters/filter.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "image/jpeg_planes.h"
#include "runtime/cl_runtime.h"

namespace blurtool {

/// The colour-plane and DCT kernels on one Runtime's queue (one program, built on
/// construction; the sparse blocks' kernels another, built when first used).
/// Not thread-safe: one per device thread, as filters are.
class YCbCrConverter {
 public:
  /// Builds kernels/ycbcr.cl on `runtime`, which must outlive this. Throws blurtool::Error on
  /// a failed build.
  explicit YCbCrConverter(Runtime& runtime);

  /// Enqueues the conversion of `layout`'s planes (decoder_layout; their samples in `planes`
  /// at layout.offset) to RGBA8 pixels, width x height: into a buffer of width * height uchar4
  /// (row pitch width * 4 bytes), or an RGBA CL_UNORM_INT8 image of that size.
  cl::Event to_rgba(const cl::Buffer& planes, const YCbCrPlanes& layout, const cl::Buffer& dst);
  cl::Event to_rgba(const cl::Buffer& planes, const YCbCrPlanes& layout, const cl::Image2D& dst);

  /// Enqueues the conversion of RGBA8 pixels (layout.width x layout.height, a buffer or an
  /// image as for to_rgba) to `layout`'s planes (encoder_layout) in `planes`; one event (Y, Cb
  /// and Cr in one launch).
  std::vector<cl::Event> to_planes(const cl::Buffer& src, const YCbCrPlanes& layout,
                                   const cl::Buffer& planes);
  std::vector<cl::Event> to_planes(const cl::Image2D& src, const YCbCrPlanes& layout,
                                   const cl::Buffer& planes);

  /// Enqueues the dequantisation and inverse DCT of `layout`'s blocks (decode_jpeg_blocks: its
  /// dct's coefficients in `coef`, from element `coef_base`) into its planes (decoder_layout
  /// offsets) in
  /// `planes`: what tjDecompressToYUVPlanes gives. The quantisation tables go up from
  /// layout.dct.quant when they differ from the last call's. One event (every component in one
  /// launch).
  std::vector<cl::Event> blocks_to_planes(const cl::Buffer& coef, const YCbCrPlanes& layout,
                                          const cl::Buffer& planes, std::size_t coef_base = 0);

  /// Enqueues the forward DCT and quantisation of `layout`'s planes (encoder_block_layout's
  /// sizes and tables; samples in `planes` at layout.offset) into its coefficients in `coef`:
  /// what libjpeg's compressor codes. One event (every component in one launch).
  std::vector<cl::Event> planes_to_blocks(const cl::Buffer& planes, const YCbCrPlanes& layout,
                                          const cl::Buffer& coef);

  /// Uploads `dct`'s coefficients held sparse (SparseBlocks) and enqueues their unpacking into
  /// whole blocks in `coef` (dct.block_count() * 64 shorts, as blocks_to_planes reads them).
  /// The writes do not block: `dct` must stay until the queue has finished them.
  void upload_sparse(const DctBlocks& dct, const cl::Buffer& coef);

  /// Packs the whole blocks in `coef` (dct->block_count() of them) into dct->sparse (sized by
  /// encoder_block_layout with `sparse`) and reads it back: the masks and group starts, then
  /// the values (dct->sparse.values resized to their count). Returns when they are read.
  void download_sparse(const cl::Buffer& coef, DctBlocks* dct);

 private:
  void ensure_sparse_kernels();
  template <typename Dst>
  cl::Event enqueue_to_rgba(cl::Kernel& kernel, const cl::Buffer& planes, const YCbCrPlanes& layout,
                            const Dst& dst);
  template <typename Src>
  std::vector<cl::Event> enqueue_to_planes(cl::Kernel& kernel, const Src& src,
                                           const YCbCrPlanes& layout, const cl::Buffer& planes);

  Runtime& runtime_;
  cl::Kernel to_rgba_buffer_, to_rgba_image_, to_planes_buffer_, to_planes_image_, dct_to_plane_,
      plane_to_dct_, unpack_blocks_, mask_blocks_, scan_groups_, pack_blocks_;
  // Sparse blocks on the device (both directions, one after the other on the queue), with their
  // sizes in bytes.
  cl::Buffer mask_, values_, group_start_, group_count_;
  std::size_t mask_bytes_ = 0, values_bytes_ = 0, group_start_bytes_ = 0, group_count_bytes_ = 0;
  // The tables on the device, and what they were made from (fast_dct 0/1; -1: none yet).
  cl::Buffer quant_, divisors_;
  std::array<std::array<std::uint16_t, 64>, 3> quant_of_{}, divisors_of_{};
  int divisors_fast_ = -1;
  bool quant_set_ = false;
};

}  // namespace blurtool
