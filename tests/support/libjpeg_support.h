// JPEGs made with libjpeg's own compression interface, for what tjCompress2 cannot be asked for:
// arithmetic coding, and scan scripts of any length (progressive files of hundreds of scans, a
// sequential file with one component a scan), which the scan limit's tests need. Shared by the
// unit and cli tests, which link libjpeg (tests/CMakeLists.txt).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "image/image_io.h"

namespace blurtool {

/// How libjpeg_jpeg codes a file: arithmetic coding (SOF9, or SOF10 when progressive) instead of
/// Huffman's; progressive (jpeg_simple_progression) where `script` is empty; else `script`.
struct LibjpegCoding {
  bool arithmetic = false;
  bool progressive = false;
  std::vector<jpeg_scan_info> script;
  int quality = 90;
  int restart_interval = 0;  ///< MCUs between restart markers; 0: none
  bool optimize = false;     ///< Huffman tables made for the image (optimize_coding)
  int h = 2, v = 2;          ///< the luma sampling factors of a colour image (2, 2: 4:2:0)
};

namespace libjpeg_detail {
struct Errors {
  jpeg_error_mgr mgr;
  std::jmp_buf back;
};
inline void jump(j_common_ptr info) {
  std::longjmp(reinterpret_cast<Errors*>(info->err)->back, 1);
}
}  // namespace libjpeg_detail

/// The JPEG of `image` (1 channel: greyscale; 3: YCbCr from RGB, 4:2:0 unless `coding` says),
/// coded as `coding` says (quality 90 unless it says); empty and a test failure where libjpeg
/// refuses (a scan script it finds bad).
inline std::vector<std::uint8_t> libjpeg_jpeg(const Image& image, const LibjpegCoding& coding) {
  jpeg_compress_struct info;
  libjpeg_detail::Errors errors;
  info.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = libjpeg_detail::jump;
  unsigned char* data = nullptr;
  unsigned long size = 0;
  if (setjmp(errors.back)) {
    char message[JMSG_LENGTH_MAX];
    (*info.err->format_message)(reinterpret_cast<j_common_ptr>(&info), message);
    ADD_FAILURE() << "libjpeg: " << message;
    jpeg_destroy_compress(&info);
    std::free(data);
    return {};
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &data, &size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = image.channels;
  info.in_color_space = image.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, coding.quality, TRUE);
  info.arith_code = coding.arithmetic ? TRUE : FALSE;
  info.restart_interval = static_cast<unsigned>(coding.restart_interval);
  info.optimize_coding = coding.optimize ? TRUE : FALSE;
  if (image.channels == 3) {
    info.comp_info[0].h_samp_factor = coding.h;
    info.comp_info[0].v_samp_factor = coding.v;
  }
  if (!coding.script.empty()) {
    info.scan_info = coding.script.data();
    info.num_scans = static_cast<int>(coding.script.size());
  } else if (coding.progressive) {
    jpeg_simple_progression(&info);
  }
  jpeg_start_compress(&info, TRUE);
  const std::size_t row_bytes = static_cast<std::size_t>(image.width) * image.channels;
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.pixels.data() + info.next_scanline * row_bytes);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::vector<std::uint8_t> bytes(data, data + size);
  std::free(data);
  return bytes;
}

/// A progressive scan of the DC coefficients of components 0..components-1, interleaved, to
/// their last bit (Ss = Se = 0, Ah = Al = 0): a LibjpegCoding script's first scan.
inline jpeg_scan_info dc_scan(int components) {
  jpeg_scan_info dc{};
  dc.comps_in_scan = components;
  for (int i = 0; i < components; ++i) dc.component_index[i] = i;
  return dc;
}

/// A progressive greyscale JPEG of `image` (1 channel) of exactly `scans` scans (64 to 694): the
/// DC scan, then each AC coefficient in a scan of its own, the first of them refined bit by bit
/// (successive approximation, up to 10 bits each, libjpeg's limit) until `scans` are written.
/// Every scan is one libjpeg's encoder accepts, so the file is valid and decodes without a
/// warning; only its number of scans is unusual.
inline std::vector<std::uint8_t> progressive_jpeg_of_scans(const Image& image, int scans) {
  EXPECT_TRUE(image.channels == 1 && scans >= 64 && scans <= 64 + 63 * 10) << scans;
  LibjpegCoding coding;
  auto scan = [&](int ss, int se, int ah, int al) {
    jpeg_scan_info s{};
    s.comps_in_scan = 1;
    s.component_index[0] = 0;
    s.Ss = ss;
    s.Se = se;
    s.Ah = ah;
    s.Al = al;
    coding.script.push_back(s);
  };
  scan(0, 0, 0, 0);
  int extra = scans - 64;
  for (int k = 1; k < 64; ++k) {
    const int bits = std::min(extra, 10);
    extra -= bits;
    scan(k, k, 0, bits);
    for (int a = bits; a > 0; --a) scan(k, k, a, a - 1);
  }
  return libjpeg_jpeg(image, coding);
}

/// A sequential (baseline) colour JPEG of `image` (3 channels) with its three components in
/// scans of their own, the first scan then repeated `repeats` times: 3 + repeats scans.
/// libjpeg decodes each repetition again into the same coefficients (the DC prediction restarts
/// with each scan), so the pixels are those of the file without repetitions.
inline std::vector<std::uint8_t> repeated_scan_jpeg(const Image& image, int repeats) {
  LibjpegCoding coding;
  for (int c = 0; c < 3; ++c) {
    jpeg_scan_info s{};
    s.comps_in_scan = 1;
    s.component_index[0] = c;
    s.Ss = 0;
    s.Se = 63;
    coding.script.push_back(s);
  }
  const std::vector<std::uint8_t> jpeg = libjpeg_jpeg(image, coding);
  // The first SOS segment and its entropy-coded data: up to the next marker that is not a
  // stuffed byte (FF 00) or a restart marker.
  std::size_t sos = 2;
  while (sos + 4 <= jpeg.size() && !(jpeg[sos] == 0xFF && jpeg[sos + 1] == 0xDA))
    sos += 2 + (std::size_t{jpeg[sos + 2]} << 8 | jpeg[sos + 3]);
  std::size_t end = sos + 2 + (std::size_t{jpeg[sos + 2]} << 8 | jpeg[sos + 3]);
  while (end + 1 < jpeg.size() && !(jpeg[end] == 0xFF && jpeg[end + 1] != 0x00 &&
                                    (jpeg[end + 1] < 0xD0 || jpeg[end + 1] > 0xD7)))
    ++end;
  EXPECT_LT(end + 1, jpeg.size()) << "no marker after the first scan";
  std::vector<std::uint8_t> out(jpeg.begin(), jpeg.begin() + end);
  for (int i = 0; i < repeats; ++i) out.insert(out.end(), jpeg.begin() + sos, jpeg.begin() + end);
  out.insert(out.end(), jpeg.begin() + end, jpeg.end());
  return out;
}

}  // namespace blurtool
