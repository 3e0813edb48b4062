// Images larger than a device holds, run tile by tile (issue 8): each output tile is filtered
// from its input region widened by a halo of the blur radius on every side that is not the
// image's own edge, so that every output pixel sees exactly the pixels it would see in one
// run, and the tiled result equals the untiled one bit for bit.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "filters/filter.h"
#include "runtime/cl_runtime.h"

namespace blurtool {

/// An output tile size in pixels; 0x0: no limit.
struct TileSize {
  int width = 0, height = 0;
  bool is_default() const { return width == 0 && height == 0; }
};

/// Largest --max-tile side, in pixels.
constexpr int kMaxTileSide = 1 << 20;

/// Bytes a pixel that one device allocation of a blur may take at most: the rgba32f
/// intermediate image (16); the input and output take 4 each.
constexpr std::uint64_t kTileBytesPerPixel = 16;

/// The output tile size for filtering a `width` x `height` RGBA8 image whose filter reads
/// `halo` pixels around each output pixel on device `d`. The whole image when it fits the
/// device, else the largest tiles whose input (tile plus halo on each side) does: within
/// CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT, kTileBytesPerPixel a pixel within
/// CL_DEVICE_MAX_MEM_ALLOC_SIZE, and input, output and intermediate (24 bytes a pixel) within
/// half of CL_DEVICE_GLOBAL_MEM_SIZE. At most `limit` either way when it is not 0x0 (--max-tile).
/// Throws blurtool::Error naming the device, the sizes and what to try when not even a tile of
/// one output row fits (a halo too large for the device).
/// `device_bytes`: bytes a pixel of all the device memory a run holds (input, output,
/// intermediate and working images: 24 at 8 bits; kWideTileBytesPerPixel for a 16-bit run in a
/// working space).
TileSize plan_tiles(const DeviceInfo& d, int width, int height, int halo, TileSize limit = {},
                    std::uint64_t device_bytes = 24);

/// Device bytes a pixel of a 16-bit run in a working space: input and output (8 each; 4 each
/// for an 8-bit image, which the device widens), the working pixels (8, or two images of 8 for
/// an image schedule) and the intermediate (16). The larger figure is used for both depths.
constexpr std::uint64_t kWideTileBytesPerPixel = 56;

/// For an OpenCL error that means the device ran out of something while blurring a `width` x
/// `height` image (CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY,
/// CL_INVALID_BUFFER_SIZE, CL_INVALID_IMAGE_SIZE): one line naming the device, the sizes asked
/// for (input and output, the largest intermediate) against the device's, the failed call, and
/// what to try (--max-tile with a quarter of the image, a smaller radius, --device). Empty for
/// any other error. `bytes_per_pixel`: bytes a pixel of the input and of the output (4 for RGBA8,
/// 8 for RGBA16).
std::string device_fault_message(const cl::Error& error, const DeviceInfo& d, int width, int height,
                                 std::uint64_t bytes_per_pixel);

/// Builds the filter for one tile's input region: its origin (x0, y0) in the image and its
/// size (width, height), in pixels. A filter that does not depend on the origin may be reused
/// for every region of one size (make_filter_per_size).
using MakeFilter = std::function<std::shared_ptr<Filter>(int x0, int y0, int width, int height)>;

/// Called after each tile's run with its filter and its input region's origin (x0, y0).
using AfterTile = std::function<void(Filter& filter, int x0, int y0)>;

/// A MakeFilter that builds one filter per input size with `make(width, height)` and hands out
/// the same one for every region of that size (at most four sizes in a tiling).
MakeFilter make_filter_per_size(std::function<std::shared_ptr<Filter>(int, int)> make);

/// Where an image's pixel (0, 0) lies in a larger image (pixels): a strip's or piece's.
struct Origin {
  int x = 0, y = 0;
};

/// Runs filters made by `make` over RGBA8 image `rgba` in output tiles of `tile` pixels (the
/// first tile at 0, 0), each uploaded with `halo` pixels of context where the image has them
/// (none at the image's edges, where the filter's edge mode applies as in one run), each
/// filter told its input region's place (Filter::set_origin: `origin` plus the region's
/// origin in `rgba`); `after`, if given, sees each tile's filter after its run. Timings:
/// pass_ms[p][r] is the sum over the tiles of pass p's kernel time in repetition r (milliseconds);
/// upload_ms and download_ms the sums of the tiles'. Throws what make() and run_filter() throw.
FilterRun run_filter_tiled(Runtime& runtime, const MakeFilter& make, const Image& rgba, int halo,
                           TileSize tile, int runs = 0, const AfterTile& after = {},
                           Origin origin = {});
/// The same for an RGBA16 image, with filters made for PixelDepth::u16.
FilterRun16 run_filter_tiled(Runtime& runtime, const MakeFilter& make, const Image16& rgba,
                             int halo, TileSize tile, int runs = 0, const AfterTile& after = {},
                             Origin origin = {});

}  // namespace blurtool
