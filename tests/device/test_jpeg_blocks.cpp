// The device transforms of JPEG's DCT blocks (filters/ycbcr_device.h) against the host references,
// wild coefficients included, dense and sparse, and run_filter moving blocks instead of pixels. The
// host side: tests/unit/test_jpeg_blocks.cpp.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "filters/box/box_blur.h"
#include "filters/filter.h"
#include "filters/ycbcr_device.h"
#include "image/jpeg_planes.h"
#include "tests/support/jpeg_test_support.h"

using namespace blurtool;

namespace {

const int kSizes[][2] = {{1, 1},   {3, 5},  {8, 8},    {9, 17},  {17, 9},
                         {333, 3}, {1, 40}, {101, 77}, {64, 48}, {130, 66}};

}  // namespace

// Coefficients no encoder makes from 8-bit samples (up to +-32767, with 8-bit tables) decode as
// libjpeg's C IDCT decodes them, in 64-bit arithmetic: no overflow, every sample written.
TEST(JpegBlocks, WildCoefficientsDecodeWithoutOverflow) {
  YCbCrPlanes blocks;
  ASSERT_TRUE(decode_jpeg_blocks(tj_jpeg(test_picture(24, 16, 9), TJSAMP_444, 10), &blocks));
  std::mt19937 random(7);
  std::uniform_int_distribution<int> coefficient(-32767, 32767);
  for (std::int16_t& c : blocks.dct.coef) c = static_cast<std::int16_t>(coefficient(random));
  const YCbCrPlanes host = blocks_to_planes(blocks);  // UBSan would stop at an overflow
  Runtime& rt = runtime();
  YCbCrConverter converter(rt);
  cl::Buffer coef(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, blocks.dct.coef.size() * 2,
                  blocks.dct.coef.data());
  cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, host.samples.size());
  converter.blocks_to_planes(coef, blocks, out);
  std::vector<std::uint8_t> got(host.samples.size());
  rt.queue().enqueueReadBuffer(out, CL_TRUE, 0, got.size(), got.data());
  EXPECT_TRUE(got == host.samples);
  // The quality-10 tables reach 255: the values wrap through libjpeg's range limit, so the
  // samples take more than the two clamped values.
  int distinct = 0;
  for (int v = 1; v < 255; ++v) distinct += std::find(got.begin(), got.end(), v) != got.end();
  EXPECT_GT(distinct, 10);
}

TEST(JpegBlocks, DeviceTransformsMatchTheHostReference) {
  Runtime& rt = runtime();
  YCbCrConverter converter(rt);
  cl::CommandQueue& queue = rt.queue();
  for (const auto& size : kSizes)
    for (const auto& [subsampling, name] : kDecodeCases)
      for (int quality : {50, 97}) {
        const int w = size[0], h = size[1];
        SCOPED_TRACE(std::string("decode ") + std::to_string(w) + "x" + std::to_string(h) + " " +
                     name + " quality " + std::to_string(quality));
        YCbCrPlanes blocks;
        ASSERT_TRUE(
            decode_jpeg_blocks(tj_jpeg(test_picture(w, h, w + h), subsampling, quality), &blocks));
        const YCbCrPlanes expected = blocks_to_planes(blocks);
        cl::Buffer coef(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        blocks.dct.coef.size() * 2, blocks.dct.coef.data());
        cl::Buffer out(rt.context(), CL_MEM_READ_WRITE, expected.samples.size());
        converter.blocks_to_planes(coef, blocks, out);
        std::vector<std::uint8_t> got(expected.samples.size());
        queue.enqueueReadBuffer(out, CL_TRUE, 0, got.size(), got.data());
        EXPECT_TRUE(got == expected.samples);
      }
  for (const auto& size : kSizes)
    for (int components : {3, 1})
      for (ChromaSubsampling s : kEncodeCases)
        for (int quality : {95, 100}) {
          if (components == 1 && s != ChromaSubsampling::s420) continue;
          const int w = size[0], h = size[1];
          SCOPED_TRACE("encode " + std::to_string(w) + "x" + std::to_string(h) + " components " +
                       std::to_string(components) + " subsampling " +
                       std::to_string(static_cast<int>(s)) + " quality " + std::to_string(quality));
          const YCbCrPlanes planes = rgba_to_ycbcr(test_picture(w, h, 3 * w + h), components, s);
          YCbCrPlanes expected = encoder_block_layout(w, h, components, s, quality);
          planes_to_blocks(planes, &expected);
          cl::Buffer in(rt.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                        planes.samples.size(), const_cast<std::uint8_t*>(planes.samples.data()));
          const std::size_t bytes = expected.dct.coef.size() * 2;
          cl::Buffer coef(rt.context(), CL_MEM_READ_WRITE, bytes);
          converter.planes_to_blocks(in, expected, coef);
          std::vector<std::int16_t> got(expected.dct.coef.size());
          queue.enqueueReadBuffer(coef, CL_TRUE, 0, bytes, got.data());
          EXPECT_TRUE(got == expected.dct.coef);
        }
}

// run_filter with DCT blocks on both sides gives the blocks of the RGBA run's output (a box
// blur through buffers, the CPU schedule, and through images).
TEST(JpegBlocks, RunFilterMovesBlocksInsteadOfPixels) {
  Runtime& rt = runtime();
  const int w = 45, h = 29;
  YCbCrPlanes in;
  ASSERT_TRUE(decode_jpeg_blocks(tj_jpeg(test_picture(w, h, 5), TJSAMP_420), &in));
  for (BoxVariant v : {BoxVariant::tiled, BoxVariant::single}) {
    BoxParams p;
    p.radius = 4;
    p.variant = v;
    SCOPED_TRACE(static_cast<int>(v));
    BoxFilter filter(rt, p, w, h);
    const FilterRun rgba_run = run_filter(rt, filter, ycbcr_to_rgba(blocks_to_planes(in)));
    YCbCrPlanes out = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 95);
    PlaneTransfer planes;
    planes.input = &in;
    planes.output = &out;
    const FilterRun block_run = run_filter(rt, filter, Image{}, 0, planes);
    EXPECT_TRUE(block_run.output.pixels.empty());
    EXPECT_TRUE(out.samples.empty());
    YCbCrPlanes expected = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 95);
    planes_to_blocks(rgba_to_ycbcr(rgba_run.output, 3, ChromaSubsampling::s420), &expected);
    EXPECT_TRUE(out.dct.coef == expected.dct.coef);
  }
}

namespace {

bool same_sparse(const SparseBlocks& a, const SparseBlocks& b) {
  return a.mask == std::vector<std::uint64_t>(b.mask.begin(), b.mask.end()) &&
         a.values == std::vector<std::int16_t>(b.values.begin(), b.values.end()) &&
         a.group_start == b.group_start;
}

}  // namespace

// The device unpacks sparse blocks into whole ones and packs whole ones into the host's sparse
// form: masks, values and group starts alike, for every kind of block and a last group that is
// not whole.
TEST(JpegBlocks, DevicePacksAndUnpacksSparseBlocks) {
  Runtime& rt = runtime();
  YCbCrConverter converter(rt);
  for (const auto& size : {std::pair{8, 8}, {130, 66}, {333, 77}, {1000, 600}, {64, 64}}) {
    SCOPED_TRACE(std::to_string(size.first) + "x" + std::to_string(size.second));
    YCbCrPlanes dense = assorted_blocks(size.first, size.second, 5);
    if (size.first == 64)  // no value at all
      std::fill(dense.dct.coef.begin(), dense.dct.coef.end(), std::int16_t{0});
    DctBlocks sparse = dense.dct;
    make_sparse(&sparse);
    const std::size_t bytes = dense.dct.coef.size() * 2;
    cl::Buffer coef(rt.context(), CL_MEM_READ_WRITE, bytes);
    converter.upload_sparse(sparse, coef);
    std::vector<std::int16_t> got(dense.dct.coef.size());
    rt.queue().enqueueReadBuffer(coef, CL_TRUE, 0, bytes, got.data());
    EXPECT_TRUE(got == dense.dct.coef);
    YCbCrPlanes packed =
        encoder_block_layout(size.first, size.second, 3, ChromaSubsampling::s420, 95, true);
    ASSERT_EQ(packed.dct.block_count(), sparse.block_count());
    // Packed by a converter of its own, whose buffers hold nothing of the upload's.
    YCbCrConverter packer(rt);
    packer.download_sparse(coef, &packed.dct);
    EXPECT_TRUE(same_sparse(packed.dct.sparse, sparse.sparse));
  }
}

// run_filter takes and gives sparse blocks as it does whole ones.
TEST(JpegBlocks, RunFilterMovesSparseBlocks) {
  Runtime& rt = runtime();
  const int w = 77, h = 45;
  const std::vector<std::uint8_t> jpeg = tj_jpeg(test_picture(w, h, 6), TJSAMP_420);
  YCbCrPlanes whole_in, sparse_in;
  ASSERT_TRUE(decode_jpeg_blocks(jpeg, &whole_in));
  ASSERT_TRUE(decode_jpeg_blocks(jpeg, &sparse_in, true));
  BoxParams p;
  p.radius = 5;
  BoxFilter filter(rt, p, w, h);
  YCbCrPlanes whole_out = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 95);
  YCbCrPlanes sparse_out = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 95, true);
  PlaneTransfer whole, sparse;
  whole.input = &whole_in;
  whole.output = &whole_out;
  sparse.input = &sparse_in;
  sparse.output = &sparse_out;
  run_filter(rt, filter, Image{}, 0, whole);
  run_filter(rt, filter, Image{}, 0, sparse);
  ASSERT_TRUE(sparse_out.dct.is_sparse());
  make_dense(&sparse_out.dct);
  EXPECT_TRUE(sparse_out.dct.coef == whole_out.dct.coef);
}
