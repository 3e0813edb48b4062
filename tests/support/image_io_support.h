// Helpers shared by the host tests of image decoding and encoding (tests/unit/test_image_io.cpp,
// test_decode_checks.cpp, test_png_encode.cpp, test_jpeg_encode.cpp, test_pixels.cpp): the
// samples folder, seeded random images of any depth and channel count, stb_image (the decoder
// before libpng and TurboJPEG) as a reference, image differences, PNG's CRC, the message of an
// expected error, and a fresh temporary directory per test (ImageIo).
#pragma once

#include <gtest/gtest.h>
#include <stb/stb_image.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "image/image_io.h"
#include "util/error.h"

namespace blurtool {

using Bytes = std::vector<std::uint8_t>;
using Samples16 = std::vector<std::uint16_t>;

inline const std::string kSamples = std::string(BLURTOOL_SOURCE_DIR) + "/samples/";

// Samples drawn uniformly from all of T's values (for 16 bits, mostly not multiples of 257, so
// that an 8-bit path in between would change them).
template <typename T = std::uint8_t>
BasicImage<T> random_image(int width, int height, int channels, unsigned seed) {
  std::mt19937 rng(seed);
  BasicImage<T> image;
  image.width = width;
  image.height = height;
  image.channels = channels;
  image.pixels.resize(static_cast<std::size_t>(width) * height * channels);
  for (T& p : image.pixels) p = static_cast<T>(rng());
  return image;
}

// The message of the blurtool::Error (or E) that `f` throws ("" and a test failure if none).
template <class E = Error, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// PNG's CRC-32 of bytes [begin, end) of `data`.
inline std::uint32_t crc32(const Bytes& data, std::size_t begin, std::size_t end) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = begin; i < end; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// What stb_image, the decoder before libpng and TurboJPEG, makes of `bytes`, with samples of T
// (stbi_load_16 for 16 bits).
template <typename T = std::uint8_t>
BasicImage<T> stb_decode(const Bytes& bytes) {
  BasicImage<T> image;
  T* data = nullptr;
  if constexpr (sizeof(T) == 1) {
    data = stbi_load_from_memory(bytes.data(), int(bytes.size()), &image.width, &image.height,
                                 &image.channels, 0);
  } else {
    data = stbi_load_16_from_memory(bytes.data(), int(bytes.size()), &image.width, &image.height,
                                    &image.channels, 0);
  }
  if (!data) {
    ADD_FAILURE() << "stb_image cannot decode it: " << stbi_failure_reason();
    return image;
  }
  image.pixels.assign(data, data + std::size_t(image.width) * image.height * image.channels);
  stbi_image_free(data);
  return image;
}

// Mean and largest absolute difference of two images of one size.
inline std::pair<double, int> difference(const Image& a, const Image& b) {
  EXPECT_EQ(a.pixels.size(), b.pixels.size());
  double total = 0;
  int worst = 0;
  for (std::size_t i = 0; i < a.pixels.size() && i < b.pixels.size(); ++i) {
    const int diff = std::abs(int(a.pixels[i]) - int(b.pixels[i]));
    total += diff;
    worst = std::max(worst, diff);
  }
  return {a.pixels.empty() ? 0.0 : total / a.pixels.size(), worst};
}

// Fixture: a fresh temporary directory per test.
class ImageIo : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("blurtool_image_io_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add);
    std::filesystem::remove_all(dir_);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

}  // namespace blurtool
