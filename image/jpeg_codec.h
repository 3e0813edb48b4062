// JPEG for image_io's front door: the top-level marker segments walked before any decoder runs
// (completeness, the EXIF orientation), TurboJPEG's decode, and the encode by TurboJPEG, in
// strips joined by restart markers where the image is large (compress_jpeg_strips and
// jpeg_strip_layout, declared in image_io.h, are defined in jpeg_codec.cpp, as is
// exif_orientation). Internal to image/; stb_image, the fallback decoder, is image/stb_codec.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image/codec_common.h"
#include "image/image_io.h"

namespace blurtool {

/// Throws blurtool::Error "NAME: truncated JPEG (WHERE)".
[[noreturn]] void throw_truncated(const std::string& name, const std::string& where);

/// Walks the JPEG's top-level marker segments in the `size` bytes at `b` from SOI to the first
/// SOS (skipping each segment whole by its big-endian length, so that markers inside an APP1
/// EXIF thumbnail are never read as the image's own). Returns them, and where the entropy-coded
/// data starts in *scan. Throws blurtool::Error naming `name` where the bytes end inside a
/// segment or before the SOS (truncated), or hold no marker or an unexpected one (corrupt).
std::vector<JpegSegment> jpeg_segments(const std::uint8_t* b, std::size_t size,
                                       const std::string& name, std::size_t* scan);

/// Requires the marker segments to be whole (jpeg_segments) and an EOI marker somewhere in the
/// scan data after them, and returns the segments. In entropy-coded data a 0xFF byte is stuffed
/// as FF 00, so FF D9 there can only be the EOI. Throws as jpeg_segments, and blurtool::Error
/// naming `name` as a truncated JPEG where there is no EOI.
std::vector<JpegSegment> check_jpeg_complete(const std::vector<std::uint8_t>& b,
                                             const std::string& name);

/// The orientation tag, 1 to 8, of the first APP1 "Exif" segment among `segments` of the JPEG
/// `bytes` (see exif_orientation); 1 where there is none or it is invalid. Never throws.
int orientation_in(const std::vector<std::uint8_t>& bytes,
                   const std::vector<JpegSegment>& segments);

/// The size and channels of the JPEG `b` from its first frame header among `segments`
/// (check_jpeg_complete's), read from the bytes before any decoder runs, so that max_pixels is
/// held first: false where there is none or it is not one libjpeg-turbo decodes (8-bit
/// baseline, extended or progressive, Huffman or arithmetic coding: SOF0-2, SOF9-10; 1, 3 or 4
/// components, sampling factors 1..4, a height in the header). *channels: 1 for greyscale, 3
/// for colour (CMYK and YCCK are decoded to RGB). Never throws.
bool read_jpeg_frame(const std::vector<std::uint8_t>& b, const std::vector<JpegSegment>& segments,
                     int* width, int* height, int* channels);

/// The scans of the JPEG `b` (SOS markers, the first one ending `segments`, check_jpeg_complete's,
/// and those found after it by walking the entropy-coded data and the marker segments between
/// scans as libjpeg does), counted up to `stop_after` + 1 at most, so that a file of very many
/// scans is not walked to its end. Never throws.
int count_jpeg_scans(const std::vector<std::uint8_t>& b, const std::vector<JpegSegment>& segments,
                     int stop_after);

/// Why TurboJPEG cannot read a JPEG's header, for a header read_jpeg_frame refused ("an
/// unsupported frame header" where TurboJPEG reads it). Never throws for a bad file.
std::string tj_header_reason(const std::vector<std::uint8_t>& bytes);

/// Decodes with TurboJPEG a greyscale, YCbCr or RGB JPEG, Huffman or arithmetic-coded, whose
/// header read_jpeg_frame read as `width` x `height` x `channels` (1 or 3) into *image
/// (interleaved, 1 or 3 channels), into RGBA with `rgba` (TurboJPEG's RGBX output sets X to 255,
/// and turns grey into R=G=B itself). False for anything else (CMYK and YCCK, which stb_image
/// converts with its own formula; a file libjpeg refuses). Corrupt-data warnings are accepted,
/// as stb_image accepts the same data without complaint, and libjpeg's words are left in
/// `damage` (if not null) for a warning; a truncated file never gets here. More than
/// kMaxJpegScans scans are refused (TJFLAG_LIMITSCANS), TurboJPEG's words then left in
/// `refusal` (if not null): a refusal no other decoder may override. Never throws for a bad
/// file.
bool decode_jpeg_turbojpeg(const std::vector<std::uint8_t>& bytes, int width, int height,
                           int channels, bool rgba, Image* image, std::string* damage,
                           std::string* refusal = nullptr);

/// A JPEG written as its rows arrive (strips of an image larger than memory): the restart strips
/// of jpeg_strip_layout, each compressed by TurboJPEG once all its rows are given (the strips
/// completed by one write() on up to options.threads threads) and joined by restart markers as
/// JpegStripLayout describes, so that the bytes are encode_jpeg's for the same RGBA pixels,
/// `channels` and options. The file's bytes go to `sink` in order as strips are done; rows of
/// a strip not yet whole are kept (fewer than the layout's strip_rows). An image of one strip
/// is compressed at its last row.
class JpegStripWriter {
 public:
  using Sink = std::function<void(const std::uint8_t* data, std::size_t size)>;

  /// Throws blurtool::UsageError for a jpeg_quality outside 1..100, blurtool::Error where a
  /// side is not 1..65535.
  JpegStripWriter(int width, int height, int channels, const EncodeOptions& options, Sink sink);
  ~JpegStripWriter();

  /// Encodes `count` RGBA8 rows at `rows` (pitch width x 4 bytes), the image's next rows.
  /// Throws blurtool::Error where the rows go past the image or TurboJPEG fails or its strips
  /// cannot be joined (its TJ_RESTART or TJ_OPTIMIZE variables), and what the sink throws.
  void write(const std::uint8_t* rows, int count);

 private:
  struct Head;
  int strip_height(int strip) const;
  void emit(const JpegBytes& jpeg, int index);

  int width_, height_;
  JpegStripLayout layout_;
  int threads_, subsampling_, quality_;
  Sink sink_;
  std::vector<std::uint8_t> pending_;  // rows of the next strip, not yet whole
  int pending_rows_ = 0;
  int rows_done_ = 0;
  int strips_done_ = 0;
  std::unique_ptr<Head> head_;  // the first strip's marker segments, which the others must match
};

/// The JPEG of the `channels` samples of `image`'s pixels that encode_image writes (all of them,
/// or from an RGBA image those from_rgba keeps; alpha never): greyscale for 1 or 2 channels,
/// YCbCr with options.jpeg_subsampling for 3 or 4, at options.jpeg_quality, in the strips of
/// jpeg_strip_layout on options.threads threads (compress_jpeg_strips). Throws
/// blurtool::UsageError for a jpeg_quality outside 1..100, blurtool::Error where a side exceeds
/// 65535 or TurboJPEG fails.
std::vector<std::uint8_t> encode_jpeg(const Image& image, int channels,
                                      const EncodeOptions& options);

}  // namespace blurtool
