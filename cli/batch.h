// The batch driver: one image or a folder of them through one operation, with decoding,
// device work and encoding overlapping (a small pool of host threads and one thread per
// device), plus the pieces the single-image path in main.cpp shares with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "cli/options.h"
#include "core/cl_runtime.h"
#include "core/error.h"
#include "core/filter.h"
#include "core/image_io.h"
#include "core/tiled_run.h"
#include "core/working_space.h"

namespace blurtool {

/// What an output holds: an image (PNG or JPEG) or, with --bright, the point list.
enum class OutputKind { png, jpeg, csv, json };

/// The kind of output `path` gets: --format if given, else its extension (.png, .jpg, .jpeg;
/// .csv and .json with --bright). For "-" (stdout) without --format: `input`'s extension when it
/// names an image, else PNG. Throws blurtool::UsageError naming `path` for other extensions.
OutputKind output_kind(const std::string& path, const std::string& input, const CliOptions& o);

/// The working space of o's operation for a file of `channels` (1-4) that stores 16-bit samples
/// (`deep`) or not, with alpha below full scale somewhere (`transparent`): linear light with
/// --linear-light, premultiplied where there is transparency (unless --straight-alpha), 8-bit
/// alpha for an 8-bit file; --bright works in the stored form.
WorkingSpace working_space(const CliOptions& o, int channels, bool deep, bool transparent);

/// The depth a file's pixels go to the device at: 16 bits where the file stores them or the
/// working space is not the stored form, else 8.
inline PixelDepth device_depth(bool deep, const WorkingSpace& space) {
  return deep || !space.is_stored_form() ? PixelDepth::u16 : PixelDepth::u8;
}

/// What a filter is made for: the width, height, depth and working space of its images; a
/// filter is reused (batch) or made ahead (single mode) only for an image of the same key.
using FilterKey = std::tuple<int, int, PixelDepth, WorkingSpace>;

/// A decoded input as the device takes it: RGBA8, or RGBA16 (`wide`) for a 16-bit PNG or a
/// blur in a working space (premultiplied alpha for an image with transparency unless
/// --straight-alpha, linear light with --linear-light; see core/working_space.h).
struct Source {
  Image rgba;          ///< RGBA8, when !wide()
  Image16 rgba16;      ///< RGBA16, when wide()
  int channels = 0;    ///< the file's own channel count (1-4)
  bool deep = false;   ///< the file stores 16-bit samples: a PNG output keeps 16 bits
  WorkingSpace space;  ///< the blur's working space (the stored form for --bright)
  bool wide() const { return rgba16.channels != 0; }
  /// The pixels' size in host memory, bytes.
  double bytes() const {
    return wide() ? 2.0 * rgba16.pixels.size() : static_cast<double>(rgba.pixels.size());
  }
  PixelDepth depth() const { return wide() ? PixelDepth::u16 : PixelDepth::u8; }
  int width() const { return wide() ? rgba16.width : rgba.width; }
  int height() const { return wide() ? rgba16.height : rgba.height; }
  FilterKey key() const { return {width(), height(), depth(), space}; }
};

/// `image` as decoded, prepared for o's operation: expanded to RGBA, at 16 bits where it is
/// deep or its working space is not the stored form. --bright works on 8 bits in the stored
/// form (a 16-bit PNG is reduced).
Source make_source(DecodedImage image, const CliOptions& o);

/// The filter of o's operation for a width x height image on `runtime`; `wg` overrides the
/// Gaussian work-group size (the --sweep-wg rows). A blur is built for `depth`, and wrapped in
/// a WorkingSpaceFilter when `space` is not the stored form (16 bits only). Throws
/// blurtool::UsageError for a schedule the device cannot run.
std::unique_ptr<Filter> make_filter(Runtime& runtime, const CliOptions& o, int width, int height,
                                    WorkGroup wg = {}, PixelDepth depth = PixelDepth::u8,
                                    WorkingSpace space = {});

/// The output tile size for o's operation on a width x height image on `runtime`'s device:
/// {width, height} when it runs in one piece, else the tiles plan_tiles() finds (the device's
/// limits, or --max-tile) with the blur radius as halo (bright points: the glow's halo, and
/// sides rounded down to whole blocks). Throws UsageError for --bench or --sweep-wg then (they
/// time the image in one piece), blurtool::Error when no tile fits the device.
/// `wide`: the run is at 16 bits in a working space (more device memory a pixel).
TileSize operation_tiles(const Runtime& runtime, const CliOptions& o, int width, int height,
                         bool wide = false);

/// Runs work(), turning an OpenCL error that means the device ran out of memory or resources
/// on a width x height image of `depth` into blurtool::Error with device_fault_message()'s line.
template <typename F>
void with_device_faults(const Runtime& runtime, int width, int height, PixelDepth depth, F&& work) {
  try {
    work();
  } catch (const cl::Error& e) {
    const std::string why =
        device_fault_message(e, runtime.device(), width, height, pixel_bytes(depth));
    if (why.empty()) throw;
    throw Error(why);
  }
}

/// One image's result, ready to encode: an RGBA image (8 or 16 bits) and the channel count
/// (1-4, the input's) it is written with, or text. The RGBA image is reduced to `channels` by
/// encode_output, so that in a batch this host work runs on the encoding threads, not the
/// device's.
struct Rendered {
  Image image;
  Image16 image16;    ///< the result of a 16-bit run (image is then empty)
  bool deep = false;  ///< the input stored 16 bits: a PNG is written with 16
  int channels = 4;
  std::string text;
};

/// Turns the RGBA `output` of a finished run of `filter` (see run_filter) over `rgba` into the
/// result: the blurred image, or for --bright the point list (csv, json) or the input with a
/// glow at each point. `channels` is the input's channel count (1-4).
Rendered render(Runtime& runtime, const CliOptions& o, Filter& filter, Image output,
                const Image& rgba, int channels, OutputKind kind);

/// A run of `filter` (made by make_filter for `source`'s size, depth and working space) over
/// `source` in one piece (runs as run_filter: 0 once, else a warm-up and `runs` timed), rendered
/// as render() does, with its timings (`timings.output` is left empty).
struct SourceRun {
  Rendered rendered;
  FilterRun timings;
};
SourceRun render_source(Runtime& runtime, const CliOptions& o, Filter& filter, const Source& source,
                        OutputKind kind, int runs);

/// The result for `source` made tile by tile (run_filter_tiled; for --bright
/// find_bright_points_tiled, then the text or draw_glow_tiled): the same as render_source(). Blurs
/// run every tile with the schedule auto takes for the whole image (resolve_box_schedule,
/// resolve_gauss_schedule); each schedule's arithmetic for a pixel depends only on its window, so
/// the bytes are the same (separable-linear: within 1 level, see
/// --max-tile in the man page).
Rendered render_tiled(Runtime& runtime, const CliOptions& o, const Source& source, OutputKind kind,
                      TileSize tiles);

/// The bytes of `r` in `kind` (JPEG at o.quality and o.subsampling, PNG at o.png_level), its
/// image reduced to r.channels as it is encoded. A 16-bit result is written as a 16-bit PNG when
/// the input was deep, else as 8 bits. `png_threads` caps the threads deflating one PNG (0: the
/// hardware's); a batch of several images passes 1, since its encoding threads already fill the
/// cores.
std::vector<std::uint8_t> encode_output(const Rendered& r, OutputKind kind, const CliOptions& o,
                                        int png_threads);

/// Runs a batch (o.batch): plans every INPUT (files, folders, -r) into o.output, skips existing
/// outputs unless --force, runs the pipeline on the device(s) of --device or --devices, reports
/// each failing file on stderr and goes on; progress on a terminal and a summary unless --quiet.
/// Returns the exit status: 0 every image done or skipped, 1 some failed. Throws
/// blurtool::UsageError before any work for a bad output folder or device list.
int run_batch(const CliOptions& o);

}  // namespace blurtool
