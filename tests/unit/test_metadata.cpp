// image/metadata.*: reading and writing what a file carries besides its pixels, on the host.
// End to end through the binary: tests/cli/test_metadata.cpp.
#include <gtest/gtest.h>
#include <libexif/exif-data.h>

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

// EXIF saved by libexif with `build` adding the entries, without "Exif\0\0".
template <typename Build>
Bytes make_exif(Build build) {
  ExifData* data = exif_data_new();
  exif_data_set_byte_order(data, EXIF_BYTE_ORDER_INTEL);
  build(data);
  unsigned char* saved = nullptr;
  unsigned int size = 0;
  exif_data_save_data(data, &saved, &size);
  Bytes out(saved + 6, saved + size);
  std::free(saved);
  exif_data_unref(data);
  return out;
}

void add_entry(ExifData* data, ExifIfd ifd, ExifTag tag) {
  ExifEntry* e = exif_entry_new();
  exif_content_add_entry(data->ifd[ifd], e);
  exif_entry_initialize(e, tag);
  exif_entry_unref(e);
}

TEST(Metadata, AnOrientationStoredAsLongIsResetToo) {
  // Big-endian TIFF, IFD0 of one entry: Orientation, LONG, 6 (the decoder's libexif reads it).
  ImageMetadata m;
  m.exif = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0,
            4,   0,   0, 0,  1, 0, 0, 0, 6, 0, 0,    0,    0};
  Bytes jpeg = small_jpeg();
  Bytes tagged = with_segment(jpeg, 0xE1, [&] {
    Bytes p = {'E', 'x', 'i', 'f', 0, 0};
    p.insert(p.end(), m.exif.begin(), m.exif.end());
    return p;
  }());
  ASSERT_EQ(exif_orientation(tagged), 6);  // what the decoder turns the pixels by
  insert_metadata(jpeg, ImageFormat::jpeg, metadata_for_output(m, KeepMetadata::all, true, "l.jpg"),
                  "o.jpg");
  EXPECT_EQ(exif_orientation(jpeg), 1);
}

TEST(Metadata, ExifOfSubIfdsOnlyIsKeptAndTheMakerNoteDropped) {
  ImageMetadata m;
  m.exif = make_exif([](ExifData* d) {
    add_entry(d, EXIF_IFD_EXIF, EXIF_TAG_DATE_TIME_ORIGINAL);
    ExifEntry* note = exif_entry_new();
    exif_content_add_entry(d->ifd[EXIF_IFD_EXIF], note);
    note->tag = EXIF_TAG_MAKER_NOTE;
    note->format = EXIF_FORMAT_UNDEFINED;
    note->components = 8;
    note->size = 8;
    note->data = static_cast<unsigned char*>(std::calloc(8, 1));
    exif_entry_unref(note);
  });
  std::vector<std::string> warnings;
  const ImageMetadata out = metadata_for_output(m, KeepMetadata::all, true, "s.jpg", &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_FALSE(out.exif.empty());
  Bytes with_id = {'E', 'x', 'i', 'f', 0, 0};
  with_id.insert(with_id.end(), out.exif.begin(), out.exif.end());
  ExifData* d = exif_data_new_from_data(with_id.data(), static_cast<unsigned>(with_id.size()));
  EXPECT_NE(exif_content_get_entry(d->ifd[EXIF_IFD_EXIF], EXIF_TAG_DATE_TIME_ORIGINAL), nullptr);
  EXPECT_EQ(exif_content_get_entry(d->ifd[EXIF_IFD_EXIF], EXIF_TAG_MAKER_NOTE), nullptr);
  exif_data_unref(d);
}

TEST(Metadata, XmpLosesItsThumbnailsAndItsOrientationOnceUpright) {
  ImageMetadata m;
  m.xmp =
      "<rdf:Description tiff:Orientation=\"6\"><tiff:Orientation>6</tiff:Orientation>"
      "<xmp:Thumbnails><rdf:Alt><rdf:li xmpGImg:image=\"/9j/UNBLURRED\"/></rdf:Alt>"
      "</xmp:Thumbnails><dc:title>t</dc:title></rdf:Description>";
  const std::string up = metadata_for_output(m, KeepMetadata::all, true, "x.jpg").xmp;
  EXPECT_EQ(up,
            "<rdf:Description tiff:Orientation=\"1\"><tiff:Orientation>1</tiff:Orientation>"
            "<dc:title>t</dc:title></rdf:Description>");
  const std::string stored = metadata_for_output(m, KeepMetadata::all, false, "x.jpg").xmp;
  EXPECT_NE(stored.find("tiff:Orientation=\"6\""), std::string::npos);
  EXPECT_EQ(stored.find("UNBLURRED"), std::string::npos);
}

TEST(Metadata, AProfileMustDescribeThePixelsWritten) {
  ImageMetadata m;
  m.icc = read_bytes(kAdobeRgbProfile);
  std::vector<std::string> warnings;
  EXPECT_TRUE(metadata_for_pixels(m, ImageFormat::png, 1, "g.png", &warnings).icc.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "g.png: the input's ICC profile describes 'RGB ' colour, not the grey "
            "pixels written; it is left out");
  EXPECT_EQ(metadata_for_pixels(m, ImageFormat::png, 3, "c.png").icc, m.icc);
  EXPECT_EQ(metadata_for_pixels(m, ImageFormat::webp, 1, "c.webp").icc, m.icc);  // RGB in WebP
  // Grey with gAMA: a grey profile in a JPEG, an RGB one for colour pixels.
  ImageMetadata g;
  g.gama = {0, 0, 0xB1, 0x8F};
  const Bytes grey = metadata_for_pixels(g, ImageFormat::jpeg, 1, "g.jpg").icc;
  ASSERT_GE(grey.size(), 128u);
  EXPECT_EQ(std::string(grey.begin() + 16, grey.begin() + 20), "GRAY");
  const Bytes rgb = metadata_for_pixels(g, ImageFormat::jpeg, 3, "c.jpg").icc;
  ASSERT_GE(rgb.size(), 128u);
  EXPECT_EQ(std::string(rgb.begin() + 16, rgb.begin() + 20), "RGB ");
  EXPECT_TRUE(metadata_for_pixels(g, ImageFormat::png, 1, "g.png").icc.empty());  // gAMA kept
}

// A TIFF's orientation is metadata like EXIF's: set to 1 once the pixels are upright, dropped
// with EXIF by --strip, kept for a TIFF output of pixels as stored and, where the output format
// cannot carry it, dropped with a warning; a TIFF output drops EXIF with a warning.
TEST(Metadata, ATiffOrientationGoesWhereTheExifOrientationGoes) {
  ImageMetadata m;
  m.orientation = 6;
  m.exif = {'I', 'I', 42, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(m.empty());
  EXPECT_EQ(metadata_for_output(m, KeepMetadata::all, true, "t.tif").orientation, 1);
  EXPECT_EQ(metadata_for_output(m, KeepMetadata::all, false, "t.tif").orientation, 6);
  EXPECT_EQ(metadata_for_output(m, KeepMetadata::colour, false, "t.tif").orientation, 1);
  EXPECT_EQ(metadata_for_output(m, KeepMetadata::none, false, "t.tif").orientation, 1);
  std::vector<std::string> warnings;
  const ImageMetadata tiff = metadata_for_pixels(m, ImageFormat::tiff, 3, "o.tif", &warnings);
  EXPECT_EQ(tiff.orientation, 6);
  EXPECT_TRUE(tiff.exif.empty());
  EXPECT_EQ(warnings, std::vector<std::string>{"o.tif: TIFF output does not carry EXIF; left out"});
  warnings.clear();
  m.exif.clear();
  for (const ImageFormat f : {ImageFormat::png, ImageFormat::jpeg, ImageFormat::webp}) {
    EXPECT_EQ(metadata_for_pixels(m, f, 3, "o.png", &warnings).orientation, 1);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0],
              "o.png: the input's TIFF orientation (6) is not carried to this format; its pixels "
              "are written as stored");
    warnings.clear();
  }
  m.orientation = 1;
  EXPECT_TRUE(m.empty());
  metadata_for_pixels(m, ImageFormat::png, 3, "o.png", &warnings);
  EXPECT_TRUE(warnings.empty());
}

TEST(Metadata, OnlyTheFirstIccpBeforeIdatCountsAndAProfileNeedsItsSignature) {
  // Two damaged iCCP chunks: one inflation, one warning.
  Bytes png = with_chunk(small_png(), "iCCP", {'a', 0, 0, 0x78, 0x9C, 1});
  png = with_chunk(png, "iCCP", {'b', 0, 0, 0x78, 0x9C, 2});
  std::vector<std::string> warnings;
  EXPECT_TRUE(read_metadata(png, "two.png", &warnings).icc.empty());
  EXPECT_EQ(warnings.size(), 1u);
  // A whole profile after IDAT is not the image's.
  const Bytes profile = read_bytes(kAdobeRgbProfile);
  const Bytes good = with_iccp(small_png(), profile);
  const auto chunks = png_chunk_list(good);
  const Bytes plain = small_png();
  Bytes late(plain.begin(), plain.end() - 12);  // without IEND
  for (const auto& [type, data] : chunks)
    if (type == "iCCP") {
      late.insert(late.end(), good.begin() + 33,
                  good.begin() + 33 + 12 + static_cast<std::ptrdiff_t>(data.size()));
    }
  const Bytes iend = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  late.insert(late.end(), iend.begin(), iend.end());
  EXPECT_TRUE(read_metadata(late, "late.png").icc.empty());
  EXPECT_EQ(read_metadata(good, "good.png").icc, profile);
  // Bytes without "acsp" are no profile.
  warnings.clear();
  Bytes junk(600, 0);
  EXPECT_TRUE(read_metadata(with_iccp(small_png(), junk), "junk.png", &warnings).icc.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "junk.png: its ICC profile is not one (no 'acsp' signature); it is left out");
}

TEST(Metadata, JpegProfileChunksAreJoinedBySequenceNotFileOrder) {
  const Bytes profile = read_bytes(kAdobeRgbProfile);
  const std::size_t half = profile.size() / 2;
  auto chunk = [&](int seq) {
    Bytes p = {
        'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0, static_cast<std::uint8_t>(seq),
        2};
    p.insert(p.end(), profile.begin() + (seq == 1 ? 0 : half),
             seq == 1 ? profile.begin() + half : profile.end());
    return p;
  };
  // Each goes right after SOI: chunk 2 ends up first in the file.
  const Bytes jpeg = with_segment(with_segment(small_jpeg(), 0xE2, chunk(1)), 0xE2, chunk(2));
  EXPECT_EQ(jpeg_segment_list(jpeg)[0].second[12], 2);
  EXPECT_EQ(read_metadata(jpeg, "swapped.jpg").icc, profile);
}

}  // namespace
}  // namespace blurtool
