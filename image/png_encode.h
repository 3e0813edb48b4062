// The PNG encoder: filters the rows itself and deflates them in strips on several threads, the
// way parallel gzip (pigz) splits its input, then writes the PNG container (signature, IHDR,
// IDAT chunks, IEND) with zlib's crc32. image_io's encode_image and encode_rgba call it; the
// choices below that users do not set (filter, strategy, strip size) are here for the
// measurements of scripts/bench-png-level.sh and scripts/bench-encode.sh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace blurtool {

/// PNG row filters (PNG specification, section 9.2): one of the five for every row, or
/// `adaptive`: per row the filter whose output bytes, read as signed, have the smallest sum of
/// magnitudes (the heuristic the PNG specification suggests and libpng uses).
enum class PngFilter { none, sub, up, average, paeth, adaptive };

/// The samples to encode: `height` rows of `width` pixels, each pixel `stride` samples of 8 or
/// 16 bits (`depth`; 16-bit samples in the host's byte order), rows back to back. The file gets
/// `channels` (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA) samples a pixel: with `stride` equal to
/// `channels` every sample as stored; with `stride` 4 (an RGBA image, as to_rgba makes) the
/// samples from_rgba would keep (1: R; 2: R, A; 3: R, G, B; 4: all), with no reduced copy.
struct PngPixels {
  const void* pixels = nullptr;
  int width = 0;
  int height = 0;
  int channels = 0;
  int stride = 0;
  int depth = 8;
};

/// How the rows are filtered and deflated.
struct PngSettings {
  int level = 6;     ///< zlib compression level 0..9 (0: stored blocks)
  int strategy = 0;  ///< zlib strategy: Z_DEFAULT_STRATEGY, Z_FILTERED, Z_RLE, ...
  PngFilter filter = PngFilter::paeth;
  /// Threads deflating strips at once; 0: std::thread::hardware_concurrency(). The bytes
  /// written do not depend on it.
  int threads = 0;
  /// Filtered bytes (rows of 1 + width * channels * depth / 8 bytes) a strip aims at; each
  /// strip is at least one row. 0: kPngStripBytes.
  std::size_t strip_bytes = 0;
};

/// blurtool's settings for zlib level `level` (0..9), measured in
/// docs/performance/history/png-level-2026-11-24-epyc-2c.md:
/// the Paeth filter on every row; at level 1 zlib's run-length strategy (Z_RLE: matches of the
/// previous byte only, which zlib.h describes as made for PNG image data), faster than zlib's
/// level 1 and on photos 20% smaller; at levels 2 to 9 Z_FILTERED (short matches given up for
/// literals), libpng's choice for filtered rows; level 0 stores. Threads and strips: the
/// defaults.
PngSettings png_settings(int level);

/// Filtered bytes a strip aims at by default: each strip but the first is deflated with the
/// 32 KiB of filtered bytes before it as its dictionary, so a strip boundary costs only a few
/// bytes of block header and flush marker (0.02% of a 12-megapixel photo at level 1; smaller
/// strips cost more), while a 12-megapixel RGB image still makes 36 strips to spread over the
/// cores (scripts/bench-encode.sh, "PNG strips").
constexpr std::size_t kPngStripBytes = std::size_t{1} << 20;

/// Encodes `image` as a PNG file: signature, IHDR (colour type from `channels`, bit depth
/// `depth`, no interlace), the IDAT chunks, IEND; no other chunk (no tRNS, gAMA or text), as
/// the libpng encoder it replaced wrote. The image data is one zlib stream (one 2-byte header,
/// one Adler-32 over all filtered rows, computed per strip and joined with adler32_combine):
/// the filtered rows are cut into strips of whole rows (`strip_bytes`), each strip is filtered
/// and raw-deflated on its own thread (deflateInit2 with -15 window bits), every strip but the
/// last ended with Z_FULL_FLUSH (byte-aligned, not final) and the last with Z_FINISH, and the
/// deflate output of the strips is concatenated in order, each strip's in IDAT chunks of its
/// own. A filter that reads the row above reads the previous strip's last row, so the filtered
/// bytes are those of one sequential pass. An image of one strip is one deflate call with
/// Z_FINISH. The bytes depend only on the pixels and `settings` minus `threads`.
/// Throws blurtool::Error if zlib fails or memory runs out, or where `image` is not 1..4
/// channels of a stride of `channels` or 4, of depth 8 or 16, or width or height is not 1 to
/// 2^31 - 1 (PNG's limit).
std::vector<std::uint8_t> encode_png(const PngPixels& image, const PngSettings& settings);

/// The PNG encoder of encode_png, fed a band of rows at a time so that an image streams through
/// it in bounded memory (the strips of pipeline/strip_pipeline.h): the signature and IHDR go to
/// `sink` when it is made, each band's IDAT chunks when it is added, the Adler-32 and IEND with
/// the last row. Each band is filtered and deflated in strips on settings.threads threads as
/// encode_png does; a band's first strip takes the rows before it, which the caller passes
/// along, as its filter's row above and its dictionary. The file is one valid PNG whatever the
/// bands; fed in one band it is byte for byte encode_png's. Not thread-safe.
class PngStreamEncoder {
 public:
  using Sink = std::function<void(const std::uint8_t* data, std::size_t size)>;

  /// A `width` x `height` PNG of `channels` (1-4) samples of `depth` (8 or 16) bits a pixel,
  /// deflated as `settings` say, written to `sink`. Throws blurtool::Error as encode_png for
  /// bad arguments, and what `sink` throws.
  PngStreamEncoder(int width, int height, int channels, int depth, const PngSettings& settings,
                   Sink sink);

  /// Encodes the rows of `image` from its row `before` on as the image's next rows; its rows
  /// [0, before) are the image's rows just before them, already added, at least one after the
  /// first call (the filter's row above; up to 32 KiB of rows above that one make the
  /// dictionary: passing fewer costs only compression). `image` has the width,
  /// channels and depth given at construction, any stride PngPixels allows. Throws
  /// blurtool::Error for rows that do not continue the image (a band past its height, more rows
  /// before than were added) or when zlib fails, and what `sink` throws.
  void add(const PngPixels& image, int before);

  /// Rows added so far.
  int rows_done() const { return done_; }

 private:
  int width_, height_, channels_, depth_;
  PngSettings settings_;
  Sink sink_;
  int done_ = 0;
  std::uint32_t adler_ = 1;
};

/// The zlib header's two bytes for `level` and `strategy` with a 32 KiB window, as deflate()
/// writes them (RFC 1950: CM 8, CINFO 7, FLEVEL from the level, FCHECK).
std::uint16_t zlib_header(int level, int strategy);

}  // namespace blurtool
