// image/metadata.*: reading and writing what a file carries besides its pixels, on the host.
// End to end through the binary: tests/cli/test_metadata.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/metadata.h"
#include "tests/support/metadata_support.h"
#include "tests/support/orientation_support.h"

namespace blurtool {
namespace {

Bytes small_png() {
  return encode_image(upright(), ImageFormat::png, 95);
}
Bytes small_jpeg() {
  return encode_image(upright(), ImageFormat::jpeg, 90);
}

TEST(Metadata, ReadsCompressedXmpAndAnAspectRatioFromAPng) {
  const char key[] = "XML:com.adobe.xmp";
  const std::string packet = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>";
  Bytes itxt(key, key + sizeof key);
  itxt.insert(itxt.end(), {1, 0, 0, 0});  // compressed, deflate, no language or translation
  uLongf size = compressBound(static_cast<uLong>(packet.size()));
  Bytes z(size);
  compress(z.data(), &size, reinterpret_cast<const Bytef*>(packet.data()), packet.size());
  itxt.insert(itxt.end(), z.begin(), z.begin() + static_cast<std::ptrdiff_t>(size));
  Bytes png = with_chunk(small_png(), "iTXt", itxt);
  png = with_chunk(png, "pHYs", {0, 0, 0, 2, 0, 0, 0, 1, 0});  // 2:1 pixels, no unit
  const ImageMetadata m = read_metadata(png, "a.png");
  EXPECT_EQ(m.xmp, packet);
  ASSERT_TRUE(m.resolution);
  EXPECT_EQ(m.resolution->unit, Resolution::Unit::none);
  EXPECT_EQ(m.resolution->x, 2);
  EXPECT_EQ(m.resolution->y, 1);
  // Written back uncompressed, and the aspect ratio without a unit.
  Bytes out = small_png();
  insert_metadata(out, ImageFormat::png, m, "b.png");
  EXPECT_EQ(xmp_of(out), packet);
  Bytes phys;
  for (const auto& [type, data] : png_chunk_list(out))
    if (type == "pHYs") phys = data;
  EXPECT_EQ(phys, (Bytes{0, 0, 0, 2, 0, 0, 0, 1, 0}));
}

TEST(Metadata, ADamagedIccpIsLeftOutWithAWarningAndTheRestIsRead) {
  Bytes png = with_chunk(small_png(), "iCCP", {'p', 0, 0, 0x78, 0x9C, 1, 2, 3});
  png = with_chunk(png, "gAMA", {0, 0, 0xB1, 0x8F});
  std::vector<std::string> warnings;
  const ImageMetadata m = read_metadata(png, "bad.png", &warnings);
  EXPECT_TRUE(m.icc.empty());
  EXPECT_EQ(m.gama, (Bytes{0, 0, 0xB1, 0x8F}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "bad.png: its iCCP chunk does not inflate; the ICC profile is left out");
}

TEST(Metadata, ExifWithoutTagsIsDroppedQuietlyAndUnreadableExifWithAWarning) {
  ImageMetadata m;
  m.exif = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0};  // IFD0 of no entries
  std::vector<std::string> warnings;
  EXPECT_TRUE(metadata_for_output(m, KeepMetadata::all, true, "empty.jpg", &warnings).exif.empty());
  EXPECT_TRUE(warnings.empty());
  m.exif = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 3, 0xFF, 0xFF};  // 3 entries, cut
  EXPECT_TRUE(metadata_for_output(m, KeepMetadata::all, true, "cut.jpg", &warnings).exif.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "cut.jpg: its EXIF data cannot be read; it is left out");
}

TEST(Metadata, OrientationIsResetOnlyWhereThePixelsWereTurned) {
  ImageMetadata m;
  const Bytes exif = exif_with_orientation(8, EXIF_BYTE_ORDER_MOTOROLA);
  m.exif.assign(exif.begin() + 6, exif.end());  // without "Exif\0\0"
  auto orientation = [](const ImageMetadata& out) {
    Bytes jpeg = small_jpeg();
    insert_metadata(jpeg, ImageFormat::jpeg, out, "o.jpg");
    return exif_orientation(jpeg);
  };
  EXPECT_EQ(orientation(metadata_for_output(m, KeepMetadata::all, true, "a.jpg")), 1);
  EXPECT_EQ(orientation(metadata_for_output(m, KeepMetadata::all, false, "a.jpg")), 8);
  EXPECT_TRUE(metadata_for_output(m, KeepMetadata::colour, true, "a.jpg").exif.empty());
}

TEST(Metadata, SrgbIsToldFromTheProfileDescriptionAndThePngChunks) {
  ImageMetadata m;
  EXPECT_TRUE(colour_is_srgb(m));  // nothing said: sRGB
  m.icc = read_bytes("/usr/share/color/icc/sRGB.icc");
  ASSERT_FALSE(m.icc.empty());
  EXPECT_TRUE(colour_is_srgb(m));
  m.icc = read_bytes(kAdobeRgbProfile);
  EXPECT_FALSE(colour_is_srgb(m));
  m.icc = {1, 2, 3};  // not a profile
  EXPECT_FALSE(colour_is_srgb(m));
  m.icc.clear();
  m.gama = {0, 0, 0xB1, 0x8F};
  EXPECT_FALSE(colour_is_srgb(m));
  m.srgb_intent = 0;
  EXPECT_TRUE(colour_is_srgb(m));
}

TEST(Metadata, InsertionPointsNeedTheWholeHeader) {
  const Bytes png = small_png(), jpeg = small_jpeg();
  EXPECT_EQ(metadata_insertion_point(png.data(), 32, ImageFormat::png), 0u);
  EXPECT_EQ(metadata_insertion_point(png.data(), 33, ImageFormat::png), 33u);
  EXPECT_EQ(metadata_insertion_point(jpeg.data(), 19, ImageFormat::jpeg), 0u);
  EXPECT_EQ(metadata_insertion_point(jpeg.data(), 20, ImageFormat::jpeg), 20u);  // after JFIF
  const Bytes no_jfif = {0xFF, 0xD8, 0xFF, 0xDB, 0, 4};
  EXPECT_EQ(metadata_insertion_point(no_jfif.data(), no_jfif.size(), ImageFormat::jpeg), 2u);
}

}  // namespace
}  // namespace blurtool
