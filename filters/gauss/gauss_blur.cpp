// Host side of the Gaussian schedules (see gauss_blur.h and kernels/gauss_*.cl).
#include "filters/gauss/gauss_blur.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

#include "filters/gauss/gauss_schedule.h"
#include "filters/gauss/gauss_weights.h"
#include "filters/schedule_table.h"
#include "util/error.h"

namespace blurtool {

const std::vector<Named<GaussVariant>>& gauss_variant_table() {
  static const std::vector<Named<GaussVariant>> table = [] {
    std::vector<Named<GaussVariant>> names = {
        {GaussVariant::automatic, "auto",
         "the tuning table's pick, else GPUs: with tensor cores fused-mma (separable-mma above R "
         "32), else fused (separable-buffer above R 32); CPUs: tiled"}};
    for (const GaussScheduleRow& row : gauss_schedule_table())
      names.push_back({row.variant, row.name, row.help});
    return names;
  }();
  return table;
}

bool gauss_is_two_pass(GaussVariant v) {
  return v != GaussVariant::automatic && gauss_schedule_row(v).two_pass;
}

bool gauss_row_work_group(GaussVariant v) {
  return v != GaussVariant::automatic && gauss_schedule_row(v).row_work_group;
}

const std::vector<Named<GaussMethod>>& gauss_method_table() {
  static const std::vector<Named<GaussMethod>> table = {
      {GaussMethod::automatic, "auto",
       "exact below sigma 8, pyramid from 8 (exact with --radius, --variant, --wg, --segment "
       "or --intermediate)"},
      {GaussMethod::exact, "exact",
       "the Gaussian's weights to ceil(3 sigma): cost grows with sigma"},
      {GaussMethod::fast, "fast",
       "three extended boxes on running sums (Pillow's method): cost independent of sigma, "
       "within 5 levels of exact (8-bit)"},
      {GaussMethod::pyramid, "pyramid",
       "a Gaussian on cells of f x f pixels, interpolated back: cost independent of sigma, "
       "within 2 levels of exact on photos (8-bit)"},
  };
  return table;
}

const std::vector<Named<CascadeWalk>>& cascade_walk_table() {
  static const std::vector<Named<CascadeWalk>> table = {
      {CascadeWalk::automatic, "auto", "streams on GPUs, rings on CPUs"},
      {CascadeWalk::rings, "rings", "earlier boxes' results kept in rings in device memory"},
      {CascadeWalk::streams, "streams",
       "earlier boxes computed again from four streams of the input, no rings"},
  };
  return table;
}

GaussMethod gauss_method_of(const GaussParams& p) {
  if (p.method != GaussMethod::automatic) return p.method;
  // An option that only the exact method takes chooses it.
  const bool exact_only = p.radius >= 0 || p.variant != GaussVariant::automatic ||
                          !p.wg.is_default() || p.intermediate != Intermediate::rgba32f ||
                          p.segment != 0;
  if (exact_only || p.sigma < kGaussPyramidSigma) return GaussMethod::exact;
  // Past the pyramid's largest reach (sigma about 1030), the box cascade's (about 3 sigma).
  return gauss_pyramid(p.sigma).reach() <= kMaxGaussRadius ? GaussMethod::pyramid
                                                           : GaussMethod::fast;
}

int gauss_radius(const GaussParams& p) {
  switch (gauss_method_of(p)) {
    case GaussMethod::fast:
      return gauss_box_cascade(p.sigma).reach();
    case GaussMethod::pyramid:
      return gauss_pyramid(p.sigma).reach();
    default:
      return p.radius >= 0 ? p.radius : gauss_default_radius(p.sigma);
  }
}

void validate(const GaussParams& p) {
  gauss_weights(p.sigma, 0);  // sigma range
  const GaussMethod method = gauss_method_of(p);
  if (p.cascade != CascadeWalk::automatic && method != GaussMethod::fast)
    throw UsageError(parameter("cascade") + " " + name_of(cascade_walk_table(), p.cascade) +
                     " goes with the fast method: " + parameter("gauss-method") + " fast");
  if (p.method == GaussMethod::fast || p.method == GaussMethod::pyramid) {
    const std::string name = name_of(gauss_method_table(), p.method);
    const std::string with = " goes with " + parameter("gauss-method") + " exact or auto: ";
    if (p.radius >= 0)
      throw UsageError(parameter("radius") + " " + std::to_string(p.radius) + with + "the " + name +
                       " method's reach follows from SIGMA");
    if (p.variant != GaussVariant::automatic)
      throw UsageError(parameter("variant") + " " + name_of(gauss_variant_table(), p.variant) +
                       with + "it names a schedule of the exact method");
    if (!p.wg.is_default())
      throw UsageError(parameter("wg") + with + "the " + name + " method sets its own work-items");
    if (p.method == GaussMethod::pyramid && p.segment != 0)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) + with +
                       "the pyramid method has no segments");
    if (p.segment < 0)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": the positions a work-item walks must be 1 or more");
    if (p.intermediate != Intermediate::rgba32f)
      throw UsageError(parameter("intermediate") + " " +
                       name_of(intermediate_table(), p.intermediate) + with + "the " + name +
                       " method's intermediate is rgba32f");
  }
  if (method == GaussMethod::fast || method == GaussMethod::pyramid) {
    if (gauss_radius(p) > kMaxGaussRadius) {
      char sigma[32];
      std::snprintf(sigma, sizeof sigma, "%g", p.sigma);
      throw UsageError(
          parameter("gauss") + " " + sigma + ": the " + name_of(gauss_method_table(), method) +
          " method reads " + std::to_string(gauss_radius(p)) + " pixels on each side, over " +
          std::to_string(kMaxGaussRadius) + "; give " + parameter("radius") + " R (0.." +
          std::to_string(kMaxGaussRadius) + ") with the exact method or a smaller SIGMA");
    }
    return;
  }
  const int r = gauss_radius(p);
  if (p.radius < 0 && r > kMaxGaussRadius) {
    char sigma[32];
    std::snprintf(sigma, sizeof sigma, "%g", p.sigma);
    throw UsageError(parameter("gauss") + " " + sigma +
                     ": the default radius ceil(3 SIGMA) is over " +
                     std::to_string(kMaxGaussRadius) + " pixels; give " + parameter("radius") +
                     " R (0.." + std::to_string(kMaxGaussRadius) + ") or a smaller SIGMA");
  }
  if (r < 0 || r > kMaxGaussRadius) {
    throw UsageError(parameter("radius") + " " + std::to_string(r) +
                     ": the radius must be from 0 to " + std::to_string(kMaxGaussRadius) +
                     " pixels");
  }
  if (!p.wg.is_default() && (p.wg.x < 1 || p.wg.y < 1))
    throw UsageError(parameter("wg") + " " + p.wg.text() + ": both sizes must be 1 or more");
  if (p.segment != 0 && p.variant != GaussVariant::fused &&
      p.variant != GaussVariant::separable_buffer && p.variant != GaussVariant::fused_mma &&
      p.variant != GaussVariant::tiled)
    throw UsageError(parameter("segment") + " " + std::to_string(p.segment) + ": goes with " +
                     parameter("gauss") + " only for " + parameter("variant") +
                     " fused (its tile rows), "
                     "separable-buffer (its column-pass outputs a work-item), fused-mma (the "
                     "rows a work-group walks down) or tiled (its tile columns)");
  if (p.variant == GaussVariant::tiled) {
    if (p.segment < 0 || p.segment % 16 || p.segment > kMaxGaussTileColumns)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": tiled's tile columns must be a multiple of 16 from 16 to " +
                       std::to_string(kMaxGaussTileColumns));
  } else if (p.variant == GaussVariant::separable_buffer) {
    if (p.segment < 0 || p.segment > kMaxGaussSepColumnOutputs)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": the column-pass outputs a work-item must be from 1 to " +
                       std::to_string(kMaxGaussSepColumnOutputs));
  } else if (p.variant == GaussVariant::fused_mma) {
    if (p.segment < 0 || p.segment % 16 || p.segment > kMaxGaussMmaFusedRows)
      throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                       ": fused-mma's rows a work-group must be a multiple of 16 from 16 to " +
                       std::to_string(kMaxGaussMmaFusedRows));
  } else if (p.segment < 0 || p.segment > kMaxGaussFusedRows) {
    throw UsageError(parameter("segment") + " " + std::to_string(p.segment) +
                     ": the tile rows must be from 1 to " + std::to_string(kMaxGaussFusedRows));
  }
}

bool gauss_variant_runs(GaussVariant v, const DeviceInfo& device, PixelDepth depth, int radius) {
  if (!gauss_is_mma(v)) return true;
  return gauss_has_tensor_cores(device) && depth == PixelDepth::u8 &&
         radius <= (v == GaussVariant::fused_mma ? kMaxGaussMmaFusedRadius : kMaxGaussMmaRadius) &&
         (v != GaussVariant::fused_mma ||
          gauss_mma_fused_local_bytes(radius, gauss_mma_tile(radius)) <= device.local_mem);
}

bool gauss_variant_fits(GaussVariant v, const DeviceInfo& device, PixelDepth depth, int radius) {
  switch (v) {
    case GaussVariant::fused:
      return radius <= kMaxGaussUnrolledRadius &&
             gauss_fused_local_bytes(
                 radius, gauss_fused_default_group(radius, device),
                 default_parameters(device, "gauss", "fused", radius).segment) <= device.local_mem;
    case GaussVariant::separable_buffer:
      return radius <= kMaxGaussUnrolledRadius &&
             gauss_sep_local_bytes(
                 radius, default_parameters(device, "gauss", "separable-buffer", radius).wg.x) <=
                 device.local_mem;
    default:
      return gauss_variant_runs(v, device, depth, radius);
  }
}

GaussVariant resolve_gauss_variant(GaussVariant variant, int radius, const DeviceInfo& device,
                                   PixelDepth depth) {
  if (variant != GaussVariant::automatic) return variant;
  for (const TunedSchedule& d : default_schedules(device, "gauss", radius)) {
    const GaussVariant v =
        parse_named(gauss_variant_table(), d.variant, "the default Gaussian variant");
    if (gauss_variant_fits(v, device, depth, radius)) return v;
  }
  throw Error("no default Gaussian schedule for device '" + device.name + "'");
}

std::vector<LinearTap> gauss_linear_taps(const std::vector<double>& w) {
  const int r = static_cast<int>(w.size() / 2);
  std::vector<LinearTap> taps = {{0, 0.0f, static_cast<float>(w[r])}};
  for (int j = 1; j <= r; j += 2) {
    const double a = w[r + j], b = j + 1 <= r ? w[r + j + 1] : 0.0, sum = a + b;
    if (b == 0) {  // the last tap has no partner: fetch it alone, at its centre
      taps.push_back({j, 0.0f, static_cast<float>(a)});
      taps.push_back({-j, 0.0f, static_cast<float>(a)});
      continue;
    }
    taps.push_back({j, static_cast<float>(b / sum), static_cast<float>(sum)});       // j, j+1
    taps.push_back({-j - 1, static_cast<float>(a / sum), static_cast<float>(sum)});  // -j-1, -j
  }
  return taps;
}

GaussParams resolve_gauss_schedule(const GaussParams& params, const DeviceInfo& device, int width,
                                   int height, PixelDepth depth) {
  GaussParams p = params;
  p.method = gauss_method_of(p);
  if (p.method != GaussMethod::exact) return p;  // one schedule, no radius of its own
  p.radius = gauss_radius(p);
  if (p.variant == GaussVariant::automatic && depth == PixelDepth::u8) {
    const auto tuned =
        tuned_schedule(device, "gauss", name_of(intermediate_table(), p.intermediate), p.radius,
                       static_cast<std::uint64_t>(width) * height);
    if (tuned) {
      p.variant =
          parse_named(gauss_variant_table(), tuned->variant, "the tuning table's Gaussian variant");
      if (p.wg.is_default()) p.wg = tuned->wg;
      // The tuned segment of the variants that take one (tiled: its tile width, which tune
      // measures on CPUs), unless --segment gave one.
      if (p.segment == 0 &&
          (p.variant == GaussVariant::fused || p.variant == GaussVariant::separable_buffer ||
           p.variant == GaussVariant::fused_mma || p.variant == GaussVariant::tiled))
        p.segment = tuned->segment;
    }
  }
  p.variant = resolve_gauss_variant(p.variant, p.radius, device, depth);
  return p;
}

GaussFilter::GaussFilter(Runtime& runtime, const GaussParams& params, int width, int height,
                         PixelDepth depth)
    : width_(width), height_(height) {
  depth_ = depth;
  validate(params);
  GaussSetup setup;
  setup.runtime = &runtime;
  setup.params = resolve_gauss_schedule(params, runtime.device(), width, height, depth);
  const GaussMethod method = setup.params.method;
  validate(setup.params);  // again: a tuned segment (from a table file) for the resolved variant
  setup.width = width;
  setup.height = height;
  setup.depth = depth;
  const char* family = "gauss_cascade";
  if (method == GaussMethod::fast) {
    schedule_ = make_gauss_cascade(setup);
  } else if (method == GaussMethod::pyramid) {
    schedule_ = make_gauss_pyramid(setup);
    family = "gauss_pyramid";
  } else {
    const GaussScheduleRow& row = gauss_schedule_row(setup.params.variant);
    schedule_ = row.make(setup);
    family = row.family;
  }

  const std::vector<std::string> names = schedule_->kernel_names();
  const std::string options = schedule_->options() + pixel_options(depth);
  // The schedule's passes from one program (each program costs a compiler front end).
  schedule_->prepare(runtime.kernels(family, names, options));
  passes_ = schedule_->pass_infos(pixel_bytes(depth));
}

GaussFilter::~GaussFilter() = default;

const GaussParams& GaussFilter::params() const {
  return schedule_->params();
}

bool GaussFilter::takes_buffers() const {
  return schedule_->takes_buffers();
}

std::string GaussFilter::describe() const {
  const GaussParams& p = params();
  char sigma[32];
  std::snprintf(sigma, sizeof sigma, "%g", p.sigma);
  if (p.method != GaussMethod::exact)
    return std::string("gauss sigma=") + sigma + " " + name_of(gauss_method_table(), p.method) +
           schedule_->describe() + " edge=" + name_of(edge_mode_table(), p.edge) + depth_text();
  return std::string("gauss sigma=") + sigma + " r=" + std::to_string(p.radius) + " " +
         name_of(gauss_variant_table(), p.variant) + schedule_->describe() +
         " edge=" + name_of(edge_mode_table(), p.edge) + depth_text();
}

std::vector<cl::Event> GaussFilter::enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) {
  if (!takes_buffers()) return Filter::enqueue_buffers(src, dst);
  return schedule_->enqueue_buffers(src, dst);
}

void GaussFilter::set_origin(int x, int y) {
  schedule_->set_origin(x, y);
}

std::vector<cl::Event> GaussFilter::enqueue(const cl::Image2D& src, const cl::Image2D& dst) {
  if (takes_buffers()) throw Error("schedule '" + describe() + "' runs on buffers, not images");
  return schedule_->enqueue(src, dst);
}

Image gauss_blur(Runtime& runtime, const Image& rgba, const GaussParams& params) {
  GaussFilter filter(runtime, params, rgba.width, rgba.height);
  return run_filter(runtime, filter, rgba).output;
}

Image16 gauss_blur(Runtime& runtime, const Image16& rgba, const GaussParams& params) {
  GaussFilter filter(runtime, params, rgba.width, rgba.height, PixelDepth::u16);
  return run_filter(runtime, filter, rgba).output;
}

}  // namespace blurtool
