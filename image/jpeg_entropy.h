// A Huffman-coded JPEG's entropy-coded data laid out for decoding on a device
// (kernels/jpeg_entropy.cl; filters/jpeg_entropy_device.h runs it): the headers are read by
// libjpeg (a progressive file's later scan headers and tables here), the Huffman tables derived
// as libjpeg's jdhuff.c derives them, and each scan's bytes unstuffed (0xFF 0x00 -> 0xFF) and
// split at its restart markers. The device then writes the quantised DCT blocks that
// decode_jpeg_blocks (jpeg_read_coefficients) gives, in the same layout, without the host's
// Huffman decoding.
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

/// Scans of a progressive file the device decoder takes at most (real files have about 10; each
/// scan is a pass over the image's blocks on the device).
inline constexpr int kMaxProgressiveScans = 64;
/// Distinct Huffman tables of a progressive file the device decoder takes at most (they live in
/// the work-group's local memory; an encoder that makes tables for each scan makes about 10).
inline constexpr int kMaxProgressiveTables = 16;

/// One scan of a progressive JPEG (ITU-T T.81, G.1.2): its components, its spectral band and
/// successive approximation bits, and its segments in EntropyScan::segment_end.
struct ProgressiveScan {
  int components = 0;              ///< in the scan: 1, or 2-3 for an interleaved DC scan
  std::array<int, 3> component{};  ///< the components (0-2), in the scan's order
  /// Per component of the scan, its DC table (an index into EntropyScan::tables; -1 for none,
  /// as a DC refinement scan needs none), and the scan's AC table (-1 for a DC scan).
  std::array<int, 3> dc_table{-1, -1, -1};
  int ac_table = -1;
  int ss = 0, se = 0, ah = 0, al = 0;  ///< band Ss..Se (zigzag), bits Ah -> Al
  int restart_interval = 0;  ///< MCUs (blocks, for one component) a segment; 0: one segment
  std::size_t first_segment = 0, segments = 0;
};

/// One file's entropy-coded data and what decoding it needs: a baseline file's one scan, or a
/// progressive file's scans (`scans` not empty).
struct EntropyScan {
  int blocks_in_mcu = 0;  ///< 1 for a one-component scan, else the sum of h x v
  /// Per block of an MCU, in coding order: its component (0-2), its column and row among the
  /// component's blocks of the MCU, its DC and AC table slots.
  std::array<int, kMaxBlocksInMcu> block_component{}, block_dx{}, block_dy{}, block_dc{},
      block_ac{};
  std::array<int, 3> mcu_across{1, 1, 1}, mcu_down{1, 1, 1};  ///< a component's blocks an MCU
  int mcus_across = 0, mcus_down = 0;
  int restart_interval = 0;  ///< MCUs a restart segment; 0: none (one segment)
  /// Baseline: kHuffSlots x kHuffTableInts (unused slots zero); progressive: the scans' tables,
  /// kHuffTableInts each.
  std::vector<std::int32_t> tables;
  /// The unstuffed data: the segments back to back (a progressive file's scans in turn), each
  /// ending at its segment_end byte.
  std::vector<std::uint8_t> data;
  std::vector<std::uint32_t> segment_end;
  /// A progressive file's scans, in the file's order (empty for a baseline file, whose scan the
  /// fields above describe). For these, mcus_across and mcus_down are the interleaved scans'
  /// MCUs and mcu_across / mcu_down each component's sampling factors.
  std::vector<ProgressiveScan> scans;

  bool progressive() const { return !scans.empty(); }
  std::size_t total_mcus() const { return static_cast<std::size_t>(mcus_across) * mcus_down; }
};

/// Reads JPEG `bytes` (size bytes) as far as its scan: *planes gets decode_jpeg_blocks's layout
/// (decoder_sizes, planes->dct's block counts, offsets and quantisation tables; no
/// coefficients), *scan the data and tables above. `progressive`: whether a progressive
/// Huffman file is taken (its scans, the tables and restart intervals defined between them).
/// False, for a file the device decoder does not take, which decode_jpeg_blocks or the whole
/// decoder then decode: what decode_jpeg_blocks refuses, arithmetic coding, a baseline file of
/// more than one scan, a scan header or a progression libjpeg refuses or warns about, a
/// progressive file that leaves some coefficient short of its last bit or has more than
/// kMaxProgressiveScans scans or kMaxProgressiveTables distinct tables, a missing or invalid
/// Huffman table, restart markers out of order, a marker between scans other than DHT, DRI, COM and
/// APPn (but APP0 and APP14, which libjpeg examines), data that ends early, fill bytes before a
/// stuffed zero (FF FF 00), or data of 2^28 bytes or more. Exact only for data libjpeg decodes
/// without a warning; the kernel finds the rest (its status) and the caller then decodes with
/// libjpeg. Never throws but std::bad_alloc.
bool parse_entropy_scan(const std::uint8_t* bytes, std::size_t size, YCbCrPlanes* planes,
                        EntropyScan* scan, bool progressive = false);

}  // namespace blurtool
