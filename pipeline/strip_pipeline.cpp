// Strips of rows through the device stage (see strip_pipeline.h).
#include "pipeline/strip_pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "image/row_codec.h"
#include "util/trace.h"

namespace blurtool {

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
// A strip's working set at most: larger strips save only the halo's share of the kernels' work.
constexpr std::uint64_t kStripBytes = 256 * kMiB;

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
  std::vector<T> buffer(pass.row_bytes() / sizeof(T) * rows);
  for (int y = 0; y < height; y += rows) {
    const int n = std::min(rows, height - y);
    pass.read(buffer.data(), n);
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
  Band(RowSource& rows, int channels, const WorkingSpace& space) : rows_(rows) {
    source_.channels = channels;
    source_.deep = rows.sixteen_bit();
    source_.space = space;
  }

  // Makes the band rows [first, last) of the image: rows it holds already are kept, the rest
  // decoded (they must follow the ones held, as strips go down the image).
  void cover(int first, int last) {
    if (rows_.depth() == 16)
      cover(source_.rgba16, first, last);
    else
      cover(source_.rgba, first, last);
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
  Source source_;
  int first_ = 0;
};

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
  return (wide ? 16 : 8) + (filter_wide ? kWideTileBytesPerPixel : 24);
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
  const std::uint64_t per_row = width * run_bytes_per_pixel(header.sixteen_bit, filter_wide);
  plan.need = per_row * static_cast<std::uint64_t>(header.height) + bytes.size();
  if (plan.need <= budget) return plan;

  const std::string over = name + ": the image is " + std::to_string(header.width) + "x" +
                           std::to_string(header.height) + " and needs " + mib(plan.need) +
                           " in one piece, more than " + parameter("max_memory") + " (" +
                           mib(budget) + ")";
  if (o.operation == JobOptions::Operation::bright)
    throw Error(over + "; " + parameter("bright") + " runs in one piece");
  if (!timed_by.empty()) throw UsageError(over + "; " + timed_by + " times the image in one piece");
  // A file that cannot be read by rows is decoded whole (RGBA), the rest of the budget for the
  // strips.
  const std::string why = rows_unreadable(bytes, o.orient);
  const std::uint64_t decoded = why.empty() ? 0
                                            : width * static_cast<std::uint64_t>(header.height) *
                                                  (header.sixteen_bit ? 8 : 4);
  plan.decode_whole = !why.empty();
  plan.halo = operation_halo(o);
  const std::uint64_t halo_rows = 2 * static_cast<std::uint64_t>(plan.halo);
  const std::uint64_t fixed = bytes.size() + decoded;
  if (plan.decode_whole && fixed + (halo_rows + 1) * per_row * 2 > budget)
    throw Error(over + "; " + why + " is decoded whole (" + mib(decoded) +
                ") before its strips, which leaves too little");
  const std::uint64_t held = budget > fixed ? budget - fixed : 0;
  std::uint64_t band = std::min(held / 4, kStripBytes) / per_row;
  if (band < halo_rows + 16) band = held / 2 / per_row;  // wide rows: more of the budget
  if (band < halo_rows + 1)
    throw Error(over + ", and a strip of one row with the blur's " + std::to_string(plan.halo) +
                "-row halo above and below needs " + mib((halo_rows + 1) * per_row * 2) +
                "; raise " + parameter("max_memory") + " or use a smaller radius");
  plan.rows = static_cast<int>(
      std::min<std::uint64_t>(band - halo_rows, static_cast<std::uint64_t>(header.height)));
  return plan;
}

std::vector<std::uint8_t> run_strips(Runtime& runtime, const JobOptions& o, const InputBytes& in,
                                     OutputKind kind, const StripPlan& plan,
                                     std::vector<std::string>* warnings) {
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
  trace("strips planned");

  // Every strip with the schedule auto takes for the whole image, as tiles do (render_tiled).
  JobOptions same = o;
  const PixelDepth inner = filter_depth(deep, space);
  if (o.operation == JobOptions::Operation::box)
    same.box_params = resolve_box_schedule(o.box_params, runtime.device(), width, height, inner);
  else
    same.gauss_params =
        resolve_gauss_schedule(o.gauss_params, runtime.device(), width, height, inner);
  DeviceStage stage(runtime, same);

  const EncodeOptions e = encode_options(o, o.jobs);
  const bool png = kind == OutputKind::png;
  const int out_depth = png && deep ? 16 : 8;
  std::vector<std::uint8_t> out;
  RowWriter writer(
      png ? ImageFormat::png : ImageFormat::jpeg, width, height, channels, out_depth, e,
      [&out](const std::uint8_t* p, std::size_t n) { out.insert(out.end(), p, p + n); });

  Band band(*rows, channels, space);
  Image narrowed;  // a 16-bit strip narrowed for an 8-bit output
  for (int y = 0; y < height; y += plan.rows) {
    const int last = std::min(height, y + plan.rows);
    band.cover(std::max(0, y - plan.halo), std::min(height, last + plan.halo));
    for (std::string& w : rows->take_warnings()) warnings->push_back(std::move(w));
    // The device stage returns RGBA whatever the output (its JPEG planes are for whole images).
    SourceRun r = stage.run(band.source(), OutputKind::png);
    const int skip = y - band.first(), count = last - y;
    const std::size_t row = static_cast<std::size_t>(width) * 4;
    if (r.rendered.image16.channels != 0) {
      const Image16& strip = r.rendered.image16;
      if (out_depth == 16) {
        writer.write(strip.pixels.data() + row * skip, count);
      } else {
        narrowed = narrow(strip);
        writer.write(narrowed.pixels.data() + row * skip, count);
      }
    } else {
      writer.write(r.rendered.image.pixels.data() + row * skip, count);
    }
  }
  trace("strips done");
  return out;
}

}  // namespace blurtool
