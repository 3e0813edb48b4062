// Helpers shared by the EXIF orientation tests (tests/unit/test_orientation.cpp, on the host, and
// tests/cli/test_orientation.cpp, through the binary): an upright picture of four solid
// quadrants, the pixels stored for each of the 8 orientations, built from the tag's definition
// (where the stored 0th row and 0th column lie when shown), not from the code under test, JPEGs
// carrying an orientation in an APP1 segment made by libexif, and TIFFs carrying one in their
// Orientation tag, written by libtiff itself.
#pragma once

#include <libexif/exif-data.h>
#include <tiffio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
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

// The stored pixels that a viewer shows as `shown` (8 or 16 bits) under orientation o.
template <typename T>
BasicImage<T> stored_for(const BasicImage<T>& shown, int o) {
  const Placement p = kPlacement[o];
  const bool rows_across = p.row == 'T' || p.row == 'B';  // stored rows run across the picture
  const int w = shown.width, h = shown.height;
  BasicImage<T> s{rows_across ? w : h, rows_across ? h : w, shown.channels,
                  PixelVector<T>(shown.pixels.size(), 0)};
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

// `stored` (1-4 channels, 8 or 16 bits) as an uncompressed TIFF written by libtiff with its
// Orientation tag set to `o` (an alpha channel marked unassociated); its bytes.
template <typename T>
std::vector<std::uint8_t> tagged_tiff(const BasicImage<T>& stored, int o) {
  static std::atomic<int> count{0};
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("blurtool_tagged_" + std::to_string(::getpid()) + "_" + std::to_string(count++) + ".tif"))
          .string();
  TIFF* t = TIFFOpen(path.c_str(), "w");
  if (!t) return {};
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(stored.width));
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(stored.height));
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(8 * sizeof(T)));
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(stored.channels));
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC,
               stored.channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, static_cast<std::uint32_t>(stored.height));
  TIFFSetField(t, TIFFTAG_ORIENTATION, static_cast<std::uint16_t>(o));
  if (stored.channels % 2 == 0) {
    const std::uint16_t extra[] = {EXTRASAMPLE_UNASSALPHA};
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, extra);
  }
  for (int y = 0; y < stored.height; ++y) {
    std::vector<T> row(stored.pixels.begin() + stored.index(0, y),
                       stored.pixels.begin() + stored.index(0, y + 1));
    TIFFWriteScanline(t, row.data(), static_cast<std::uint32_t>(y), 0);
  }
  TIFFClose(t);
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

}  // namespace blurtool
