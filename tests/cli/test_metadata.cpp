// What a photographer expects to survive, through the binary: the ICC profile on every output
// path (single image, batch, strips, device JPEG; PNG and JPEG each way), EXIF with its
// orientation set to 1 and its thumbnail dropped, XMP, the resolution, and --strip. The files
// are read back by tests/support/metadata_support.h, written from the specifications.
#include <gtest/gtest.h>
#include <libexif/exif-data.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/metadata.h"
#include "tests/support/cli_fixture.h"
#include "tests/support/cli_support.h"
#include "tests/support/metadata_support.h"
#include "tests/support/orientation_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

class MetadataCli : public SubcommandCli {
 protected:
  MetadataCli() : SubcommandCli("--box") {}
  std::string at(const std::string& name) const { return (root_ / name).string(); }
  Bytes out(const std::string& name) const { return read_bytes(at(name)); }
};

// The EXIF orientation and whether a thumbnail is there, read by libexif.
struct ExifFacts {
  int orientation = 0;  // 0: no tag
  bool thumbnail = false;
  bool loaded = false;
};

ExifFacts exif_facts(const Bytes& tiff) {
  ExifFacts f;
  if (tiff.empty()) return f;
  Bytes with_id = {'E', 'x', 'i', 'f', 0, 0};
  with_id.insert(with_id.end(), tiff.begin(), tiff.end());
  std::unique_ptr<ExifData, void (*)(ExifData*)> d(
      exif_data_new_from_data(with_id.data(), static_cast<unsigned>(with_id.size())),
      exif_data_unref);
  if (!d) return f;
  f.loaded = true;
  if (ExifEntry* e = exif_content_get_entry(d->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION))
    f.orientation = exif_get_short(e->data, exif_data_get_byte_order(d.get()));
  f.thumbnail = d->data != nullptr && d->size > 0;
  return f;
}

TEST_F(MetadataCli, AnAdobeRgbProfileSurvivesEveryOutputPath) {
  const Bytes profile = read_bytes(kAdobeRgbProfile);
  ASSERT_GT(profile.size(), 128u) << kAdobeRgbProfile << " (Debian's icc-profiles-free)";
  // A real photo of each format carrying the profile; the JPEG's in chunks of 200 bytes, so
  // that the reader joins several.
  write_bytes(at("adobe.jpg"), with_icc_segments(read_bytes(kDune), profile, 200));
  write_bytes(at("adobe.png"), with_iccp(read_bytes(kCoffee), profile));
  ASSERT_EQ(icc_of(out("adobe.jpg")), profile);
  ASSERT_EQ(icc_of(out("adobe.png")), profile);
  struct Case {
    std::vector<std::string> extra;
    std::string what;
  };
  const std::vector<Case> cases = {{{}, "one piece"},
                                   {{"--max-memory", "8M"}, "in strips"},
                                   {{"--max-tile", "512x512"}, "in tiles"},
                                   {{"--jpeg-codec", "device"}, "device JPEG colour"}};
  for (const Case& c : cases) {
    for (const std::string in : {"adobe.jpg", "adobe.png"}) {
      for (const std::string ext : {".jpg", ".png"}) {
        const std::string output = "out" + ext;
        std::vector<std::string> args = {"2", "--force"};
        args.insert(args.end(), c.extra.begin(), c.extra.end());
        args.insert(args.end(), {in, output});
        const Result r = run(args);
        ASSERT_EQ(r.status, 0) << c.what << " " << in << " -> " << output << ": " << r.err;
        EXPECT_EQ(r.err, "") << c.what << " " << in << " -> " << output;
        EXPECT_EQ(icc_of(out(output)), profile) << c.what << " " << in << " -> " << output;
      }
    }
  }
  // TIFF and WebP outputs carry it as a tag or a chunk (read back by image/metadata.h, whose
  // TIFF and WebP readers are checked against libtiff and libwebp in the unit tests).
  for (const std::string in : {"adobe.jpg", "adobe.png"}) {
    for (const std::string output : {"out.tif", "out.webp"}) {
      const Result r = run({"2", "--force", in, output});
      ASSERT_EQ(r.status, 0) << in << " -> " << output << ": " << r.err;
      EXPECT_EQ(read_metadata(out(output), output).icc, profile) << in << " -> " << output;
    }
    ASSERT_EQ(run({"2", "--force", "out.webp", "back.jpg"}).status, 0);
    EXPECT_EQ(icc_of(out("back.jpg")), profile) << in << " -> webp -> jpg";
    ASSERT_EQ(run({"2", "--force", "out.tif", "back.png"}).status, 0);
    EXPECT_EQ(icc_of(out("back.png")), profile) << in << " -> tif -> png";
  }
  // A batch, to each format.
  fs::create_directories(root_ / "in");
  fs::copy_file(at("adobe.jpg"), root_ / "in" / "a.jpg");
  fs::copy_file(at("adobe.png"), root_ / "in" / "b.png");
  for (const std::string format : {"jpg", "png"}) {
    const Result r = run({"2", "--format", format, "in", "batch-" + format + "/"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(icc_of(out("batch-" + format + "/a." + format)), profile) << format;
    EXPECT_EQ(icc_of(out("batch-" + format + "/b." + format)), profile) << format;
  }
}

TEST_F(MetadataCli, AProfileLargerThanOneSegmentIsSplitAndJoined) {
  // 150,000 bytes: three APP2 chunks in a JPEG (at most 65,519 profile bytes each).
  Bytes profile = read_bytes(kAdobeRgbProfile);
  profile.resize(150000, 0x5A);
  write_bytes(at("big.png"), with_iccp(read_bytes(kCoffee), profile));
  Result r = run({"2", "big.png", "big.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  int chunks = 0;
  for (const auto& [marker, payload] : jpeg_segment_list(out("big.jpg")))
    if (marker == 0xE2) {
      ++chunks;
      EXPECT_EQ(payload[13], 3) << "chunk count";
      EXPECT_EQ(payload[12], chunks) << "sequence number";
    }
  EXPECT_EQ(chunks, 3);
  EXPECT_EQ(icc_of(out("big.jpg")), profile);
  r = run({"2", "big.jpg", "again.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(icc_of(out("again.png")), profile);
}

TEST_F(MetadataCli, ExifOrientationSixComesOutUprightWithOrientationOneAndNoThumbnail) {
  // A phone photo: orientation 6 and a thumbnail (a small JPEG of the unblurred picture).
  const Bytes thumbnail = encode_image(upright(), ImageFormat::jpeg, 50);
  ExifData* data = exif_data_new();
  exif_data_set_byte_order(data, EXIF_BYTE_ORDER_INTEL);
  ExifEntry* entry = exif_entry_new();
  exif_content_add_entry(data->ifd[EXIF_IFD_0], entry);
  exif_entry_initialize(entry, EXIF_TAG_ORIENTATION);
  exif_set_short(entry->data, EXIF_BYTE_ORDER_INTEL, 6);
  ExifEntry* x_resolution = exif_entry_new();
  exif_content_add_entry(data->ifd[EXIF_IFD_0], x_resolution);
  exif_entry_initialize(x_resolution, EXIF_TAG_X_RESOLUTION);
  data->data = static_cast<unsigned char*>(std::malloc(thumbnail.size()));
  std::copy(thumbnail.begin(), thumbnail.end(), data->data);
  data->size = static_cast<unsigned>(thumbnail.size());
  unsigned char* saved = nullptr;
  unsigned int size = 0;
  exif_data_save_data(data, &saved, &size);
  const Bytes exif(saved, saved + size);
  std::free(saved);
  exif_entry_unref(entry);
  exif_entry_unref(x_resolution);
  exif_data_unref(data);
  write_bytes(at("phone.jpg"),
              with_app1(encode_image(stored_for(upright(), 6), ImageFormat::jpeg, 100), exif));
  const ExifFacts in = exif_facts(exif_of(out("phone.jpg")));
  ASSERT_TRUE(in.loaded);
  ASSERT_EQ(in.orientation, 6);
  ASSERT_TRUE(in.thumbnail);

  for (const std::string output : {"up.jpg", "up.png"}) {
    const Result r = run({"1", "phone.jpg", output});
    ASSERT_EQ(r.status, 0) << r.err;
    const Image img = load_image(at(output));
    EXPECT_EQ(img.width, kW) << output;
    EXPECT_EQ(img.height, kH) << output;
    const ExifFacts f = exif_facts(exif_of(out(output)));
    EXPECT_TRUE(f.loaded) << output;
    EXPECT_EQ(f.orientation, 1) << output;
    EXPECT_FALSE(f.thumbnail) << output;
  }
  // Read back, the upright output stays upright.
  ASSERT_EQ(run({"1", "up.jpg", "again.jpg"}).status, 0);
  EXPECT_EQ(load_image(at("again.jpg")).width, kW);
  // --no-orient keeps the stored pixels, so the tag stays 6.
  const Result r = run({"1", "--no-orient", "phone.jpg", "stored.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(exif_facts(exif_of(out("stored.jpg"))).orientation, 6);
  EXPECT_FALSE(exif_facts(exif_of(out("stored.jpg"))).thumbnail);
}

TEST_F(MetadataCli, XmpAndResolutionAreKeptAndStripDropsThem) {
  // hubble: EXIF, XMP and an ICC profile; coffee: pHYs of 3780 pixels a metre (96 dpi).
  const Bytes hubble = read_bytes(kHubble);
  const std::string xmp = xmp_of(hubble);
  ASSERT_FALSE(xmp.empty());
  for (const std::string output : {"h.jpg", "h.png"}) {
    Result r = run({"1", kHubble, output});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(xmp_of(out(output)), xmp) << output;
    EXPECT_EQ(icc_of(out(output)), icc_of(hubble)) << output;
    EXPECT_FALSE(exif_of(out(output)).empty()) << output;
  }
  // The resolution: PNG pHYs -> JPEG JFIF density (96 dpi) -> PNG again.
  Result r = run({"1", kCoffee, "c.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto segments = jpeg_segment_list(out("c.jpg"));
  ASSERT_FALSE(segments.empty());
  ASSERT_EQ(segments[0].first, 0xE0);
  const Bytes& jfif = segments[0].second;
  EXPECT_EQ(jfif[7], 1) << "units: per inch";
  EXPECT_EQ(jfif[8] << 8 | jfif[9], 96);
  EXPECT_EQ(jfif[10] << 8 | jfif[11], 96);
  r = run({"1", "c.jpg", "c.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  Bytes phys;
  for (const auto& [type, data] : png_chunk_list(out("c.png")))
    if (type == "pHYs") phys = data;
  EXPECT_EQ(phys, (Bytes{0, 0, 0x0E, 0xC4, 0, 0, 0x0E, 0xC4, 1}));  // 3780 a metre

  // --strip keeps the colour profile only; --strip=all nothing.
  for (const std::string output : {"s.jpg", "s.png"}) {
    r = run({"1", "--strip", kHubble, output});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(icc_of(out(output)), icc_of(hubble)) << output;
    EXPECT_TRUE(exif_of(out(output)).empty()) << output;
    EXPECT_EQ(xmp_of(out(output)), "") << output;
    r = run({"1", "--strip=all", kHubble, "all-" + output});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(icc_of(out("all-" + output)).empty()) << output;
    EXPECT_TRUE(exif_of(out("all-" + output)).empty()) << output;
  }
  // "--strip all" with a space is --strip=all, not an input named 'all'.
  r = run({"1", "--strip", "all", kHubble, "space.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(icc_of(out("space.png")).empty());
  r = run({"1", "--strip=exif", kHubble, "x.jpg"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--strip=exif: not a choice"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(at("x.jpg")));
}

// WebP has no resolution: an output from an input that has one (coffee's pHYs, 96 dpi) says it
// is left out, once for each output, as TIFF says it leaves EXIF out; --strip, which drops the
// resolution anyway, and an input without one say nothing.
TEST_F(MetadataCli, WebpOutputSaysItLeavesTheResolutionOut) {
  Result r = run({"1", kCoffee, "c.webp"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "blurtool: warning: c.webp: WebP output does not carry the resolution (96 dpi); left "
            "out\n");
  EXPECT_FALSE(read_metadata(out("c.webp"), "c.webp").resolution);
  r = run({"1", "--strip", kCoffee, "s.webp"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = run({"1", "c.webp", "again.webp"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // A batch: a warning for each output that loses one.
  fs::create_directories(root_ / "two");
  fs::copy_file(kCoffee, root_ / "two" / "a.png");
  fs::copy_file(kCoffee, root_ / "two" / "b.png");
  r = run({"1", "--format", "webp", "two", "webps/"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string name : {"webps/a.webp", "webps/b.webp"}) {
    const std::string line = "blurtool: warning: " + name +
                             ": WebP output does not carry the resolution (96 dpi); left out\n";
    const size_t at = r.err.find(line);
    EXPECT_NE(at, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(line, at + 1), std::string::npos) << "said twice: " << r.err;
  }
}

// --strip=color is --strip=colour. The word after --strip is its level only when it is all,
// colour or color; a file of such a name there is refused as ambiguous, naming both spellings,
// and ./all or --strip=all says which was meant.
TEST_F(MetadataCli, StripTakesColorAndNeverSwallowsAFileNamedAll) {
  const Bytes hubble = read_bytes(kHubble);
  for (const std::vector<std::string>& strip :
       {std::vector<std::string>{"--strip=color"}, std::vector<std::string>{"--strip", "color"}}) {
    std::vector<std::string> args = {"1", "--force"};
    args.insert(args.end(), strip.begin(), strip.end());
    args.insert(args.end(), {kHubble, "color.jpg"});
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(icc_of(out("color.jpg")), icc_of(hubble));
    EXPECT_TRUE(exif_of(out("color.jpg")).empty());
  }
  write_bytes(at("all"), hubble);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"1", "--strip", "all", "all.png"},
        std::vector<std::string>{"1", "--strip", "all", kHubble, "all.png"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(r.err,
              "blurtool: --strip all: 'all' is also a file here; write --strip=all for "
              "the level, or ./all for the file (see blurtool --help)\n");
    EXPECT_FALSE(fs::exists(at("all.png")));
  }
  // ./all is the file, --strip keeping the colour; --strip=all before it drops that too.
  Result r = run({"1", "--strip", "./all", "colour.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(icc_of(out("colour.png")), icc_of(hubble));
  EXPECT_TRUE(exif_of(out("colour.png")).empty());
  r = run({"1", "--strip=all", "all", "none.png"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(icc_of(out("none.png")).empty());
}

TEST_F(MetadataCli, PngGammaBecomesAProfileInAJpegAndLinearLightSaysWhatItAssumes) {
  // gAMA 1/1.8 without an ICC profile: a JPEG has no such chunk, so it gets an equivalent
  // profile (an ICC header: "acsp" at byte 36, RGB data colour space at 16).
  write_bytes(at("gamma.png"), with_chunk(read_bytes(kCoffee), "gAMA", {0, 0, 0xD9, 0x03}));
  Result r = run({"1", "gamma.png", "gamma.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes icc = icc_of(out("gamma.jpg"));
  ASSERT_GT(icc.size(), 128u);
  EXPECT_EQ(std::string(icc.begin() + 36, icc.begin() + 40), "acsp");
  EXPECT_EQ(std::string(icc.begin() + 16, icc.begin() + 20), "RGB ");
  // --linear-light decodes the sRGB curve: said for an Adobe RGB photo, not for an sRGB one.
  write_bytes(at("adobe.jpg"), with_icc_segments(read_bytes(kDune), read_bytes(kAdobeRgbProfile)));
  r = run({"1", "--linear-light", "adobe.jpg", "lin.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("adobe.jpg: its colour profile is not sRGB; --linear-light assumes the "
                       "sRGB transfer curve"),
            std::string::npos)
      << r.err;
  r = run({"1", "--linear-light", kHubble, "lin2.jpg"});  // its profile is sRGB
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  r = run({"1", "--linear-light", kDune, "lin3.jpg"});  // no profile
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(MetadataCli, AnIncompleteProfileIsLeftOutWithAWarning) {
  // Chunk 1 of 2 only.
  Bytes profile = read_bytes(kAdobeRgbProfile);
  Bytes payload = {'I', 'C', 'C', '_', 'P', 'R', 'O', 'F', 'I', 'L', 'E', 0, 1, 2};
  payload.insert(payload.end(), profile.begin(), profile.begin() + 100);
  write_bytes(at("cut.jpg"), with_segment(read_bytes(kDune), 0xE2, payload));
  const Result r = run({"1", "cut.jpg", "cut-out.jpg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("cut.jpg: its ICC profile's APP2 chunks are incomplete or inconsistent; "
                       "the profile is left out"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(icc_of(out("cut-out.jpg")).empty());
}

}  // namespace
}  // namespace blurtool
