// The device conversions of JPEG's colour planes (filters/ycbcr_device.h) against the host
// references, and run_filter moving planes instead of pixels. The host side:
// tests/unit/test_jpeg_planes.cpp.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cstring>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/filter.h"
#include "filters/ycbcr_device.h"
#include "image/jpeg_planes.h"
#include "tests/support/jpeg_test_support.h"

using namespace blurtool;

namespace {

const int kSizes[][2] = {{1, 1},  {2, 3},   {3, 5},  {4, 4},    {5, 2},
                         {17, 9}, {333, 1}, {1, 40}, {101, 77}, {64, 48}};

}  // namespace

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
