// Images a band of rows at a time, for images larger than memory should hold whole (the strips
// of pipeline/strip_pipeline.h): decoders that hand out rows top to bottom (libpng's and
// libjpeg's row interfaces) and encoders that take them (PngStreamEncoder, JpegStripWriter,
// TiffStripWriter).
// The pixels are those of the whole-image decoder and encoder (decode_image_wide
// with expand_rgba, encode_rgba): the same samples in, files that decode to the same samples out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image/image_io.h"

namespace blurtool {

class JpegStripWriter;  // image/jpeg_codec.h
class TiffStripWriter;  // image/tiff_codec.h

/// A decoder that hands out an image's rows top to bottom as RGBA of 8 or 16 bits (grey to
/// R=G=B, a missing alpha at full scale; the samples of decode_image_wide with expand_rgba, as
/// stored: no EXIF orientation). Not thread-safe.
class RowSource {
 public:
  virtual ~RowSource() = default;
  int width() const { return width_; }
  int height() const { return height_; }
  /// The file's own channel count (1-4; a PNG's tRNS chunk counts as alpha).
  int stored_channels() const { return stored_channels_; }
  /// Whether the file stores 16-bit samples (a 16-bit PNG).
  bool sixteen_bit() const { return sixteen_bit_; }
  /// Bits a sample of the rows handed out: 16 for a 16-bit PNG opened at 16, else 8.
  int depth() const { return depth_; }
  /// Rows handed out so far.
  int rows_read() const { return rows_read_; }
  /// Bytes a row handed out takes: width * 4 samples of depth() bits.
  std::size_t row_bytes() const { return static_cast<std::size_t>(width_) * 4 * (depth_ / 8); }

  /// Decodes the next `rows` rows into `out` (rows * row_bytes() bytes, rows back to back).
  /// Throws blurtool::Error naming the file where its data is damaged beyond what the decoder
  /// reads past (a PNG's, a JPEG's that libjpeg refuses), ends early, or `rows` goes past the
  /// last row; the source is then unusable.
  virtual void read(void* out, int rows) = 0;

  /// The warnings so far (damaged JPEG data that libjpeg decoded anyway), each naming the file;
  /// handed over once.
  std::vector<std::string> take_warnings() { return std::move(warnings_); }

 protected:
  int width_ = 0, height_ = 0, stored_channels_ = 0, depth_ = 8, rows_read_ = 0;
  bool sixteen_bit_ = false;
  std::vector<std::string> warnings_;
};

/// Why the PNG or JPEG `bytes` (already checked by read_image_header) cannot be read a band of
/// rows at a time, in words for a message ("an interlaced PNG"); empty where it can. An
/// interlaced PNG and a progressive JPEG deliver no row before their last pass (a progressive
/// JPEG is still read by rows: libjpeg holds its coefficients, within open_rows' max_memory);
/// a JPEG with an EXIF orientation other than 1 (with `orient`) is turned as a whole; CMYK and
/// YCCK JPEGs and Apple's PNG variant go to stb_image, which decodes whole images only; TIFFs
/// ("a TIFF", turned by their Orientation tag as a whole) and WebPs ("a WebP") are decoded
/// whole by their codecs. Never throws.
std::string rows_unreadable(const std::vector<std::uint8_t>& bytes, bool orient);

/// A RowSource over the PNG or JPEG `bytes` that rows_unreadable takes, with its header read:
/// 16-bit PNG samples at 16 bits where `depth` is 16, else at 8 (their high bytes, as
/// decode_image). `max_memory`: the bytes libjpeg may allocate (a progressive JPEG's
/// coefficients, the whole image's), beyond which it fails. Throws blurtool::Error naming
/// `name` for a file the decoder refuses. `bytes` must outlive the source.
std::unique_ptr<RowSource> open_rows(const std::vector<std::uint8_t>& bytes,
                                     const std::string& name, int depth, std::uint64_t max_memory);

/// A RowSource over an image decoded whole (decode_image_wide with expand_rgba: RGBA, 8 or 16
/// bits), for the files rows_unreadable names: they cost their decoded size, and the rest of a
/// run goes in strips as for any other. Throws blurtool::Error unless `image` has 4 channels.
std::unique_ptr<RowSource> rows_of(DecodedImage image);

/// An encoder that takes an image's rows top to bottom as RGBA and writes a PNG (1-4 channels
/// kept, 8 or 16 bits: PngStreamEncoder), a JPEG (greyscale for 1-2 channels, YCbCr otherwise,
/// 8 bits: JpegStripWriter, the bytes encode_rgba writes for the whole image) or a TIFF (1-4
/// channels kept, 8 or 16 bits: TiffStripWriter, encode_rgba's bytes) as it goes. The file
/// decodes to the same samples as encode_rgba's of the whole image. Not thread-safe.
class RowWriter {
 public:
  /// Takes the bytes of a PNG or JPEG in order.
  using Sink = std::function<void(const std::uint8_t* data, std::size_t size)>;
  /// Takes the bytes of a TIFF at byte `offset` of a file (TiffStripWriter::WriteAt).
  using WriteAt =
      std::function<void(std::uint64_t offset, const std::uint8_t* data, std::size_t size)>;

  /// A `width` x `height` image in `format`, written as `channels` (1-4) channels of the RGBA
  /// rows it is given (from_rgba's choice of samples), at `depth` bits (16: PNG only), as
  /// `options` say (quality and subsampling, PNG level and threads), its bytes handed to `sink`
  /// as they are made. Throws blurtool::UsageError for a quality or level out of range,
  /// blurtool::Error for a size the format cannot hold (JPEG: 65535 a side).
  RowWriter(ImageFormat format, int width, int height, int channels, int depth,
            const EncodeOptions& options, Sink sink);
  /// A `width` x `height` TIFF, written as `channels` (1-4) channels of the RGBA rows it is
  /// given at `depth` (8 or 16) bits, compressed as `options` say, `metadata`'s ICC profile,
  /// XMP, resolution and orientation as tags, into a file through `out`, which takes bytes at
  /// any offset (TiffStripWriter: libtiff points the header at the directory it writes last).
  /// Throws blurtool::Error where libtiff fails, and what `out` throws.
  RowWriter(int width, int height, int channels, int depth, const EncodeOptions& options,
            const ImageMetadata& metadata, WriteAt out);
  ~RowWriter();

  /// Encodes `count` rows of RGBA samples (8 or 16 bits as constructed) at `rows`, the image's
  /// next rows. `before` rows just above `rows` in the same buffer (row pitch width x 4 samples)
  /// may hold the rows last written, the same samples: a PNG encoder then reads its filter's row
  /// above and its dictionary there instead of keeping a copy of each strip. Throws
  /// blurtool::Error where encoding fails or the rows go past the image, and what the sink
  /// throws.
  void write(const void* rows, int count, int before = 0);

 private:
  ImageFormat format_;
  int width_, height_, channels_, depth_;
  std::unique_ptr<PngStreamEncoder> png_;
  // The PNG encoder's rows: the last rows written (its filter's row above and its dictionary)
  // followed by the new ones.
  std::vector<std::uint8_t> png_rows_;
  int png_context_ = 0;
  std::unique_ptr<JpegStripWriter> jpeg_;
  std::unique_ptr<TiffStripWriter> tiff_;
};

}  // namespace blurtool
