// TIFF for image_io's front door, by libtiff through callbacks (TIFFClientOpenExt) over the bytes
// in memory, or, for a TIFF written strip by strip (TiffStripWriter), over a file it writes at
// offsets: the first directory's tags checked before any pixel is read, the decode into an Image
// or Image16 (as stored: image_io turns it by its Orientation tag), the encode, and the metadata
// TIFF tags carry (ICC profile, XMP, resolution, orientation). libtiff's decoders have a long CVE
// history, so only the variants blurtool writes and photographers' tools commonly do are read,
// each other one refused by name before a strip is decoded: 8 or 16 unsigned bits per sample;
// grey (min-is-black), grey + alpha, RGB, RGBA; strips or tiles; no compression, LZW or deflate
// (with or without the horizontal predictor); samples interleaved (contiguous) or in separate
// planes. libtiff's errors and warnings go to a handler of each open file (TIFFOpenOptions),
// never to stderr, so decoding on several threads keeps each file's messages apart. Internal to
// image/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/metadata.h"

namespace blurtool {

/// The signature bytes of a little-endian ("II*\0") and a big-endian ("MM\0*") TIFF file.
inline constexpr std::uint8_t kTiffSignatureLE[] = {'I', 'I', 42, 0};
inline constexpr std::uint8_t kTiffSignatureBE[] = {'M', 'M', 0, 42};

/// What a TIFF's first directory says, checked (read_tiff_header).
struct TiffHeader {
  int width = 0, height = 0;
  int channels = 0;            ///< 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA
  int bits = 8;                ///< 8 or 16 bits a sample
  bool premultiplied = false;  ///< alpha is associated (colour samples premultiplied by it)
  int orientation = 1;  ///< the Orientation tag, 1-8 as EXIF's (1 where missing or out of range)
};

/// Opens the TIFF `bytes` and checks its first directory's tags against the variants this codec
/// reads (see the file comment), reading no pixel. Throws blurtool::Error naming `name` for a
/// directory libtiff cannot read ("NAME: corrupt TIFF (libtiff: ...)") and for each variant it
/// refuses, by name: "NAME: TIFF with JPEG compression is not supported", "... 32-bit float
/// samples ...", "... a palette ...", "... CMYK ...", and so on.
TiffHeader read_tiff_header(const std::vector<std::uint8_t>& bytes, const std::string& name);

/// Decodes the first image of the TIFF `bytes` (checked by read_tiff_header) into `channels`
/// interleaved samples a pixel of T: 8 bits (a 16-bit file reduced to each sample's high byte)
/// or 16 (an 8-bit file widened, v * 257); in RGBA with `rgba` (grey to R=G=B, a missing alpha
/// at full scale). Associated alpha is undone (straight alpha out). Throws blurtool::Error naming
/// `name` where a strip or tile is truncated or does not decode ("NAME: truncated or corrupt TIFF
/// (libtiff: ...)"). T is std::uint8_t or std::uint16_t.
template <typename T>
BasicImage<T> decode_tiff(const std::vector<std::uint8_t>& bytes, const std::string& name,
                          bool rgba);

/// A TIFF encoder that takes an image's rows top to bottom and writes the file as it goes,
/// through `out`, which must take bytes at any offset (a file, not a pipe): libtiff writes each
/// strip (or row of tiles) as it is whole, then the directory after them, and goes back to the
/// header to point at it. The file is encode_tiff's: the same tags, strips, compression and
/// metadata. Holds one strip of packed rows (about 64 KiB), or 256 rows with
/// options.tiff_tiled. Not thread-safe.
class TiffStripWriter {
 public:
  /// Writes `size` bytes at byte `offset` of the output; a gap left before `offset` holds
  /// zeros until it is written. Throws what the output throws where it cannot be written.
  using WriteAt =
      std::function<void(std::uint64_t offset, const std::uint8_t* data, std::size_t size)>;

  /// A `width` x `height` TIFF of `channels` (1-4) samples a pixel at `depth` (8 or 16) bits,
  /// tagged, compressed and laid out as encode_tiff says, `metadata`'s ICC profile, XMP,
  /// resolution and orientation as tags. The header is written at once. Throws blurtool::Error
  /// for a size or depth it cannot write, or where libtiff fails, and what `out` throws.
  TiffStripWriter(int width, int height, int channels, int depth, const EncodeOptions& options,
                  const ImageMetadata& metadata, WriteAt out);
  /// Destroyed before the last row, the file is left unfinished (no directory written).
  ~TiffStripWriter();
  TiffStripWriter(const TiffStripWriter&) = delete;
  TiffStripWriter& operator=(const TiffStripWriter&) = delete;

  /// Encodes the image's next `count` rows at `rows`, back to back, each `width` pixels of
  /// `stride` interleaved samples of `depth` bits in the host's byte order (`channels`, or more:
  /// from RGBA those from_rgba keeps, R and A for 2 channels). The last row of the image writes
  /// the directory and finishes the file. Throws blurtool::Error where the rows go past the
  /// image, `stride` is not channels..4 or libtiff fails, and what `out` throws.
  void write(const void* rows, int stride, int count);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// The TIFF of the first `channels` (1-4) samples of each of `image`'s pixels (all of them, or
/// from an RGBA image those from_rgba keeps: 1 R, 2 R and A, 3 RGB, 4 RGBA), at T's depth,
/// interleaved, compressed as options.tiff_compression says (LZW and deflate with the horizontal
/// predictor), in strips of about 64 KiB or, with options.tiff_tiled, 256x256 tiles; an alpha
/// channel is marked unassociated. `metadata`'s ICC profile, XMP packet and resolution are
/// written as tags (ICCPROFILE, XMLPACKET, XRESOLUTION / YRESOLUTION / RESOLUTIONUNIT), and its
/// orientation (ORIENTATION, 1 where it has none); its EXIF is not. Written by a
/// TiffStripWriter into memory. Throws blurtool::Error where libtiff fails. T is std::uint8_t
/// or std::uint16_t.
template <typename T>
std::vector<std::uint8_t> encode_tiff(const BasicImage<T>& image, int channels,
                                      const EncodeOptions& options,
                                      const ImageMetadata& metadata = {});

/// The metadata of the TIFF `bytes`' first directory: the ICC profile (ICCPROFILE), the XMP
/// packet (XMLPACKET), the resolution (XRESOLUTION, YRESOLUTION, RESOLUTIONUNIT; both needed)
/// and the orientation (ORIENTATION, 1-8; 1 where missing or out of range).
/// EXIF is not read. A directory libtiff cannot read gives empty metadata with a warning naming
/// `name` appended to `warnings` (if not null). Never throws for a bad file.
ImageMetadata read_tiff_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                 std::vector<std::string>* warnings = nullptr);

}  // namespace blurtool
