// Helpers shared by the tests: one runtime (and so one program cache) for the whole test binary
// (device and cli tests; a unit test never calls runtime()), seeded random images (8- and
// 16-bit), the largest per-channel difference of two images, whole files read and written, and
// environment variables set for one test.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "filters/box/box_blur.h"
#include "filters/filter.h"
#include "filters/intermediate.h"
#include "image/image_io.h"
#include "runtime/cl_runtime.h"

namespace blurtool {

/// The runtime of the default device (BLURTOOL_DEVICE, else the first GPU, else a CPU).
inline Runtime& runtime() {
  static std::unique_ptr<Runtime> rt = std::make_unique<Runtime>(select_device(""));
  return *rt;
}

/// The default device's description as if it were of `type` with `local_mem` bytes of local
/// memory (0: its own): for the device-class defaults of `auto`.
inline DeviceInfo device_as(cl_device_type type, size_t local_mem = 0) {
  DeviceInfo d = runtime().device();
  d.type = type;
  if (local_mem) d.local_mem = local_mem;
  return d;
}

/// Largest error, in 16-bit levels, of a value in [0, 1] stored in intermediate `f` (rgba16f or
/// rgba8) by the test device and read back, plus the final rounding. Where the device rounds to
/// nearest, as PoCL (a CPU device) does: half an ulp of f16's 11-bit significand at the top of
/// the range, 16 levels, so 17; half an 8-bit step, 65535 / 510 = 128.5 levels, so 129. OpenCL
/// allows other devices more: half floats rounded toward zero (CL_DEVICE_HALF_FP_CONFIG's
/// minimum), a whole ulp, so 33; float to normalized integers within 0.6 of a step (OpenCL C,
/// "Converting floating-point values to normalized integer channel data types"),
/// 0.6 * 257 = 154.2 levels, so 155. An NVIDIA H100 measured up to 32 and 144.
inline int stored_error16(Intermediate f) {
  const bool cpu = runtime().device().type & CL_DEVICE_TYPE_CPU;
  if (f == Intermediate::rgba16f) return cpu ? 17 : 33;
  return cpu ? 129 : 155;
}

/// Whether box variant `v` reads through the sampler's bilinear filter (single-linear,
/// double-linear): at 16 bits its fetches carry the filter's precision, which OpenCL leaves to
/// the device (exact on PoCL, 1 level off on an NVIDIA H100).
inline bool box_samples_linearly(BoxVariant v) {
  return v == BoxVariant::single_linear || v == BoxVariant::double_linear;
}

/// Whether the test device has sub-groups (cl_khr_subgroups), which bright's subgroup needs.
inline bool has_subgroups() {
  return runtime().device().device.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_khr_subgroups") !=
         std::string::npos;
}

/// A `w` x `h` RGBA image of seeded random values; with `levels` < 256 only that many evenly
/// spaced values per channel, so that ties are common.
inline Image random_rgba(int w, int h, unsigned seed, int levels = 256) {
  Image img{w, h, 4, PixelVector<std::uint8_t>(static_cast<size_t>(w) * h * 4, 0)};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(0, levels - 1);
  for (auto& p : img.pixels) p = static_cast<std::uint8_t>(value(rng) * 255 / (levels - 1));
  return img;
}

/// A `w` x `h` RGBA16 image of seeded random values, none a multiple of 257 (an 8-bit level
/// scaled to 16 bits): a path that keeps 8 bits anywhere is off by up to 128 levels.
inline Image16 random_rgba16(int w, int h, unsigned seed) {
  Image16 img{w, h, 4, PixelVector<std::uint16_t>(static_cast<size_t>(w) * h * 4, 0)};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(0, 65534);
  for (auto& p : img.pixels) {
    const int v = value(rng);
    p = static_cast<std::uint16_t>(v % 257 == 0 ? v + 1 : v);
  }
  return img;
}

/// random_rgba or random_rgba16 by sample type, for tests run at both depths.
template <typename T>
BasicImage<T> random_image(int w, int h, unsigned seed) {
  if constexpr (depth_of<T> == PixelDepth::u16)
    return random_rgba16(w, h, seed);
  else
    return random_rgba(w, h, seed);
}

/// Largest |a - b| over all pixels and channels of two images of one size and sample type.
template <typename T>
int max_error(const BasicImage<T>& a, const BasicImage<T>& b) {
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size() && i < b.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

/// The whole file at `path` ("" if it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Writes `bytes` to `path`, creating its parent folders.
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Environment variables set for one test and restored when it ends (blurtool reads some of
/// them, such as BLURTOOL_CACHE_DIR, at every use).
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }
  /// Sets `name` to `value` (unsets it for null), remembering the first value to restore.
  void set(const std::string& name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value)
      ::setenv(name.c_str(), value, 1);
    else
      ::unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Untouched memory must keep its exact bits (NaN included).
inline bool same_bits(float a, float b) {
  std::uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  return ua == ub;
}

}  // namespace blurtool
