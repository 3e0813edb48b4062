// JPEG's DCT blocks on the host (image/jpeg_planes.h: decode_jpeg_blocks, encoder_block_layout and
// the host references blocks_to_planes and planes_to_blocks): the planes an inverse DCT makes must
// be tjDecompressToYUVPlanes' own, and the files encoded from forward-DCT blocks tjCompress2's own
// bytes, at every chroma subsampling, at sizes that are no multiple of a block or an MCU, at the
// qualities that take the fast and the accurate DCT, and in restart strips; and the sparse form of
// the blocks. Their device transforms: tests/device/test_jpeg_blocks.cpp.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "filters/ycbcr_device.h"
#include "image/jpeg_planes.h"
#include "tests/support/jpeg_test_support.h"
#include "tests/support/libjpeg_support.h"

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
std::vector<std::uint8_t> libjpeg_file(const Image& rgba, bool grey, int h, int v, int restart_rows,
                                       bool scan_each) {
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
      const std::vector<std::uint8_t> jpeg = libjpeg_file(test_picture(w, h, w * 7 + h), k.grey,
                                                          k.h, k.v, k.restart_rows, k.scan_each);
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

// Progressive files: their blocks, once every scan is read, are the ones TurboJPEG
// inverse-transforms (no block smoothing for a complete progressive file).
TEST(JpegBlocks, ProgressiveFilesGiveTurboJpegsPlanes) {
  for (const auto& size : kSizes)
    for (const auto& [subsampling, name] : kDecodeCases) {
      const int w = size[0], h = size[1];
      SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + name);
      const std::vector<std::uint8_t> jpeg =
          tj_jpeg(test_picture(w, h, w * 3 + h), subsampling, 85, TJFLAG_PROGRESSIVE);
      YCbCrPlanes blocks;
      ASSERT_TRUE(decode_jpeg_blocks(jpeg, &blocks));
      const YCbCrPlanes expected = decode_jpeg_planes(jpeg, "test.jpg");
      ASSERT_TRUE(same_sizes(blocks, expected));
      EXPECT_TRUE(blocks_to_planes(blocks).samples == expected.samples);
      EXPECT_FALSE(decode_jpeg_blocks(jpeg, &blocks, false, false));  // progressive refused
    }
}

namespace {

// `rgba` as a progressive JPEG of 4:2:0 whose scans stop short: the DC coefficients to their
// last bit and, where `ac_scans`, the first five AC coefficients to all but their last bit
// (Al 1) and the rest to theirs. libjpeg decodes such a file with block smoothing.
std::vector<std::uint8_t> short_progressive_file(const Image& rgba, bool ac_scans) {
  LibjpegCoding coding;
  coding.script.push_back(dc_scan(3));
  if (ac_scans)
    for (int i = 0; i < 3; ++i) {
      coding.script.push_back({1, {i}, 1, 5, 0, 1});
      coding.script.push_back({1, {i}, 6, 63, 0, 0});
    }
  return libjpeg_jpeg(first_channels(rgba, 3), coding);
}

}  // namespace

// A progressive file whose scans leave coefficients short of their last bit (libjpeg smooths
// such files), arithmetic coding (libjpeg's decoder takes damaged arithmetic data without a
// warning) and damaged data are left to the planes path.
TEST(JpegBlocks, ShortProgressiveArithmeticAndDamagedFilesAreLeftToTurboJpeg) {
  const Image rgba = test_picture(40, 24, 3);
  YCbCrPlanes blocks;
  for (bool progressive : {false, true}) {
    LibjpegCoding coding;
    coding.arithmetic = true;
    coding.progressive = progressive;
    std::vector<std::uint8_t> jpeg = libjpeg_jpeg(first_channels(rgba, 3), coding);
    const std::uint8_t sof[2] = {0xFF, static_cast<std::uint8_t>(progressive ? 0xCA : 0xC9)};
    ASSERT_NE(std::search(jpeg.begin(), jpeg.end(), sof, sof + 2), jpeg.end());  // SOF9, SOF10
    EXPECT_EQ(decode_jpeg_planes(jpeg, "arith.jpg").components, 3);
    EXPECT_FALSE(decode_jpeg_blocks(jpeg, &blocks));
    // Cut short and closed with EOI: libjpeg's arithmetic decoder reads on without a warning.
    jpeg.resize(jpeg.size() / 2);
    jpeg.insert(jpeg.end(), {0xFF, 0xD9});
    EXPECT_FALSE(decode_jpeg_blocks(jpeg, &blocks));
    EXPECT_TRUE(blocks.empty());
  }
  for (bool ac_scans : {false, true}) {
    SCOPED_TRACE(ac_scans ? "AC short of its last bit" : "DC only");
    const std::vector<std::uint8_t> jpeg = short_progressive_file(rgba, ac_scans);
    EXPECT_EQ(decode_jpeg_planes(jpeg, "short.jpg").components, 3);
    EXPECT_FALSE(decode_jpeg_blocks(jpeg, &blocks));
    EXPECT_TRUE(blocks.empty());
  }
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
