// JPEG's marker segments and EXIF orientation, TurboJPEG's decode, and the encode in strips
// joined by restart markers (see jpeg_codec.h).
#include "image/jpeg_codec.h"

#include <libexif/exif-data.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "util/error.h"
#include "util/parallel.h"

namespace blurtool {

[[noreturn]] void throw_truncated(const std::string& name, const std::string& where) {
  throw Error(name + ": truncated JPEG (" + where + ")");
}

std::vector<JpegSegment> jpeg_segments(const std::uint8_t* b, std::size_t size,
                                       const std::string& name, std::size_t* scan) {
  std::vector<JpegSegment> segments;
  std::size_t pos = 2;  // after SOI
  for (;;) {
    if (pos >= size) throw_truncated(name, "ends before its image data");
    if (b[pos] != 0xFF) {
      throw Error(name + ": corrupt JPEG (no marker at byte " + std::to_string(pos) + ")");
    }
    while (pos < size && b[pos] == 0xFF) ++pos;  // a marker may follow any number of FFs
    if (pos >= size) throw_truncated(name, "ends before its image data");
    const std::uint8_t marker = b[pos++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // TEM, RSTn: no length
    if (marker == 0x00 || marker == 0xD8 || marker == 0xD9) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "FF %02X", marker);
      throw Error(name + ": corrupt JPEG (unexpected marker " + hex + " before its image data)");
    }
    if (size - pos < 2) throw_truncated(name, "ends inside a marker segment");
    const std::size_t length = (std::size_t{b[pos]} << 8) | b[pos + 1];
    if (length < 2) throw Error(name + ": corrupt JPEG (marker segment length < 2)");
    if (length > size - pos) throw_truncated(name, "ends inside a marker segment");
    segments.push_back({marker, pos + 2, length - 2});
    pos += length;
    if (marker == 0xDA) break;  // SOS: entropy-coded data follows
  }
  *scan = pos;
  return segments;
}

std::vector<JpegSegment> check_jpeg_complete(const std::vector<std::uint8_t>& b,
                                             const std::string& name) {
  std::size_t pos = 0;
  std::vector<JpegSegment> segments = jpeg_segments(b.data(), b.size(), name, &pos);
  // From the end back: a whole file ends with its EOI, so it is found at once instead of after
  // a byte-by-byte pass over the scan data (a millisecond of a 1920x1080 decode's seven).
  for (std::size_t at = b.size(); at >= pos + 2; --at) {
    if (b[at - 2] == 0xFF && b[at - 1] == 0xD9) return segments;
  }
  throw_truncated(name, "no end-of-image marker after the scan data");
}

bool read_jpeg_frame(const std::vector<std::uint8_t>& b, const std::vector<JpegSegment>& segments,
                     int* width, int* height, int* channels) {
  for (const JpegSegment& s : segments) {
    const std::uint8_t m = s.marker;
    if (m < 0xC0 || m > 0xCF || m == 0xC4 || m == 0xC8 || m == 0xCC) continue;  // not a SOFn
    // The first frame header decides, as in libjpeg: baseline, extended and progressive, with
    // Huffman (SOF0-2) or arithmetic coding (SOF9-10). Lossless and hierarchical are not read.
    if (m != 0xC0 && m != 0xC1 && m != 0xC2 && m != 0xC9 && m != 0xCA) return false;
    // P (1 byte), Y (2), X (2), Nf (1), then 3 bytes a component: id, Hi << 4 | Vi, Tqi.
    const std::uint8_t* f = &b[s.payload];
    if (s.length < 6 || f[0] != 8) return false;  // 8-bit samples only, as both decoders
    const int y = f[1] << 8 | f[2], x = f[3] << 8 | f[4], n = f[5];
    if (y == 0 || x == 0 || (n != 1 && n != 3 && n != 4) || s.length != 6 + 3 * std::size_t(n))
      return false;
    for (int i = 0; i < n; ++i) {
      const int h = f[7 + 3 * i] >> 4, v = f[7 + 3 * i] & 15;
      if (h < 1 || h > 4 || v < 1 || v > 4) return false;
    }
    *width = x;
    *height = y;
    *channels = n == 1 ? 1 : 3;  // CMYK and YCCK are decoded to RGB
    return true;
  }
  return false;
}

int count_jpeg_scans(const std::vector<std::uint8_t>& b, const std::vector<JpegSegment>& segments,
                     int stop_after) {
  if (segments.empty() || segments.back().marker != 0xDA) return 0;
  int scans = 1;
  const std::uint8_t* const end = b.data() + b.size();
  const std::uint8_t* p = b.data() + segments.back().payload + segments.back().length;
  while (scans <= stop_after) {
    // Entropy-coded data: a 0xFF byte there is FF 00 (a stuffed byte) or FF D0-D7 (a restart
    // marker); FF FF is fill. Any other marker ends the scan, as libjpeg's marker reader finds it.
    p = static_cast<const std::uint8_t*>(std::memchr(p, 0xFF, static_cast<std::size_t>(end - p)));
    if (!p) break;
    while (p < end && *p == 0xFF) ++p;
    if (p == end) break;
    const std::uint8_t marker = *p++;
    if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;
    if (marker == 0xD8 || marker == 0xD9 || end - p < 2) break;  // SOI (an error), EOI
    const std::size_t length = std::size_t{p[0]} << 8 | p[1];    // a marker segment: skipped whole
    if (length < 2 || length > static_cast<std::size_t>(end - p)) break;
    if (marker == 0xDA) ++scans;
    p += length;
  }
  return scans;
}

int orientation_in(const std::vector<std::uint8_t>& bytes,
                   const std::vector<JpegSegment>& segments) {
  static const std::uint8_t kExif[] = {'E', 'x', 'i', 'f', 0, 0};
  for (const JpegSegment& s : segments) {
    if (s.marker != 0xE1 || s.length < sizeof kExif ||
        std::memcmp(&bytes[s.payload], kExif, sizeof kExif) != 0)
      continue;
    // The first EXIF segment only (as every viewer); libexif parses just this segment's bytes.
    std::unique_ptr<ExifData, void (*)(ExifData*)> exif(
        exif_data_new_from_data(&bytes[s.payload], static_cast<unsigned>(s.length)),
        exif_data_unref);
    if (!exif) return 1;
    ExifEntry* e = exif_content_get_entry(exif->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
    if (!e || e->format != EXIF_FORMAT_SHORT || e->components < 1 || e->size < 2) return 1;
    const int o = exif_get_short(e->data, exif_data_get_byte_order(exif.get()));
    return o >= 1 && o <= 8 ? o : 1;
  }
  return 1;
}

namespace {

// --- TurboJPEG ------------------------------------------------------------------------------

using TjHandle = std::unique_ptr<void, int (*)(tjhandle)>;

std::string tj_reason(tjhandle handle) {
  const char* reason = tjGetErrorStr2(handle);
  return reason && *reason ? reason : "unknown error";
}

}  // namespace

std::string tj_header_reason(const std::vector<std::uint8_t>& bytes) {
  TjHandle handle(tjInitDecompress(), tjDestroy);
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (handle && tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &subsampling,
                                    &colorspace) != 0) {
    return tj_reason(handle.get());
  }
  return "an unsupported frame header";
}

bool decode_jpeg_turbojpeg(const std::vector<std::uint8_t>& bytes, int width, int height,
                           int channels, bool rgba, Image* image, std::string* damage,
                           std::string* refusal) {
  TjHandle handle(tjInitDecompress(), tjDestroy);
  if (!handle) return false;
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &subsampling,
                          &colorspace) != 0) {
    return false;
  }
  const int c = colorspace == TJCS_GRAY                              ? 1
                : colorspace == TJCS_YCbCr || colorspace == TJCS_RGB ? 3
                                                                     : 0;
  if (c == 0 || c != channels || w != width || h != height) return false;
  const int out_channels = rgba ? 4 : c;
  image->width = w;
  image->height = h;
  image->channels = out_channels;
  image->pixels.resize(static_cast<std::size_t>(w) * h * out_channels);
  const int format = rgba ? TJPF_RGBX : c == 1 ? TJPF_GRAY : TJPF_RGB;
  const int status = tjDecompress2(handle.get(), bytes.data(), bytes.size(), image->pixels.data(),
                                   w, 0, h, format, TJFLAG_LIMITSCANS);
  if (status == 0) return true;
  if (tjGetErrorCode(handle.get()) != TJERR_WARNING) {
    // TJFLAG_LIMITSCANS's refusal ("... more than 500 scans") stands: stb_image has no limit.
    const std::string reason = tj_reason(handle.get());
    if (refusal && reason.find("scans") != std::string::npos) *refusal = reason;
    return false;
  }
  // Damaged data that libjpeg decodes anyway (the damaged part grey), as viewers show it.
  if (damage) *damage = tjGetErrorStr2(handle.get());
  return true;
}

namespace {

// One TurboJPEG compressor per thread, made on the thread's first JPEG and destroyed when the
// thread ends, so that no image pays for setting one up (tjInitCompress allocates libjpeg's
// compressor and its memory pools); the threads compress_jpeg starts for one image's strips
// pay it once for that image. The output buffer is TurboJPEG's own, allocated per call:
// a reused buffer of tjBufSize() bytes (TJFLAG_NOREALLOC) was no faster beyond run-to-run noise
// (scripts/bench-encode.sh) and would hold that memory for every thread.
tjhandle thread_jpeg_compressor() {
  thread_local const TjHandle compressor(tjInitCompress(), tjDestroy);
  if (!compressor) throw Error("encoding JPEG failed: " + tj_reason(nullptr));
  return compressor.get();
}

int tj_subsampling(ChromaSubsampling subsampling) {
  switch (subsampling) {
    case ChromaSubsampling::s444:
      return TJSAMP_444;
    case ChromaSubsampling::s422:
      return TJSAMP_422;
    default:
      return TJSAMP_420;
  }
}

// The pixels a JPEG is compressed from: `height` rows of `width` pixels in TurboJPEG's
// `format`, rows `pitch` bytes apart, at `quality` with TurboJPEG's `subsampling`
// (TJSAMP_GRAY for greyscale).
struct JpegSource {
  const std::uint8_t* pixels;
  int width, pitch, height, format, subsampling, quality;
};

// The JPEG of rows [first, first + rows) of `source`, by this thread's compressor.
JpegBytes compress_rows(const JpegSource& source, int first, int rows) {
  tjhandle compressor = thread_jpeg_compressor();
  JpegBytes out;
  unsigned char* jpeg = nullptr;  // allocated by TurboJPEG
  unsigned long size = 0;
  const int status = tjCompress2(
      compressor, source.pixels + static_cast<std::size_t>(first) * source.pitch, source.width,
      source.pitch, rows, source.format, &jpeg, &size, source.subsampling, source.quality, 0);
  out.data = {jpeg, tjFree};
  out.size = size;
  if (status != 0 || !jpeg || size == 0) {
    throw Error("encoding JPEG failed: " + tj_reason(compressor));
  }
  return out;
}

void put16(std::uint8_t* p, unsigned v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

// Where the parts of one strip's JPEG lie: its marker segments before SOS ([0, sos)), the SOS
// segment ([sos, scan)), the entropy-coded data ([scan, size - 2), EOI after it), and the SOF0
// height's two bytes (at height).
struct StripParts {
  std::size_t sos = 0, scan = 0, height = 0;
};

// The parts of `strip`, or false where it is not one baseline scan that joining keeps intact:
// a frame other than SOF0 (progressive, arithmetic, extended), a DRI already there (TurboJPEG's
// TJ_RESTART environment variable), a frame not `width` wide. Throws where the JPEG is not
// whole.
bool strip_parts(const JpegBytes& strip, int width, StripParts* parts) {
  const std::uint8_t* b = strip.data.get();
  if (strip.size < 4 || b[0] != 0xFF || b[1] != 0xD8 || b[strip.size - 2] != 0xFF ||
      b[strip.size - 1] != 0xD9) {
    throw Error("encoding JPEG failed: a strip is not a whole JPEG");
  }
  std::size_t scan = 0;
  const std::vector<JpegSegment> segments = jpeg_segments(b, strip.size, "JPEG strip", &scan);
  bool baseline = false;
  for (const JpegSegment& s : segments) {
    if (s.marker == 0xDD || (s.marker >= 0xC1 && s.marker <= 0xCF && s.marker != 0xC4 &&
                             s.marker != 0xC8 && s.marker != 0xCC)) {
      return false;  // DRI, or a frame other than baseline
    }
    if (s.marker == 0xC0) {
      // P (1 byte), Y (2), X (2): the height is patched, the width must be the image's
      if (s.length < 6 || baseline) return false;
      baseline = (std::size_t{b[s.payload + 3]} << 8 | b[s.payload + 4]) ==
                 static_cast<std::size_t>(width);
      parts->height = s.payload + 1;
    }
  }
  if (!baseline || scan > strip.size - 2) return false;
  parts->sos = segments.back().payload - 4;  // FF DA and the length before the payload
  parts->scan = scan;
  return true;
}

// One JPEG of the strips, top to bottom, of an image `height` rows high, each strip but the
// last `restart_interval` MCUs (see JpegStripLayout in image_io.h for the layout): the first
// strip's marker segments with the SOF0 height patched, a DRI, its SOS, then every strip's
// entropy-coded data with RSTm between them, and EOI. Empty where the strips cannot be joined
// (strip_parts refuses one, or their marker segments differ anywhere but in the SOF0 height:
// other tables, as TurboJPEG's TJ_OPTIMIZE environment variable gives per strip).
// Whether strip `b` (its parts `p`) has the marker segments of the first strip `first` (`p0`)
// but for the SOF0 height, as joining needs.
bool same_marker_segments(const std::uint8_t* b, const StripParts& p, const std::uint8_t* first,
                          const StripParts& p0) {
  return p.scan == p0.scan && p.height == p0.height && std::equal(b, b + p.height, first) &&
         std::equal(b + p.height + 2, b + p.scan, first + p.height + 2);
}

// Appends the joined JPEG's head: the first strip's marker segments up to its SOS with the SOF0
// height set to `height`, a DRI of `restart_interval`, and its SOS.
void append_joined_head(std::vector<std::uint8_t>& out, const std::uint8_t* first,
                        const StripParts& p0, int height, int restart_interval) {
  const std::size_t at = out.size();
  out.insert(out.end(), first, first + p0.sos);
  put16(out.data() + at + p0.height, static_cast<unsigned>(height));
  std::uint8_t dri[6] = {0xFF, 0xDD, 0x00, 0x04};
  put16(dri + 4, static_cast<unsigned>(restart_interval));
  out.insert(out.end(), std::begin(dri), std::end(dri));
  out.insert(out.end(), first + p0.sos, first + p0.scan);
}

// Appends strip `index`'s entropy-coded data, after RSTm (RST0..RST7 in turn) but for the first.
void append_joined_strip(std::vector<std::uint8_t>& out, const JpegBytes& strip,
                         const StripParts& p, std::size_t index) {
  if (index > 0) {
    out.push_back(0xFF);
    out.push_back(static_cast<std::uint8_t>(0xD0 + (index - 1) % 8));
  }
  const std::uint8_t* b = strip.data.get();
  out.insert(out.end(), b + p.scan, b + strip.size - 2);
}

std::vector<std::uint8_t> join_jpeg_strips(const std::vector<JpegBytes>& strips, int width,
                                           int height, int restart_interval) {
  std::vector<StripParts> parts(strips.size());
  for (std::size_t i = 0; i < strips.size(); ++i) {
    if (!strip_parts(strips[i], width, &parts[i])) return {};
  }
  const std::uint8_t* first = strips[0].data.get();
  const StripParts& p0 = parts[0];
  std::size_t total = p0.scan + 6 + 2;  // the marker segments, DRI, EOI
  for (std::size_t i = 0; i < strips.size(); ++i) {
    if (!same_marker_segments(strips[i].data.get(), parts[i], first, p0)) return {};
    total += strips[i].size - 2 - parts[i].scan + (i > 0 ? 2 : 0);  // entropy-coded data, RSTm
  }
  std::vector<std::uint8_t> out;
  out.reserve(total);
  append_joined_head(out, first, p0, height, restart_interval);
  for (std::size_t i = 0; i < strips.size(); ++i) append_joined_strip(out, strips[i], parts[i], i);
  out.push_back(0xFF);
  out.push_back(0xD9);
  return out;
}

}  // namespace

std::vector<std::uint8_t> compress_jpeg_strips(
    int width, int height, const JpegStripLayout& layout, int threads,
    const std::function<JpegBytes(int first, int rows)>& compress) {
  if (layout.strips > 1) {
    std::vector<JpegBytes> strips(layout.strips);
    struct NoState {};
    for_each_piece<NoState>(
        layout.strips, worker_threads(threads, layout.strips), [&](int s, NoState&) {
          const int first = s * layout.strip_rows;
          strips[s] = compress(first, std::min(layout.strip_rows, height - first));
        });
    std::vector<std::uint8_t> joined =
        join_jpeg_strips(strips, width, height, layout.restart_interval);
    if (!joined.empty()) return joined;
  }
  const JpegBytes jpeg = compress(0, height);
  return std::vector<std::uint8_t>(jpeg.data.get(), jpeg.data.get() + jpeg.size);
}

struct JpegStripWriter::Head {
  std::vector<std::uint8_t> bytes;  // the first strip's marker segments, up to its scan data
  StripParts parts;
};

JpegStripWriter::JpegStripWriter(int width, int height, int channels, const EncodeOptions& options,
                                 Sink sink)
    : width_(width),
      height_(height),
      layout_(jpeg_strip_layout(width, height, channels < 3, options.jpeg_subsampling,
                                options.jpeg_strip_rows)),
      threads_(options.threads),
      subsampling_(channels < 3 ? TJSAMP_GRAY : tj_subsampling(options.jpeg_subsampling)),
      quality_(options.jpeg_quality),
      sink_(std::move(sink)) {
  if (quality_ < 1 || quality_ > 100)
    throw UsageError("JPEG quality " + std::to_string(quality_) + " is not in 1..100");
}

JpegStripWriter::~JpegStripWriter() = default;

int JpegStripWriter::strip_height(int strip) const {
  return std::min(layout_.strip_rows, height_ - strip * layout_.strip_rows);
}

void JpegStripWriter::write(const std::uint8_t* rows, int count) {
  if (count < 0 || count > height_ - rows_done_)
    throw Error("encoding JPEG failed: rows " + std::to_string(rows_done_) + "+" +
                std::to_string(count) + " are past the image's " + std::to_string(height_));
  const std::size_t pitch = static_cast<std::size_t>(width_) * 4;
  // The strips whose rows are all here: the pending rows completed first, then whole strips
  // read where the caller's rows lie; the rows of a strip not yet whole wait in pending_.
  std::vector<std::pair<const std::uint8_t*, int>> complete;
  int strip = strips_done_, used = 0;
  if (pending_rows_ > 0) {
    used = std::min(strip_height(strip) - pending_rows_, count);
    pending_.insert(pending_.end(), rows, rows + used * pitch);
    pending_rows_ += used;
    if (pending_rows_ < strip_height(strip)) {
      rows_done_ += count;  // all of them wait for the rest of the strip
      return;
    }
    complete.emplace_back(pending_.data(), pending_rows_);
    ++strip;
  }
  while (strip < layout_.strips && count - used >= strip_height(strip)) {
    complete.emplace_back(rows + used * pitch, strip_height(strip));
    used += strip_height(strip);
    ++strip;
  }
  std::vector<JpegBytes> jpegs(complete.size());
  struct NoState {};
  const int n = static_cast<int>(complete.size());
  for_each_piece<NoState>(n, worker_threads(threads_, n), [&](int i, NoState&) {
    const JpegSource source{
        complete[i].first, width_,  static_cast<int>(pitch), complete[i].second, TJPF_RGBX,
        subsampling_,      quality_};
    jpegs[i] = compress_rows(source, 0, complete[i].second);
  });
  for (int i = 0; i < n; ++i) emit(jpegs[i], strips_done_ + i);
  strips_done_ = strip;
  pending_.clear();  // whole and written, if it held rows
  pending_rows_ = 0;
  if (used < count) {
    pending_.assign(rows + used * pitch, rows + count * pitch);
    pending_rows_ = count - used;
  }
  rows_done_ += count;
}

void JpegStripWriter::emit(const JpegBytes& jpeg, int index) {
  if (layout_.strips == 1) {
    sink_(jpeg.data.get(), jpeg.size);
    return;
  }
  const std::uint8_t* b = jpeg.data.get();
  StripParts parts;
  if (!strip_parts(jpeg, width_, &parts) ||
      (index > 0 && !same_marker_segments(b, parts, head_->bytes.data(), head_->parts)))
    throw Error(
        "encoding JPEG failed: TurboJPEG's strips cannot be joined by restart markers "
        "(TJ_RESTART or TJ_OPTIMIZE set?)");
  std::vector<std::uint8_t> out;
  if (index == 0) {
    head_ = std::make_unique<Head>();
    head_->bytes.assign(b, b + parts.scan);
    head_->parts = parts;
    append_joined_head(out, b, parts, height_, layout_.restart_interval);
  }
  append_joined_strip(out, jpeg, parts, static_cast<std::size_t>(index));
  if (index == layout_.strips - 1) {
    out.push_back(0xFF);
    out.push_back(0xD9);
  }
  sink_(out.data(), out.size());
}

std::vector<std::uint8_t> encode_jpeg(const Image& image, int channels,
                                      const EncodeOptions& options) {
  if (options.jpeg_quality < 1 || options.jpeg_quality > 100) {
    throw UsageError("JPEG quality " + std::to_string(options.jpeg_quality) + " is not in 1..100");
  }
  const int w = image.width, h = image.height, stride = image.channels;
  const JpegStripLayout layout =
      jpeg_strip_layout(w, h, channels < 3, options.jpeg_subsampling, options.jpeg_strip_rows);
  const int subsampling = channels < 3 ? TJSAMP_GRAY : tj_subsampling(options.jpeg_subsampling);
  const std::uint8_t* pixels = image.pixels.data();
  std::vector<std::uint8_t> grey;  // the grey plane of grey + alpha
  int format = TJPF_GRAY;
  if (stride == 4) {
    format = TJPF_RGBX;  // for 1 or 2 channels R = G = B: libjpeg's luma of it is R exactly
  } else if (stride == 3) {
    format = TJPF_RGB;
  } else if (stride == 2) {
    grey.resize(static_cast<std::size_t>(w) * h);
    for (std::size_t i = 0; i < grey.size(); ++i) grey[i] = pixels[2 * i];
    pixels = grey.data();
  }
  const JpegSource source{
      pixels, w, w * (grey.empty() ? stride : 1), h, format, subsampling, options.jpeg_quality};
  return compress_jpeg_strips(w, h, layout, options.threads, [&](int first, int rows) {
    return compress_rows(source, first, rows);
  });
}

int exif_orientation(const std::vector<std::uint8_t>& bytes) {
  if (!starts_with(bytes, kJpegSignature)) return 1;
  try {
    std::size_t scan = 0;
    return orientation_in(bytes, jpeg_segments(bytes.data(), bytes.size(), "", &scan));
  } catch (const Error&) {
    return 1;  // decode_image reports the damage; here it only means no orientation
  }
}

JpegStripLayout jpeg_strip_layout(int width, int height, bool grey, ChromaSubsampling subsampling,
                                  int strip_rows) {
  if (width < 1 || height < 1 || width > 65535 || height > 65535) {  // JPEG's 16-bit sides
    throw Error("image " + std::to_string(width) + "x" + std::to_string(height) +
                (width < 1 || height < 1 ? " has no pixels to encode as JPEG"
                                         : " is too large to encode as JPEG"));
  }
  JpegStripLayout layout;
  layout.mcu_width = grey || subsampling == ChromaSubsampling::s444 ? 8 : 16;
  layout.mcu_height = !grey && subsampling == ChromaSubsampling::s420 ? 16 : 8;
  layout.strip_rows = height;
  const int columns = (width - 1) / layout.mcu_width + 1;
  const int mcu_rows = (height - 1) / layout.mcu_height + 1;
  std::int64_t rows = 0;  // MCU rows a strip
  if (strip_rows > 0) {
    rows = (std::int64_t{strip_rows} - 1) / layout.mcu_height + 1;
  } else if (strip_rows == 0) {
    const std::int64_t pieces = (std::int64_t{width} * height - 1) / kJpegStripPixels + 1;
    rows = (mcu_rows - 1) / pieces + 1;
  } else {
    return layout;
  }
  rows = std::min<std::int64_t>(rows, 65535 / columns);  // DRI's 16 bits; columns <= 8192
  const int strips = static_cast<int>((mcu_rows - 1) / rows + 1);
  if (strips < 2) return layout;
  layout.strip_rows = static_cast<int>(rows) * layout.mcu_height;
  layout.strips = strips;
  layout.restart_interval = static_cast<int>(rows) * columns;
  return layout;
}

}  // namespace blurtool
