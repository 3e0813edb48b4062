// libFuzzer harness over the image-loading path: decode_image() (signature check, header limits,
// the JPEG marker walk, TurboJPEG, libpng and the stb_image fallback) on arbitrary bytes, then
// the PNG encoder on whatever decoded; then decode_image_wide(), which keeps 16-bit PNGs at 16
// bits, and the 16-bit PNG encoder; then decode_source with JPEG DCT blocks or colour planes
// (the batch's path on a GPU, --jpeg-codec), the host references of the device's transforms
// and conversions (inverse DCT, colour, forward DCT), and both JPEG encoders; then the strip
// reader (image/row_codec.h) on headers of any declared size, which must fail on the first
// row the data does not hold, and the row writers on what it read. Its
// contract: a blurtool::Error for anything it refuses,
// never a crash, a hang, an uncaught exception of another kind or an allocation the header did
// not justify. Built by scripts/fuzz (clang, -DBLURTOOL_FUZZ=ON) with AddressSanitizer and
// UndefinedBehaviorSanitizer; the normal build links it with replay_main.cpp and replays its
// seeds and kept crash inputs (ctest -L fuzz).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/jpeg_planes.h"
#include "image/row_codec.h"
#include "pipeline/pipeline.h"
#include "util/error.h"

namespace {
// 2^22 pixels (16 MiB as RGBA8) keeps every input under libFuzzer's 2 GiB memory limit while
// leaving the limit check itself in the path: larger headers must be refused, not decoded.
constexpr std::uint64_t kFuzzMaxPixels = std::uint64_t{1} << 22;
// The strip reader's rows: any declared size, at most this many pixels read (a strip's worth).
constexpr std::uint64_t kFuzzStripPixels = std::uint64_t{1} << 20;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  std::vector<std::string> warnings;
  try {
    const blurtool::Image image =
        blurtool::decode_image(bytes, "fuzz input", &warnings, kFuzzMaxPixels);
    (void)blurtool::encode_image(image, blurtool::ImageFormat::png, 95);
  } catch (const blurtool::Error&) {
  }
  try {  // the path the CLI takes: 16-bit PNGs kept at 16 bits, and encoded at 16
    const blurtool::DecodedImage decoded =
        blurtool::decode_image_wide(bytes, "fuzz input", &warnings, kFuzzMaxPixels);
    if (decoded.is_wide())
      (void)blurtool::encode_image(decoded.wide, blurtool::ImageFormat::png, 95);
  } catch (const blurtool::Error&) {
  }
  try {  // a JPEG decoded to its DCT blocks (or colour planes), transformed and converted as
         // the device would, re-encoded from planes and from blocks
    blurtool::JobOptions o;
    o.max_pixels = kFuzzMaxPixels;
    const blurtool::Source source =
        blurtool::decode_source({"fuzz input", bytes}, o, &warnings, true);
    if (source.has_planes()) {
      const blurtool::YCbCrPlanes planes =
          source.planes.as_blocks() ? blurtool::blocks_to_planes(source.planes) : source.planes;
      const blurtool::Image rgba = blurtool::ycbcr_to_rgba(planes);
      blurtool::EncodeOptions e;
      const blurtool::YCbCrPlanes out =
          blurtool::rgba_to_ycbcr(rgba, planes.components, e.jpeg_subsampling);
      (void)blurtool::encode_jpeg_planes(out, e);
      for (bool sparse : {false, true}) {  // blocks whole, and sparse as from a device
        blurtool::YCbCrPlanes blocks = blurtool::encoder_block_layout(
            out.width, out.height, out.components, e.jpeg_subsampling, e.jpeg_quality, sparse);
        blurtool::planes_to_blocks(out, &blocks);
        (void)blurtool::encode_jpeg_planes(blocks, e);
      }
      // TurboJPEG's own planes of the same file, the path of files the blocks do not take.
      if (source.planes.as_blocks()) (void)blurtool::decode_jpeg_planes(bytes, "fuzz input");
    }
  } catch (const blurtool::Error&) {
  }
  try {  // by rows, as strips read an image larger than --max-memory: no size limit but the data
    const blurtool::ImageHeader header =
        blurtool::read_image_header(bytes, "fuzz input", std::uint64_t{1} << 40, true);
    if (blurtool::rows_unreadable(bytes, true).empty()) {
      std::unique_ptr<blurtool::RowSource> rows =
          blurtool::open_rows(bytes, "fuzz input", 16, std::uint64_t{1} << 28);
      const int band = static_cast<int>(std::max<std::uint64_t>(
          1, std::min<std::uint64_t>(rows->height(), kFuzzStripPixels / rows->width())));
      if (static_cast<std::uint64_t>(rows->width()) <= kFuzzStripPixels) {
        std::vector<std::uint8_t> strip(rows->row_bytes() * band);
        rows->read(strip.data(), band);
        blurtool::EncodeOptions e;
        std::vector<std::uint8_t> out;
        auto sink = [&out](const std::uint8_t* p, std::size_t n) {
          out.insert(out.end(), p, p + n);
        };
        blurtool::RowWriter png(blurtool::ImageFormat::png, rows->width(), band,
                                rows->stored_channels(), rows->depth(), e, sink);
        png.write(strip.data(), band);
        if (rows->depth() == 8 && rows->width() <= 65535) {
          blurtool::RowWriter jpeg(blurtool::ImageFormat::jpeg, rows->width(), band,
                                   rows->stored_channels(), 8, e, sink);
          jpeg.write(strip.data(), band);
        }
      }
      (void)header;
    }
  } catch (const blurtool::Error&) {
  }
  return 0;
}
