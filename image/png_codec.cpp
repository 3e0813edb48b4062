// PNG's header and chunk checks, libpng's decode and the encode dispatch (see png_codec.h).
//
// libpng reports errors by longjmp: every function that calls setjmp below holds only plain C
// data, so that no C++ destructor is ever skipped, and C++ objects (the output vector, the
// png_struct's owner) live in the caller.
#include "image/png_codec.h"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "image/png_encode.h"
#include "image/row_codec.h"
#include "util/error.h"

namespace blurtool {

namespace {

// Bits per sample of an image of T: 8 for Image, 16 for Image16.
template <typename T>
constexpr int kSampleBits = 8 * sizeof(T);

// PNG stores 16-bit samples big-endian; Image16 holds them in the host's byte order.
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// --- PNG structure --------------------------------------------------------------------------

std::uint32_t get32(const std::vector<std::uint8_t>& b, std::size_t pos) {
  return (std::uint32_t{b[pos]} << 24) | (std::uint32_t{b[pos + 1]} << 16) |
         (std::uint32_t{b[pos + 2]} << 8) | b[pos + 3];
}

// A chunk's type for messages: 'IDAT', or its hex bytes when they are not all letters.
std::string chunk_name(const std::vector<std::uint8_t>& b, std::size_t pos) {
  const bool letters = std::all_of(b.begin() + pos, b.begin() + pos + 4,
                                   [](std::uint8_t c) { return std::isalpha(c) != 0; });
  if (letters) return "'" + std::string(b.begin() + pos, b.begin() + pos + 4) + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "%02X %02X %02X %02X", b[pos], b[pos + 1], b[pos + 2], b[pos + 3]);
  return hex;
}

// libpng's words for a chunk whose CRC does not match ("IDAT: CRC error"), and zlib's, which
// libpng passes on, for a stream whose Adler-32 does not match its data.
constexpr const char kCrcMismatch[] = "CRC error";
constexpr const char kAdlerMismatch[] = "incorrect data check";

bool ends_with(const char* text, const char* end) {
  const std::size_t n = std::strlen(text), m = std::strlen(end);
  return n >= m && std::strcmp(text + n - m, end) == 0;
}

}  // namespace

[[noreturn]] void throw_png_truncated(const std::string& name, std::size_t size,
                                      const std::string& where) {
  throw Error(name + ": truncated PNG (the file ends at byte " + std::to_string(size) + ", " +
              where + ")");
}

PngHeader read_png_header(const std::vector<std::uint8_t>& b, const std::string& name) {
  PngHeader header;
  std::size_t pos = sizeof kPngSignature;
  for (;;) {
    if (b.size() - pos < 8) throw_png_truncated(name, b.size(), "inside its header");
    if (std::memcmp(&b[pos + 4], "CgBI", 4) != 0) break;
    header.apple = true;
    const std::uint64_t next = pos + 12 + std::uint64_t{get32(b, pos)};
    if (next > b.size()) throw_png_truncated(name, b.size(), "inside its header");
    pos = next;
  }
  auto bad = [&](const std::string& what) -> Error {
    return Error(name + ": corrupt or unsupported PNG header (" + what + ")");
  };
  if (std::memcmp(&b[pos + 4], "IHDR", 4) != 0)
    throw bad("the first chunk is " + chunk_name(b, pos + 4) + ", not 'IHDR'");
  if (get32(b, pos) != 13)
    throw bad("'IHDR' chunk of " + std::to_string(get32(b, pos)) + " bytes, not 13");
  if (b.size() - pos < 8 + 13) throw_png_truncated(name, b.size(), "inside its header");
  const std::uint8_t* f = &b[pos + 8];
  header.width = get32(b, pos + 8);
  header.height = get32(b, pos + 12);
  header.depth = f[8];
  header.color_type = f[9];
  for (const std::uint32_t side : {header.width, header.height}) {
    if (side == 0 || side > PNG_UINT_31_MAX) {
      throw bad("size " + std::to_string(header.width) + "x" + std::to_string(header.height));
    }
  }
  const int d = header.depth, c = header.color_type;
  if (d != 1 && d != 2 && d != 4 && d != 8 && d != 16) throw bad("bit depth " + std::to_string(d));
  if (c > 6 || (c & 1 && c != 3) || (c == 3 && d == 16)) {
    throw bad("colour type " + std::to_string(c) + " with bit depth " + std::to_string(d));
  }
  if (f[10] != 0) throw bad("compression method " + std::to_string(f[10]));
  if (f[11] != 0) throw bad("filter method " + std::to_string(f[11]));
  if (f[12] > 1) throw bad("interlace method " + std::to_string(f[12]));
  return header;
}

bool check_png_complete(const std::vector<std::uint8_t>& b, const std::string& name) {
  std::size_t pos = sizeof kPngSignature;
  bool trns = false;
  for (;;) {
    if (b.size() - pos < 8) throw_png_truncated(name, b.size(), "before its IEND chunk");
    if (std::memcmp(&b[pos + 4], "IEND", 4) == 0) return trns;
    trns = trns || std::memcmp(&b[pos + 4], "tRNS", 4) == 0;
    const std::uint32_t length = get32(b, pos);
    if (length > PNG_UINT_31_MAX) {
      throw Error(name + ": corrupt PNG (chunk " + chunk_name(b, pos + 4) + " at byte " +
                  std::to_string(pos) + " has a length of " + std::to_string(length) + ")");
    }
    if (b.size() - pos - 8 < std::uint64_t{length} + 4) {
      throw_png_truncated(name, b.size(), "inside its " + chunk_name(b, pos + 4) + " chunk");
    }
    pos += 12 + std::size_t{length};
  }
}

std::string png_checksum_error(const std::vector<std::uint8_t>& b, const std::string& reason) {
  if (ends_with(reason.c_str(), kCrcMismatch) || ends_with(reason.c_str(), kAdlerMismatch))
    return reason;
  // libpng may have stopped before a damaged chunk's CRC (at an error of the zlib stream inside
  // it): every chunk that lies whole in the file is checked here, as libpng would have.
  std::size_t pos = sizeof kPngSignature;
  while (b.size() - pos >= 12) {
    const std::uint32_t length = get32(b, pos);
    if (length > PNG_UINT_31_MAX || b.size() - pos - 12 < length) break;
    const auto crc = static_cast<std::uint32_t>(::crc32(0, &b[pos + 4], uInt{4} + length));
    if (crc != get32(b, pos + 8 + length)) {
      // libpng's words: the chunk's type as png_chunk_error writes it (a byte that is no letter
      // as [XX]), and "CRC error".
      std::string type;
      for (std::size_t i = pos + 4; i < pos + 8; ++i) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "[%02X]", b[i]);
        type += std::isalpha(b[i]) ? std::string(1, static_cast<char>(b[i])) : hex;
      }
      return type + ": " + kCrcMismatch;
    }
    if (std::memcmp(&b[pos + 4], "IEND", 4) == 0) break;
    pos += 12 + std::size_t{length};
  }
  return "";
}

namespace {

// --- libpng ---------------------------------------------------------------------------------

// State shared with libpng's callbacks: plain C data only, since it lives across setjmp.
struct PngIo {
  const std::uint8_t* in = nullptr;  // reading: the file's bytes
  std::size_t in_size = 0;
  std::size_t in_pos = 0;
  std::vector<std::uint8_t>* out = nullptr;  // writing: the encoded bytes
  char message[160] = {};                    // libpng's last error
  char adler[160] = {};                      // a failed Adler-32 check, libpng's warning
};

[[noreturn]] void png_on_error(png_structp png, png_const_charp message) {
  PngIo* io = static_cast<PngIo*>(png_get_error_ptr(png));
  std::snprintf(io->message, sizeof io->message, "%s", message ? message : "unknown error");
  png_longjmp(png, 1);
}

// Warnings are dropped (libpng's default prints them to stderr), but for the Adler-32: libpng
// checks it once the image's rows are read, and a mismatch found there is a "benign" error,
// only a warning on reading. png_read_pixels makes it the error it is.
void png_on_warning(png_structp png, png_const_charp message) {
  PngIo* io = static_cast<PngIo*>(png_get_error_ptr(png));
  if (message && ends_with(message, kAdlerMismatch) && !io->adler[0])
    std::snprintf(io->adler, sizeof io->adler, "%s", message);
}

void png_read_memory(png_structp png, png_bytep data, std::size_t length) {
  PngIo* io = static_cast<PngIo*>(png_get_io_ptr(png));
  if (io->in_size - io->in_pos < length) png_error(png, "the file ends early");
  std::memcpy(data, io->in + io->in_pos, length);
  io->in_pos += length;
}

// Reads the header and sets up the transformations that give stb_image's layout: palette to
// RGB, grey below 8 bits to 8, tRNS to an alpha channel (of 16 bits in a 16-bit file). With
// `depth` 8, 16 bits are reduced to the high byte (stb_image too keeps the high byte); with
// `depth` 16, 16-bit samples come in the host's byte order. False if the samples are not then
// `depth` bits (an 8-bit file asked for at 16). A CRC that does not match is an error in every
// chunk, ancillary ones too (libpng's default only warns there and drops the chunk, and a tRNS
// chunk dropped would change the pixels). With `rgba`, grey is also expanded to RGB and a
// missing alpha channel added at full scale, so that every file comes out with 4 channels.
// *stored: the channels the file's colour type and tRNS chunk give (before that expansion).
bool png_read_header(png_structp png, png_infop info, int depth, bool rgba, int* width, int* height,
                     int* channels, int* stored, int* passes) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_set_crc_action(png, PNG_CRC_ERROR_QUIT, PNG_CRC_ERROR_QUIT);
  png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);  // max_pixels is the limit
  png_read_info(png, info);
  const int type = png_get_color_type(png, info);
  *stored = (type & PNG_COLOR_MASK_COLOR ? 3 : 1) +
            (type & PNG_COLOR_MASK_ALPHA || png_get_valid(png, info, PNG_INFO_tRNS) ? 1 : 0);
  png_set_expand(png);
  if (depth == 8) png_set_strip_16(png);
  if (depth == 16 && kLittleEndian) png_set_swap(png);
  if (rgba) {
    png_set_gray_to_rgb(png);
    png_set_filler(png, depth == 16 ? 0xFFFF : 0xFF, PNG_FILLER_AFTER);
  }
  *passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  *width = static_cast<int>(png_get_image_width(png, info));
  *height = static_cast<int>(png_get_image_height(png, info));
  *channels = png_get_channels(png, info);
  return png_get_bit_depth(png, info) == depth;
}

bool png_read_pixels(png_structp png, std::uint8_t* pixels, std::size_t row_bytes, int height,
                     int passes) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int pass = 0; pass < passes; ++pass) {
    for (int y = 0; y < height; ++y) png_read_row(png, pixels + row_bytes * y, nullptr);
  }
  png_read_end(png, nullptr);  // as stb_image, require the chunks up to IEND
  const PngIo* io = static_cast<const PngIo*>(png_get_error_ptr(png));
  if (io->adler[0]) png_error(png, io->adler);
  return true;
}

}  // namespace

template <typename T>
bool decode_png_libpng(const std::vector<std::uint8_t>& bytes, int width, int height, bool rgba,
                       BasicImage<T>* image, int* stored, std::string* reason) {
  PngIo io;
  io.in = bytes.data();
  io.in_size = bytes.size();
  struct ReadStructs {
    png_structp png = nullptr;
    png_infop info = nullptr;
    ~ReadStructs() { png_destroy_read_struct(&png, &info, nullptr); }
  } structs;
  png_structp png = structs.png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, png_on_error, png_on_warning);
  png_infop info = structs.info = png ? png_create_info_struct(png) : nullptr;
  if (!info) return false;
  png_set_read_fn(png, &io, png_read_memory);
  int w = 0, h = 0, c = 0, passes = 1;
  const bool header = png_read_header(png, info, kSampleBits<T>, rgba, &w, &h, &c, stored, &passes);
  if (header && w == width && h == height && c >= 1 && c <= 4 && (!rgba || c == 4)) {
    image->width = w;
    image->height = h;
    image->channels = c;
    image->pixels.resize(static_cast<std::size_t>(w) * h * c);
    if (png_read_pixels(png, reinterpret_cast<std::uint8_t*>(image->pixels.data()),
                        static_cast<std::size_t>(w) * c * sizeof(T), h, passes))
      return true;
  }
  *reason = io.message;
  return false;
}

template bool decode_png_libpng(const std::vector<std::uint8_t>&, int, int, bool, Image*, int*,
                                std::string*);
template bool decode_png_libpng(const std::vector<std::uint8_t>&, int, int, bool, Image16*, int*,
                                std::string*);

template <typename T>
std::vector<std::uint8_t> encode_png(const BasicImage<T>& image, int channels,
                                     const EncodeOptions& options) {
  if (options.png_level < 0 || options.png_level > 9) {
    throw UsageError("PNG level " + std::to_string(options.png_level) + " is not in 0..9");
  }
  PngSettings settings = png_settings(options.png_level);
  settings.threads = options.threads;
  return blurtool::encode_png(png_pixels(image, channels), settings);
}

template std::vector<std::uint8_t> encode_png(const Image&, int, const EncodeOptions&);
template std::vector<std::uint8_t> encode_png(const Image16&, int, const EncodeOptions&);

namespace {

// libpng's structures for reading rows, freed with the source.
struct PngReadStructs {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngReadStructs() { png_destroy_read_struct(&png, &info, nullptr); }
};

// Sets up `png` to read `bytes` and reads its header as decode_png_libpng does, into RGBA; false
// where libpng refuses it (io->message says why) or the samples are not `depth` bits.
bool png_open_rgba(png_structp png, png_infop info, PngIo* io, int depth, int* width, int* height,
                   int* stored, int* passes) {
  png_set_read_fn(png, io, png_read_memory);
  int channels = 0;
  return png_read_header(png, info, depth, true, width, height, &channels, stored, passes) &&
         channels == 4;
}

// Reads `rows` rows of `row_bytes` into `out`; false where libpng fails (io->message says why).
bool png_read_rows(png_structp png, std::uint8_t* out, std::size_t row_bytes, int rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  for (int y = 0; y < rows; ++y) png_read_row(png, out + row_bytes * y, nullptr);
  return true;
}

class PngRows : public RowSource {
 public:
  PngRows(const std::vector<std::uint8_t>& bytes, const std::string& name, int depth)
      : name_(name) {
    io_.in = bytes.data();
    io_.in_size = bytes.size();
    structs_.png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, &io_, png_on_error, png_on_warning);
    structs_.info = structs_.png ? png_create_info_struct(structs_.png) : nullptr;
    if (!structs_.info) throw Error(name + ": cannot start libpng (out of memory?)");
    int passes = 1;
    const bool sixteen = bytes.size() > 24 && bytes[24] == 16;  // IHDR's bit depth
    depth_ = sixteen && depth == 16 ? 16 : 8;
    if (!png_open_rgba(structs_.png, structs_.info, &io_, depth_, &width_, &height_,
                       &stored_channels_, &passes))
      fail();
    if (passes != 1) throw Error(name + ": an interlaced PNG cannot be read by rows");
    sixteen_bit_ = sixteen;
  }

  void read(void* out, int rows) override {
    if (rows < 0 || rows > height_ - rows_read_)
      throw Error(name_ + ": rows " + std::to_string(rows_read_) + "+" + std::to_string(rows) +
                  " are past the image's " + std::to_string(height_));
    if (!png_read_rows(structs_.png, static_cast<std::uint8_t*>(out), row_bytes(), rows)) fail();
    rows_read_ += rows;
  }

 private:
  [[noreturn]] void fail() {
    throw Error(name_ + ": corrupt PNG (" + (io_.message[0] ? io_.message : "libpng failed") + ")");
  }

  std::string name_;
  PngIo io_;
  PngReadStructs structs_;
};

}  // namespace

std::unique_ptr<RowSource> open_png_rows(const std::vector<std::uint8_t>& bytes,
                                         const std::string& name, int depth) {
  return std::make_unique<PngRows>(bytes, name, depth);
}

}  // namespace blurtool
