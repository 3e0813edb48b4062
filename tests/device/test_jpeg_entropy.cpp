// JPEG's entropy decoding on the device (filters/jpeg_entropy_device.h) against libjpeg's own
// coefficients (decode_jpeg_blocks: jpeg_read_coefficients), every subsampling, odd sizes,
// restart intervals, tables made for the image, subsequences short enough that nearly every one
// must fall into step, progressive files of libjpeg's and of unusual scan scripts; and damaged
// data, which the device must leave to libjpeg.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "filters/jpeg_entropy_device.h"
#include "image/jpeg_entropy.h"
#include "image/jpeg_planes.h"
#include "tests/support/jpeg_test_support.h"
#include "tests/support/libjpeg_support.h"

using namespace blurtool;

namespace {

// The device's coefficients of `jpeg` (parse_entropy_scan must take it); *status the kernel's.
std::vector<std::int16_t> device_blocks(EntropyDecoder& decoder,
                                        const std::vector<std::uint8_t>& jpeg, int subsequence_bits,
                                        std::int32_t* status, YCbCrPlanes* layout) {
  EntropyScan scan;
  if (!parse_entropy_scan(jpeg.data(), jpeg.size(), layout, &scan, true)) {
    ADD_FAILURE() << "parse_entropy_scan refused the file";
    return {};
  }
  const auto packed = EntropyDecoder::pack(scan, *layout, subsequence_bits);
  Runtime& rt = runtime();
  const std::size_t total = EntropyDecoder::coefficients(*layout);
  cl::Buffer coef(rt.context(), CL_MEM_READ_WRITE, std::max<std::size_t>(total, 1) * 2);
  decoder.decode({{packed.data(), packed.size(), layout, 0}}, coef, status);
  std::vector<std::int16_t> got(total);
  rt.queue().enqueueReadBuffer(coef, CL_TRUE, 0, total * 2, got.data());
  return got;
}

// Expects the device to give exactly libjpeg's blocks of `jpeg` (which libjpeg decodes without
// a warning), with each subsequence size in `bits`; with `may_leave`, to give them or leave the
// file to libjpeg (status 1, reason 2: not in step within the kernel's passes).
void expect_libjpeg_blocks(EntropyDecoder& decoder, const std::vector<std::uint8_t>& jpeg,
                           std::initializer_list<int> bits = {32, 1024}, bool may_leave = false) {
  YCbCrPlanes expected;
  ASSERT_TRUE(decode_jpeg_blocks(jpeg, &expected));
  for (int b : bits) {
    SCOPED_TRACE("subsequences of " + std::to_string(b) + " bits");
    std::int32_t status[4] = {-1, -1, -1, -1};
    YCbCrPlanes layout;
    const std::vector<std::int16_t> got = device_blocks(decoder, jpeg, b, status, &layout);
    if (may_leave && status[0] == 1 && status[1] == 2) continue;
    EXPECT_EQ(status[0], 0) << "reason " << status[1] << ", passes " << status[2];
    EXPECT_EQ(layout.dct.blocks_across, expected.dct.blocks_across);
    EXPECT_EQ(layout.dct.blocks_down, expected.dct.blocks_down);
    EXPECT_EQ(layout.dct.offset, expected.dct.offset);
    EXPECT_EQ(layout.dct.quant, expected.dct.quant);
    ASSERT_EQ(got.size(), expected.dct.coef.size());
    std::size_t differ = 0, first = got.size();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != expected.dct.coef[i]) {
        if (!differ) first = i;
        ++differ;
      }
    EXPECT_EQ(differ, 0u) << "first at coefficient " << first << " (block " << first / 64 << ")";
  }
}

// Damages `good` (from byte `from` on) in `cases` ways (a few bits flipped, every tenth case cut
// short as well) and expects the device, with subsequences of `bits` bits (baseline), to give
// libjpeg's blocks of each (libjpeg decodes it without a warning) or to leave it to libjpeg
// (status 1, reason 4 or 5 where the kernel found the damage), never other blocks.
void expect_damage_left_to_libjpeg(EntropyDecoder& decoder, const std::vector<std::uint8_t>& good,
                                   std::size_t from, int cases, int bits, unsigned seed) {
  std::mt19937 random(seed);
  int refused = 0;
  for (int i = 0; i < cases; ++i) {
    std::vector<std::uint8_t> bad = good;
    std::uniform_int_distribution<std::size_t> at(from, bad.size() - 3);
    for (int n = 0; n < 1 + i % 3; ++n) bad[at(random)] ^= static_cast<std::uint8_t>(1 << (i % 8));
    if (i % 10 == 9) bad.resize(bad.size() - 40);  // cut short
    YCbCrPlanes layout;
    EntropyScan scan;
    if (!parse_entropy_scan(bad.data(), bad.size(), &layout, &scan, true)) {
      ++refused;
      continue;
    }
    std::int32_t status[4] = {-1, -1, -1, -1};
    const std::vector<std::int16_t> got = device_blocks(decoder, bad, bits, status, &layout);
    YCbCrPlanes expected;
    const bool clean = decode_jpeg_blocks(bad, &expected);
    if (status[0] == 0) {
      ASSERT_TRUE(clean) << "case " << i << ": the device took data libjpeg warns about";
      EXPECT_TRUE(got == expected.dct.coef) << "case " << i;
    } else {
      EXPECT_EQ(status[0], 1) << "case " << i;
      EXPECT_TRUE(status[1] >= 2 && status[1] <= 5) << "case " << i << ": reason " << status[1];
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
}

// Decodes the images `packed` (pack's, of `layouts`) in one call, each at its own offset of one
// coefficient buffer with gaps between them, and expects each to be decoded (status 0) into
// exactly `expected`'s blocks; returns the number of kernels the call launched.
std::size_t expect_batch_as_alone(EntropyDecoder& decoder,
                                  const std::vector<PixelVector<std::uint8_t>>& packed,
                                  const std::vector<YCbCrPlanes>& layouts,
                                  const std::vector<YCbCrPlanes>& expected) {
  Runtime& rt = runtime();
  std::vector<EntropyDecoder::Item> items;
  std::size_t at = 0;
  for (std::size_t i = 0; i < packed.size(); ++i) {
    items.push_back({packed[i].data(), packed[i].size(), &layouts[i], at});
    at += EntropyDecoder::coefficients(layouts[i]) + 64 * i;  // gaps between the images
  }
  cl::Buffer coef(rt.context(), CL_MEM_READ_WRITE, at * 2);
  std::vector<std::int32_t> status(4 * items.size(), -1);
  const std::size_t kernels = decoder.decode(items, coef, status.data()).size();
  std::vector<std::int16_t> got(at);
  rt.queue().enqueueReadBuffer(coef, CL_TRUE, 0, at * 2, got.data());
  for (std::size_t i = 0; i < items.size(); ++i) {
    SCOPED_TRACE("image " + std::to_string(i));
    EXPECT_EQ(status[4 * i], 0);
    const std::vector<std::int16_t> mine(
        got.begin() + items[i].coef_offset,
        got.begin() + items[i].coef_offset + expected[i].dct.coef.size());
    EXPECT_TRUE(mine == expected[i].dct.coef);
  }
  return kernels;
}

// A scan of a LibjpegCoding script: `components` (indices, in the frame's order), band ss..se,
// successive approximation bits ah -> al.
jpeg_scan_info progressive_scan(std::initializer_list<int> components, int ss, int se, int ah,
                                int al) {
  jpeg_scan_info s{};
  s.comps_in_scan = static_cast<int>(components.size());
  int i = 0;
  for (int c : components) s.component_index[i++] = c;
  s.Ss = ss;
  s.Se = se;
  s.Ah = ah;
  s.Al = al;
  return s;
}

const int kSizes[][2] = {{1, 1},   {8, 8},    {9, 17},   {17, 9},
                         {333, 3}, {101, 77}, {130, 66}, {640, 480}};

}  // namespace

TEST(JpegEntropy, TurboJpegFilesDecodeToLibjpegsBlocks) {
  EntropyDecoder decoder(runtime());
  for (const auto& size : kSizes)
    for (const auto& [subsampling, name] : kDecodeCases)
      for (int quality : {50, 95, 100}) {
        const int w = size[0], h = size[1];
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + name + " quality " +
                     std::to_string(quality));
        // Noise at quality 100 codes every coefficient, with next to no end-of-block code for a
        // decoder started at a wrong coefficient to fall into step on.
        expect_libjpeg_blocks(decoder, tj_jpeg(test_picture(w, h, w * 3 + h), subsampling, quality),
                              {32, 1024}, quality == 100);
      }
}

TEST(JpegEntropy, RestartIntervalsAndOptimisedTablesDecodeToLibjpegsBlocks) {
  EntropyDecoder decoder(runtime());
  for (const auto& size : kSizes)
    for (int channels : {3, 1})
      for (int restart : {0, 1, 3, 17})
        for (bool optimize : {false, true})
          for (const auto& [h, v] : {std::pair{2, 2}, {2, 1}, {1, 1}, {1, 2}}) {
            if (channels == 1 && (h != 2 || v != 2)) continue;
            const int w = size[0], ht = size[1];
            SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(ht) + " channels " +
                         std::to_string(channels) + " restart " + std::to_string(restart) +
                         (optimize ? " optimised" : "") + " h" + std::to_string(h) + "v" +
                         std::to_string(v));
            const Image image = first_channels(test_picture(w, ht, w + ht + restart), channels);
            LibjpegCoding coding;
            coding.quality = 92;
            coding.restart_interval = restart;
            coding.optimize = optimize;
            coding.h = h;
            coding.v = v;
            expect_libjpeg_blocks(decoder, libjpeg_jpeg(image, coding));
          }
}

// A photo's worth of data in 32-bit subsequences: thousands of guesses, each of which must come
// into step with the decoding before it.
TEST(JpegEntropy, ShortSubsequencesComeIntoStep) {
  EntropyDecoder decoder(runtime());
  const std::vector<std::uint8_t> jpeg = tj_jpeg(test_picture(1280, 720, 5), TJSAMP_420, 95);
  expect_libjpeg_blocks(decoder, jpeg, {32, 96, 4096, 1 << 20});
}

// Damaged data: the device either gives libjpeg's blocks (libjpeg decodes it without a warning)
// or says it cannot (status 1); it never gives other blocks as if they were right.
TEST(JpegEntropy, DamagedDataIsLeftToLibjpeg) {
  EntropyDecoder decoder(runtime());
  const std::vector<std::uint8_t> good = tj_jpeg(test_picture(200, 120, 11), TJSAMP_420, 90);
  // Past the headers of so small a file.
  expect_damage_left_to_libjpeg(decoder, good, good.size() / 3, 60, 64, 3);
}

// A batch in one launch (a work-group an image, each at its own offset in one coefficient
// buffer) gives each image's blocks as it gives them alone.
TEST(JpegEntropy, ABatchDecodesEachImageAsAlone) {
  EntropyDecoder decoder(runtime());
  std::vector<std::vector<std::uint8_t>> files;
  std::vector<PixelVector<std::uint8_t>> packed;
  std::vector<YCbCrPlanes> layouts, expected;
  for (int i = 0; i < 7; ++i) {
    const int w = 40 + 37 * i, h = 30 + 23 * i;
    files.push_back(tj_jpeg(test_picture(w, h, i), kDecodeCases[i % 5].first, 70 + 4 * i));
    YCbCrPlanes layout, blocks;
    EntropyScan scan;
    ASSERT_TRUE(parse_entropy_scan(files.back().data(), files.back().size(), &layout, &scan));
    ASSERT_TRUE(decode_jpeg_blocks(files.back(), &blocks));
    packed.push_back(EntropyDecoder::pack(scan, layout, 64 + 32 * i));
    layouts.push_back(layout);
    expected.push_back(std::move(blocks));
  }
  expect_batch_as_alone(decoder, packed, layouts, expected);
}

// Fill bytes before a stuffed zero (FF FF 00): libjpeg-turbo's fast Huffman decoder takes them
// for a marker and leaves stray coefficients without a warning, so the device must not decode
// such a file (parse_entropy_scan refuses it; the pipeline then decodes it with libjpeg).
TEST(JpegEntropy, FillBytesBeforeAStuffedZeroAreLeftToLibjpeg) {
  const std::vector<std::uint8_t> good = tj_jpeg(test_picture(200, 120, 4), TJSAMP_420, 95);
  YCbCrPlanes layout;
  EntropyScan scan;
  ASSERT_TRUE(parse_entropy_scan(good.data(), good.size(), &layout, &scan));
  std::size_t at = good.size();
  for (std::size_t i = good.size() / 2; i + 1 < good.size(); ++i)
    if (good[i] == 0xFF && good[i + 1] == 0x00) {
      at = i;
      break;
    }
  ASSERT_LT(at, good.size()) << "no stuffed byte in the scan's second half";
  std::vector<std::uint8_t> filled = good;
  filled.insert(filled.begin() + static_cast<std::ptrdiff_t>(at), 0xFF);
  EXPECT_FALSE(parse_entropy_scan(filled.data(), filled.size(), &layout, &scan));
  YCbCrPlanes blocks;
  EXPECT_TRUE(decode_jpeg_blocks(filled, &blocks));  // libjpeg decodes it, without a warning
}

// Progressive files as libjpeg writes them (jpeg_simple_progression: DC in two bits, AC bands
// first at reduced precision, then refined bit by bit), every sampling, odd sizes, restart
// intervals, and tables made for each scan (a DHT before each).
TEST(JpegEntropy, ProgressiveFilesDecodeToLibjpegsBlocks) {
  EntropyDecoder decoder(runtime());
  for (const auto& size : kSizes)
    for (int channels : {3, 1})
      for (int restart : {0, 1, 7})
        for (int quality : {50, 95, 100})
          for (const auto& [h, v] : {std::pair{2, 2}, {2, 1}, {1, 1}, {1, 2}}) {
            if (channels == 1 && (h != 2 || v != 2)) continue;
            const int w = size[0], ht = size[1];
            SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(ht) + " channels " +
                         std::to_string(channels) + " restart " + std::to_string(restart) +
                         " quality " + std::to_string(quality) + " h" + std::to_string(h) + "v" +
                         std::to_string(v));
            const Image image = first_channels(test_picture(w, ht, w + ht + quality), channels);
            LibjpegCoding coding;
            coding.progressive = true;
            coding.quality = quality;
            coding.restart_interval = restart;
            coding.optimize = restart != 1;
            coding.h = h;
            coding.v = v;
            const std::vector<std::uint8_t> jpeg = libjpeg_jpeg(image, coding);
            YCbCrPlanes layout;
            EntropyScan scan;
            ASSERT_TRUE(parse_entropy_scan(jpeg.data(), jpeg.size(), &layout, &scan, true));
            EXPECT_TRUE(scan.progressive());
            EXPECT_GE(scan.scans.size(), channels == 3 ? 10u : 6u);
            // Asked for baseline files only, the parser leaves it.
            EXPECT_FALSE(parse_entropy_scan(jpeg.data(), jpeg.size(), &layout, &scan, false));
            expect_libjpeg_blocks(decoder, jpeg, {1024});
          }
}

// Scan scripts libjpeg's own does not write: DC in separate scans and in three bits, a scan of
// two components' DC, bands cut in odd places and refined over several bits, the components'
// scans in any order.
TEST(JpegEntropy, UnusualProgressiveScriptsDecodeToLibjpegsBlocks) {
  EntropyDecoder decoder(runtime());
  const auto scan = progressive_scan;
  std::vector<jpeg_scan_info> script = {
      scan({0}, 0, 0, 0, 2),   scan({1, 2}, 0, 0, 0, 2), scan({2}, 1, 63, 0, 0),
      scan({0}, 1, 2, 0, 3),   scan({0}, 3, 40, 0, 1),   scan({0, 1, 2}, 0, 0, 2, 1),
      scan({0}, 41, 63, 0, 0), scan({0}, 1, 2, 3, 2),    scan({0}, 1, 2, 2, 1),
      scan({1}, 1, 5, 0, 1),   scan({1}, 6, 63, 0, 0),   scan({0, 1, 2}, 0, 0, 1, 0),
      scan({0}, 3, 40, 1, 0),  scan({1}, 1, 5, 1, 0),    scan({0}, 1, 2, 1, 0)};
  for (const auto& size : {std::pair{333, 3}, {101, 77}, {640, 480}})
    for (int restart : {0, 5}) {
      SCOPED_TRACE(std::to_string(size.first) + "x" + std::to_string(size.second) + " restart " +
                   std::to_string(restart));
      LibjpegCoding coding;
      coding.script = script;
      coding.quality = 97;
      coding.restart_interval = restart;
      coding.optimize = true;
      const std::vector<std::uint8_t> jpeg =
          libjpeg_jpeg(first_channels(test_picture(size.first, size.second, 9), 3), coding);
      expect_libjpeg_blocks(decoder, jpeg, {1024});
    }
}

// A progressive file whose scans leave a coefficient short of its last bit (DC only here) is
// not the device's: libjpeg may smooth its blocks (see decode_jpeg_blocks).
TEST(JpegEntropy, AnIncompleteProgressiveFileIsLeftToLibjpeg) {
  LibjpegCoding coding;
  coding.script = {dc_scan(3)};
  const std::vector<std::uint8_t> jpeg =
      libjpeg_jpeg(first_channels(test_picture(64, 48, 2), 3), coding);
  YCbCrPlanes layout;
  EntropyScan scan;
  EXPECT_FALSE(parse_entropy_scan(jpeg.data(), jpeg.size(), &layout, &scan, true));
}

// Damaged progressive data: the device gives libjpeg's blocks (libjpeg decodes it without a
// warning) or leaves the file to libjpeg (status 1), never other blocks.
TEST(JpegEntropy, DamagedProgressiveDataIsLeftToLibjpeg) {
  EntropyDecoder decoder(runtime());
  LibjpegCoding coding;
  coding.progressive = true;
  coding.quality = 90;
  coding.restart_interval = 3;
  const std::vector<std::uint8_t> good =
      libjpeg_jpeg(first_channels(test_picture(200, 120, 12), 3), coding);
  expect_damage_left_to_libjpeg(decoder, good, good.size() / 4, 80, 0, 5);
}

// Baseline and progressive images in one call (two launches, one status array) each decode as
// alone.
TEST(JpegEntropy, ABatchOfBaselineAndProgressiveImagesDecodesEachAsAlone) {
  EntropyDecoder decoder(runtime());
  std::vector<std::vector<std::uint8_t>> files;
  std::vector<PixelVector<std::uint8_t>> packed;
  std::vector<YCbCrPlanes> layouts, expected;
  for (int i = 0; i < 9; ++i) {
    const int w = 40 + 37 * i, h = 30 + 23 * i;
    LibjpegCoding coding;
    coding.progressive = i % 3 != 1;
    coding.quality = 70 + 3 * i;
    files.push_back(
        libjpeg_jpeg(first_channels(test_picture(w, h, i), i % 4 == 3 ? 1 : 3), coding));
    YCbCrPlanes layout, blocks;
    EntropyScan scan;
    ASSERT_TRUE(parse_entropy_scan(files.back().data(), files.back().size(), &layout, &scan, true));
    EXPECT_EQ(scan.progressive(), coding.progressive);
    ASSERT_TRUE(decode_jpeg_blocks(files.back(), &blocks));
    packed.push_back(EntropyDecoder::pack(scan, layout));
    layouts.push_back(layout);
    expected.push_back(std::move(blocks));
  }
  EXPECT_EQ(expect_batch_as_alone(decoder, packed, layouts, expected), 2u);
}

// What may stand between a progressive file's scans: COM and APPn segments and a DRI are read
// past (the blocks still libjpeg's); a DQT, or a byte that is no marker (libjpeg warns of
// extraneous data), makes the parser leave the file to libjpeg.
TEST(JpegEntropy, MarkersBetweenProgressiveScans) {
  EntropyDecoder decoder(runtime());
  LibjpegCoding coding;
  coding.progressive = true;
  const std::vector<std::uint8_t> good =
      libjpeg_jpeg(first_channels(test_picture(96, 64, 21), 3), coding);
  // The third scan's SOS marker.
  std::size_t at = 0;
  for (int seen = 0, i = 2; i + 1 < static_cast<int>(good.size()); ++i)
    if (good[i] == 0xFF && good[i + 1] == 0xDA && ++seen == 3) {
      at = static_cast<std::size_t>(i);
      break;
    }
  ASSERT_GT(at, 0u);
  const auto with = [&](std::vector<std::uint8_t> insert) {
    std::vector<std::uint8_t> jpeg = good;
    jpeg.insert(jpeg.begin() + static_cast<std::ptrdiff_t>(at), insert.begin(), insert.end());
    return jpeg;
  };
  const std::vector<std::uint8_t> comment = with({0xFF, 0xFE, 0x00, 0x05, 'a', 'b', 'c'});
  const std::vector<std::uint8_t> app = with({0xFF, 0xE3, 0x00, 0x04, 0x01, 0x02});
  const std::vector<std::uint8_t> no_restarts = with({0xFF, 0xDD, 0x00, 0x04, 0x00, 0x00});
  for (const auto* jpeg : {&comment, &app, &no_restarts}) expect_libjpeg_blocks(decoder, *jpeg);
  std::vector<std::uint8_t> dqt = {0xFF, 0xDB, 0x00, 0x43, 0x00};
  dqt.resize(dqt.size() + 64, 1);
  YCbCrPlanes layout, blocks;
  EntropyScan scan;
  // A JFIF APP0 of a version libjpeg does not know (it warns).
  const std::vector<std::uint8_t> jfif2 =
      with({0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00, 0x02, 0x01, 0x00, 0x00, 0x01, 0x00,
            0x01, 0x00, 0x00});
  for (const auto& refused : {with(dqt), with({0x00}), jfif2}) {
    EXPECT_FALSE(parse_entropy_scan(refused.data(), refused.size(), &layout, &scan, true));
  }
  EXPECT_TRUE(decode_jpeg_blocks(with(dqt), &blocks));  // libjpeg takes the DQT
}

// A scan must list its components in the frame's order (libjpeg's get_sos fails on [Cb, Y]):
// such a file is refused, as libjpeg refuses it.
TEST(JpegEntropy, ComponentsOutOfOrderInAScanAreRefused) {
  const auto scan = [](std::initializer_list<int> components, int ss, int se) {
    return progressive_scan(components, ss, se, 0, 0);
  };
  LibjpegCoding coding;
  coding.h = coding.v = 1;
  coding.script = {scan({2}, 0, 0), scan({0, 1}, 0, 0), scan({0}, 1, 63), scan({1}, 1, 63),
                   scan({2}, 1, 63)};
  std::vector<std::uint8_t> jpeg = libjpeg_jpeg(first_channels(test_picture(64, 48, 8), 3), coding);
  YCbCrPlanes layout, blocks;
  EntropyScan parsed;
  ASSERT_TRUE(parse_entropy_scan(jpeg.data(), jpeg.size(), &layout, &parsed, true));
  std::size_t sos = 0;  // the second scan's header
  for (int seen = 0, i = 2; i + 1 < static_cast<int>(jpeg.size()); ++i)
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA && ++seen == 2) {
      sos = static_cast<std::size_t>(i);
      break;
    }
  ASSERT_GT(sos, 0u);
  ASSERT_EQ(jpeg[sos + 4], 2);              // two components
  std::swap(jpeg[sos + 5], jpeg[sos + 7]);  // their ids: [Cb, Y]
  EXPECT_FALSE(decode_jpeg_blocks(jpeg, &blocks));
  EXPECT_FALSE(parse_entropy_scan(jpeg.data(), jpeg.size(), &layout, &parsed, true));
}

namespace {

// A greyscale progressive JPEG of width x height written code by code: a DC first scan in which
// every block's difference is +32767 (a table of one code, '0', for category 15), then one AC
// scan of an end-of-band code a block.
std::vector<std::uint8_t> dc_sum_jpeg(int width, int height) {
  std::vector<std::uint8_t> f = {0xFF, 0xD8};
  const auto segment = [&f](std::uint8_t marker, const std::vector<std::uint8_t>& payload) {
    const std::size_t length = payload.size() + 2;
    f.insert(f.end(), {0xFF, marker, static_cast<std::uint8_t>(length >> 8),
                       static_cast<std::uint8_t>(length & 255)});
    f.insert(f.end(), payload.begin(), payload.end());
  };
  std::vector<std::uint8_t> dqt(65, 1);
  dqt[0] = 0;
  segment(0xDB, dqt);
  segment(0xC2, {8, static_cast<std::uint8_t>(height >> 8), static_cast<std::uint8_t>(height & 255),
                 static_cast<std::uint8_t>(width >> 8), static_cast<std::uint8_t>(width & 255), 1,
                 1, 0x11, 0});
  for (const auto& [table, symbol] : {std::pair{0x00, 15}, std::pair{0x10, 0x00}}) {
    std::vector<std::uint8_t> dht(18, 0);
    dht[0] = static_cast<std::uint8_t>(table);
    dht[1] = 1;  // one code of length 1
    dht[17] = static_cast<std::uint8_t>(symbol);
    segment(0xC4, dht);
  }
  const std::size_t blocks = static_cast<std::size_t>((width + 7) / 8) * ((height + 7) / 8);
  const auto scan_data = [&f, blocks](int bits_a_block, std::uint32_t code) {
    std::uint32_t acc = 0;
    int n = 0;
    const auto put = [&](std::uint32_t bit) {
      acc = acc << 1 | bit;
      if (++n == 8) {
        f.push_back(static_cast<std::uint8_t>(acc));
        if (acc == 0xFF) f.push_back(0);
        acc = 0;
        n = 0;
      }
    };
    for (std::size_t b = 0; b < blocks; ++b)
      for (int i = bits_a_block - 1; i >= 0; --i) put(code >> i & 1);
    while (n) put(1);
  };
  segment(0xDA, {1, 1, 0x00, 0, 0, 0x00});
  scan_data(16, 0x7FFF);  // '0', then +32767 in 15 bits
  segment(0xDA, {1, 1, 0x00, 1, 63, 0x00});
  scan_data(1, 0);  // end of band
  f.insert(f.end(), {0xFF, 0xD9});
  return f;
}

}  // namespace

// DC values summed past an int: libjpeg stops (JERR_BAD_DCT_COEF), and so must the device
// (the file is left to libjpeg); one block fewer than that and both give the same blocks.
TEST(JpegEntropy, DcValuesPastAnIntAreLeftToLibjpeg) {
  EntropyDecoder decoder(runtime());
  expect_libjpeg_blocks(decoder, dc_sum_jpeg(2048, 2048), {1024});  // 65,536 x 32,767 < 2^31
  const std::vector<std::uint8_t> over = dc_sum_jpeg(2048, 2056);
  YCbCrPlanes blocks, layout;
  EXPECT_FALSE(decode_jpeg_blocks(over, &blocks));
  std::int32_t status[4] = {-1, -1, -1, -1};
  device_blocks(decoder, over, 0, status, &layout);
  EXPECT_EQ(status[0], 1);
  EXPECT_EQ(status[1], 4);
}
