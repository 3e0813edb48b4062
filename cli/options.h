// Command-line options of blurtool: parsed once into CliOptions, every value range-checked,
// every error a blurtool::UsageError naming the option.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/box_blur.h"
#include "core/bright_points.h"
#include "core/gauss_blur.h"
#include "core/image_io.h"
#include "core/tiled_run.h"

namespace blurtool {

/// Everything the command line asks for.
struct CliOptions {
  bool help = false;
  bool version = false;
  bool list_devices = false;
  std::string help_text;
  std::string device;  ///< --device: index or name substring; empty: BLURTOOL_DEVICE or default
  enum class Operation { box, gauss, bright } operation = Operation::box;
  BoxParams box_params;        ///< --box
  GaussParams gauss_params;    ///< --gauss
  BrightParams bright_params;  ///< --bright
  int quality = 95;            ///< JPEG quality, 1..100
  /// --subsampling: JPEG chroma subsampling
  ChromaSubsampling subsampling = ChromaSubsampling::s420;
  /// --png-level: zlib level of PNG output, 0..9
  int png_level = kDefaultPngLevel;
  int bench_runs = 0;          ///< 0: no benchmark
  bool sweep_wg = false;       ///< --sweep-wg: one benchmark row per work-group size
  std::string bench_format = "table";
  /// INPUT arguments: files, folders or "-" (stdin).
  std::vector<std::string> inputs;
  /// OUTPUT: a file, "-" (stdout) or, in batch mode, a folder.
  std::string output;
  /// Batch mode: several inputs, a folder input, -o, or an OUTPUT that is a folder (an
  /// existing one, or a name ending in '/'). Single mode replaces OUTPUT if it exists.
  bool batch = false;
  bool recursive = false;  ///< -r: descend into sub-folders of folder inputs
  bool force = false;      ///< --force: replace existing outputs in batch mode
  bool orient = true;      ///< false with --no-orient: keep a JPEG's stored pixel order
  bool linear_light = false;    ///< --linear-light: blur in linear light
  bool straight_alpha = false;  ///< --straight-alpha: do not premultiply by alpha
  bool quiet = false;      ///< --quiet: only errors on stderr
  std::string format;      ///< --format: png, jpg (csv, json with --bright); empty: by name
  std::vector<std::string> devices;  ///< --devices: device specs ("all" in any case as "all");
                                     ///< empty: --device
  int jobs = 0;  ///< --jobs: host threads decoding and encoding; 0: hardware threads
  std::uint64_t max_pixels = kDefaultMaxPixels;         ///< --max-pixels: width * height
  std::uint64_t max_file_bytes = kDefaultMaxFileBytes;  ///< --max-file-size: bytes
  TileSize max_tile;  ///< --max-tile: output tiles of at most this size; 0x0: the device's limits
};

/// Parses argv. Throws blurtool::UsageError for unknown options, bad values and a wrong number
/// of file arguments.
CliOptions parse_options(int argc, const char* const* argv);

}  // namespace blurtool
