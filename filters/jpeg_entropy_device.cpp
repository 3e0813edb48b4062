// JPEG's entropy decoding on a device (see jpeg_entropy_device.h and kernels/jpeg_entropy.cl).
#include "filters/jpeg_entropy_device.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "util/env.h"

namespace blurtool {

namespace {

// The kernel's header (H_* in kernels/jpeg_entropy.cl).
enum Header {
  kBpm = 0,
  kMcusAcross = 1,
  kTotalMcus = 2,
  kRestart = 3,
  kSegments = 4,
  kSubsequences = 5,
  kDataBytes = 6,
  kDataOffset = 7,
  kAcross = 8,
  kDown = 11,
  kBlockOffset = 14,
  kComponent = 17,
  kDx = 27,
  kDy = 37,
  kDc = 47,
  kAc = 57,
  kH = 67,
  kV = 70,
  kSubBits = 73,
  kHeaderInts = 80
};

// A progressive image's header (P_* in kernels/jpeg_entropy.cl) and a scan's ints (S_*).
enum ProgressiveHeader {
  kKind = 0,
  kScans = 1,
  kPMcusAcross = 2,
  kPMcusDown = 3,
  kPDataBytes = 4,
  kPDataOffset = 5,
  kPTables = 6,
  kPScans = 7,
  kPSegments = 8,
  kPAcross = 9,
  kPDown = 12,
  kPBlockOffset = 15,
  kPH = 18,
  kPV = 21,
  kPHeaderInts = 24
};
enum ScanInts {
  kSComponents = 0,
  kSComponent = 1,
  kSDc = 4,
  kSAc = 7,
  kSSs = 8,
  kSSe = 9,
  kSAh = 10,
  kSAl = 11,
  kSRestart = 12,
  kSFirstSegment = 13,
  kSSegments = 14,
  kScanInts = 16
};

// Whether a packed input is a progressive image's (its first int -1, where a baseline header
// has its blocks in an MCU).
bool is_progressive(const std::uint8_t* packed) {
  std::int32_t kind;
  std::memcpy(&kind, packed, sizeof kind);
  return kind < 0;
}

// A progressive file's scans packed as progressive_decode reads them (see pack).
PixelVector<std::uint8_t> pack_progressive(const EntropyScan& scan, const YCbCrPlanes& layout) {
  std::vector<std::int32_t> ints(kPHeaderInts, 0);
  ints[kKind] = -1;
  ints[kScans] = static_cast<std::int32_t>(scan.scans.size());
  ints[kPMcusAcross] = scan.mcus_across;
  ints[kPMcusDown] = scan.mcus_down;
  ints[kPDataBytes] = static_cast<std::int32_t>(scan.data.size());
  for (int c = 0; c < 3; ++c) {
    ints[kPAcross + c] = layout.dct.blocks_across[c];
    ints[kPDown + c] = layout.dct.blocks_down[c];
    ints[kPBlockOffset + c] = static_cast<std::int32_t>(layout.dct.offset[c] / 64);
    ints[kPH + c] = scan.mcu_across[c];
    ints[kPV + c] = scan.mcu_down[c];
  }
  ints[kPTables] = static_cast<std::int32_t>(ints.size());
  ints.insert(ints.end(), scan.tables.begin(), scan.tables.end());
  ints[kPScans] = static_cast<std::int32_t>(ints.size());
  for (const ProgressiveScan& sc : scan.scans) {
    std::int32_t v[kScanInts] = {};
    v[kSComponents] = sc.components;
    for (int i = 0; i < 3; ++i) {
      v[kSComponent + i] = sc.component[i];
      v[kSDc + i] = sc.dc_table[i];
    }
    v[kSAc] = sc.ac_table;
    v[kSSs] = sc.ss;
    v[kSSe] = sc.se;
    v[kSAh] = sc.ah;
    v[kSAl] = sc.al;
    v[kSRestart] = sc.restart_interval;
    v[kSFirstSegment] = static_cast<std::int32_t>(sc.first_segment);
    v[kSSegments] = static_cast<std::int32_t>(sc.segments);
    ints.insert(ints.end(), v, v + kScanInts);
  }
  ints[kPSegments] = static_cast<std::int32_t>(ints.size());
  for (const std::uint32_t end : scan.segment_end) ints.push_back(static_cast<std::int32_t>(end));
  const std::size_t data_offset = (ints.size() * 4 + 15) / 16 * 16;
  ints[kPDataOffset] = static_cast<std::int32_t>(data_offset);
  PixelVector<std::uint8_t> out(data_offset + (scan.data.size() + 8 + 15) / 16 * 16, 0);
  std::memcpy(out.data(), ints.data(), ints.size() * 4);
  std::memcpy(out.data() + data_offset, scan.data.data(), scan.data.size());
  return out;
}

// A power of two in [1, at_most] from the environment variable `name`, else `fallback`.
int env_power_of_two(const char* name, int fallback, int at_most) {
  const int v = env_int(name, 1, at_most, fallback);
  return v & (v - 1) ? fallback : v;
}

}  // namespace

EntropyDecoder::EntropyDecoder(Runtime& runtime) : runtime_(runtime) {
  const int limit = static_cast<int>(std::min<std::size_t>(runtime.device().max_work_group, 1024));
  int wg = 256;
  while (wg > limit) wg /= 2;
  wg = env_power_of_two("BLURTOOL_ENTROPY_WG", wg, limit);
  for (;;) {
    kernel_ = runtime.kernel("jpeg_entropy", "entropy_decode", "-DWG=" + std::to_string(wg));
    const std::size_t allowed =
        kernel_.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(runtime.device().device);
    if (static_cast<std::size_t>(wg) <= allowed || wg == 1) break;
    wg /= 2;  // the kernel's registers allow fewer work-items on this device
  }
  wg_ = wg;
}

PixelVector<std::uint8_t> EntropyDecoder::pack(const EntropyScan& scan, const YCbCrPlanes& layout,
                                               int subsequence_bits) {
  if (scan.progressive()) return pack_progressive(scan, layout);
  if (subsequence_bits <= 0)
    subsequence_bits = 32 * env_power_of_two("BLURTOOL_ENTROPY_SUB_WORDS", 32, 1 << 16);
  const std::uint32_t step = static_cast<std::uint32_t>(subsequence_bits);
  const std::size_t segments = scan.segment_end.size();
  std::vector<std::uint32_t> segs(2 * ((segments + 1) / 2 * 2)), subs;  // 16-byte aligned after
  std::uint64_t begin = 0;  // bit positions: the scan is under 2^28 bytes (parse_entropy_scan)
  for (std::size_t s = 0; s < segments; ++s) {
    const std::uint64_t end = std::uint64_t{scan.segment_end[s]} * 8u;
    segs[2 * s] = scan.segment_end[s];
    segs[2 * s + 1] = static_cast<std::uint32_t>(subs.size() / 4);
    std::uint64_t at = begin;
    do {
      subs.insert(subs.end(), {static_cast<std::uint32_t>(at),
                               static_cast<std::uint32_t>(std::min(end, at + step)),
                               static_cast<std::uint32_t>(s), at == begin ? 1u : 0u});
      at += step;
    } while (at < end);
    begin = end;
  }
  std::int32_t header[kHeaderInts] = {};
  header[kBpm] = scan.blocks_in_mcu;
  header[kMcusAcross] = scan.mcus_across;
  header[kTotalMcus] = static_cast<std::int32_t>(scan.total_mcus());
  header[kRestart] = scan.restart_interval > 0 ? scan.restart_interval
                                               : static_cast<std::int32_t>(scan.total_mcus());
  header[kSegments] = static_cast<std::int32_t>(segments);
  header[kSubsequences] = static_cast<std::int32_t>(subs.size() / 4);
  header[kDataBytes] = static_cast<std::int32_t>(scan.data.size());
  header[kSubBits] = subsequence_bits;
  for (int c = 0; c < 3; ++c) {
    header[kAcross + c] = layout.dct.blocks_across[c];
    header[kDown + c] = layout.dct.blocks_down[c];
    header[kBlockOffset + c] = static_cast<std::int32_t>(layout.dct.offset[c] / 64);
    header[kH + c] = scan.mcu_across[c];
    header[kV + c] = scan.mcu_down[c];
  }
  for (int b = 0; b < kMaxBlocksInMcu; ++b) {
    header[kComponent + b] = scan.block_component[b];
    header[kDx + b] = scan.block_dx[b];
    header[kDy + b] = scan.block_dy[b];
    header[kDc + b] = scan.block_dc[b];
    header[kAc + b] = scan.block_ac[b];
  }
  const std::size_t ints = kHeaderInts + scan.tables.size() + segs.size() + subs.size();
  const std::size_t data_offset = (ints * 4 + 15) / 16 * 16;
  header[kDataOffset] = static_cast<std::int32_t>(data_offset);
  PixelVector<std::uint8_t> out(data_offset + (scan.data.size() + 8 + 15) / 16 * 16, 0);
  std::uint8_t* at = out.data();
  const auto put = [&at](const void* from, std::size_t n) {
    std::memcpy(at, from, n);
    at += n;
  };
  put(header, sizeof header);
  put(scan.tables.data(), scan.tables.size() * 4);
  put(segs.data(), segs.size() * 4);
  put(subs.data(), subs.size() * 4);
  std::memcpy(out.data() + data_offset, scan.data.data(), scan.data.size());
  return out;
}

std::size_t EntropyDecoder::coefficients(const YCbCrPlanes& layout) {
  return layout.dct.layout_blocks() * 64;
}

bool EntropyDecoder::progressive_ready() {
  if (progressive_() || progressive_failed_) return !progressive_failed_;
  // Built when first needed (progressive files reach it only where forced): a program a GPU
  // batch would otherwise compile at every first run. A progressive image's decoders (a
  // component each) one a warp apart on a GPU, where they diverge; side by side on a CPU.
  try {
    lane_ = runtime_.device().type & CL_DEVICE_TYPE_GPU ? 32 : 1;
    cl::Kernel k =
        runtime_.kernel("jpeg_entropy", "progressive_decode", "-DLANE=" + std::to_string(lane_));
    const cl::Device& device = runtime_.device().device;
    // Its tables take 35 KiB of local memory, more than OpenCL's least (32 KiB).
    if (k.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(device) >
            device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>() ||
        k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device) <
            3 * static_cast<std::size_t>(lane_)) {
      progressive_failed_ = true;
      return false;
    }
    progressive_ = k;
    return true;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (...) {  // a failed build: not tried again; the files go to libjpeg
    progressive_failed_ = true;
    return false;
  }
}

std::vector<cl::Event> EntropyDecoder::decode(const std::vector<Item>& items,
                                              const cl::Buffer& coef, std::int32_t* statuses,
                                              std::vector<cl::Event>* uploads) {
  // Per image of each kernel (baseline images for entropy_decode, progressive ones for
  // progressive_decode): its input's byte offset, its coefficients' offset (shorts), its
  // scratch's offset (ints: start and exit states, 2 ints each, counts and prefix sums a
  // subsequence; a segment's last bit; a DC difference a block, in shorts), its status's index.
  where_of_.clear();
  std::vector<cl_ulong> progressive_where;
  std::size_t in_bytes = 0, scratch_ints = 0, coef_begin = SIZE_MAX, coef_end = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (is_progressive(items[i].packed)) {
      progressive_where.insert(progressive_where.end(), {in_bytes, items[i].coef_offset, 0, i});
    } else {
      std::int32_t header[kHeaderInts];
      std::memcpy(header, items[i].packed, sizeof header);
      const std::size_t subs = static_cast<std::size_t>(header[kSubsequences]),
                        segments = static_cast<std::size_t>(header[kSegments]),
                        blocks = static_cast<std::size_t>(header[kTotalMcus]) * header[kBpm];
      where_of_.insert(where_of_.end(), {in_bytes, items[i].coef_offset, scratch_ints, i});
      scratch_ints += (6 * subs + segments + (blocks + 1) / 2 + 3) / 4 * 4;
    }
    in_bytes += (items[i].bytes + 15) / 16 * 16;
    coef_begin = std::min(coef_begin, items[i].coef_offset);
    coef_end = std::max(coef_end, items[i].coef_offset + coefficients(*items[i].layout));
  }
  const std::size_t baseline = where_of_.size() / 4;
  cl::Context& context = runtime_.context();
  cl::CommandQueue& queue = runtime_.queue();
  const auto ensure = [&context](cl::Buffer* b, std::size_t* have, std::size_t need,
                                 cl_mem_flags flags) {
    if (need > *have) {
      *b = cl::Buffer(context, flags, need);
      *have = need;
    }
  };
  ensure(&input_, &input_bytes_, std::max<std::size_t>(in_bytes, 16), CL_MEM_READ_ONLY);
  ensure(&where_, &where_bytes_, std::max<std::size_t>(where_of_.size(), 4) * sizeof(cl_ulong),
         CL_MEM_READ_ONLY);
  ensure(&progressive_where_, &progressive_where_bytes_,
         std::max<std::size_t>(progressive_where.size(), 4) * sizeof(cl_ulong), CL_MEM_READ_ONLY);
  ensure(&scratch_, &scratch_bytes_, std::max<std::size_t>(scratch_ints, 4) * 4, CL_MEM_READ_WRITE);
  ensure(&status_, &status_bytes_, std::max<std::size_t>(items.size(), 1) * 16, CL_MEM_READ_WRITE);
  // Each input straight from the caller's memory (pinned, in a batch), without a copy here.
  for (std::size_t i = 0, at = 0; i < items.size(); ++i) {
    cl::Event up;
    queue.enqueueWriteBuffer(input_, CL_FALSE, at, items[i].bytes, items[i].packed, nullptr,
                             uploads ? &up : nullptr);
    if (uploads) uploads->push_back(up);
    at += (items[i].bytes + 15) / 16 * 16;
  }
  std::vector<cl::Event> kernels;
  if (items.empty()) return kernels;
  // Blocking: where_of_ is reused by the next call, progressive_where is gone after it.
  if (baseline > 0)
    queue.enqueueWriteBuffer(where_, CL_TRUE, 0, where_of_.size() * sizeof(cl_ulong),
                             where_of_.data());
  if (!progressive_where.empty())
    queue.enqueueWriteBuffer(progressive_where_, CL_TRUE, 0,
                             progressive_where.size() * sizeof(cl_ulong), progressive_where.data());
  if (coef_end > coef_begin)  // the images' coefficients, from the first to the last
    queue.enqueueFillBuffer(coef, static_cast<cl_short>(0), coef_begin * 2,
                            (coef_end - coef_begin) * 2);
  queue.enqueueFillBuffer(status_, static_cast<cl_int>(1), 0, items.size() * 16);  // until done
  if (baseline > 0) {
    kernel_.setArg(0, input_);
    kernel_.setArg(1, where_);
    kernel_.setArg(2, coef);
    kernel_.setArg(3, scratch_);
    kernel_.setArg(4, status_);
    kernels.emplace_back();
    queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(wg_ * baseline),
                               cl::NDRange(wg_), nullptr, &kernels.back());
  }
  if (baseline < items.size() && progressive_ready()) {
    const std::size_t n = items.size() - baseline, group = 3 * static_cast<std::size_t>(lane_);
    progressive_.setArg(0, input_);
    progressive_.setArg(1, progressive_where_);
    progressive_.setArg(2, coef);
    progressive_.setArg(3, status_);
    kernels.emplace_back();
    queue.enqueueNDRangeKernel(progressive_, cl::NullRange, cl::NDRange(group * n),
                               cl::NDRange(group), nullptr, &kernels.back());
  }
  queue.enqueueReadBuffer(status_, CL_FALSE, 0, items.size() * 16, statuses);
  return kernels;
}

}  // namespace blurtool
