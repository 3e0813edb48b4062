// libFuzzer harness of JPEG's entropy decoding on the device (image/jpeg_entropy.h,
// filters/jpeg_entropy_device.h, kernels/jpeg_entropy.cl) on the first OpenCL device (PoCL where
// the tests run). On arbitrary bytes that pass the checks made before any decoder (check_file)
// and that parse_entropy_scan takes (baseline or progressive), it packs the scan with a subsequence
// size taken from the input's length (32 to 2048 bits, so that short and long runs are both tried),
// decodes it on the device into coefficients that lie between two guard regions of a known pattern,
// and then:
//   - the guards must be intact (no kernel write outside the image's coefficients);
//   - where the kernel says the blocks are libjpeg's (status 0), libjpeg must decode the file
//     without a warning (decode_jpeg_blocks) into exactly those blocks; where it says not, the
//     pipeline would decode the file with libjpeg, which the other harnesses cover.
// Any breach aborts. The host side (parsing, unstuffing, packing) runs under the sanitizers of
// scripts/fuzz's build; the kernel's reads are bounded by construction (every data read is
// checked against the data's length, every table index masked or validated on the host), which
// the guards cannot see. Built and run as fuzz_codecs is (tests/fuzz/CMakeLists.txt,
// scripts/fuzz).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "filters/jpeg_entropy_device.h"
#include "image/codec_common.h"
#include "image/jpeg_entropy.h"
#include "image/jpeg_planes.h"
#include "runtime/cl_runtime.h"
#include "util/error.h"

namespace {

constexpr std::uint64_t kFuzzMaxPixels = std::uint64_t{1} << 22;  // as fuzz_codecs'
constexpr std::size_t kGuard = 4096;                              // shorts each side
constexpr std::int16_t kPattern = 0x5A5A;

struct Device {
  blurtool::Runtime runtime;
  blurtool::EntropyDecoder decoder;
  Device() : runtime(blurtool::select_device("")), decoder(runtime) {}
};

Device& device() {
  static Device d;
  return d;
}

[[noreturn]] void breach(const char* what) {
  std::fprintf(stderr, "fuzz_entropy: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  try {
    const blurtool::CheckedFile file = blurtool::check_file(bytes, "fuzz input", kFuzzMaxPixels);
    if (file.png || file.tiff || file.webp) return 0;
  } catch (const blurtool::Error&) {
    return 0;
  }
  blurtool::YCbCrPlanes layout;
  blurtool::EntropyScan scan;
  if (!blurtool::parse_entropy_scan(bytes.data(), bytes.size(), &layout, &scan, true)) return 0;
  const auto packed =
      blurtool::EntropyDecoder::pack(scan, layout, 32 * (1 + static_cast<int>(size % 64)));
  Device& d = device();
  const std::size_t total = blurtool::EntropyDecoder::coefficients(layout);
  std::vector<std::int16_t> host(kGuard + total + kGuard, kPattern);
  cl::Buffer coef(d.runtime.context(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, host.size() * 2,
                  host.data());
  std::int32_t status[4] = {};
  d.decoder.decode({{packed.data(), packed.size(), &layout, kGuard}}, coef, status);
  d.runtime.queue().enqueueReadBuffer(coef, CL_TRUE, 0, host.size() * 2, host.data());
  for (std::size_t i = 0; i < kGuard; ++i)
    if (host[i] != kPattern || host[kGuard + total + i] != kPattern)
      breach("the kernel wrote outside the image's coefficients");
  if (status[0] != 0 && status[0] != 1) breach("the kernel left no status");
  if (status[0] == 0) {
    blurtool::YCbCrPlanes expected;
    if (!blurtool::decode_jpeg_blocks(bytes, &expected))
      breach("the kernel took data that libjpeg warns about or refuses");
    if (expected.dct.coef.size() != total ||
        !std::equal(expected.dct.coef.begin(), expected.dct.coef.end(), host.begin() + kGuard))
      breach("the kernel's blocks differ from libjpeg's");
  }
  return 0;
}
