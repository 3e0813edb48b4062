// Encoder measurements for scripts/bench-encode.sh and scripts/bench-png-level.sh: every variant
// is timed in the same run, interleaved (one run of each in turn), and reported as the median.
//
//   encode_bench jpeg [--runs N] IMAGE...
//       JPEG quality 95, 4:2:0, of each image: blurtool's encode path (encode_rgba from the RGBA
//       result) against bare tjCompress2 calls on the same pixels, and the encode path this one
//       replaced (from_rgba, then tjInitCompress and a TurboJPEG-allocated buffer per call).
//       The image's R plane as a greyscale image too.
//   encode_bench jpeg-strips [--runs N] IMAGE...
//       JPEG quality 95, 4:2:0, of each image from RGBA (encode_rgba, as a blur's result is
//       written): one piece against restart strips (jpeg_strip_layout's default, and strips of
//       about 0.5, 1 and 2 Mpixel) on 1 thread and on the hardware threads; bytes against one
//       piece.
//   encode_bench jpeg-decode [--runs N] JPEG...
//       blurtool's JPEG decode to RGBA (decode_image_wide) against bare tjDecompress2 calls on
//       the same bytes, into a reused and into a fresh buffer; and what less host work would
//       cost: tjDecompress2 to RGB, tjDecompressToYUV2 (no upsampling or colour conversion).
//   encode_bench codec-bound [--runs N] [--threads T] INPUT_FOLDER BLURRED_FOLDER
//       The host codec bound of a folder job: what libjpeg-turbo alone does on T threads
//       (default: hardware threads) in one process, without blur, files or OpenCL. Each .jpg of
//       INPUT_FOLDER is decoded (tjDecompress2 to RGBX) and the pixels of the same name in
//       BLURRED_FOLDER (a blurred output, decoded before timing) are encoded (tjCompress2,
//       quality 95, 4:2:0), each thread with its own reused buffers. Prints images/s (median of
//       the runs) for decode + encode, decode only and encode only, and on one thread the
//       milliseconds an image of each. scripts/bench-e2e runs it beside the folder job.
//   encode_bench png [--runs N] IMAGE...
//       PNG of each image with the default settings on 1 thread and on 1..hardware threads,
//       against the libpng encoder this one replaced (filter Up, Z_RLE).
//   encode_bench png-table [--runs N] [--reference CONFIG] [--per-image] [--pick R] CONFIG,...
//                          IMAGE...
//       A markdown table: for each CONFIG ([LABEL=]FILTER:LEVEL, FILTER:rle or
//       FILTER:LEVEL:filtered; FILTER none, sub, up, average, paeth or adaptive) the bytes of all
//       images, the ratio to the reference configuration's bytes (all images, and the largest
//       ratio of one image), and the encode time of all images on one thread (sum of the
//       per-image medians); with --per-image a second table of each image's ratio to the
//       reference; with --pick R the fastest configurations within R times the reference's bytes
//       (all images together, and every image on its own).
//   encode_bench png-strips [--runs N] IMAGE...
//       The default settings with strips of 256 KiB to 16 MiB against one stream: bytes and
//       time on the hardware threads.
// IMAGE: any PNG or JPEG blurtool reads; 8 bits a sample (16-bit PNGs are read reduced).
#include <png.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "util/host_memory.h"
#include "image/image_io.h"
#include "image/png_encode.h"

namespace {

using namespace blurtool;
using Bytes = std::vector<std::uint8_t>;

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Variants timed interleaved: run i of every variant before run i + 1 of any.
struct Variant {
  Variant(std::string n, std::function<std::size_t()> r) : name(std::move(n)), run(std::move(r)) {}
  std::string name;
  std::function<std::size_t()> run;  // returns the bytes written
  std::vector<double> ms;
  std::size_t bytes = 0;
};

void time_all(std::vector<Variant>& variants, int runs) {
  for (Variant& v : variants) v.bytes = v.run();  // warm-up: buffers, threads, caches
  for (int i = 0; i < runs; ++i) {
    for (Variant& v : variants) {
      const double start = now_ms();
      v.bytes = v.run();
      v.ms.push_back(now_ms() - start);
    }
  }
}

// --- the encoders this one replaced, as they were ----------------------------------------------

struct OldPngIo {
  Bytes* out;
};

void old_png_write(png_structp png, png_bytep data, std::size_t length) {
  auto* io = static_cast<OldPngIo*>(png_get_io_ptr(png));
  io->out->insert(io->out->end(), data, data + length);
}
void old_png_flush(png_structp) {}

// libpng, filter Up, zlib level 1 with Z_RLE, IDAT chunks of 128 KiB, into a vector reserved at
// the raw size.
Bytes old_png(const Image& image) {
  Bytes out;
  out.reserve(image.pixels.size() + image.height + 1024);
  OldPngIo io{&out};
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("libpng failed");
  }
  static constexpr int kColorType[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                       PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(png, &io, old_png_write, old_png_flush);
  png_set_IHDR(png, info, image.width, image.height, 8, kColorType[image.channels - 1],
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
  png_set_compression_strategy(png, Z_RLE);
  png_set_compression_level(png, 1);
  png_set_compression_buffer_size(png, std::size_t{1} << 17);
  png_write_info(png, info);
  const std::size_t row = static_cast<std::size_t>(image.width) * image.channels;
  for (int y = 0; y < image.height; ++y) png_write_row(png, image.pixels.data() + row * y);
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

// from_rgba, then a compressor made for the call and a buffer TurboJPEG allocates and grows.
Bytes old_jpeg(const Image& rgba, int channels, int quality) {
  const Image image = from_rgba(rgba, channels);
  const int c = image.channels;
  static constexpr int kPixelFormat[] = {TJPF_GRAY, TJPF_GRAY, TJPF_RGB, TJPF_RGBX};
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  tjCompress2(handle, image.pixels.data(), image.width, 0, image.height, kPixelFormat[c - 1], &jpeg,
              &size, c < 3 ? TJSAMP_GRAY : TJSAMP_420, quality, 0);
  Bytes out(jpeg, jpeg + size);
  tjFree(jpeg);
  tjDestroy(handle);
  return out;
}

// --- bare TurboJPEG -----------------------------------------------------------------------------

struct Bare {
  tjhandle handle = tjInitCompress();
  unsigned char* buffer = nullptr;
  unsigned long capacity = 0;
  ~Bare() {
    tjFree(buffer);
    tjDestroy(handle);
  }

  // tjCompress2 alone: `noalloc` into a reused buffer of tjBufSize bytes, else into a buffer
  // TurboJPEG allocates (freed after). Returns the JPEG's size.
  std::size_t compress(const std::uint8_t* pixels, int w, int pitch, int h, int format,
                       int subsampling, bool noalloc, Bytes* copy = nullptr) {
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    if (noalloc) {
      const unsigned long need = tjBufSize(w, h, subsampling);
      if (capacity < need) {
        tjFree(buffer);
        buffer = tjAlloc(static_cast<int>(need));
        capacity = need;
      }
      jpeg = buffer;
      size = capacity;
    }
    if (tjCompress2(handle, pixels, w, pitch, h, format, &jpeg, &size, subsampling, 95,
                    noalloc ? TJFLAG_NOREALLOC : 0) != 0)
      throw std::runtime_error(tjGetErrorStr2(handle));
    if (copy) copy->assign(jpeg, jpeg + size);
    if (!noalloc) tjFree(jpeg);
    return size;
  }
};

void print_variants(const std::string& title, std::vector<Variant>& variants, int base) {
  const double base_ms = median(variants[base].ms);
  std::printf("\n%s\n", title.c_str());
  std::printf("  %-52s %9s %9s %9s %10s\n", "variant", "median ms", "min ms", "ratio", "bytes");
  for (Variant& v : variants) {
    const double m = median(v.ms);
    std::printf("  %-52s %9.2f %9.2f %8.3fx %10zu\n", v.name.c_str(), m,
                *std::min_element(v.ms.begin(), v.ms.end()), m / base_ms, v.bytes);
  }
}

std::string size_of(const Image& image) {
  return std::to_string(image.width) + "x" + std::to_string(image.height);
}

int jpeg_mode(const std::vector<std::string>& images, int runs) {
  for (const std::string& path : images) {
    const Image image = load_image(path);
    if (image.channels != 3) {
      std::fprintf(stderr, "%s: not RGB, skipped\n", path.c_str());
      continue;
    }
    const Image rgba = to_rgba(image);
    const int w = image.width, h = image.height;
    Bare bare;
    EncodeOptions options;  // quality 95, 4:2:0: blurtool's defaults
    Bytes reference, ours = encode_rgba(rgba, 3, ImageFormat::jpeg, options);
    bare.compress(image.pixels.data(), w, 0, h, TJPF_RGB, TJSAMP_420, true, &reference);
    std::printf("\n%s (%s): encode_rgba's bytes %s bare tjCompress2's (TJPF_RGB)\n", path.c_str(),
                size_of(image).c_str(), reference == ours ? "equal" : "DIFFER FROM");
    std::vector<Variant> colour = {
        {"tjCompress2 RGB, reused buffer (TJFLAG_NOREALLOC)",
         [&] { return bare.compress(image.pixels.data(), w, 0, h, TJPF_RGB, TJSAMP_420, true); }},
        {"tjCompress2 RGB, buffer allocated by TurboJPEG",
         [&] { return bare.compress(image.pixels.data(), w, 0, h, TJPF_RGB, TJSAMP_420, false); }},
        {"tjCompress2 RGBX of the RGBA, reused buffer",
         [&] { return bare.compress(rgba.pixels.data(), w, 0, h, TJPF_RGBX, TJSAMP_420, true); }},
        {"tjCompress2 RGBX of the RGBA, buffer by TurboJPEG",
         [&] { return bare.compress(rgba.pixels.data(), w, 0, h, TJPF_RGBX, TJSAMP_420, false); }},
        {"blurtool: encode_rgba(RGBA, 3 channels)",
         [&] { return encode_rgba(rgba, 3, ImageFormat::jpeg, options).size(); }},
        {"old: from_rgba + tjInitCompress + TurboJPEG's buffer",
         [&] { return old_jpeg(rgba, 3, 95).size(); }}};
    time_all(colour, runs);
    print_variants("JPEG q95 4:2:0 of " + path + " (" + size_of(image) + "), " +
                       std::to_string(runs) + " runs",
                   colour, 0);

    // Greyscale: the R plane, expanded to RGBA as blurtool expands a grey input.
    Image grey = from_rgba(rgba, 1);
    const Image grey_rgba = to_rgba(grey);
    Bytes grey_ours = encode_rgba(grey_rgba, 1, ImageFormat::jpeg, options), grey_ref;
    bare.compress(grey.pixels.data(), w, 0, h, TJPF_GRAY, TJSAMP_GRAY, true, &grey_ref);
    std::printf("\ngrey: encode_rgba's bytes %s bare tjCompress2's (TJPF_GRAY)\n",
                grey_ref == grey_ours ? "equal" : "DIFFER FROM");
    Bytes plane(static_cast<std::size_t>(w) * h);
    std::vector<Variant> mono = {
        {"tjCompress2 GRAY, reused buffer",
         [&] { return bare.compress(grey.pixels.data(), w, 0, h, TJPF_GRAY, TJSAMP_GRAY, true); }},
        {"tjCompress2 RGBX of the RGBA as GRAY, reused buffer",
         [&] {
           return bare.compress(grey_rgba.pixels.data(), w, 0, h, TJPF_RGBX, TJSAMP_GRAY, true);
         }},
        {"R plane copied out, then tjCompress2 GRAY",
         [&] {
           const std::uint8_t* in = grey_rgba.pixels.data();
           for (std::size_t i = 0; i < plane.size(); ++i) plane[i] = in[4 * i];
           return bare.compress(plane.data(), w, 0, h, TJPF_GRAY, TJSAMP_GRAY, true);
         }},
        {"blurtool: encode_rgba(RGBA, 1 channel)",
         [&] { return encode_rgba(grey_rgba, 1, ImageFormat::jpeg, options).size(); }},
        {"old: from_rgba + tjInitCompress + TurboJPEG's buffer",
         [&] { return old_jpeg(grey_rgba, 1, 95).size(); }}};
    time_all(mono, runs);
    print_variants("JPEG q95 greyscale of its R plane, " + std::to_string(runs) + " runs", mono, 0);
  }
  return 0;
}

int png_mode(const std::vector<std::string>& images, int runs) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  for (const std::string& path : images) {
    const Image image = load_image(path);
    std::vector<Variant> variants;
    variants.push_back({"old: libpng, filter Up, Z_RLE", [&] { return old_png(image).size(); }});
    for (int t = 1; t <= cores; t = t < cores && 2 * t > cores ? cores : 2 * t) {
      EncodeOptions options;
      options.threads = t;
      variants.push_back(
          {"encode_image, " + std::to_string(t) + " thread" + (t > 1 ? "s" : ""),
           [&image, options] { return encode_image(image, ImageFormat::png, options).size(); }});
    }
    time_all(variants, runs);
    print_variants("PNG of " + path + " (" + size_of(image) + ", " +
                       std::to_string(image.channels) + " channels), level " +
                       std::to_string(kDefaultPngLevel) + ", " + std::to_string(runs) + " runs, " +
                       std::to_string(cores) + " hardware threads",
                   variants, 0);
  }
  return 0;
}

struct Config {
  std::string name;  // the label, or the specification
  std::string settings_text;
  PngSettings settings;
};

// LABEL=FILTER:LEVEL[:STRATEGY], or without LABEL= (the specification is the label).
Config parse_config(const std::string& labelled) {
  const std::size_t equals = labelled.find('=');
  const std::string text = equals == std::string::npos ? labelled : labelled.substr(equals + 1);
  static const std::map<std::string, PngFilter> kFilters = {
      {"none", PngFilter::none},   {"sub", PngFilter::sub},
      {"up", PngFilter::up},       {"average", PngFilter::average},
      {"paeth", PngFilter::paeth}, {"adaptive", PngFilter::adaptive}};
  Config c;
  c.name = equals == std::string::npos ? text : labelled.substr(0, equals);
  const std::size_t colon = text.find(':');
  const auto filter = kFilters.find(text.substr(0, colon));
  if (colon == std::string::npos || filter == kFilters.end())
    throw std::runtime_error("bad configuration " + text);
  c.settings.filter = filter->second;
  std::string rest = text.substr(colon + 1);
  c.settings.strategy = Z_DEFAULT_STRATEGY;
  if (rest == "rle") {
    c.settings.strategy = Z_RLE;
    c.settings.level = 1;
  } else {
    const std::size_t second = rest.find(':');
    if (second != std::string::npos) {
      if (rest.substr(second + 1) != "filtered") throw std::runtime_error("bad strategy " + text);
      c.settings.strategy = Z_FILTERED;
      rest = rest.substr(0, second);
    }
    c.settings.level = std::stoi(rest);
  }
  c.settings.threads = 1;
  static const char* kFilterNames[] = {"none", "Sub", "Up", "Average", "Paeth", "adaptive"};
  c.settings_text = std::string(kFilterNames[static_cast<int>(c.settings.filter)]) + ", " +
                    (c.settings.strategy == Z_RLE
                         ? "Z_RLE"
                         : "zlib level " + std::to_string(c.settings.level) +
                               (c.settings.strategy == Z_FILTERED ? ", Z_FILTERED" : ""));
  return c;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

int png_table_mode(const std::string& config_list, const std::string& reference,
                   const std::vector<std::string>& images, int runs, bool per_image, double pick) {
  std::vector<Config> configs;
  for (const std::string& c : split(config_list)) configs.push_back(parse_config(c));
  const Config ref = parse_config(reference);
  std::vector<Image> loaded;
  double pixels = 0;
  for (const std::string& path : images) {
    loaded.push_back(load_image(path));
    pixels += static_cast<double>(loaded.back().width) * loaded.back().height;
  }
  // Per image: the reference's bytes; per configuration: bytes and median time of each image.
  std::vector<std::size_t> ref_bytes;
  for (const Image& image : loaded)
    ref_bytes.push_back(encode_png(png_pixels(image, image.channels), ref.settings).size());
  std::size_t ref_total = 0;
  for (std::size_t b : ref_bytes) ref_total += b;
  std::printf(
      "| | filter, zlib settings | bytes | vs %s, all | vs %s, worst image | "
      "ms, 1 thread | Mpixel/s |\n|---|---|---:|---:|---:|---:|---:|\n",
      ref.name.c_str(), ref.name.c_str());
  std::string fastest_all, fastest_each;  // within `pick` of the reference
  double fastest_all_ms = 0, fastest_each_ms = 0;
  std::vector<std::vector<std::size_t>> bytes(configs.size());  // per configuration, per image
  for (std::size_t k = 0; k < configs.size(); ++k) {
    const Config& c = configs[k];
    std::size_t total = 0;
    double worst = 0, ms = 0;
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      std::vector<Variant> one = {
          {c.name, [&] { return encode_png(png_pixels(loaded[i], loaded[i].channels), c.settings).size(); }}};
      time_all(one, runs);
      bytes[k].push_back(one[0].bytes);
      total += one[0].bytes;
      worst = std::max(worst, static_cast<double>(one[0].bytes) / ref_bytes[i]);
      ms += median(one[0].ms);
    }
    std::printf("| %s | %s | %zu | %.3f | %.3f | %.0f | %.1f |\n", c.name.c_str(),
                c.settings_text.c_str(), total, static_cast<double>(total) / ref_total, worst, ms,
                pixels / 1e3 / ms);
    std::fflush(stdout);
    if (static_cast<double>(total) <= pick * ref_total &&
        (fastest_all.empty() || ms < fastest_all_ms))
      fastest_all = c.name, fastest_all_ms = ms;
    if (worst <= pick && (fastest_each.empty() || ms < fastest_each_ms))
      fastest_each = c.name, fastest_each_ms = ms;
  }
  if (pick > 0) {
    std::printf(
        "\nFastest within %.2fx of %s's bytes, all images together: %s (%.0f ms); "
        "every image on its own: %s (%.0f ms).\n",
        pick, ref.name.c_str(), fastest_all.empty() ? "none" : fastest_all.c_str(), fastest_all_ms,
        fastest_each.empty() ? "none" : fastest_each.c_str(), fastest_each_ms);
  }
  if (!per_image) return 0;
  std::printf("\nBytes of each image as a ratio to %s's:\n\n| image | pixels |", ref.name.c_str());
  for (const Config& c : configs) std::printf(" %s |", c.name.c_str());
  std::printf("\n|---|---:|");
  for (std::size_t k = 0; k < configs.size(); ++k) std::printf("---:|");
  std::printf("\n");
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const std::string name = images[i].substr(images[i].rfind('/') + 1);
    std::printf("| %s | %dx%d |", name.c_str(), loaded[i].width, loaded[i].height);
    for (std::size_t k = 0; k < configs.size(); ++k)
      std::printf(" %.3f |", static_cast<double>(bytes[k][i]) / ref_bytes[i]);
    std::printf("\n");
  }
  return 0;
}

int png_strips_mode(const std::vector<std::string>& images, int runs) {
  for (const std::string& path : images) {
    const Image image = load_image(path);
    const PngSettings base = png_settings(kDefaultPngLevel);
    std::vector<Variant> variants;
    for (std::size_t strip : {std::size_t{0}, std::size_t{1} << 18, std::size_t{1} << 19,
                              std::size_t{1} << 20, std::size_t{1} << 22, std::size_t{1} << 24}) {
      PngSettings s = base;
      // 0 here: one strip (one deflate stream), however large the image.
      s.strip_bytes = strip ? strip : ~std::size_t{0};
      variants.push_back(
          {strip ? "strips of " + std::to_string(strip >> 10) + " KiB" : "one stream",
           [&image, s] { return encode_png(png_pixels(image, image.channels), s).size(); }});
    }
    time_all(variants, runs);
    print_variants("PNG strips of " + path + " (" + size_of(image) + "), level " +
                       std::to_string(base.level) + ", hardware threads; ratio: time",
                   variants, 0);
    for (Variant& v : variants)
      std::printf("  %-52s bytes %+.3f%% vs one stream\n", v.name.c_str(),
                  100.0 * (static_cast<double>(v.bytes) / variants[0].bytes - 1));
  }
  return 0;
}

// Rows of strips that share `height` rows as equally as whole MCU rows of `mcu` allow, about
// `pixels` pixels each (the rule jpeg_strip_layout applies with kJpegStripPixels).
int strip_rows_for(const Image& image, int mcu, std::int64_t pixels) {
  const std::int64_t pieces = (std::int64_t{image.width} * image.height - 1) / pixels + 1;
  const int mcu_rows = (image.height - 1) / mcu + 1;
  return static_cast<int>(((mcu_rows - 1) / pieces + 1) * mcu);
}

int jpeg_strips_mode(const std::vector<std::string>& images, int runs) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  for (const std::string& path : images) {
    const Image rgba = to_rgba(load_image(path));
    std::vector<Variant> variants;
    auto add = [&](const std::string& name, int strip_rows, int threads) {
      EncodeOptions options;  // quality 95, 4:2:0: blurtool's defaults
      options.jpeg_strip_rows = strip_rows;
      options.threads = threads;
      variants.push_back(
          {name + ", " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : ""),
           [&rgba, options] { return encode_rgba(rgba, 3, ImageFormat::jpeg, options).size(); }});
    };
    add("one piece", -1, 1);
    const JpegStripLayout layout =
        jpeg_strip_layout(rgba.width, rgba.height, false, ChromaSubsampling::s420);
    for (int t : {1, cores}) add("default (" + std::to_string(layout.strips) + " strips)", 0, t);
    for (std::int64_t mpix4 : {2, 4, 8}) {  // strips of about mpix4 / 4 Mpixel
      const int rows = strip_rows_for(rgba, 16, mpix4 << 18);
      const int strips = (rgba.height - 1) / rows + 1;
      if (layout.strips > 1 && rows == layout.strip_rows) continue;  // the default's
      const std::string name =
          std::to_string(strips) + " strips of " + std::to_string(rows) + " rows";
      for (int t : {1, cores}) add(name, rows, t);
    }
    time_all(variants, runs);
    print_variants("JPEG q95 4:2:0 strips of " + path + " (" + size_of(rgba) + ") from RGBA, " +
                       std::to_string(runs) + " runs, " + std::to_string(cores) +
                       " hardware threads",
                   variants, 0);
    for (Variant& v : variants)
      std::printf("  %-52s bytes %+.4f%% vs one piece\n", v.name.c_str(),
                  100.0 * (static_cast<double>(v.bytes) / variants[0].bytes - 1));
  }
  return 0;
}

// blurtool's JPEG decode (decode_image_wide to RGBA, as the pipeline calls it: header checks,
// EXIF orientation, a fresh image-sized buffer) against bare tjDecompress2 calls on the same
// bytes into RGBX, into a reused buffer and into a fresh one.
int jpeg_decode_mode(const std::vector<std::string>& files, int runs) {
  for (const std::string& path : files) {
    const Bytes bytes = read_image_file(path, kDefaultMaxFileBytes);
    std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitDecompress(), tjDestroy);
    int w = 0, h = 0, sub = 0, space = 0;
    if (tjDecompressHeader3(handle.get(), bytes.data(), bytes.size(), &w, &h, &sub, &space) != 0)
      throw std::runtime_error(path + ": not a JPEG TurboJPEG reads");
    Bytes reused(static_cast<std::size_t>(w) * h * 4);
    auto bare = [&](std::uint8_t* out) {
      if (tjDecompress2(handle.get(), bytes.data(), bytes.size(), out, w, 0, h, TJPF_RGBX, 0) != 0)
        throw std::runtime_error(path + ": tjDecompress2 failed");
    };
    std::vector<Variant> variants = {{"tjDecompress2 RGBX, reused buffer",
                                      [&] {
                                        bare(reused.data());
                                        return reused.size();
                                      }},
                                     {"tjDecompress2 RGBX, fresh buffer",
                                      [&] {
                                        Bytes fresh(reused.size());
                                        bare(fresh.data());
                                        return fresh.size();
                                      }},
                                     {"blurtool: decode_image_wide(..., RGBA)", [&] {
                                        return decode_image_wide(bytes, path, nullptr,
                                                                 kDefaultMaxPixels, true, true)
                                            .narrow.pixels.size();
                                      }}};
    // What the decode would cost with less of it on the host: the channels as stored (RGB,
    // expanded to RGBA on the device), and YCbCr planes as coded (chroma upsampling and
    // colour conversion on the device too).
    Bytes rgb(static_cast<std::size_t>(w) * h * 3);
    variants.emplace_back("tjDecompress2 RGB, reused buffer", [&] {
      if (tjDecompress2(handle.get(), bytes.data(), bytes.size(), rgb.data(), w, 0, h, TJPF_RGB,
                        0) != 0)
        throw std::runtime_error(path + ": tjDecompress2 failed");
      return rgb.size();
    });
    Bytes planes(tjBufSizeYUV2(w, 1, h, sub));
    variants.emplace_back("tjDecompressToYUV2 (planes as coded), reused buffer", [&] {
      if (tjDecompressToYUV2(handle.get(), bytes.data(), bytes.size(), planes.data(), w, 1, h, 0) !=
          0)
        throw std::runtime_error(path + ": tjDecompressToYUV2 failed");
      return planes.size();
    });
    time_all(variants, runs);
    print_variants("JPEG decode of " + path + " (" + std::to_string(w) + "x" + std::to_string(h) +
                       "), " + std::to_string(runs) + " runs",
                   variants, 0);
  }
  return 0;
}

// The .jpg and .jpeg files of `folder`, sorted by name.
std::vector<std::string> jpeg_files(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(folder)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".jpg" || ext == ".jpeg"))
      names.push_back(e.path().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

int codec_bound_mode(const std::vector<std::string>& args, int runs, int threads) {
  if (args.size() != 2) throw std::runtime_error("codec-bound takes INPUT_FOLDER BLURRED_FOLDER");
  const std::vector<std::string> inputs = jpeg_files(args[0]);
  if (inputs.empty()) throw std::runtime_error(args[0] + ": no .jpg files");
  struct Job {
    Bytes jpeg;     // the input file
    Bytes blurred;  // RGBX pixels to encode
    int width = 0, height = 0;
  };
  std::vector<Job> jobs(inputs.size());
  std::unique_ptr<void, int (*)(tjhandle)> reader(tjInitDecompress(), tjDestroy);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    jobs[i].jpeg = read_image_file(inputs[i], kDefaultMaxFileBytes);
    const std::string other =
        (std::filesystem::path(args[1]) / std::filesystem::path(inputs[i]).filename()).string();
    const Bytes blurred = read_image_file(other, kDefaultMaxFileBytes);
    int w = 0, h = 0, sub = 0, space = 0;
    if (tjDecompressHeader3(reader.get(), blurred.data(), blurred.size(), &w, &h, &sub, &space) !=
        0)
      throw std::runtime_error(other + ": not a JPEG TurboJPEG reads");
    jobs[i].blurred.resize(static_cast<std::size_t>(w) * h * 4);
    if (tjDecompress2(reader.get(), blurred.data(), blurred.size(), jobs[i].blurred.data(), w, 0, h,
                      TJPF_RGBX, 0) != 0)
      throw std::runtime_error(other + ": tjDecompress2 failed");
    jobs[i].width = w;
    jobs[i].height = h;
  }

  // One pass over the folder on `n` threads: decode and/or encode every image.
  auto pass = [&](int n, bool decode, bool encode) {
    std::atomic<std::size_t> next{0};
    auto work = [&] {
      std::unique_ptr<void, int (*)(tjhandle)> d(tjInitDecompress(), tjDestroy);
      std::unique_ptr<void, int (*)(tjhandle)> c(tjInitCompress(), tjDestroy);
      Bytes pixels, out;
      for (std::size_t i; (i = next++) < jobs.size();) {
        const Job& j = jobs[i];
        if (decode) {
          int w = 0, h = 0, sub = 0, space = 0;
          if (tjDecompressHeader3(d.get(), j.jpeg.data(), j.jpeg.size(), &w, &h, &sub, &space) != 0)
            throw std::runtime_error(inputs[i] + ": not a JPEG TurboJPEG reads");
          pixels.resize(static_cast<std::size_t>(w) * h * 4);
          if (tjDecompress2(d.get(), j.jpeg.data(), j.jpeg.size(), pixels.data(), w, 0, h,
                            TJPF_RGBX, 0) != 0)
            throw std::runtime_error(inputs[i] + ": tjDecompress2 failed");
        }
        if (encode) {
          out.resize(tjBufSize(j.width, j.height, TJSAMP_420));
          unsigned char* dst = out.data();
          unsigned long size = out.size();
          if (tjCompress2(c.get(), j.blurred.data(), j.width, 0, j.height, TJPF_RGBX, &dst, &size,
                          TJSAMP_420, 95, TJFLAG_NOREALLOC) != 0)
            throw std::runtime_error(inputs[i] + ": tjCompress2 failed");
        }
      }
    };
    // Each thread's failure is kept and the first rethrown once all have ended.
    std::vector<std::exception_ptr> errors(n);
    auto guarded = [&](int t) {
      try {
        work();
      } catch (...) {
        errors[t] = std::current_exception();
        next = jobs.size();  // the others stop at their next image
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < n; ++t) pool.emplace_back(guarded, t);
    guarded(0);
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
    return jobs.size();
  };
  const int n =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Variant> variants = {
      {"decode + encode, " + std::to_string(n) + " threads", [&] { return pass(n, true, true); }},
      {"decode only, " + std::to_string(n) + " threads", [&] { return pass(n, true, false); }},
      {"encode only, " + std::to_string(n) + " threads", [&] { return pass(n, false, true); }},
      {"decode, 1 thread", [&] { return pass(1, true, false); }},
      {"encode, 1 thread", [&] { return pass(1, false, true); }}};
  time_all(variants, runs);
  std::printf(
      "host codec bound: %zu JPEGs of %s (%dx%d first), blurred pixels of %s; "
      "median of %d runs\n",
      jobs.size(), args[0].c_str(), jobs[0].width, jobs[0].height, args[1].c_str(), runs);
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const double ms = median(variants[v].ms);
    if (v < 3)
      std::printf("  %-32s %8.1f images/s\n", variants[v].name.c_str(), jobs.size() / ms * 1000);
    else
      std::printf("  %-32s %8.2f ms an image\n", variants[v].name.c_str(), ms / jobs.size());
  }
  return 0;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: encode_bench jpeg|jpeg-strips|jpeg-decode|png|png-strips [--runs N] IMAGE...\n"
      "       encode_bench codec-bound [--runs N] [--threads T] INPUT_FOLDER BLURRED_FOLDER\n"
      "       encode_bench png-table [--runs N] [--reference CONFIG] [--per-image] [--pick R] "
      "CONFIGS IMAGE...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  tune_host_allocator();  // as blurtool's main: image-sized blocks reused, not mapped anew
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  int runs = 11;
  std::string reference = "paeth:6";
  bool per_image = false;
  double pick = 0;
  int threads = 0;
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--pick" && i + 1 < argc) {
      pick = std::atof(argv[++i]);
    } else if (a == "--per-image") {
      per_image = true;
    } else if (a == "--reference" && i + 1 < argc) {
      reference = argv[++i];
    } else {
      args.push_back(a);
    }
  }
  try {
    if (mode == "jpeg") return jpeg_mode(args, runs);
    if (mode == "jpeg-strips") return jpeg_strips_mode(args, runs);
    if (mode == "jpeg-decode") return jpeg_decode_mode(args, runs);
    if (mode == "codec-bound") return codec_bound_mode(args, runs, threads);
    if (mode == "png") return png_mode(args, runs);
    if (mode == "png-strips") return png_strips_mode(args, runs);
    if (mode == "png-table" && args.size() >= 2) {
      const std::string configs = args.front();
      args.erase(args.begin());
      return png_table_mode(configs, reference, args, runs, per_image, pick);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "encode_bench: %s\n", e.what());
    return 1;
  }
  return usage();
}
