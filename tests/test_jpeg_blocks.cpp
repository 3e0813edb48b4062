// JPEG's DCT blocks (image/jpeg_planes.h: decode_jpeg_blocks, encoder_block_layout and the host
// references blocks_to_planes and planes_to_blocks) and their device transforms
// (filters/ycbcr_device.h): the planes an inverse DCT makes must be tjDecompressToYUVPlanes' own,
// and the files encoded from forward-DCT blocks tjCompress2's own bytes, at every chroma
// subsampling, at sizes that are no multiple of a block or an MCU, at the qualities that take
// the fast and the accurate DCT, and in restart strips.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "filters/box/box_blur.h"
#include "filters/filter.h"
#include "image/jpeg_planes.h"
#include "filters/ycbcr_device.h"
#include "jpeg_test_support.h"

using namespace blurtool;

namespace {

const int kSizes[][2] = {{1, 1},   {3, 5},  {8, 8},    {9, 17},  {17, 9},
                         {333, 3}, {1, 40}, {101, 77}, {64, 48}, {130, 66}};

bool same_sizes(const YCbCrPlanes& a, const YCbCrPlanes& b) {
  return a.width == b.width && a.height == b.height && a.components == b.components &&
         a.h_factor == b.h_factor && a.v_factor == b.v_factor && a.plane_width == b.plane_width &&
         a.plane_height == b.plane_height && a.offset == b.offset;
}

}  // namespace

TEST(JpegBlocks, HostInverseDctGivesTurboJpegsPlanes) {
  for (const auto& size : kSizes)
    for (const auto& [subsampling, name] : kDecodeCases)
      for (int quality : {30, 90, 100}) {
        const int w = size[0], h = size[1];
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + name + " quality " +
                     std::to_string(quality));
        const std::vector<std::uint8_t> jpeg =
            tj_jpeg(test_picture(w, h, w * 5 + h), subsampling, quality);
        YCbCrPlanes blocks;
        ASSERT_TRUE(decode_jpeg_blocks(jpeg, &blocks));
        EXPECT_TRUE(blocks.samples.empty());
        const YCbCrPlanes expected = decode_jpeg_planes(jpeg, "test.jpg");
        ASSERT_TRUE(same_sizes(blocks, expected));
        const YCbCrPlanes got = blocks_to_planes(blocks);
        EXPECT_TRUE(got.samples == expected.samples);
      }
}

// `rgba` (its red channel where `grey`) as a baseline JPEG that libjpeg writes but tjCompress2
// never does: Y sampled h x v (a grey image too), `restart_rows` MCU rows a restart interval
// (0: none), and with `scan_each` one scan for each component instead of one interleaved scan.
std::vector<std::uint8_t> libjpeg_file(const Image& rgba, bool grey, int h, int v,
                                       int restart_rows, bool scan_each) {
  jpeg_compress_struct c;
  jpeg_error_mgr errors;
  c.err = jpeg_std_error(&errors);
  jpeg_create_compress(&c);
  unsigned char* data = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &data, &size);
  c.image_width = static_cast<JDIMENSION>(rgba.width);
  c.image_height = static_cast<JDIMENSION>(rgba.height);
  c.input_components = grey ? 1 : 3;
  c.in_color_space = grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, 90, TRUE);
  c.comp_info[0].h_samp_factor = h;
  c.comp_info[0].v_samp_factor = v;
  c.restart_in_rows = restart_rows;
  jpeg_scan_info scans[3] = {};
  if (scan_each) {
    for (int i = 0; i < c.input_components; ++i) {
      scans[i].comps_in_scan = 1;
      scans[i].component_index[0] = i;
      scans[i].Se = 63;
    }
    c.scan_info = scans;
    c.num_scans = c.input_components;
  }
  jpeg_start_compress(&c, TRUE);
  std::vector<JSAMPLE> row(static_cast<std::size_t>(rgba.width) * c.input_components);
  for (int y = 0; y < rgba.height; ++y) {
    for (int x = 0; x < rgba.width; ++x)
      for (int k = 0; k < c.input_components; ++k)
        row[static_cast<std::size_t>(x) * c.input_components + k] =
            rgba.pixels[rgba.index(x, y, k)];
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&c, rows, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<std::uint8_t> bytes(data, data + size);
  std::free(data);
  return bytes;
}

TEST(JpegBlocks, FilesTurboJpegNeverWritesDecodeAsItsPlanes) {
  // The blocks are decoded in place where the MCU-padded rows fit (BlockArrays): one scan a
  // component (libjpeg writes only the real blocks), restart intervals, and a grey image with
  // 2x2 sampling (its rows padded to two blocks) must give TurboJPEG's planes too.
  struct Case {
    bool grey;
    int h, v, restart_rows;
    bool scan_each;
    const char* name;
  };
  const Case cases[] = {{false, 2, 2, 0, true, "420, a scan a component"},
                        {false, 2, 1, 0, true, "422, a scan a component"},
                        {false, 2, 2, 1, false, "420, restart every MCU row"},
                        {false, 1, 1, 3, true, "444, restarts, a scan a component"},
                        {true, 2, 2, 0, false, "grey sampled 2x2"},
                        {true, 2, 2, 2, false, "grey sampled 2x2, restarts"}};
  for (const auto& size : kSizes)
    for (const Case& k : cases) {
      const int w = size[0], h = size[1];
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + k.name);
      const std::vector<std::uint8_t> jpeg = libjpeg_file(
          test_picture(w, h, w * 7 + h), k.grey, k.h, k.v, k.restart_rows, k.scan_each);
      YCbCrPlanes blocks;
      ASSERT_TRUE(decode_jpeg_blocks(jpeg, &blocks));
      const YCbCrPlanes expected = decode_jpeg_planes(jpeg, "test.jpg");
      ASSERT_TRUE(same_sizes(blocks, expected));
      EXPECT_TRUE(blocks_to_planes(blocks).samples == expected.samples);
    }
}

TEST(JpegBlocks, EncodingForwardDctBlocksGivesTurboJpegsBytes) {
  for (const auto& size : kSizes)
    for (int components : {3, 1})
      for (ChromaSubsampling s : kEncodeCases) {
        if (components == 1 && s != ChromaSubsampling::s420) continue;  // grey has none
        const int w = size[0], h = size[1];
        const Image rgba = test_picture(w, h, w + 3 * h);
        const YCbCrPlanes planes = rgba_to_ycbcr(rgba, components, s);
        for (int quality : {95, 96, 100, 40}) {  // fast DCT below 96, accurate from 96
          YCbCrPlanes blocks = encoder_block_layout(w, h, components, s, quality);
          EXPECT_EQ(blocks.dct.fast_dct, quality < 96);
          planes_to_blocks(planes, &blocks);
          for (int strip_rows : {0, 16}) {  // one piece or restart strips of 16 rows
            SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " components " +
                         std::to_string(components) + " subsampling " +
                         std::to_string(static_cast<int>(s)) + " quality " +
                         std::to_string(quality) + " strip rows " + std::to_string(strip_rows));
            EncodeOptions e;
            e.jpeg_quality = quality;
            e.jpeg_subsampling = s;
            e.jpeg_strip_rows = strip_rows;
            EXPECT_EQ(encode_jpeg_planes(blocks, e),
                      encode_rgba(rgba, components, ImageFormat::jpeg, e));
          }
        }
      }
}

TEST(JpegBlocks, EncoderRefusesBlocksOfAnotherQualityOrLayout) {
  YCbCrPlanes blocks = encoder_block_layout(33, 17, 3, ChromaSubsampling::s420, 90);
  planes_to_blocks(rgba_to_ycbcr(test_picture(33, 17, 1), 3, ChromaSubsampling::s420), &blocks);
  EncodeOptions e;
  e.jpeg_subsampling = ChromaSubsampling::s420;
  e.jpeg_quality = 91;
  EXPECT_THROW(encode_jpeg_planes(blocks, e), Error);
  e.jpeg_quality = 90;
  e.jpeg_subsampling = ChromaSubsampling::s444;
  EXPECT_THROW(encode_jpeg_planes(blocks, e), Error);
  EXPECT_THROW(encoder_block_layout(33, 17, 3, ChromaSubsampling::s420, 101), UsageError);
  EXPECT_THROW(
      planes_to_blocks(rgba_to_ycbcr(test_picture(33, 18, 1), 3, ChromaSubsampling::s420), &blocks),
      Error);
}

// Progressive and arithmetic-coded files are left to the planes path, as are damaged ones.
TEST(JpegBlocks, OnlySequentialHuffmanFilesAreTakenAndDamageIsReported) {
  const Image rgba = test_picture(40, 24, 3);
  YCbCrPlanes blocks;
  EXPECT_FALSE(decode_jpeg_blocks(tj_jpeg(rgba, TJSAMP_420, 90, TJFLAG_PROGRESSIVE), &blocks));
  setenv("TJ_ARITHMETIC", "1", 1);  // read by tjCompress2 of a fresh handle
  const std::vector<std::uint8_t> arithmetic = tj_jpeg(rgba, TJSAMP_420, 90);
  unsetenv("TJ_ARITHMETIC");
  EXPECT_FALSE(decode_jpeg_blocks(arithmetic, &blocks));
  EXPECT_FALSE(decode_jpeg_blocks(std::vector<std::uint8_t>{0xFF, 0xD8, 0xFF}, &blocks));
  EXPECT_TRUE(blocks.empty());
  // Damaged data (here cut short) goes to TurboJPEG's planes, which report the damage.
  std::vector<std::uint8_t> cut = tj_jpeg(rgba, TJSAMP_420, 90);
  cut.resize(cut.size() * 2 / 3);
  EXPECT_FALSE(decode_jpeg_blocks(cut, &blocks));
  EXPECT_TRUE(blocks.empty());
  std::string damage;
  EXPECT_EQ(decode_jpeg_planes(cut, "cut.jpg", &damage).components, 3);
  EXPECT_FALSE(damage.empty());
}

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

// Blocks of a 3-component 4:2:0 image of w x h, dense, with every kind of block the sparse form
// meets: all zero, all 64 coefficients set, single coefficients at the mask's ends, and random
// ones (about one in four set, as a q95 photo's).
YCbCrPlanes assorted_blocks(int w, int h, unsigned seed) {
  YCbCrPlanes p = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 95);
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> value(-1024, 1023), pick(0, 3);
  std::vector<std::int16_t>::size_type blocks = p.dct.coef.size() / 64;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int16_t* block = p.dct.coef.data() + 64 * b;
    for (int k = 0; k < 64; ++k) {
      int v = 0;
      switch (b % 5) {
        case 0:
          break;  // all zero
        case 1:
          v = value(random) | 1;
          break;  // all set
        case 2:
          v = k == 0 || k == 63 ? -32768 : 0;
          break;  // the ends, at the extremes
        default:
          v = pick(random) == 0 ? value(random) | 1 : 0;
      }
      block[k] = static_cast<std::int16_t>(v);
    }
  }
  return p;
}

bool same_sparse(const SparseBlocks& a, const SparseBlocks& b) {
  return a.mask == std::vector<std::uint64_t>(b.mask.begin(), b.mask.end()) &&
         a.values == std::vector<std::int16_t>(b.values.begin(), b.values.end()) &&
         a.group_start == b.group_start;
}

}  // namespace

// The sparse form holds every coefficient: masks, values and group starts as SparseBlocks says,
// and back to the same whole blocks; a file decoded sparse gives the blocks decoded whole.
TEST(JpegBlocks, SparseBlocksHoldEveryCoefficient) {
  for (const auto& size : {std::pair{8, 8}, {130, 66}, {333, 77}}) {
    SCOPED_TRACE(std::to_string(size.first) + "x" + std::to_string(size.second));
    const YCbCrPlanes dense = assorted_blocks(size.first, size.second, 3);
    DctBlocks sparse = dense.dct;
    make_sparse(&sparse);
    ASSERT_TRUE(sparse.is_sparse());
    EXPECT_TRUE(sparse.coef.empty());
    const std::size_t blocks = dense.dct.coef.size() / 64;
    ASSERT_EQ(sparse.block_count(), blocks);
    ASSERT_EQ(sparse.sparse.group_start.size(), (blocks + 63) / 64 + 1);
    std::size_t at = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
      if (b % 64 == 0) {
        EXPECT_EQ(sparse.sparse.group_start[b / 64], at);
      }
      EXPECT_EQ(sparse.sparse.start_of(b), at);
      for (int k = 0; k < 64; ++k) {
        const std::int16_t c = dense.dct.coef[64 * b + k];
        ASSERT_EQ((sparse.sparse.mask[b] >> k) & 1, c != 0 ? 1u : 0u);
        if (c != 0) {
          ASSERT_EQ(sparse.sparse.values[at++], c);
        }
      }
    }
    EXPECT_EQ(sparse.sparse.values.size(), at);
    EXPECT_EQ(sparse.sparse.group_start.back(), at);
    make_dense(&sparse);
    EXPECT_TRUE(sparse.coef == dense.dct.coef);
    EXPECT_TRUE(sparse.sparse.empty());
  }
  for (const auto& [subsampling, name] : kDecodeCases) {
    SCOPED_TRACE(name);
    const std::vector<std::uint8_t> jpeg = tj_jpeg(test_picture(101, 77, 4), subsampling, 95);
    YCbCrPlanes whole, sparse;
    ASSERT_TRUE(decode_jpeg_blocks(jpeg, &whole));
    ASSERT_TRUE(decode_jpeg_blocks(jpeg, &sparse, true));
    ASSERT_TRUE(sparse.dct.is_sparse());
    EXPECT_TRUE(blocks_to_planes(sparse).samples == blocks_to_planes(whole).samples);
    make_dense(&sparse.dct);
    EXPECT_TRUE(sparse.dct.coef == whole.dct.coef);
  }
}

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

// A JPEG encoded from sparse blocks is the JPEG of the same blocks whole, in one piece and in
// restart strips on several threads (each strip finds its first block's values).
TEST(JpegBlocks, SparseBlocksEncodeAsWholeOnes) {
  const int w = 333, h = 277;
  const YCbCrPlanes planes = rgba_to_ycbcr(test_picture(w, h, 8), 3, ChromaSubsampling::s420);
  YCbCrPlanes whole = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 90);
  planes_to_blocks(planes, &whole);
  YCbCrPlanes sparse = encoder_block_layout(w, h, 3, ChromaSubsampling::s420, 90, true);
  planes_to_blocks(planes, &sparse);
  ASSERT_TRUE(sparse.dct.is_sparse());
  for (int strip_rows : {0, 16, 48}) {
    SCOPED_TRACE(strip_rows);
    EncodeOptions options;
    options.jpeg_quality = 90;
    options.jpeg_subsampling = ChromaSubsampling::s420;
    options.jpeg_strip_rows = strip_rows;
    options.threads = 3;
    EXPECT_TRUE(encode_jpeg_planes(sparse, options) == encode_jpeg_planes(whole, options));
  }
  sparse.dct.sparse.values.pop_back();  // values that do not add up are refused
  EncodeOptions options;
  options.jpeg_quality = 90;
  EXPECT_THROW(encode_jpeg_planes(sparse, options), Error);
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
