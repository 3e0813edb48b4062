// EXIF orientation: JPEGs carrying each of the 8 orientations (an APP1 segment made by libexif,
// in both byte orders) decode upright, as a viewer shows them, and as stored with --no-orient;
// damaged or missing EXIF data means upright. The expected pictures are built from the tag's
// definition (where the stored 0th row and 0th column lie when shown), not from the code under
// test.
#include <gtest/gtest.h>
#include <libexif/exif-data.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "tests/cli_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// The upright picture: 48x32 RGB, four solid quadrants (red, green / blue, white).
constexpr int kW = 48, kH = 32;
const std::uint8_t kQuadrant[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};

Image upright() {
  Image img{kW, kH, 3, PixelVector<std::uint8_t>(kW * kH * 3, 0)};
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      for (int c = 0; c < 3; ++c)
        img.pixels[img.index(x, y, c)] = kQuadrant[(y >= kH / 2) * 2 + (x >= kW / 2)][c];
  return img;
}

// Where the stored image's 0th row and 0th column lie when shown, per orientation (EXIF 2.3,
// tag 0x0112): Top, Bottom, Left, Right.
struct Placement {
  char row, column;
};
const Placement kPlacement[9] = {{},         {'T', 'L'}, {'T', 'R'}, {'B', 'R'}, {'B', 'L'},
                                 {'L', 'T'}, {'R', 'T'}, {'R', 'B'}, {'L', 'B'}};

// The stored pixels that a viewer shows as `shown` under orientation o.
Image stored_for(const Image& shown, int o) {
  const Placement p = kPlacement[o];
  const bool rows_across = p.row == 'T' || p.row == 'B';  // stored rows run across the picture
  const int w = shown.width, h = shown.height;
  Image s{rows_across ? w : h, rows_across ? h : w, shown.channels,
          PixelVector<std::uint8_t>(shown.pixels.size(), 0)};
  for (int sy = 0; sy < s.height; ++sy) {
    for (int sx = 0; sx < s.width; ++sx) {
      int x, y;
      if (rows_across) {
        y = p.row == 'T' ? sy : h - 1 - sy;
        x = p.column == 'L' ? sx : w - 1 - sx;
      } else {
        x = p.row == 'L' ? sy : w - 1 - sy;
        y = p.column == 'T' ? sx : h - 1 - sx;
      }
      for (int c = 0; c < shown.channels; ++c)
        s.pixels[s.index(sx, sy, c)] = shown.pixels[shown.index(x, y, c)];
    }
  }
  return s;
}

// `jpeg` with an APP1 segment right after SOI holding `exif` ("Exif\0\0" and a TIFF structure).
std::vector<std::uint8_t> with_app1(const std::vector<std::uint8_t>& jpeg,
                                    const std::vector<std::uint8_t>& exif) {
  const size_t length = exif.size() + 2;
  const std::uint8_t marker[] = {0xFF, 0xE1, static_cast<std::uint8_t>(length >> 8),
                                 static_cast<std::uint8_t>(length & 0xFF)};
  std::vector<std::uint8_t> out(jpeg.size() + 4 + exif.size());
  std::copy(jpeg.begin(), jpeg.begin() + 2, out.begin());  // SOI
  std::copy(std::begin(marker), std::end(marker), out.begin() + 2);
  std::copy(exif.begin(), exif.end(), out.begin() + 6);
  std::copy(jpeg.begin() + 2, jpeg.end(), out.begin() + 6 + exif.size());
  return out;
}

// EXIF data holding orientation `o` in IFD0, written by libexif in byte order `order`.
std::vector<std::uint8_t> exif_with_orientation(int o, ExifByteOrder order) {
  ExifData* data = exif_data_new();
  exif_data_set_byte_order(data, order);
  ExifEntry* entry = exif_entry_new();
  exif_content_add_entry(data->ifd[EXIF_IFD_0], entry);
  exif_entry_initialize(entry, EXIF_TAG_ORIENTATION);
  exif_set_short(entry->data, order, static_cast<ExifShort>(o));
  unsigned char* bytes = nullptr;
  unsigned int size = 0;
  exif_data_save_data(data, &bytes, &size);
  std::vector<std::uint8_t> out(bytes, bytes + size);
  std::free(bytes);
  exif_entry_unref(entry);
  exif_data_unref(data);
  return out;
}

// The picture stored for orientation o, as a JPEG (quality 100) tagged with o.
std::vector<std::uint8_t> tagged_jpeg(int o, ExifByteOrder order) {
  return with_app1(encode_image(stored_for(upright(), o), ImageFormat::jpeg, 100),
                   exif_with_orientation(o, order));
}

// Whether each quadrant's centre of `got` has the upright picture's colour (JPEG: within 24).
::testing::AssertionResult is_upright(const Image& got) {
  if (got.width != kW || got.height != kH)
    return ::testing::AssertionFailure()
           << got.width << "x" << got.height << ", want " << kW << "x" << kH;
  for (int q = 0; q < 4; ++q) {
    const int x = (q % 2) * kW / 2 + kW / 4, y = (q / 2) * kH / 2 + kH / 4;
    for (int c = 0; c < 3; ++c) {
      const int d = std::abs(int(got.pixels[got.index(x, y, c)]) - int(kQuadrant[q][c]));
      if (d > 24)
        return ::testing::AssertionFailure()
               << "quadrant " << q << " channel " << c << " off by " << d;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(Orientation, EachOfTheEightDecodesUpright) {
  for (int o = 1; o <= 8; ++o) {
    for (ExifByteOrder order : {EXIF_BYTE_ORDER_MOTOROLA, EXIF_BYTE_ORDER_INTEL}) {
      const std::vector<std::uint8_t> jpeg = tagged_jpeg(o, order);
      EXPECT_EQ(exif_orientation(jpeg), o);
      EXPECT_TRUE(is_upright(decode_image(jpeg, "tagged.jpg"))) << "orientation " << o;
      // Without orientation the stored pixels come back as they are.
      const Image stored = decode_image(jpeg, "tagged.jpg", nullptr, kDefaultMaxPixels, false);
      EXPECT_EQ(stored.width, o >= 5 ? kH : kW) << "orientation " << o;
      if (o != 1) {
        EXPECT_FALSE(is_upright(stored)) << "orientation " << o;
      }
    }
  }
}

TEST(Orientation, MissingOrDamagedExifMeansUpright) {
  const std::vector<std::uint8_t> plain = encode_image(upright(), ImageFormat::jpeg, 100);
  EXPECT_EQ(exif_orientation(plain), 1);
  EXPECT_EQ(exif_orientation(encode_image(upright(), ImageFormat::png, 0)), 1);
  EXPECT_EQ(exif_orientation({}), 1);
  // An EXIF header followed by garbage, a value out of range, an EXIF segment after a damaged
  // marker: all upright, and the image still decodes.
  std::vector<std::uint8_t> garbage = {'E', 'x', 'i', 'f', 0, 0};
  for (int i = 0; i < 40; ++i) garbage.push_back(static_cast<std::uint8_t>(i * 37));
  const std::vector<std::uint8_t> damaged = with_app1(plain, garbage);
  EXPECT_EQ(exif_orientation(damaged), 1);
  EXPECT_TRUE(is_upright(decode_image(damaged, "damaged.jpg")));
  const std::vector<std::uint8_t> nine =
      with_app1(plain, exif_with_orientation(9, EXIF_BYTE_ORDER_INTEL));
  EXPECT_EQ(exif_orientation(nine), 1);
  EXPECT_TRUE(is_upright(decode_image(nine, "nine.jpg")));
  std::vector<std::uint8_t> truncated = tagged_jpeg(6, EXIF_BYTE_ORDER_INTEL);
  truncated.resize(30);
  EXPECT_EQ(exif_orientation(truncated), 1);
}

TEST(Orientation, ApplyKeepsEveryPixelAndChannelCount) {
  Image rgba{5, 3, 4, {}};
  for (int i = 0; i < 5 * 3 * 4; ++i) rgba.pixels.push_back(static_cast<std::uint8_t>(i));
  for (int o = 1; o <= 8; ++o) {
    const Image turned = apply_orientation(rgba, o);
    EXPECT_EQ(turned.channels, 4);
    EXPECT_EQ(turned.width * turned.height, 15);
    // The inverse of stored_for: what a viewer shows from the stored pixels.
    EXPECT_EQ(stored_for(turned, o).pixels, rgba.pixels) << "orientation " << o;
  }
}

class OrientationCli : public SubcommandCli {
 protected:
  OrientationCli() : SubcommandCli("--box") {}
};

TEST_F(OrientationCli, BlurWritesTheUprightPictureAndNoOrientKeepsTheStoredOne) {
  write_file(root_ / "phone.jpg", [] {
    const std::vector<std::uint8_t> b = tagged_jpeg(6, EXIF_BYTE_ORDER_MOTOROLA);
    return std::string(b.begin(), b.end());
  }());
  Result r = run({"1", "phone.jpg", "upright.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Image out = load_image((root_ / "upright.png").string());
  EXPECT_EQ(out.width, kW);
  EXPECT_EQ(out.height, kH);
  r = run({"1", "--no-orient", "phone.jpg", "stored.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Image stored = load_image((root_ / "stored.png").string());
  EXPECT_EQ(stored.width, kH);
  EXPECT_EQ(stored.height, kW);
  // Batch mode turns it too.
  fs::create_directories(root_ / "in");
  fs::copy_file(root_ / "phone.jpg", root_ / "in" / "phone.jpg");
  r = run({"1", "in", "out/"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(load_image((root_ / "out" / "phone.jpg").string()).width, kW);
}

}  // namespace
}  // namespace blurtool
