// The main job of blurtool: one image (or, with pipeline/batch_pipeline.h, a folder of them) read,
// decoded, uploaded, filtered by one operation (box blur, Gaussian blur, bright points),
// downloaded, encoded and written.
//
// The job runs in three stages, each a function or type of its own here:
//   1. decode: the input's bytes (read_input) -> a Source (decode_source): RGBA pixels in the
//      depth and working space the device takes them in, or a JPEG's colour planes or DCT
//      blocks that the device turns into RGBA (--jpeg-codec; image/jpeg_planes.h);
//   2. device: a Source -> a Rendered (DeviceStage::run): the filter run on the device, in one
//      piece or in tiles, turned into the result (an RGBA image, a JPEG output's colour planes
//      or DCT blocks, or the bright points' text);
//   3. encode and write: a Rendered -> bytes (encode_output) -> the output (write_output).
// run_single chains them for one image, opening the device and making its filter on a second
// thread while the image decodes; run_batch (pipeline/batch_pipeline.h) runs them on thread pools.
//
// An image whose run would take more host memory than --max-memory runs in strips of rows
// instead (pipeline/strip_pipeline.h): the decoder hands out rows (image/row_codec.h), each strip
// with the filter's halo goes through the same DeviceStage, and its rows go to an encoder that
// writes as it goes.
//
// Everything here depends only on the OpenCL runtime, image I/O and the filters; reports
// (benchmarks, sweeps) are made by the caller from what run_single returns.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "filters/filter.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/tiled_run.h"
#include "filters/working_space.h"
#include "image/image_io.h"
#include "image/jpeg_planes.h"
#include "image/metadata.h"
#include "pipeline/file_list.h"
#include "runtime/cl_runtime.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace blurtool {

/// Everything the job needs: the operation and its parameters, the encoders' settings, the
/// devices, the host threads, the limits, the files and the batch switches. The command line
/// (cli/options.h) fills one, with a few options of its own besides.
struct JobOptions {
  /// The operation: --box, --gauss or --bright; its parameters are the matching *_params.
  enum class Operation { box, gauss, bright } operation = Operation::box;
  BoxParams box_params;        ///< --box
  GaussParams gauss_params;    ///< --gauss
  BrightParams bright_params;  ///< --bright
  int quality = 95;            ///< JPEG quality, 1..100
  /// --subsampling: JPEG chroma subsampling
  ChromaSubsampling subsampling = ChromaSubsampling::s420;
  /// --png-level: zlib level of PNG output, 0..9
  int png_level = kDefaultPngLevel;
  /// --strip: what of the input's metadata the output keeps (image/metadata.h): all by
  /// default, the colour (ICC profile, PNG sRGB/gAMA/cHRM) with --strip, none with --strip=all
  KeepMetadata keep_metadata = KeepMetadata::all;
  /// --jpeg-codec: where JPEG's per-pixel colour stages run (chroma upsampling and YCbCr -> RGB
  /// when decoding, RGB -> YCbCr and chroma downsampling when encoding): `host`, in
  /// libjpeg-turbo; `device`, in kernels of the filter's device (filters/ycbcr_device.h), the
  /// same bytes either way; `automatic`, on a GPU in a batch (decoding to planes once every
  /// device of the batch is known to be one; single mode keeps auto on the host:
  /// for_one_image in pipeline.cpp says why).
  enum class JpegCodec { automatic, host, device } jpeg_codec = JpegCodec::automatic;
  /// INPUT arguments: files, folders or "-" (stdin).
  std::vector<std::string> inputs;
  /// OUTPUT: a file, "-" (stdout) or, in batch mode, a folder.
  std::string output;
  /// Batch mode: several inputs, a folder input, -o, or an OUTPUT that is a folder (an
  /// existing one, or a name ending in '/'). Single mode replaces OUTPUT if it exists.
  bool batch = false;
  /// --files-from: a list of paths ("-": standard input), read by run_batch (read_file_list in
  /// pipeline/file_list.h): batch inputs whose outputs mirror their paths under the output
  /// folder (mirrored_path); folders among them are scanned as folder INPUTs are. Empty: none.
  std::string files_from;
  bool files_from_nul = false;  ///< -0: the list's paths end in NUL bytes, not newlines
  Shard shard;                  ///< --shard I/N: the share of the batch's files this run takes
  /// --report: a file that gets one JSON line for every input of the batch and a summary line
  /// (pipeline/batch_report.h), "-" for standard output; empty: none
  std::string report;
  bool recursive = false;       ///< -r: descend into sub-folders of folder inputs
  bool force = false;           ///< --force: replace existing outputs in batch mode
  bool orient = true;           ///< false with --no-orient: keep a JPEG's stored pixel order
  bool linear_light = false;    ///< --linear-light: blur in linear light
  bool straight_alpha = false;  ///< --straight-alpha: do not premultiply by alpha
  bool quiet = false;           ///< --quiet: only errors on stderr
  /// --bench with a batch: after the summary, the time each stage took per image (run_batch)
  bool stage_times = false;
  std::string format;  ///< --format: png, jpg, tif, webp (csv, json with --bright); empty: by name
  bool webp_lossless = false;  ///< --webp-lossless: WebP output lossless, not lossy at quality
  /// The encoder settings the command line gave rather than left at their defaults
  /// (--webp-lossless is webp_lossless itself): an output format that takes none of one gets a
  /// warning (unused_encoder_options).
  struct {
    bool quality = false, subsampling = false, png_level = false;
  } given;
  std::string device;  ///< --device: index or name substring; empty: BLURTOOL_DEVICE or default
  std::vector<std::string> devices;  ///< --devices: device specs ("all" in any case as "all");
                                     ///< empty: --device
  int jobs = 0;  ///< --jobs: host threads decoding and encoding; 0: hardware threads
  std::uint64_t max_pixels = kDefaultMaxPixels;         ///< --max-pixels: width * height
  std::uint64_t max_file_bytes = kDefaultMaxFileBytes;  ///< --max-file-size: bytes
  TileSize max_tile;  ///< --max-tile: output tiles of at most this size; 0x0: the device's limits
  /// --max-memory: bytes of host memory an image's run may take (pipeline/strip_pipeline.h:
  /// larger images run in strips of rows); 0: default_max_memory()
  std::uint64_t max_memory = 0;
};

/// What an output holds: an image (PNG, JPEG, TIFF or WebP) or, with --bright, the point list.
enum class OutputKind { png, jpeg, csv, json, tiff, webp };

/// Whether `path` ends in .png, .jpg, .jpeg, .tif, .tiff or .webp (any case): the one test of
/// which names are images, for outputs and for the files a batch takes from a folder.
bool is_image_name(const std::string& path);

/// The kind of output `path` gets: --format if given, else its extension (.png, .jpg, .jpeg,
/// .tif, .tiff, .webp;
/// .csv and .json with --bright). For "-" (stdout) without --format: `input`'s extension when it
/// names an image, else PNG. Throws blurtool::UsageError naming `path` for other extensions.
OutputKind output_kind(const std::string& path, const std::string& input, const JobOptions& o);

/// The name of an output kind in messages: "PNG", "JPEG", "CSV", "JSON", "TIFF", "WebP".
const char* output_kind_name(OutputKind kind);

/// A warning for each encoder setting `o` gives that no output of `kinds` (a run's output
/// formats) takes, naming the option and the formats: --quality (JPEG and lossy WebP),
/// --subsampling (JPEG), --png-level (PNG and TIFF's deflate), --webp-lossless (WebP). Such a
/// setting is ignored, not refused, as ImageMagick and libvips ignore it; in a batch of several
/// formats, one that some outputs take is no mistake and goes unsaid.
std::vector<std::string> unused_encoder_options(const JobOptions& o,
                                                const std::set<OutputKind>& kinds);

/// The working space of o's operation for a file of `channels` (1-4) that stores 16-bit samples
/// (`deep`) or not, with alpha below full scale somewhere (`transparent`): linear light with
/// --linear-light, premultiplied where there is transparency (unless --straight-alpha), 8-bit
/// alpha for an 8-bit file; --bright works in the stored form.
WorkingSpace working_space(const JobOptions& o, int channels, bool deep, bool transparent);

/// The depth a filter runs at for a file that stores 16-bit samples (`deep`) or not: 16 bits
/// where the file stores them or the working space is not the stored form, else 8.
inline PixelDepth filter_depth(bool deep, const WorkingSpace& space) {
  return deep || !space.is_stored_form() ? PixelDepth::u16 : PixelDepth::u8;
}

/// The depth of a decoded file's pixels in host memory, as they go to the device: the file's
/// own (16 bits for a 16-bit PNG, else 8). A blur in a working space widens 8-bit pixels on the
/// device (WorkingSpaceFilter); --bright in linear light works on pixels widened on the host.
inline PixelDepth source_depth(const JobOptions& o, bool deep, const WorkingSpace& space) {
  const bool bright_linear =
      o.operation == JobOptions::Operation::bright && !space.is_stored_form();
  return deep || bright_linear ? PixelDepth::u16 : PixelDepth::u8;
}

/// Whether o's JPEG colour stages run on `device` (--jpeg-codec; auto: on a GPU; single mode
/// makes auto `host` first). A CPU device's kernels would only take the cores libjpeg-turbo's
/// SIMD code runs on.
inline bool jpeg_colour_on_device(const JobOptions& o, const DeviceInfo& device) {
  return o.jpeg_codec == JobOptions::JpegCodec::device ||
         (o.jpeg_codec == JobOptions::JpegCodec::automatic && (device.type & CL_DEVICE_TYPE_GPU));
}

/// Where JPEG's DCT stages run when its colour stages go to the device (the IDCT of decoding,
/// the forward DCT and quantisation of encoding): on the device (the host then only
/// entropy-codes), the coefficients moved whole, unless the environment sets
/// BLURTOOL_JPEG_DCT=host (with libjpeg-turbo: to measure the colour stages alone), =sparse
/// (moved as SparseBlocks, a third of the bytes: slower on the H100 machine, kernels/NOTES.md
/// "Sparse DCT blocks"; for measurements and tests), =whole (never entropy-decoded on the
/// device) or =entropy (a batch's JPEGs entropy-decoded on any device, in batches). Unset
/// (automatic): a batch's JPEGs are entropy-decoded on the device where every device is a GPU
/// (measured faster there, slower on PoCL's CPU device: docs/notes/whole-job.md, "JPEG entropy
/// decoding on the device"), their blocks moved whole otherwise.
enum class JpegDct { host, whole, sparse, entropy, automatic };
inline JpegDct jpeg_dct_mode() {
  static const JpegDct mode = [] {
    const char* e = std::getenv("BLURTOOL_JPEG_DCT");
    const std::string s = e ? e : "";
    return s == "host"      ? JpegDct::host
           : s == "whole"   ? JpegDct::whole
           : s == "sparse"  ? JpegDct::sparse
           : s == "entropy" ? JpegDct::entropy
                            : JpegDct::automatic;
  }();
  return mode;
}
inline bool jpeg_dct_on_device() {
  return jpeg_dct_mode() != JpegDct::host;
}
/// Whether a batch whose devices are all GPUs (`gpus`) entropy-decodes its JPEGs on them
/// (jpeg_dct_mode).
inline bool jpeg_entropy_on_device(bool gpus) {
  const JpegDct mode = jpeg_dct_mode();
  return mode == JpegDct::entropy || (mode == JpegDct::automatic && gpus);
}

/// The names of --jpeg-codec.
inline const std::vector<Named<JobOptions::JpegCodec>>& jpeg_codec_table() {
  static const std::vector<Named<JobOptions::JpegCodec>> table = {
      {JobOptions::JpegCodec::automatic, "auto", "the device in a batch on GPUs"},
      {JobOptions::JpegCodec::host, "host", "libjpeg-turbo on the host"},
      {JobOptions::JpegCodec::device, "device", "kernels on the filter's device"}};
  return table;
}

/// What a filter is made for: the width, height, depth and working space of its images; a
/// filter is reused (batch) or made ahead (single mode) only for an image of the same key.
using FilterKey = std::tuple<int, int, PixelDepth, WorkingSpace>;

/// A decoded input as the device takes it (the decode stage's output): RGBA8, or RGBA16
/// (`wide`) for a 16-bit PNG or --bright in linear light. A blur in a working space
/// (premultiplied alpha for an image with transparency unless --straight-alpha, linear light
/// with --linear-light; see filters/working_space.h) runs at 16 bits on the device whatever the
/// depth here. Rows top to bottom, 4 interleaved samples a pixel, no padding.
struct Source {
  Image rgba;      ///< RGBA8, when !wide() and !has_planes(); grey or RGB where decoded `native`
  Image16 rgba16;  ///< RGBA16, when wide()
  /// A JPEG decoded only to its colour planes (decode_source with `planes`), which the device
  /// turns into RGBA8 (PlaneTransfer); rgba is then empty.
  YCbCrPlanes planes;
  int channels = 0;    ///< the file's own channel count (1-4)
  bool deep = false;   ///< the file stores 16-bit samples: a PNG output keeps 16 bits
  WorkingSpace space;  ///< the blur's working space (the stored form for --bright)
  /// What the output carries of the input's metadata (metadata_for_output of the file's)
  ImageMetadata metadata;
  /// Where planes.dct.entropy was decoded on the device (EntropyDecoder): that buffer, from
  /// element device_blocks_base; run_filter reads the blocks there instead of uploading.
  const cl::Buffer* device_blocks = nullptr;
  std::size_t device_blocks_base = 0;
  bool wide() const { return rgba16.channels != 0; }
  bool has_planes() const { return !planes.empty(); }
  /// The pixels' size in host memory, bytes.
  double bytes() const {
    return wide()         ? 2.0 * rgba16.pixels.size()
           : has_planes() ? static_cast<double>(planes.samples.size() + planes.dct.bytes())
                          : static_cast<double>(rgba.pixels.size());
  }
  /// The depth of the pixels in host memory (and of the filter's input and output).
  PixelDepth depth() const { return wide() ? PixelDepth::u16 : PixelDepth::u8; }
  /// The depth the filter runs at (16 bits in a working space; see filter_depth).
  PixelDepth filter_depth() const { return blurtool::filter_depth(wide(), space); }
  int width() const { return wide() ? rgba16.width : has_planes() ? planes.width : rgba.width; }
  int height() const { return wide() ? rgba16.height : has_planes() ? planes.height : rgba.height; }
  FilterKey key() const { return {width(), height(), depth(), space}; }
};

/// `image` as decoded, prepared for o's operation: expanded to RGBA, at 16 bits where the file
/// is deep or for --bright in linear light (source_depth); a blur in a working space keeps
/// 8-bit pixels at 8 bits (the device widens them). With `native`, 8-bit grey or RGB pixels
/// in their stored form keep their 1 or 3 channels (for the host's filters, which take any
/// channel count: a quarter less to filter than RGBA, and no expansion).
Source make_source(DecodedImage image, const JobOptions& o, bool native = false);

/// An input's encoded bytes and the name its messages use ("<stdin>" for "-").
struct InputBytes {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

/// Decode stage, first half: the bytes of `input` (a file, or "-" for standard input), at most
/// o.max_file_bytes. Throws blurtool::Error naming the input when it cannot be read or is
/// larger.
InputBytes read_input(const std::string& input, const JobOptions& o);

/// Decode stage, second half: `in` decoded (oriented unless --no-orient, at most o.max_pixels)
/// and prepared by make_source. With `planes`, a JPEG the device can take as colour planes
/// (jpeg_planes_supported; a blur, in one piece: no --max-tile) is decoded only to them
/// (Source::planes), or to its DCT blocks (jpeg_dct_on_device), held sparse with `sparse`
/// (SparseBlocks), or with `entropy` (and blocks on the device) not decoded at all where
/// parse_entropy_scan takes it: planes.dct.entropy holds its scan packed for EntropyDecoder.
/// With `native` (not `planes`), an 8-bit grey or RGB image keeps its channels
/// (make_source): for the host's filters only. Warnings (each naming the input) are
/// appended to `warnings`. Throws blurtool::Error naming the input for a file that is no image
/// it can decode.
Source decode_source(const InputBytes& in, const JobOptions& o, std::vector<std::string>* warnings,
                     bool planes = false, bool sparse = false, bool native = false,
                     bool entropy = false);

/// What an output of `in` carries of its metadata (image/metadata.h): read from its bytes and
/// prepared by metadata_for_output as o.keep_metadata says, the EXIF orientation set to 1 where
/// the decoder turned a JPEG upright (o.orient). Warnings (each naming the input) are appended to
/// `warnings`: damaged metadata left out, and --linear-light on colour that is not sRGB.
/// Never throws for bad metadata.
ImageMetadata output_metadata(const InputBytes& in, const JobOptions& o,
                              std::vector<std::string>* warnings);

/// The filter of o's operation for a width x height image on `runtime`; `wg` overrides the
/// Gaussian work-group size (the --sweep-wg rows). Its input and output have `depth` (the
/// source's, Source::depth()); a blur in a working space that is not the stored form runs at
/// 16 bits inside a WorkingSpaceFilter that converts from and to `depth`. Throws
/// blurtool::UsageError for a schedule the device cannot run.
std::unique_ptr<Filter> make_filter(Runtime& runtime, const JobOptions& o, int width, int height,
                                    WorkGroup wg = {}, PixelDepth depth = PixelDepth::u8,
                                    WorkingSpace space = {});

/// Pixels of context a tile (or a strip) needs around its output pixels, on each side: a
/// blur's radius; for bright points the glow's reach (finding the points needs none).
int operation_halo(const JobOptions& o);

/// The output tile size for o's operation on a width x height image on `runtime`'s device:
/// {width, height} when it runs in one piece, else the tiles plan_tiles() finds (the device's
/// limits, or --max-tile) with operation_halo as halo (bright points: sides rounded down to
/// whole blocks). `wide`: the filter runs at 16 bits (a 16-bit file, or a working space;
/// more device memory a pixel). `timed_by`: the option that times this run ("--bench",
/// "--sweep-wg") or empty; a timed run is one piece, so that tiles then throw blurtool::UsageError
/// naming it. Throws blurtool::Error when no tile fits the device.
TileSize operation_tiles(const Runtime& runtime, const JobOptions& o, int width, int height,
                         bool wide = false, const std::string& timed_by = {});

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

/// One image's result, ready to encode (the device stage's output): an RGBA image (8 or 16
/// bits, the Source's size) and the channel count (1-4, the input's) it is written with, or
/// text. The RGBA image is reduced to `channels` by encode_output, so that in a batch this host
/// work runs on the encoding threads, not the device's.
struct Rendered {
  Image image;
  /// A JPEG output's colour planes, made on the device (image is then empty)
  YCbCrPlanes planes;
  Image16 image16;    ///< the result of a 16-bit run (image is then empty)
  bool deep = false;  ///< the input stored 16 bits: a PNG is written with 16
  int channels = 4;
  std::string text;
  ImageMetadata metadata;  ///< written into a PNG or JPEG output (the Source's)
};

/// A run's result and its timings (`timings.output` is left empty).
struct SourceRun {
  Rendered rendered;
  FilterRun timings;
};

/// A run of `filter` (made by make_filter for `source`'s size, depth and working space) over
/// `source` in one piece (runs as run_filter: 0 once, else a warm-up and `runs` timed): the
/// result (the blurred image, or for --bright the point list as csv or json, or the input with
/// a glow at each point) with its timings. A blur's 8-bit result for a JPEG output comes back
/// as its colour planes, made on the device, where jpeg_colour_on_device says so.
SourceRun render_source(Runtime& runtime, const JobOptions& o, Filter& filter, const Source& source,
                        OutputKind kind, int runs);

/// The result for `source` made tile by tile (run_filter_tiled; for --bright
/// find_bright_points_tiled, then the text or draw_glow_tiled): the same as render_source().
/// Blurs run every tile with the schedule auto takes for the whole image
/// (resolve_box_schedule, resolve_gauss_schedule); each schedule's arithmetic for a pixel
/// depends only on its window, so the bytes are the same (separable-linear: within 1 level, see
/// --max-tile in the man page).
/// `origin`: where `source` lies in the image (a strip's or piece's place), which filters that
/// align to the image take (Filter::set_origin).
Rendered render_tiled(Runtime& runtime, const JobOptions& o, const Source& source, OutputKind kind,
                      TileSize tiles, Origin origin = {});

/// What a caller asks of the device stage beyond JobOptions: timed runs and how to find a
/// filter that fits (the command line's --bench and --sweep-wg). The default: one untimed run.
struct DeviceRequest {
  int runs = 0;          ///< 0: one untimed run; else a warm-up and `runs` timed repetitions
  std::string timed_by;  ///< the option asking for timed runs, named if the image needs tiles
  /// Work-group sizes to try, in order, when the filter cannot be made with the default one
  /// (UsageError: e.g. local memory for a large radius); null: that error is thrown.
  std::function<std::vector<WorkGroup>(const Runtime&)> fallback_work_groups;
  /// Single mode: make the filter while the image decodes, from its header.
  bool make_ahead = true;
};

/// The device stage on one runtime (one queue): Source -> Rendered. Keeps the last filter it
/// made and reuses it for the next source of the same FilterKey (a batch of same-size images
/// builds its filter once). Not thread-safe: one per device thread.
class DeviceStage {
 public:
  /// A stage running o's operation on `runtime`; both must outlive it.
  DeviceStage(Runtime& runtime, const JobOptions& o) : runtime_(runtime), o_(o) {}

  /// Takes `filter` (made ahead, e.g. from the image's header) as the filter for `key`.
  void adopt(std::unique_ptr<Filter> filter, const FilterKey& key) {
    filter_ = std::move(filter);
    key_ = key;
  }

  /// `source` filtered and rendered for `kind`: in one piece (with the kept filter, or a new
  /// one for its key) or, where the device cannot hold it, in tiles (operation_tiles; no
  /// timings then). Throws blurtool::Error for a device fault (see with_device_faults),
  /// UsageError for a schedule the device cannot run or a timed run that needs tiles, cl::Error
  /// for other OpenCL failures; after any failure the kept filter is dropped.
  SourceRun run(const Source& source, OutputKind kind, const DeviceRequest& request = {});

  /// Where the next sources lie in the image (pixels; default 0, 0): a strip's or a column
  /// piece's place, for filters that align to the image (Filter::set_origin).
  void set_origin(Origin origin) { origin_ = origin; }

  /// The kept filter (null if none), e.g. for a benchmark report of the last run.
  Filter* filter() const { return filter_.get(); }
  /// Hands the kept filter over (it is no longer kept).
  std::unique_ptr<Filter> release_filter() { return std::move(filter_); }

 private:
  SourceRun run_unguarded(const Source& source, OutputKind kind, const DeviceRequest& request);

  Runtime& runtime_;
  const JobOptions& o_;
  std::unique_ptr<Filter> filter_;
  FilterKey key_;
  Origin origin_;
};

/// The warning that `output`, a JPEG, drops the transparency of its image (JPEG has no alpha;
/// the result's colour shows, black where fully transparent): "OUTPUT: JPEG has no alpha: ...".
std::string jpeg_drops_alpha(const std::string& output);

/// Encode stage: the bytes of `r` in `kind` (JPEG at o.quality and o.subsampling, PNG at
/// o.png_level), its image reduced to r.channels as it is encoded (or r.planes compressed,
/// encode_jpeg_planes); csv and json are r.text. A
/// 16-bit result is written as a 16-bit PNG when the input was deep, else as 8 bits.
/// `threads` caps the threads encoding one image (a PNG's deflate strips, a large JPEG's
/// restart strips; 0: the hardware's); a batch of several images passes 1, since its encoding
/// threads already fill the cores. The bytes do not depend on it. Throws blurtool::Error for an
/// image the format cannot hold (a JPEG side above 65535).
/// A PNG or JPEG carries r.metadata (insert_metadata); what it cannot hold is named in a warning
/// naming `output`, appended to `warnings` (if not null).
std::vector<std::uint8_t> encode_output(const Rendered& r, OutputKind kind, const JobOptions& o,
                                        int threads, const std::string& output = {},
                                        std::vector<std::string>* warnings = nullptr);

/// JPEG stores each side in 16 bits, WebP in 14: throws blurtool::Error "OUTPUT: the image is
/// WxH, too large for JPEG ..." (`output` as the message names it) for a JPEG `kind` of a side
/// above 65535, or "... too large for WebP ..." for a WebP of a side above 16383, before any
/// blur; nothing for other kinds and sizes.
void check_jpeg_sides(OutputKind kind, int width, int height, const std::string& output);

/// The encoders' settings of o (JPEG quality and subsampling, PNG level) on `threads` threads.
EncodeOptions encode_options(const JobOptions& o, int threads);

/// Write stage: `bytes` to standard output for "-", else to `path` as write_file writes an
/// image's output (a regular file atomically, replaced only once complete; with IfExists::keep
/// never replaced). Throws blurtool::Error naming the output ("<stdout>") on any failure, and
/// where `if_exists` is keep and `path` exists.
void write_output(const std::string& path, const std::vector<std::uint8_t>& bytes,
                  IfExists if_exists = IfExists::replace);

/// Takes the bytes of an output as they are made.
using ByteSink = std::function<void(const std::uint8_t* data, std::size_t size)>;

/// Where an output made in pieces goes: its bytes in order (`append`), or, for a format that
/// goes back to its header once the rest is written (a TIFF: libtiff points the header at the
/// directory it writes last), bytes at a byte offset from the output's start (`write_at`: set
/// only where the output is a regular file or its temporary file, empty for a pipe or a
/// device). One output takes one or the other.
struct OutputSink {
  ByteSink append;
  std::function<void(std::uint64_t offset, const std::uint8_t* data, std::size_t size)> write_at;
};

/// Write stage for an output made in pieces (strips): `make` is called with a sink that writes
/// to standard output for "-" (write_at where it is a regular file, from where it stands, and
/// left after the bytes written), else into an OutputFile of `path` (a temporary file renamed
/// into place once `make` returns, removed if it throws: no partial file; a device or named
/// pipe refused or written into as `special` says, and then, like standard output, given the
/// bytes as they are made). Returns false, and writes nothing, where `if_exists` is keep and
/// `path` exists before (`make` is not called) or appeared meanwhile; true otherwise. Throws
/// what `make` throws, and blurtool::Error naming the output ("<stdout>") on any write failure.
bool write_output_streamed(const std::string& path, OutputFile::Special special, IfExists if_exists,
                           SyncFolder sync_folder,
                           const std::function<void(const OutputSink&)>& make);

/// The device a run names: `spec`, from --devices (its first), else --device, else
/// BLURTOOL_DEVICE, and `source`, where it came from as messages name it ("--device host",
/// "BLURTOOL_DEVICE=host"); both empty where none is named.
struct NamedDevice {
  std::string spec, source;
};
NamedDevice named_device(const JobOptions& o);

/// Whether a device spec (--device, --devices, BLURTOOL_DEVICE) names the host's cores: "host",
/// in any case.
bool is_host_spec(const std::string& spec);

/// Why o's job cannot run on the host's cores (box_blur_host in filters/box/box_host.h,
/// gauss_blur_host in filters/gauss/gauss_host.h), known from the options alone: --bright, a
/// device schedule's options, what gauss_host_refusal() refuses, --max-tile,
/// --jpeg-codec device, --linear-light; "" where it can. An image can still be refused as it
/// decodes (runs_on_host).
std::string host_job_refusal(const JobOptions& o);

/// Whether a decoded `source` can be filtered on the host's cores: 8-bit RGBA pixels (not colour
/// planes) in their stored form. 16-bit files and images with transparency (blurred
/// premultiplied, at 16 bits) go to a device.
bool runs_on_host(const Source& source);

/// The box filter or Gaussian of o (host_job_refusal empty) over `source` (runs_on_host) on
/// `threads` host threads (0: the hardware's), with the source's channels and metadata: a box
/// filter the same bytes as any device makes, a Gaussian within 1 level of its reference as
/// every device's is. The result's pixels reuse `buffer`'s memory where it holds enough.
Rendered filter_on_host(const JobOptions& o, const Source& source, int threads, Image buffer = {});

/// What single mode leaves for its caller's reports: the device and filter it ran on, the
/// decoded source, and the times of the run's parts. `filter` is null when the image ran in
/// tiles (never for a timed run).
struct SingleRun {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Filter> filter;
  Source source;
  FilterRun timings;     ///< the filter's kernel, upload and download times (empty output)
  double decode_ms = 0;  ///< reading and decoding the input, milliseconds
  double encode_ms = 0;  ///< encoding and writing the output, milliseconds
};

/// Single mode: o.inputs[0] (a file or "-") through o's operation to o.output (a file,
/// replaced atomically if it exists, or "-"). The device of --device (or the first of
/// --devices) is opened, and the filter made for the size the header gives, on a second thread
/// while the image decodes. Warnings go to stderr unless --quiet. Throws blurtool::UsageError
/// for a bad output name, an output that is the input, or stdout on a terminal (before any
/// work); blurtool::Error (or cl::Error) for a failing file or device, a decoding error before
/// a device error.
SingleRun run_single(const JobOptions& o, const DeviceRequest& request = {});

}  // namespace blurtool
