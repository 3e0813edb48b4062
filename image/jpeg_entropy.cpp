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

// Unstuffs one scan's data from `p` (n bytes) onto the end of scan->data, one segment a restart
// interval (`segments` of them, RST0..7 in turn between them), up to the first other marker:
// returns that marker's code, *used the bytes up to and including it; -1 for what libjpeg would
// warn about or not decode as this scan (restart markers out of order or too many, too few,
// fill bytes before a stuffed zero, no marker) or for data of 2^28 bytes or more in all.
int unstuff(const std::uint8_t* p, std::size_t n, std::size_t segments, EntropyScan* scan,
            std::size_t* used) {
  std::vector<std::uint8_t>& out = scan->data;
  std::size_t o = out.size();
  out.resize(o + n);  // at most n bytes come out
  const std::size_t first = scan->segment_end.size();
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
      if (i - fill > 1) return -1;
      out[o++] = 0xFF;
      continue;
    }
    const std::size_t segment = scan->segment_end.size() - first;
    if (m >= 0xD0 && m <= 0xD7) {
      if (segment + 1 >= segments || m != 0xD0 + segment % 8) return -1;
      scan->segment_end.push_back(static_cast<std::uint32_t>(o));
      continue;
    }
    if (segment + 1 != segments) return -1;
    scan->segment_end.push_back(static_cast<std::uint32_t>(o));
    out.resize(o);
    *used = i;
    // Bit positions, with the decoder's lookahead and a subsequence's step past the end, in 32
    // bits.
    return o < (std::size_t{1} << 28) ? m : -1;
  }
  return -1;  // no marker after the data
}

// A big-endian 16-bit value.
unsigned be16(const std::uint8_t* p) {
  return static_cast<unsigned>(p[0]) << 8 | p[1];
}

// jdmarker.c's get_dht for the segment's `length` bytes after its length field into `tables`
// (DC 0-3, AC 4-7), `fresh` marking the slots it defines; false where libjpeg would refuse it.
bool read_dht(const std::uint8_t* p, std::size_t length, std::array<JHUFF_TBL, kHuffSlots>* tables,
              std::array<bool, kHuffSlots>* have, std::array<int, kHuffSlots>* derived) {
  while (length > 16) {
    const int index = p[0];
    JHUFF_TBL t{};
    std::size_t count = 0;
    for (int i = 1; i <= 16; ++i) count += t.bits[i] = p[i];
    p += 17;
    length -= 17;
    if (count > 256 || count > length) return false;
    std::copy(p, p + count, t.huffval);
    p += count;
    length -= count;
    const int slot = index & 0x10 ? index - 0x10 + 4 : index;
    if ((index & 0x10 ? index - 0x10 : index) > 3) return false;
    (*tables)[slot] = t;
    (*have)[slot] = true;
    (*derived)[slot] = -1;
  }
  return length == 0;
}

// A progressive file's scans from the first (whose header libjpeg has read into `in`) to EOI
// into *s, checked as jdphuff.c's start_pass_phuff_decoder checks each (anything it refuses or
// warns about is refused here); `layout` is block_layout's. False for a file the device decoder
// does not take (see parse_entropy_scan).
bool read_progressive_scans(const jpeg_decompress_struct& in, const YCbCrPlanes& layout,
                            EntropyScan* s) {
  const int components = layout.components == 1 ? 1 : 3;
  std::array<JHUFF_TBL, kHuffSlots> tables{};
  std::array<bool, kHuffSlots> have{};
  std::array<int, kHuffSlots> derived;
  derived.fill(-1);
  for (int slot = 0; slot < kHuffSlots; ++slot) {
    const JHUFF_TBL* t = slot < 4 ? in.dc_huff_tbl_ptrs[slot] : in.ac_huff_tbl_ptrs[slot - 4];
    if (t) {
      tables[slot] = *t;
      have[slot] = true;
    }
  }
  // Each component's coefficients' bits still to come (libjpeg's coef_bits: -1 none coded).
  int coef_bits[3][64];
  std::fill(&coef_bits[0][0], &coef_bits[0][0] + 3 * 64, -1);
  int restart = static_cast<int>(in.restart_interval);
  // The first scan's header as libjpeg read it, as (component id, tables) pairs.
  int ns = in.comps_in_scan;
  std::array<int, 4> scan_id{}, scan_tables{};
  for (int i = 0; i < ns && i < 4; ++i) {
    scan_id[i] = in.cur_comp_info[i]->component_id;
    scan_tables[i] = in.cur_comp_info[i]->dc_tbl_no << 4 | in.cur_comp_info[i]->ac_tbl_no;
  }
  int ss = in.Ss, se = in.Se, ah = in.Ah, al = in.Al;
  const std::uint8_t* p = in.src->next_input_byte;
  std::size_t n = in.src->bytes_in_buffer;
  for (;;) {
    if (s->scans.size() >= static_cast<std::size_t>(kMaxProgressiveScans) || ns < 1 || ns > 3)
      return false;
    ProgressiveScan sc;
    sc.components = ns;
    sc.ss = ss;
    sc.se = se;
    sc.ah = ah;
    sc.al = al;
    sc.restart_interval = restart;
    const bool dc = ss == 0;
    if ((dc ? se != 0 : ss > se || se > 63 || ns != 1) || (ah != 0 && al != ah - 1) || al > 13)
      return false;  // libjpeg: "Invalid progressive parameters"
    int blocks_in_mcu = 0;
    for (int i = 0; i < ns; ++i) {
      // jdmarker.c's get_sos matches the scan's i-th component among the frame's from the i-th
      // on (a scan lists its components in the frame's order): [Cb, Y] is an error there.
      int c = i;
      while (c < components && in.comp_info[c].component_id != scan_id[i]) ++c;
      if (c >= components) return false;
      for (int j = 0; j < i; ++j)
        if (sc.component[j] == c) return false;  // a component twice in a scan
      sc.component[i] = c;
      blocks_in_mcu += s->mcu_across[c] * s->mcu_down[c];
      if (!dc && coef_bits[c][0] < 0) return false;  // AC before DC: libjpeg warns
      for (int k = ss; k <= se; ++k) {
        if (ah != (coef_bits[c][k] < 0 ? 0 : coef_bits[c][k])) return false;  // warns too
        coef_bits[c][k] = al;
      }
      // The tables this scan's decoding derives (jdphuff.c): a DC first scan's DC tables, an
      // AC scan's AC table; a DC refinement scan reads single bits.
      const int dc_slot = scan_tables[i] >> 4, ac_slot = 4 + (scan_tables[i] & 15);
      const bool need_dc = dc && ah == 0;
      const int slot = need_dc ? dc_slot : dc ? -1 : ac_slot;
      if (slot < 0) continue;
      if ((need_dc ? dc_slot : ac_slot - 4) > 3 || !have[slot]) return false;
      if (derived[slot] < 0) {
        // Derived anew, and kept once where an earlier scan's table is the same (encoders
        // that make tables for each scan repeat some).
        const std::size_t at = s->tables.size();
        s->tables.resize(at + kHuffTableInts);
        if (!derive_table(tables[slot], slot < 4, s->tables.data() + at)) return false;
        derived[slot] = static_cast<int>(at / kHuffTableInts);
        for (std::size_t t = 0; t < at; t += kHuffTableInts)
          if (std::equal(s->tables.begin() + at, s->tables.end(), s->tables.begin() + t)) {
            s->tables.resize(at);
            derived[slot] = static_cast<int>(t / kHuffTableInts);
            break;
          }
        if (s->tables.size() > static_cast<std::size_t>(kMaxProgressiveTables) * kHuffTableInts)
          return false;
      }
      if (need_dc)
        sc.dc_table[i] = derived[slot];
      else
        sc.ac_table = derived[slot];
    }
    if (ns > 1 && blocks_in_mcu > kMaxBlocksInMcu) return false;
    const std::size_t units =
        ns > 1 ? s->total_mcus()
               : static_cast<std::size_t>(layout.dct.blocks_across[sc.component[0]]) *
                     layout.dct.blocks_down[sc.component[0]];
    sc.first_segment = s->segment_end.size();
    sc.segments = restart > 0 ? (units + restart - 1) / restart : 1;
    std::size_t used = 0;
    int m = unstuff(p, n, sc.segments, s, &used);
    if (m < 0) return false;
    s->scans.push_back(sc);
    p += used;
    n -= used;
    // The markers up to the next scan or the end (jdmarker.c's read_markers between scans).
    for (;;) {
      if (m == 0xD9) {  // EOI: every coefficient of every component complete
        for (int c = 0; c < components; ++c)
          for (int k = 0; k < 64; ++k)
            if (coef_bits[c][k] != 0) return false;
        return true;
      }
      if (n < 2) return false;
      const std::size_t length = be16(p);
      if (length < 2 || length > n) return false;
      if (m == 0xDA) break;
      if (m == 0xC4) {
        if (!read_dht(p + 2, length - 2, &tables, &have, &derived)) return false;
      } else if (m == 0xDD) {
        if (length != 4) return false;
        restart = static_cast<int>(be16(p + 2));
      } else if (!(m == 0xFE || (m >= 0xE1 && m <= 0xED) || m == 0xEF)) {
        // DQT, DAC, a second frame, DNL, ..., and APP0 and APP14, which libjpeg examines (and
        // may warn about, as of a JFIF version it does not know): libjpeg's whole decoder
        // decides.
        return false;
      }
      p += length;
      n -= length;
      // The next marker: fill bytes allowed, anything else is data libjpeg warns about.
      if (n < 2 || p[0] != 0xFF) return false;
      while (n > 0 && p[0] == 0xFF) {
        ++p;
        --n;
      }
      if (n == 0 || p[0] == 0) return false;
      m = p[0];
      ++p;
      --n;
    }
    // A scan header (jdmarker.c's get_sos).
    const std::size_t length = be16(p);
    if (length < 3) return false;
    ns = p[2];
    if (ns < 1 || ns > 4 || length != static_cast<std::size_t>(ns) * 2 + 6) return false;
    for (int i = 0; i < ns; ++i) {
      scan_id[i] = p[3 + 2 * i];
      scan_tables[i] = p[4 + 2 * i];
    }
    const std::uint8_t* tail = p + 3 + 2 * ns;
    ss = tail[0];
    se = tail[1];
    ah = tail[2] >> 4;
    al = tail[2] & 15;
    p += length;
    n -= length;
  }
}

// The MCUs across and down of an interleaved scan of `in` (jdinput.c's per_scan_setup): each MCU
// max_h_samp_factor x max_v_samp_factor blocks of 8x8 pixels, the last row and column partial.
void set_interleaved_grid(const jpeg_decompress_struct& in, EntropyScan* s) {
  const int mh = in.max_h_samp_factor * 8, mv = in.max_v_samp_factor * 8;
  s->mcus_across = static_cast<int>((in.image_width + mh - 1) / mh);
  s->mcus_down = static_cast<int>((in.image_height + mv - 1) / mv);
}

// A baseline file's one scan (whose header libjpeg has read into `in`) into s; `components`
// block_layout's. False for a file the device decoder does not take (see parse_entropy_scan).
bool read_baseline_scan(const jpeg_decompress_struct& in, int components, EntropyScan* scan) {
  EntropyScan& s = *scan;
  const bool grey = components == 1;
  bool ok = true;
  // The MCU: one block for a one-component scan (jdinput.c's per_scan_setup), else each
  // component's h x v blocks in the scan's order.
  if (grey) {
    s.blocks_in_mcu = 1;
    s.mcus_across = static_cast<int>(in.comp_info[0].width_in_blocks);
    s.mcus_down = static_cast<int>(in.comp_info[0].height_in_blocks);
  } else {
    set_interleaved_grid(in, &s);
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
  std::size_t used = 0;
  return ok && mcus > 0 && mcus * s.blocks_in_mcu < (1u << 30) &&
         unstuff(in.src->next_input_byte, in.src->bytes_in_buffer, segments, &s, &used) == 0xD9;
}

}  // namespace

bool parse_entropy_scan(const std::uint8_t* bytes, std::size_t size, YCbCrPlanes* planes,
                        EntropyScan* scan, bool progressive) {
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
  // component or (where asked) progressive, with no warning from libjpeg so far.
  bool ok = !in.arith_code && in.err->num_warnings == 0 &&
            (in.progressive_mode ? progressive
                                 : in.comps_in_scan == in.num_components && in.Ss == 0 &&
                                       in.Se == 63 && in.Ah == 0 && in.Al == 0);
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
    if (in.progressive_mode) {
      set_interleaved_grid(in, &s);
      for (int c = 0; c < components; ++c) {
        s.mcu_across[c] = grey ? 1 : in.comp_info[c].h_samp_factor;
        s.mcu_down[c] = grey ? 1 : in.comp_info[c].v_samp_factor;
      }
      ok = ok && s.total_mcus() * 6 < (1u << 30) && read_progressive_scans(in, layout, &s);
    } else {
      ok = ok && read_baseline_scan(in, components, &s);
    }
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
