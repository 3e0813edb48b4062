// The box filter on an OpenCL device: every schedule of the box-blur write-up
// ("Reverse Engineering Metal Performance Shaders (MPS) Box Blur"), each
// computing the meaning defined by box_blur_reference() in filters/box/box_reference.h.
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

/// Schedules of the box filter (--variant). Each has one row in the table of schedules
/// (filters/box/box_schedule.h) and its host side in the host file of its kernel family:
/// box_window.cpp, box_running.cpp, box_buffer.cpp beside kernels/box_window.cl,
/// box_running.cl, box_buffer.cl.
enum class BoxVariant {
  automatic,        ///< chosen per device class
  single,           ///< one pass, (2R+1)^2 reads per pixel
  single_linear,    ///< one pass, (R+1)^2 bilinear fetches of 2x2 pixels
  double_pass,      ///< horizontal then vertical pass, 2R+1 reads each
  double_linear,    ///< the same with R+1 bilinear fetches of 2 pixels each
  accumulated,      ///< running sums, one work-item per row then per column
  unrolled,         ///< accumulated, --unroll N pixels per loop iteration
  scan,             ///< running-sum rows, then MPS-style cooperative prefix-sum columns
  segmented,        ///< running sums, one work-item per segment of a row; columns as below
  segmented_local,  ///< segmented with each row staged in local memory as a prefix sum
                    ///< (both: the column pass keeps each window in local memory, a ring)
  tiled,            ///< one pass over buffers, running sums over a tile per work-item (CPUs)
  fused,            ///< one pass over buffers, a tile per work-group, rows in local memory (GPUs)
};

/// Name table: auto, single, single-linear, double, double-linear, accumulated, unrolled, scan,
/// segmented, segmented-local, tiled, fused.
const std::vector<Named<BoxVariant>>& box_variant_table();

/// Unroll factors `unrolled` accepts, as the write-up measured them.
const std::vector<int>& box_unroll_choices();

/// Largest radius accepted: sums stay exact (the rgba32f intermediate holds 255 (2R+1) exactly).
constexpr int kMaxBoxRadius = 16383;

/// Columns of a `tiled` tile (kernels/box_buffer.cl TILE_W).
constexpr int kBoxTileWidth = 256;

/// The work-group `fused` prefers on `device` (--wg CxB: C work-items along a row, B rows per
/// batch; the tile is C * kBoxFusedOutputs columns wide): the default parameter table's
/// (filters/schedule_table.h, default_parameter_table: 16x8, the fastest measured). A
/// default-constructed DeviceInfo gives the entry for any device.
WorkGroup box_fused_preferred_group(const DeviceInfo& device = {});
/// The default for radii whose preferred tile does not fit local memory (with 48 KiB, 16x8 fits
/// every radius up to 128 at 8 bits, where `fused` is the default).
constexpr WorkGroup kBoxFusedWideGroup = {32, 4};

/// Outputs per work-item along a row in `fused` (kernels/box_buffer.cl FUSED_K): odd (see
/// there); 19 was the fastest measured at every radius and size tried (docs/notes/box.md, "Box
/// `fused`: 19 outputs a work-item and tiles fitted to one wave").
constexpr int kBoxFusedOutputs = 19;
/// `fused` work-groups of 16x8 a compute unit that the default tile height plans for: as many
/// as the registers of an NVIDIA compute unit hold at the kernel's register count (docs/notes/
/// box.md, "Box `fused`: 19 outputs a work-item and tiles fitted to one wave"), and the tiles
/// are made as short as one wave of them allows.
constexpr int kBoxFusedGroupsPerUnit = 3;
/// From this radius on, `fused` tiles of odd tile rows walk up (kernels/box_buffer.cl FUSED_FLIP).
constexpr int kBoxFusedAlternateRadius = 40;
/// Most input columns a `fused` work-item reads at once (registers: twice this times its rows).
constexpr size_t kBoxFusedMaxColumns = 8;

/// segmented-local's column pass (kernels/box_running.cl box_cols_ring): columns and lanes of its
/// work-group, and consecutive rows a lane takes in each batch.
constexpr int kBoxRingColumns = 16, kBoxRingLanes = 8, kBoxRingRows = 8;

/// Pixels per work-item of `segmented` and `segmented-local`, rows of a `tiled` or `fused`
/// tile (--segment): the largest.
constexpr int kMaxBoxSegment = 4096;

/// What to compute and how.
struct BoxParams {
  int radius = 0;  ///< pixels, 0..kMaxBoxRadius
  BoxVariant variant = BoxVariant::automatic;
  Intermediate intermediate = Intermediate::rgba32f;  ///< two-pass variants only
  EdgeMode edge = EdgeMode::clamp;
  /// Pixels per loop iteration of `unrolled`, `scan` and `segmented` (one of
  /// box_unroll_choices()); 0: the variant's default (box_default_unroll).
  int unroll = 0;
  /// Pixels per work-item of the row pass of `segmented` and `segmented-local` (their column
  /// pass takes box_ring_segment() rows a work-group; where its ring does not fit local memory,
  /// one work-item per 128 rows of a column, or --segment N for `segmented`),
  /// 1..kMaxBoxSegment; 0: the variant's default (box_default_segment). For `tiled` and `fused`,
  /// the rows of a tile.
  int segment = 0;
  /// Work-group of `segmented`'s row pass over its (segment, row) grid (0x0: 4x16; and of its
  /// column pass where that is one work-item per segment: 0x0: 64x1); for `segmented-local`,
  /// Lx1: L work-items share a row (0x0: 128); for `fused`, CxB (0x0:
  /// box_fused_default_group()). The ring column pass always takes 16x8 (kBoxRing*).
  WorkGroup wg;
  /// `tiled`: the most bytes its rings of 2R+5 rows of row sums may take, all work-items
  /// together; past it each work-item keeps 8 rows and computes the leaving rows' sums again
  /// (twice the row steps). Not an option: the default suits every image, tests lower it to
  /// reach the second path at radii where its errors would still show.
  size_t tiled_ring_bytes = size_t{64} << 20;
  /// `fused`: the local memory, in bytes, that its column sums, output tile and exchanged chunk
  /// sums may take together (0: the device's); with less, fewer chunk sums are exchanged and
  /// each first row window reads more single columns. Not an option: tests lower it to reach
  /// every number of exchanged sums on a device with room for all.
  size_t fused_local_limit = 0;
};

/// The segment `variant` uses when BoxParams::segment is 0 on `device`, from the default
/// parameter table (filters/schedule_table.h, default_parameter_table, with the measurements):
/// 128 pixels for segmented, 8 for segmented-local; 0 for the variants that take no segment,
/// and for tiled and fused, whose tile rows their schedules pick by radius, image size and
/// device (box_tiled_default_segment, box_fused_default_segment).
int box_default_segment(BoxVariant variant, const DeviceInfo& device = {});

/// The unroll factor `variant` uses when BoxParams::unroll is 0 on `device`, from the default
/// parameter table: 2 for segmented and segmented-local, 8 for unrolled and scan; 0 for the
/// variants that take none (accumulated always runs 1).
int box_default_unroll(BoxVariant variant, const DeviceInfo& device = {});

/// Whether a variant has two passes and so an intermediate image (`tiled` and `fused` have
/// one).
bool box_is_two_pass(BoxVariant variant);

/// Checks ranges. Throws blurtool::UsageError naming the option at fault (--box, --unroll,
/// --segment).
void validate(const BoxParams& params);

/// Whether `variant` runs on `device` at `radius` with its default work-group: `fused` where its
/// local memory fits (box_fused_local_bytes); every other variant everywhere.
bool box_variant_runs(BoxVariant variant, int radius, const DeviceInfo& device,
                      PixelDepth depth = PixelDepth::u8);

/// The variant `auto` stands for on `device` at `radius` without a tuning table: the first of
/// the default table's box entries for the device (filters/schedule_table.h,
/// default_schedule_table: `fused`, else `segmented` on GPUs; `tiled` elsewhere) that runs
/// there (box_variant_runs). Other variants are returned unchanged.
/// `depth`: the pixels' (16-bit ones make fused's output tile and column sums larger).
BoxVariant resolve_box_variant(BoxVariant variant, int radius, const DeviceInfo& device,
                               PixelDepth depth = PixelDepth::u8);

/// The default work-group of `fused` at `radius` on a device with `local_mem` bytes of local
/// memory for pixels of `depth`: box_fused_preferred_group(device) where it fits, else
/// kBoxFusedWideGroup;
/// at 16 bits (32-bit column sums, 8-byte output pixels: 16x8 and 32x4 need 53 KiB at small
/// radii) then 16x4 and 8x4 (a 200-column tile). The last tried where none fits (the filter
/// then refuses it by name).
WorkGroup box_fused_default_group(int radius, size_t local_mem, PixelDepth depth = PixelDepth::u8,
                                  const DeviceInfo& device = {});

/// The default tile rows (--segment) of `tiled` at `radius` on a `width` x `height` image and a
/// device of `compute_units` compute units: 16 (2R+1) rows, at least 256 and at most
/// kMaxBoxSegment, halved (down to 256) while the image would have fewer tiles than the
/// work-items (4 a compute unit). Each tile starts with 2R+1 rows of row sums, so the tile rows
/// make that start 1/16 of the tile at any radius (measured: docs/notes/cpu.md).
int box_tiled_default_segment(int radius, int width, int height, unsigned compute_units);

/// The default tile rows (--segment) of `fused` with work-group `wg` on a `width` x `height`
/// image and a device of `compute_units` compute units: the fewest rows, a multiple of 8 from 32
/// to 128, whose tiles all run at once, kBoxFusedGroupsPerUnit work-groups a compute unit (each
/// work-group walks its tile a batch of rows at a time, so shorter tiles finish sooner while
/// they do not queue for a second wave); 128 where no height fits one wave. 104 on 3024x4032
/// with 16x8 on 132 compute units (10 x 39 tiles of 304 x 104 for 396 places), 32 on 1920x1080
/// (not shorter: each tile's first window is 2R+1 rows; docs/notes/box.md, "Box `fused`: 19
/// outputs a work-item and tiles fitted to one wave").
int box_fused_default_segment(int width, int height, WorkGroup wg, unsigned compute_units);

/// Bytes of local memory a `fused` work-group needs at least at `radius` with work-group `wg`
/// (0x0: box_fused_preferred_group()) on pixels of `depth`: FUSED_ROWS rows of 2R + tile-width
/// column sums (8 bytes each up to R = 128 at 8 bits, else 16) and the output tile (4 or 8 bytes a
/// pixel). Where the device has more, the work-group also exchanges chunk sums for its first
/// row windows (16 or 32 bytes each, FUSED_ROWS rows of C + up to (2R+1) / kBoxFusedOutputs of
/// them).
size_t box_fused_local_bytes(int radius, WorkGroup wg, PixelDepth depth = PixelDepth::u8);

/// Local memory, in bytes, of the column pass of `segmented` and `segmented-local`
/// (box_cols_ring) for `radius` pixels: a ring of 64 + 2R + 1 rows of 16 columns (8 or 16 bytes
/// an entry) and one sum a work-item. Where it exceeds the device's, the column pass is
/// box_cols_segmented (one work-item a segment of a column).
size_t box_ring_local_bytes(int radius, Intermediate intermediate, PixelDepth depth);

/// Rows of a work-group of the ring column pass (`segmented`, `segmented-local`) on a width x
/// height image: the longest multiple of 64 up to 1024 that still gives 8 work-groups a compute
/// unit (so the first window of each, 2R+1 rows, is a small share), else 64.
int box_ring_segment(int width, int height, unsigned compute_units);

/// Local memory, in bytes, of `segmented-local`'s row pass with `items` work-items (--wg Lx1)
/// of `segment` pixels each: the staged row span (items * segment + 2R + 1) and one sum a
/// work-item, 16 bytes each.
size_t box_segmented_local_bytes(int radius, int segment, int items);

/// `params` with auto replaced as BoxFilter does for a `width` x `height` image on `device`:
/// the tuning table's pick for the nearest tuned size (variant, segment, unroll, work-group,
/// where not given), else resolve_box_variant(). Explicit variants are returned unchanged.
/// The tuning table is measured on RGBA8: at 16 bits (`depth`), whose local memory and costs
/// differ, auto takes resolve_box_variant()'s defaults. Throws blurtool::Error for a tuning
/// table naming an unknown variant.
BoxParams resolve_box_schedule(const BoxParams& params, const DeviceInfo& device, int width,
                               int height, PixelDepth depth = PixelDepth::u8);

/// A box filter schedule for `width` x `height` RGBA images on one device: builds (or takes
/// from the cache) its program and allocates its intermediate image.
/// Throws blurtool::UsageError for invalid parameters, blurtool::Error for device limits or a
/// failed kernel build, cl::Error for other OpenCL failures.
class BoxSchedule;

class BoxFilter : public Filter {
 public:
  /// `depth`: of the input and output (RGBA8 or RGBA16); every schedule runs at both.
  BoxFilter(Runtime& runtime, const BoxParams& params, int width, int height,
            PixelDepth depth = PixelDepth::u8);
  ~BoxFilter() override;

  std::string describe() const override;
  const std::vector<PassInfo>& passes() const override { return passes_; }
  std::uint64_t compulsory_bytes() const override {
    return 2ULL * pixel_bytes(depth_) * width_ * height_;
  }
  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override;
  bool takes_buffers() const override;
  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override;

  /// The parameters with `auto` and every default the schedule uses resolved (a segment or
  /// unroll a schedule does not take stays 0).
  const BoxParams& params() const;

 private:
  int width_, height_;
  std::vector<PassInfo> passes_;
  // The schedule's own host side: its kernels, options, memory and launch (box_schedule.h).
  std::unique_ptr<BoxSchedule> schedule_;
};

/// Box-filters RGBA8 host image `rgba` on the runtime's device; returns RGBA8.
/// Errors as BoxFilter and run_filter.
Image box_blur(Runtime& runtime, const Image& rgba, const BoxParams& params);

/// The same on RGBA16 host image `rgba`, at 16 bits on the device; returns RGBA16.
Image16 box_blur(Runtime& runtime, const Image16& rgba, const BoxParams& params);

}  // namespace blurtool
