// The batch driver: one image or a folder of them through one operation, with decoding,
// device work and encoding overlapping (a small pool of host threads and one thread per
// device), plus the pieces the single-image path in main.cpp shares with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/options.h"
#include "core/cl_runtime.h"
#include "core/error.h"
#include "core/filter.h"
#include "core/image_io.h"
#include "core/tiled_run.h"

namespace blurtool {

/// What an output holds: an image (PNG or JPEG) or, with --bright, the point list.
enum class OutputKind { png, jpeg, csv, json };

/// The kind of output `path` gets: --format if given, else its extension (.png, .jpg, .jpeg;
/// .csv and .json with --bright). For "-" (stdout) without --format: `input`'s extension when it
/// names an image, else PNG. Throws blurtool::UsageError naming `path` for other extensions.
OutputKind output_kind(const std::string& path, const std::string& input, const CliOptions& o);

/// The filter of o's operation for a width x height image on `runtime`; `wg` overrides the
/// Gaussian work-group size (the --sweep-wg rows). Throws blurtool::UsageError for a schedule
/// the device cannot run.
std::unique_ptr<Filter> make_filter(Runtime& runtime, const CliOptions& o, int width, int height,
                                    WorkGroup wg = {});

/// The output tile size for o's operation on a width x height image on `runtime`'s device:
/// {width, height} when it runs in one piece, else the tiles plan_tiles() finds (the device's
/// limits, or --max-tile) with the blur radius as halo (bright points: the glow's halo, and
/// sides rounded down to whole blocks). Throws UsageError for --bench or --sweep-wg then (they
/// time the image in one piece), blurtool::Error when no tile fits the device.
TileSize operation_tiles(const Runtime& runtime, const CliOptions& o, int width, int height);

/// Runs work(), turning an OpenCL error that means the device ran out of memory or resources
/// on a width x height image into blurtool::Error with device_fault_message()'s line.
template <typename F>
void with_device_faults(const Runtime& runtime, int width, int height, F&& work) {
  try {
    work();
  } catch (const cl::Error& e) {
    const std::string why = device_fault_message(e, runtime.device(), width, height);
    if (why.empty()) throw;
    throw Error(why);
  }
}

/// One image's result, ready to encode: an RGBA image and the channel count (1-4, the input's)
/// it is written with, or text. The RGBA image is reduced to `channels` by encode_output, so
/// that in a batch this host work runs on the encoding threads, not the device's.
struct Rendered {
  Image image;
  int channels = 4;
  std::string text;
};

/// Turns the RGBA `output` of a finished run of `filter` (see run_filter) over `rgba` into the
/// result: the blurred image, or for --bright the point list (csv, json) or the input with a
/// glow at each point. `channels` is the input's channel count (1-4).
Rendered render(Runtime& runtime, const CliOptions& o, Filter& filter, Image output,
                const Image& rgba, int channels, OutputKind kind);

/// The result for `rgba` made tile by tile (run_filter_tiled; for --bright
/// find_bright_points_tiled, then the text or draw_glow_tiled): the same as render() after a run
/// in one piece. Blurs run every tile with the schedule auto takes for the whole image
/// (resolve_box_schedule, resolve_gauss_schedule); each schedule's arithmetic for a pixel depends
/// only on its window, so the bytes are the same (separable-linear: within 1 level, see
/// --max-tile in the man page).
Rendered render_tiled(Runtime& runtime, const CliOptions& o, const Image& rgba, int channels,
                      OutputKind kind, TileSize tiles);

/// The bytes of `r` in `kind` (JPEG at o.quality), its image reduced to r.channels first.
std::vector<std::uint8_t> encode_output(const Rendered& r, OutputKind kind, const CliOptions& o);

/// Runs a batch (o.batch): plans every INPUT (files, folders, -r) into o.output, skips existing
/// outputs unless --force, runs the pipeline on the device(s) of --device or --devices, reports
/// each failing file on stderr and goes on; progress on a terminal and a summary unless --quiet.
/// Returns the exit status: 0 every image done or skipped, 1 some failed. Throws
/// blurtool::UsageError before any work for a bad output folder or device list.
int run_batch(const CliOptions& o);

}  // namespace blurtool
