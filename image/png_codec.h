// PNG for image_io's front door: the IHDR header and the chunks read straight from the bytes
// before any decoder runs, libpng's decode straight into an Image or Image16, and the encode
// handed to png_encode (image/png_encode.h). Internal to image/; stb_image, the fallback
// decoder, is image/stb_codec.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "image/codec_common.h"
#include "image/image_io.h"

namespace blurtool {

/// Throws blurtool::Error "NAME: truncated PNG (the file ends at byte SIZE, WHERE)".
[[noreturn]] void throw_png_truncated(const std::string& name, std::size_t size,
                                      const std::string& where);

/// Reads the IHDR chunk straight from the PNG bytes `b` (signature already checked), after an
/// optional CgBI chunk (as stb_image does), and refuses what both decoders refuse. Neither libpng
/// nor stb_image is asked: stb's header reader refuses images of more than 2^30 bytes or 2^24
/// pixels a side, before max_pixels is held. Throws blurtool::Error naming `name` for a header
/// that is truncated, not IHDR, or of an invalid size, depth, colour type or method.
PngHeader read_png_header(const std::vector<std::uint8_t>& b, const std::string& name);

/// Requires every chunk up to IEND to lie whole in the file (both decoders refuse a file that
/// ends earlier; stb_image does not need IEND's CRC, so neither does this), so that truncation is
/// reported as such. Returns whether the file has a tRNS chunk (an alpha channel once decoded).
/// Throws blurtool::Error naming `name` for a truncated file or a chunk length over 2^31 - 1.
bool check_png_complete(const std::vector<std::uint8_t>& b, const std::string& name);

/// For a PNG `b` that libpng refused with `reason` (decode_png_libpng): libpng's words where a
/// checksum failed ("IDAT: CRC error", "IDAT: incorrect data check" for the Adler-32), or, where
/// libpng stopped for another reason, "TYPE: CRC error" for the first chunk lying whole in the
/// file whose CRC does not match; "" if none. Such a file is damaged, and no other decoder is
/// to read it instead (stb_image checks neither checksum). Never throws.
std::string png_checksum_error(const std::vector<std::uint8_t>& b, const std::string& reason);

/// Decodes with libpng a PNG whose IHDR says `width` x `height`, into *image at the depth of T
/// (8 bits, a 16-bit file reduced to its high bytes; or 16 for a 16-bit file, in the host's byte
/// order): palette to RGB, grey below 8 bits to 8, tRNS to an alpha channel, as stb_image lays
/// them out; in RGBA with `rgba` (grey to R=G=B, missing alpha at full scale). *stored: the
/// channels the file's colour type and tRNS chunk give. Every chunk's CRC and the zlib stream's
/// Adler-32 are checked: a mismatch is a refusal (see png_checksum_error). False if libpng
/// refuses it, with libpng's reason in *reason ("" if it gave none); never throws for a bad
/// file. T is std::uint8_t or std::uint16_t.
template <typename T>
bool decode_png_libpng(const std::vector<std::uint8_t>& bytes, int width, int height, bool rgba,
                       BasicImage<T>* image, int* stored, std::string* reason);

class RowSource;  // image/row_codec.h

/// A RowSource (see open_rows) over the non-interlaced PNG `bytes` whose header was checked
/// (read_png_header), in RGBA of 16 bits for a 16-bit file where `depth` is 16, else of 8.
/// Throws blurtool::Error naming `name` where libpng refuses the header or the file is
/// interlaced.
std::unique_ptr<RowSource> open_png_rows(const std::vector<std::uint8_t>& bytes,
                                         const std::string& name, int depth);

/// The PNG of the `channels` samples of `image`'s pixels (all of them, or from an RGBA image
/// those from_rgba keeps), as options say (png_level, threads; see png_settings). Throws
/// blurtool::UsageError for a png_level outside 0..9, and what encode_png(PngPixels, ...)
/// throws. T is std::uint8_t or std::uint16_t.
template <typename T>
std::vector<std::uint8_t> encode_png(const BasicImage<T>& image, int channels,
                                     const EncodeOptions& options);

}  // namespace blurtool
