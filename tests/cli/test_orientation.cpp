// EXIF orientation end to end: a JPEG tagged with an orientation is blurred upright, or as stored
// with --no-orient, in single and batch mode; a TIFF's Orientation tag likewise. The JPEGs are made
// by support/orientation_support.h; the decoding itself: tests/unit/test_orientation.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/metadata.h"
#include "tests/support/cli_support.h"
#include "tests/support/orientation_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

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

// A TIFF whose Orientation tag (written by libtiff) is 6 is blurred upright, exactly as the
// upright picture from a PNG and as the CPU reference, and as the same picture from a JPEG with
// EXIF orientation 6 (within JPEG's loss); a 16-bit one tagged 8 too. With --no-orient it is
// blurred as stored, and a TIFF output keeps orientation 6 (so that it shows as the input did,
// as a JPEG's EXIF orientation is kept) while a PNG output says it cannot; a TIFF output of
// upright pixels is tagged 1.
TEST_F(OrientationCli, ATiffOrientationTagIsAppliedAsTheExifOrientationIs) {
  const Image shown = random_image(61, 37, 3, 5);
  const Image stored = stored_for(shown, 6);
  const auto bytes = [](const std::vector<std::uint8_t>& b) {
    return std::string(b.begin(), b.end());
  };
  write_file(root_ / "phone.tif", bytes(tagged_tiff(stored, 6)));
  write_file(root_ / "upright.png", bytes(encode_image(shown, ImageFormat::png, 95)));
  EncodeOptions fine;  // JPEG's loss small: quality 100, chroma at full resolution
  fine.jpeg_quality = 100;
  fine.jpeg_subsampling = ChromaSubsampling::s444;
  write_file(root_ / "phone.jpg",
             bytes(with_app1(encode_image(stored, ImageFormat::jpeg, fine),
                             exif_with_orientation(6, EXIF_BYTE_ORDER_INTEL))));
  for (const char* name : {"phone.tif", "upright.png", "phone.jpg"}) {
    const Result r = run({"2", name, std::string(name) + ".png"});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
  }
  const Image from_tiff = load_image((root_ / "phone.tif.png").string());
  EXPECT_EQ(max_diff(from_tiff, expected_box(shown, 2, EdgeMode::clamp)), 0);
  EXPECT_EQ(max_diff(from_tiff, load_image((root_ / "upright.png.png").string())), 0);
  EXPECT_LE(max_diff(from_tiff, load_image((root_ / "phone.jpg.png").string())), 3);

  // 16 bits, orientation 8.
  Image16 shown16{23, 41, 3, PixelVector<std::uint16_t>(23 * 41 * 3)};
  for (std::size_t i = 0; i < shown16.pixels.size(); ++i)
    shown16.pixels[i] = static_cast<std::uint16_t>(i * 2654435761u >> 9);
  write_file(root_ / "deep.tif", bytes(tagged_tiff(stored_for(shown16, 8), 8)));
  Result r = run({"2", "deep.tif", "deep.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  const DecodedImage deep = load_image_wide((root_ / "deep.png").string());
  ASSERT_TRUE(deep.is_wide());
  EXPECT_TRUE(deep.wide.pixels == box_blur_reference(shown16, 2, EdgeMode::clamp).pixels);
  EXPECT_EQ(deep.wide.width, 23);

  // --no-orient: as stored; a TIFF output keeps the tag, a PNG output cannot and says so.
  r = run({"2", "--no-orient", "phone.tif", "stored.tif"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string kept = (root_ / "stored.tif").string();
  EXPECT_EQ(max_diff(load_image(kept, nullptr, kDefaultMaxPixels, kDefaultMaxFileBytes, false),
                     expected_box(stored, 2, EdgeMode::clamp)),
            0);
  EXPECT_EQ(read_metadata(read_image_file(kept), kept).orientation, 6);
  EXPECT_EQ(max_diff(load_image(kept), from_tiff), 0);  // shown as the input was
  r = run({"2", "--no-orient", "phone.tif", "stored.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("the input's TIFF orientation (6) is not carried"), std::string::npos)
      << r.err;
  EXPECT_EQ(load_image((root_ / "stored.png").string()).width, stored.width);
  r = run({"2", "phone.tif", "upright.tif"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string up = (root_ / "upright.tif").string();
  EXPECT_EQ(read_metadata(read_image_file(up), up).orientation, 1);
  EXPECT_EQ(max_diff(load_image(up), from_tiff), 0);
}

}  // namespace
}  // namespace blurtool
