// Host side of the box filter schedules (see box_blur.h and kernels/box_*.cl).
#include "filters/box/box_blur.h"

#include <algorithm>

#include "filters/box/box_schedule.h"
#include "filters/schedule_table.h"
#include "util/error.h"

namespace blurtool {

const std::vector<Named<BoxVariant>>& box_variant_table() {
  static const std::vector<Named<BoxVariant>> table = [] {
    std::vector<Named<BoxVariant>> names = {
        {BoxVariant::automatic, "auto",
         "GPUs: fused (segmented where it does not fit local memory); CPUs: tiled"}};
    for (const BoxScheduleRow& row : box_schedule_table())
      names.push_back({row.variant, row.name, row.help});
    return names;
  }();
  return table;
}

const std::vector<int>& box_unroll_choices() {
  static const std::vector<int> choices = {1, 2, 4, 8, 12, 16, 24, 32};
  return choices;
}

int box_default_unroll(BoxVariant variant, const DeviceInfo& device) {
  return default_parameters(device, "box", name_of(box_variant_table(), variant), 0).unroll;
}

int box_default_segment(BoxVariant variant, const DeviceInfo& device) {
  return default_parameters(device, "box", name_of(box_variant_table(), variant), 0).segment;
}

bool box_is_two_pass(BoxVariant variant) {
  return variant == BoxVariant::automatic || box_schedule_row(variant).two_pass;
}

void validate(const BoxParams& params) {
  if (params.radius < 0 || params.radius > kMaxBoxRadius) {
    throw UsageError(parameter("box") + " " + std::to_string(params.radius) +
                     ": the radius must be an integer from 0 to " + std::to_string(kMaxBoxRadius) +
                     " pixels");
  }
  const auto& choices = box_unroll_choices();
  if (params.unroll != 0 &&
      std::find(choices.begin(), choices.end(), params.unroll) == choices.end()) {
    throw UsageError(parameter("unroll") + " " + std::to_string(params.unroll) +
                     ": must be one of 1, 2, 4, 8, 12, 16, 24, 32");
  }
  if (params.segment < 0 || params.segment > kMaxBoxSegment) {
    throw UsageError(parameter("segment") + " " + std::to_string(params.segment) +
                     ": the segment must be from 1 to " + std::to_string(kMaxBoxSegment) +
                     " pixels");
  }
}

bool box_variant_runs(BoxVariant variant, int radius, const DeviceInfo& device, PixelDepth depth) {
  if (variant != BoxVariant::fused) return true;
  const WorkGroup wg = box_fused_default_group(radius, device.local_mem, depth, device);
  return box_fused_local_bytes(radius, wg, depth) <= device.local_mem;
}

BoxVariant resolve_box_variant(BoxVariant variant, int radius, const DeviceInfo& device,
                               PixelDepth depth) {
  if (variant != BoxVariant::automatic) return variant;
  for (const TunedSchedule& d : default_schedules(device, "box", radius)) {
    const BoxVariant v = parse_named(box_variant_table(), d.variant, "the default box variant");
    if (box_variant_runs(v, radius, device, depth)) return v;
  }
  throw Error("no default box schedule for device '" + device.name + "'");
}

BoxParams resolve_box_schedule(const BoxParams& params, const DeviceInfo& device, int width,
                               int height, PixelDepth depth) {
  BoxParams p = params;
  if (p.variant == BoxVariant::automatic && depth == PixelDepth::u8) {
    const auto tuned = tuned_schedule(device, "box", name_of(intermediate_table(), p.intermediate),
                                      p.radius, static_cast<std::uint64_t>(width) * height);
    if (tuned) {
      p.variant =
          parse_named(box_variant_table(), tuned->variant, "the tuning table's box variant");
      if (p.segment == 0) p.segment = tuned->segment;
      if (p.unroll == 0) p.unroll = tuned->unroll;
      if (p.wg.is_default()) p.wg = tuned->wg;
    }
  }
  p.variant = resolve_box_variant(p.variant, p.radius, device, depth);
  return p;
}

BoxFilter::BoxFilter(Runtime& runtime, const BoxParams& params, int width, int height,
                     PixelDepth depth)
    : width_(width), height_(height) {
  depth_ = depth;
  validate(params);
  BoxSetup setup;
  setup.runtime = &runtime;
  setup.params = resolve_box_schedule(params, runtime.device(), width, height, depth);
  setup.width = width;
  setup.height = height;
  setup.depth = depth;
  setup.wide_sum = box_wide_sum(setup.params.radius, depth);
  const BoxScheduleRow& row = box_schedule_row(setup.params.variant);
  // The default parameter table's segment and unroll (0: the schedule computes its own); the
  // work-group `fused` takes from it where its tile fits (box_fused_default_group).
  const TunedSchedule d =
      default_parameters(runtime.device(), "box", row.name, setup.params.radius);
  if (setup.params.segment == 0) setup.params.segment = d.segment;
  if (setup.params.unroll == 0) setup.params.unroll = d.unroll;
  schedule_ = row.make(setup);

  std::vector<std::string> names = schedule_->kernel_names();
  std::string options = pixel_options(depth);
  if (setup.wide_sum) options += " -DWIDE_SUM";
  options += schedule_->options();
  // The schedule's passes from one program (each program costs a compiler front end).
  schedule_->prepare(row.family, options, names, runtime.kernels(row.family, names, options));
  const std::uint64_t pixels = static_cast<std::uint64_t>(width) * height;
  const std::uint64_t inter = pixels * intermediate_bytes(setup.params.intermediate);
  const std::uint64_t io = pixels * pixel_bytes(depth);  // the input, or the output
  for (const std::string& name : names)
    passes_.push_back({name, row.two_pass ? io + inter : 2 * io});
}

bool BoxFilter::takes_buffers() const {
  return schedule_->takes_buffers();
}

const BoxParams& BoxFilter::params() const {
  return schedule_->params();
}

std::string BoxFilter::describe() const {
  const BoxParams& p = params();
  std::string text = "box r=" + std::to_string(p.radius) + " " +
                     name_of(box_variant_table(), p.variant) + schedule_->describe();
  if (box_is_two_pass(p.variant))
    text += std::string(" ") + name_of(intermediate_table(), p.intermediate);
  return text + " edge=" + name_of(edge_mode_table(), p.edge) + depth_text();
}

std::vector<cl::Event> BoxFilter::enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) {
  if (!takes_buffers()) return Filter::enqueue_buffers(src, dst);
  return schedule_->enqueue_buffers(src, dst);
}

std::vector<cl::Event> BoxFilter::enqueue(const cl::Image2D& src, const cl::Image2D& dst) {
  if (takes_buffers()) throw Error("schedule '" + describe() + "' runs on buffers, not images");
  return schedule_->enqueue(src, dst);
}

BoxFilter::~BoxFilter() = default;

Image box_blur(Runtime& runtime, const Image& rgba, const BoxParams& params) {
  BoxFilter filter(runtime, params, rgba.width, rgba.height);
  return run_filter(runtime, filter, rgba).output;
}

Image16 box_blur(Runtime& runtime, const Image16& rgba, const BoxParams& params) {
  BoxFilter filter(runtime, params, rgba.width, rgba.height, PixelDepth::u16);
  return run_filter(runtime, filter, rgba).output;
}

}  // namespace blurtool
