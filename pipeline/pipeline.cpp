// The stages of the main job and single mode (see pipeline.h).
#include "pipeline/pipeline.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <future>
#include <iostream>
#include <system_error>
#include <utility>

#include "filters/box/box_host.h"
#include "filters/gauss/gauss_host.h"
#include "filters/jpeg_entropy_device.h"
#include "filters/ycbcr_device.h"
#include "pipeline/strip_pipeline.h"
#include "util/trace.h"

namespace fs = std::filesystem;

namespace blurtool {

bool is_image_name(const std::string& path) {
  const std::string ext = lower_extension(path);
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".tif" || ext == ".tiff" ||
         ext == ".webp";
}

OutputKind output_kind(const std::string& path, const std::string& input, const JobOptions& o) {
  std::string name = o.format;
  if (name.empty()) {
    std::string ext = lower_extension(path == "-" ? input : path);
    if (path == "-" && !is_image_name(input)) ext = ".png";
    if (ext == ".jpeg") ext = ".jpg";
    if (ext == ".tiff") ext = ".tif";
    name = ext.empty() ? ext : ext.substr(1);
  }
  const bool bright = o.operation == JobOptions::Operation::bright;
  if (name == "png") return OutputKind::png;
  if (name == "jpg") return OutputKind::jpeg;
  if (name == "tif") return OutputKind::tiff;
  if (name == "webp") return OutputKind::webp;
  if (bright && name == "csv") return OutputKind::csv;
  if (bright && name == "json") return OutputKind::json;
  if (bright)
    throw UsageError("output '" + path + "': with " + parameter("bright") +
                     " it must end in .csv or .json " +
                     "(the points) or .png, .jpg, .jpeg, .tif, .tiff or .webp (the image with a " +
                     "glow at each point)");
  throw UsageError("output '" + path +
                   "': unknown image format; use a .png, .jpg, .jpeg, .tif, .tiff or .webp name, "
                   "or " +
                   parameter("format"));
}

const char* output_kind_name(OutputKind kind) {
  static const char* const names[] = {"PNG", "JPEG", "CSV", "JSON", "TIFF", "WebP"};  // by kind
  return names[static_cast<int>(kind)];
}

std::vector<std::string> unused_encoder_options(const JobOptions& o,
                                                const std::set<OutputKind>& kinds) {
  const auto has = [&kinds](OutputKind k) { return kinds.count(k) > 0; };
  const bool webp = has(OutputKind::webp);
  // Each option given, whether an output of `kinds` takes it, and the outputs that do.
  const struct {
    bool given, taken;
    const char *key, *outputs;
  } options[] = {{o.given.quality, has(OutputKind::jpeg) || (webp && !o.webp_lossless), "quality",
                  "JPEG and lossy WebP"},
                 {o.given.subsampling, has(OutputKind::jpeg), "subsampling", "JPEG"},
                 {o.given.png_level, has(OutputKind::png) || has(OutputKind::tiff), "png_level",
                  "PNG and TIFF"},
                 {o.webp_lossless, webp, "webp_lossless", "WebP"}};
  std::string formats;  // "PNG", "PNG or TIFF", "PNG, TIFF or lossless WebP"
  size_t named = 0;
  for (OutputKind k : kinds) {
    formats += std::string(named == 0                  ? ""
                           : named + 1 == kinds.size() ? " or "
                                                       : ", ") +
               (k == OutputKind::webp && o.webp_lossless ? "lossless " : "") + output_kind_name(k);
    ++named;
  }
  std::vector<std::string> warnings;
  for (const auto& option : options)
    if (option.given && !option.taken && !kinds.empty())
      warnings.push_back(parameter(option.key) + " does not apply to " + formats +
                         " output (it is for " + option.outputs + "); ignored");
  return warnings;
}

WorkingSpace working_space(const JobOptions& o, int channels, bool deep, bool transparent) {
  WorkingSpace space;
  space.linear_light = o.linear_light;
  if (o.operation != JobOptions::Operation::bright) {  // not a blur, never premultiplied
    const bool alpha = channels == 2 || channels == 4;
    space.premultiplied = !o.straight_alpha && alpha && transparent;
    space.eight_bit_alpha = !deep && space.premultiplied;  // the output keeps 8 bits
  }
  return space;
}

Source make_source(DecodedImage image, const JobOptions& o, bool native) {
  Source s;
  s.channels = image.channels();
  s.deep = image.is_wide();
  native = native && !s.deep && (s.channels == 1 || s.channels == 3);
  if (s.deep)
    s.rgba16 = image.wide.channels == 4 ? std::move(image.wide) : to_rgba(image.wide);
  else
    s.rgba = image.narrow.channels == 4 || native ? std::move(image.narrow) : to_rgba(image.narrow);
  const bool alpha = s.channels == 2 || s.channels == 4;
  const bool transparent =
      alpha && (s.deep ? any_transparent(s.rgba16.pixels.data(), s.rgba16.pixels.size())
                       : any_transparent(s.rgba.pixels.data(), s.rgba.pixels.size()));
  s.space = working_space(o, s.channels, s.deep, transparent);
  const bool wide = !s.deep && source_depth(o, s.deep, s.space) == PixelDepth::u16;
  if (native && (wide || !s.space.is_stored_form())) s.rgba = to_rgba(s.rgba);  // for a device
  if (wide) {
    s.rgba16 = widen(s.rgba);
    s.rgba = Image{};
  }
  return s;
}

std::unique_ptr<Filter> make_filter(Runtime& runtime, const JobOptions& o, int width, int height,
                                    WorkGroup wg, PixelDepth depth, WorkingSpace space) {
  std::unique_ptr<Filter> filter;
  const PixelDepth inner = filter_depth(depth == PixelDepth::u16, space);
  switch (o.operation) {
    case JobOptions::Operation::bright:
      filter = std::make_unique<BrightFinder>(runtime, o.bright_params, width, height, inner);
      break;
    case JobOptions::Operation::box:
      filter = std::make_unique<BoxFilter>(runtime, o.box_params, width, height, inner);
      break;
    case JobOptions::Operation::gauss: {
      GaussParams params = o.gauss_params;
      if (!wg.is_default()) params.wg = wg;
      filter = std::make_unique<GaussFilter>(runtime, params, width, height, inner);
      break;
    }
  }
  if (space.is_stored_form()) return filter;
  return std::make_unique<WorkingSpaceFilter>(runtime, std::shared_ptr<Filter>(std::move(filter)),
                                              space, width, height, depth);
}

int operation_halo(const JobOptions& o) {
  switch (o.operation) {
    case JobOptions::Operation::box:
      return o.box_params.radius;
    case JobOptions::Operation::gauss:
      return gauss_radius(o.gauss_params);
    case JobOptions::Operation::bright:
      break;
  }
  return bright_glow_halo(o.bright_params);
}

namespace {

// The result of bright points found in RGBA `rgba` (8 or 16 bits): their list (csv, json) or
// `rgba` with a glow at each (in one piece, or in `tiles`), into r.
template <typename T>
void render_points(Runtime& runtime, const JobOptions& o, const std::vector<BrightPoint>& points,
                   const BasicImage<T>& rgba, OutputKind kind, Rendered& r, TileSize tiles = {}) {
  if (kind == OutputKind::csv) {
    r.text = bright_points_csv(points);
    return;
  }
  if (kind == OutputKind::json) {
    r.text = bright_points_json(points);
    return;
  }
  BasicImage<T> glow = tiles.is_default()
                           ? draw_glow(runtime, rgba, points, o.bright_params)
                           : draw_glow_tiled(runtime, rgba, points, o.bright_params, tiles);
  if constexpr (depth_of<T> == PixelDepth::u16)
    r.image16 = std::move(glow);
  else
    r.image = std::move(glow);
}

}  // namespace

TileSize operation_tiles(const Runtime& runtime, const JobOptions& o, int width, int height,
                         bool wide, const std::string& timed_by) {
  const bool bright = o.operation == JobOptions::Operation::bright;
  const int halo = operation_halo(o);
  TileSize t = plan_tiles(runtime.device(), width, height, halo, o.max_tile,
                          wide ? kWideTileBytesPerPixel : 24);
  if (t.width >= width && t.height >= height) return TileSize{width, height};
  if (bright) {  // whole blocks of the image's grid in every tile
    const int b = o.bright_params.block;
    if (t.width >= b) t.width = t.width / b * b;
    if (t.height >= b) t.height = t.height / b * b;
    if (t.width < b || t.height < b)
      throw Error("device '" + runtime.device().name + "' cannot hold a tile of whole " +
                  std::to_string(b) + "x" + std::to_string(b) + " blocks with the glow's " +
                  std::to_string(halo) + "-pixel halo; choose another with " + parameter("device"));
  }
  if (!timed_by.empty())
    throw UsageError(timed_by + " times the image in one piece; here it runs in " +
                     std::to_string((width + t.width - 1) / t.width) + "x" +
                     std::to_string((height + t.height - 1) / t.height) + " tiles of " +
                     std::to_string(t.width) + "x" + std::to_string(t.height) +
                     " (the device's limits or " + parameter("max_tile") + ")");
  return t;
}

Rendered render_tiled(Runtime& runtime, const JobOptions& o, const Source& source, OutputKind kind,
                      TileSize tiles, Origin origin) {
  Rendered r;
  r.channels = source.channels;
  r.deep = source.deep;
  const Image& rgba = source.rgba;
  if (o.operation == JobOptions::Operation::bright) {
    if (!source.wide()) {
      render_points(runtime, o, find_bright_points_tiled(runtime, rgba, o.bright_params, tiles),
                    rgba, kind, r, tiles);
    } else {
      render_points(runtime, o,
                    find_bright_points_tiled(runtime, source.rgba16, o.bright_params, tiles,
                                             source.space.linear_light),
                    source.rgba16, kind, r, tiles);
    }
    return r;
  }
  // Every tile with the schedule auto takes for the whole image (the tuning table goes by size).
  JobOptions same = o;
  const PixelDepth depth = source.filter_depth();
  const int w = source.width(), h = source.height();
  if (o.operation == JobOptions::Operation::box)
    same.box_params = resolve_box_schedule(o.box_params, runtime.device(), w, h, depth);
  else
    same.gauss_params = resolve_gauss_schedule(o.gauss_params, runtime.device(), w, h, depth);
  const MakeFilter make = make_filter_per_size([&](int width, int height) {
    return std::shared_ptr<Filter>(
        make_filter(runtime, same, width, height, {}, source.depth(), source.space));
  });
  if (source.wide())
    r.image16 =
        run_filter_tiled(runtime, make, source.rgba16, operation_halo(o), tiles, 0, {}, origin)
            .output;
  else
    r.image = run_filter_tiled(runtime, make, rgba, operation_halo(o), tiles, 0, {}, origin).output;
  return r;
}

namespace {

// The result of a finished 8-bit run of `filter` over `rgba` whose RGBA output is `output`: the
// blurred image, or for --bright the point list (csv, json) or `rgba` with a glow at each point.
// `channels` is the input's channel count (1-4).
Rendered render(Runtime& runtime, const JobOptions& o, Filter& filter, Image output,
                const Image& rgba, int channels, OutputKind kind) {
  Rendered r;
  r.channels = channels;
  if (o.operation != JobOptions::Operation::bright) {
    r.image = std::move(output);
    return r;
  }
  render_points(runtime, o, bright_finder_of(filter).points(), rgba, kind, r);
  return r;
}

}  // namespace

SourceRun render_source(Runtime& runtime, const JobOptions& o, Filter& filter, const Source& source,
                        OutputKind kind, int runs) {
  SourceRun r;
  if (!source.wide()) {
    PlaneTransfer planes;
    if (source.has_planes()) planes.input = &source.planes;
    planes.input_blocks = source.device_blocks;
    planes.input_blocks_base = source.device_blocks_base;
    if (kind == OutputKind::jpeg && o.operation != JobOptions::Operation::bright &&
        jpeg_colour_on_device(o, runtime.device()) && jpeg_planes_encoder_is_turbojpegs() &&
        planes_addressable(source.width(), source.height())) {
      // JPEG stores 1- and 2-channel images as greyscale (encode_rgba), others as YCbCr; the
      // device makes its DCT blocks too unless BLURTOOL_JPEG_DCT=host.
      const int components = source.channels < 3 ? 1 : 3;
      r.rendered.planes =
          jpeg_dct_on_device()
              ? encoder_block_layout(source.width(), source.height(), components, o.subsampling,
                                     o.quality, jpeg_dct_mode() == JpegDct::sparse)
              : encoder_layout(source.width(), source.height(), components, o.subsampling);
      planes.output = &r.rendered.planes;
    }
    r.timings = run_filter(runtime, filter, source.rgba, runs, planes);
    if (planes.output) {
      r.rendered.channels = source.channels;
      return r;
    }
    r.rendered =
        render(runtime, o, filter, std::move(r.timings.output), source.rgba, source.channels, kind);
    r.timings.output = Image{};
    return r;
  }
  FilterRun16 run = run_filter(runtime, filter, source.rgba16, runs);
  r.timings = timings_of(run);
  r.rendered.channels = source.channels;
  r.rendered.deep = source.deep;
  if (o.operation != JobOptions::Operation::bright) {
    r.rendered.image16 = std::move(run.output);
    return r;
  }
  std::vector<BrightPoint> points = bright_finder_of(filter).points();
  if (source.space.linear_light) stored_colours(points, source.rgba16);
  render_points(runtime, o, std::move(points), source.rgba16, kind, r.rendered);
  return r;
}

void check_jpeg_sides(OutputKind kind, int width, int height, const std::string& output) {
  if (kind == OutputKind::jpeg && (width > 65535 || height > 65535))
    throw Error(output + ": the image is " + std::to_string(width) + "x" + std::to_string(height) +
                ", too large for JPEG (at most 65535 pixels a side); write a PNG");
  if (kind == OutputKind::webp && (width > kMaxWebpSide || height > kMaxWebpSide))
    throw Error(output + ": the image is " + std::to_string(width) + "x" + std::to_string(height) +
                ", too large for WebP (at most " + std::to_string(kMaxWebpSide) +
                " pixels a side); write a PNG or TIFF");
}

NamedDevice named_device(const JobOptions& o) {
  if (!o.devices.empty())
    return {o.devices.front(), parameter("devices") + " " + o.devices.front()};
  if (!o.device.empty()) return {o.device, parameter("device") + " " + o.device};
  const char* env = std::getenv("BLURTOOL_DEVICE");
  if (!env || !*env) return {};
  return {env, std::string("BLURTOOL_DEVICE=") + env};
}

bool is_host_spec(const std::string& spec) {
  std::string lower = spec;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "host";
}

std::string host_job_refusal(const JobOptions& o) {
  if (o.operation == JobOptions::Operation::box) {
    const BoxParams& box = o.box_params;
    if (box.variant != BoxVariant::automatic || box.intermediate != Intermediate::rgba32f ||
        !box.wg.is_default() || box.segment != 0 || box.unroll != 0)
      return "--variant, --intermediate, --wg, --segment and --unroll choose a device's schedule";
  } else if (o.operation == JobOptions::Operation::gauss) {
    if (std::string why = gauss_host_refusal(o.gauss_params); !why.empty()) return why;
  } else {
    return "the host's cores run the box filter and the Gaussian; --bright runs on a device";
  }
  if (!o.max_tile.is_default()) return "--max-tile cuts a device's work into tiles";
  if (o.jpeg_codec == JobOptions::JpegCodec::device) return "--jpeg-codec device asks for a device";
  if (o.linear_light) return "--linear-light blurs at 16 bits, on a device";
  return "";
}

bool runs_on_host(const Source& source) {
  return !source.wide() && !source.has_planes() && source.space.is_stored_form();
}

Rendered filter_on_host(const JobOptions& o, const Source& source, int threads, Image buffer) {
  Rendered r;
  r.channels = source.channels;
  r.metadata = source.metadata;
  r.image = std::move(buffer);
  if (o.operation == JobOptions::Operation::gauss)
    gauss_blur_host(source.rgba, o.gauss_params, threads, r.image);
  else
    box_blur_host(source.rgba, o.box_params.radius, o.box_params.edge, threads, r.image);
  return r;
}

EncodeOptions encode_options(const JobOptions& o, int threads) {
  EncodeOptions e;
  e.jpeg_quality = o.quality;
  e.jpeg_subsampling = o.subsampling;
  e.png_level = o.png_level;
  e.webp_lossless = o.webp_lossless;
  e.threads = threads;
  return e;
}

namespace {

// A resolution as a warning names it: "96 dpi", "72x96 dpi", "pixel aspect 2:1".
std::string resolution_text(const Resolution& r) {
  char text[64];
  const double per_inch = r.unit == Resolution::Unit::centimetre ? 2.54 : 1;
  if (r.unit == Resolution::Unit::none)
    std::snprintf(text, sizeof text, "pixel aspect %g:%g", r.x, r.y);
  else if (r.x == r.y)
    std::snprintf(text, sizeof text, "%.0f dpi", r.x * per_inch);
  else
    std::snprintf(text, sizeof text, "%.0fx%.0f dpi", r.x * per_inch, r.y * per_inch);
  return text;
}

std::vector<std::uint8_t> encode_pixels(const Rendered& r, ImageFormat format,
                                        const EncodeOptions& e) {
  if (!r.planes.empty()) return encode_jpeg_planes(r.planes, e);
  // The RGBA result is encoded as r.channels without a reduced copy (encode_rgba).
  if (r.image16.channels != 0) {
    if ((format == ImageFormat::png || format == ImageFormat::tiff) && r.deep) {
      return r.image16.channels == r.channels ? encode_image(r.image16, format, e)
                                              : encode_rgba(r.image16, r.channels, format, e);
    }
    const Image out = narrow(r.image16);
    return out.channels == r.channels ? encode_image(out, format, e)
                                      : encode_rgba(out, r.channels, format, e);
  }
  if (r.image.channels == r.channels) return encode_image(r.image, format, e);
  return encode_rgba(r.image, r.channels, format, e);
}

}  // namespace

std::string jpeg_drops_alpha(const std::string& output) {
  return output +
         ": JPEG has no alpha: the transparency is dropped (black where fully transparent); PNG, "
         "TIFF or WebP keep it";
}

std::vector<std::uint8_t> encode_output(const Rendered& r, OutputKind kind, const JobOptions& o,
                                        int threads, const std::string& output,
                                        std::vector<std::string>* warnings) {
  if (kind == OutputKind::csv || kind == OutputKind::json)
    return std::vector<std::uint8_t>(r.text.begin(), r.text.end());
  const ImageFormat format = kind == OutputKind::png    ? ImageFormat::png
                             : kind == OutputKind::tiff ? ImageFormat::tiff
                             : kind == OutputKind::webp ? ImageFormat::webp
                                                        : ImageFormat::jpeg;
  EncodeOptions e = encode_options(o, threads);
  const ImageMetadata m = metadata_for_pixels(r.metadata, format, r.channels, output, warnings);
  if (format == ImageFormat::tiff || format == ImageFormat::webp) {
    e.metadata = &m;
    if (format == ImageFormat::webp && m.resolution && warnings)
      warnings->push_back(output + ": WebP output does not carry the resolution (" +
                          resolution_text(*m.resolution) + "); left out");
    return encode_pixels(r, format, e);
  }
  // As Pillow refuses and libvips flattens an image with transparency into a JPEG, the user
  // hears of what is lost (the result is RGBA where the image has alpha).
  if (format == ImageFormat::jpeg && warnings && (r.channels == 2 || r.channels == 4) &&
      ((r.image.channels == 4 && any_transparent(r.image.pixels.data(), r.image.pixels.size())) ||
       (r.image16.channels == 4 &&
        any_transparent(r.image16.pixels.data(), r.image16.pixels.size()))))
    warnings->push_back(jpeg_drops_alpha(output));
  std::vector<std::uint8_t> bytes = encode_pixels(r, format, e);
  insert_metadata(bytes, format, m, output, warnings);
  return bytes;
}

InputBytes read_input(const std::string& input, const JobOptions& o) {
  InputBytes in;
  in.name = input == "-" ? "<stdin>" : input;
  in.bytes = input == "-" ? read_all(STDIN_FILENO, in.name, o.max_file_bytes)
                          : read_image_file(input, o.max_file_bytes);
  return in;
}

namespace {

// A JPEG the device takes as colour planes (see decode_source), decoded to them
// (decode_image_planes); an empty Source where the planes cannot be had, for the whole decoder
// to decode (or refuse) instead.
Source decode_planes(const InputBytes& in, const JobOptions& o, std::vector<std::string>* warnings,
                     bool sparse, bool entropy) {
  Source s;
  EntropyScan scan;
  // A progressive file is bound by libjpeg's entropy decoding on the host either way, and its
  // DCT blocks (twice its planes' bytes) measured slower than its planes (docs/notes/
  // whole-job.md, "Progressive JPEGs as DCT blocks"): auto keeps it as planes; --jpeg-codec
  // device sends its blocks.
  const bool progressive_blocks = o.jpeg_codec == JobOptions::JpegCodec::device;
  // Its entropy decoding, scan after scan on one work-item of the device, measured slower than
  // libjpeg's on the host's cores (docs/notes/whole-job.md, "Progressive entropy decoding on the
  // device"): only where BLURTOOL_JPEG_DCT=entropy forces it.
  const bool progressive_entropy = jpeg_dct_mode() == JpegDct::entropy;
  if (o.operation == JobOptions::Operation::bright || !o.max_tile.is_default() ||
      !decode_image_planes(in.bytes, in.name, warnings, o.max_pixels, o.orient,
                           jpeg_dct_on_device(), sparse, &s.planes, entropy ? &scan : nullptr,
                           progressive_blocks, progressive_entropy))
    return Source{};
  if (!scan.segment_end.empty()) s.planes.dct.entropy = EntropyDecoder::pack(scan, s.planes);
  s.channels = s.planes.components;
  s.space = working_space(o, s.channels, false, false);
  return s;
}

}  // namespace

ImageMetadata output_metadata(const InputBytes& in, const JobOptions& o,
                              std::vector<std::string>* warnings) {
  if (o.keep_metadata == KeepMetadata::none) return {};
  // The decoders turn a JPEG upright by its EXIF orientation, a TIFF by its Orientation tag
  // (unless --no-orient).
  const bool upright = o.orient && in.bytes.size() >= 2 &&
                       (in.bytes[0] == 0xFF || in.bytes[0] == 'I' || in.bytes[0] == 'M');
  ImageMetadata m = metadata_for_output(read_metadata(in.bytes, in.name, warnings), o.keep_metadata,
                                        upright, in.name, warnings);
  if (o.linear_light && !colour_is_srgb(m) && warnings)
    warnings->push_back(in.name +
                        ": its colour profile is not sRGB; --linear-light assumes the sRGB "
                        "transfer curve");
  return m;
}

Source decode_source(const InputBytes& in, const JobOptions& o, std::vector<std::string>* warnings,
                     bool planes, bool sparse, bool native, bool entropy) {
  Source s;
  if (planes) s = decode_planes(in, o, warnings, sparse, entropy);
  native = native && !planes;
  if (!s.has_planes())
    s = make_source(decode_image_wide(in.bytes, in.name, warnings, o.max_pixels, o.orient, !native),
                    o, native);
  s.metadata = output_metadata(in, o, warnings);
  return s;
}

SourceRun DeviceStage::run(const Source& source, OutputKind kind, const DeviceRequest& request) {
  SourceRun r;
  try {
    with_device_faults(runtime_, source.width(), source.height(), source.depth(),
                       [&] { r = run_unguarded(source, kind, request); });
    r.rendered.metadata = source.metadata;
  } catch (...) {
    filter_.reset();  // a failed run may leave the filter in any state
    throw;
  }
  return r;
}

SourceRun DeviceStage::run_unguarded(const Source& source, OutputKind kind,
                                     const DeviceRequest& request) {
  const int width = source.width(), height = source.height();
  const TileSize tiles = operation_tiles(
      runtime_, o_, width, height, source.filter_depth() == PixelDepth::u16, request.timed_by);
  if (tiles.width < width || tiles.height < height) {
    SourceRun r;
    if (source.planes.dct.is_entropy())  // the batch decodes such an image again (see there)
      throw Error("an entropy-coded JPEG in tiles: its blocks are only decoded on the device");
    if (source.has_planes()) {  // tiles read RGBA: the planes become RGBA on the host
      Source rgba;
      rgba.rgba = ycbcr_to_rgba(source.planes.as_blocks() ? blocks_to_planes(source.planes)
                                                          : source.planes);
      rgba.channels = source.channels;
      rgba.space = source.space;
      r.rendered = render_tiled(runtime_, o_, rgba, kind, tiles, origin_);
    } else {
      r.rendered = render_tiled(runtime_, o_, source, kind, tiles, origin_);
    }
    return r;
  }
  const FilterKey wanted = source.key();
  if (!filter_ || key_ != wanted) {
    filter_.reset();  // its device memory is free before the next filter takes its own
    auto make = [&](WorkGroup wg) {
      return make_filter(runtime_, o_, width, height, wg, source.depth(), source.space);
    };
    try {
      filter_ = make(WorkGroup{});
    } catch (const UsageError&) {
      // The first of the fallback sizes that fits makes the output instead.
      if (!request.fallback_work_groups) throw;
      for (const WorkGroup& wg : request.fallback_work_groups(runtime_)) {
        try {
          filter_ = make(wg);
          break;
        } catch (const UsageError&) {
        }
      }
      if (!filter_) throw;
    }
    key_ = wanted;
  }
  filter_->set_origin(origin_.x, origin_.y);
  return render_source(runtime_, o_, *filter_, source, kind, request.runs);
}

void write_output(const std::string& path, const std::vector<std::uint8_t>& bytes,
                  IfExists if_exists) {
  if (!write_output_streamed(
          path, OutputFile::Special::write_into, if_exists, SyncFolder::now,
          [&](const OutputSink& sink) { sink.append(bytes.data(), bytes.size()); }))
    throw Error(path + ": appeared while the image was made; left as it is, not replaced (" +
                parameter("force") + " replaces it)");
}

namespace {

[[noreturn]] void throw_stdout_error(int err) {
  throw Error("<stdout>: cannot write" +
              (err ? ": " + std::generic_category().message(err) : std::string()));
}

}  // namespace

bool write_output_streamed(const std::string& path, OutputFile::Special special, IfExists if_exists,
                           SyncFolder sync_folder,
                           const std::function<void(const OutputSink&)>& make) {
  if (path == "-") {
    OutputSink sink;
    sink.append = [](const std::uint8_t* data, std::size_t size) {
      errno = 0;
      if (std::fwrite(data, 1, size, stdout) != size) throw_stdout_error(errno);
    };
    // A regular file takes bytes at offsets from where it stands, and is left after them.
    std::uint64_t start = 0, end = 0;
    if (unseekable_reason(STDOUT_FILENO).empty() && std::fflush(stdout) == 0) {
      const off_t at = ::lseek(STDOUT_FILENO, 0, SEEK_CUR);
      if (at >= 0) {
        start = static_cast<std::uint64_t>(at);
        sink.write_at = [&](std::uint64_t offset, const std::uint8_t* data, std::size_t size) {
          if (const int err = write_all_at(STDOUT_FILENO, data, size, start + offset))
            throw_stdout_error(err);
          end = std::max<std::uint64_t>(end, offset + size);
        };
      }
    }
    make(sink);
    errno = 0;
    if (std::fflush(stdout) != 0) throw_stdout_error(errno);
    if (end > 0 && ::lseek(STDOUT_FILENO, static_cast<off_t>(start + end), SEEK_SET) < 0)
      throw_stdout_error(errno);
    return true;
  }
  OutputFile file(path, special, if_exists, sync_folder);
  if (file.taken()) return false;
  OutputSink sink;
  sink.append = [&file](const std::uint8_t* data, std::size_t size) { file.write(data, size); };
  if (file.seekable())
    sink.write_at = [&file](std::uint64_t offset, const std::uint8_t* data, std::size_t size) {
      file.write_at(offset, data, size);
    };
  make(sink);
  return file.commit();
}

namespace {

// Refuses an output that is the input itself (same path, or another name for the same file).
void check_not_same_file(const std::string& input, const std::string& output) {
  if (input == "-" || output == "-") return;
  std::error_code ec;
  bool same = fs::absolute(input, ec) == fs::absolute(output, ec) ||
              (fs::exists(output, ec) && fs::equivalent(input, output, ec));
  if (same) throw UsageError("output '" + output + "' is the input file; refusing to overwrite it");
}

// o for one untimed image of `depth` on `device`: with --variant auto on a GPU, a schedule
// whose program builds fast instead of auto's pick, since a first run with an empty driver
// cache spends most of its time in NVIDIA's compiler, which unrolls the fastest kernels, while
// their kernels' advantage (a millisecond or so) does not show in a process of a few tenths of
// a second. The box takes `accumulated`, whose float row sums are exact integers where fused's
// integer sums are (8 bits; 16 bits up to radius 127), so the bytes are the same; the Gaussian
// `separable` up to radius 64 (its cost grows with the radius), within one level of auto's
// pick as every Gaussian schedule is of the reference. Only with the options auto's pick would
// have had to itself: the default intermediate, work-group, segment and unroll. A batch, which
// builds once for many images, and a timed run (--bench) keep auto's pick.
// For the same reason --jpeg-codec auto keeps JPEG's colour stages on the host for one image,
// timed or not: the colour kernels' program is one more build on a first run, and what they
// save (a few milliseconds of a 12-Mpixel photo's encode and download) does not show either
// (kernels/NOTES.md, "JPEG colour stages on the device").
JobOptions for_one_image(const JobOptions& o, const DeviceInfo& device,
                         const DeviceRequest& request, PixelDepth depth) {
  JobOptions one = o;
  if (one.jpeg_codec == JobOptions::JpegCodec::automatic)
    one.jpeg_codec = JobOptions::JpegCodec::host;
  if (request.runs > 0 || !(device.type & CL_DEVICE_TYPE_GPU)) return one;
  const BoxParams& box = o.box_params;
  if (o.operation == JobOptions::Operation::box && box.variant == BoxVariant::automatic &&
      box.intermediate == Intermediate::rgba32f && box.wg.is_default() && box.segment == 0 &&
      box.unroll == 0 && (depth == PixelDepth::u8 || box.radius <= 127))
    one.box_params.variant = BoxVariant::accumulated;
  const GaussParams& gauss = o.gauss_params;
  if (o.operation == JobOptions::Operation::gauss && gauss_method_of(gauss) == GaussMethod::exact &&
      gauss.variant == GaussVariant::automatic && gauss.intermediate == Intermediate::rgba32f &&
      gauss.wg.is_default() && gauss.segment == 0 && gauss_radius(gauss) <= 64)
    one.gauss_params.variant = GaussVariant::separable;
  return one;
}

// The device of --device (or the first of --devices), opened, and the filter for an image with
// `header`, made ahead of its decoding for the depth and working space the header predicts
// (transparency is assumed where the file has alpha); `key` says what it was made for.
struct PreparedDevice {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Filter> filter;
  FilterKey key;
};

// The device single mode runs on: --device, or the first of --devices.
std::unique_ptr<Runtime> open_single_device(const JobOptions& job) {
  return std::make_unique<Runtime>(job.devices.empty()
                                       ? select_device(job.device)
                                       : select_device(job.devices.front(), parameter("devices")));
}

PreparedDevice prepare_device(const JobOptions& job, const ImageHeader& header, OutputKind kind,
                              const DeviceRequest& request) {
  PreparedDevice p;
  p.runtime = open_single_device(job);
  if (job.operation == JobOptions::Operation::bright || !request.make_ahead ||
      (kind == OutputKind::jpeg && (header.width > 65535 || header.height > 65535)) ||
      (kind == OutputKind::webp && (header.width > kMaxWebpSide || header.height > kMaxWebpSide)))
    return p;
  const WorkingSpace space = working_space(job, header.channels, header.sixteen_bit, true);
  const PixelDepth depth = source_depth(job, header.sixteen_bit, space);
  const PixelDepth runs_at = filter_depth(header.sixteen_bit, space);
  const JobOptions o = for_one_image(job, p.runtime->device(), request, runs_at);
  try {
    const TileSize tiles = operation_tiles(*p.runtime, o, header.width, header.height,
                                           runs_at == PixelDepth::u16, request.timed_by);
    if (tiles.width < header.width || tiles.height < header.height) return p;
    p.filter = make_filter(*p.runtime, o, header.width, header.height, {}, depth, space);
    p.key = FilterKey{header.width, header.height, depth, space};
    // The colour-plane kernels of a JPEG output on the device, built now too.
    if (kind == OutputKind::jpeg && depth == PixelDepth::u8 &&
        jpeg_colour_on_device(o, p.runtime->device()))
      p.filter->io_ycbcr = std::make_shared<YCbCrConverter>(*p.runtime);
  } catch (...) {
    // Made again after decoding, where its error is reported in order.
    p.filter.reset();
  }
  return p;
}

// --format over an output named for another format: done as asked, but said.
void warn_format_mismatch(const JobOptions& o, OutputKind kind,
                          std::vector<std::string>& warnings) {
  if (o.format.empty() || o.output == "-") return;
  std::string ext = lower_extension(o.output);
  if (ext == ".jpeg") ext = ".jpg";
  if (ext == ".tiff") ext = ".tif";
  if ((ext == ".png" || ext == ".jpg" || ext == ".csv" || ext == ".json" || ext == ".tif" ||
       ext == ".webp") &&
      ext != "." + o.format)
    warnings.push_back("output '" + o.output + "' is named " + ext + " but " + parameter("format") +
                       " " + o.format + " writes " + output_kind_name(kind));
}

// What single mode says about its output before the image is made: --format over another
// extension, encoder options the output's format does not take.
void warn_about_output(const JobOptions& o, OutputKind kind, std::vector<std::string>& warnings) {
  warn_format_mismatch(o, kind, warnings);
  for (std::string& w : unused_encoder_options(o, {kind})) warnings.push_back(std::move(w));
}

// Why o's job on the image with `header` cannot run on the host's cores in single mode,
// known before decoding; "" where it can.
std::string host_refusal(const JobOptions& o, const DeviceRequest& request,
                         const ImageHeader& header) {
  if (std::string why = host_job_refusal(o); !why.empty()) return why;
  if (request.runs > 0) return request.timed_by + " times a device's kernels";
  if (header.sixteen_bit) return "the input's 16-bit samples are blurred on a device";
  return "";
}

}  // namespace

SingleRun run_single(const JobOptions& o, const DeviceRequest& request) {
  const std::string& input = o.inputs.front();
  const OutputKind kind = output_kind(o.output, input, o);  // bad names refused before work
  // An output that exists now is replaced, as cp(1) replaces it, unless write-protected; one
  // that appears while the image is made is another program's, and is left as it is. --force
  // replaces either, as cp -f.
  std::error_code ec;
  const IfExists if_exists = o.force ? IfExists::replace
                             : fs::exists(fs::symlink_status(o.output, ec))
                                 ? IfExists::replace_writable
                                 : IfExists::keep;
  check_not_same_file(input, o.output);
  if (if_exists == IfExists::replace_writable) refuse_write_protected(o.output);  // before work
  if (o.output == "-" && isatty(STDOUT_FILENO))
    throw UsageError("output '-' is a terminal; redirect standard output to a file or a pipe");

  SingleRun run;
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> warnings;
  const InputBytes in = read_input(input, o);
  trace("input read");
  // The device is opened, and the filter built for the size the header gives, while the pixels
  // are decoded: context creation and program loading take as long as decoding a photo.
  const ImageHeader header = read_image_header(in.bytes, in.name, o.max_pixels, o.orient);
  const StripPlan strips = plan_strips(o, header, in.bytes, in.name, request.timed_by);
  const NamedDevice spec = named_device(o);
  if (strips.streams()) {
    // Larger than the memory budget: strip by strip, the device opened first.
    if (is_host_spec(spec.spec))
      throw UsageError(
          spec.source + ": '" + in.name + "' is larger than the memory budget (" +
          parameter("max-memory") +
          "), which runs it in strips on an OpenCL device; name one instead of the host");
    check_strip_output(o, kind, strips, in.name, o.output);
    check_jpeg_sides(kind, header.width, header.height, o.output == "-" ? "<stdout>" : o.output);
    run.runtime = open_single_device(o);
    trace("device ready");
    run.decode_ms = ms_since(start);
    // Encoded rows go to the output's temporary file as each strip is done.
    if (!write_output_streamed(o.output, OutputFile::Special::write_into, if_exists,
                               SyncFolder::now, [&](const OutputSink& sink) {
                                 run_strips(*run.runtime, o, in, kind, strips, sink, &warnings);
                               }))
      throw Error(o.output + ": appeared while the image was made; left as it is, not replaced (" +
                  parameter("force") + " replaces it)");
    warn_about_output(o, kind, warnings);
    if (!o.quiet)
      for (const std::string& w : warnings) std::cerr << "blurtool: warning: " << w << "\n";
    trace("written");
    return run;
  }
  // The box filter or Gaussian of an 8-bit image runs on the host's cores unless a device is
  // named: a box filter costs one read and one write of the image, a Gaussian a few passes,
  // which a few cores finish in milliseconds, while a device costs its driver's start (tenths
  // of a second on a GPU) and two transfers, and a CPU device's first run compiles kernels
  // (docs/notes/whole-job.md, "A single photo on the host's cores"). --device host asks for it.
  const std::string refusal = host_refusal(o, request, header);
  if (is_host_spec(spec.spec) && !refusal.empty())
    throw UsageError(spec.source + ": " + refusal + "; name an OpenCL device instead of the host");
  const bool on_host = refusal.empty() && (spec.spec.empty() || is_host_spec(spec.spec));
  std::future<PreparedDevice> device;
  if (!on_host)
    device =
        std::async(std::launch::async, [&] { return prepare_device(o, header, kind, request); });
  try {
    // Colour planes only when asked for: the device is not known yet, and on a GPU the
    // decoding is hidden behind its opening anyway.
    run.source = decode_source(in, o, &warnings, o.jpeg_codec == JobOptions::JpegCodec::device,
                               jpeg_dct_mode() == JpegDct::sparse, on_host);
  } catch (...) {
    try {
      if (device.valid()) device.get();  // a decoding failure is reported before a device failure
    } catch (...) {
    }
    throw;
  }
  run.decode_ms = ms_since(start);
  trace("decoded");
  warn_about_output(o, kind, warnings);
  if (!o.quiet)
    for (const std::string& w : warnings) std::cerr << "blurtool: warning: " << w << "\n";
  const Source& source = run.source;
  // JPEG stores each side in 16 bits: say so before the blur, naming the output.
  check_jpeg_sides(kind, source.width(), source.height(), o.output == "-" ? "<stdout>" : o.output);

  SourceRun result;
  if (on_host && runs_on_host(source)) {
    result.rendered = filter_on_host(o, source, o.jobs);
    trace("filtered on the host");
  } else {
    // An image with transparency blurs premultiplied, at 16 bits: on a device, opened now.
    if (is_host_spec(spec.spec))
      throw UsageError(
          spec.source + ": '" + in.name +
          "' has transparency, which blurs premultiplied at 16 bits on an OpenCL device; "
          "name one instead of the host");
    PreparedDevice prepared =
        device.valid() ? device.get() : prepare_device(o, header, kind, request);
    trace("device ready");
    run.runtime = std::move(prepared.runtime);
    const JobOptions one = for_one_image(o, run.runtime->device(), request, source.filter_depth());
    DeviceStage stage(*run.runtime, one);
    stage.adopt(std::move(prepared.filter), prepared.key);
    result = stage.run(source, kind, request);
    run.filter = stage.release_filter();
    run.timings = std::move(result.timings);
    trace("filtered (upload, kernels, download)");
  }

  start = std::chrono::steady_clock::now();
  std::vector<std::string> output_warnings;
  const std::vector<std::uint8_t> bytes = encode_output(
      result.rendered, kind, o, o.jobs, o.output == "-" ? "<stdout>" : o.output, &output_warnings);
  trace("encoded");
  if (!o.quiet)
    for (const std::string& w : output_warnings) std::cerr << "blurtool: warning: " << w << "\n";
  write_output(o.output, bytes, if_exists);
  run.encode_ms = ms_since(start);
  trace("written");
  return run;
}

}  // namespace blurtool
