// JPEG's colour planes on the host (image/jpeg_planes.h): every path must give libjpeg-turbo's own
// bytes, decoded pixels against tjDecompress2 and encoded files against tjCompress2, at every
// chroma subsampling and at sizes that are no multiple of a block or an MCU; and which JPEGs the
// plane path takes. Their device conversions: tests/device/test_jpeg_planes.cpp.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <string>
#include <vector>

#include "filters/ycbcr_device.h"
#include "image/jpeg_planes.h"
#include "tests/support/jpeg_test_support.h"

using namespace blurtool;

namespace {

const int kSizes[][2] = {{1, 1},  {2, 3},   {3, 5},  {4, 4},    {5, 2},
                         {17, 9}, {333, 1}, {1, 40}, {101, 77}, {64, 48}};

// tjDecompress2's RGBX pixels of `jpeg` (X = 255).
Image tj_rgba(const std::vector<std::uint8_t>& jpeg, int w, int h) {
  tjhandle handle = tjInitDecompress();
  Image out{w, h, 4, {}};
  out.pixels.resize(static_cast<std::size_t>(w) * h * 4);
  EXPECT_EQ(
      tjDecompress2(handle, jpeg.data(), jpeg.size(), out.pixels.data(), w, 0, h, TJPF_RGBX, 0), 0);
  tjDestroy(handle);
  return out;
}

}  // namespace

TEST(JpegPlanes, HostUpsamplingAndColourAreTurboJpegsDecode) {
  for (const auto& size : kSizes)
    for (const auto& [subsampling, name] : kDecodeCases) {
      const int w = size[0], h = size[1];
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + name);
      const std::vector<std::uint8_t> jpeg = tj_jpeg(test_picture(w, h, w * 7 + h), subsampling);
      // Chroma rows of 1 or 2 samples: libjpeg repeats each sample instead of its triangle
      // filter; such files stay with libjpeg-turbo.
      const bool short_chroma_rows =
          w <= 4 && (subsampling == TJSAMP_420 || subsampling == TJSAMP_422);
      ASSERT_EQ(jpeg_planes_supported(jpeg, true), !short_chroma_rows);
      if (short_chroma_rows) continue;
      const YCbCrPlanes planes = decode_jpeg_planes(jpeg, "test.jpg");
      EXPECT_EQ(planes.components, subsampling == TJSAMP_GRAY ? 1 : 3);
      const Image got = ycbcr_to_rgba(planes);
      EXPECT_EQ(max_error(got, tj_rgba(jpeg, w, h)), 0);
    }
}

TEST(JpegPlanes, EncodingFromPlanesGivesTurboJpegsBytes) {
  for (const auto& size : kSizes)
    for (int components : {3, 1})
      for (ChromaSubsampling s : kEncodeCases) {
        if (components == 1 && s != ChromaSubsampling::s420) continue;  // grey has none
        const int w = size[0], h = size[1];
        const Image rgba = test_picture(w, h, w + 3 * h);
        for (int quality : {95, 100, 40}) {
          for (int strip_rows : {0, 16}) {  // one piece or restart strips of 16 rows
            SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " components " +
                         std::to_string(components) + " subsampling " +
                         std::to_string(static_cast<int>(s)) + " quality " +
                         std::to_string(quality) + " strip rows " + std::to_string(strip_rows));
            EncodeOptions e;
            e.jpeg_quality = quality;
            e.jpeg_subsampling = s;
            e.jpeg_strip_rows = strip_rows;
            const std::vector<std::uint8_t> expected =
                encode_rgba(rgba, components, ImageFormat::jpeg, e);
            const YCbCrPlanes planes = rgba_to_ycbcr(rgba, components, s);
            EXPECT_EQ(encode_jpeg_planes(planes, e), expected);
          }
        }
      }
}

TEST(JpegPlanes, EncoderRefusesPlanesOfAnotherLayout) {
  const YCbCrPlanes planes = rgba_to_ycbcr(test_picture(33, 17, 1), 3, ChromaSubsampling::s420);
  EncodeOptions e;
  e.jpeg_subsampling = ChromaSubsampling::s444;
  EXPECT_THROW(encode_jpeg_planes(planes, e), Error);
  e.jpeg_subsampling = ChromaSubsampling::s420;
  e.jpeg_quality = 0;
  EXPECT_THROW(encode_jpeg_planes(planes, e), UsageError);
}

// TurboJPEG's environment variables change tjCompress2's output, which the raw-data encoder
// does not follow: the pipeline then leaves JPEG encoding to the host.
TEST(JpegPlanes, TurboJpegEnvironmentVariablesKeepEncodingOnTheHost) {
  EXPECT_TRUE(jpeg_planes_encoder_is_turbojpegs());
  for (const char* name : {"TJ_OPTIMIZE", "TJ_ARITHMETIC", "TJ_RESTART", "TJ_PROGRESSIVE"}) {
    ScopedEnv env;
    env.set(name, "1");
    EXPECT_FALSE(jpeg_planes_encoder_is_turbojpegs()) << name;
  }
  EXPECT_TRUE(planes_addressable(65535, 10000));
  EXPECT_FALSE(planes_addressable(65535, 65535));
}

TEST(JpegPlanes, OnlyPlainYCbCrAndGreyJpegsShownAsStoredAreTaken) {
  const Image rgba = test_picture(24, 16, 3);
  EXPECT_FALSE(jpeg_planes_supported({0xFF, 0xD8, 0xFF}, true));  // no frame
  const std::vector<std::uint8_t> png = encode_image(rgba, ImageFormat::png, 95);
  EXPECT_FALSE(jpeg_planes_supported(png, true));
  tjhandle handle = tjInitCompress();
  unsigned char* data = nullptr;
  unsigned long size = 0;
  std::vector<std::uint8_t> cmyk(24 * 16 * 4, 100);
  ASSERT_EQ(tjCompress2(handle, cmyk.data(), 24, 0, 16, TJPF_CMYK, &data, &size, TJSAMP_444, 90, 0),
            0);
  EXPECT_FALSE(jpeg_planes_supported(std::vector<std::uint8_t>(data, data + size), true));
  tjFree(data);
  tjDestroy(handle);
}
