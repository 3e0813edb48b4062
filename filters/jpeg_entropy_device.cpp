// JPEG's entropy decoding on a device (see jpeg_entropy_device.h and kernels/jpeg_entropy.cl).
#include "filters/jpeg_entropy_device.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

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

// A positive power of two from the environment variable `name`, else `fallback`.
int env_power_of_two(const char* name, int fallback, int at_most) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end || v < 1 || v > at_most || (v & (v - 1))) return fallback;
  return static_cast<int>(v);
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

cl::Event EntropyDecoder::decode(const std::vector<Item>& items, const cl::Buffer& coef,
                                 std::int32_t* statuses, std::vector<cl::Event>* uploads) {
  // Per image: its input's byte offset, its coefficients' offset (shorts), its scratch's
  // offset (ints): start and exit states (2 ints each), counts and prefix sums a subsequence;
  // a segment's last bit; a DC difference a block (shorts).
  where_of_.assign(4 * items.size(), 0);
  std::size_t in_bytes = 0, scratch_ints = 0, coef_begin = SIZE_MAX, coef_end = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::int32_t header[kHeaderInts];
    std::memcpy(header, items[i].packed, sizeof header);
    const std::size_t subs = static_cast<std::size_t>(header[kSubsequences]),
                      segments = static_cast<std::size_t>(header[kSegments]),
                      blocks = static_cast<std::size_t>(header[kTotalMcus]) * header[kBpm];
    where_of_[4 * i] = in_bytes;
    where_of_[4 * i + 1] = items[i].coef_offset;
    where_of_[4 * i + 2] = scratch_ints;
    in_bytes += (items[i].bytes + 15) / 16 * 16;
    scratch_ints += (6 * subs + segments + (blocks + 1) / 2 + 3) / 4 * 4;
    coef_begin = std::min(coef_begin, items[i].coef_offset);
    coef_end = std::max(coef_end, items[i].coef_offset + coefficients(*items[i].layout));
  }
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
  ensure(&where_, &where_bytes_, where_of_.size() * sizeof(cl_ulong), CL_MEM_READ_ONLY);
  ensure(&scratch_, &scratch_bytes_, std::max<std::size_t>(scratch_ints, 4) * 4, CL_MEM_READ_WRITE);
  ensure(&status_, &status_bytes_, items.size() * 16, CL_MEM_READ_WRITE);
  // Each input straight from the caller's memory (pinned, in a batch), without a copy here.
  for (std::size_t i = 0; i < items.size(); ++i) {
    cl::Event up;
    queue.enqueueWriteBuffer(input_, CL_FALSE, where_of_[4 * i], items[i].bytes, items[i].packed,
                             nullptr, uploads ? &up : nullptr);
    if (uploads) uploads->push_back(up);
  }
  // Blocking: where_of_ is reused by the next call.
  queue.enqueueWriteBuffer(where_, CL_TRUE, 0, where_of_.size() * sizeof(cl_ulong),
                           where_of_.data());
  if (coef_end > coef_begin)  // the images' coefficients, from the first to the last
    queue.enqueueFillBuffer(coef, static_cast<cl_short>(0), coef_begin * 2,
                            (coef_end - coef_begin) * 2);
  queue.enqueueFillBuffer(status_, static_cast<cl_int>(1), 0, items.size() * 16);  // until done
  kernel_.setArg(0, input_);
  kernel_.setArg(1, where_);
  kernel_.setArg(2, coef);
  kernel_.setArg(3, scratch_);
  kernel_.setArg(4, status_);
  cl::Event event;
  queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(wg_ * items.size()),
                             cl::NDRange(wg_), nullptr, &event);
  queue.enqueueReadBuffer(status_, CL_FALSE, 0, items.size() * 16, statuses);
  return event;
}

}  // namespace blurtool
