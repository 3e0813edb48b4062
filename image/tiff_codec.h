// TIFF for image_io's front door, by libtiff over the bytes in memory (TIFFClientOpenExt, no
// temporary files): the first directory's tags checked before any pixel is read, the decode into
// an Image or Image16, the encode, and the metadata TIFF tags carry (ICC profile, XMP,
// resolution). libtiff's decoders have a long CVE history, so only the variants blurtool writes
// and photographers' tools commonly do are read, each other one refused by name before a strip is
// decoded: 8 or 16 unsigned bits per sample; grey (min-is-black), grey + alpha, RGB, RGBA;
// strips or tiles; no compression, LZW or deflate (with or without the horizontal predictor);
// samples interleaved (contiguous) or in separate planes. libtiff's errors and warnings go to a
// handler of each open file (TIFFOpenOptions), never to stderr, so decoding on several threads
// keeps each file's messages apart. Internal to image/.
#pragma once

#include <cstdint>
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

/// The TIFF of the first `channels` (1-4) samples of each of `image`'s pixels (all of them, or
/// from an RGBA image those from_rgba keeps: 1 R, 2 R and A, 3 RGB, 4 RGBA), at T's depth,
/// interleaved, compressed as options.tiff_compression says (LZW and deflate with the horizontal
/// predictor), in strips of about 64 KiB or, with options.tiff_tiled, 256x256 tiles; an alpha
/// channel is marked unassociated. `metadata`'s ICC profile, XMP packet and resolution are
/// written as tags (ICCPROFILE, XMLPACKET, XRESOLUTION / YRESOLUTION / RESOLUTIONUNIT); its EXIF
/// is not. Throws blurtool::Error where libtiff fails. T is std::uint8_t or std::uint16_t.
template <typename T>
std::vector<std::uint8_t> encode_tiff(const BasicImage<T>& image, int channels,
                                      const EncodeOptions& options,
                                      const ImageMetadata& metadata = {});

/// The metadata of the TIFF `bytes`' first directory: the ICC profile (ICCPROFILE), the XMP
/// packet (XMLPACKET) and the resolution (XRESOLUTION, YRESOLUTION, RESOLUTIONUNIT; both needed).
/// EXIF is not read. A directory libtiff cannot read gives empty metadata with a warning naming
/// `name` appended to `warnings` (if not null). Never throws for a bad file.
ImageMetadata read_tiff_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                 std::vector<std::string>* warnings = nullptr);

}  // namespace blurtool
