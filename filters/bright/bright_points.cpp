// Host side of bright-point extraction and its glow (see bright_points.h, kernels/bright.cl).
#include "filters/bright/bright_points.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "filters/schedule_table.h"
#include "filters/working_space.h"
#include "util/error.h"

namespace blurtool {

const std::vector<Named<BrightVariant>>& bright_variant_table() {
  static const std::vector<Named<BrightVariant>> table = {
      {BrightVariant::automatic, "auto",
       "the tuning table's pick, else buffer (the fastest measured on GPU and CPU)"},
      {BrightVariant::serial, "serial", "one pixel per work-item, one work-item scans the block"},
      {BrightVariant::per_thread, "per-thread", "each work-item scans a whole block"},
      {BrightVariant::tree, "tree", "one pixel per work-item, tree reduction in local memory"},
      {BrightVariant::hybrid, "hybrid", "KxK pixels per work-item (per_item), then a tree"},
      {BrightVariant::subgroup, "subgroup", "sub-group reductions (cl_khr_subgroups)"},
      {BrightVariant::buffer, "buffer",
       "per-thread over a plain buffer, built per block side, 16-byte loads"},
  };
  return table;
}

void validate(const BrightParams& p) {
  if (!(p.threshold >= 0 && p.threshold <= 1))
    throw UsageError(parameter("bright") + " " + std::to_string(p.threshold) +
                     ": the threshold is a luminance from 0 to 1");
  if (p.block < 1 || p.block > kMaxBrightBlock)
    throw UsageError(parameter("block") + " " + std::to_string(p.block) +
                     ": the block side must be from 1 to " + std::to_string(kMaxBrightBlock) +
                     " pixels");
  if (p.per_item < 1 || p.per_item > p.block)
    throw UsageError(parameter("per_item") + " " + std::to_string(p.per_item) +
                     ": must be from 1 to the block side (" + std::to_string(p.block) + ")");
}

namespace {

bool has_subgroups(const DeviceInfo& d) {
  return d.has_extension("cl_khr_subgroups");
}

}  // namespace

BrightFinder::BrightFinder(Runtime& runtime, const BrightParams& params, int width, int height,
                           PixelDepth depth)
    : runtime_(runtime), params_(params), width_(width), height_(height) {
  depth_ = depth;
  validate(params_);
  // auto: the device's tuning table (tools/tune.h), else the first entry of the default table
  // (filters/schedule_table.h) for the device that runs there (subgroup needs sub-groups).
  if (params_.variant == BrightVariant::automatic) {
    const DeviceInfo& d = runtime.device();
    if (const auto tuned = tuned_schedule(d, "bright", "", params_.block,
                                          static_cast<std::uint64_t>(width) * height)) {
      params_.variant = parse_named(bright_variant_table(), tuned->variant,
                                    "the tuning table's bright-point variant");
    } else {
      for (const TunedSchedule& entry : default_schedules(d, "bright", params_.block)) {
        const BrightVariant v =
            parse_named(bright_variant_table(), entry.variant, "the default bright-point variant");
        if (v != BrightVariant::subgroup || has_subgroups(d)) {
          params_.variant = v;
          break;
        }
      }
      if (params_.variant == BrightVariant::automatic)
        throw Error("no default bright-point schedule for device '" + d.name + "'");
    }
  }
  const BrightVariant v = params_.variant;
  const DeviceInfo& device = runtime.device();
  const int b = params_.block;
  blocks_x_ = (width + b - 1) / b;
  blocks_y_ = (height + b - 1) / b;
  if (v == BrightVariant::subgroup && !has_subgroups(device)) {
    throw UsageError(parameter("variant") + " subgroup: device '" + device.name +
                     "' lacks the OpenCL extension cl_khr_subgroups (sub-groups); use tree or "
                     "hybrid");
  }
  const char* names[] = {"",
                         "bright_serial",
                         "bright_per_thread",
                         "bright_tree",
                         "bright_hybrid",
                         "bright_subgroup",
                         "bright_buffer"};
  kernel_ =
      runtime.kernel("bright", names[static_cast<int>(v)],
                     (v == BrightVariant::buffer ? "-DBRIGHT_BLOCK=" + std::to_string(b) : "") +
                         pixel_options(depth));
  const size_t limit = kernel_.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device);
  if (v == BrightVariant::buffer) {
    // 32 neighbouring blocks of a row a warp, two rows of blocks a work-group.
    const size_t x = std::min<size_t>(32, limit),
                 y = std::max<size_t>(1, std::min<size_t>(2, limit / x));
    local_ = cl::NDRange(x, y);
    global_ = cl::NDRange(round_up(blocks_x_, x), round_up(blocks_y_, y));
  } else if (v == BrightVariant::per_thread) {
    size_t side = 8;
    while (side * side > limit) side /= 2;
    local_ = cl::NDRange(side, side);
    global_ = cl::NDRange(round_up(blocks_x_, side), round_up(blocks_y_, side));
  } else {
    // One work-group per block: BxB work-items, or ceil(B/K)^2 for hybrid.
    const size_t side =
        v == BrightVariant::hybrid ? (b + params_.per_item - 1) / params_.per_item : b;
    if (side * side > limit) {
      throw UsageError(parameter("block") + " " + std::to_string(b) + ": variant " +
                       name_of(bright_variant_table(), v) + " needs " +
                       std::to_string(side * side) + " work-items per work-group; '" + device.name +
                       "' runs at most " + std::to_string(limit) +
                       " (CL_KERNEL_WORK_GROUP_SIZE); use hybrid with a larger " +
                       parameter("per_item"));
    }
    local_ = cl::NDRange(side, side);
    global_ = cl::NDRange(blocks_x_ * side, blocks_y_ * side);
    local_bytes_ = side * side * sizeof(cl_uint);
  }
  const size_t blocks = static_cast<size_t>(blocks_x_) * blocks_y_;
  count_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, sizeof(cl_uint));
  points_ = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, blocks * sizeof(cl_uint4));
  // Compulsory traffic: the image read once; the points are negligible.
  passes_ = {{names[static_cast<int>(v)], BrightFinder::compulsory_bytes()}};
}

std::string BrightFinder::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "bright T=%g B=%d %s", params_.threshold, params_.block,
                name_of(bright_variant_table(), params_.variant));
  std::string s = text;
  if (params_.variant == BrightVariant::hybrid) s += " K=" + std::to_string(params_.per_item);
  return s + " wg=" + std::to_string(local_[0]) + "x" + std::to_string(local_[1]) + depth_text();
}

std::vector<cl::Event> BrightFinder::enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) {
  if (!takes_buffers()) return Filter::enqueue_buffers(src, dst);
  kernel_.setArg(0, src);
  kernel_.setArg(1, static_cast<cl_int>(width_));
  kernel_.setArg(2, static_cast<cl_int>(height_));
  kernel_.setArg(3, static_cast<cl_uint>(bright_threshold_units(params_.threshold)));
  kernel_.setArg(4, count_);
  kernel_.setArg(5, points_);
  return launch();
}

std::vector<cl::Event> BrightFinder::launch() {
  cl::CommandQueue& queue = runtime_.queue();
  queue.enqueueFillBuffer(count_, cl_uint{0}, 0, sizeof(cl_uint));
  std::vector<cl::Event> events(1);
  queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global_, local_, nullptr, &events[0]);
  return events;
}

std::vector<cl::Event> BrightFinder::enqueue(const cl::Image2D& src, const cl::Image2D&) {
  if (takes_buffers()) throw Error("schedule '" + describe() + "' runs on buffers, not images");
  kernel_.setArg(0, src);
  kernel_.setArg(1, static_cast<cl_int>(params_.block));
  kernel_.setArg(2, static_cast<cl_uint>(bright_threshold_units(params_.threshold)));
  kernel_.setArg(3, count_);
  kernel_.setArg(4, points_);
  cl_uint next = 5;
  if (params_.variant == BrightVariant::hybrid)
    kernel_.setArg(next++, static_cast<cl_int>(params_.per_item));
  if (local_bytes_) kernel_.setArg(next, cl::Local(local_bytes_));
  return launch();
}

std::vector<BrightPoint> BrightFinder::points() {
  cl::CommandQueue& queue = runtime_.queue();
  cl_uint count = 0;
  queue.enqueueReadBuffer(count_, CL_TRUE, 0, sizeof count, &count);
  std::vector<cl_uint4> raw(count);
  if (count) queue.enqueueReadBuffer(points_, CL_TRUE, 0, count * sizeof(cl_uint4), raw.data());
  std::vector<BrightPoint> result;
  for (const cl_uint4& p : raw) {
    result.push_back({static_cast<int>(p.s[0]), static_cast<int>(p.s[1]),
                      static_cast<std::uint8_t>(p.s[2] & 255),
                      static_cast<std::uint8_t>((p.s[2] >> 8) & 255),
                      static_cast<std::uint8_t>((p.s[2] >> 16) & 255), p.s[3]});
  }
  sort_points(result);  // work-groups finish in any order
  return result;
}

namespace {

// The glow as a Filter, so that it runs through run_filter like every other image operation.
// The kernel reads and writes normalised floats, so only the build options and the bytes
// follow the depth.
class GlowFilter : public Filter {
 public:
  GlowFilter(Runtime& runtime, const std::vector<BrightPoint>& points, int block,
             std::uint32_t threshold, int width, int height, PixelDepth depth = PixelDepth::u8)
      : runtime_(runtime), block_(block), threshold_(threshold), width_(width), height_(height) {
    depth_ = depth;
    const int bx = (width + block - 1) / block, by = (height + block - 1) / block;
    std::vector<cl_int> grid(static_cast<size_t>(bx) * by, -1);
    std::vector<cl_uint4> packed;
    for (const BrightPoint& p : points) {
      if (p.x < 0 || p.y < 0 || p.x >= width || p.y >= height) continue;  // not in this image
      grid[static_cast<size_t>(p.y / block) * bx + p.x / block] =
          static_cast<cl_int>(packed.size());
      packed.push_back({{static_cast<cl_uint>(p.x), static_cast<cl_uint>(p.y),
                         p.r | static_cast<cl_uint>(p.g) << 8 | static_cast<cl_uint>(p.b) << 16,
                         p.luminance_units}});
    }
    if (packed.empty()) packed.push_back({{0, 0, 0, 0}});  // a buffer cannot be empty
    grid_ = cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                       grid.size() * sizeof(cl_int), grid.data());
    points_ = cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                         packed.size() * sizeof(cl_uint4), packed.data());
    kernel_ = runtime.kernel("bright", "bright_glow", pixel_options(depth));
    passes_ = {{"bright_glow", GlowFilter::compulsory_bytes()}};
  }
  std::string describe() const override { return "glow B=" + std::to_string(block_); }
  const std::vector<PassInfo>& passes() const override { return passes_; }
  /// The image read once and written once.
  std::uint64_t compulsory_bytes() const override {
    return 2ULL * pixel_bytes(depth_) * width_ * height_;
  }
  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override {
    const float sigma = 0.75f * block_;
    kernel_.setArg(0, src);
    kernel_.setArg(1, dst);
    kernel_.setArg(2, static_cast<cl_int>(block_));
    kernel_.setArg(3, grid_);
    kernel_.setArg(4, points_);
    kernel_.setArg(5, static_cast<cl_int>(std::ceil(3 * sigma / block_)));
    kernel_.setArg(6, sigma);
    kernel_.setArg(7, 1.0f);
    kernel_.setArg(8, static_cast<float>(threshold_));
    cl::NDRange local = local_size_2d(kernel_, runtime_.device().device);
    std::vector<cl::Event> events(1);
    runtime_.queue().enqueueNDRangeKernel(
        kernel_, cl::NullRange, global_size_2d(width_, height_, local), local, nullptr, &events[0]);
    return events;
  }

 private:
  Runtime& runtime_;
  int block_;
  std::uint32_t threshold_;
  int width_, height_;
  cl::Kernel kernel_;
  cl::Buffer grid_, points_;
  std::vector<PassInfo> passes_;
};

void check_tile(const BrightParams& params, TileSize tile) {
  if (tile.width < 1 || tile.height < 1 || tile.width % params.block || tile.height % params.block)
    throw Error("bright points in tiles of " + std::to_string(tile.width) + "x" +
                std::to_string(tile.height) + ": the sides must be multiples of the block side " +
                std::to_string(params.block));
}

// The public operations for images of T samples (one schedule depth each).

template <typename T>
std::vector<BrightPoint> find_points(Runtime& runtime, const BasicImage<T>& rgba,
                                     const BrightParams& params) {
  BrightFinder finder(runtime, params, rgba.width, rgba.height, depth_of<T>);
  run_filter(runtime, finder, rgba);
  return finder.points();
}

template <typename T>
BasicImage<T> glow(Runtime& runtime, const BasicImage<T>& rgba,
                   const std::vector<BrightPoint>& points, const BrightParams& params) {
  GlowFilter filter(runtime, points, params.block, bright_threshold_units(params.threshold),
                    rgba.width, rgba.height, depth_of<T>);
  return run_filter(runtime, filter, rgba).output;
}

template <typename T>
std::vector<BrightPoint> find_points_tiled(Runtime& runtime, const BasicImage<T>& rgba,
                                           const BrightParams& params, TileSize tile,
                                           WorkingSpace space = {}) {
  check_tile(params, tile);
  std::vector<BrightPoint> all;
  const MakeFilter make = make_filter_per_size([&](int w, int h) -> std::shared_ptr<Filter> {
    auto finder = std::make_shared<BrightFinder>(runtime, params, w, h, depth_of<T>);
    if (space.is_stored_form()) return finder;
    return std::make_shared<WorkingSpaceFilter>(runtime, finder, space, w, h);
  });
  run_filter_tiled(runtime, make, rgba, 0, tile, 0, [&](Filter& filter, int x0, int y0) {
    for (BrightPoint p : bright_finder_of(filter).points()) {
      p.x += x0;
      p.y += y0;
      all.push_back(p);
    }
  });
  sort_points(all);
  return all;
}

template <typename T>
BasicImage<T> glow_tiled(Runtime& runtime, const BasicImage<T>& rgba,
                         const std::vector<BrightPoint>& points, const BrightParams& params,
                         TileSize tile) {
  check_tile(params, tile);
  const std::uint32_t threshold = bright_threshold_units(params.threshold);
  const MakeFilter make = [&](int x0, int y0, int w, int h) {
    std::vector<BrightPoint> inside;  // the region's points, in its coordinates
    for (BrightPoint p : points) {
      if (p.x < x0 || p.y < y0 || p.x >= x0 + w || p.y >= y0 + h) continue;
      p.x -= x0;
      p.y -= y0;
      inside.push_back(p);
    }
    return std::make_shared<GlowFilter>(runtime, inside, params.block, threshold, w, h,
                                        depth_of<T>);
  };
  return run_filter_tiled(runtime, make, rgba, bright_glow_halo(params), tile).output;
}

}  // namespace

std::vector<BrightPoint> find_bright_points(Runtime& runtime, const Image& rgba,
                                            const BrightParams& params) {
  return find_points(runtime, rgba, params);
}

std::vector<BrightPoint> find_bright_points(Runtime& runtime, const Image16& rgba,
                                            const BrightParams& params) {
  return find_points(runtime, rgba, params);
}

Image draw_glow(Runtime& runtime, const Image& rgba, const std::vector<BrightPoint>& points,
                const BrightParams& params) {
  return glow(runtime, rgba, points, params);
}

Image16 draw_glow(Runtime& runtime, const Image16& rgba, const std::vector<BrightPoint>& points,
                  const BrightParams& params) {
  return glow(runtime, rgba, points, params);
}

int bright_glow_halo(const BrightParams& params) {
  // As GlowFilter::enqueue: reach = ceil(3 sigma / B) blocks, sigma = 0.75 B.
  return static_cast<int>(std::ceil(3 * 0.75f * params.block / params.block)) * params.block;
}

std::vector<BrightPoint> find_bright_points_tiled(Runtime& runtime, const Image& rgba,
                                                  const BrightParams& params, TileSize tile) {
  return find_points_tiled(runtime, rgba, params, tile);
}

std::vector<BrightPoint> find_bright_points_tiled(Runtime& runtime, const Image16& rgba,
                                                  const BrightParams& params, TileSize tile,
                                                  bool linear_light) {
  if (!linear_light) return find_points_tiled(runtime, rgba, params, tile);
  std::vector<BrightPoint> points =
      find_points_tiled(runtime, rgba, params, tile, WorkingSpace{true, false});
  stored_colours(points, rgba);
  return points;
}

BrightFinder& bright_finder_of(Filter& filter) {
  if (auto* finder = dynamic_cast<BrightFinder*>(&filter)) return *finder;
  if (auto* wrapped = dynamic_cast<WorkingSpaceFilter*>(&filter))
    return bright_finder_of(wrapped->inner());
  throw Error("schedule '" + filter.describe() + "' does not find bright points");
}

void stored_colours(std::vector<BrightPoint>& points, const Image16& rgba) {
  auto level = [&](const BrightPoint& p, int c) {
    return static_cast<std::uint8_t>((rgba.pixels[rgba.index(p.x, p.y, c)] * 255u + 32767u) /
                                     65535u);
  };
  for (BrightPoint& p : points) {
    p.r = level(p, 0);
    p.g = level(p, 1);
    p.b = level(p, 2);
  }
}

Image draw_glow_tiled(Runtime& runtime, const Image& rgba, const std::vector<BrightPoint>& points,
                      const BrightParams& params, TileSize tile) {
  return glow_tiled(runtime, rgba, points, params, tile);
}

Image16 draw_glow_tiled(Runtime& runtime, const Image16& rgba,
                        const std::vector<BrightPoint>& points, const BrightParams& params,
                        TileSize tile) {
  return glow_tiled(runtime, rgba, points, params, tile);
}

std::string bright_points_csv(const std::vector<BrightPoint>& points) {
  std::string out = "x,y,r,g,b,luminance\n";
  char line[96];
  for (const BrightPoint& p : points) {
    std::snprintf(line, sizeof line, "%d,%d,%d,%d,%d,%.6f\n", p.x, p.y, p.r, p.g, p.b,
                  p.luminance());
    out += line;
  }
  return out;
}

std::string bright_points_json(const std::vector<BrightPoint>& points) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();  // keys in CSV order
  for (const BrightPoint& p : points)
    array.push_back(
        {{"x", p.x}, {"y", p.y}, {"r", p.r}, {"g", p.g}, {"b", p.b}, {"luminance", p.luminance()}});
  return array.dump(2) + "\n";
}

}  // namespace blurtool
