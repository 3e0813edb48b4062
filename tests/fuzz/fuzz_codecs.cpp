// libFuzzer harness over libpng's, libjpeg-turbo's, libtiff's and libwebp's decoders alone, never
// stb_image: where
// decode_image falls back to stb_image for a file libpng or TurboJPEG refuses, this harness
// stops, so its time and its findings are those of the two libraries' paths. On arbitrary bytes
// that pass the checks made before any decoder (check_file: signature, header, max_pixels,
// completeness, the JPEG's scan count), it runs libpng's whole-image decoder at 8 bits and, for
// a 16-bit file, at 16, each interleaved as stored and in RGBA (decode_png_libpng, and on a
// refusal png_checksum_error); TurboJPEG's decoder, likewise (decode_jpeg_turbojpeg); a JPEG's
// colour planes and its DCT blocks, dense and sparse (decode_jpeg_planes, decode_jpeg_blocks);
// a TIFF's strips or tiles at 8 and 16 bits, as stored and in RGBA, and its metadata tags
// (decode_tiff, read_tiff_metadata; only the variants read_tiff_header takes); a WebP at 8 bits,
// as stored and in RGBA, and its ICCP/EXIF/XMP chunks (decode_webp, read_webp_metadata);
// then the row readers, libpng's and libjpeg's scanline decoders (open_rows; a 16-bit PNG at
// 8 and at 16 bits), on headers of any declared size, read band by band: they must fail on the
// first row the data does not hold, and once every row is read refuse one more. Its contract,
// as fuzz_image's: a blurtool::Error for anything it refuses, never a crash, a leak, a hang, an
// uncaught exception of another kind or an allocation the header did not justify. Built by
// scripts/fuzz (clang, -DBLURTOOL_FUZZ=ON) with AddressSanitizer and UndefinedBehaviorSanitizer;
// the normal build links it with replay_main.cpp and replays its seeds and kept crash inputs
// (ctest -L fuzz). First, on any bytes, the metadata readers (read_metadata, metadata_for_output
// with libexif's rewrite, colour_is_srgb with lcms2, metadata_segments), which must never throw.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "image/codec_common.h"
#include "image/image_io.h"
#include "image/jpeg_codec.h"
#include "image/jpeg_planes.h"
#include "image/metadata.h"
#include "image/png_codec.h"
#include "image/row_codec.h"
#include "image/tiff_codec.h"
#include "image/webp_codec.h"
#include "util/error.h"

namespace {
// The whole-image decoders' limit, as fuzz_image's: 2^22 pixels (16 MiB as RGBA8) keeps every
// input under libFuzzer's memory limit, and larger headers must be refused by the checks.
constexpr std::uint64_t kFuzzMaxPixels = std::uint64_t{1} << 22;
// The row readers: any declared size, read in bands of at most kBandPixels pixels, at most
// kRowPixels pixels in all, rows at most kBandPixels wide.
constexpr std::uint64_t kBandPixels = std::uint64_t{1} << 20;
constexpr std::uint64_t kRowPixels = std::uint64_t{1} << 21;
const std::string kName = "fuzz input";

template <typename T>
void decode_png(const std::vector<std::uint8_t>& bytes, const blurtool::CheckedFile& file) {
  for (bool rgba : {false, true}) {
    blurtool::BasicImage<T> image;
    int stored = 0;
    std::string reason;
    if (!blurtool::decode_png_libpng(bytes, file.width, file.height, rgba, &image, &stored,
                                     &reason))
      (void)blurtool::png_checksum_error(bytes, reason);
  }
}

// Reads `rows` band by band within kRowPixels; once all are read, one more must be refused.
void read_rows(blurtool::RowSource& rows) {
  const auto width = static_cast<std::uint64_t>(rows.width());
  if (width > kBandPixels) return;
  const int band = static_cast<int>(std::max<std::uint64_t>(1, kBandPixels / width));
  std::vector<std::uint8_t> out;
  std::uint64_t budget = kRowPixels;
  while (rows.rows_read() < rows.height() && budget >= width) {
    const int n = static_cast<int>(
        std::min<std::uint64_t>({static_cast<std::uint64_t>(rows.height() - rows.rows_read()),
                                 static_cast<std::uint64_t>(band), budget / width}));
    out.resize(rows.row_bytes() * n);
    rows.read(out.data(), n);
    budget -= width * n;
  }
  (void)rows.take_warnings();
  if (rows.rows_read() < rows.height()) return;
  bool refused = false;
  try {
    rows.read(out.data(), 1);
  } catch (const blurtool::Error&) {
    refused = true;
  }
  if (!refused) __builtin_trap();  // a row past the last one was handed out
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::uint8_t> bytes(data, data + size);
  {  // the metadata readers: nothing thrown, whatever the bytes
    std::vector<std::string> warnings;
    blurtool::ImageMetadata m = blurtool::read_metadata(bytes, kName, &warnings);
    m = blurtool::metadata_for_output(std::move(m), blurtool::KeepMetadata::all, true, kName,
                                      &warnings);
    (void)blurtool::colour_is_srgb(m);
    for (blurtool::ImageFormat f : {blurtool::ImageFormat::png, blurtool::ImageFormat::jpeg})
      (void)blurtool::metadata_segments(m, f, kName, &warnings);
  }
  try {  // the whole-image decoders, with nothing behind them
    const blurtool::CheckedFile file = blurtool::check_file(bytes, kName, kFuzzMaxPixels);
    if (file.png) {
      decode_png<std::uint8_t>(bytes, file);
      if (file.sixteen_bit) decode_png<std::uint16_t>(bytes, file);
    } else if (file.tiff) {
      (void)blurtool::read_tiff_metadata(bytes, kName);
      for (bool rgba : {false, true}) {
        try {
          (void)blurtool::decode_tiff<std::uint8_t>(bytes, kName, rgba);
        } catch (const blurtool::Error&) {
        }
        (void)blurtool::decode_tiff<std::uint16_t>(bytes, kName, rgba);
      }
    } else if (file.webp) {
      (void)blurtool::read_webp_metadata(bytes, kName);
      for (bool rgba : {false, true}) (void)blurtool::decode_webp(bytes, kName, rgba);
    } else {
      for (bool rgba : {false, true}) {
        blurtool::Image image;
        std::string damage, refusal;
        (void)blurtool::decode_jpeg_turbojpeg(bytes, file.width, file.height, file.channels, rgba,
                                              &image, &damage, &refusal);
      }
      if (blurtool::jpeg_planes_supported(bytes, false)) {
        for (bool sparse : {false, true}) {
          blurtool::YCbCrPlanes blocks;
          (void)blurtool::decode_jpeg_blocks(bytes, &blocks, sparse);
        }
        std::string damage;
        (void)blurtool::decode_jpeg_planes(bytes, kName, &damage);
      }
    }
  } catch (const blurtool::Error&) {
  }
  try {  // the row readers, as strips read an image: no size limit but the data
    const blurtool::CheckedFile file = blurtool::check_file(bytes, kName, std::uint64_t{1} << 40);
    if (blurtool::rows_unreadable(bytes, false).empty()) {
      for (int depth : {8, 16}) {
        if (depth == 16 && !file.sixteen_bit) break;
        try {
          read_rows(*blurtool::open_rows(bytes, kName, depth, std::uint64_t{1} << 28));
        } catch (const blurtool::Error&) {
        }
      }
    }
  } catch (const blurtool::Error&) {
  }
  return 0;
}
