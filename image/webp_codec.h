// WebP for image_io's front door, by libwebp: the header read (WebPGetFeatures) before any pixel
// is decoded, the decode into an Image (RGB, or RGBA where the file has alpha), the encode (lossy
// at a quality, or lossless), and the metadata WebP carries in its extended container's chunks
// (ICCP, EXIF, XMP, read by WebPDemux and written by WebPMux). WebP holds 8 bits a sample, RGB or
// RGBA, at most 16383 pixels a side. Animated WebPs are refused. Internal to image/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/metadata.h"

namespace blurtool {

/// Whether `bytes` begin with a WebP's RIFF header ("RIFF", 4 size bytes, "WEBP"), or, where
/// fewer than 12 bytes are given, with as much of it as they hold ("RIFF" at least: a file cut
/// there is a truncated WebP). Never throws.
bool has_webp_signature(const std::vector<std::uint8_t>& bytes);

/// What a WebP's header says (read_webp_header).
struct WebpHeader {
  int width = 0, height = 0;
  int channels = 3;  ///< 3 RGB, 4 RGBA (an alpha channel, lossy or lossless)
  bool lossless = false;
};

/// Reads the header of the WebP `bytes` (WebPGetFeatures: the RIFF header and the first chunks,
/// no pixel). Throws blurtool::Error naming `name` where the file is shorter than its RIFF header
/// says ("NAME: truncated WebP (...)"), libwebp cannot read the header ("NAME: corrupt WebP
/// header (...)"), or the file is animated ("NAME: animated WebP is not supported").
WebpHeader read_webp_header(const std::vector<std::uint8_t>& bytes, const std::string& name);

/// Decodes the WebP `bytes` (checked by read_webp_header) into RGB, or RGBA where it has alpha
/// or `rgba` asks (missing alpha at full scale), 8 bits a sample. Throws blurtool::Error naming
/// `name` where libwebp refuses the data ("NAME: corrupt WebP (libwebp: ...)").
Image decode_webp(const std::vector<std::uint8_t>& bytes, const std::string& name, bool rgba);

/// The WebP of the first `channels` (1-4) samples of each of `image`'s pixels (all of them, or
/// from an RGBA image those from_rgba keeps): grey is written as R=G=B, an alpha channel kept
/// (channels 2 and 4). Lossy at options.jpeg_quality (1..100; alpha compressed losslessly), or
/// lossless with options.webp_lossless (exact: the colour under transparent pixels kept).
/// `metadata`'s ICC profile, EXIF and XMP are written as ICCP, EXIF and XMP chunks (an extended
/// container, by WebPMux); WebP has no resolution. Throws blurtool::UsageError for a quality
/// outside 1..100, blurtool::Error for a side above kMaxWebpSide or where libwebp fails.
std::vector<std::uint8_t> encode_webp(const Image& image, int channels,
                                      const EncodeOptions& options,
                                      const ImageMetadata& metadata = {});

/// The metadata of the WebP `bytes`: its ICCP, EXIF and XMP chunks (WebPDemux), byte for byte.
/// A file WebPDemux cannot parse gives empty metadata with a warning naming `name` appended to
/// `warnings` (if not null). Never throws for a bad file.
ImageMetadata read_webp_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                 std::vector<std::string>* warnings = nullptr);

}  // namespace blurtool
