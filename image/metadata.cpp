#include "image/metadata.h"

#include <lcms2.h>
#include <libexif/exif-data.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>

#include "image/codec_common.h"
#include "image/image_io.h"
#include "image/jpeg_codec.h"
#include "image/tiff_codec.h"
#include "image/webp_codec.h"
#include "util/error.h"

namespace blurtool {

namespace {

constexpr char kExifId[] = "Exif\0\0";  // 6 bytes with the terminator
constexpr std::size_t kExifIdSize = 6;
constexpr char kXmpId[] = "http://ns.adobe.com/xap/1.0/";  // and a 0 byte: 29
constexpr std::size_t kXmpIdSize = sizeof kXmpId;
constexpr char kIccId[] = "ICC_PROFILE";  // and a 0 byte, then sequence number and count: 14
constexpr std::size_t kIccIdSize = sizeof kIccId;
constexpr std::size_t kIccHeaderSize = kIccIdSize + 2;
constexpr std::size_t kMaxSegmentPayload = 65533;  // a JPEG segment's length field counts itself
constexpr std::size_t kMaxIccChunk = kMaxSegmentPayload - kIccHeaderSize;
constexpr char kXmpKeyword[] = "XML:com.adobe.xmp";
// An ICC profile or XMP packet larger than this is left out (none real comes near it; the cap
// bounds what a hostile iCCP can inflate to).
constexpr std::size_t kMaxMetadataBytes = std::size_t{16} << 20;

std::uint32_t be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}
std::uint16_t be16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

bool starts_with(const std::uint8_t* p, std::size_t size, const char* id, std::size_t id_size) {
  return size >= id_size && std::memcmp(p, id, id_size) == 0;
}

void warn(std::vector<std::string>* warnings, const std::string& line) {
  if (warnings) warnings->push_back(line);
}

// The zlib stream of `size` bytes at `p` inflated, at most kMaxMetadataBytes; false where it is
// damaged, cut or larger.
bool inflate_all(const std::uint8_t* p, std::size_t size, std::vector<std::uint8_t>* out) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return false;
  z.next_in = const_cast<Bytef*>(p);
  z.avail_in = static_cast<uInt>(size);
  out->clear();
  int rc = Z_OK;
  std::uint8_t buffer[16384];
  while (rc == Z_OK) {
    z.next_out = buffer;
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out->insert(out->end(), buffer, buffer + (sizeof buffer - z.avail_out));
    if (out->size() > kMaxMetadataBytes) rc = Z_MEM_ERROR;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // the stream is cut
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END;
}

std::vector<std::uint8_t> deflate_all(const std::vector<std::uint8_t>& in) {
  uLongf size = compressBound(static_cast<uLong>(in.size()));
  std::vector<std::uint8_t> out(size);
  if (compress2(out.data(), &size, in.data(), static_cast<uLong>(in.size()), 9) != Z_OK) return {};
  out.resize(size);
  return out;
}

void read_jpeg_metadata(const std::vector<std::uint8_t>& b, const std::string& name,
                        std::vector<std::string>* warnings, ImageMetadata* m) {
  std::size_t scan = 0;
  std::vector<JpegSegment> segments;
  try {
    segments = jpeg_segments(b.data(), b.size(), name, &scan);
  } catch (const Error&) {
    return;  // the decoder says what is wrong with the file
  }
  std::map<int, std::vector<std::uint8_t>> icc_chunks;
  int icc_count = 0;
  bool icc_bad = false;
  for (const JpegSegment& s : segments) {
    const std::uint8_t* p = b.data() + s.payload;
    const std::size_t n = s.length;
    if (s.marker == 0xE0 && !m->resolution && starts_with(p, n, "JFIF", 5) && n >= 12) {
      const int units = p[7], x = be16(p + 8), y = be16(p + 10);
      // 1:1 without units is what every encoder writes when it knows nothing.
      if (units <= 2 && x > 0 && y > 0 && !(units == 0 && x == y)) {
        Resolution r;
        r.unit = units == 1   ? Resolution::Unit::inch
                 : units == 2 ? Resolution::Unit::centimetre
                              : Resolution::Unit::none;
        r.x = x;
        r.y = y;
        m->resolution = r;
      }
    } else if (s.marker == 0xE1 && m->exif.empty() && starts_with(p, n, kExifId, kExifIdSize) &&
               n > kExifIdSize) {
      m->exif.assign(p + kExifIdSize, p + n);
    } else if (s.marker == 0xE1 && m->xmp.empty() && starts_with(p, n, kXmpId, kXmpIdSize)) {
      m->xmp.assign(reinterpret_cast<const char*>(p) + kXmpIdSize, n - kXmpIdSize);
    } else if (s.marker == 0xE2 && starts_with(p, n, kIccId, kIccIdSize) && n >= kIccHeaderSize) {
      const int seq = p[kIccIdSize], count = p[kIccIdSize + 1];
      if (seq < 1 || count < 1 || seq > count || (icc_count && count != icc_count) ||
          icc_chunks.count(seq))
        icc_bad = true;
      icc_count = count;
      icc_chunks[seq].assign(p + kIccHeaderSize, p + n);
    }
  }
  if (icc_chunks.empty()) return;
  if (icc_bad || static_cast<int>(icc_chunks.size()) != icc_count) {
    warn(warnings, name +
                       ": its ICC profile's APP2 chunks are incomplete or inconsistent; "
                       "the profile is left out");
    return;
  }
  for (auto& [seq, chunk] : icc_chunks) m->icc.insert(m->icc.end(), chunk.begin(), chunk.end());
}

// PNG's rules (as libpng applies them): the colour chunks count before PLTE and IDAT only, and
// only the first of each; a second iCCP or XMP iTXt is not inflated again.
void read_png_metadata(const std::vector<std::uint8_t>& b, const std::string& name,
                       std::vector<std::string>* warnings, ImageMetadata* m) {
  std::size_t at = 8;
  bool colour = true, iccp_seen = false, xmp_seen = false;
  while (at + 12 <= b.size()) {
    const std::size_t length = be32(&b[at]);
    if (length > b.size() - at - 12) return;  // cut: the decoder reports it
    const std::string type(reinterpret_cast<const char*>(&b[at + 4]), 4);
    const std::uint8_t* p = &b[at + 8];
    at += 12 + length;
    if (type == "IEND") return;
    if (type == "PLTE" || type == "IDAT") colour = false;
    if (type == "iCCP" && colour && !iccp_seen) {
      iccp_seen = true;
      const std::uint8_t* end = p + length;
      const std::uint8_t* zero = std::find(p, end, std::uint8_t{0});
      std::vector<std::uint8_t> profile;
      if (zero + 2 > end || zero[1] != 0 || !inflate_all(zero + 2, end - zero - 2, &profile) ||
          profile.empty()) {
        warn(warnings, name + ": its iCCP chunk does not inflate; the ICC profile is left out");
        continue;
      }
      m->icc = std::move(profile);
      m->icc_name.assign(reinterpret_cast<const char*>(p), zero - p);
    } else if (type == "sRGB" && colour && !m->srgb_intent && length == 1 && p[0] <= 3) {
      m->srgb_intent = p[0];
    } else if (type == "gAMA" && colour && m->gama.empty() && length == 4) {
      m->gama.assign(p, p + 4);
    } else if (type == "cHRM" && colour && m->chrm.empty() && length == 32) {
      m->chrm.assign(p, p + 32);
    } else if (type == "pHYs" && !m->resolution && length == 9 && p[8] <= 1 && be32(p) > 0 &&
               be32(p + 4) > 0) {
      Resolution r;
      r.unit = p[8] == 1 ? Resolution::Unit::centimetre : Resolution::Unit::none;
      r.x = be32(p) / (p[8] == 1 ? 100.0 : 1.0);  // per metre -> per centimetre
      r.y = be32(p + 4) / (p[8] == 1 ? 100.0 : 1.0);
      m->resolution = r;
    } else if (type == "eXIf" && m->exif.empty() && length > 0) {
      m->exif.assign(p, p + length);
    } else if (type == "iTXt" && !xmp_seen && length > sizeof kXmpKeyword + 3 &&
               std::memcmp(p, kXmpKeyword, sizeof kXmpKeyword) == 0) {
      xmp_seen = true;
      // keyword\0, compression flag, method, language\0, translated keyword\0, text
      const std::uint8_t* end = p + length;
      const std::uint8_t* q = p + sizeof kXmpKeyword;
      const bool compressed = q[0] != 0;
      q += 2;
      bool whole = true;
      for (int field = 0; field < 2 && whole; ++field) {
        q = std::find(q, end, std::uint8_t{0});
        whole = q != end;
        if (whole) ++q;
      }
      if (!whole) continue;
      if (!compressed) {
        m->xmp.assign(reinterpret_cast<const char*>(q), end - q);
      } else {
        std::vector<std::uint8_t> text;
        if (inflate_all(q, end - q, &text)) m->xmp.assign(text.begin(), text.end());
      }
    }
  }
}

// Whether `icc` starts with an ICC profile header: at least 128 bytes, "acsp" at byte 36.
bool is_icc_profile(const std::vector<std::uint8_t>& icc) {
  return icc.size() >= 128 && std::memcmp(&icc[36], "acsp", 4) == 0;
}

}  // namespace

ImageMetadata read_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                            std::vector<std::string>* warnings) {
  ImageMetadata m;
  static const std::uint8_t kPng[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPng, 8) == 0)
    read_png_metadata(bytes, name, warnings, &m);
  else if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
    read_jpeg_metadata(bytes, name, warnings, &m);
  else if (bytes.size() >= 4 && (std::memcmp(bytes.data(), "II*\0", 4) == 0 ||
                                 std::memcmp(bytes.data(), "MM\0*", 4) == 0))
    m = read_tiff_metadata(bytes, name, warnings);
  else if (bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 &&
           std::memcmp(bytes.data() + 8, "WEBP", 4) == 0)
    m = read_webp_metadata(bytes, name, warnings);
  if (!m.icc.empty() && !is_icc_profile(m.icc)) {
    warn(warnings, name + ": its ICC profile is not one (no 'acsp' signature); it is left out");
    m.icc.clear();
    m.icc_name.clear();
  }
  return m;
}

namespace {

// libexif parses at most 0xFFFE bytes of EXIF (a JPEG segment's most) and drops the rest in
// silence: larger EXIF (a PNG's eXIf can be) is left out with a warning instead.
constexpr std::size_t kMaxExifBytes = 0xFFFE - kExifIdSize;

unsigned exif_value(const ExifEntry* e, ExifByteOrder order) {
  if (!e || !e->data || e->components != 1) return 0;
  switch (e->format) {
    case EXIF_FORMAT_BYTE:
      return e->size >= 1 ? e->data[0] : 0;
    case EXIF_FORMAT_SHORT:
      return e->size >= 2 ? exif_get_short(e->data, order) : 0;
    case EXIF_FORMAT_LONG:
      return e->size >= 4 ? exif_get_long(e->data, order) : 0;
    default:
      return 0;
  }
}

void set_exif_value(ExifEntry* e, ExifByteOrder order, unsigned v) {
  if (e->format == EXIF_FORMAT_SHORT && e->size >= 2)
    exif_set_short(e->data, order, static_cast<ExifShort>(v));
  else if (e->format == EXIF_FORMAT_LONG && e->size >= 4)
    exif_set_long(e->data, order, v);
}

// `exif` (a TIFF structure) rewritten by libexif, which keeps the tags it does not know: where
// `upright`, the orientation replaced by SHORT 1 whatever type it had (the decoder's libexif
// reads a LONG or BYTE one too, and turned the pixels by it) and, after a quarter turn
// (orientations 5-8), PixelXDimension and PixelYDimension swapped; always without the
// thumbnail (IFD 1 and its JPEG) and the maker note, either of which may hold a preview of the
// unblurred image (and libexif cannot move a maker note without breaking the offsets inside
// it). Empty where libexif finds no tag in any IFD.
std::vector<std::uint8_t> rewrite_exif(const std::vector<std::uint8_t>& exif, bool upright) {
  std::unique_ptr<ExifData, void (*)(ExifData*)> data(exif_data_new(), exif_data_unref);
  if (!data) return {};
  exif_data_unset_option(data.get(), EXIF_DATA_OPTION_IGNORE_UNKNOWN_TAGS);
  exif_data_unset_option(data.get(), EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
  std::vector<std::uint8_t> with_id(kExifId, kExifId + kExifIdSize);
  with_id.insert(with_id.end(), exif.begin(), exif.end());
  exif_data_load_data(data.get(), with_id.data(), static_cast<unsigned>(with_id.size()));
  const ExifByteOrder order = exif_data_get_byte_order(data.get());
  if (upright) {
    ExifContent* ifd0 = data->ifd[EXIF_IFD_0];
    if (ExifEntry* old = exif_content_get_entry(ifd0, EXIF_TAG_ORIENTATION)) {
      const unsigned was = exif_value(old, order);
      exif_content_remove_entry(ifd0, old);
      ExifEntry* e = exif_entry_new();
      exif_content_add_entry(ifd0, e);
      exif_entry_initialize(e, EXIF_TAG_ORIENTATION);
      exif_set_short(e->data, order, 1);
      exif_entry_unref(e);
      ExifContent* sub = data->ifd[EXIF_IFD_EXIF];
      ExifEntry* x = exif_content_get_entry(sub, EXIF_TAG_PIXEL_X_DIMENSION);
      ExifEntry* y = exif_content_get_entry(sub, EXIF_TAG_PIXEL_Y_DIMENSION);
      if (was >= 5 && was <= 8 && x && y) {
        const unsigned w = exif_value(x, order), h = exif_value(y, order);
        set_exif_value(x, order, h);
        set_exif_value(y, order, w);
      }
    }
  }
  if (ExifEntry* note = exif_content_get_entry(data->ifd[EXIF_IFD_EXIF], EXIF_TAG_MAKER_NOTE))
    exif_content_remove_entry(data->ifd[EXIF_IFD_EXIF], note);
  // The thumbnail's bytes; libexif allocated them with its default allocator, calloc.
  if (data->data) {
    std::free(data->data);
    data->data = nullptr;
    data->size = 0;
  }
  while (data->ifd[EXIF_IFD_1] && data->ifd[EXIF_IFD_1]->count)
    exif_content_remove_entry(data->ifd[EXIF_IFD_1], data->ifd[EXIF_IFD_1]->entries[0]);
  bool tags = false;
  for (int i = 0; i < EXIF_IFD_COUNT; ++i) tags = tags || (data->ifd[i] && data->ifd[i]->count);
  if (!tags) return {};
  unsigned char* saved = nullptr;
  unsigned int size = 0;
  exif_data_save_data(data.get(), &saved, &size);
  std::unique_ptr<unsigned char, void (*)(void*)> owned(saved, std::free);
  if (!saved || size <= kExifIdSize) return {};
  return std::vector<std::uint8_t>(saved + kExifIdSize, saved + size);
}

// Whether the TIFF structure `exif` has a tag in its IFD 0 (or is damaged where it says how
// many): EXIF of no tags, as some editors write, is dropped without a word.
bool exif_has_tags(const std::vector<std::uint8_t>& exif) {
  if (exif.size() < 8) return true;
  const bool big = exif[0] == 'M';
  auto read = [&](std::size_t at, int bytes) {
    std::uint32_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v |= std::uint32_t{exif[at + i]} << (8 * (big ? bytes - 1 - i : i));
    return v;
  };
  const std::uint32_t ifd0 = read(4, 4);
  if (ifd0 > exif.size() - 2) return true;
  return read(ifd0, 2) != 0;
}

// Replaces the value of every XMP property `name` in `xmp`, written as an attribute
// (name="v") or an element (<name>v</name>), by `value`.
void set_xmp_property(std::string& xmp, const std::string& name, const std::string& value) {
  for (const std::string open : {name + "=\"", "<" + name + ">"}) {
    const std::string close = open.back() == '"' ? "\"" : "</" + name + ">";
    for (std::size_t at = xmp.find(open); at != std::string::npos;
         at = xmp.find(open, at + open.size())) {
      const std::size_t from = at + open.size(), to = xmp.find(close, from);
      if (to == std::string::npos) break;
      xmp.replace(from, to - from, value);
    }
  }
}

// Removes every element `name` (<name ...>...</name>) from `xmp`.
void remove_xmp_element(std::string& xmp, const std::string& name) {
  for (std::size_t at = xmp.find("<" + name); at != std::string::npos;
       at = xmp.find("<" + name, at)) {
    const std::size_t to = xmp.find("</" + name + ">", at);
    if (to == std::string::npos) break;
    xmp.erase(at, to + name.size() + 3 - at);
  }
}

}  // namespace

ImageMetadata metadata_for_output(ImageMetadata in, KeepMetadata keep, bool upright,
                                  const std::string& name, std::vector<std::string>* warnings) {
  if (keep == KeepMetadata::none) return {};
  if (keep == KeepMetadata::colour) {
    in.exif.clear();
    in.xmp.clear();
    in.resolution.reset();
    in.orientation = 1;
    return in;
  }
  if (upright) in.orientation = 1;
  if (in.exif.size() > kMaxExifBytes) {
    warn(warnings, name + ": its EXIF data (" + std::to_string(in.exif.size()) +
                       " bytes) is larger than blurtool rewrites (65,528 bytes); it is left out");
    in.exif.clear();
  } else if (!in.exif.empty()) {
    const bool tags = exif_has_tags(in.exif);
    in.exif = rewrite_exif(in.exif, upright);
    if (in.exif.empty() && tags)
      warn(warnings, name + ": its EXIF data cannot be read; it is left out");
  }
  if (!in.xmp.empty()) {
    // Previews of the unblurred image, and the orientation the pixels no longer need.
    remove_xmp_element(in.xmp, "xmp:Thumbnails");
    if (upright) set_xmp_property(in.xmp, "tiff:Orientation", "1");
  }
  return in;
}

bool colour_is_srgb(const ImageMetadata& m) {
  if (m.srgb_intent) return true;
  if (m.icc.empty()) return m.gama.empty() && m.chrm.empty();
  cmsHPROFILE profile =
      cmsOpenProfileFromMem(m.icc.data(), static_cast<cmsUInt32Number>(m.icc.size()));
  if (!profile) return false;
  char text[256] = {};
  cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", text, sizeof text);
  cmsCloseProfile(profile);
  return std::strstr(text, "sRGB") != nullptr;
}

namespace {

// An ICC profile equivalent to a PNG's gAMA and cHRM (cHRM missing: the sRGB primaries and D65
// white; gAMA missing: a 2.2 gamma), made by lcms2, so that a JPEG shows what the PNG showed.
// Empty where lcms2 cannot make it.
std::vector<std::uint8_t> profile_from_png_chunks(const ImageMetadata& m, bool grey) {
  double gamma = 2.2;
  if (m.gama.size() == 4 && be32(m.gama.data()) > 0) gamma = 100000.0 / be32(m.gama.data());
  double c[8] = {0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06};  // white, R, G, B
  if (m.chrm.size() == 32)
    for (int i = 0; i < 8; ++i) c[i] = be32(&m.chrm[4 * i]) / 100000.0;
  const cmsCIExyY white = {c[0], c[1], 1.0};
  const cmsCIExyYTRIPLE primaries = {{c[2], c[3], 1.0}, {c[4], c[5], 1.0}, {c[6], c[7], 1.0}};
  cmsToneCurve* curve = cmsBuildGamma(nullptr, gamma);
  if (!curve) return {};
  cmsToneCurve* curves[3] = {curve, curve, curve};
  cmsHPROFILE profile =
      grey ? cmsCreateGrayProfile(&white, curve) : cmsCreateRGBProfile(&white, &primaries, curves);
  cmsFreeToneCurve(curve);
  if (!profile) return {};
  std::vector<std::uint8_t> out;
  cmsUInt32Number size = 0;
  if (cmsSaveProfileToMem(profile, nullptr, &size) && size > 0) {
    out.resize(size);
    if (!cmsSaveProfileToMem(profile, out.data(), &size)) out.clear();
  }
  cmsCloseProfile(profile);
  return out;
}

void append_png_chunk(std::vector<std::uint8_t>& out, const char* type,
                      const std::vector<std::uint8_t>& data) {
  put32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t from = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put32(out,
        static_cast<std::uint32_t>(crc32(0, &out[from], static_cast<uInt>(out.size() - from))));
}

void append_jpeg_segment(std::vector<std::uint8_t>& out, std::uint8_t marker,
                         const std::vector<std::uint8_t>& payload) {
  out.push_back(0xFF);
  out.push_back(marker);
  const std::size_t length = payload.size() + 2;
  out.push_back(static_cast<std::uint8_t>(length >> 8));
  out.push_back(static_cast<std::uint8_t>(length));
  out.insert(out.end(), payload.begin(), payload.end());
}

std::uint32_t round_positive(double v, double most) {
  return static_cast<std::uint32_t>(std::clamp(std::lround(v), 1L, static_cast<long>(most)));
}

}  // namespace

ImageMetadata metadata_for_pixels(ImageMetadata m, ImageFormat format, int channels,
                                  const std::string& output, std::vector<std::string>* warnings) {
  // WebP stores grey as RGB.
  const bool grey = channels <= 2 && format != ImageFormat::webp;
  if (!m.icc.empty()) {
    const std::string space(m.icc.begin() + 16, m.icc.begin() + 20);
    if (space != (grey ? "GRAY" : "RGB ")) {
      warn(warnings, output + ": the input's ICC profile describes '" + space +
                         "' colour, not the " + (grey ? "grey" : "RGB") +
                         " pixels written; it is left out");
      m.icc.clear();
      m.icc_name.clear();
    }
  }
  if (format == ImageFormat::jpeg && m.icc.empty() && !m.srgb_intent &&
      !(m.gama.empty() && m.chrm.empty())) {
    m.icc = profile_from_png_chunks(m, grey);
    if (m.icc.empty())
      warn(warnings, output +
                         ": the PNG gAMA/cHRM colour cannot be carried to JPEG; viewers "
                         "will show it as sRGB");
  }
  if (format == ImageFormat::tiff && !m.exif.empty()) {
    warn(warnings, output + ": TIFF output does not carry EXIF; left out");
    m.exif.clear();
  }
  if (format != ImageFormat::tiff && m.orientation != 1) {
    warn(warnings, output + ": the input's TIFF orientation (" + std::to_string(m.orientation) +
                       ") is not carried to this format; its pixels are written as stored");
    m.orientation = 1;
  }
  return m;
}

std::vector<std::uint8_t> metadata_segments(const ImageMetadata& m, ImageFormat format,
                                            const std::string& output,
                                            std::vector<std::string>* warnings) {
  std::vector<std::uint8_t> out;
  if (format == ImageFormat::jpeg) {
    // An APP1 segment of `id` then `data`, or a warning where it would not fit one.
    auto app1 = [&](const char* id, std::size_t id_size, const auto& data, const char* what) {
      if (data.empty()) return;
      if (data.size() + id_size > kMaxSegmentPayload) {
        warn(warnings, output + ": " + what + " (" + std::to_string(data.size()) +
                           " bytes) is larger than a JPEG segment holds; left out");
        return;
      }
      std::vector<std::uint8_t> p(id, id + id_size);
      p.insert(p.end(), data.begin(), data.end());
      append_jpeg_segment(out, 0xE1, p);
    };
    app1(kExifId, kExifIdSize, m.exif, "the EXIF data");
    app1(kXmpId, kXmpIdSize, m.xmp, "the XMP packet");
    const std::vector<std::uint8_t>& icc = m.icc;
    const std::size_t chunks = (icc.size() + kMaxIccChunk - 1) / kMaxIccChunk;
    if (chunks > 255) {
      warn(warnings, output + ": the ICC profile (" + std::to_string(icc.size()) +
                         " bytes) is larger than JPEG's 255 APP2 chunks hold; left out");
    } else {
      for (std::size_t i = 0; i < chunks; ++i) {
        std::vector<std::uint8_t> p(kIccId, kIccId + kIccIdSize);
        p.push_back(static_cast<std::uint8_t>(i + 1));
        p.push_back(static_cast<std::uint8_t>(chunks));
        const std::size_t from = i * kMaxIccChunk, to = std::min(icc.size(), from + kMaxIccChunk);
        p.insert(p.end(), icc.begin() + from, icc.begin() + to);
        append_jpeg_segment(out, 0xE2, p);
      }
    }
    return out;
  }
  if (format != ImageFormat::png) return out;
  if (!m.icc.empty()) {
    std::string name = m.icc_name.empty() ? "ICC profile" : m.icc_name.substr(0, 79);
    std::vector<std::uint8_t> p(name.begin(), name.end());
    p.push_back(0);
    p.push_back(0);  // deflate
    const std::vector<std::uint8_t> z = deflate_all(m.icc);
    p.insert(p.end(), z.begin(), z.end());
    if (!z.empty()) append_png_chunk(out, "iCCP", p);
  } else if (m.srgb_intent) {
    append_png_chunk(out, "sRGB", {static_cast<std::uint8_t>(*m.srgb_intent)});
  }
  if (!m.gama.empty()) append_png_chunk(out, "gAMA", m.gama);
  if (!m.chrm.empty()) append_png_chunk(out, "cHRM", m.chrm);
  if (m.resolution) {
    const Resolution& r = *m.resolution;
    const double per_metre = r.unit == Resolution::Unit::inch         ? 1 / 0.0254
                             : r.unit == Resolution::Unit::centimetre ? 100.0
                                                                      : 1.0;
    std::vector<std::uint8_t> p;
    put32(p, round_positive(r.x * per_metre, 2147483647.0));
    put32(p, round_positive(r.y * per_metre, 2147483647.0));
    p.push_back(r.unit == Resolution::Unit::none ? 0 : 1);
    append_png_chunk(out, "pHYs", p);
  }
  if (!m.exif.empty()) append_png_chunk(out, "eXIf", m.exif);
  if (!m.xmp.empty()) {
    std::vector<std::uint8_t> p(kXmpKeyword, kXmpKeyword + sizeof kXmpKeyword);
    for (int i = 0; i < 4; ++i) p.push_back(0);  // uncompressed, method, language, translation
    p.insert(p.end(), m.xmp.begin(), m.xmp.end());
    append_png_chunk(out, "iTXt", p);
  }
  return out;
}

std::size_t metadata_insertion_point(const std::uint8_t* data, std::size_t size,
                                     ImageFormat format) {
  if (format == ImageFormat::png) return size >= 33 ? 33 : 0;
  if (format != ImageFormat::jpeg || size < 4) return 0;
  if (data[2] != 0xFF || data[3] != 0xE0) return 2;
  if (size < 6) return 0;
  const std::size_t end = 4 + be16(data + 4);
  if (end < 11) return 2;  // too short to be JFIF
  if (size < end) return 0;
  return starts_with(data + 6, end - 6, "JFIF", 5) ? end : 2;
}

void insert_metadata(std::vector<std::uint8_t>& encoded, ImageFormat format, const ImageMetadata& m,
                     const std::string& output, std::vector<std::string>* warnings) {
  if (m.empty()) return;
  const std::size_t at = metadata_insertion_point(encoded.data(), encoded.size(), format);
  if (at == 0) throw Error(output + ": the encoder's output has no header to insert metadata at");
  if (format == ImageFormat::jpeg && at >= 18 && m.resolution) {
    // JFIF density: units at 13, X and Y at 14 and 16 (after FF D8, FF E0, the length,
    // "JFIF\0" and the version).
    const Resolution& r = *m.resolution;
    const bool cm =
        r.unit == Resolution::Unit::centimetre && r.x == std::floor(r.x) && r.y == std::floor(r.y);
    const double scale = r.unit == Resolution::Unit::centimetre && !cm ? 2.54 : 1.0;
    const std::uint32_t x = round_positive(r.x * scale, 65535),
                        y = round_positive(r.y * scale, 65535);
    encoded[13] = r.unit == Resolution::Unit::none ? 0 : cm ? 2 : 1;
    encoded[14] = static_cast<std::uint8_t>(x >> 8);
    encoded[15] = static_cast<std::uint8_t>(x);
    encoded[16] = static_cast<std::uint8_t>(y >> 8);
    encoded[17] = static_cast<std::uint8_t>(y);
  }
  const std::vector<std::uint8_t> segments = metadata_segments(m, format, output, warnings);
  encoded.insert(encoded.begin() + static_cast<std::ptrdiff_t>(at), segments.begin(),
                 segments.end());
}

}  // namespace blurtool
