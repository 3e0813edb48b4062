// Tile-by-tile runs of a filter over images larger than the device holds (see tiled_run.h).
#include "filters/tiled_run.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "util/error.h"
#include "util/host_memory.h"

namespace blurtool {

TileSize plan_tiles(const DeviceInfo& d, int width, int height, int halo, TileSize limit,
                    std::uint64_t device_bytes) {
  // Input side limits: the device's largest 2-D image (buffers have none, but a schedule may
  // use images, so the smaller bound holds for all), and pixels for the largest allocation and
  // for all of a tile's buffers together.
  const long long max_w = d.image2d_max_width ? static_cast<long long>(d.image2d_max_width) : width;
  const long long max_h =
      d.image2d_max_height ? static_cast<long long>(d.image2d_max_height) : height;
  long long max_pixels = static_cast<long long>(d.max_alloc / kTileBytesPerPixel);
  if (d.global_mem) max_pixels = std::min<long long>(max_pixels, d.global_mem / 2 / device_bytes);
  if (d.max_alloc == 0) max_pixels = static_cast<long long>(width) * height;
  auto input = [&](long long tile, int side) {
    return std::min<long long>(tile + 2LL * halo, side);
  };

  TileSize t{width, height};
  if (limit.width > 0) t.width = std::min(t.width, limit.width);
  if (limit.height > 0) t.height = std::min(t.height, limit.height);
  const bool fits = input(t.width, width) <= max_w && input(t.height, height) <= max_h &&
                    input(t.width, width) * input(t.height, height) <= max_pixels;
  if (fits) return t;
  // Widest tiles first (rows are contiguous in memory), then as many rows as fit; a side that
  // fits whole keeps its size (no halo at the image's own edges).
  if (input(t.width, width) > max_w) t.width = static_cast<int>(max_w - 2LL * halo);
  if (t.width >= 1) {
    const long long rows = std::min<long long>(max_h, max_pixels / input(t.width, width));
    if (input(t.height, height) > rows) t.height = static_cast<int>(rows - 2LL * halo);
  }
  if (t.width < 1 || t.height < 1) {
    throw Error("device '" + d.name + "' cannot hold one tile of a " + std::to_string(width) + "x" +
                std::to_string(height) + " image with a halo of " + std::to_string(halo) +
                " pixels (largest image " + std::to_string(max_w) + "x" + std::to_string(max_h) +
                ", " + std::to_string(max_pixels) + " pixels an allocation); use a smaller " +
                "radius or another device (" + parameter("device") + ")");
  }
  return t;
}

std::string device_fault_message(const cl::Error& error, const DeviceInfo& d, int width, int height,
                                 std::uint64_t bytes_per_pixel) {
  switch (error.err()) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
    case CL_INVALID_IMAGE_SIZE:
      break;
    default:
      return "";
  }
  auto mib = [](double bytes) {
    return std::to_string(static_cast<long long>(bytes / 1048576 + 0.5));
  };
  const double pixels = static_cast<double>(width) * height;
  const double image = static_cast<double>(bytes_per_pixel) * pixels;
  return "device '" + d.name + "' failed on a " + std::to_string(width) + "x" +
         std::to_string(height) + " image (" + mib(image) + " MiB in, " + mib(image) +
         " MiB out, up to " + mib(kTileBytesPerPixel * pixels) +
         " MiB intermediate; the device has " + mib(static_cast<double>(d.global_mem)) +
         " MiB, at most " + mib(static_cast<double>(d.max_alloc)) +
         " MiB an allocation): " + describe_cl_error(error) + "; try " + parameter("max_tile") +
         " " + std::to_string((width + 1) / 2) + "x" + std::to_string((height + 1) / 2) +
         ", a smaller radius, or another device (" + parameter("device") + ")";
}

MakeFilter make_filter_per_size(std::function<std::shared_ptr<Filter>(int, int)> make) {
  // The filters live as long as the returned function and its copies.
  auto filters = std::make_shared<std::map<std::pair<int, int>, std::shared_ptr<Filter>>>();
  return [make = std::move(make), filters](int, int, int width, int height) {
    std::shared_ptr<Filter>& f = (*filters)[{width, height}];
    if (!f) f = make(width, height);
    return f;
  };
}

namespace {

template <typename T>
BasicFilterRun<T> run_tiled_at(Runtime& runtime, const MakeFilter& make, const BasicImage<T>& rgba,
                               int halo, TileSize tile, int runs, const AfterTile& after,
                               Origin origin) {
  if (rgba.channels != 4) throw Error("run_filter_tiled: expected an RGBA image");
  const int w = rgba.width, h = rgba.height;
  constexpr size_t px = 4 * sizeof(T);  // bytes a pixel
  BasicFilterRun<T> all;
  all.output = BasicImage<T>{w, h, 4, {}};
  all.output.pixels.resize(rgba.pixels.size());
  for (int y0 = 0; y0 < h; y0 += tile.height) {
    for (int x0 = 0; x0 < w; x0 += tile.width) {
      const int tw = std::min(tile.width, w - x0), th = std::min(tile.height, h - y0);
      // The input region: the tile plus the halo, cut at the image's edges.
      const int ix0 = std::max(0, x0 - halo), iy0 = std::max(0, y0 - halo);
      const int ix1 = std::min(w, x0 + tw + halo), iy1 = std::min(h, y0 + th + halo);
      const int iw = ix1 - ix0, ih = iy1 - iy0;
      BasicImage<T> in{iw, ih, 4, PixelVector<T>(static_cast<size_t>(iw) * ih * 4)};
      for (int y = 0; y < ih; ++y)
        std::memcpy(&in.pixels[static_cast<size_t>(y) * iw * 4],
                    &rgba.pixels[(static_cast<size_t>(iy0 + y) * w + ix0) * 4],
                    static_cast<size_t>(iw) * px);
      const std::shared_ptr<Filter> filter = make(ix0, iy0, iw, ih);
      filter->set_origin(origin.x + ix0, origin.y + iy0);
      BasicFilterRun<T> run = run_filter(runtime, *filter, in, runs);
      if (after) after(*filter, ix0, iy0);
      for (int y = 0; y < th; ++y)
        std::memcpy(&all.output.pixels[(static_cast<size_t>(y0 + y) * w + x0) * 4],
                    &run.output.pixels[(static_cast<size_t>(y0 - iy0 + y) * iw + (x0 - ix0)) * 4],
                    static_cast<size_t>(tw) * px);
      if (all.pass_ms.empty()) all.pass_ms.resize(run.pass_ms.size());
      for (size_t p = 0; p < run.pass_ms.size() && p < all.pass_ms.size(); ++p) {
        all.pass_ms[p].resize(std::max(all.pass_ms[p].size(), run.pass_ms[p].size()));
        for (size_t r = 0; r < run.pass_ms[p].size(); ++r) all.pass_ms[p][r] += run.pass_ms[p][r];
      }
      all.upload_ms += run.upload_ms;
      all.download_ms += run.download_ms;
      all.upload_copy_ms += run.upload_copy_ms;
      all.download_copy_ms += run.download_copy_ms;
      all.enqueue_ms += run.enqueue_ms;
      all.wait_ms += run.wait_ms;
      all.check_ms += run.check_ms;
      all.commands += run.commands;
      // Whether every tile's transfers were so.
      const bool first = x0 == 0 && y0 == 0;
      // The tiles' round trips together, on the device's clock.
      if (run.device_end_ns > run.device_start_ns) {
        if (all.device_end_ns == 0 || run.device_start_ns < all.device_start_ns)
          all.device_start_ns = run.device_start_ns;
        all.device_end_ns = std::max(all.device_end_ns, run.device_end_ns);
      }
      all.pinned_upload = run.pinned_upload && (first || all.pinned_upload);
      all.pinned_download = run.pinned_download && (first || all.pinned_download);
      all.in_place_upload = run.in_place_upload && (first || all.in_place_upload);
      all.in_place_download = run.in_place_download && (first || all.in_place_download);
    }
  }
  return all;
}

}  // namespace

FilterRun run_filter_tiled(Runtime& runtime, const MakeFilter& make, const Image& rgba, int halo,
                           TileSize tile, int runs, const AfterTile& after, Origin origin) {
  return run_tiled_at(runtime, make, rgba, halo, tile, runs, after, origin);
}

FilterRun16 run_filter_tiled(Runtime& runtime, const MakeFilter& make, const Image16& rgba,
                             int halo, TileSize tile, int runs, const AfterTile& after,
                             Origin origin) {
  return run_tiled_at(runtime, make, rgba, halo, tile, runs, after, origin);
}

}  // namespace blurtool
