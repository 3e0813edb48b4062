// Helpers of the metadata tests (tests/unit/test_metadata.cpp, tests/cli/test_metadata.cpp):
// marker segments and chunks spliced into files and read back out of them, written from the
// JPEG and PNG specifications and not from image/metadata.cpp, so that the tests do not check
// the code with itself.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace blurtool {

using Bytes = std::vector<std::uint8_t>;

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The ICC profile Debian's icc-profiles-free ships as compatible with Adobe RGB (1998)
// (installed by scripts/setup.sh).
inline const char* kAdobeRgbProfile = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc";

// `jpeg` with a marker segment (marker, payload) right after SOI.
inline Bytes with_segment(const Bytes& jpeg, std::uint8_t marker, const Bytes& payload) {
  const std::size_t length = payload.size() + 2;
  Bytes out(jpeg.size() + 2 + length);
  std::memcpy(out.data(), jpeg.data(), 2);
  const std::uint8_t head[4] = {0xFF, marker, static_cast<std::uint8_t>(length >> 8),
                                static_cast<std::uint8_t>(length)};
  std::memcpy(out.data() + 2, head, 4);
  std::memcpy(out.data() + 6, payload.data(), payload.size());
  std::memcpy(out.data() + 4 + length, jpeg.data() + 2, jpeg.size() - 2);
  return out;
}

// `jpeg` with `profile` in APP2 "ICC_PROFILE" chunks of at most `chunk` bytes (ICC.1 B.4).
inline Bytes with_icc_segments(const Bytes& jpeg, const Bytes& profile, std::size_t chunk = 65519) {
  const std::size_t count = (profile.size() + chunk - 1) / chunk;
  Bytes out = jpeg;
  for (std::size_t i = count; i-- > 0;) {  // each goes right after SOI: the last first
    const char id[] = "ICC_PROFILE";
    Bytes p(id, id + sizeof id);
    p.push_back(static_cast<std::uint8_t>(i + 1));
    p.push_back(static_cast<std::uint8_t>(count));
    const std::size_t from = i * chunk, to = std::min(profile.size(), from + chunk);
    p.insert(p.end(), profile.begin() + from, profile.begin() + to);
    out = with_segment(out, 0xE2, p);
  }
  return out;
}

// The marker segments of `jpeg` before its first SOS: (marker, payload) in file order.
inline std::vector<std::pair<std::uint8_t, Bytes>> jpeg_segment_list(const Bytes& jpeg) {
  std::vector<std::pair<std::uint8_t, Bytes>> out;
  std::size_t i = 2;
  while (i + 4 <= jpeg.size() && jpeg[i] == 0xFF && jpeg[i + 1] != 0xDA) {
    const std::size_t length = std::size_t{jpeg[i + 2]} << 8 | jpeg[i + 3];
    out.emplace_back(jpeg[i + 1], Bytes(jpeg.begin() + i + 4, jpeg.begin() + i + 2 + length));
    i += 2 + length;
  }
  return out;
}

// The chunks of `png` in file order: (type, data).
inline std::vector<std::pair<std::string, Bytes>> png_chunk_list(const Bytes& png) {
  std::vector<std::pair<std::string, Bytes>> out;
  std::size_t i = 8;
  while (i + 12 <= png.size()) {
    const std::size_t length = std::size_t{png[i]} << 24 | std::size_t{png[i + 1]} << 16 |
                               std::size_t{png[i + 2]} << 8 | png[i + 3];
    out.emplace_back(std::string(png.begin() + i + 4, png.begin() + i + 8),
                     Bytes(png.begin() + i + 8, png.begin() + i + 8 + length));
    i += 12 + length;
  }
  return out;
}

// `png` with a chunk of `type` and `data` right after IHDR.
inline Bytes with_chunk(const Bytes& png, const std::string& type, const Bytes& data) {
  Bytes out(png.size() + 12 + data.size());
  std::memcpy(out.data(), png.data(), 33);
  std::uint8_t* c = out.data() + 33;
  for (int i = 0; i < 4; ++i) c[i] = static_cast<std::uint8_t>(data.size() >> (24 - 8 * i));
  std::memcpy(c + 4, type.data(), 4);
  std::memcpy(c + 8, data.data(), data.size());
  const uLong crc = crc32(0, c + 4, static_cast<uInt>(4 + data.size()));
  for (int i = 0; i < 4; ++i)
    c[8 + data.size() + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  std::memcpy(c + 12 + data.size(), png.data() + 33, png.size() - 33);
  return out;
}

// `png` with `profile` in an iCCP chunk.
inline Bytes with_iccp(const Bytes& png, const Bytes& profile) {
  const char name[] = "Adobe RGB";
  Bytes data(name, name + sizeof name);
  data.push_back(0);
  uLongf size = compressBound(static_cast<uLong>(profile.size()));
  Bytes z(size);
  compress(z.data(), &size, profile.data(), static_cast<uLong>(profile.size()));
  data.insert(data.end(), z.begin(), z.begin() + static_cast<std::ptrdiff_t>(size));
  return with_chunk(png, "iCCP", data);
}

// The ICC profile of a JPEG (its APP2 chunks joined by sequence number) or PNG (iCCP inflated);
// empty where there is none.
inline Bytes icc_of(const Bytes& file) {
  if (file.size() > 2 && file[0] == 0xFF) {
    std::map<int, Bytes> chunks;
    for (const auto& [marker, p] : jpeg_segment_list(file))
      if (marker == 0xE2 && p.size() > 14 && std::memcmp(p.data(), "ICC_PROFILE", 12) == 0)
        chunks[p[12]] = Bytes(p.begin() + 14, p.end());
    Bytes out;
    for (const auto& [seq, c] : chunks) out.insert(out.end(), c.begin(), c.end());
    return out;
  }
  for (const auto& [type, data] : png_chunk_list(file)) {
    if (type != "iCCP") continue;
    const std::size_t at = std::strlen(reinterpret_cast<const char*>(data.data())) + 2;
    Bytes out(16 << 20);
    uLongf size = out.size();
    if (uncompress(out.data(), &size, data.data() + at, static_cast<uLong>(data.size() - at)) !=
        Z_OK)
      return {};
    out.resize(size);
    return out;
  }
  return {};
}

// The EXIF (TIFF structure) of a JPEG's APP1 "Exif" segment or a PNG's eXIf chunk.
inline Bytes exif_of(const Bytes& file) {
  if (file.size() > 2 && file[0] == 0xFF) {
    for (const auto& [marker, p] : jpeg_segment_list(file))
      if (marker == 0xE1 && p.size() > 6 && std::memcmp(p.data(), "Exif\0\0", 6) == 0)
        return Bytes(p.begin() + 6, p.end());
    return {};
  }
  for (const auto& [type, data] : png_chunk_list(file))
    if (type == "eXIf") return data;
  return {};
}

// The XMP packet of a JPEG's APP1 segment or a PNG's iTXt "XML:com.adobe.xmp" (uncompressed).
inline std::string xmp_of(const Bytes& file) {
  const char jpeg_id[] = "http://ns.adobe.com/xap/1.0/";
  if (file.size() > 2 && file[0] == 0xFF) {
    for (const auto& [marker, p] : jpeg_segment_list(file))
      if (marker == 0xE1 && p.size() > sizeof jpeg_id &&
          std::memcmp(p.data(), jpeg_id, sizeof jpeg_id) == 0)
        return std::string(p.begin() + sizeof jpeg_id, p.end());
    return {};
  }
  const char key[] = "XML:com.adobe.xmp";
  for (const auto& [type, data] : png_chunk_list(file)) {
    if (type != "iTXt" || data.size() < sizeof key + 4 ||
        std::memcmp(data.data(), key, sizeof key) != 0)
      continue;
    std::size_t at = sizeof key + 2;
    for (int field = 0; field < 2; ++field)
      at += std::strlen(reinterpret_cast<const char*>(data.data() + at)) + 1;
    return std::string(data.begin() + static_cast<std::ptrdiff_t>(at), data.end());
  }
  return {};
}

}  // namespace blurtool
