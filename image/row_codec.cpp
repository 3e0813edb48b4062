// Rows in and out (see row_codec.h): libjpeg's row interfaces here, libpng's in png_codec.cpp
// (open_png_rows), the PNG encoder in png_encode.cpp (PngStreamEncoder), the TIFF encoder in
// tiff_codec.cpp (TiffStripWriter).
//
// libjpeg reports errors by its error manager's error_exit, which jumps back to the setjmp of
// the call that failed; every function below that calls setjmp holds only plain C data between
// it and libjpeg's calls, so that no C++ destructor is skipped, and throws once back.
#include "image/row_codec.h"

#include <jpeglib.h>

#include <algorithm>
#include <climits>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <exception>

#include "image/codec_common.h"
#include "image/jpeg_codec.h"
#include "image/png_codec.h"
#include "image/tiff_codec.h"
#include "image/webp_codec.h"
#include "util/error.h"

namespace blurtool {

namespace {

// libjpeg's error manager, extended with the jump back and what went wrong.
struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf back;
  char message[JMSG_LENGTH_MAX] = {};
  std::exception_ptr sink_error;  // a sink's exception, rethrown once back
};

// The JpegErrors of a codec object: its client_data, which every object here sets.
JpegErrors& errors_of(j_common_ptr info) {
  return *static_cast<JpegErrors*>(info->client_data);
}

[[noreturn]] void jump_back(j_common_ptr info) {
  JpegErrors& e = errors_of(info);
  if (!e.message[0]) (*info->err->format_message)(info, e.message);
  std::longjmp(e.back, 1);
}

// Warnings (damaged data that libjpeg decodes past): the first one kept, none printed.
void keep_first_warning(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages
  JpegErrors& e = errors_of(info);
  ++info->err->num_warnings;
  if (!e.message[0]) (*info->err->format_message)(info, e.message);
}

void count_scans(j_common_ptr info) {
  auto* d = reinterpret_cast<j_decompress_ptr>(info);
  if (d->input_scan_number > kMaxJpegScans) {
    // image_io's check refuses such files before any decoder, in these words.
    std::snprintf(errors_of(info).message, JMSG_LENGTH_MAX,
                  "too many scans (the JPEG has more than %d, the limit)", kMaxJpegScans);
    std::longjmp(errors_of(info).back, 1);
  }
}

void init_errors(JpegErrors& e) {
  jpeg_std_error(&e.mgr);
  e.mgr.error_exit = jump_back;
  e.mgr.emit_message = keep_first_warning;
}

// Reads the header of `bytes`: whether its colour space is grey, YCbCr or RGB into *colour;
// false where libjpeg fails.
bool jpeg_header_colour(jpeg_decompress_struct* d, JpegErrors* e,
                        const std::vector<std::uint8_t>& bytes, bool* colour) {
  if (setjmp(e->back)) return false;
  jpeg_mem_src(d, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(d, TRUE);
  *colour = d->jpeg_color_space == JCS_GRAYSCALE || d->jpeg_color_space == JCS_YCbCr ||
            d->jpeg_color_space == JCS_RGB;
  return true;
}

// Starts decompressing the JPEG whose header jpeg_header_colour read, to RGBX, within
// `max_memory` bytes and kMaxJpegScans scans; false where libjpeg fails (e.message says why).
bool jpeg_start(jpeg_decompress_struct* d, JpegErrors* e, jpeg_progress_mgr* progress,
                long max_memory) {
  if (setjmp(e->back)) return false;
  d->out_color_space = JCS_EXT_RGBX;
  d->mem->max_memory_to_use = max_memory;
  progress->progress_monitor = count_scans;
  d->progress = progress;
  jpeg_start_decompress(d);
  return true;
}

bool jpeg_read_rows(jpeg_decompress_struct* d, JpegErrors* e, std::uint8_t* out,
                    std::size_t row_bytes, int rows) {
  if (setjmp(e->back)) return false;
  for (int y = 0; y < rows;) {
    JSAMPROW row = out + row_bytes * y;
    y += static_cast<int>(jpeg_read_scanlines(d, &row, 1));
  }
  return true;
}

class JpegRows : public RowSource {
 public:
  JpegRows(const std::vector<std::uint8_t>& bytes, const std::string& name,
           std::uint64_t max_memory)
      : name_(name) {
    init_errors(errors_);
    info_.err = &errors_.mgr;
    info_.client_data = &errors_;  // kept by jpeg_create_decompress, read by its errors
    jpeg_create_decompress(&info_);
    decompressor_.info = &info_;
    bool colour = true;
    const long limit = static_cast<long>(std::min<std::uint64_t>(max_memory, LONG_MAX));
    if (!jpeg_header_colour(&info_, &errors_, bytes, &colour)) fail();
    if (!colour) throw Error(name + ": a CMYK or YCCK JPEG cannot be read by rows");
    if (!jpeg_start(&info_, &errors_, &progress_, limit)) fail();
    width_ = static_cast<int>(info_.output_width);
    height_ = static_cast<int>(info_.output_height);
    stored_channels_ = info_.num_components == 1 ? 1 : 3;
    depth_ = 8;
  }

  void read(void* out, int rows) override {
    if (rows < 0 || rows > height_ - rows_read_)
      throw Error(name_ + ": rows " + std::to_string(rows_read_) + "+" + std::to_string(rows) +
                  " are past the image's " + std::to_string(height_));
    const long warnings = errors_.mgr.num_warnings;
    if (!jpeg_read_rows(&info_, &errors_, static_cast<std::uint8_t*>(out), row_bytes(), rows))
      fail();
    rows_read_ += rows;
    // Damaged data, decoded anyway (the damaged part grey), as the whole-image decoder does.
    if (warnings == 0 && errors_.mgr.num_warnings > 0)
      warnings_.push_back(name_ + ": damaged JPEG data, decoded anyway (" + errors_.message + ")");
  }

 private:
  [[noreturn]] void fail() {
    if (std::strstr(errors_.message, "Insufficient memory") ||
        std::strstr(errors_.message, "memory"))
      throw Error(name_ + ": decoding this progressive JPEG needs more memory than " +
                  "--max-memory allows (" + errors_.message + ")");
    throw Error(name_ + ": corrupt JPEG (" +
                (errors_.message[0] ? errors_.message : "libjpeg failed") + ")");
  }

  std::string name_;
  JpegErrors errors_;
  jpeg_progress_mgr progress_{};
  jpeg_decompress_struct info_{};
  // Destroys the decompressor also when the constructor throws (a bad header), where
  // ~JpegRows would not run.
  struct Destroyer {
    jpeg_decompress_struct* info = nullptr;
    ~Destroyer() {
      if (info) jpeg_destroy_decompress(info);
    }
  } decompressor_;
};

}  // namespace

std::string rows_unreadable(const std::vector<std::uint8_t>& bytes, bool orient) {
  if (starts_with(bytes, kPngSignature)) {
    // The IHDR chunk comes first (read_png_header checked it), unless Apple's CgBI does.
    if (bytes.size() < 33 || std::memcmp(&bytes[12], "IHDR", 4) != 0) return "an Apple PNG (CgBI)";
    return bytes[28] != 0 ? "an interlaced PNG" : "";
  }
  // libtiff and libwebp are asked for whole images only (TIFF strips come in any order and
  // planes; libwebp's incremental decoder holds the whole image anyway).
  if (starts_with(bytes, kTiffSignatureLE) || starts_with(bytes, kTiffSignatureBE)) return "a TIFF";
  if (has_webp_signature(bytes)) return "a WebP";
  if (!starts_with(bytes, kJpegSignature)) return "not a PNG or JPEG";
  if (orient && exif_orientation(bytes) != 1) return "a JPEG to be turned by its EXIF orientation";
  JpegErrors errors;
  init_errors(errors);
  jpeg_decompress_struct info{};
  info.err = &errors.mgr;
  info.client_data = &errors;
  jpeg_create_decompress(&info);
  bool colour = true;
  const bool ok = jpeg_header_colour(&info, &errors, bytes, &colour);
  jpeg_destroy_decompress(&info);
  if (!ok) return "a JPEG libjpeg cannot read";
  return colour ? "" : "a CMYK or YCCK JPEG";
}

std::unique_ptr<RowSource> open_rows(const std::vector<std::uint8_t>& bytes,
                                     const std::string& name, int depth, std::uint64_t max_memory) {
  if (starts_with(bytes, kPngSignature)) return open_png_rows(bytes, name, depth);
  return std::make_unique<JpegRows>(bytes, name, max_memory);
}

namespace {

class DecodedRows : public RowSource {
 public:
  explicit DecodedRows(DecodedImage image) : image_(std::move(image)) {
    width_ = image_.width();
    height_ = image_.height();
    stored_channels_ = image_.channels();
    depth_ = image_.is_wide() ? 16 : 8;
    sixteen_bit_ = image_.is_wide();
    if ((image_.is_wide() ? image_.wide.channels : image_.narrow.channels) != 4)
      throw Error("rows_of: the image is not RGBA");
  }

  void read(void* out, int rows) override {
    if (rows < 0 || rows > height_ - rows_read_)
      throw Error("rows " + std::to_string(rows_read_) + "+" + std::to_string(rows) +
                  " are past the image's " + std::to_string(height_));
    const auto* pixels = image_.is_wide()
                             ? reinterpret_cast<const std::uint8_t*>(image_.wide.pixels.data())
                             : image_.narrow.pixels.data();
    std::memcpy(out, pixels + row_bytes() * rows_read_, row_bytes() * rows);
    rows_read_ += rows;
  }

 private:
  DecodedImage image_;
};

}  // namespace

std::unique_ptr<RowSource> rows_of(DecodedImage image) {
  return std::make_unique<DecodedRows>(std::move(image));
}

// --- writing ------------------------------------------------------------------------------

RowWriter::RowWriter(ImageFormat format, int width, int height, int channels, int depth,
                     const EncodeOptions& options, Sink sink)
    : format_(format), width_(width), height_(height), channels_(channels), depth_(depth) {
  checked_size(width, height, channels, "RowWriter");
  if (format == ImageFormat::png) {
    if (options.png_level < 0 || options.png_level > 9)
      throw UsageError("PNG level " + std::to_string(options.png_level) + " is not in 0..9");
    PngSettings settings = png_settings(options.png_level);
    settings.threads = options.threads;
    png_ = std::make_unique<PngStreamEncoder>(width, height, channels, depth, settings,
                                              std::move(sink));
    return;
  }
  if (depth != 8) throw Error("encoding JPEG failed: 16-bit rows (narrow them first)");
  if (width > 65535 || height > 65535)
    throw Error("encoding JPEG failed: " + std::to_string(width) + "x" + std::to_string(height) +
                " is more than JPEG's 65535 pixels a side");
  jpeg_ = std::make_unique<JpegStripWriter>(width, height, channels, options, std::move(sink));
}

RowWriter::RowWriter(int width, int height, int channels, int depth, const EncodeOptions& options,
                     const ImageMetadata& metadata, WriteAt out)
    : format_(ImageFormat::tiff),
      width_(width),
      height_(height),
      channels_(channels),
      depth_(depth),
      tiff_(std::make_unique<TiffStripWriter>(width, height, channels, depth, options, metadata,
                                              std::move(out))) {}

RowWriter::~RowWriter() = default;

void RowWriter::write(const void* rows, int count, int before) {
  if (tiff_) {
    tiff_->write(rows, 4, count);
    return;
  }
  const std::size_t row_bytes = static_cast<std::size_t>(width_) * 4 * (depth_ / 8);
  if (png_) {
    if (count < 1) return;
    // The rows the encoder reads before new ones, of the `done` rows written so far: the
    // filter's row above and deflate's 32 KiB window in whole rows above that.
    const auto window = [&](std::size_t done) {
      return static_cast<int>(std::min(done, (std::size_t{32768} + row_bytes - 1) / row_bytes + 1));
    };
    // Encodes the `count` new rows at `pixels` after `context` rows before them.
    const auto add = [&](const std::uint8_t* pixels, int context) {
      PngPixels p;
      p.pixels = pixels - context * row_bytes;
      p.width = width_;
      p.height = context + count;
      p.channels = channels_;
      p.stride = 4;
      p.depth = depth_;
      png_->add(p, context);
    };
    const auto* in = static_cast<const std::uint8_t*>(rows);
    const int wanted = window(png_->rows_done());  // png_context_ rows are kept
    // The context in the caller's buffer, where its rows are those written: a strip's rows
    // above it are made again from its halo, and a schedule may round them differently.
    if (before >= wanted && (wanted == 0 || std::memcmp(in - wanted * row_bytes, png_rows_.data(),
                                                        wanted * row_bytes) == 0)) {
      add(in, wanted);
      // The next call's context, should its buffer not hold it.
      const int context = window(png_->rows_done());
      const std::uint8_t* end = in + count * row_bytes;
      png_rows_.assign(end - context * row_bytes, end);
      png_context_ = context;
      return;
    }
    // The rows go behind the last ones written (the row above and the window above it).
    const int keep = png_context_;
    png_rows_.resize((keep + count) * row_bytes);
    std::memcpy(png_rows_.data() + keep * row_bytes, rows, count * row_bytes);
    add(png_rows_.data() + keep * row_bytes, keep);
    const int context = window(keep + count);
    std::memmove(png_rows_.data(), png_rows_.data() + (keep + count - context) * row_bytes,
                 context * row_bytes);
    png_context_ = context;
    return;
  }
  jpeg_->write(static_cast<const std::uint8_t*>(rows), count);
}

}  // namespace blurtool
