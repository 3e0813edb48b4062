// The Gaussian blur on an OpenCL device: every schedule of the Gaussian write-up
// ("Compute shaders in graphics: Gaussian blur", with fragment and compute shaders), each
// computing the meaning defined by gauss_blur_reference() in filters/gauss/gauss_reference.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filters/edge_mode.h"
#include "filters/filter.h"
#include "filters/intermediate.h"
#include "runtime/cl_runtime.h"
#include "util/named.h"

namespace blurtool {

/// Schedules of the Gaussian blur (--variant). Each has one row in the table of schedules
/// (filters/gauss/gauss_schedule.h) and its host side in the host file of its kernel family:
/// gauss_window.cpp, gauss_buffer.cpp, gauss_mma.cpp beside kernels/gauss_window.cl,
/// gauss_buffer.cl, gauss_mma.cl.
enum class GaussVariant {
  /// The tuning table's pick, else fused-mma or separable-mma (tensor cores), fused or
  /// separable-buffer (other GPUs), tiled (CPUs): resolve_gauss_variant.
  automatic,
  naive,             ///< one pass, (2R+1)^2 image reads per pixel
  naive_local,       ///< one pass over a tile plus halo staged in local memory
  separable,         ///< horizontal then vertical pass, 2R+1 reads each
  separable_linear,  ///< the same, taps paired through the linear filter: 1 + 2 ceil(R/2)
  separable_local,   ///< each pass stages its row (Gx1) or column (1xG) segment locally
  fused_local,       ///< one pass: tile in local memory, horizontal pass in local memory
  tiled,             ///< one pass over buffers, a tile per work-item, rows in a ring (CPUs)
  fused,             ///< one pass over buffers, built per radius, tiles of TW x 8 (GPUs)
  separable_buffer,  ///< columns then rows over buffers, built per radius, 16-bit intermediate
  separable_mma,     ///< the same as band-matrix products on NVIDIA tensor cores (RGBA8)
  fused_mma,         ///< separable-mma's products in one pass, through local memory (RGBA8)
};

/// Name table: auto, naive, naive-local, separable, separable-linear, separable-local,
/// fused-local, tiled, fused, separable-buffer, separable-mma, fused-mma.
const std::vector<Named<GaussVariant>>& gauss_variant_table();

/// Whether a variant has two passes and so an intermediate image.
bool gauss_is_two_pass(GaussVariant variant);

/// Whether a variant's work-group is a row segment (--wg Gx1: Gx1 rows, 1xG columns) rather
/// than a 2-D tile (--wg WxH).
bool gauss_row_work_group(GaussVariant variant);

/// Rows of a `tiled` tile.
constexpr int kGaussTileRows = 256;

/// Columns of a `tiled` tile for `radius` by default: 256, or the multiple of 16 (at least 16)
/// whose ring (4 ceil(R/2) + 4 rows of tile_w + 4 float4) stays within 256 KiB, a CPU's L2 or
/// a quarter of it (240 at R 30, 112 at R 63); with four outputs in registers a multiply-add
/// loads half a vector from the ring, so the L2 is what it must fit (measured: docs/notes/cpu.md,
/// "Gaussian `tiled`: four rows at a time, four outputs in registers"). --segment sets the width;
/// `blurtool tune` tries 64, 128 and 256.
int gauss_tile_width(int radius);

/// Largest `tiled` tile width (--segment), in columns; widths are multiples of 16.
constexpr int kMaxGaussTileColumns = 1024;

/// Work-items of a `fused` work-group (--wg Gx1) by default at `radius` on `device`: the
/// default parameter table's (filters/schedule_table.h, default_parameter_table: 256 up to R
/// 32, 128 beyond). A default-constructed DeviceInfo gives the entry for any device.
int gauss_fused_default_group(int radius, const DeviceInfo& device = {});

/// Input columns of a `fused` tile at most (TW + 2R): 8 rows of them in float4 are 32 KiB of
/// local memory, two thirds of the 48 KiB most GPUs give a work-group.
constexpr int kGaussFusedColumns = 256;

/// Output columns of a `fused` tile for `radius` and a work-group of `group` work-items: the
/// largest multiple of 8 with TW + 2R <= min(2 G, kGaussFusedColumns) (each work-item then
/// takes at most two columns of the vertical pass), at least 8.
int gauss_fused_tile_width(int radius, int group);

/// Local memory of a `fused` work-group, in bytes: `rows` rows of TW + 2R + 1 float4.
size_t gauss_fused_local_bytes(int radius, int group, int rows);

/// `separable-buffer`: the most outputs a work-item of the column pass (--segment) accepted.
/// Its defaults (outputs a work-item, work-items G of both passes' Gx1 work-groups, G also the
/// width of the row pass's tile) are the default parameter table's
/// (filters/schedule_table.h).
constexpr int kMaxGaussSepColumnOutputs = 32;

/// Local memory of a `separable-buffer` row-pass work-group of `group` work-items, in bytes: 8
/// rows of G + 2R + 1 float4.
size_t gauss_sep_local_bytes(int radius, int group);

/// Bytes a pixel of `separable-buffer`'s intermediate buffer: 8 at `depth` u8 (four 16-bit
/// fixed-point samples, 256 times the level), 16 at u16 (float4).
size_t gauss_sep_intermediate_bytes(PixelDepth depth);

/// `separable-mma`: the largest radius (its band matrix's fragments, 2 + R/4 blocks of 16
/// inputs, live in registers, which grow with R).
constexpr int kMaxGaussMmaRadius = 64;

/// `separable-mma`'s strips: rows a warp of the column pass walks down, pixels a warp of the
/// row pass walks along: longer strips at larger radii (measured: docs/notes/gauss.md,
/// "Gaussian `separable-mma`: both passes on the tensor cores").
struct MmaStrips {
  int rows, pixels;
};
MmaStrips gauss_mma_strips(int radius);

/// `fused-mma`: the largest radius (beyond it its local memory and registers grow past what
/// pays; separable-mma takes over).
constexpr int kMaxGaussMmaFusedRadius = 32;
/// `fused-mma`'s most rows a work-group walks down (--segment, a multiple of 16).
constexpr int kMaxGaussMmaFusedRows = 1024;

/// `fused-mma`'s tile (kernels/gauss_mma.cl gauss_mma_fused): output columns (MMA_TX, a multiple of
/// 16), rows a work-group walks down by default (a multiple of 16; --segment sets them) and
/// warps of a work-group (MMA_WARPS: two of the column groups its rows read each); measured:
/// docs/notes/gauss.md, "Gaussian `fused-mma`: separable-mma in one pass, through local
/// memory".
struct MmaTile {
  int width, rows, warps;
};
MmaTile gauss_mma_tile(int radius);

/// Bytes of local memory `fused-mma` takes at `radius` with `tile`: two buffers of the 16 rows
/// of 2 (tile / 16 + blocks - 1) groups of 8 column results, 8 bytes a pixel.
size_t gauss_mma_fused_local_bytes(int radius, const MmaTile& tile);

/// Whether `v` runs its products on tensor cores: separable-mma or fused-mma.
bool gauss_is_mma(GaussVariant v);

/// Whether `device` has the tensor cores separable-mma and fused-mma need: an NVIDIA GPU of compute
/// capability 8.0 or later (mma.sync.m16n8k16 with f16 inputs).
bool gauss_has_tensor_cores(const DeviceInfo& device);

/// Whether variant `v` runs on `device` for `depth` at `radius`: every variant does, but
/// separable-mma only with tensor cores, at 8 bits, up to kMaxGaussMmaRadius, and fused-mma
/// the same up to kMaxGaussMmaFusedRadius where its local memory (default tile) fits.
bool gauss_variant_runs(GaussVariant v, const DeviceInfo& device, PixelDepth depth, int radius);

/// Largest radius of `fused` and `separable-buffer`: they are built for the radius with their
/// loops unrolled, so the build time grows with it (minutes on a CPU past R 128; measured:
/// docs/notes/gauss.md). A GPU with 48 KiB of local memory holds
/// separable-buffer's default row tile up to R 127, fused's less.
constexpr int kMaxGaussUnrolledRadius = 128;

/// Output rows of a `fused` tile (FUSED_ROWS in kernels/gauss_buffer.cl, --segment) at most;
/// the default is the default parameter table's (filters/schedule_table.h).
constexpr int kMaxGaussFusedRows = 64;

/// Largest radius accepted (the weights live in constant memory, 64 KiB on every device).
constexpr int kMaxGaussRadius = 4096;

/// How --gauss computes (--gauss-method).
/// Positions a work-item of the fast method walks on a GPU by default, the least for the streams
/// walk, which takes 16 (r + 1) up to 4 times this (--segment with --gauss-method fast sets it;
/// on CPUs a work-item walks a whole line).
constexpr int kGaussFastGpuSegment = 512;
/// The largest --segment of the fast method.
constexpr int kMaxGaussFastSegment = 1 << 16;

enum class GaussMethod {
  /// exact below kGaussPyramidSigma, pyramid from it (fast past the pyramid's largest reach);
  /// exact wherever --radius, a --variant other than auto, --wg, --segment or --intermediate
  /// is given (they choose among exact schedules).
  automatic,
  exact,    ///< the truncated Gaussian's weights (gauss_weights): cost grows with sigma
  fast,     ///< the extended box cascade (gauss_box_cascade): cost independent of sigma
  pyramid,  ///< cells of f x f pixels, a Gaussian on them, interpolated back (gauss_pyramid)
};

/// Name table: auto, exact, fast, pyramid.
const std::vector<Named<GaussMethod>>& gauss_method_table();

/// How the fast method's walks keep the results of earlier boxes (--cascade;
/// kernels/gauss_cascade.cl). Both give the same bytes.
enum class CascadeWalk {
  automatic,  ///< streams on GPUs, rings on CPUs
  rings,      ///< a ring of 2r + 3 results a box in global memory: K boxes a step (CPUs)
  streams,    ///< no rings: six boxes fed by four streams of the input, one work-item a
              ///< channel of a line segment (GPUs; K = 3 only)
};

/// Name table: auto, rings, streams.
const std::vector<Named<CascadeWalk>>& cascade_walk_table();

/// The sigma from which --gauss-method auto takes the pyramid method: where its factor becomes
/// 4 (2 x 2 kGaussPyramidCoarseSigma) and it is faster than the default exact schedule on GPUs
/// (NVIDIA H200, 3024x4032: sigma 8 pyramid 0.13 ms, exact 0.16 ms) while within 2 levels of
/// exact (docs/notes/gauss.md, "the pyramid method"). One value for every device, since the
/// halo of a tile or strip (gauss_radius) is planned before a device is chosen.
constexpr double kGaussPyramidSigma = 8.0;

/// What to compute and how.
struct GaussParams {
  double sigma = 1.0;  ///< pixels, > 0
  GaussMethod method = GaussMethod::automatic;
  int radius = -1;  ///< pixels; -1: ceil(3 sigma)
  GaussVariant variant = GaussVariant::automatic;
  Intermediate intermediate = Intermediate::rgba32f;  ///< two-pass variants only
  EdgeMode edge = EdgeMode::clamp;
  WorkGroup wg;  ///< 0x0: 16x16 for 2-D, 64x1 for row segments; fused and separable-buffer:
                 ///< the default parameter table's; the mma variants set their own
  CascadeWalk cascade = CascadeWalk::automatic;  ///< the fast method only
  int segment = 0;  ///< fused: output rows of a tile, 1..kMaxGaussFusedRows; separable-buffer:
                    ///< outputs a column-pass work-item, 1..32 (0: the default parameter
                    ///< table's);
                    ///< fused-mma: rows a work-group walks down, a multiple of 16 up to
                    ///< kMaxGaussMmaFusedRows; 0: gauss_mma_tile's; the fast method: the
                    ///< positions of a line a work-item walks (0: a whole line on CPUs, on
                    ///< GPUs kGaussFastGpuSegment or more, see gauss_cascade.cpp)
};

/// The method `params` run: --gauss-method's, or for auto exact below kGaussPyramidSigma or
/// with any option of the exact method's (radius, a variant, work-group, segment, an
/// intermediate other than rgba32f), else the pyramid, or fast where the pyramid's reach is
/// over kMaxGaussRadius (sigma above about 1030).
GaussMethod gauss_method_of(const GaussParams& params);

/// The pixels `params` read on each side of an output pixel, the halo of a tile or strip: the
/// exact method's radius (its own, or ceil(3 sigma)); the fast method's reach
/// (BoxCascade::reach).
int gauss_radius(const GaussParams& params);

/// Checks ranges and combinations. Throws blurtool::UsageError naming the option (--gauss,
/// --radius, --wg, --segment; --variant, --radius, --wg, --intermediate with --gauss-method
/// fast or pyramid, which have one schedule and no radius of their own; --segment with pyramid;
/// --cascade with any method but fast).
void validate(const GaussParams& params);

/// Whether `v` runs on `device` at `radius` for `depth` with its default work-group and tile:
/// gauss_variant_runs, and for `fused` and `separable-buffer` their local memory and
/// kMaxGaussUnrolledRadius.
bool gauss_variant_fits(GaussVariant v, const DeviceInfo& device, PixelDepth depth, int radius);

/// The variant `auto` stands for on `device` at `radius` for `depth` when no tuning table
/// answers: the first of the default table's Gaussian entries for the device
/// (filters/schedule_table.h, default_schedule_table: on NVIDIA GPUs fused-mma, then
/// separable-mma; on GPUs fused up to R 32, then separable-buffer, then separable-local; tiled
/// elsewhere) that fits there (gauss_variant_fits). Other variants are returned unchanged.
GaussVariant resolve_gauss_variant(GaussVariant variant, int radius, const DeviceInfo& device,
                                   PixelDepth depth = PixelDepth::u8);
/// One fetch of separable-linear: (1 - t) px(x + lo) + t px(x + lo + 1), times `weight`.
struct LinearTap {
  int lo;
  float t;
  float weight;
};

/// The fetches of one separable-linear pass for `weights` (2R+1, from gauss_weights): the
/// centre alone, then neighbouring taps merged in pairs on each side: 1 + 2 ceil(R/2) fetches.
std::vector<LinearTap> gauss_linear_taps(const std::vector<double>& weights);

/// `params` with the method resolved (gauss_method_of: exact, fast or pyramid; fast and pyramid
/// keep no radius of their own, gauss_radius gives their reach), and for the exact method its
/// radius resolved (gauss_radius) and auto replaced as GaussFilter does for a `width` x `height`
/// image on `device`: the tuning table's pick for the nearest tuned size (variant, work-group,
/// fused tile rows), else resolve_gauss_variant(). The tuning table is measured on RGBA8: at 16
/// bits (`depth`) auto takes resolve_gauss_variant()'s default. Throws blurtool::Error for a tuning
/// table naming an unknown variant.
GaussParams resolve_gauss_schedule(const GaussParams& params, const DeviceInfo& device, int width,
                                   int height, PixelDepth depth = PixelDepth::u8);

/// A Gaussian schedule for `width` x `height` RGBA images of `depth` (RGBA8 or RGBA16) on one
/// device: builds (or takes from the cache) its program, uploads the weights, allocates the
/// intermediate image. Every variant runs at both depths. Throws blurtool::UsageError for
/// invalid parameters or a work-group size the device or kernel cannot run (naming the limit:
/// CL_KERNEL_WORK_GROUP_SIZE or the local memory), blurtool::Error for device limits or a failed
/// build, cl::Error for other OpenCL failures.
class GaussSchedule;

class GaussFilter : public Filter {
 public:
  GaussFilter(Runtime& runtime, const GaussParams& params, int width, int height,
              PixelDepth depth = PixelDepth::u8);
  ~GaussFilter() override;

  std::string describe() const override;
  const std::vector<PassInfo>& passes() const override { return passes_; }
  std::uint64_t compulsory_bytes() const override {
    return 2ULL * pixel_bytes(depth_) * width_ * height_;  // the input read, the output written
  }
  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override;
  bool takes_buffers() const override;
  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override;
  void set_origin(int x, int y) override;

  /// The parameters with `auto`, the radius and the work-group size resolved.
  const GaussParams& params() const;

 private:
  int width_, height_;
  std::vector<PassInfo> passes_;
  // The schedule's own host side: its work-group, kernels, memory and launch
  // (gauss_schedule.h).
  std::unique_ptr<GaussSchedule> schedule_;
};

/// Gaussian-blurs RGBA8 host image `rgba` on the runtime's device; returns RGBA8.
/// Errors as GaussFilter and run_filter.
Image gauss_blur(Runtime& runtime, const Image& rgba, const GaussParams& params);
/// The same for RGBA16 (a PixelDepth::u16 schedule); returns RGBA16.
Image16 gauss_blur(Runtime& runtime, const Image16& rgba, const GaussParams& params);

}  // namespace blurtool
