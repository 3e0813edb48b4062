// Helpers shared by the EXIF orientation tests (tests/unit/test_orientation.cpp, on the host, and
// tests/cli/test_orientation.cpp, through the binary): an upright picture of four solid
// quadrants, the pixels stored for each of the 8 orientations, built from the tag's definition
// (where the stored 0th row and 0th column lie when shown), not from the code under test, and
// JPEGs carrying an orientation in an APP1 segment made by libexif.
#pragma once

#include <libexif/exif-data.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <vector>

#include "image/image_io.h"

namespace blurtool {

// The upright picture: 48x32 RGB, four solid quadrants (red, green / blue, white).
inline constexpr int kW = 48, kH = 32;
inline constexpr std::uint8_t kQuadrant[4][3] = {
    {255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};

inline Image upright() {
  Image img{kW, kH, 3, PixelVector<std::uint8_t>(kW * kH * 3, 0)};
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x)
      for (int c = 0; c < 3; ++c)
        img.pixels[img.index(x, y, c)] = kQuadrant[(y >= kH / 2) * 2 + (x >= kW / 2)][c];
  return img;
}

// Where the stored image's 0th row and 0th column lie when shown, per orientation (EXIF 2.3,
// tag 0x0112): Top, Bottom, Left, Right.
struct Placement {
  char row, column;
};
inline constexpr Placement kPlacement[9] = {{},         {'T', 'L'}, {'T', 'R'},
                                            {'B', 'R'}, {'B', 'L'}, {'L', 'T'},
                                            {'R', 'T'}, {'R', 'B'}, {'L', 'B'}};

// The stored pixels that a viewer shows as `shown` under orientation o.
inline Image stored_for(const Image& shown, int o) {
  const Placement p = kPlacement[o];
  const bool rows_across = p.row == 'T' || p.row == 'B';  // stored rows run across the picture
  const int w = shown.width, h = shown.height;
  Image s{rows_across ? w : h, rows_across ? h : w, shown.channels,
          PixelVector<std::uint8_t>(shown.pixels.size(), 0)};
  for (int sy = 0; sy < s.height; ++sy) {
    for (int sx = 0; sx < s.width; ++sx) {
      int x, y;
      if (rows_across) {
        y = p.row == 'T' ? sy : h - 1 - sy;
        x = p.column == 'L' ? sx : w - 1 - sx;
      } else {
        x = p.row == 'L' ? sy : w - 1 - sy;
        y = p.column == 'T' ? sx : h - 1 - sx;
      }
      for (int c = 0; c < shown.channels; ++c)
        s.pixels[s.index(sx, sy, c)] = shown.pixels[shown.index(x, y, c)];
    }
  }
  return s;
}

// `jpeg` with an APP1 segment right after SOI holding `exif` ("Exif\0\0" and a TIFF structure).
inline std::vector<std::uint8_t> with_app1(const std::vector<std::uint8_t>& jpeg,
                                           const std::vector<std::uint8_t>& exif) {
  const size_t length = exif.size() + 2;
  const std::uint8_t marker[] = {0xFF, 0xE1, static_cast<std::uint8_t>(length >> 8),
                                 static_cast<std::uint8_t>(length & 0xFF)};
  std::vector<std::uint8_t> out(jpeg.size() + 4 + exif.size());
  std::copy(jpeg.begin(), jpeg.begin() + 2, out.begin());  // SOI
  std::copy(std::begin(marker), std::end(marker), out.begin() + 2);
  std::copy(exif.begin(), exif.end(), out.begin() + 6);
  std::copy(jpeg.begin() + 2, jpeg.end(), out.begin() + 6 + exif.size());
  return out;
}

// EXIF data holding orientation `o` in IFD0, written by libexif in byte order `order`.
inline std::vector<std::uint8_t> exif_with_orientation(int o, ExifByteOrder order) {
  ExifData* data = exif_data_new();
  exif_data_set_byte_order(data, order);
  ExifEntry* entry = exif_entry_new();
  exif_content_add_entry(data->ifd[EXIF_IFD_0], entry);
  exif_entry_initialize(entry, EXIF_TAG_ORIENTATION);
  exif_set_short(entry->data, order, static_cast<ExifShort>(o));
  unsigned char* bytes = nullptr;
  unsigned int size = 0;
  exif_data_save_data(data, &bytes, &size);
  std::vector<std::uint8_t> out(bytes, bytes + size);
  std::free(bytes);
  exif_entry_unref(entry);
  exif_data_unref(data);
  return out;
}

// The picture stored for orientation o, as a JPEG (quality 100) tagged with o.
inline std::vector<std::uint8_t> tagged_jpeg(int o, ExifByteOrder order) {
  return with_app1(encode_image(stored_for(upright(), o), ImageFormat::jpeg, 100),
                   exif_with_orientation(o, order));
}

}  // namespace blurtool
