// The PNG encoder (see png_encode.h): row filters, strips deflated in parallel into one zlib
// stream, and the PNG container.
//
// The method is parallel gzip's (pigz, Mark Adler): the input is cut into blocks, each block is
// raw-deflated on its own thread with the 32 KiB before it as its preset dictionary
// (deflateSetDictionary), every block but the last ends with a flush that leaves the output at a
// byte boundary with no final-block bit, and the blocks' output is concatenated behind one
// header; the check value of the whole is joined from the blocks' ones (adler32_combine). A
// decoder sees one ordinary deflate stream whose back-references may reach into the previous
// block, which it still holds in its window. PNG filtering is done before deflate and depends
// only on the pixels, so a strip's first row is filtered against the previous strip's last row
// as in one sequential pass.
#include "image/png_encode.h"

#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "util/error.h"
#include "util/parallel.h"

namespace blurtool {

namespace {

constexpr std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
constexpr std::size_t kWindowBytes = 32768;  // deflate's window, and so the useful dictionary
// Largest IDAT payload written (PNG allows 2^31 - 1); only a strip of one row of more than
// 1 GiB of samples needs a second chunk.
constexpr std::size_t kMaxChunkData = std::size_t{1} << 30;
constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

void put32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

[[noreturn]] void fail(const std::string& why) {
  throw Error("encoding PNG failed: " + why);
}

// An uninitialised byte buffer (std::vector would zero what deflate overwrites anyway).
struct Buffer {
  std::unique_ptr<std::uint8_t[]> data;
  std::size_t capacity = 0;

  void reserve(std::size_t n) {
    if (n <= capacity) return;
    data.reset(new std::uint8_t[n]);
    capacity = n;
  }
};

// The rows of the image as the file stores them: `row_bytes` bytes each, samples of `channels`
// picked from pixels of `stride` samples, 16-bit ones big-endian.
class Rows {
 public:
  explicit Rows(const PngPixels& image)
      : image_(image),
        sample_bytes_(image.depth / 8),
        row_bytes_(static_cast<std::size_t>(image.width) * image.channels * sample_bytes_),
        in_row_samples_(static_cast<std::size_t>(image.width) * image.stride),
        as_stored_(image.stride == image.channels && (image.depth == 8 || !kLittleEndian)) {}

  std::size_t row_bytes() const { return row_bytes_; }
  int pixel_bytes() const { return image_.channels * sample_bytes_; }

  // Row y in the file's layout: the image's own row where that is already it, else packed into
  // `scratch` (row_bytes() bytes).
  const std::uint8_t* row(int y, std::uint8_t* scratch) const {
    const std::size_t first = static_cast<std::size_t>(y) * in_row_samples_;
    if (as_stored_) return static_cast<const std::uint8_t*>(image_.pixels) + first * sample_bytes_;
    if (sample_bytes_ == 1) {
      pack(static_cast<const std::uint8_t*>(image_.pixels) + first, scratch);
    } else {
      pack(static_cast<const std::uint16_t*>(image_.pixels) + first, scratch);
    }
    return scratch;
  }

 private:
  // from_rgba's choice of samples for `channels` out of a 4-sample pixel; as stored otherwise.
  int source_of(int c) const {
    return image_.stride == 4 && image_.channels == 2 && c == 1 ? 3 : c;
  }

  void pack(const std::uint8_t* in, std::uint8_t* out) const {
    const std::size_t w = image_.width, s = image_.stride;
    switch (image_.channels) {  // stride 4 here: 8-bit samples as stored are never packed
      case 1:
        for (std::size_t x = 0; x < w; ++x) out[x] = in[x * s];
        break;
      case 2:
        for (std::size_t x = 0; x < w; ++x) out[2 * x] = in[x * s], out[2 * x + 1] = in[x * s + 3];
        break;
      default:
        for (std::size_t x = 0; x < w; ++x) {
          out[3 * x] = in[x * s];
          out[3 * x + 1] = in[x * s + 1];
          out[3 * x + 2] = in[x * s + 2];
        }
        break;
    }
  }

  void pack(const std::uint16_t* in, std::uint8_t* out) const {
    const std::size_t w = image_.width, s = image_.stride;
    const int c = image_.channels;
    int from[4];
    for (int k = 0; k < c; ++k) from[k] = source_of(k);
    for (std::size_t x = 0; x < w; ++x) {
      for (int k = 0; k < c; ++k) {
        const std::uint16_t v = in[x * s + from[k]];
        *out++ = static_cast<std::uint8_t>(v >> 8);
        *out++ = static_cast<std::uint8_t>(v);
      }
    }
  }

  PngPixels image_;
  int sample_bytes_;
  std::size_t row_bytes_;
  std::size_t in_row_samples_;
  bool as_stored_;
};

// --- row filters (PNG specification, section 9) ----------------------------------------------

// Each writes the filtered bytes of `cur` (n bytes, pixels of `bpp` bytes) given the row above
// `prev` (all zero for the first row) into `out`.

void filter_sub(const std::uint8_t* cur, const std::uint8_t*, std::size_t n, int bpp,
                std::uint8_t* out) {
  for (int i = 0; i < bpp; ++i) out[i] = cur[i];
  for (std::size_t i = bpp; i < n; ++i) out[i] = static_cast<std::uint8_t>(cur[i] - cur[i - bpp]);
}

void filter_up(const std::uint8_t* cur, const std::uint8_t* prev, std::size_t n, int,
               std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(cur[i] - prev[i]);
}

void filter_average(const std::uint8_t* cur, const std::uint8_t* prev, std::size_t n, int bpp,
                    std::uint8_t* out) {
  for (int i = 0; i < bpp; ++i) out[i] = static_cast<std::uint8_t>(cur[i] - (prev[i] >> 1));
  for (std::size_t i = bpp; i < n; ++i)
    out[i] = static_cast<std::uint8_t>(cur[i] - ((cur[i - bpp] + prev[i]) >> 1));
}

#if defined(__SSE2__)
__m128i abs16(__m128i x) {
  return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x));
}

// The Paeth predictors of 8 pixels' bytes, in 16-bit lanes.
__m128i paeth8(__m128i a, __m128i b, __m128i c) {
  const __m128i da = _mm_sub_epi16(a, c), db = _mm_sub_epi16(b, c);
  const __m128i pa = abs16(db), pb = abs16(da), pc = abs16(_mm_add_epi16(da, db));
  // a where pa <= pb and pa <= pc; else b where pb <= pc; else c.
  const __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
  const __m128i take_c = _mm_cmpgt_epi16(pb, pc);
  const __m128i bc = _mm_or_si128(_mm_and_si128(take_c, c), _mm_andnot_si128(take_c, b));
  return _mm_or_si128(_mm_and_si128(not_a, bc), _mm_andnot_si128(not_a, a));
}
#endif

void filter_paeth(const std::uint8_t* cur, const std::uint8_t* prev, std::size_t n, int bpp,
                  std::uint8_t* out) {
  // Left and upper-left are 0 for the first pixel: the predictor is the byte above.
  for (int i = 0; i < bpp; ++i) out[i] = static_cast<std::uint8_t>(cur[i] - prev[i]);
  std::size_t i = bpp;
#if defined(__SSE2__)
  // 16 bytes at a time in 16-bit lanes: several times faster than the compiler's vectorisation
  // of the loop below, which widens to 32 bits.
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= n; i += 16) {
    const auto load = [](const std::uint8_t* p) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    };
    const __m128i a = load(cur + i - bpp), b = load(prev + i), c = load(prev + i - bpp);
    const __m128i lo =
        paeth8(_mm_unpacklo_epi8(a, zero), _mm_unpacklo_epi8(b, zero), _mm_unpacklo_epi8(c, zero));
    const __m128i hi =
        paeth8(_mm_unpackhi_epi8(a, zero), _mm_unpackhi_epi8(b, zero), _mm_unpackhi_epi8(c, zero));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_sub_epi8(load(cur + i), _mm_packus_epi16(lo, hi)));
  }
#endif
  for (; i < n; ++i) {
    const int a = cur[i - bpp], b = prev[i], c = prev[i - bpp];
    const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
    const int predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    out[i] = static_cast<std::uint8_t>(cur[i] - predictor);
  }
}

// The adaptive filter's cost of a filtered row: the sum of its bytes' magnitudes as signed.
std::uint64_t signed_magnitudes(const std::uint8_t* row, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += row[i] < 128 ? row[i] : 256 - row[i];
  return sum;
}

using FilterFunction = void (*)(const std::uint8_t*, const std::uint8_t*, std::size_t, int,
                                std::uint8_t*);

// One thread's working memory.
struct Workspace {
  Buffer rows[2];     // packed rows: current and previous
  Buffer zero;        // the row above the first
  Buffer candidates;  // the adaptive filter's four filtered rows
  Buffer filtered;    // a strip's filtered rows
  Buffer dictionary;  // the filtered rows before a strip
};

// Filters rows [first, first + count) of `rows` into `out` (count * (1 + row_bytes) bytes: each
// row's filter type byte, then its filtered bytes).
void filter_rows(const Rows& rows, PngFilter filter, int first, int count, Workspace& ws,
                 std::uint8_t* out) {
  const std::size_t n = rows.row_bytes();
  const int bpp = rows.pixel_bytes();
  for (Buffer& b : ws.rows) b.reserve(n);
  if (ws.zero.capacity < n) {
    ws.zero.reserve(n);
    std::memset(ws.zero.data.get(), 0, n);
  }
  if (filter == PngFilter::adaptive) ws.candidates.reserve(4 * n);
  int slot = 0;
  const std::uint8_t* prev =
      first > 0 ? rows.row(first - 1, ws.rows[1].data.get()) : ws.zero.data.get();
  static constexpr FilterFunction kFilters[] = {nullptr, filter_sub, filter_up, filter_average,
                                                filter_paeth};
  for (int y = first; y < first + count; ++y, out += n + 1) {
    const std::uint8_t* cur = rows.row(y, ws.rows[slot].data.get());
    if (filter == PngFilter::adaptive) {
      // libpng's order and tie-break: none, sub, up, average, paeth; the first smallest wins.
      int best = 0;
      std::uint64_t best_cost = signed_magnitudes(cur, n);
      for (int f = 1; f <= 4; ++f) {
        std::uint8_t* candidate = ws.candidates.data.get() + (f - 1) * n;
        kFilters[f](cur, prev, n, bpp, candidate);
        const std::uint64_t cost = signed_magnitudes(candidate, n);
        if (cost < best_cost) best = f, best_cost = cost;
      }
      out[0] = static_cast<std::uint8_t>(best);
      std::memcpy(out + 1, best == 0 ? cur : ws.candidates.data.get() + (best - 1) * n, n);
    } else {
      const int f = static_cast<int>(filter);
      out[0] = static_cast<std::uint8_t>(f);
      if (f == 0) {
        std::memcpy(out + 1, cur, n);
      } else {
        kFilters[f](cur, prev, n, bpp, out + 1);
      }
    }
    prev = cur;
    slot ^= 1;  // the row just filtered stays in its buffer as the next one's row above
  }
}

// A strip's output: its part of the zlib stream (the header before the first strip's deflate
// output; room for the Adler-32 after the last's) and the CRC of "IDAT" and those bytes.
struct StripOutput {
  Buffer bytes;
  std::size_t size = 0;
  std::uint32_t adler = 0;   // of the strip's filtered bytes
  std::size_t filtered = 0;  // how many filtered bytes
  std::uint32_t crc = 0;
};

std::uint32_t idat_crc(const std::uint8_t* data, std::size_t size) {
  static constexpr std::uint8_t kIdat[4] = {'I', 'D', 'A', 'T'};
  std::uint32_t crc = crc32(0, kIdat, 4);
  while (size > 0) {  // crc32 takes a uInt length
    const uInt piece = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    crc = crc32(crc, data, piece);
    data += piece, size -= piece;
  }
  return crc;
}

std::uint32_t adler_of(const std::uint8_t* data, std::size_t size) {
  std::uint32_t adler = adler32(0, nullptr, 0);
  while (size > 0) {
    const uInt piece = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    adler = adler32(adler, data, piece);
    data += piece, size -= piece;
  }
  return adler;
}

// Raw-deflates `size` filtered bytes into `out` from out->size on, after `dictionary_size`
// bytes of `dictionary`, ending with Z_FINISH (`last`) or Z_FULL_FLUSH.
void deflate_strip(const std::uint8_t* in, std::size_t size, const std::uint8_t* dictionary,
                   std::size_t dictionary_size, const PngSettings& settings, bool last,
                   StripOutput* out) {
  z_stream z{};
  if (deflateInit2(&z, settings.level, Z_DEFLATED, -15, 8, settings.strategy) != Z_OK)
    fail(z.msg ? z.msg : "zlib cannot start deflate (out of memory?)");
  struct End {
    z_stream* z;
    ~End() { deflateEnd(z); }
  } end{&z};
  if (dictionary_size > 0 &&
      deflateSetDictionary(&z, dictionary, static_cast<uInt>(dictionary_size)) != Z_OK)
    fail("zlib refused the dictionary");
  // deflateBound assumes Z_FINISH alone; the flush adds an empty stored block (5 bytes and the
  // bits to a byte boundary), the last strip the Adler-32 behind.
  const std::size_t bound = out->size + deflateBound(&z, size) + 16;
  if (out->bytes.capacity < bound) {
    Buffer bigger;
    bigger.reserve(bound);
    if (out->size > 0) std::memcpy(bigger.data.get(), out->bytes.data.get(), out->size);
    out->bytes = std::move(bigger);
  }
  const int flush = last ? Z_FINISH : Z_FULL_FLUSH;
  constexpr std::size_t kPiece = std::size_t{1} << 30;  // zlib counts in uInt
  std::size_t unread = size;
  for (;;) {
    if (z.avail_in == 0 && unread > 0) {
      z.next_in = const_cast<Bytef*>(in + (size - unread));
      z.avail_in = static_cast<uInt>(std::min(unread, kPiece));
      unread -= z.avail_in;
    }
    // Past deflateBound's promise: grow. A flush wants more than 6 bytes of room (zlib.h).
    if (out->bytes.capacity - out->size < 4 + 8) {
      Buffer bigger;
      bigger.reserve(out->bytes.capacity * 2);
      std::memcpy(bigger.data.get(), out->bytes.data.get(), out->size);
      out->bytes = std::move(bigger);
    }
    z.next_out = out->bytes.data.get() + out->size;
    z.avail_out = static_cast<uInt>(std::min(out->bytes.capacity - out->size - 4, kPiece));
    const std::size_t room = z.avail_out;
    const bool all_in = unread == 0;
    const int status = deflate(&z, all_in ? flush : Z_NO_FLUSH);
    out->size += room - z.avail_out;
    if (status == Z_STREAM_ERROR) fail("zlib stream error");
    // Done once all input is in and the flush has written everything (zlib: output space left).
    if (all_in && z.avail_in == 0 && (last ? status == Z_STREAM_END : z.avail_out > 0)) break;
  }
}

void check(const PngPixels& image, const PngSettings& settings) {
  const bool ok = image.pixels && image.channels >= 1 && image.channels <= 4 &&
                  (image.stride == image.channels || image.stride == 4) &&
                  (image.depth == 8 || image.depth == 16) && image.width >= 1 &&
                  image.height >= 1 && settings.level >= 0 && settings.level <= 9;
  if (!ok) {
    fail("bad arguments (" + std::to_string(image.width) + "x" + std::to_string(image.height) +
         ", " + std::to_string(image.channels) + " of " + std::to_string(image.stride) +
         " samples at " + std::to_string(image.depth) + " bits, level " +
         std::to_string(settings.level) + ")");
  }
}

// Appends `n` bytes at `p` to `file`.
void append_bytes(std::vector<std::uint8_t>& file, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  file.insert(file.end(), b, b + n);
}

void append32(std::vector<std::uint8_t>& file, std::uint32_t v) {
  std::uint8_t b[4];
  put32(b, v);
  append_bytes(file, b, 4);
}

// One chunk of `type` holding `size` bytes at `data`, its CRC `crc` (computed by the caller).
void append_chunk(std::vector<std::uint8_t>& file, const char* type, const std::uint8_t* data,
                  std::size_t size, std::uint32_t crc) {
  append32(file, static_cast<std::uint32_t>(size));
  append_bytes(file, type, 4);
  append_bytes(file, data, size);
  append32(file, crc);
}

}  // namespace

PngStreamEncoder::PngStreamEncoder(int width, int height, int channels, int depth,
                                   const PngSettings& settings, Sink sink)
    : width_(width),
      height_(height),
      channels_(channels),
      depth_(depth),
      settings_(settings),
      sink_(std::move(sink)) {
  PngPixels shape;
  shape.pixels = this;  // only checked for null here
  shape.width = width, shape.height = height, shape.channels = channels;
  shape.stride = channels, shape.depth = depth;
  check(shape, settings);
  std::vector<std::uint8_t> file;
  append_bytes(file, kSignature, sizeof kSignature);
  static constexpr std::uint8_t kColorType[] = {0, 4, 2, 6};  // grey, grey+alpha, RGB, RGBA
  std::uint8_t ihdr[17] = {'I', 'H', 'D', 'R'};
  put32(ihdr + 4, static_cast<std::uint32_t>(width));
  put32(ihdr + 8, static_cast<std::uint32_t>(height));
  ihdr[12] = static_cast<std::uint8_t>(depth);
  ihdr[13] = kColorType[channels - 1];  // compression, filter and interlace methods 0
  append32(file, 13);
  append_bytes(file, ihdr, sizeof ihdr);
  append32(file, crc32(0, ihdr, sizeof ihdr));
  sink_(file.data(), file.size());
}

void PngStreamEncoder::add(const PngPixels& image, int before) {
  const int count = image.height - before;
  if (image.width != width_ || image.channels != channels_ || image.depth != depth_ || before < 0 ||
      count < 1 || before > done_ || (done_ > 0 && before < 1) || count > height_ - done_)
    fail("rows " + std::to_string(done_) + "+" + std::to_string(count) + " do not continue a " +
         std::to_string(width_) + "x" + std::to_string(height_) + " image");
  check(image, settings_);
  const Rows rows(image);
  const std::size_t line = rows.row_bytes() + 1;  // filter type byte and the row
  const std::size_t target = settings_.strip_bytes > 0 ? settings_.strip_bytes : kPngStripBytes;
  const int strip_rows =
      static_cast<int>(std::clamp<std::size_t>(target / line, 1, static_cast<std::size_t>(count)));
  const int strips = (count - 1) / strip_rows + 1;
  const int threads = worker_threads(settings_.threads, strips);
  const bool finishing = done_ + count == height_;

  std::vector<StripOutput> out(strips);
  const std::uint16_t header = zlib_header(settings_.level, settings_.strategy);
  for_each_piece<Workspace>(strips, threads, [&](int s, Workspace& ws) {
    const int first = before + s * strip_rows;  // a row of `image`
    const int n = std::min(strip_rows, image.height - first);
    StripOutput& o = out[s];
    o.filtered = n * line;
    ws.filtered.reserve(o.filtered);
    filter_rows(rows, settings_.filter, first, n, ws, ws.filtered.data.get());
    o.adler = adler_of(ws.filtered.data.get(), o.filtered);
    // The dictionary: the last 32 KiB of filtered bytes before the strip, filtered again here
    // (the rows that hold them, as far as `image` has them) so that no strip waits for another.
    std::size_t dictionary = 0;
    const std::uint8_t* dictionary_end = nullptr;
    if (first > 0) {
      int back = static_cast<int>(std::min<std::size_t>(first, (kWindowBytes + line - 1) / line));
      // Row 0 of `image` is filtered against the row above it, which `image` lacks unless it is
      // the image's first row: it is only the filter's row above then, never dictionary.
      if (back == first && done_ > before) back = first - 1;
      if (back > 0) {
        ws.dictionary.reserve(back * line);
        filter_rows(rows, settings_.filter, first - back, back, ws, ws.dictionary.data.get());
        dictionary = std::min(kWindowBytes, back * line);
        dictionary_end = ws.dictionary.data.get() + back * line;
      }
    }
    if (s == 0 && done_ == 0) {
      o.bytes.reserve(2);
      o.bytes.data[0] = static_cast<std::uint8_t>(header >> 8);
      o.bytes.data[1] = static_cast<std::uint8_t>(header);
      o.size = 2;
    }
    deflate_strip(ws.filtered.data.get(), o.filtered, dictionary_end - dictionary, dictionary,
                  settings_, finishing && s == strips - 1, &o);
    o.crc = idat_crc(o.bytes.data.get(), o.size);
  });

  // The stream's Adler-32 behind the last strip of the image (deflate_strip left room for it).
  for (int s = 0; s < strips; ++s)
    adler_ = done_ == 0 && s == 0
                 ? out[0].adler
                 : static_cast<std::uint32_t>(adler32_combine(
                       adler_, out[s].adler, static_cast<z_off_t>(out[s].filtered)));
  if (finishing) {
    StripOutput& last = out.back();
    put32(last.bytes.data.get() + last.size, adler_);
    last.crc = crc32(last.crc, last.bytes.data.get() + last.size, 4);
    last.size += 4;
  }

  std::size_t total = finishing ? 12 : 0;
  for (const StripOutput& o : out)
    total += o.size + 12 * ((o.size + kMaxChunkData - 1) / kMaxChunkData);
  std::vector<std::uint8_t> file;
  file.reserve(total);
  for (const StripOutput& o : out) {
    if (o.size <= kMaxChunkData) {
      append_chunk(file, "IDAT", o.bytes.data.get(), o.size, o.crc);
      continue;
    }
    for (std::size_t at = 0; at < o.size; at += kMaxChunkData) {
      const std::size_t n = std::min(kMaxChunkData, o.size - at);
      append_chunk(file, "IDAT", o.bytes.data.get() + at, n, idat_crc(o.bytes.data.get() + at, n));
    }
  }
  if (finishing) {
    static constexpr std::uint8_t kIend[4] = {'I', 'E', 'N', 'D'};
    append_chunk(file, "IEND", nullptr, 0, crc32(0, kIend, 4));
  }
  done_ += count;
  sink_(file.data(), file.size());
}

namespace {

std::vector<std::uint8_t> encode(const PngPixels& image, const PngSettings& settings) {
  check(image, settings);
  std::vector<std::uint8_t> file;
  PngStreamEncoder encoder(
      image.width, image.height, image.channels, image.depth, settings,
      [&file](const std::uint8_t* p, std::size_t n) { append_bytes(file, p, n); });
  encoder.add(image, 0);
  return file;
}

}  // namespace

std::uint16_t zlib_header(int level, int strategy) {
  // deflate.c: FLEVEL 0 for the run-length and Huffman-only strategies and levels 0 and 1.
  const int flevel = strategy >= Z_HUFFMAN_ONLY || level < 2 ? 0
                     : level < 6                             ? 1
                     : level == 6                            ? 2
                                                             : 3;
  unsigned header = (0x78u << 8) | (static_cast<unsigned>(flevel) << 6);
  header += 31 - header % 31;
  return static_cast<std::uint16_t>(header);
}

PngSettings png_settings(int level) {
  PngSettings settings;
  settings.level = level;
  settings.strategy = level == 1 ? Z_RLE : Z_FILTERED;
  settings.filter = PngFilter::paeth;
  return settings;
}

std::vector<std::uint8_t> encode_png(const PngPixels& image, const PngSettings& settings) {
  try {
    return encode(image, settings);
  } catch (const std::bad_alloc&) {
    fail("out of memory");
  }
}

}  // namespace blurtool
