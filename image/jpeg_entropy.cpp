// A baseline JPEG's scan laid out for the device's Huffman decoder (see jpeg_entropy.h).
#include "image/jpeg_entropy.h"

#include <algorithm>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

#include "image/jpeg_block_arrays.h"

namespace blurtool {

namespace {

struct HeaderReader {
  jpeg_decompress_struct info;
  jpeg_error_mgr errors;
  std::jmp_buf back;
};

void jump_on_error(j_common_ptr info) {
  std::longjmp(
      reinterpret_cast<HeaderReader*>(reinterpret_cast<char*>(info) - offsetof(HeaderReader, info))
          ->back,
      1);
}

void keep_quiet(j_common_ptr) {}

// jdhuff.c's jpeg_make_d_derived_tbl for `table` into `out` (kHuffTableInts ints, in the
// layout jpeg_entropy.h gives); false where libjpeg would refuse the table (JERR_BAD_HUFF_TABLE).
bool derive_table(const JHUFF_TBL& table, bool dc, std::int32_t* out) {
  int huffsize[257];
  unsigned huffcode[257];
  int p = 0;
  for (int l = 1; l <= 16; ++l) {
    const int n = table.bits[l];
    if (p + n > 256) return false;
    for (int i = 0; i < n; ++i) huffsize[p++] = l;
  }
  huffsize[p] = 0;
  const int symbols = p;
  unsigned code = 0;
  int si = huffsize[0];
  p = 0;
  while (huffsize[p]) {
    while (huffsize[p] == si) {
      huffcode[p++] = code;
      ++code;
    }
    if (code >= (1u << si)) return false;  // the code lengths do not make a prefix code
    code <<= 1;
    ++si;
  }
  std::int32_t* look = out;
  std::int32_t* maxcode = look + (1 << kHuffLookBits);
  std::int32_t* valoffset = maxcode + 18;
  std::int32_t* huffval = valoffset + 18;
  std::fill(out, out + kHuffTableInts, 0);
  p = 0;
  for (int l = 1; l <= 16; ++l) {
    if (table.bits[l]) {
      valoffset[l] = p - static_cast<std::int32_t>(huffcode[p]);
      p += table.bits[l];
      maxcode[l] = static_cast<std::int32_t>(huffcode[p - 1]);
    } else {
      maxcode[l] = -1;
    }
  }
  valoffset[17] = 0;
  maxcode[17] = 0xFFFFF;
  for (int i = 0; i < 256; ++i) huffval[i] = table.huffval[i];
  p = 0;
  for (int l = 1; l <= kHuffLookBits; ++l)
    for (int i = 1; i <= table.bits[l]; ++i, ++p) {
      const unsigned first = huffcode[p] << (kHuffLookBits - l);
      for (unsigned c = 0; c < (1u << (kHuffLookBits - l)); ++c)
        look[first + c] = l << 8 | table.huffval[p];
    }
  if (dc)
    for (int i = 0; i < symbols; ++i)
      if (table.huffval[i] > 15) return false;
  return true;
}

// Unstuffs the scan's data from `p` (n bytes) into scan->data, one segment a restart interval
// (`segments` of them, RST0..7 in turn between them), up to the EOI marker; false for anything
// else (libjpeg would warn, or decode more than this scan).
bool unstuff(const std::uint8_t* p, std::size_t n, std::size_t segments, EntropyScan* scan) {
  std::vector<std::uint8_t>& out = scan->data;
  out.resize(n);  // at most n bytes come out
  std::size_t o = 0;
  scan->segment_end.clear();
  std::size_t i = 0;
  while (i < n) {
    // Copied up to the next 0xFF in one go: most of the data is plain bytes.
    const void* ff = std::memchr(p + i, 0xFF, n - i);
    const std::size_t run = ff ? static_cast<const std::uint8_t*>(ff) - (p + i) : n - i;
    std::memcpy(out.data() + o, p + i, run);
    o += run;
    i += run;
    if (!ff) break;
    ++i;
    const std::size_t fill = i;
    while (i < n && p[i] == 0xFF) ++i;  // fill bytes
    if (i >= n) break;
    const std::uint8_t m = p[i++];
    if (m == 0) {
      // FF FF .. 00: libjpeg-turbo's fast Huffman decoder (decode_mcu_fast) takes the fill
      // bytes for a marker and leaves stray coefficients behind, without a warning; such a
      // file is left to libjpeg, whose blocks it then is.
      if (i - fill > 1) return false;
      out[o++] = 0xFF;
      continue;
    }
    const std::size_t segment = scan->segment_end.size();
    if (m >= 0xD0 && m <= 0xD7) {
      if (segment + 1 >= segments || m != 0xD0 + segment % 8) return false;
      scan->segment_end.push_back(static_cast<std::uint32_t>(o));
      continue;
    }
    if (m != 0xD9 || segment + 1 != segments) return false;  // EOI after the last segment
    scan->segment_end.push_back(static_cast<std::uint32_t>(o));
    out.resize(o);
    // Bit positions, with the decoder's lookahead and a subsequence's step past the end, in 32
    // bits.
    return o < (std::size_t{1} << 28);
  }
  return false;  // no EOI
}

}  // namespace

bool parse_entropy_scan(const std::uint8_t* bytes, std::size_t size, YCbCrPlanes* planes,
                        EntropyScan* scan) {
  HeaderReader r;
  r.info.err = jpeg_std_error(&r.errors);
  r.errors.error_exit = jump_on_error;
  r.errors.output_message = keep_quiet;
  if (setjmp(r.back)) {
    jpeg_destroy_decompress(&r.info);
    return false;
  }
  jpeg_create_decompress(&r.info);
  jpeg_decompress_struct& in = r.info;
  jpeg_mem_src(&in, bytes, static_cast<unsigned long>(size));
  jpeg_read_header(&in, TRUE);
  // What decode_jpeg_blocks takes (block_layout), Huffman-coded in one sequential scan of every
  // component, with no warning from libjpeg so far.
  bool ok = !in.progressive_mode && !in.arith_code && in.comps_in_scan == in.num_components &&
            in.Ss == 0 && in.Se == 63 && in.Ah == 0 && in.Al == 0 && in.err->num_warnings == 0;
  YCbCrPlanes layout;
  EntropyScan s;
  try {
    ok = ok && block_layout(in, &layout) > 0;
    if (!ok) {
      jpeg_destroy_decompress(&in);
      return false;
    }
    const bool grey = layout.components == 1;
    const int components = layout.components;
    DctBlocks& dct = layout.dct;
    for (int i = 0; i < components; ++i) {
      const jpeg_component_info& c = in.comp_info[i];
      const JQUANT_TBL* q = c.quant_tbl_no >= 0 && c.quant_tbl_no < NUM_QUANT_TBLS
                                ? in.quant_tbl_ptrs[c.quant_tbl_no]
                                : nullptr;
      if (!q)
        ok = false;
      else
        std::copy(q->quantval, q->quantval + 64, dct.quant[i].begin());
    }
    // The MCU: one block for a one-component scan (jdinput.c's per_scan_setup), else each
    // component's h x v blocks in the scan's order.
    if (grey) {
      s.blocks_in_mcu = 1;
      s.mcus_across = static_cast<int>(in.comp_info[0].width_in_blocks);
      s.mcus_down = static_cast<int>(in.comp_info[0].height_in_blocks);
    } else {
      const int mh = in.max_h_samp_factor * 8, mv = in.max_v_samp_factor * 8;
      s.mcus_across = static_cast<int>((in.image_width + mh - 1) / mh);
      s.mcus_down = static_cast<int>((in.image_height + mv - 1) / mv);
    }
    s.tables.assign(static_cast<std::size_t>(kHuffSlots) * kHuffTableInts, 0);
    bool derived[kHuffSlots] = {};
    int n = 0;
    for (int i = 0; i < in.comps_in_scan && ok; ++i) {
      const jpeg_component_info* c = in.cur_comp_info[i];
      const int ci = c->component_index, h = grey ? 1 : c->h_samp_factor,
                v = grey ? 1 : c->v_samp_factor;
      if (ci < 0 || ci >= components || c->dc_tbl_no < 0 || c->dc_tbl_no > 3 || c->ac_tbl_no < 0 ||
          c->ac_tbl_no > 3) {
        ok = false;
        break;
      }
      s.mcu_across[ci] = h;
      s.mcu_down[ci] = v;
      const int dc = c->dc_tbl_no, ac = 4 + c->ac_tbl_no;
      for (const int slot : {dc, ac}) {
        if (derived[slot]) continue;
        const JHUFF_TBL* t = slot < 4 ? in.dc_huff_tbl_ptrs[slot] : in.ac_huff_tbl_ptrs[slot - 4];
        if (!t || !derive_table(*t, slot < 4, s.tables.data() + slot * kHuffTableInts)) {
          ok = false;
          break;
        }
        derived[slot] = true;
      }
      for (int y = 0; y < v && ok; ++y)
        for (int x = 0; x < h; ++x) {
          if (n >= kMaxBlocksInMcu) {
            ok = false;
            break;
          }
          s.block_component[n] = ci;
          s.block_dx[n] = x;
          s.block_dy[n] = y;
          s.block_dc[n] = dc;
          s.block_ac[n] = ac;
          ++n;
        }
    }
    if (!grey) s.blocks_in_mcu = n;
    s.restart_interval = static_cast<int>(in.restart_interval);
    const std::size_t mcus = s.total_mcus();
    const std::size_t segments =
        s.restart_interval > 0 ? (mcus + s.restart_interval - 1) / s.restart_interval : 1;
    ok = ok && mcus > 0 && mcus * s.blocks_in_mcu < (1u << 30) &&
         unstuff(in.src->next_input_byte, in.src->bytes_in_buffer, segments, &s);
  } catch (const std::bad_alloc&) {
    jpeg_destroy_decompress(&in);
    throw;
  } catch (...) {  // blurtool::Error from decoder_sizes: a size libjpeg took, blurtool does not
    jpeg_destroy_decompress(&in);
    return false;
  }
  jpeg_destroy_decompress(&in);
  if (!ok) return false;
  *planes = std::move(layout);
  *scan = std::move(s);
  return true;
}

}  // namespace blurtool
