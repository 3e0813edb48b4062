// JPEG's entropy decoding on the device: a baseline scan's Huffman-coded data (one interleaved
// scan of every component, restart markers allowed) -> the quantised DCT blocks that
// jpeg_read_coefficients gives, in DctBlocks' layout (image/jpeg_planes.h), which dct_to_plane
// (kernels/ycbcr.cl) takes on. The host (image/jpeg_entropy.cpp) reads the headers with libjpeg,
// derives the Huffman tables as jdhuff.c does and removes the byte stuffing; see there for the
// layout of `meta`. A progressive file's scans take the second kernel, progressive_decode, at the
// end of this file.
//
// The method is self-synchronising parallel Huffman decoding (Weissenberger and Schmidt,
// "Massively parallel Huffman decoding on GPUs", ICPP 2018; for JPEG, "Accelerating JPEG
// decompression on GPUs", HiPC 2021): the data is cut into subsequences of a fixed number of
// bits; each is decoded from a guess of the decoder's state at its start (the bit position, the
// block of the MCU and the coefficient within the block), which is wrong in general, but a
// Huffman decoder started at a wrong position falls into step with the right one after a few
// codes; the state at which a subsequence's decoding leaves it is then the right start of the
// next. Passes repeat until every subsequence starts where its predecessor left off. A
// restart segment's first subsequence starts exactly (at the segment's first bit, block 0), so
// a file with restart markers every few MCUs needs no synchronisation at all.
//
// One work-group decodes one image; its WG work-items each take a run of consecutive
// subsequences (chained within the run, so only the runs' starts need passes). The decoder
// follows libjpeg-turbo's decode_mcu (jdhuff.c) symbol by symbol: a DC difference, then run /
// size AC symbols with ZRL and EOB, coefficients past 63 landing on 63 as libjpeg's
// jpeg_natural_order table puts them. Anything libjpeg would warn about (a bad Huffman code,
// data that runs out, data left over before the next marker) sets status[0] instead, and the
// caller decodes that image with libjpeg.

#ifndef WG
#define WG 256
#endif
#define LOOK_BITS 9
#define SLOT_INTS ((1 << LOOK_BITS) + 18 + 18 + 256)
#define SLOTS 8
#define SLOW_INTS (18 + 18 + 256)  // a table's maxcode, valoffset and huffval
#define MAX_BLOCKS 10
#define MAX_ITERATIONS 16
#define MIN_RUN_BITS 2048

// meta: the header's ints (H_*), then SLOTS tables of SLOT_INTS ints, then the segments (nseg x
// 2 uints: the byte after the segment's data, its first subsequence; an even count, padded),
// then the subsequences (nsub x 4 uints: first bit, end bit, segment,
// first-of-segment flag). The unstuffed data starts at byte data_offset of the same buffer.
#define H_BPM 0          // blocks in an MCU
#define H_MCUS_ACROSS 1
#define H_TOTAL_MCUS 2
#define H_RESTART 3      // MCUs a segment (the whole scan when there are no restarts)
#define H_NSEG 4
#define H_NSUB 5
#define H_DATA_BYTES 6
#define H_DATA_OFFSET 7  // bytes from the start of the buffer
#define H_ACROSS 8       // blocks across, 3 components
#define H_DOWN 11        // blocks down
#define H_BLOCK_OFF 14   // the component's first block in the coefficients
#define H_COMP 17        // per block of an MCU: its component
#define H_DX 27          //   its column in the component's MCU blocks
#define H_DY 37          //   its row
#define H_DC 47          //   its DC table slot (0-3)
#define H_AC 57          //   its AC table slot (4-7)
#define H_H 67           // the component's blocks across an MCU
#define H_V 70           // and down
#define H_SUB_BITS 73  // bits a subsequence
#define H_INTS 80

constant uchar natural_order[80] = {
    0,  1,  8,  16, 9,  2,  3,  10, 17, 24, 32, 25, 18, 11, 4,  5,  12, 19, 26, 33,
    40, 48, 41, 34, 27, 20, 13, 6,  7,  14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36,
    29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54,
    47, 55, 62, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 63};

// A decoder's state between symbols: the bit position in the data, and (b << 8 | k), the block
// of the MCU and the coefficient next to decode (0: the DC difference). ERROR_STATE: decoding
// hit a code no table has.
#define ERROR_STATE 0xffffffffu

typedef struct {
  ulong buf;  // the next bits, most significant first
  int nbits;  // valid bits in buf
  uint pos;   // the next byte to load
} Reader;

// Tops the reader up to at least 33 bits, four bytes a load (one load's latency, not four:
// a decoder's bits come one dependent step after another); bytes past `bytes` read as zeros.
inline void fill(Reader* r, global const uchar* data, uint bytes) {
  while (r->nbits <= 32) {
    uint w;
    if (r->pos + 4u <= bytes) {
      const uchar4 b = vload4(0, data + r->pos);
      w = (uint)b.x << 24 | (uint)b.y << 16 | (uint)b.z << 8 | (uint)b.w;
    } else {
      w = 0u;
      for (uint i = 0; i < 4u; ++i) w = w << 8 | (r->pos + i < bytes ? (uint)data[r->pos + i] : 0u);
    }
    r->buf |= (ulong)w << (32 - r->nbits);
    r->pos += 4u;
    r->nbits += 32;
  }
}

inline void start_at(Reader* r, global const uchar* data, uint bytes, uint bit) {
  r->buf = 0;
  r->nbits = 0;
  r->pos = bit >> 3;
  fill(r, data, bytes);
  r->buf <<= (bit & 7);
  r->nbits -= (int)(bit & 7);
}

inline uint bit_position(const Reader* r) { return r->pos * 8u - (uint)r->nbits; }

// jdhuff.c's HUFF_EXTEND: the s-bit value r as a signed difference.
inline int extend(uint r, int s) { return r < (1u << (s - 1)) ? (int)r - (1 << s) + 1 : (int)r; }

// Decodes one Huffman code of table `slot`: its symbol, or -1 for a code longer than 16 bits
// (libjpeg warns "Corrupt JPEG data: bad Huffman code"). Needs 16 valid bits in r.
inline int decode_symbol(Reader* r, local const ushort* look, local const int* slow, int slot) {
  const uint e = look[slot << LOOK_BITS | (uint)(r->buf >> (64 - LOOK_BITS))];
  if (e) {
    r->buf <<= (e >> 8);
    r->nbits -= (int)(e >> 8);
    return (int)(e & 255u);
  }
  local const int* maxcode = slow + slot * SLOW_INTS;
  local const int* valoffset = maxcode + 18;
  local const int* huffval = valoffset + 18;
  int l = LOOK_BITS + 1;
  int code = (int)(r->buf >> (64 - l));
  while (code > maxcode[l]) {
    ++l;
    if (l > 16) return -1;
    code = (int)(r->buf >> (64 - l));
  }
  r->buf <<= l;
  r->nbits -= l;
  return huffval[(code + valoffset[l]) & 255];
}

// The first coefficient of block b of MCU `mcu` in the coefficients, or -1 for a dummy block of
// a partial MCU (decoded for its DC difference, not stored).
inline long block_base(local const int* meta, uint mcu, int b) {
  const int c = meta[H_COMP + b];
  const uint across = (uint)meta[H_MCUS_ACROSS];
  const int bx = (int)(mcu % across) * meta[H_H + c] + meta[H_DX + b];
  const int by = (int)(mcu / across) * meta[H_V + c] + meta[H_DY + b];
  if (bx >= meta[H_ACROSS + c] || by >= meta[H_DOWN + c]) return -1;
  return ((long)meta[H_BLOCK_OFF + c] + (long)by * meta[H_ACROSS + c] + bx) * 64;
}

// Decodes from state (bit, bk) while the bit position is below `end`: the state it leaves at,
// and in *blocks the blocks it completed. With `coef`, also writes what it decodes: block
// `block` (the scan's block index of the block in progress at the start) onwards, up to
// `block_end` (then it stops, *end_bit the position after the last one), and returns
// ERROR_STATE in *error where a needed symbol is bad or runs past `data_end`.
inline uint2 decode_run(local const int* meta, local const ushort* look, local const int* slow,
                        global const uchar* data,
                        uint2 state, uint end, uint* blocks, global short* coef,
                        global short* dc_diff, uint block, uint block_end, uint data_end,
                        int* error, uint* end_bit) {
  const uint bytes = (uint)meta[H_DATA_BYTES];
  const int bpm = meta[H_BPM];
  Reader r;
  start_at(&r, data, bytes, state.x);
  int b = (int)(state.y >> 8), k = (int)(state.y & 255u);
  uint done = 0;
  // the block's first coefficient, -1 where the block is not stored; a block in progress at
  // the start began in the previous subsequence
  long base = coef && k > 0 ? block_base(meta, block / (uint)bpm, b) : -1;
  while (bit_position(&r) < end) {
    if (coef && block >= block_end) break;
    if (r.nbits < 32) fill(&r, data, bytes);
    if (k == 0) {
      const int s = decode_symbol(&r, look, slow, meta[H_DC + b]);
      if (s < 0) {
        if (coef) *error = 1;
        return (uint2)(ERROR_STATE, ERROR_STATE);
      }
      int diff = 0;
      if (s) {
        const uint bits = (uint)(r.buf >> (64 - s));
        r.buf <<= s;
        r.nbits -= s;
        diff = extend(bits, s);
      }
      if (coef) {
        dc_diff[block] = (short)diff;
        base = block_base(meta, block / (uint)bpm, b);
      }
      k = 1;
    } else {
      const int rs = decode_symbol(&r, look, slow, meta[H_AC + b]);
      if (rs < 0) {
        if (coef) *error = 1;
        return (uint2)(ERROR_STATE, ERROR_STATE);
      }
      const int run = rs >> 4, s = rs & 15;
      if (s) {
        k += run;
        const uint bits = (uint)(r.buf >> (64 - s));
        r.buf <<= s;
        r.nbits -= s;
        if (coef && base >= 0) coef[base + natural_order[k]] = (short)extend(bits, s);
        ++k;
      } else if (run == 15) {
        k += 16;
      } else {
        k = 64;
      }
    }
    if (coef && bit_position(&r) > data_end) {  // the symbol took bits past its segment
      *error = 1;
      return (uint2)(ERROR_STATE, ERROR_STATE);
    }
    if (k >= 64) {
      k = 0;
      ++done;
      if (++b == bpm) b = 0;
      if (coef && ++block == block_end) *end_bit = bit_position(&r);
    }
  }
  *blocks = done;
  return (uint2)(bit_position(&r), (uint)(b << 8 | k));
}

// The scratch of one image (from int where[4 * image + 2] of `scratch_all`, sized by
// EntropyDecoder::decode; its status from int 4 x where[4 * image + 3]): per subsequence its
// start state, its exit
// state, its completed blocks and their exclusive prefix sum; per segment the bit after its
// last block; per block of the scan its DC difference.
kernel void entropy_decode(global const uchar* input, global const ulong* where,
                           global short* coef_all, global int* scratch_all, global int* status_all) {
  // Image get_group_id(0) of a batch: its packed input, coefficients and scratch from where.
  const size_t image = get_group_id(0);
  global const uchar* buffer = input + where[4 * image];
  global short* coef = coef_all + where[4 * image + 1];
  global int* scratch = scratch_all + where[4 * image + 2];
  global int* status = status_all + 4 * where[4 * image + 3];
  global const int* header = (global const int*)buffer;
  global const uchar* data = buffer + header[H_DATA_OFFSET];
  const int nseg = header[H_NSEG], nsub = header[H_NSUB], bpm = header[H_BPM];
  const uint total_mcus = (uint)header[H_TOTAL_MCUS], restart = (uint)header[H_RESTART];
  global const uint2* segs = (global const uint2*)(header + H_INTS + SLOTS * SLOT_INTS);
  global const uint4* subs = (global const uint4*)(segs + ((nseg + 1) & ~1));  // 16-byte aligned
  global uint2* start = (global uint2*)scratch;
  global uint2* leave = start + nsub;
  global uint* count = (global uint*)(leave + nsub);
  global uint* prefix = count + nsub;
  global uint* seg_last = prefix + nsub;
  global short* dc_diff = (global short*)(seg_last + nseg);

  // The header and the tables in local memory: the decoder reads them at every symbol.
  local int meta[H_INTS];
  local ushort look[SLOTS << LOOK_BITS];
  local int slow[SLOTS * SLOW_INTS];
  local uint sums[WG];
  local uint tail[WG][3];
  local uchar reset[WG];
  local int changed, error;
  const int lid = get_local_id(0);
  for (int i = lid; i < H_INTS; i += WG) meta[i] = header[i];
  for (int i = lid; i < (SLOTS << LOOK_BITS); i += WG)
    look[i] = (ushort)header[H_INTS + (i >> LOOK_BITS) * SLOT_INTS + (i & ((1 << LOOK_BITS) - 1))];
  for (int i = lid; i < SLOTS * SLOW_INTS; i += WG)
    slow[i] = header[H_INTS + (i / SLOW_INTS) * SLOT_INTS + (1 << LOOK_BITS) + i % SLOW_INTS];
  if (lid == 0) {
    error = 0;
    changed = 0;
  }
  for (int s = lid; s < nseg; s += WG) seg_last[s] = ERROR_STATE;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

  // This work-item's run of subsequences.
  // Runs of at least MIN_RUN_BITS: a decoder started at a wrong state needs some codes to come
  // into step, and a run too short for that would pass its error on to the next.
  const int per = max((nsub + WG - 1) / WG, (MIN_RUN_BITS + meta[H_SUB_BITS] - 1) / meta[H_SUB_BITS]);
  const int first = min(lid * per, nsub), last = min(first + per, nsub);
  int unused_error = 0;
  uint unused_bit = 0;

  // Pass 1: each run decoded from its own start, a guess (the run's first bit, block 0,
  // coefficient 0) unless it starts a segment, each subsequence of it from the last's exit.
  for (int t = first; t < last; ++t) {
    const uint4 sub = subs[t];
    uint2 s0 = (uint2)(sub.x, 0u);
    if (t > first && !sub.w) s0 = leave[t - 1];
    start[t] = s0;
    uint blocks = 0;
    leave[t] = s0.x == ERROR_STATE
                  ? s0
                  : decode_run(meta, look, slow, data, s0, sub.y, &blocks, 0, 0, 0, 0, 0, &unused_error,
                               &unused_bit);
    count[t] = s0.x == ERROR_STATE ? 0 : blocks;
  }
  // Passes until each run starts where the one before left off. A run whose start changed
  // is decoded again until one of its subsequences leaves at the same state as before: the
  // rest of the run is then as it was.
  for (int pass = 0;; ++pass) {
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    uint2 from = (uint2)(0u, 0u);
    bool redo = false;
    if (first < last && !subs[first].w) {
      from = leave[first - 1];
      const uint2 s0 = start[first];
      // A run before that hit a bad code passes nothing on: that run's start was a guess, or
      // the data is damaged there (then pass 2 finds the mismatch). Passing the error on
      // would take one pass a run down the rest of the image.
      redo = from.x != ERROR_STATE && (from.x != s0.x || from.y != s0.y);
    }
    if (lid == 0) changed = 0;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (redo) {
      if (pass >= MAX_ITERATIONS) {
        error = 1;
        status[1] = 2;
      } else {
        changed = 1;
        for (int t = first; t < last; ++t) {
          if (t > first && subs[t].w) break;  // a segment's start is exact
          const uint2 s0 = t == first ? from : leave[t - 1];
          const uint2 before = leave[t];
          start[t] = s0;
          uint blocks = 0;
          const uint2 e = s0.x == ERROR_STATE
                              ? s0
                              : decode_run(meta, look, slow, data, s0, subs[t].y, &blocks, 0, 0, 0, 0,
                                           0, &unused_error, &unused_bit);
          leave[t] = e;
          count[t] = s0.x == ERROR_STATE ? 0 : blocks;
          if (e.x == before.x && e.y == before.y) break;
        }
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (!changed || error) {
      if (lid == 0) status[2] = pass + 1;
      break;
    }
  }
  if (error) {
    if (lid == 0) status[0] = 1;
    return;
  }

  // The exclusive prefix sum of the completed blocks over all subsequences.
  uint mine = 0;
  for (int t = first; t < last; ++t) mine += count[t];
  sums[lid] = mine;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 1; step < WG; step <<= 1) {
    const uint add = lid >= step ? sums[lid - step] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    sums[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  uint running = sums[lid] - mine;
  for (int t = first; t < last; ++t) {
    prefix[t] = running;
    running += count[t];
  }
  barrier(CLK_GLOBAL_MEM_FENCE);

  // Pass 2: decode again from the synchronised starts, writing the coefficients.
  int bad = 0;
  for (int t = first; t < last && !bad; ++t) {
    const uint4 sub = subs[t];
    const uint seg = sub.z;
    const uint in_seg = prefix[t] - prefix[segs[seg].y];
    const uint seg_mcus = seg + 1 < (uint)nseg ? restart : total_mcus - restart * seg;
    const uint seg_blocks = seg_mcus * (uint)bpm, seg_first = seg * restart * (uint)bpm;
    if (in_seg >= seg_blocks) continue;  // past the segment's last block: padding
    const uint2 s0 = start[t];
    bool in_step = true;  // within a run, each subsequence starts where the last left off
    if (t == first && !sub.w) {
      const uint2 before = leave[t - 1];
      in_step = before.x == s0.x && before.y == s0.y;
    }
    if (!in_step || s0.x == ERROR_STATE || (s0.y >> 8) != in_seg % (uint)bpm) {
      bad = 1;
      status[1] = 3;
      break;
    }
    uint blocks = 0, end_bit = ERROR_STATE;
    decode_run(meta, look, slow, data, s0, sub.y, &blocks, coef, dc_diff, seg_first + in_seg,
               seg_first + seg_blocks, segs[seg].x * 8u, &bad, &end_bit);
    if (bad) status[1] = 4;
    if (end_bit != ERROR_STATE) seg_last[seg] = end_bit;
  }
  if (bad) error = 1;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  // Each segment must have ended its last block within the last byte of its data: fewer
  // blocks, or whole bytes left over, are what libjpeg warns about.
  for (int s = lid; s < nseg; s += WG) {
    const uint begin = s > 0 ? segs[s - 1].x * 8u : 0u, end = segs[s].x * 8u;
    if (seg_last[s] == ERROR_STATE || seg_last[s] < begin || end - seg_last[s] >= 8u) {
      error = 1;
      status[1] = 5;
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (error) {
    if (lid == 0) status[0] = 1;
    return;
  }

  // The DC values: the differences summed per component in scan order, from 0 at each
  // segment's start (jdhuff.c's last_dc_val), over runs of MCUs, one a work-item.
  const uint mcu_per = (total_mcus + WG - 1) / WG;
  const uint m0 = min((uint)lid * mcu_per, total_mcus), m1 = min(m0 + mcu_per, total_mcus);
  uint acc[3] = {0u, 0u, 0u};
  uchar has_reset = 0;
  for (uint m = m0; m < m1; ++m) {
    if (m % restart == 0) {
      acc[0] = acc[1] = acc[2] = 0u;
      has_reset = 1;
    }
    for (int b = 0; b < bpm; ++b) acc[meta[H_COMP + b]] += (uint)(int)dc_diff[m * bpm + b];
  }
  tail[lid][0] = acc[0];
  tail[lid][1] = acc[1];
  tail[lid][2] = acc[2];
  reset[lid] = has_reset;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {  // the carry into each run, in order (WG x 3 additions)
    uint carry[3] = {0u, 0u, 0u};
    for (int i = 0; i < WG; ++i) {
      const uint next[3] = {reset[i] ? tail[i][0] : carry[0] + tail[i][0],
                            reset[i] ? tail[i][1] : carry[1] + tail[i][1],
                            reset[i] ? tail[i][2] : carry[2] + tail[i][2]};
      tail[i][0] = carry[0];
      tail[i][1] = carry[1];
      tail[i][2] = carry[2];
      carry[0] = next[0];
      carry[1] = next[1];
      carry[2] = next[2];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  acc[0] = tail[lid][0];
  acc[1] = tail[lid][1];
  acc[2] = tail[lid][2];
  for (uint m = m0; m < m1; ++m) {
    if (m % restart == 0) acc[0] = acc[1] = acc[2] = 0u;
    for (int b = 0; b < bpm; ++b) {
      const int c = meta[H_COMP + b];
      acc[c] += (uint)(int)dc_diff[m * bpm + b];
      const long base = block_base(meta, m, b);
      if (base >= 0) coef[base] = (short)acc[c];
    }
  }
  if (lid == 0) {
    status[0] = 0;
    status[1] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Progressive files (ITU-T T.81, G.1.2): a file's scans decoded in the file's order, as
// libjpeg-turbo's jdphuff.c decodes them (decode_mcu_DC_first, _AC_first, _DC_refine,
// _AC_refine), into the same blocks. An AC refinement scan's codes are read against the
// coefficients the scans before it left (a correction bit for each one already nonzero), so
// its decoding cannot start at a guessed position the way a first scan's can: each scan is
// decoded sequentially by one work-item. Scans of different components run at once: work-item
// LANE x c decodes the one-component scans of component c, and work-item 0 the interleaved DC
// scans, with the work-group waiting before and after those. A work-group an image.

#ifndef LANE
#define LANE 32  // work-items from one component's decoder to the next (one a warp on NVIDIA)
#endif
#define MAX_SCANS 64   // kMaxProgressiveScans
#define MAX_TABLES 16  // kMaxProgressiveTables (35 KiB of local memory)

// A progressive image's buffer (EntropyDecoder::pack): the header's ints (P_*), then the
// Huffman tables (SLOT_INTS each), the scans (S_INTS each) and the segments' end bytes, at the
// int offsets the header gives; the unstuffed data of every scan, back to back, from byte
// P_DATA_OFFSET.
#define P_KIND 0  // -1 (a baseline header's H_BPM, at the same place, is 1 or more)
#define P_NSCANS 1
#define P_MCUS_ACROSS 2  // an interleaved scan's MCUs across
#define P_MCUS_DOWN 3
#define P_DATA_BYTES 4
#define P_DATA_OFFSET 5
#define P_TABLES 6
#define P_SCANS 7
#define P_SEGS 8
#define P_ACROSS 9  // a component's blocks across (3)
#define P_DOWN 12
#define P_BLOCK_OFF 15
#define P_H 18  // a component's blocks across an interleaved scan's MCU
#define P_V 21
#define P_INTS 24
// A scan: its components (1-3) and their DC tables, its AC table, its band and bits, its
// restart interval (0: none) and its segments.
#define S_NS 0
#define S_COMP 1
#define S_DC 4
#define S_AC 7
#define S_SS 8
#define S_SE 9
#define S_AH 10
#define S_AL 11
#define S_RESTART 12
#define S_SEG 13
#define S_NSEG 14
#define S_INTS 16

// The next n bits (0-16) as a number; the reader holds at least n (refill first).
inline uint get_bits(Reader* r, int n) {
  if (n == 0) return 0u;
  const uint v = (uint)(r->buf >> (64 - n));
  r->buf <<= n;
  r->nbits -= n;
  return v;
}

// One correction bit of an AC refinement scan applied to coefficient *t (jdphuff.c): where the
// bit is 1 and the coefficient's bit al is not yet set, its magnitude grows by 1 << al.
inline void refine(Reader* r, global const uchar* data, uint bytes, global short* t, int p1,
                   int m1) {
  if (r->nbits < 32) fill(r, data, bytes);
  if (get_bits(r, 1) && ((int)*t & p1) == 0)
    *t = (short)((int)*t >= 0 ? (int)*t + p1 : (int)*t + m1);
}

// Decodes scan `j` of the image `meta` into `coef`, with the image's tables in `look` and `slow`
// (decode_symbol's, a slot a table): 0, or the reason the caller must leave the file to
// libjpeg: 4 a bad Huffman code, a refinement's new coefficient not of size 1 (both of which
// libjpeg warns about), a DC value past an int (libjpeg's error), a coefficient placed past the
// scan's band (which libjpeg writes outside
// the band without a warning: damaged data) or data used past its segment; 5 whole bytes of a
// segment left over.
int decode_progressive_scan(global const int* meta, int j, global const uchar* data,
                            global short* coef, local const ushort* look, local const int* slow) {
  const uint bytes = (uint)meta[P_DATA_BYTES];
  global const uint* seg_end = (global const uint*)(meta + meta[P_SEGS]);
  global const int* scans = meta + meta[P_SCANS];
  global const int* sc = scans + j * S_INTS;
  const int ns = sc[S_NS], ss = sc[S_SS], se = sc[S_SE], ah = sc[S_AH], al = sc[S_AL];
  const int c0 = sc[S_COMP];
  const uint across = (uint)meta[P_MCUS_ACROSS];
  // Units: an interleaved scan's MCUs, a one-component scan's blocks.
  const uint units = ns > 1 ? across * (uint)meta[P_MCUS_DOWN]
                            : (uint)meta[P_ACROSS + c0] * (uint)meta[P_DOWN + c0];
  const uint restart = sc[S_RESTART] > 0 ? (uint)sc[S_RESTART] : units;
  const int p1 = 1 << al, m1 = (int)(0xffffffffu << al);
  const int ac = sc[S_AC] >= 0 ? sc[S_AC] : 0;
  int seg = sc[S_SEG];
  uint end_bit = seg_end[seg] * 8u;
  Reader r;
  start_at(&r, data, bytes, seg > 0 ? seg_end[seg - 1] * 8u : 0u);
  uint eobrun = 0;
  uint pred[3] = {0u, 0u, 0u};  // a DC first scan's last DC value, per component of the scan
  for (uint u = 0; u < units; ++u) {
    if (u > 0 && u % restart == 0) {  // the next restart segment: decoding starts afresh
      if (end_bit - bit_position(&r) >= 8u) return 5;
      ++seg;
      const uint begin = end_bit;
      end_bit = seg_end[seg] * 8u;
      start_at(&r, data, bytes, begin);
      eobrun = 0;
      pred[0] = pred[1] = pred[2] = 0u;
    }
    if (ss == 0) {  // a DC scan: every block of the MCU
      for (int i = 0; i < ns; ++i) {
        const int c = sc[S_COMP + i];
        const int h = ns > 1 ? meta[P_H + c] : 1, v = ns > 1 ? meta[P_V + c] : 1;
        const uint across_c = (uint)meta[P_ACROSS + c];
        for (int y = 0; y < v; ++y)
          for (int x = 0; x < h; ++x) {
            uint bx, by;
            if (ns > 1) {
              bx = (u % across) * (uint)h + (uint)x;
              by = (u / across) * (uint)v + (uint)y;
            } else {
              bx = u % across_c;
              by = u / across_c;
            }
            // a partial MCU's dummy block is decoded, not stored
            const long base = bx < across_c && by < (uint)meta[P_DOWN + c]
                                  ? ((long)meta[P_BLOCK_OFF + c] + (long)by * across_c + bx) * 64
                                  : -1;
            if (r.nbits < 32) fill(&r, data, bytes);
            if (ah == 0) {
              const int s = decode_symbol(&r, look, slow, sc[S_DC + i]);
              if (s < 0) return 4;
              const int diff = s ? extend(get_bits(&r, s), s) : 0;
              // jdphuff.c stops where the DC value would overflow an int (JERR_BAD_DCT_COEF)
              const long sum = (long)(int)pred[i] + diff;
              if (sum > INT_MAX || sum < INT_MIN) return 4;
              pred[i] = (uint)(int)sum;
              if (base >= 0) coef[base] = (short)(int)(pred[i] << al);
            } else if (get_bits(&r, 1) && base >= 0) {
              coef[base] = (short)((int)coef[base] | p1);
            }
          }
      }
    } else {  // an AC scan: one block of one component
      global short* block = coef + ((long)meta[P_BLOCK_OFF + c0] + (long)u) * 64;
      int k = ss;
      if (ah == 0) {
        if (eobrun > 0) {
          --eobrun;
        } else {
          for (; k <= se; ++k) {
            if (r.nbits < 32) fill(&r, data, bytes);
            const int rs = decode_symbol(&r, look, slow, ac);
            if (rs < 0) return 4;
            int run = rs >> 4;
            const int s = rs & 15;
            if (s) {
              k += run;
              if (k > se) return 4;
              block[natural_order[k]] = (short)(int)((uint)extend(get_bits(&r, s), s) << al);
            } else if (run == 15) {
              k += 15;
            } else {
              eobrun = 1u << run;
              if (run) eobrun += get_bits(&r, run);
              --eobrun;
              break;
            }
          }
        }
      } else {
        if (eobrun == 0) {
          for (; k <= se; ++k) {
            if (r.nbits < 32) fill(&r, data, bytes);
            const int rs = decode_symbol(&r, look, slow, ac);
            if (rs < 0) return 4;
            int run = rs >> 4;
            const int s = rs & 15;
            int value = 0;
            if (s) {
              if (s != 1) return 4;  // libjpeg warns of a bad Huffman code
              value = get_bits(&r, 1) ? p1 : m1;
            } else if (run != 15) {
              eobrun = 1u << run;
              if (run) eobrun += get_bits(&r, run);
              break;  // the rest of the block as an end-of-band run's
            }
            // Past the coefficients already nonzero (a correction bit each) and `run` zero ones.
            do {
              global short* t = block + natural_order[k];
              if (*t != 0) {
                refine(&r, data, bytes, t, p1, m1);
              } else if (--run < 0) {
                break;  // the zero coefficient that becomes nonzero
              }
              ++k;
            } while (k <= se);
            if (value) {
              if (k > se) return 4;
              block[natural_order[k]] = (short)value;
            }
          }
        }
        if (eobrun > 0) {  // in an end-of-band run: correction bits for the nonzero ones only
          for (; k <= se; ++k) {
            global short* t = block + natural_order[k];
            if (*t != 0) refine(&r, data, bytes, t, p1, m1);
          }
          --eobrun;
        }
      }
    }
    if (bit_position(&r) > end_bit) return 4;  // libjpeg meets the marker: zeros, a warning
  }
  return end_bit - bit_position(&r) >= 8u ? 5 : 0;
}

// A batch of progressive images, a work-group of 3 x LANE work-items each: per image its buffer from byte where[4 * image] of `input`, its coefficients
// from short where[4 * image + 1] of `coef_all` (zeroed), its status from int
// 4 x where[4 * image + 3] of `status_all` (as entropy_decode's: [0] 0 done or 1 left to
// libjpeg, [1] why).
kernel void progressive_decode(global const uchar* input, global const ulong* where,
                               global short* coef_all, global int* status_all) {
  const size_t image = get_group_id(0);
  global const int* meta = (global const int*)(input + where[4 * image]);
  global short* coef = coef_all + where[4 * image + 1];
  global int* status = status_all + 4 * where[4 * image + 3];
  global const uchar* data = (global const uchar*)meta + meta[P_DATA_OFFSET];
  global const int* scans = meta + meta[P_SCANS];
  const int lid = get_local_id(0), nscans = min(meta[P_NSCANS], MAX_SCANS);
  // The tables in local memory (as entropy_decode keeps them): the decoders read them at every
  // symbol.
  local ushort look[MAX_TABLES << LOOK_BITS];
  local int slow[MAX_TABLES * SLOW_INTS];
  global const int* tables = meta + meta[P_TABLES];
  const int ntables = min((meta[P_SCANS] - meta[P_TABLES]) / SLOT_INTS, MAX_TABLES);
  for (int i = lid; i < (ntables << LOOK_BITS); i += get_local_size(0))
    look[i] = (ushort)tables[(i >> LOOK_BITS) * SLOT_INTS + (i & ((1 << LOOK_BITS) - 1))];
  for (int i = lid; i < ntables * SLOW_INTS; i += get_local_size(0))
    slow[i] = tables[(i / SLOW_INTS) * SLOT_INTS + (1 << LOOK_BITS) + i % SLOW_INTS];
  local int failed;
  if (lid == 0) failed = 0;
  const int role = lid % LANE == 0 ? lid / LANE : -1;  // the component it decodes
  int mine = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < nscans; ++i) {
    global const int* sc = scans + i * S_INTS;
    if (sc[S_NS] > 1) {  // an interleaved DC scan: every component's blocks, one decoder
      if (mine) atomic_max(&failed, mine);
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      if (lid == 0 && !failed) failed = decode_progressive_scan(meta, i, data, coef, look, slow);
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      mine = failed;
    } else if (role == sc[S_COMP] && !mine) {
      mine = decode_progressive_scan(meta, i, data, coef, look, slow);
    }
  }
  if (mine) atomic_max(&failed, mine);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    status[0] = failed ? 1 : 0;
    status[1] = failed;
    status[2] = 0;
  }
}
