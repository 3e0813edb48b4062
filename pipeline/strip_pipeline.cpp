// Strips of rows through the device stage (see strip_pipeline.h).
#include "pipeline/strip_pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "image/row_codec.h"
#include "util/atomic_file.h"
#include "util/trace.h"

namespace blurtool {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
// A strip's working set at most: larger strips save only the halo's share of the kernels' work.
constexpr std::uint64_t kStripBytes = 256 * kMiB;
// The widest column piece of a band that goes to the device at once (plus its halo): a band
// wider than this, or than the device holds, runs piece by piece, so that the device's images
// (host memory on a CPU device) take the width of a piece, not the image's.
constexpr int kPieceWidth = 16384;
// Output rows above a strip that its band makes as well: a PNG encoder's row above and, for rows
// of 32 KiB or more, its dictionary (RowWriter::write's `before`).
constexpr int kRowsBefore = 2;

// A run's decoded input and result, bytes a pixel.
std::uint64_t host_bytes_per_pixel(bool wide) {
  return wide ? 16 : 8;
}

// The device's images of a blur (input, output, intermediate), bytes a pixel.
std::uint64_t device_bytes_per_pixel(bool filter_wide) {
  return filter_wide ? kWideTileBytesPerPixel : 24;
}

std::string mib(std::uint64_t bytes) {
  return std::to_string((bytes + kMiB - 1) / kMiB) + " MiB";
}

// Whether any alpha sample of the image is below full scale, read by a second pass of the
// decoder over its rows, `rows` at a time (a whole-image property that premultiplication
// depends on: working_space).
template <typename T>
bool rows_transparent(RowSource& pass, int rows) {
  const int height = pass.height();
  rows = std::max(1, std::min(rows, height));
  // The first row alone before a buffer sized from the header: a file whose header promises
  // rows its data does not hold fails before that allocation.
  std::vector<T> buffer(pass.row_bytes() / sizeof(T));
  for (int y = 0; y < height;) {
    const int n = y == 0 ? 1 : std::min(rows, height - y);
    if (y == 1) buffer.resize(pass.row_bytes() / sizeof(T) * rows);
    pass.read(buffer.data(), n);
    y += n;
    if (any_transparent(buffer.data(), static_cast<std::size_t>(n) * pass.width() * 4)) return true;
  }
  return false;
}

bool rows_transparent(const InputBytes& in, int depth, std::uint64_t max_memory, int rows) {
  std::unique_ptr<RowSource> pass = open_rows(in.bytes, in.name, depth, max_memory);
  return depth == 16 ? rows_transparent<std::uint16_t>(*pass, rows)
                     : rows_transparent<std::uint8_t>(*pass, rows);
}

// The band of input rows a strip reads, as the Source the device stage takes: RGBA8 or RGBA16
// rows [first, first + height) of the image, kept between strips (the rows the next strip
// shares with this one move to the front instead of being decoded again).
class Band {
 public:
  // `widen`: 8-bit rows handed out at 16 bits (widen()).
  Band(RowSource& rows, int channels, const WorkingSpace& space, bool widen)
      : rows_(rows), widen_(widen) {
    source_.channels = channels;
    source_.deep = rows.sixteen_bit();
    source_.space = space;
  }

  // Makes the band rows [first, last) of the image: rows it holds already are kept, the rest
  // decoded (they must follow the ones held, as strips go down the image).
  void cover(int first, int last) {
    if (rows_.depth() == 16) {
      cover(source_.rgba16, first, last);
    } else {
      cover(source_.rgba, first, last);
      if (widen_) source_.rgba16 = widen(source_.rgba);
    }
    first_ = first;
  }

  const Source& source() const { return source_; }
  int first() const { return first_; }

 private:
  template <typename T>
  void cover(BasicImage<T>& image, int first, int last) {
    const std::size_t row = static_cast<std::size_t>(rows_.width()) * 4;
    const int held_last = first_ + image.height;
    const int keep = image.height > 0 ? std::max(0, held_last - first) : 0;
    if (keep > 0 && first > first_)
      std::memmove(image.pixels.data(), image.pixels.data() + (first - first_) * row,
                   keep * row * sizeof(T));
    const int height = last - first;
    if (image.height == 0) {
      // The first row is decoded before the band is sized from the header: a file whose
      // header promises rows its data does not hold fails before that allocation.
      image.pixels.resize(row);
      rows_.read(image.pixels.data(), 1);
      image.pixels.resize(row * height);
      if (height > 1) rows_.read(image.pixels.data() + row, height - 1);
    } else {
      image.pixels.resize(row * height);
      rows_.read(image.pixels.data() + keep * row, height - keep);
    }
    image.width = rows_.width();
    image.height = height;
    image.channels = 4;
  }

  RowSource& rows_;
  bool widen_;
  Source source_;
  int first_ = 0;
};

// Columns [left, left + width) of rows [top, top + height) of RGBA `image`.
template <typename T>
BasicImage<T> columns(const BasicImage<T>& image, int left, int width, int top, int height) {
  BasicImage<T> part;
  part.width = width;
  part.height = height;
  part.channels = 4;
  part.pixels.resize(static_cast<std::size_t>(width) * height * 4);
  for (int y = 0; y < height; ++y)
    std::memcpy(part.pixels.data() + static_cast<std::size_t>(y) * width * 4,
                image.pixels.data() + (static_cast<std::size_t>(top + y) * image.width + left) * 4,
                static_cast<std::size_t>(width) * 4 * sizeof(T));
  return part;
}

// Copies `width` x `height` RGBA pixels of `from` at (from_x, from_y) into `to` at (to_x, 0),
// `to` made `to_width` x `height` first where it is not.
template <typename T>
void place(const BasicImage<T>& from, int from_x, int from_y, int width, int height, int to_x,
           int to_width, BasicImage<T>* to) {
  if (to->width != to_width || to->height != height) {
    to->width = to_width;
    to->height = height;
    to->channels = 4;
    to->pixels.resize(static_cast<std::size_t>(to_width) * height * 4);
  }
  for (int y = 0; y < height; ++y)
    std::memcpy(
        to->pixels.data() + (static_cast<std::size_t>(y) * to_width + to_x) * 4,
        from.pixels.data() + (static_cast<std::size_t>(from_y + y) * from.width + from_x) * 4,
        static_cast<std::size_t>(width) * 4 * sizeof(T));
}

// Encodes rows [first, first + count) of an RGBA8 result whose `before` rows above them are
// the rows last written (RowWriter::write).
void write_rows(RowWriter& writer, const Image& result, int first, int count, int before,
                int /*depth*/, Image* /*narrowed*/) {
  writer.write(result.pixels.data() + static_cast<std::size_t>(result.width) * 4 * first, count,
               before);
}

// The same for an RGBA16 result: at 16 bits, or narrowed to 8 (in `narrowed`) where the
// output's `depth` is 8.
void write_rows(RowWriter& writer, const Image16& result, int first, int count, int before,
                int depth, Image* narrowed) {
  const std::size_t row = static_cast<std::size_t>(result.width) * 4;
  if (depth == 16) {
    writer.write(result.pixels.data() + row * first, count, before);
    return;
  }
  *narrowed = narrow(result);
  writer.write(narrowed->pixels.data() + row * first, count, before);
}

}  // namespace

std::uint64_t default_max_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kGiB;
  return std::min<std::uint64_t>(static_cast<std::uint64_t>(pages) * page / 4, 4 * kGiB);
}

std::uint64_t memory_budget(const JobOptions& o) {
  return o.max_memory ? o.max_memory : default_max_memory();
}

std::uint64_t run_bytes_per_pixel(bool wide, bool filter_wide) {
  return host_bytes_per_pixel(wide) + device_bytes_per_pixel(filter_wide);
}

StripPlan plan_strips(const JobOptions& o, const ImageHeader& header,
                      const std::vector<std::uint8_t>& bytes, const std::string& name,
                      const std::string& timed_by) {
  StripPlan plan;
  const std::uint64_t budget = memory_budget(o);
  const std::uint64_t width = static_cast<std::uint64_t>(header.width);
  // The widest the run can be: 16 bits in a working space (transparency is not known yet).
  const bool filter_wide = header.sixteen_bit || o.linear_light ||
                           (!o.straight_alpha && (header.channels == 2 || header.channels == 4));
  plan.need = width * run_bytes_per_pixel(header.sixteen_bit, filter_wide) *
                  static_cast<std::uint64_t>(header.height) +
              bytes.size();
  if (plan.need <= budget) return plan;

  const std::string over = name + ": the image is " + std::to_string(header.width) + "x" +
                           std::to_string(header.height) + " and needs " + mib(plan.need) +
                           " in one piece, more than " + parameter("max_memory") + " (" +
                           mib(budget) + ")";
  if (!timed_by.empty()) throw UsageError(over + "; " + timed_by + " times the image in one piece");
  // A file that cannot be read by rows is decoded whole (RGBA), the rest of the budget for the
  // strips.
  const std::string why = rows_unreadable(bytes, o.orient);
  const std::uint64_t decoded = why.empty() ? 0
                                            : width * static_cast<std::uint64_t>(header.height) *
                                                  (header.sixteen_bit ? 8 : 4);
  plan.decode_whole = !why.empty();
  plan.halo = operation_halo(o);
  // The halo above and below a strip, and the rows above it that the PNG encoder reads.
  const std::uint64_t halo_rows = 2 * static_cast<std::uint64_t>(plan.halo) + kRowsBefore;
  // A row of a band: across the whole width its decoded input (and its 16-bit copy where
  // --bright widens 8-bit rows), its result and a second image of the result's depth (the
  // strip put together from pieces, a narrowed copy, the encoder's buffers); the device's
  // images across a column piece at most (run_strips; bright points and --max-tile take none).
  const bool bright = o.operation == JobOptions::Operation::bright;
  const std::uint64_t input = header.sixteen_bit ? 8 : 4;
  const std::uint64_t result = header.sixteen_bit || filter_wide ? 8 : 4;
  const std::uint64_t widened = bright && filter_wide && !header.sixteen_bit ? 8 : 0;
  const std::uint64_t piece =
      bright || !o.max_tile.is_default()
          ? width
          : std::min<std::uint64_t>(width, kPieceWidth + 2 * static_cast<std::uint64_t>(plan.halo));
  const std::uint64_t per_row =
      width * (input + widened + 2 * result) + piece * device_bytes_per_pixel(filter_wide);
  const std::uint64_t fixed = bytes.size() + decoded;
  if (plan.decode_whole && fixed + (halo_rows + 1) * per_row * 2 > budget)
    throw Error(over + "; " + why + " is decoded whole (" + mib(decoded) +
                ") before its strips, which leaves too little");
  const std::uint64_t held = budget > fixed ? budget - fixed : 0;
  std::uint64_t band = std::min(held / 4, kStripBytes) / per_row;
  if (band < halo_rows + 16) band = held / 2 / per_row;  // wide rows: more of the budget
  if (band < halo_rows + 1)
    throw Error(over + ", and a strip of one row with " +
                (bright ? parameter("bright") + "'s glow, its " : "the blur's ") +
                std::to_string(plan.halo) + "-row halo above and below, needs " +
                mib((halo_rows + 1) * per_row * 2) + "; raise " + parameter("max_memory") +
                (bright ? " or use smaller blocks" : " or use a smaller radius"));
  plan.rows = static_cast<int>(
      std::min<std::uint64_t>(band - halo_rows, static_cast<std::uint64_t>(header.height)));
  if (bright) {
    // Whole blocks in every strip (the glow's halo is whole blocks too), so that each block
    // finds the point it finds in one piece.
    const int block = o.bright_params.block;
    if (plan.rows < block)
      throw Error(over + ", and a strip of one row of " + parameter("bright") + "'s " +
                  std::to_string(block) + "-pixel blocks with its glow's " +
                  std::to_string(plan.halo) + "-row halo above and below does not fit; raise " +
                  parameter("max_memory") + " or use smaller blocks");
    if (plan.rows < header.height) plan.rows = plan.rows / block * block;
  }
  return plan;
}

void check_strip_output(const JobOptions& o, OutputKind kind, const StripPlan& plan,
                        const std::string& name, const std::string& output) {
  const std::string over = "needs " + mib(plan.need) + ", more than " + parameter("max_memory") +
                           " (" + mib(memory_budget(o)) + ")";
  if (kind == OutputKind::png || kind == OutputKind::jpeg) return;
  if (kind == OutputKind::tiff) {
    const bool out = output == "-";
    const std::string why = output.empty() ? ""
                            : out          ? unseekable_reason(STDOUT_FILENO)
                                           : unseekable_reason(output);
    if (why.empty()) return;
    throw Error(name + ": the image " + over + ", so it runs in strips, and a TIFF written " +
                "in strips goes into a file (libtiff writes its directory last and goes back " +
                "to the header to point at it), but " +
                (out ? "standard output" : "'" + output + "'") + " is " + why + "; " +
                (out ? "redirect it to a file" : "name a file") + ", raise " +
                parameter("max_memory") + ", or write a PNG or JPEG, which stream");
  }
  if (kind == OutputKind::webp)
    throw Error(name + ": a WebP output is encoded from the whole image (libwebp has no " +
                "incremental encoder), which " + over +
                "; raise it or write a PNG, JPEG or TIFF, which are written in strips");
  throw Error(name + ": " + parameter("bright") + "'s list of points is made from the whole " +
              "image, which " + over + "; write an image (png, jpg) instead");
}

namespace {

// `sink` with `m` inserted into the encoded file's header (insert_metadata), which comes first:
// the bytes are held until the header is whole, then passed on.
ByteSink with_metadata(const ByteSink& sink, ImageFormat format, ImageMetadata m,
                       const std::string& output, std::vector<std::string>* warnings) {
  if (m.empty()) return sink;
  struct State {
    std::vector<std::uint8_t> head;
    bool passed = false;
  };
  auto state = std::make_shared<State>();
  return [=, m = std::move(m)](const std::uint8_t* data, std::size_t size) {
    if (state->passed) return sink(data, size);
    state->head.insert(state->head.end(), data, data + size);
    if (metadata_insertion_point(state->head.data(), state->head.size(), format) == 0) return;
    insert_metadata(state->head, format, m, output, warnings);
    state->passed = true;
    sink(state->head.data(), state->head.size());
    state->head = {};
  };
}

}  // namespace

void run_strips(Runtime& runtime, const JobOptions& o, const InputBytes& in, OutputKind kind,
                const StripPlan& plan, const OutputSink& sink, std::vector<std::string>* warnings) {
  const bool bright = o.operation == JobOptions::Operation::bright;
  check_strip_output(o, kind, plan, in.name);
  const std::uint64_t budget = memory_budget(o);
  std::unique_ptr<RowSource> rows;
  bool transparent = false;
  if (plan.decode_whole) {
    DecodedImage image =
        decode_image_wide(in.bytes, in.name, warnings, o.max_pixels, o.orient, true);
    transparent = image.is_wide()
                      ? any_transparent(image.wide.pixels.data(), image.wide.pixels.size())
                      : any_transparent(image.narrow.pixels.data(), image.narrow.pixels.size());
    rows = rows_of(std::move(image));
  } else {
    rows = open_rows(in.bytes, in.name, 16, budget);
  }
  const int width = rows->width(), height = rows->height();
  const int channels = rows->stored_channels();
  const bool deep = rows->sixteen_bit();
  const bool alpha = channels == 2 || channels == 4;
  if (!plan.decode_whole)
    transparent = alpha && !o.straight_alpha &&
                  rows_transparent(in, rows->depth(), budget, std::max(1, plan.rows));
  const WorkingSpace space = working_space(o, channels, deep, transparent);

  // Every strip with the schedule auto takes for the whole image, as tiles do (render_tiled).
  JobOptions same = o;
  const PixelDepth inner = filter_depth(deep, space);
  if (o.operation == JobOptions::Operation::box)
    same.box_params = resolve_box_schedule(o.box_params, runtime.device(), width, height, inner);
  else if (!bright)
    same.gauss_params =
        resolve_gauss_schedule(o.gauss_params, runtime.device(), width, height, inner);
  DeviceStage stage(runtime, same);

  const EncodeOptions e = encode_options(o, o.jobs);
  const ImageFormat format = kind == OutputKind::png    ? ImageFormat::png
                             : kind == OutputKind::tiff ? ImageFormat::tiff
                                                        : ImageFormat::jpeg;
  // 16-bit inputs stay 16-bit in PNG and TIFF, as encode_output writes them.
  const int out_depth = format != ImageFormat::jpeg && deep ? 16 : 8;
  const std::string output = "the output of " + in.name;
  if (format == ImageFormat::jpeg && transparent && warnings)
    warnings->push_back(jpeg_drops_alpha(output));
  ImageMetadata m =
      metadata_for_pixels(output_metadata(in, o, warnings), format, channels, output, warnings);
  std::unique_ptr<RowWriter> writer;
  if (format == ImageFormat::tiff) {
    if (!sink.write_at)  // a device opened since check_strip_output: refused before any strip
      throw Error(in.name + ": a TIFF output in strips is written into a file; " +
                  "this output cannot be written at an offset");
    writer = std::make_unique<RowWriter>(width, height, channels, out_depth, e, m, sink.write_at);
  } else {
    writer = std::make_unique<RowWriter>(
        format, width, height, channels, out_depth, e,
        with_metadata(sink.append, format, std::move(m), output, warnings));
  }

  // Bands wider than the device holds, or than kPieceWidth, go to it in column pieces of one
  // width (one filter for all), each with the halo's columns beside it; an image edge is a
  // piece's edge only where it is the image's.
  const int band_rows = std::min(height, plan.rows + 2 * plan.halo + kRowsBefore);
  int piece = width;
  if (o.max_tile.is_default() && !bright) {  // bright points' pieces would need whole blocks
    const TileSize t =
        operation_tiles(runtime, same, width, band_rows, inner == PixelDepth::u16, {});
    if (t.height >= band_rows)
      piece = std::min(width, std::min(t.width, kPieceWidth) + 2 * plan.halo);
  }

  trace(piece < width ? "strips planned, in column pieces" : "strips planned");

  // --bright in linear light reads 8-bit files at 16 bits (source_depth), as make_source does.
  const bool widen = !deep && source_depth(o, deep, space) == PixelDepth::u16;
  Band band(*rows, channels, space, widen);
  Image strip8;     // a strip's rows put together from its pieces, or narrowed from 16 bits
  Image16 strip16;  // the same at 16 bits
  for (int y = 0; y < height; y += plan.rows) {
    const int last = std::min(height, y + plan.rows);
    // Two rows more above the halo: the output rows above the strip come out as written (the
    // same input rows), and the PNG encoder of a wide image reads its row above and its window
    // there (RowWriter::write's `before`). Not for bright points: whole blocks in the band.
    const int before = bright ? 0 : std::min(y, kRowsBefore);
    band.cover(std::max(0, y - plan.halo - before), std::min(height, last + plan.halo));
    for (std::string& w : rows->take_warnings()) warnings->push_back(std::move(w));
    const int skip = y - band.first(), count = last - y;
    // The device stage returns RGBA whatever the output (its JPEG planes are for whole images).
    if (piece >= width) {
      stage.set_origin({0, band.first()});
      SourceRun r = stage.run(band.source(), OutputKind::png);
      if (r.rendered.image16.channels != 0)
        write_rows(*writer, r.rendered.image16, skip, count, before, out_depth, &strip8);
      else
        write_rows(*writer, r.rendered.image, skip, count, before, out_depth, &strip8);
      continue;
    }
    const Source& whole = band.source();
    for (int x = 0; x < width;) {
      // Input columns [left, left + piece); output columns [x, right).
      const int left = std::max(0, std::min(x - plan.halo, width - piece));
      const int right = left + piece == width ? width : left + piece - plan.halo;
      Source part;
      part.channels = whole.channels;
      part.deep = whole.deep;
      part.space = whole.space;
      if (whole.wide())
        part.rgba16 = columns(whole.rgba16, left, piece, 0, whole.height());
      else
        part.rgba = columns(whole.rgba, left, piece, 0, whole.height());
      stage.set_origin({left, band.first()});
      SourceRun r = stage.run(part, OutputKind::png);
      const int from = skip - before, rows_out = before + count;
      if (r.rendered.image16.channels != 0)
        place(r.rendered.image16, x - left, from, right - x, rows_out, x, width, &strip16);
      else
        place(r.rendered.image, x - left, from, right - x, rows_out, x, width, &strip8);
      x = right;
    }
    if (strip16.channels != 0)
      write_rows(*writer, strip16, before, count, before, out_depth, &strip8);
    else
      write_rows(*writer, strip8, before, count, before, out_depth, nullptr);
  }
  trace("strips done");
}

}  // namespace blurtool
