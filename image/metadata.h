// What a photo carries besides its pixels, read from one file's bytes and written into another's:
// the ICC profile, EXIF, XMP, the resolution, and PNG's colour chunks (sRGB, gAMA, cHRM).
//
// Where each lives:
// - JPEG: ICC in APP2 "ICC_PROFILE\0" segments (chunk n of m, each at most 65519 profile bytes,
//   joined in sequence order; ICC.1:2010 annex B.4), EXIF in APP1 "Exif\0\0" (a TIFF structure),
//   XMP in APP1 "http://ns.adobe.com/xap/1.0/\0", the resolution in the JFIF APP0 segment's
//   density (units: none, per inch, per centimetre).
// - PNG: iCCP (profile name, compression 0, zlib data), sRGB, gAMA, cHRM, pHYs (pixels per metre
//   or an aspect ratio), eXIf (the TIFF structure), iTXt "XML:com.adobe.xmp" (PNG 1.2 and the
//   PNG Third Edition's eXIf).
// The pixels are decoded by the codecs (image/*_codec.*); this file only walks the containers'
// segments and chunks, so it reads the same whichever decoder runs. EXIF is rewritten by libexif
// (orientation set to 1, thumbnail dropped); everything else is carried byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blurtool {

enum class ImageFormat;  // image/image_io.h

/// The resolution: `x` and `y` pixels per `unit` (inch or centimetre), or with unit none only
/// their ratio (the pixel aspect).
struct Resolution {
  enum class Unit { none, inch, centimetre };
  Unit unit = Unit::none;
  double x = 0, y = 0;
};

/// A file's metadata. Every member is empty (or unset) where the file has none.
struct ImageMetadata {
  std::vector<std::uint8_t>
      icc;               ///< ICC profile, whole (JPEG's APP2 chunks joined, PNG's inflated)
  std::string icc_name;  ///< PNG iCCP's profile name ("" elsewhere)
  std::vector<std::uint8_t> exif;  ///< EXIF as a TIFF structure ("II*\0" or "MM\0*" first)
  std::string xmp;                 ///< the XMP packet
  std::optional<int> srgb_intent;  ///< PNG sRGB chunk: rendering intent 0..3
  std::vector<std::uint8_t> gama;  ///< PNG gAMA chunk data (4 bytes)
  std::vector<std::uint8_t> chrm;  ///< PNG cHRM chunk data (32 bytes)
  std::optional<Resolution> resolution;
  /// A TIFF's Orientation tag (1-8, as EXIF's), kept for a TIFF output of pixels left as stored
  /// (--no-orient); 1 elsewhere (a JPEG's orientation lives in its EXIF).
  int orientation = 1;

  bool empty() const {
    return icc.empty() && exif.empty() && xmp.empty() && !srgb_intent && gama.empty() &&
           chrm.empty() && !resolution && orientation == 1;
  }
};

/// The metadata of a PNG or JPEG file's `bytes` (other formats: none). Segments or chunks that
/// are damaged (an ICC profile with a chunk missing, an iCCP that does not inflate, a cut
/// segment) are left out, each with a warning naming `name` appended to `warnings` (if not
/// null); the decoder judges the file itself. Never throws for a bad file.
ImageMetadata read_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                            std::vector<std::string>* warnings = nullptr);

/// What --strip keeps: everything (default), the colour (ICC profile and PNG's sRGB, gAMA, cHRM;
/// `--strip`), or nothing (`--strip=all`).
enum class KeepMetadata { all, colour, none };

/// `in` prepared for an output of the pixels decoded from its file: what `keep` drops removed
/// (the orientation goes with EXIF and XMP); with `upright` (the decoder turned the pixels as
/// the EXIF orientation or the TIFF Orientation tag said) the EXIF orientation, XMP's
/// tiff:Orientation and `orientation` set to 1; the EXIF thumbnail (IFD1 and its JPEG) always
/// dropped, since it would show the unblurred image. EXIF that libexif cannot read is dropped with
/// a warning naming `name`. Never throws for bad metadata.
ImageMetadata metadata_for_output(ImageMetadata in, KeepMetadata keep, bool upright,
                                  const std::string& name,
                                  std::vector<std::string>* warnings = nullptr);

/// Whether `m`'s colour is sRGB as far as blurtool can tell: no ICC profile (and no gAMA or cHRM
/// without sRGB), or an sRGB chunk, or a profile whose description names sRGB (read by lcms2).
/// --linear-light decodes the sRGB transfer curve; elsewhere it warns that it assumes it.
bool colour_is_srgb(const ImageMetadata& m);

/// `m` (metadata_for_output's) made fit for an output of `format` whose pixels have `channels`
/// (1-4) samples: an ICC profile whose colour space (header bytes 16-19) is not the pixels' (GRAY
/// for 1 or 2 channels, RGB for 3 or 4; WebP stores grey as RGB) is dropped with a warning
/// naming `output` (a CMYK JPEG is decoded to RGB; a grey PNG cannot take an RGB profile); for
/// a JPEG, PNG gAMA/cHRM without an ICC profile or sRGB become an equivalent profile made by
/// lcms2 (grey or RGB; cHRM missing: the sRGB primaries and D65; gAMA missing: 2.2); EXIF for a
/// TIFF, and a TIFF orientation other than 1 for any other format, are dropped with a warning
/// naming `output`. Never throws.
ImageMetadata metadata_for_pixels(ImageMetadata m, ImageFormat format, int channels,
                                  const std::string& output,
                                  std::vector<std::string>* warnings = nullptr);

/// The bytes of `m` as `format` stores them, ready to insert into an encoded file at
/// metadata_insertion_point: JPEG APP1 (EXIF, XMP) and APP2 (ICC, in chunks) segments; PNG
/// iCCP (or sRGB), gAMA, cHRM, pHYs, eXIf and iTXt chunks. What `format` cannot hold is left out
/// with a warning naming `output` (EXIF or XMP over a JPEG segment's 65533 bytes, a profile over
/// 255 APP2 chunks). The resolution of a JPEG goes
/// into its JFIF segment instead (set_jfif_density). Never throws.
std::vector<std::uint8_t> metadata_segments(const ImageMetadata& m, ImageFormat format,
                                            const std::string& output,
                                            std::vector<std::string>* warnings = nullptr);

/// Where metadata_segments' bytes go in an encoded PNG or JPEG that starts with the `size`
/// bytes at `data`: after a PNG's IHDR chunk (33), after a JPEG's SOI and its JFIF APP0 segment
/// if that comes first; 0 where `size` is too short to tell (more bytes are needed).
std::size_t metadata_insertion_point(const std::uint8_t* data, std::size_t size,
                                     ImageFormat format);

/// Inserts `m` into the encoded PNG or JPEG `encoded` (as blurtool's encoders write them:
/// a PNG's IHDR first, a JPEG's JFIF APP0 first), and for a JPEG sets the JFIF density to m's
/// resolution. Warnings as metadata_segments. Throws blurtool::Error where `encoded` is not such
/// a file.
void insert_metadata(std::vector<std::uint8_t>& encoded, ImageFormat format, const ImageMetadata& m,
                     const std::string& output, std::vector<std::string>* warnings = nullptr);

}  // namespace blurtool
