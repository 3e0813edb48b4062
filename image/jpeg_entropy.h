// A baseline JPEG's entropy-coded data laid out for Huffman decoding on a device
// (kernels/jpeg_entropy.cl; filters/jpeg_entropy_device.h runs it): the headers are read by
// libjpeg, the Huffman tables derived as libjpeg's jdhuff.c derives them, and the scan's bytes
// unstuffed (0xFF 0x00 -> 0xFF) and split at its restart markers. The device then writes the
// quantised DCT blocks that decode_jpeg_blocks (jpeg_read_coefficients) gives, in the same
// layout, without the host's Huffman decoding.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "image/jpeg_planes.h"

namespace blurtool {

/// Bits of a Huffman code the kernel looks up in one step (longer codes take jdhuff.c's
/// canonical search).
inline constexpr int kHuffLookBits = 9;
/// Ints of one derived Huffman table: the lookahead entries (length << 8 | symbol, 0 for a
/// longer code), then maxcode[18], valoffset[18] and huffval[256] as jdhuff.c's
/// jpeg_make_d_derived_tbl makes them.
inline constexpr int kHuffTableInts = (1 << kHuffLookBits) + 18 + 18 + 256;
/// Table slots: DC tables 0-3, AC tables 4-7 (the table numbers a scan names).
inline constexpr int kHuffSlots = 8;
/// Blocks of one MCU at most (the JPEG standard's limit, libjpeg's D_MAX_BLOCKS_IN_MCU).
inline constexpr int kMaxBlocksInMcu = 10;

/// One scan's entropy-coded data and what decoding it needs.
struct EntropyScan {
  int blocks_in_mcu = 0;  ///< 1 for a one-component scan, else the sum of h x v
  /// Per block of an MCU, in coding order: its component (0-2), its column and row among the
  /// component's blocks of the MCU, its DC and AC table slots.
  std::array<int, kMaxBlocksInMcu> block_component{}, block_dx{}, block_dy{}, block_dc{},
      block_ac{};
  std::array<int, 3> mcu_across{1, 1, 1}, mcu_down{1, 1, 1};  ///< a component's blocks an MCU
  int mcus_across = 0, mcus_down = 0;
  int restart_interval = 0;          ///< MCUs a restart segment; 0: none (one segment)
  std::vector<std::int32_t> tables;  ///< kHuffSlots x kHuffTableInts (unused slots zero)
  /// The unstuffed data: the segments back to back, each ending at its segment_end byte.
  std::vector<std::uint8_t> data;
  std::vector<std::uint32_t> segment_end;

  std::size_t total_mcus() const { return static_cast<std::size_t>(mcus_across) * mcus_down; }
};

/// Reads JPEG `bytes` (size bytes) as far as its scan: *planes gets decode_jpeg_blocks's layout
/// (decoder_sizes, planes->dct's block counts, offsets and quantisation tables; no
/// coefficients), *scan the data and tables above. False, for a file the device decoder does
/// not take, which decode_jpeg_blocks or the whole decoder then decode: what decode_jpeg_blocks
/// refuses, and progressive, more than one scan, a missing or invalid Huffman table, restart
/// markers out of order, anything but EOI after the scan, data that ends early, fill bytes
/// before a stuffed zero (FF FF 00), or a scan of 2^28 bytes or more. Exact only
/// for data libjpeg decodes without a warning; the kernel finds the rest (its status) and the
/// caller then decodes with libjpeg. Never throws but std::bad_alloc.
bool parse_entropy_scan(const std::uint8_t* bytes, std::size_t size, YCbCrPlanes* planes,
                        EntropyScan* scan);

}  // namespace blurtool
