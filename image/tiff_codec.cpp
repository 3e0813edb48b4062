// TIFF by libtiff over bytes in memory, or a file written at offsets (see tiff_codec.h for what
// is read and refused).
#include "image/tiff_codec.h"

#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>

#include "image/codec_common.h"
#include "util/error.h"

namespace blurtool {

namespace {

// The bytes a TIFF handle reads (`in`) or writes (through `to`, at any offset), and where it
// stands.
struct MemoryFile {
  const std::uint8_t* in = nullptr;
  std::size_t size = 0;  // of `in`, or the end of what was written through `to`
  std::size_t pos = 0;
  const TiffStripWriter::WriteAt* to = nullptr;
  std::exception_ptr write_error;  // what `to` threw, rethrown once libtiff has returned
  std::string error;               // libtiff's first error message
};

tmsize_t read_proc(thandle_t h, void* buffer, tmsize_t n) {
  auto* f = static_cast<MemoryFile*>(h);
  // Nothing is read back while writing: libtiff does not, for one directory written once.
  if (!f->in || n < 0 || f->pos >= f->size) return 0;
  const std::size_t count = std::min(static_cast<std::size_t>(n), f->size - f->pos);
  std::memcpy(buffer, f->in + f->pos, count);
  f->pos += count;
  return static_cast<tmsize_t>(count);
}

// An exception must not cross libtiff's C frames: what `to` throws is kept and the write
// reported failed, which libtiff passes back as a failed call.
tmsize_t write_proc(thandle_t h, void* buffer, tmsize_t n) {
  auto* f = static_cast<MemoryFile*>(h);
  if (!f->to || n < 0 || f->write_error) return -1;
  try {
    (*f->to)(f->pos, static_cast<const std::uint8_t*>(buffer), static_cast<std::size_t>(n));
  } catch (...) {
    f->write_error = std::current_exception();
    return -1;
  }
  f->pos += static_cast<std::size_t>(n);
  f->size = std::max(f->size, f->pos);
  return n;
}

toff_t seek_proc(thandle_t h, toff_t offset, int whence) {
  auto* f = static_cast<MemoryFile*>(h);
  std::uint64_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
  const std::uint64_t to = base + offset;
  if (!f->to && to > f->size) return static_cast<toff_t>(-1);
  f->pos = static_cast<std::size_t>(to);
  return to;
}

int close_proc(thandle_t) {
  return 0;
}

toff_t size_proc(thandle_t h) {
  return static_cast<MemoryFile*>(h)->size;
}

int map_proc(thandle_t h, void** base, toff_t* size) {
  auto* f = static_cast<MemoryFile*>(h);
  if (f->to) return 0;
  *base = const_cast<std::uint8_t*>(f->in);
  *size = f->size;
  return 1;
}

void unmap_proc(thandle_t, void*, toff_t) {}

// libtiff's errors, kept (the first) on the handle's MemoryFile; warnings dropped. Returning 1
// keeps libtiff from calling the global handlers, which print to stderr.
int on_error(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* f = static_cast<MemoryFile*>(user);
  if (f->error.empty()) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    f->error = (module && *module ? std::string(module) + ": " : std::string()) + text;
  }
  return 1;
}

int on_warning(TIFF*, void*, const char*, const char*, va_list) {
  return 1;
}

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};
using TiffHandle = std::unique_ptr<TIFF, TiffCloser>;

// A handle over `f` in `mode` ("r" or "w"), its messages to f.error; null where libtiff refuses.
TiffHandle open_tiff(MemoryFile& f, const char* mode) {
  TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
  TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, &f);
  TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, &f);
  TIFF* t = TIFFClientOpenExt("tiff", mode, &f, read_proc, write_proc, seek_proc, close_proc,
                              size_proc, map_proc, unmap_proc, options);
  TIFFOpenOptionsFree(options);
  return TiffHandle(t);
}

std::string libtiff_says(const MemoryFile& f) {
  return "libtiff: " + (f.error.empty() ? std::string("no reason given") : f.error);
}

const char* compression_name(int c) {
  switch (c) {
    case COMPRESSION_CCITTRLE:
    case COMPRESSION_CCITTFAX3:
    case COMPRESSION_CCITTFAX4:
    case COMPRESSION_CCITTRLEW:
      return "CCITT fax";
    case COMPRESSION_OJPEG:
    case COMPRESSION_JPEG:
      return "JPEG";
    case COMPRESSION_PACKBITS:
      return "PackBits";
    case COMPRESSION_JBIG:
      return "JBIG";
    case COMPRESSION_LZMA:
      return "LZMA";
    case COMPRESSION_ZSTD:
      return "Zstandard";
    case COMPRESSION_WEBP:
      return "WebP";
    case COMPRESSION_JXL:
      return "JPEG XL";
    case COMPRESSION_PIXARLOG:
      return "PixarLog";
    case COMPRESSION_SGILOG:
    case COMPRESSION_SGILOG24:
      return "SGI LogLuv";
    default:
      return nullptr;
  }
}

const char* photometric_name(int p) {
  switch (p) {
    case PHOTOMETRIC_MINISWHITE:
      return "min-is-white grey";
    case PHOTOMETRIC_PALETTE:
      return "a palette";
    case PHOTOMETRIC_MASK:
      return "a transparency mask";
    case PHOTOMETRIC_SEPARATED:
      return "CMYK (separated) colour";
    case PHOTOMETRIC_YCBCR:
      return "YCbCr colour";
    case PHOTOMETRIC_CIELAB:
    case PHOTOMETRIC_ICCLAB:
    case PHOTOMETRIC_ITULAB:
      return "Lab colour";
    case PHOTOMETRIC_LOGL:
    case PHOTOMETRIC_LOGLUV:
      return "LogLuv colour";
    default:
      return nullptr;
  }
}

// The Orientation tag of the open directory: 1 to 8, 1 where it is missing or out of range.
int orientation_of(TIFF* t) {
  std::uint16_t orientation = ORIENTATION_TOPLEFT;
  TIFFGetFieldDefaulted(t, TIFFTAG_ORIENTATION, &orientation);
  return orientation >= 1 && orientation <= 8 ? orientation : 1;
}

// The checks of read_tiff_header on an open handle.
TiffHeader check_tags(TIFF* t, const std::string& name) {
  const std::string refused = name + ": TIFF with ";
  const std::string unsupported = " is not supported";
  std::uint32_t width = 0, height = 0;
  std::uint16_t bits = 0, spp = 0, format = SAMPLEFORMAT_UINT, photometric = 0, compression = 0,
                planar = PLANARCONFIG_CONTIG;
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &width) ||
      !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &height))
    throw Error(name + ": corrupt TIFF (no image width or length)");
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
  if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric))
    throw Error(name + ": TIFF without a photometric interpretation is not supported");
  if (compression != COMPRESSION_NONE && compression != COMPRESSION_LZW &&
      compression != COMPRESSION_ADOBE_DEFLATE && compression != COMPRESSION_DEFLATE) {
    const char* what = compression_name(compression);
    throw Error(refused + (what ? what : "compression scheme " + std::to_string(compression)) +
                " compression" + unsupported + " (none, LZW and deflate are)");
  }
  if (photometric != PHOTOMETRIC_MINISBLACK && photometric != PHOTOMETRIC_RGB) {
    const char* what = photometric_name(photometric);
    throw Error(refused +
                (what ? what : "photometric interpretation " + std::to_string(photometric)) +
                unsupported + " (grey and RGB are)");
  }
  if (format == SAMPLEFORMAT_IEEEFP)
    throw Error(refused + std::to_string(bits) + "-bit float samples" + unsupported);
  if (format != SAMPLEFORMAT_UINT)
    throw Error(refused + (format == SAMPLEFORMAT_INT ? "signed" : "complex or undefined") +
                " integer samples" + unsupported + " (unsigned are)");
  if (bits != 8 && bits != 16)
    throw Error(refused + std::to_string(bits) + "-bit samples" + unsupported + " (8 and 16 are)");
  const int colour = photometric == PHOTOMETRIC_RGB ? 3 : 1;
  std::uint16_t extra_count = 0;
  std::uint16_t* extra = nullptr;
  TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &extra_count, &extra);
  if (spp < colour || spp > colour + 1 || spp - colour != extra_count ||
      (extra_count == 1 && extra[0] != EXTRASAMPLE_ASSOCALPHA &&
       extra[0] != EXTRASAMPLE_UNASSALPHA && extra[0] != EXTRASAMPLE_UNSPECIFIED))
    throw Error(refused + std::to_string(spp) + " samples a pixel (" + std::to_string(extra_count) +
                " extra) for " + (colour == 3 ? "RGB" : "grey") + unsupported +
                " (grey, grey + alpha, RGB and RGBA are)");
  if (planar != PLANARCONFIG_CONTIG && planar != PLANARCONFIG_SEPARATE)
    throw Error(refused + "planar configuration " + std::to_string(planar) + unsupported);
  if (width == 0 || height == 0 || width > INT32_MAX || height > INT32_MAX)
    throw Error(name + ": unsupported TIFF (" + std::to_string(width) + "x" +
                std::to_string(height) + ")");
  if (TIFFIsTiled(t)) {
    std::uint32_t tw = 0, th = 0;
    TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
    // A tile buffer is allocated whole before it is decoded: a hostile tile size would ask for
    // gigabytes whatever the image's size.
    if (tw == 0 || th == 0 || tw > 16384 || th > 16384)
      throw Error(name + ": corrupt TIFF (tiles of " + std::to_string(tw) + "x" +
                  std::to_string(th) + " pixels; at most 16384 a side are read)");
  }
  TiffHeader h;
  h.width = static_cast<int>(width);
  h.height = static_cast<int>(height);
  h.channels = spp;
  h.bits = bits;
  h.premultiplied = extra_count == 1 && extra[0] == EXTRASAMPLE_ASSOCALPHA;
  h.orientation = orientation_of(t);
  return h;
}

// A handle over `bytes` reading, or an Error naming `name`.
TiffHandle open_for_reading(MemoryFile& f, const std::vector<std::uint8_t>& bytes,
                            const std::string& name) {
  f.in = bytes.data();
  f.size = bytes.size();
  TiffHandle t = open_tiff(f, "rm");  // "m": read through read_proc, not a mapping it may keep
  if (!t) throw Error(name + ": corrupt TIFF (" + libtiff_says(f) + ")");
  return t;
}

// One sample of the file's depth (`bits`, in the host's order as libtiff hands them) as T.
template <typename T>
T sample_as(const std::uint8_t* chunk, std::size_t i, int bits) {
  if (bits == 16) {
    std::uint16_t v;
    std::memcpy(&v, chunk + 2 * i, 2);
    if constexpr (sizeof(T) == 1)
      return static_cast<T>(v >> 8);
    else
      return v;
  }
  if constexpr (sizeof(T) == 1)
    return chunk[i];
  else
    return static_cast<T>(chunk[i] * 257);
}

// Straight alpha from premultiplied `image` (channels 2 or 4, alpha last).
template <typename T>
void unpremultiply(BasicImage<T>& image) {
  constexpr std::uint32_t kMax = static_cast<T>(~T{0});
  const int c = image.channels, a = c - 1;
  for (std::size_t p = 0; p < image.pixels.size(); p += c) {
    const std::uint32_t alpha = image.pixels[p + a];
    if (alpha == 0 || alpha == kMax) continue;
    for (int i = 0; i < a; ++i)
      image.pixels[p + i] = static_cast<T>(
          std::min<std::uint32_t>(kMax, (image.pixels[p + i] * kMax + alpha / 2) / alpha));
  }
}

}  // namespace

TiffHeader read_tiff_header(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  MemoryFile f;
  TiffHandle t = open_for_reading(f, bytes, name);
  return check_tags(t.get(), name);
}

template <typename T>
BasicImage<T> decode_tiff(const std::vector<std::uint8_t>& bytes, const std::string& name,
                          bool rgba) {
  MemoryFile f;
  TiffHandle handle = open_for_reading(f, bytes, name);
  TIFF* t = handle.get();
  const TiffHeader h = check_tags(t, name);
  BasicImage<T> image;
  image.width = h.width;
  image.height = h.height;
  image.channels = h.channels;
  image.pixels.resize(checked_size(h.width, h.height, h.channels, "decode_tiff"));
  std::uint16_t planar = PLANARCONFIG_CONTIG;
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
  const bool separate = planar == PLANARCONFIG_SEPARATE && h.channels > 1;
  const int planes = separate ? h.channels : 1;
  const int per_pixel = separate ? 1 : h.channels;  // samples a pixel in one strip or tile
  const std::size_t sample_bytes = static_cast<std::size_t>(h.bits / 8);
  const bool tiled = TIFFIsTiled(t);
  std::uint32_t cw = static_cast<std::uint32_t>(h.width), ch = 0;  // a chunk's size in pixels
  if (tiled) {
    TIFFGetField(t, TIFFTAG_TILEWIDTH, &cw);
    TIFFGetField(t, TIFFTAG_TILELENGTH, &ch);
  } else {
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &ch);
    ch = std::min<std::uint32_t>(std::max<std::uint32_t>(ch, 1), h.height);
  }
  const std::size_t chunk_row = static_cast<std::size_t>(cw) * per_pixel * sample_bytes;
  std::vector<std::uint8_t> chunk(chunk_row * ch);
  const auto fail = [&](const char* what, std::uint32_t index) {
    throw Error(name + ": truncated or corrupt TIFF (" + what + " " + std::to_string(index) + ": " +
                libtiff_says(f) + ")");
  };
  for (int plane = 0; plane < planes; ++plane) {
    for (std::uint32_t y0 = 0; y0 < static_cast<std::uint32_t>(h.height); y0 += ch) {
      for (std::uint32_t x0 = 0; x0 < static_cast<std::uint32_t>(h.width); x0 += cw) {
        const std::uint32_t rows = std::min<std::uint32_t>(ch, h.height - y0);
        const std::uint32_t cols = std::min<std::uint32_t>(cw, h.width - x0);
        if (tiled) {
          const std::uint32_t tile =
              TIFFComputeTile(t, x0, y0, 0, static_cast<std::uint16_t>(plane));
          if (TIFFReadEncodedTile(t, tile, chunk.data(), static_cast<tmsize_t>(chunk.size())) < 0)
            fail("tile", tile);
        } else {
          const std::uint32_t strip = TIFFComputeStrip(t, y0, static_cast<std::uint16_t>(plane));
          const tmsize_t want = static_cast<tmsize_t>(chunk_row * rows);
          if (TIFFReadEncodedStrip(t, strip, chunk.data(), want) != want) fail("strip", strip);
        }
        for (std::uint32_t y = 0; y < rows; ++y) {
          const std::uint8_t* src = chunk.data() + y * chunk_row;
          T* dst =
              &image.pixels[image.index(static_cast<int>(x0), static_cast<int>(y0 + y), plane)];
          if (per_pixel == h.channels) {
            for (std::size_t i = 0; i < static_cast<std::size_t>(cols) * per_pixel; ++i)
              dst[i] = sample_as<T>(src, i, h.bits);
          } else {
            for (std::uint32_t x = 0; x < cols; ++x)
              dst[static_cast<std::size_t>(x) * h.channels] = sample_as<T>(src, x, h.bits);
          }
        }
      }
    }
  }
  if (h.premultiplied) unpremultiply(image);
  if (rgba && image.channels != 4) return to_rgba(image);
  return image;
}

template Image decode_tiff<std::uint8_t>(const std::vector<std::uint8_t>&, const std::string&,
                                         bool);
template Image16 decode_tiff<std::uint16_t>(const std::vector<std::uint8_t>&, const std::string&,
                                            bool);

namespace {

// The samples of one row of `width` pixels of `stride` samples at `src` that the file holds:
// `channels` of each pixel (all of them, or from RGBA those from_rgba keeps: R and A for 2).
template <typename T>
void pack_row(const T* src, int stride, int channels, int width, T* dst) {
  if (stride == channels) {
    std::memcpy(dst, src, static_cast<std::size_t>(width) * channels * sizeof(T));
    return;
  }
  for (int x = 0; x < width; ++x)
    for (int c = 0; c < channels; ++c)
      dst[x * channels + c] = src[x * stride + (stride == 4 && channels == 2 && c == 1 ? 3 : c)];
}

}  // namespace

// The open file and the rows packed but not yet written (one strip, or one row of tiles).
struct TiffStripWriter::State {
  WriteAt out;
  MemoryFile file;
  TiffHandle handle;
  int width = 0, height = 0, channels = 0, depth = 8;
  bool tiled = false;
  int band_rows = 0;  // rows of a strip, or of a row of tiles
  std::size_t row_bytes = 0;
  std::vector<std::uint8_t> band;  // the packed rows of the strip or row of tiles being filled
  int filled = 0;                  // rows in `band`
  int rows_done = 0;               // rows taken, `filled` of them not yet written
  std::uint32_t strips = 0;        // strips written

  [[noreturn]] void fail() {
    if (file.write_error) std::rethrow_exception(file.write_error);
    throw Error("encode_tiff: " + libtiff_says(file));
  }

  // Writes the rows of `band` as a strip or a row of tiles.
  void flush() {
    TIFF* t = handle.get();
    if (!tiled) {
      if (TIFFWriteEncodedStrip(t, strips++, band.data(),
                                static_cast<tmsize_t>(filled * row_bytes)) < 0)
        fail();
    } else {
      const std::size_t sample = static_cast<std::size_t>(depth / 8) * channels;
      const std::size_t tile_row = kTile * sample;
      std::vector<std::uint8_t> tile(tile_row * kTile);
      const int y0 = rows_done - filled;
      for (int x0 = 0; x0 < width; x0 += kTile) {
        std::fill(tile.begin(), tile.end(), std::uint8_t{0});
        const std::size_t cols = static_cast<std::size_t>(std::min(kTile, width - x0));
        for (int y = 0; y < filled; ++y)
          std::memcpy(&tile[y * tile_row], &band[y * row_bytes + x0 * sample], cols * sample);
        if (TIFFWriteEncodedTile(t, TIFFComputeTile(t, x0, y0, 0, 0), tile.data(),
                                 static_cast<tmsize_t>(tile.size())) < 0)
          fail();
      }
    }
    filled = 0;
  }

  static constexpr int kTile = 256;
};

TiffStripWriter::TiffStripWriter(int width, int height, int channels, int depth,
                                 const EncodeOptions& options, const ImageMetadata& metadata,
                                 WriteAt out)
    : s_(std::make_unique<State>()) {
  checked_size(width, height, channels, "encode_tiff");
  if (depth != 8 && depth != 16)
    throw Error("encode_tiff: " + std::to_string(depth) + "-bit samples (8 or 16 are written)");
  State& s = *s_;
  s.out = std::move(out);
  s.file.to = &s.out;
  s.width = width;
  s.height = height;
  s.channels = channels;
  s.depth = depth;
  s.tiled = options.tiff_tiled;
  s.row_bytes = static_cast<std::size_t>(width) * channels * (depth / 8);
  s.handle = open_tiff(s.file, "w");
  if (!s.handle) s.fail();
  TIFF* t = s.handle.get();
  const bool alpha = channels == 2 || channels == 4;
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(width));
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(height));
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(depth));
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(channels));
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  TIFFSetField(t, TIFFTAG_ORIENTATION,
               static_cast<std::uint16_t>(metadata.orientation >= 1 && metadata.orientation <= 8
                                              ? metadata.orientation
                                              : ORIENTATION_TOPLEFT));
  if (alpha) {
    const std::uint16_t extra[] = {EXTRASAMPLE_UNASSALPHA};
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, extra);
  }
  const int compression = options.tiff_compression == TiffCompression::lzw ? COMPRESSION_LZW
                          : options.tiff_compression == TiffCompression::deflate
                              ? COMPRESSION_ADOBE_DEFLATE
                              : COMPRESSION_NONE;
  TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
  if (compression != COMPRESSION_NONE) TIFFSetField(t, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
  if (compression == COMPRESSION_ADOBE_DEFLATE)
    TIFFSetField(t, TIFFTAG_ZIPQUALITY, std::clamp(options.png_level, 1, 9));
  if (!metadata.icc.empty())
    TIFFSetField(t, TIFFTAG_ICCPROFILE, static_cast<std::uint32_t>(metadata.icc.size()),
                 metadata.icc.data());
  if (!metadata.xmp.empty())
    TIFFSetField(t, TIFFTAG_XMLPACKET, static_cast<std::uint32_t>(metadata.xmp.size()),
                 metadata.xmp.data());
  if (metadata.resolution) {
    const Resolution& r = *metadata.resolution;
    TIFFSetField(t, TIFFTAG_XRESOLUTION, static_cast<float>(r.x));
    TIFFSetField(t, TIFFTAG_YRESOLUTION, static_cast<float>(r.y));
    TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT,
                 r.unit == Resolution::Unit::inch         ? RESUNIT_INCH
                 : r.unit == Resolution::Unit::centimetre ? RESUNIT_CENTIMETER
                                                          : RESUNIT_NONE);
  }
  if (s.tiled) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, State::kTile);
    TIFFSetField(t, TIFFTAG_TILELENGTH, State::kTile);
    s.band_rows = State::kTile;
  } else {
    const std::uint32_t rows = TIFFDefaultStripSize(t, 0);  // about 8 KiB a strip
    s.band_rows = static_cast<int>(std::max<std::uint32_t>(
        rows, static_cast<std::uint32_t>((64 << 10) / std::max<std::size_t>(1, s.row_bytes))));
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, static_cast<std::uint32_t>(s.band_rows));
  }
  s.band.resize(s.row_bytes * std::min(s.band_rows, height));
}

TiffStripWriter::~TiffStripWriter() {
  // Left unfinished (an exception while the image was made): libtiff's closing flush writes
  // nothing more into the output.
  if (s_) s_->file.to = nullptr;
}

void TiffStripWriter::write(const void* rows, int stride, int count) {
  State& s = *s_;
  if (count < 0 || count > s.height - s.rows_done)
    throw Error("encode_tiff: rows " + std::to_string(s.rows_done) + "+" + std::to_string(count) +
                " are past the image's " + std::to_string(s.height));
  if (stride < s.channels || stride > 4)
    throw Error("encode_tiff: rows of " + std::to_string(stride) + " samples a pixel for " +
                std::to_string(s.channels) + " channels");
  const std::size_t src_row = static_cast<std::size_t>(s.width) * stride * (s.depth / 8);
  const auto* src = static_cast<const std::uint8_t*>(rows);
  for (int y = 0; y < count; ++y, src += src_row) {
    std::uint8_t* dst = &s.band[s.filled * s.row_bytes];
    if (s.depth == 16)
      pack_row(reinterpret_cast<const std::uint16_t*>(src), stride, s.channels, s.width,
               reinterpret_cast<std::uint16_t*>(dst));
    else
      pack_row(src, stride, s.channels, s.width, dst);
    ++s.filled;
    ++s.rows_done;
    if (s.filled == s.band_rows || s.rows_done == s.height) s.flush();
  }
  if (count == 0 || s.rows_done < s.height) return;
  if (!TIFFWriteDirectory(s.handle.get())) s.fail();
  s.handle.reset();  // flushes
  if (s.file.write_error || !s.file.error.empty()) s.fail();
}

template <typename T>
std::vector<std::uint8_t> encode_tiff(const BasicImage<T>& image, int channels,
                                      const EncodeOptions& options, const ImageMetadata& metadata) {
  check_image(image, "encode_tiff");
  if (channels < 1 || channels > image.channels)
    throw Error("encode_tiff: " + std::to_string(channels) + " channels of a " +
                std::to_string(image.channels) + "-channel image");
  std::vector<std::uint8_t> out;
  TiffStripWriter writer(image.width, image.height, channels, 8 * sizeof(T), options, metadata,
                         [&out](std::uint64_t offset, const std::uint8_t* data, std::size_t size) {
                           if (offset + size > out.size()) out.resize(offset + size);
                           std::memcpy(out.data() + offset, data, size);
                         });
  writer.write(image.pixels.data(), image.channels, image.height);
  return out;
}

template std::vector<std::uint8_t> encode_tiff(const Image&, int, const EncodeOptions&,
                                               const ImageMetadata&);
template std::vector<std::uint8_t> encode_tiff(const Image16&, int, const EncodeOptions&,
                                               const ImageMetadata&);

ImageMetadata read_tiff_metadata(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                 std::vector<std::string>* warnings) {
  ImageMetadata m;
  MemoryFile f;
  f.in = bytes.data();
  f.size = bytes.size();
  TiffHandle handle = open_tiff(f, "rm");
  if (!handle) {
    if (warnings) warnings->push_back(name + ": TIFF metadata left out (" + libtiff_says(f) + ")");
    return m;
  }
  TIFF* t = handle.get();
  m.orientation = orientation_of(t);
  std::uint32_t count = 0;
  void* data = nullptr;
  if (TIFFGetField(t, TIFFTAG_ICCPROFILE, &count, &data) && data && count)
    m.icc.assign(static_cast<std::uint8_t*>(data), static_cast<std::uint8_t*>(data) + count);
  count = 0;
  data = nullptr;
  if (TIFFGetField(t, TIFFTAG_XMLPACKET, &count, &data) && data && count)
    m.xmp.assign(static_cast<char*>(data), count);
  float x = 0, y = 0;
  std::uint16_t unit = RESUNIT_INCH;
  if (TIFFGetField(t, TIFFTAG_XRESOLUTION, &x) && TIFFGetField(t, TIFFTAG_YRESOLUTION, &y) &&
      x > 0 && y > 0) {
    TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &unit);
    Resolution r;
    r.unit = unit == RESUNIT_CENTIMETER ? Resolution::Unit::centimetre
             : unit == RESUNIT_NONE     ? Resolution::Unit::none
                                        : Resolution::Unit::inch;
    r.x = x;
    r.y = y;
    m.resolution = r;
  }
  return m;
}

}  // namespace blurtool
