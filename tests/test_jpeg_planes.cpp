// JPEG's colour planes (image/jpeg_planes.h) and their device conversions (filters/ycbcr_device.h):
// every path must give libjpeg-turbo's own bytes, decoded pixels against tjDecompress2 and
// encoded files against tjCompress2 (encode_rgba), at every chroma subsampling and at sizes
// that are no multiple of a block or an MCU.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cstring>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/filter.h"
#include "image/jpeg_planes.h"
#include "filters/ycbcr_device.h"
#include "jpeg_test_support.h"

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

TEST(JpegPlanes, DeviceConversionsMatchTheHostReference) {
  Runtime& rt = runtime();
  YCbCrConverter converter(rt);
  cl::CommandQueue& queue = rt.queue();
  for (const auto& size : kSizes)
    for (const auto& [subsampling, name] : kDecodeCases) {
      const int w = size[0], h = size[1];
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + name);
      const std::vector<std::uint8_t> jpeg = tj_jpeg(test_picture(w, h, w * 5 + h), subsampling);
      if (!jpeg_planes_supported(jpeg, true)) continue;  // see the test above
      const YCbCrPlanes planes = decode_jpeg_planes(jpeg, "test.jpg");
      const Image expected = ycbcr_to_rgba(planes);
      cl::Buffer in(rt.context(), CL_MEM_READ_ONLY, planes.samples.size());
      queue.enqueueWriteBuffer(in, CL_TRUE, 0, planes.samples.size(), planes.samples.data());
      const std::size_t bytes = expected.pixels.size();
      // Into a buffer, then into an image.
      cl::Buffer rgba_buffer(rt.context(), CL_MEM_READ_WRITE, bytes);
      converter.to_rgba(in, planes, rgba_buffer);
      Image got{w, h, 4, {}};
      got.pixels.resize(bytes);
      queue.enqueueReadBuffer(rgba_buffer, CL_TRUE, 0, bytes, got.pixels.data());
      EXPECT_EQ(max_error(got, expected), 0) << "buffer";
      if (rt.device().image_support) {
        cl::Image2D image = make_image(rt, w, h, CL_UNORM_INT8);
        converter.to_rgba(in, planes, image);
        std::memset(got.pixels.data(), 0, bytes);
        queue.enqueueReadImage(image, CL_TRUE, {0, 0, 0}, {size_t(w), size_t(h), 1}, 0, 0,
                               got.pixels.data());
        EXPECT_EQ(max_error(got, expected), 0) << "image";
      }
    }
  for (const auto& size : kSizes)
    for (int components : {3, 1})
      for (ChromaSubsampling s : kEncodeCases) {
        if (components == 1 && s != ChromaSubsampling::s420) continue;
        const int w = size[0], h = size[1];
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " components " +
                     std::to_string(components) + " subsampling " +
                     std::to_string(static_cast<int>(s)));
        const Image rgba = test_picture(w, h, 11 * w + h);
        const YCbCrPlanes expected = rgba_to_ycbcr(rgba, components, s);
        YCbCrPlanes got = encoder_layout(w, h, components, s);
        cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, got.samples.size());
        cl::Buffer src(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, rgba.pixels.size(),
                       const_cast<std::uint8_t*>(rgba.pixels.data()));
        converter.to_planes(src, got, out);
        queue.enqueueReadBuffer(out, CL_TRUE, 0, got.samples.size(), got.samples.data());
        EXPECT_TRUE(got.samples == expected.samples) << "from a buffer";
        if (rt.device().image_support) {
          cl::Image2D image = make_image(rt, w, h, CL_UNORM_INT8, CL_MEM_READ_ONLY);
          queue.enqueueWriteImage(image, CL_TRUE, {0, 0, 0}, {size_t(w), size_t(h), 1}, 0, 0,
                                  rgba.pixels.data());
          std::fill(got.samples.begin(), got.samples.end(), 0);
          converter.to_planes(image, got, out);
          queue.enqueueReadBuffer(out, CL_TRUE, 0, got.samples.size(), got.samples.data());
          EXPECT_TRUE(got.samples == expected.samples) << "from an image";
        }
      }
}

// run_filter with planes on both sides gives the planes of the RGBA run's output (a box blur
// through buffers, the CPU schedule, and through images).
TEST(JpegPlanes, RunFilterMovesPlanesInsteadOfPixels) {
  Runtime& rt = runtime();
  const int w = 45, h = 29;
  const std::vector<std::uint8_t> jpeg = tj_jpeg(test_picture(w, h, 5), TJSAMP_420);
  const YCbCrPlanes in = decode_jpeg_planes(jpeg, "test.jpg");
  for (BoxVariant v : {BoxVariant::tiled, BoxVariant::single}) {
    BoxParams p;
    p.radius = 4;
    p.variant = v;
    SCOPED_TRACE(static_cast<int>(v));
    BoxFilter filter(rt, p, w, h);
    const FilterRun rgba_run = run_filter(rt, filter, ycbcr_to_rgba(in));
    YCbCrPlanes out = encoder_layout(w, h, 3, ChromaSubsampling::s420);
    PlaneTransfer planes;
    planes.input = &in;
    planes.output = &out;
    const FilterRun plane_run = run_filter(rt, filter, Image{}, 0, planes);
    EXPECT_TRUE(plane_run.output.pixels.empty());
    EXPECT_TRUE(out.samples == rgba_to_ycbcr(rgba_run.output, 3, ChromaSubsampling::s420).samples);
  }
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
