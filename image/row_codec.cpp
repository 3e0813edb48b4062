// Rows in and out (see row_codec.h): libjpeg's row interfaces here, libpng's in png_codec.cpp
// (open_png_rows), the PNG encoder in png_encode.cpp (PngStreamEncoder).
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
#include "image/png_codec.h"
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

namespace {

constexpr std::size_t kJpegOutBytes = std::size_t{1} << 16;

}  // namespace

// libjpeg's compressor with a destination that hands each full buffer to the sink.
struct RowWriter::Jpeg {
  JpegErrors errors;
  jpeg_compress_struct info{};
  // libjpeg's destination, first, and the Jpeg it belongs to (of() finds it from info->dest).
  struct Destination {
    jpeg_destination_mgr mgr;
    Jpeg* owner;
  } destination{{}, this};
  RowWriter::Sink sink;
  std::vector<std::uint8_t> buffer = std::vector<std::uint8_t>(kJpegOutBytes);
  bool created = false;

  ~Jpeg() {
    if (created) jpeg_destroy_compress(&info);
  }

  // The Jpeg of a compressor: its destination's owner (errors_of needs client_data).
  static Jpeg& of(j_compress_ptr info) {
    return *reinterpret_cast<Destination*>(info->dest)->owner;
  }

  // Hands `n` bytes of the buffer to the sink; a sink's exception goes back through libjpeg's
  // error jump (C code is never unwound) and is rethrown by the caller.
  static void hand_over(j_compress_ptr info, std::size_t n) {
    Jpeg& j = of(info);
    try {
      j.sink(j.buffer.data(), n);
    } catch (...) {
      j.errors.sink_error = std::current_exception();
      std::longjmp(j.errors.back, 1);
    }
    j.destination.mgr.next_output_byte = j.buffer.data();
    j.destination.mgr.free_in_buffer = j.buffer.size();
  }

  static void init_destination(j_compress_ptr info) {
    Jpeg& j = of(info);
    j.destination.mgr.next_output_byte = j.buffer.data();
    j.destination.mgr.free_in_buffer = j.buffer.size();
  }
  static boolean empty_output_buffer(j_compress_ptr info) {
    hand_over(info, of(info).buffer.size());
    return TRUE;
  }
  static void term_destination(j_compress_ptr info) {
    Jpeg& j = of(info);
    hand_over(info, j.buffer.size() - j.destination.mgr.free_in_buffer);
  }
};

namespace {

// Starts compressing with TurboJPEG's settings for tjCompress2 of TJPF_RGBX pixels (JFIF, the
// IJG quality scaling with baseline tables, the fast integer DCT below quality 96, standard
// Huffman tables, greyscale or YCbCr with the MCU of `subsampling`); false where libjpeg fails.
bool jpeg_start_compress(jpeg_compress_struct* c, JpegErrors* e, int width, int height, bool grey,
                         ChromaSubsampling subsampling, int quality) {
  if (setjmp(e->back)) return false;
  c->image_width = static_cast<JDIMENSION>(width);
  c->image_height = static_cast<JDIMENSION>(height);
  c->input_components = 4;
  c->in_color_space = JCS_EXT_RGBX;
  jpeg_set_defaults(c);
  jpeg_set_quality(c, quality, TRUE);
  c->dct_method = quality >= 96 ? JDCT_ISLOW : JDCT_FASTEST;
  jpeg_set_colorspace(c, grey ? JCS_GRAYSCALE : JCS_YCbCr);
  if (!grey) {
    c->comp_info[0].h_samp_factor = subsampling == ChromaSubsampling::s444 ? 1 : 2;
    c->comp_info[0].v_samp_factor = subsampling == ChromaSubsampling::s420 ? 2 : 1;
    for (int i = 1; i < 3; ++i) c->comp_info[i].h_samp_factor = c->comp_info[i].v_samp_factor = 1;
  }
  jpeg_start_compress(c, TRUE);
  return true;
}

bool jpeg_write_rows(jpeg_compress_struct* c, JpegErrors* e, const std::uint8_t* rows,
                     std::size_t row_bytes, int count, bool finish) {
  if (setjmp(e->back)) return false;
  for (int y = 0; y < count;) {
    JSAMPROW row = const_cast<std::uint8_t*>(rows + row_bytes * y);
    y += static_cast<int>(jpeg_write_scanlines(c, &row, 1));
  }
  if (finish) jpeg_finish_compress(c);
  return true;
}

[[noreturn]] void jpeg_write_failed(const JpegErrors& e) {
  if (e.sink_error) std::rethrow_exception(e.sink_error);
  throw Error(std::string("encoding JPEG failed: ") +
              (e.message[0] ? e.message : "libjpeg failed"));
}

}  // namespace

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
  if (options.jpeg_quality < 1 || options.jpeg_quality > 100)
    throw UsageError("JPEG quality " + std::to_string(options.jpeg_quality) + " is not in 1..100");
  if (depth != 8) throw Error("encoding JPEG failed: 16-bit rows (narrow them first)");
  if (width > 65535 || height > 65535)
    throw Error("encoding JPEG failed: " + std::to_string(width) + "x" + std::to_string(height) +
                " is more than JPEG's 65535 pixels a side");
  jpeg_ = std::make_unique<Jpeg>();
  Jpeg& j = *jpeg_;
  j.sink = std::move(sink);
  init_errors(j.errors);
  j.info.err = &j.errors.mgr;
  j.info.client_data = &j.errors;
  jpeg_create_compress(&j.info);
  j.created = true;
  j.destination.mgr.init_destination = Jpeg::init_destination;
  j.destination.mgr.empty_output_buffer = Jpeg::empty_output_buffer;
  j.destination.mgr.term_destination = Jpeg::term_destination;
  j.info.dest = &j.destination.mgr;
  if (!jpeg_start_compress(&j.info, &j.errors, width, height, channels < 3,
                           options.jpeg_subsampling, options.jpeg_quality))
    jpeg_write_failed(j.errors);
}

RowWriter::~RowWriter() = default;

void RowWriter::write(const void* rows, int count) {
  const std::size_t row_bytes = static_cast<std::size_t>(width_) * 4 * (depth_ / 8);
  if (png_) {
    if (count < 1) return;
    // The rows go behind the last ones written (whole rows up to deflate's 32 KiB window).
    const int keep = png_context_;
    png_rows_.resize((keep + count) * row_bytes);
    std::memcpy(png_rows_.data() + keep * row_bytes, rows, count * row_bytes);
    PngPixels p;
    p.pixels = png_rows_.data();
    p.width = width_;
    p.height = keep + count;
    p.channels = channels_;
    p.stride = 4;
    p.depth = depth_;
    png_->add(p, keep);
    const int context = static_cast<int>(
        std::min<std::size_t>(keep + count, (std::size_t{32768} + row_bytes - 1) / row_bytes));
    std::memmove(png_rows_.data(), png_rows_.data() + (keep + count - context) * row_bytes,
                 context * row_bytes);
    png_context_ = context;
    return;
  }
  Jpeg& j = *jpeg_;
  const int done = static_cast<int>(j.info.next_scanline);
  if (count < 0 || count > height_ - done)
    throw Error("encoding JPEG failed: rows " + std::to_string(done) + "+" + std::to_string(count) +
                " are past the image's " + std::to_string(height_));
  if (!jpeg_write_rows(&j.info, &j.errors, static_cast<const std::uint8_t*>(rows), row_bytes, count,
                       done + count == height_))
    jpeg_write_failed(j.errors);
}

}  // namespace blurtool
