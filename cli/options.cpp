// Option declarations (each with its unit, range and default) and their parsing, on cxxopts.
#include "cli/options.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <utility>
#include <vector>

#include "cli/numbers.h"
#include "cli/subcommand.h"
#include "filters/schedule_table.h"
#include "image/image_io.h"
#include "util/error.h"

namespace blurtool {

namespace {

// The --variant `text` of `table` (the filter given by `filter`, e.g. "--box"). A name of
// another filter's schedule is refused as such ("a schedule of --gauss"), not as an unknown
// value, so that a user who mixed them up sees why.
template <typename E>
E parse_variant(const std::vector<Named<E>>& table, const std::string& text, const char* filter) {
  auto names = [&text](const auto& t) {
    for (const auto& n : t)
      if (text == n.name) return true;
    return false;
  };
  if (!names(table)) {
    const char* other = names(box_variant_table())      ? "--box"
                        : names(gauss_variant_table())  ? "--gauss"
                        : names(bright_variant_table()) ? "--bright"
                                                        : nullptr;
    if (other)
      throw UsageError("--variant '" + text + "': a schedule of " + other + ", not of " + filter +
                       "; choose one of " + names_of(table));
  }
  return parse_named(table, text, "--variant");
}

// Whether `path` has an image's extension (is_image_name) or, with `text`, .csv or .json, in any
// case.
bool names_an_output_file(const std::string& path, bool text) {
  const std::string ext = lower_extension(path);
  return is_image_name(path) || (text && (ext == ".csv" || ext == ".json"));
}

// `v` as printf's %g writes it.
std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// A decimal number above 0, or a UsageError naming the option.
double parse_positive(const std::string& text, const std::string& option, const std::string& what) {
  const double value = parse_decimal(text);
  if (!(value > 0) || !std::isfinite(value))
    throw UsageError(option + " '" + text + "': " + what + " must be a number above 0");
  return value;
}

// "WxH" with both parts whole numbers from 1 to `hi`, else UsageError(`error`), which quotes
// the whole value (--wg, --max-tile).
std::pair<int, int> parse_wxh(const std::string& text, long hi, const std::string& error) {
  const size_t x = text.find('x');
  try {
    if (x == std::string::npos) throw UsageError("");
    return {parse_int(text.substr(0, x), "", 1, hi, ""),
            parse_int(text.substr(x + 1), "", 1, hi, "")};
  } catch (const UsageError&) {
    throw UsageError(error);
  }
}

// Whether a --devices item is "all", in any case.
bool is_all(const std::string& item) {
  return item.size() == 3 && std::tolower(static_cast<unsigned char>(item[0])) == 'a' &&
         std::tolower(static_cast<unsigned char>(item[1])) == 'l' &&
         std::tolower(static_cast<unsigned char>(item[2])) == 'l';
}

// --wg's "WxH", both from 1 to 4096.
WorkGroup parse_work_group(const std::string& text) {
  const auto [w, h] = parse_wxh(
      text, 4096,
      "--wg '" + text + "': expected WxH with W and H from 1 to 4096, e.g. 16x16 or 64x1");
  return {w, h};
}

}  // namespace

std::string option_spelling(const std::string& key) {
  std::string option = "--" + key;
  for (char& c : option)
    if (c == '_') c = '-';
  return option;
}

CliOptions parse_options(int argc, const char* const* argv) {
  // "--bench N" (N a count) means "--bench=N", and "--strip all" "--strip=all": cxxopts only
  // takes an optional value with '='. --strip takes the next word only where it is a level
  // (all, colour, color); any other word is a file. A file of a level's name there would be
  // read either way, so it is refused as ambiguous: ./all names the file, --strip=all the level.
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    const std::string& next = args[i + 1];
    const bool strip_level =
        args[i] == "--strip" && (next == "all" || next == "colour" || next == "color");
    std::error_code ec;
    if (strip_level && std::filesystem::exists(next, ec))
      throw UsageError("--strip " + next + ": '" + next + "' is also a file here; write --strip=" +
                       next + " for the level, or ./" + next + " for the file");
    if (strip_level || (args[i] == "--bench" && !next.empty() &&
                        next.find_first_not_of("0123456789") == std::string::npos)) {
      args[i] += "=" + next;
      args.erase(args.begin() + static_cast<long>(i) + 1);
    }
  }
  std::vector<const char*> cargs;
  for (const std::string& a : args) cargs.push_back(a.c_str());

  const std::string unrolls = "1, 2, 4, 8, 12, 16, 24, 32";
  // The defaults --help states, from the default parameter table (for any device).
  auto param = [](const char* op, const char* variant) {
    return default_parameters({}, op, variant, 0);
  };
  const TunedSchedule segmented = param("box", "segmented"),
                      segmented_local = param("box", "segmented-local"),
                      unrolled = param("box", "unrolled"), gauss_fused = param("gauss", "fused"),
                      separable_buffer = param("gauss", "separable-buffer");
  cxxopts::Options spec("blurtool",
                        "Blur and analyse images on any OpenCL device, and measure "
                        "each GPU algorithm.\n");
  spec.custom_help(
      "(--box R | --gauss SIGMA | --bright T) [options] INPUT OUTPUT\n"
      "  blurtool (--box R | ...) [options] INPUT... -o FOLDER     (batch; also INPUT... FOLDER/)\n"
      "  blurtool (--box R | ...) [options] [-r] FOLDER FOLDER      (every PNG/JPEG in FOLDER)\n"
      "  blurtool blas saxpy|sdot|sgemm [options]    (own BLAS kernels against CLBlast; "
      "blurtool blas --help)\n"
      "  blurtool bench [--quick] [--plot FILE.svg] [options]    (the fixed benchmark suite; "
      "blurtool bench --help)\n"
      "  blurtool tune [options]    (measure the fastest schedules of a device for --variant "
      "auto; blurtool tune --help)\n"
      "  blurtool probe cache|divergence|stride|transfer [options]    (the GPU performance model: "
      "cache locality, branch divergence, strided access, host-device transfers; blurtool probe "
      "--help)\n\n"
      " INPUT or OUTPUT '-' reads stdin or writes stdout.");
  spec.positional_help("");
  // clang-format off
  spec.add_options("Box blur")
      ("box", "box filter of radius R pixels (0.." + std::to_string(kMaxBoxRadius) +
              "): mean of the (2R+1)x(2R+1) window", cxxopts::value<std::string>(), "R")
      ("variant", "schedule: " + names_of(box_variant_table()) + " (box); " +
                  names_of(gauss_variant_table()) + " (Gaussian); " +
                  names_of(bright_variant_table()) + " (bright points)",
       cxxopts::value<std::string>()->default_value("auto"), "NAME")
      ("intermediate", "format between the two passes (box and Gaussian): " +
                       names_of(intermediate_table()),
       cxxopts::value<std::string>()->default_value("rgba32f"), "FMT")
      ("unroll", "pixels per loop iteration of 'unrolled', 'scan' and 'segmented': " + unrolls +
                 " (default " + std::to_string(unrolled.unroll) + "; " +
                 std::to_string(segmented.unroll) + " for segmented and segmented-local)",
       cxxopts::value<std::string>(), "N")
      ("segment", "pixels per work-item of 'segmented' and 'segmented-local', rows of a "
                  "'tiled' or 'fused' tile, 1.." + std::to_string(kMaxBoxSegment) +
                  " (default " + std::to_string(segmented.segment) + " and " +
                  std::to_string(segmented_local.segment) + "; 'tiled' 16(2R+1) rows from 256 to " +
                  std::to_string(kMaxBoxSegment) +
                  ", fewer on small images; 'fused' the fewest rows from 32 to 128 whose tiles "
                  "all run at once, else 128); "
                  "with --gauss, output rows of a 'fused' tile, "
                  "1.." + std::to_string(kMaxGaussFusedRows) + " (default " +
                  std::to_string(gauss_fused.segment) + "), or outputs a "
                  "column-pass work-item of 'separable-buffer', 1.." +
                  std::to_string(kMaxGaussSepColumnOutputs) + " (default " +
                  std::to_string(separable_buffer.segment) + "), or rows a 'fused-mma' "
                  "work-group walks down, a multiple of 16 up to " +
                  std::to_string(kMaxGaussMmaFusedRows) +
                  " (default 64 up to R 8, 128 up to R 24, 256 above), or columns of a "
                  "'tiled' tile, a multiple of 16 up to " +
                  std::to_string(kMaxGaussTileColumns) +
                  " (default: the most whose ring of 4 ceil(R/2) + 4 rows fits 256 KiB, "
                  "at most 256); with --gauss-method fast, the positions a work-item walks "
                  "along a line on a GPU, 1.." + std::to_string(kMaxGaussFastSegment) +
                  " (default " + std::to_string(kGaussFastGpuSegment) +
                  ", or 16 (r + 1) up to " +
                  std::to_string(4 * kGaussFastGpuSegment) +
                  " for the streams walk; on a CPU a whole line)",
       cxxopts::value<std::string>(), "N")
      ("edge", "pixels outside the image (box and Gaussian): " + names_of(edge_mode_table()),
       cxxopts::value<std::string>()->default_value("clamp"), "MODE");
  spec.add_options("Gaussian blur")
      ("gauss", "Gaussian blur of standard deviation SIGMA pixels (> 0)",
       cxxopts::value<std::string>(), "SIGMA")
      ("gauss-method", "how the Gaussian is computed: " + names_of(gauss_method_table()) +
                       " (default auto: exact below sigma " + number_text(kGaussPyramidSigma) +
                       ", pyramid from it unless an option of the exact method is given)",
       cxxopts::value<std::string>()->default_value("auto"), "M")
      ("cascade", "how the fast method's walks keep earlier boxes' results: " +
                      names_of(cascade_walk_table()) + " (default auto; the same bytes)",
       cxxopts::value<std::string>()->default_value("auto"), "WALK")
      ("radius", "Gaussian taps on each side, 0.." + std::to_string(kMaxGaussRadius) +
                 " pixels (default: ceil(3 SIGMA)); weights renormalised after truncation",
       cxxopts::value<std::string>(), "R")
      ("wg", "work-group size WxH of the Gaussian kernels (default 16x16; Gx1 for "
             "separable-local, default 64x1; Gx1 for fused, default 256x1 up to radius 32, "
             "128x1 beyond), or of box 'segmented' over its (segment, row) "
             "and (column, segment) grids (default 4x16 and 64x1), or Lx1 of the row pass of "
             "'segmented-local' (default 128x1), or CxB of box 'fused': C work-items along a "
             "row, B rows at a time (default 16x8; 32x4 where 16x8's tile does not fit local "
             "memory)",
       cxxopts::value<std::string>(), "WxH");
  spec.add_options("Bright points")
      ("bright", "report the brightest pixel of every block whose luminance (Rec. 709, 0..1) "
                 "exceeds T; OUTPUT .csv or .json lists them, .png or .jpg draws a glow at "
                 "each", cxxopts::value<std::string>(), "T")
      ("block", "block side B in pixels, 1.." + std::to_string(kMaxBrightBlock) + " (default 8)",
       cxxopts::value<std::string>(), "B")
      ("per-item", "pixels per work-item of 'hybrid': KxK, 1..B (default 2)",
       cxxopts::value<std::string>(), "K");
  spec.add_options("Image fidelity")
      ("linear-light", "blur in linear light: sRGB values are decoded before and encoded after "
                       "(a black/white edge mixes to sRGB 188, not 128); with --bright, "
                       "luminance of linear light")
      ("straight-alpha", "blur colour and alpha each on its own (default for images with "
                         "transparency: premultiplied, so transparent colours leave no halo)");
  spec.add_options("Output and batch")
      ("o,output", "batch: write every output into FOLDER (created if missing), named as its "
                   "input", cxxopts::value<std::string>(), "FOLDER")
      ("r,recursive", "batch: descend into sub-folders of folder inputs, mirroring them")
      ("files-from", "batch: also read INPUT paths from FILE ('-': standard input), one a line; "
                     "each output mirrors its path under -o FOLDER",
       cxxopts::value<std::string>(), "FILE")
      ("0,null", "with --files-from: paths end in NUL bytes (find -print0), not newlines")
      ("shard", "batch: make only share I of N, the files whose path hashes to I modulo N "
                "(I from 0 to N-1, or 1 to N), so that N runs cover the inputs once "
                "(docs/scale-out.md)", cxxopts::value<std::string>(), "I/N")
      ("report", "batch: append to FILE ('-': standard output) a JSON line for every input "
                 "(done, skipped or failed, why, size, bytes, times, device) and a summary line",
       cxxopts::value<std::string>(), "FILE")
      ("format", "output format: png, jpg, tif or webp (with --bright also csv or json); "
                 "default: by the output's extension (.png, .jpg, .jpeg, .tif, .tiff, .webp), in "
                 "batch the input's",
       cxxopts::value<std::string>(), "FMT")
      ("force",
       "replace outputs that exist in a batch (default: skip and count them), and in single "
       "mode one that is write-protected or appears while the image is made (default: fail)")
      ("strip", "drop the input's metadata from the output: --strip (or --strip=colour, "
                "=color) drops EXIF, XMP and the resolution but keeps the colour profile (ICC, "
                "PNG sRGB/gAMA/cHRM); --strip=all drops that too (default: all of it is kept, "
                "the EXIF orientation set to 1, its thumbnail, maker note and XMP thumbnails "
                "dropped). The word after --strip is its level only when it is all, colour or "
                "color (refused if a file has that name: write ./all); any other is a file",
       cxxopts::value<std::string>()->implicit_value("colour"), "all")
      ("no-orient", "keep a JPEG's or TIFF's pixels as stored (default: turn and mirror them as "
                    "its EXIF orientation or TIFF Orientation tag says, so that phone photos "
                    "come out upright)")
      ("quality", "JPEG and lossy WebP quality 1..100",
       cxxopts::value<std::string>()->default_value("95"), "Q")
      ("webp-lossless", "write WebP output lossless (default: lossy at --quality)")
      ("subsampling", "JPEG chroma subsampling: 444 (full resolution), 422 (half the columns) "
                      "or 420 (half the columns and rows)",
       cxxopts::value<std::string>()->default_value("420"), "S")
      ("png-level", "zlib compression level of PNG output, 0 (stored) to 9 (smallest, slowest)",
       cxxopts::value<std::string>()->default_value(std::to_string(kDefaultPngLevel)), "N")
      ("jpeg-codec", "where JPEG's colour conversion and chroma resampling run: auto (the "
                     "device in a batch on GPUs), host (libjpeg-turbo) or device; the same bytes",
       cxxopts::value<std::string>()->default_value("auto"), "WHERE")
      ("q,quiet", "print nothing but errors (no warnings, progress or summary)")
      ("jobs", "host threads decoding and encoding (all of them on one large image's strips), "
               "1..256 (default: hardware threads)",
       cxxopts::value<std::string>(), "N");
  spec.add_options("Input limits")
      ("max-pixels", "refuse images larger than N pixels (width * height, read from the header "
                     "before decoding), 1..2^40 (default 2^30 = 1073741824)",
       cxxopts::value<std::string>(), "N")
      ("max-file-size", "refuse input files larger than SIZE bytes before reading them; K, M "
                        "or G for KiB, MiB, GiB (default 1G; at most 2G - 1)",
       cxxopts::value<std::string>(), "SIZE");
  spec.add_options("Large images")
      ("max-memory", "host memory an image may take; a larger one is read, blurred and written "
                     "in strips of rows, and one that does not fit even so is refused before "
                     "decoding; K, M or G for KiB, MiB, GiB (default: a quarter of physical "
                     "memory, at most 4G)",
       cxxopts::value<std::string>(), "SIZE")
      ("max-tile", "work in output tiles of at most WxH pixels, each read with a halo of the "
                   "radius (default: only images the device cannot hold are split, in the "
                   "largest tiles it can)",
       cxxopts::value<std::string>(), "WxH");
  spec.add_options("Devices")
      ("list-devices", "list every OpenCL device with its index and exit")
      ("device", kDeviceOptionHelp, cxxopts::value<std::string>(), "N|TEXT")
      ("devices", "batch: spread the images over these devices: 'all' (every GPU where there "
                  "is one, else every device), or a comma-separated list of indices or name parts",
       cxxopts::value<std::string>(), "LIST");
  spec.add_options("Benchmark")
      ("bench", "time the kernels N times (default 10) after a warm-up: median, min, max "
                "kernel time and GB/s, the device's bandwidth floor, host times; with a batch, "
                "each stage's CPU and wall time per image (N unused)",
       cxxopts::value<std::string>()->implicit_value("10"), "N")
      ("sweep-wg", "with --gauss, one image: one row per work-group size the device "
                   "accepts (4x4..32x32, or 4x1..256x1 for separable-local)")
      ("bench-format", "benchmark output: table, csv or json",
       cxxopts::value<std::string>()->default_value("table"), "FMT");
  spec.add_options("General")
      ("h,help", "print this help and exit")
      ("version", "print the version, the OpenCL platforms and the CLBlast version, and exit");
  // clang-format on
  // INPUT... OUTPUT are the arguments no option takes (cxxopts's unmatched()), not a positional
  // vector option: cxxopts splits a vector's values at commas, and "a,b.png" is one file name.

  cxxopts::ParseResult parsed;
  check_switch_values(spec, static_cast<int>(cargs.size()), cargs.data());
  check_single_dash_long(spec, static_cast<int>(cargs.size()), cargs.data());
  try {
    parsed = spec.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const cxxopts::exceptions::exception& e) {
    throw UsageError(e.what());
  }

  CliOptions o;
  // Every group, in the order declared (spec.groups() sorts them by name); a test checks that
  // --help lists every option of the man page.
  o.help_text =
      spec.help({"Box blur", "Gaussian blur", "Bright points", "Image fidelity", "Output and batch",
                 "Input limits", "Large images", "Devices", "Benchmark", "General"});
  // The BLAS subcommand has its own options (blurtool blas --help); name it among the groups.
  const std::string blas_group =
      " BLAS options (blurtool blas ROUTINE [options]; blurtool blas --help):\n"
      "      saxpy|sdot|sgemm    own OpenCL kernels (image and buffer designs) against\n"
      "                          CLBlast, checked against a CPU reference: --n, --m, --k,\n"
      "                          --alpha, --beta, --incx, --incy, --trans-a, --trans-b,\n"
      "                          --lda, --ldb, --ldc, --impl, --runs, --time-budget\n"
      "      --tune              run CLBlast's tuners on the device and cache the result\n\n";
  if (size_t at = o.help_text.find(" Output and batch options:"); at != std::string::npos)
    o.help_text.insert(at, blas_group);
  o.help = parsed.count("help") > 0;
  o.version = parsed.count("version") > 0;
  o.list_devices = parsed.count("list-devices") > 0;
  if (o.help || o.version || o.list_devices) return o;

  if (parsed.count("device")) o.device = parsed["device"].as<std::string>();
  const bool box = parsed.count("box") > 0, gauss = parsed.count("gauss") > 0,
             bright = parsed.count("bright") > 0;
  if (box + gauss + bright > 1)
    throw UsageError("--box, --gauss and --bright: choose one operation");
  if (!box && !gauss && !bright) {
    // A first word that names no file and looks like no image may be a subcommand mistyped.
    const std::string first = argc > 1 ? argv[1] : "";
    std::error_code ec;
    if (!first.empty() && first.find_first_of("-./") == std::string::npos &&
        !std::filesystem::exists(first, ec))
      throw UsageError("'" + first +
                       "' is no subcommand (bench, blas, probe, tune) and no file; a blur needs "
                       "--box R, --gauss SIGMA or --bright T");
    throw UsageError("no operation given: use --box R, --gauss SIGMA or --bright T");
  }
  const std::string variant = parsed["variant"].as<std::string>();
  const Intermediate intermediate =
      parse_named(intermediate_table(), parsed["intermediate"].as<std::string>(), "--intermediate");
  const EdgeMode edge = parse_named(edge_mode_table(), parsed["edge"].as<std::string>(), "--edge");
  if (!bright) {
    for (const char* bright_only : {"block", "per-item"})
      if (parsed.count(bright_only))
        throw UsageError(std::string("--") + bright_only + " goes with --bright");
  }
  if (bright) {
    // Each blur option with the operations it goes with.
    const std::pair<const char*, const char*> blur_only[] = {
        {"intermediate", "--box or --gauss"},
        {"edge", "--box or --gauss"},
        {"segment", "--box or --gauss"},
        {"straight-alpha", "--box or --gauss"},
        {"unroll", "--box"},
        {"radius", "--gauss"},
        {"gauss-method", "--gauss"},
        {"cascade", "--gauss"},
        {"sweep-wg", "--gauss"},
        {"wg", "--gauss (and --box's segmented variants and fused)"}};
    for (const auto& [option, operations] : blur_only)
      if (parsed.count(option))
        throw UsageError(std::string("--") + option + " goes with " + operations +
                         ", not --bright");
    o.operation = CliOptions::Operation::bright;
    BrightParams& b = o.bright_params;
    const std::string t = parsed["bright"].as<std::string>();
    b.threshold = parse_decimal(t);
    if (!(b.threshold >= 0 && b.threshold <= 1))
      throw UsageError("--bright '" + t + "': the threshold is a luminance from 0 to 1");
    if (parsed.count("block"))
      b.block = parse_int(parsed["block"].as<std::string>(), "--block", 1, kMaxBrightBlock,
                          "the block side");
    b.per_item = std::min(b.per_item, b.block);  // the default 2 where B is 1
    if (parsed.count("per-item"))
      b.per_item = parse_int(parsed["per-item"].as<std::string>(), "--per-item", 1, b.block,
                             "the per-item side");
    b.variant = parse_variant(bright_variant_table(), variant, "--bright");
    validate(b);
  } else if (box) {
    for (const char* gauss_only : {"radius", "gauss-method", "cascade", "wg", "sweep-wg"})
      if (parsed.count(gauss_only) &&
          !(std::string(gauss_only) == "wg" &&
            (variant == "segmented" || variant == "segmented-local" || variant == "fused")))
        throw UsageError(std::string("--") + gauss_only + " goes with --gauss, not --box" +
                         (std::string(gauss_only) == "radius" ? " (the box radius is --box R)"
                          : std::string(gauss_only) == "wg"
                              ? " (with --box only for --variant segmented, segmented-local "
                                "or fused)"
                              : ""));
    o.operation = CliOptions::Operation::box;
    BoxParams& b = o.box_params;
    b.radius = parse_int(parsed["box"].as<std::string>(), "--box", 0, kMaxBoxRadius, "the radius");
    b.variant = parse_variant(box_variant_table(), variant, "--box");
    b.intermediate = intermediate;
    b.edge = edge;
    if (parsed.count("unroll"))
      b.unroll =
          parse_int(parsed["unroll"].as<std::string>(), "--unroll", 1, 32, "the unroll factor");
    if (parsed.count("segment")) {
      if (b.variant != BoxVariant::segmented && b.variant != BoxVariant::segmented_local &&
          b.variant != BoxVariant::tiled && b.variant != BoxVariant::fused)
        throw UsageError(
            "--segment goes with --variant segmented, segmented-local, tiled or fused");
      b.segment = parse_int(parsed["segment"].as<std::string>(), "--segment", 1, kMaxBoxSegment,
                            "the segment");
    }
    if (parsed.count("wg")) b.wg = parse_work_group(parsed["wg"].as<std::string>());
    validate(b);
  } else if (gauss) {
    if (parsed.count("unroll")) throw UsageError("--unroll goes with --box, not --gauss");
    const bool fast_method = parsed["gauss-method"].as<std::string>() == "fast";
    if (parsed.count("segment") && !fast_method && variant != "fused" &&
        variant != "separable-buffer" && variant != "fused-mma" && variant != "tiled")
      throw UsageError(
          "--segment goes with --box, or with --gauss only for --gauss-method fast or --variant "
          "fused, separable-buffer, fused-mma or tiled");
    o.operation = CliOptions::Operation::gauss;
    GaussParams& g = o.gauss_params;
    g.sigma = parse_positive(parsed["gauss"].as<std::string>(), "--gauss", "sigma");
    if (parsed.count("radius"))
      g.radius = parse_int(parsed["radius"].as<std::string>(), "--radius", 0, kMaxGaussRadius,
                           "the radius");
    g.variant = parse_variant(gauss_variant_table(), variant, "--gauss");
    g.method = parse_named(gauss_method_table(), parsed["gauss-method"].as<std::string>(),
                           "--gauss-method");
    g.cascade = parse_named(cascade_walk_table(), parsed["cascade"].as<std::string>(), "--cascade");
    g.intermediate = intermediate;
    g.edge = edge;
    if (parsed.count("wg")) g.wg = parse_work_group(parsed["wg"].as<std::string>());
    if (parsed.count("segment")) {
      const bool mma = g.variant == GaussVariant::fused_mma;
      const bool tiled = g.variant == GaussVariant::tiled;
      g.segment = parse_int(parsed["segment"].as<std::string>(), "--segment", 1,
                            fast_method ? kMaxGaussFastSegment
                            : mma       ? kMaxGaussMmaFusedRows
                            : tiled     ? kMaxGaussTileColumns
                                        : kMaxGaussFusedRows,
                            mma     ? "the rows a work-group walks down"
                            : tiled ? "the tile columns"
                                    : "the tile rows");
    }
    validate(g);
    o.sweep_wg = parsed.count("sweep-wg") > 0;
    if (o.sweep_wg && gauss_method_of(g) != GaussMethod::exact)
      throw UsageError("--sweep-wg goes with --gauss-method exact (or a SIGMA below " +
                       number_text(kGaussPyramidSigma) + " with auto): the " +
                       name_of(gauss_method_table(), gauss_method_of(g)) +
                       " method sets its own work-items");
  }
  o.quality = parse_int(parsed["quality"].as<std::string>(), "--quality", 1, 100, "the quality");
  o.subsampling = parse_named(chroma_subsampling_table(), parsed["subsampling"].as<std::string>(),
                              "--subsampling");
  o.webp_lossless = parsed.count("webp-lossless") > 0;
  o.given.quality = parsed.count("quality") > 0;
  o.given.subsampling = parsed.count("subsampling") > 0;
  o.given.png_level = parsed.count("png-level") > 0;
  o.png_level =
      parse_int(parsed["png-level"].as<std::string>(), "--png-level", 0, 9, "the zlib level");
  o.jpeg_codec =
      parse_named(jpeg_codec_table(), parsed["jpeg-codec"].as<std::string>(), "--jpeg-codec");
  if (parsed.count("bench"))
    o.bench_runs =
        parse_int(parsed["bench"].as<std::string>(), "--bench", 1, 100000, "the run count");
  else if (o.sweep_wg)
    o.bench_runs = 10;  // --sweep-wg is a benchmark: --bench's default count
  o.bench_format = bench_format_option(parsed);
  if (parsed.count("bench-format") && !parsed.count("bench") && !o.sweep_wg)
    throw UsageError("--bench-format goes with --bench or --sweep-wg (it formats their report)");

  const std::vector<std::string> files = parsed.unmatched();
  o.recursive = parsed.count("recursive") > 0;
  o.force = parsed.count("force") > 0;
  o.orient = parsed.count("no-orient") == 0;
  if (parsed.count("strip")) {
    const std::string strip = parsed["strip"].as<std::string>();
    if (strip == "colour" || strip == "color")
      o.keep_metadata = KeepMetadata::colour;
    else if (strip == "all")
      o.keep_metadata = KeepMetadata::none;
    else
      throw UsageError(
          "--strip=" + strip +
          ": not a choice; use --strip (or --strip=colour, =color: keeps the colour profile) or "
          "--strip=all");
  }
  o.linear_light = parsed.count("linear-light") > 0;
  o.straight_alpha = parsed.count("straight-alpha") > 0;
  o.quiet = parsed.count("quiet") > 0;
  if (parsed.count("jobs"))
    o.jobs = parse_int(parsed["jobs"].as<std::string>(), "--jobs", 1, 256, "the thread count");
  if (parsed.count("max-pixels")) {
    const long long n = parse_whole(parsed["max-pixels"].as<std::string>(), "--max-pixels");
    if (n < 1 || n > (1LL << 40))
      throw UsageError("--max-pixels '" + parsed["max-pixels"].as<std::string>() +
                       "': the pixel count must be from 1 to 2^40 (1099511627776)");
    o.max_pixels = static_cast<std::uint64_t>(n);
  }
  if (parsed.count("max-tile")) {
    const std::string text = parsed["max-tile"].as<std::string>();
    const auto [w, h] =
        parse_wxh(text, kMaxTileSide,
                  "--max-tile '" + text + "': give WxH, two whole numbers from 1 to " +
                      std::to_string(kMaxTileSide) + " (e.g. 1024x1024)");
    o.max_tile = {w, h};
  }
  if (parsed.count("max-memory"))
    o.max_memory =
        parse_size(parsed["max-memory"].as<std::string>(), "--max-memory", 1 << 20, 1ULL << 42);
  if (parsed.count("max-file-size"))
    o.max_file_bytes =
        parse_size(parsed["max-file-size"].as<std::string>(), "--max-file-size", 1, INT_MAX);
  if (parsed.count("format")) {
    o.format = parsed["format"].as<std::string>();
    for (char& c : o.format) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (o.format == "jpeg") o.format = "jpg";
    if (o.format == "tiff") o.format = "tif";
    const bool text = o.format == "csv" || o.format == "json";
    if (o.format != "png" && o.format != "jpg" && o.format != "tif" && o.format != "webp" &&
        !(text && bright))
      throw UsageError("--format '" + o.format + "': choose png, jpg, tif or webp" +
                       (bright ? std::string(", csv or json")
                               : std::string(" (csv and json "
                                             "go with --bright)")));
  }
  if (parsed.count("devices")) {
    if (parsed.count("device")) throw UsageError("--device and --devices: give one of them");
    const std::string list = parsed["devices"].as<std::string>();
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string item = list.substr(start, comma - start);
      if (item.empty())
        throw UsageError("--devices '" + list + "': an empty item; give 'all' or N,N,...");
      o.devices.push_back(is_all(item) ? "all" : item);  // one spelling for batch_devices
      start = comma + 1;
    }
  }

  for (const char* once : {"files-from", "shard", "report"})
    if (parsed.count(once) > 1)
      throw UsageError(
          "--" + std::string(once) + " given " + std::to_string(parsed.count(once)) +
          " times; give it once" +
          (std::string(once) == "files-from" ? " (one list: cat A B | --files-from -)" : ""));
  const bool listing = parsed.count("files-from") > 0;
  if (parsed.count("null") && !listing)
    throw UsageError("-0 (--null) says how --files-from's list is separated: give --files-from");
  if (listing && !parsed.count("output"))
    throw UsageError("--files-from '" + parsed["files-from"].as<std::string>() +
                     "': the outputs mirror the listed paths under -o FOLDER; give -o");
  if (parsed.count("shard")) o.shard = parse_shard(parsed["shard"].as<std::string>());
  if (parsed.count("report")) {
    o.report = parsed["report"].as<std::string>();
    if (o.report.empty()) throw UsageError("--report '': name the report file ('-': stdout)");
    if (is_image_name(o.report))
      throw UsageError("--report '" + o.report +
                       "' names an image; the report is JSON lines (e.g. report.jsonl)");
    if (o.report == "-" && o.bench_runs > 0)
      throw UsageError("--report - and --bench both write to standard output; name a file");
  }

  // An empty name is no file (and the checks below read names' last characters).
  for (const std::string& f : files)
    if (f.empty()) throw UsageError("an empty file argument ''; name a file, a folder or '-'");
  if (parsed.count("output") && parsed["output"].as<std::string>().empty())
    throw UsageError("-o '': name the output folder");
  if (parsed.count("output")) {
    o.output = parsed["output"].as<std::string>();
    o.inputs = files;
    o.batch = true;
    if (listing) {
      // Read by the batch (run_batch), not here: parsing reads no files.
      o.files_from = parsed["files-from"].as<std::string>();
      o.files_from_nul = parsed.count("null") > 0;
    }
  } else {
    if (files.size() < 2)
      throw UsageError("expected INPUT and OUTPUT, got " + std::to_string(files.size()) +
                       " file argument" + (files.size() == 1 ? "" : "s") +
                       " (several inputs: INPUT... -o FOLDER)");
    o.output = files.back();
    o.inputs.assign(files.begin(), files.end() - 1);
    std::error_code ec;
    o.batch = o.inputs.size() > 1 || o.output.back() == '/' ||
              (o.output != "-" && std::filesystem::is_directory(o.output, ec)) ||
              (o.inputs[0] != "-" && std::filesystem::is_directory(o.inputs[0], ec));
    // Several inputs and a last argument that does not exist: a folder by mistake, or a file
    // name by mistake (`a.png b.png out.png`); only -o or a trailing '/' creates a folder.
    if (o.inputs.size() > 1 && o.output != "-" && o.output.back() != '/' &&
        !std::filesystem::exists(o.output, ec) && !ec)  // not for EACCES: that is the run's
      throw UsageError("several inputs and '" + o.output +
                       "', which does not exist: give the output folder as -o " + o.output +
                       " or " + o.output + "/ (several inputs write into a folder)");
    // A folder and a new name that reads as a file (`photos out.png`, with --bright also
    // `photos pts.csv`): a file was meant.
    if (o.inputs.size() == 1 && o.inputs[0] != "-" && o.output != "-" && o.output.back() != '/' &&
        std::filesystem::is_directory(o.inputs[0], ec) && !std::filesystem::exists(o.output, ec) &&
        !ec && names_an_output_file(o.output, parsed.count("bright") > 0))
      throw UsageError(
          "'" + o.inputs[0] + "' is a folder, and a folder of outputs would be named '" + o.output +
          "': name the output folder (or -o " + o.output + " to have a folder of that name)");
  }
  if (o.inputs.empty() && o.files_from.empty())
    throw UsageError("no INPUT given (-o names the output folder)");
  if (o.batch) {
    for (const std::string& in : o.inputs)
      if (in == "-")
        throw UsageError("'-' (stdin) is an INPUT only on its own: INPUT OUTPUT, not a batch");
    if (o.output == "-")
      throw UsageError("'-' (stdout) takes one image: give one INPUT, not a batch");
    if (o.sweep_wg)
      throw UsageError("--sweep-wg times one image: give one INPUT and one OUTPUT file");
    // A batch times its stages, not repeated kernels: every image runs once.
    if (parsed.count("bench-format"))
      throw UsageError(
          "--bench-format formats one image's report; a batch's --bench prints a "
          "table of its stages");
    o.stage_times = o.bench_runs > 0;
    o.bench_runs = 0;
  } else if (o.devices.size() > 1 || (o.devices.size() == 1 && o.devices[0] == "all")) {
    throw UsageError("--devices '" + parsed["devices"].as<std::string>() +
                     "' spreads a batch over devices; one image runs on one: use --device");
  } else {
    for (const char* batch_only : {"shard", "report"})
      if (parsed.count(batch_only))
        throw UsageError("--" + std::string(batch_only) +
                         " goes with a batch (a folder, several inputs, -o FOLDER or "
                         "--files-from); one image runs as INPUT OUTPUT");
  }
  return o;
}

}  // namespace blurtool
