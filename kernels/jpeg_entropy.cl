// JPEG's entropy decoding on the device: a baseline scan's Huffman-coded data (one interleaved
// scan of every component, restart markers allowed) -> the quantised DCT blocks that
// jpeg_read_coefficients gives, in DctBlocks' layout (image/jpeg_planes.h), which dct_to_plane
// (kernels/ycbcr.cl) takes on. The host (image/jpeg_entropy.cpp) reads the headers with libjpeg,
// derives the Huffman tables as jdhuff.c does and removes the byte stuffing; see there for the
// layout of `meta`.
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

inline void fill(Reader* r, global const uchar* data, uint bytes) {
  while (r->nbits <= 56) {
    const uint b = r->pos < bytes ? data[r->pos] : 0u;
    r->buf |= (ulong)b << (56 - r->nbits);
    r->pos++;
    r->nbits += 8;
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
// EntropyDecoder::decode): per subsequence its start state, its exit
// state, its completed blocks and their exclusive prefix sum; per segment the bit after its
// last block; per block of the scan its DC difference.
kernel void entropy_decode(global const uchar* input, global const ulong* where,
                           global short* coef_all, global int* scratch_all, global int* status_all) {
  // Image get_group_id(0) of a batch: its packed input, coefficients and scratch from where.
  const size_t image = get_group_id(0);
  global const uchar* buffer = input + where[4 * image];
  global short* coef = coef_all + where[4 * image + 1];
  global int* scratch = scratch_all + where[4 * image + 2];
  global int* status = status_all + 4 * image;
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
