// Host side of the box schedules of running sums (kernels/box_running.cl): accumulated,
// unrolled and scan (one work-item a row, then a column or MPS's prefix-sum columns), segmented
// and segmented-local (one work-item a segment of a row; columns in work-groups that keep their
// window in local memory, a ring).
#include <algorithm>

#include "filters/box/box_schedule.h"
#include "util/error.h"

namespace blurtool {

namespace {

constexpr int kScanCols = 16, kScanLanes = 16;  // kernels/box_running.cl SCAN_COLS, SCAN_LANES

// Whether box_cols_ring's ring can hold 16-bit values (kernels/box_running.cl RING_NARROW): the
// integer q it reads back from the intermediate is at most M with rgba8, 256 M with rgba16f
// and M (2R+1) with rgba32f (M = 255 or 65535).
bool ring_narrow(int radius, Intermediate intermediate, PixelDepth depth) {
  const unsigned long long m = depth == PixelDepth::u8 ? 255 : 65535;
  const unsigned long long q = intermediate == Intermediate::rgba8     ? m
                               : intermediate == Intermediate::rgba16f ? 256 * m
                                                                       : m * (2ULL * radius + 1);
  return q <= 65535;
}

// box_ring_local_bytes, as box_cols_ring's two local arguments: the ring (64 + 2R + 1 rows of
// kBoxRingColumns entries) and one sum a work-item.
std::pair<size_t, size_t> ring_local_parts(int radius, Intermediate intermediate,
                                           PixelDepth depth) {
  const size_t rows = kBoxRingLanes * kBoxRingRows + 2 * static_cast<size_t>(radius) + 1;
  const size_t entry = ring_narrow(radius, intermediate, depth) ? 8 : 16;
  const size_t sum = box_wide_sum(radius, depth) ? 32 : 16;
  return {kBoxRingColumns * rows * entry, kBoxRingColumns * kBoxRingLanes * sum};
}

// Work-items per work-group of the row-per-work-item and column-per-work-item passes: 32, as
// MPS's MIBox_Horizontal (one SIMD group), fewer if the kernel cannot run that many.
cl::NDRange local_size_1d(const cl::Kernel& kernel, const cl::Device& device) {
  size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device);
  return cl::NDRange(std::min<size_t>(32, limit));
}

class BoxRunning : public BoxTwoPass {
 public:
  using BoxTwoPass::BoxTwoPass;

  std::vector<std::string> kernel_names() override {
    const BoxVariant v = s_.params.variant;
    if (v == BoxVariant::accumulated || v == BoxVariant::unrolled)
      return {"box_rows_segmented", "box_cols_segmented"};  // one segment a row (column)
    if (v == BoxVariant::scan) return {"box_rows_segmented", "box_cols_scan"};
    // The column pass keeps its window in local memory (box_cols_ring) where that fits.
    col_ring_ = box_ring_local_bytes(s_.params.radius, s_.params.intermediate, s_.depth) <=
                s_.runtime->device().local_mem;
    return {v == BoxVariant::segmented ? "box_rows_segmented" : "box_rows_segmented_local",
            col_ring_ ? "box_cols_ring" : "box_cols_segmented"};
  }

  std::string options() override {
    const BoxVariant v = s_.params.variant;
    std::string options =
        " -DUNROLL=" + std::to_string(v == BoxVariant::accumulated ? 1 : s_.params.unroll) +
        " -DSCAN_COLS=" + std::to_string(kScanCols) + " -DSCAN_LANES=" + std::to_string(kScanLanes);
    if (!segmented()) return options;
    if (col_ring_ && ring_narrow(s_.params.radius, s_.params.intermediate, s_.depth))
      options += " -DRING_NARROW";
    return options + " -DRING_COLS=" + std::to_string(kBoxRingColumns) +
           " -DRING_LANES=" + std::to_string(kBoxRingLanes) +
           " -DRING_ROWS=" + std::to_string(kBoxRingRows);
  }

  void prepare(const std::string& family, const std::string& options,
               std::vector<std::string>& names, std::vector<cl::Kernel> kernels) override {
    BoxTwoPass::prepare(family, options, names, std::move(kernels));
    segmented_default_segment_ = box_default_segment(BoxVariant::segmented, s_.runtime->device());
    // A device that cannot run box_cols_ring's 16x8 work-groups gets the per-work-item pass.
    if (col_ring_ &&
        kernels_[1].getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(s_.runtime->device().device) <
            static_cast<size_t>(kBoxRingColumns) * kBoxRingLanes) {
      col_ring_ = false;
      names[1] = "box_cols_segmented";
      kernels_[1] = s_.runtime->kernel(family, names[1], options);
    }
  }

  std::string describe() const override {
    std::string text;
    if (s_.params.variant != BoxVariant::accumulated &&
        s_.params.variant != BoxVariant::segmented_local)
      text += " x" + std::to_string(s_.params.unroll);
    if (segmented()) {
      text += " segment=" + std::to_string(s_.params.segment);
      if (!s_.params.wg.is_default()) text += " wg=" + s_.params.wg.text();
      // Where the column pass's ring does not fit local memory: one work-item a column segment.
      if (!col_ring_) text += " columns=per-work-item";
    }
    return text;
  }

  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override {
    set_pass_arguments(src, dst);
    std::vector<cl::Event> events(2);
    if (segmented()) {
      enqueue_segmented_rows(events[0]);
      enqueue_segmented_columns(events[1]);
      return events;
    }
    // accumulated, unrolled and scan's row pass: the segmented kernels with one segment per
    // whole row (column), one work-item each, in work-groups of 32.
    const cl::Device& device = s_.runtime->device().device;
    cl::CommandQueue& queue = s_.runtime->queue();
    cl::Kernel &rows = kernels_[0], &cols = kernels_[1];
    rows.setArg(5, static_cast<cl_int>(s_.width));
    const size_t row_items = local_size_1d(rows, device)[0];
    queue.enqueueNDRangeKernel(rows, cl::NullRange, cl::NDRange(1, round_up(s_.height, row_items)),
                               cl::NDRange(1, row_items), nullptr, &events[0]);
    if (s_.params.variant == BoxVariant::scan) {
      const size_t limit = cols.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device);
      if (limit < static_cast<size_t>(kScanCols * kScanLanes)) {
        throw Error("variant scan needs work-groups of " + std::to_string(kScanCols * kScanLanes) +
                    " work-items; device '" + s_.runtime->device().name + "' runs at most " +
                    std::to_string(limit) + " for this kernel");
      }
      queue.enqueueNDRangeKernel(cols, cl::NullRange,
                                 cl::NDRange(round_up(s_.width, kScanCols), kScanLanes),
                                 cl::NDRange(kScanCols, kScanLanes), nullptr, &events[1]);
    } else {
      cols.setArg(6, static_cast<cl_int>(s_.height));
      const size_t col_items = local_size_1d(cols, device)[0];
      queue.enqueueNDRangeKernel(cols, cl::NullRange, cl::NDRange(round_up(s_.width, col_items), 1),
                                 cl::NDRange(col_items, 1), nullptr, &events[1]);
    }
    return events;
  }

 private:
  bool segmented() const {
    return s_.params.variant == BoxVariant::segmented ||
           s_.params.variant == BoxVariant::segmented_local;
  }

  void enqueue_segmented_rows(cl::Event& event) {
    const int seg = s_.params.segment;
    cl::Kernel& rows = kernels_[0];
    rows.setArg(5, static_cast<cl_int>(seg));
    if (s_.params.variant == BoxVariant::segmented_local) {
      const size_t items = row_group_size();
      const size_t chunk = items * seg,
                   span = chunk + 2 * static_cast<size_t>(s_.params.radius) + 1;
      rows.setArg(6, cl::Local(sizeof(cl_uint4) * span));   // the prefix sums
      rows.setArg(7, cl::Local(sizeof(cl_uint4) * items));  // one total per work-item
      s_.runtime->queue().enqueueNDRangeKernel(
          rows, cl::NullRange, cl::NDRange((s_.width + chunk - 1) / chunk * items, s_.height),
          cl::NDRange(items, 1), nullptr, &event);
      return;
    }
    const size_t row_segments = (s_.width + seg - 1) / seg;
    const cl::NDRange local = work_group(rows, s_.params.wg, {4, 16}, "rows");
    s_.runtime->queue().enqueueNDRangeKernel(
        rows, cl::NullRange,
        cl::NDRange(round_up(row_segments, local[0]), round_up(s_.height, local[1])), local,
        nullptr, &event);
  }

  void enqueue_segmented_columns(cl::Event& event) {
    cl::Kernel& cols = kernels_[1];
    cl::CommandQueue& queue = s_.runtime->queue();
    if (col_ring_) {  // the column pass with its windows in local memory (box_cols_ring)
      const size_t strips = (s_.width + kBoxRingColumns - 1) / kBoxRingColumns;
      const int col_seg = box_ring_segment(s_.width, s_.height, s_.runtime->device().compute_units);
      const size_t col_segments = (s_.height + col_seg - 1) / col_seg;
      const auto [ring, total] =
          ring_local_parts(s_.params.radius, s_.params.intermediate, s_.depth);
      cols.setArg(6, static_cast<cl_int>(col_seg));
      cols.setArg(7, cl::Local(ring));
      cols.setArg(8, cl::Local(total));
      queue.enqueueNDRangeKernel(
          cols, cl::NullRange, cl::NDRange(strips * kBoxRingColumns, col_segments * kBoxRingLanes),
          cl::NDRange(kBoxRingColumns, kBoxRingLanes), nullptr, &event);
      return;
    }
    // The column pass is segmented's; segmented-local's keeps segmented's default segment and
    // work-group (its --segment and --wg shape the row pass only).
    const bool local_rows = s_.params.variant == BoxVariant::segmented_local;
    const int col_seg = local_rows ? segmented_default_segment_ : s_.params.segment;
    const cl::NDRange local =
        work_group(cols, local_rows ? WorkGroup{} : s_.params.wg, {64, 1}, "columns");
    cols.setArg(6, static_cast<cl_int>(col_seg));
    const size_t col_segments = (s_.height + col_seg - 1) / col_seg;
    queue.enqueueNDRangeKernel(
        cols, cl::NullRange,
        cl::NDRange(round_up(s_.width, local[0]), round_up(col_segments, local[1])), local, nullptr,
        &event);
  }

  // The local size of one `segmented` pass: `wg`, else `fallback` halved to fit the kernel's
  // limit. Throws blurtool::UsageError when a --wg given by the user does not fit.
  cl::NDRange work_group(const cl::Kernel& kernel, WorkGroup wg, WorkGroup fallback,
                         const char* pass) const {
    if (wg.is_default()) wg = fallback;
    const DeviceInfo& d = s_.runtime->device();
    const size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d.device);
    const size_t items = static_cast<size_t>(wg.x) * wg.y;
    if (items > limit) {
      if (!s_.params.wg.is_default()) {
        throw UsageError(parameter("wg") + " " + wg.text() + ": " + std::to_string(items) +
                         " work-items exceed the " + std::to_string(limit) + " that device '" +
                         d.name + "' runs for the " + pass + " pass (CL_KERNEL_WORK_GROUP_SIZE)");
      }
      while (static_cast<size_t>(wg.x) * wg.y > limit) (wg.y > 1 ? wg.y : wg.x) /= 2;
    }
    return cl::NDRange(wg.x, wg.y);
  }

  // Work-items per row of segmented-local: --wg L, else 128, halved until its local memory
  // fits the device. Throws blurtool::UsageError when it cannot fit.
  size_t row_group_size() const {
    const int seg = s_.params.segment, radius = s_.params.radius;
    const WorkGroup wg = s_.params.wg;
    auto local_bytes = [&](size_t items) {
      return box_segmented_local_bytes(radius, seg, static_cast<int>(items));
    };
    const DeviceInfo& d = s_.runtime->device();
    const size_t limit = kernels_[0].getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(d.device);
    if (!wg.is_default()) {
      const size_t items = wg.x;
      if (wg.y != 1)
        throw UsageError(parameter("wg") + " " + wg.text() +
                         ": segmented-local takes Lx1 (L work-items share one row)");
      if (items > limit || local_bytes(items) > d.local_mem) {
        throw UsageError(parameter("wg") + " " + wg.text() + " with " + parameter("segment") + " " +
                         std::to_string(seg) + " and radius " + std::to_string(radius) + " needs " +
                         std::to_string(items) + " work-items and " +
                         std::to_string(local_bytes(items)) + " bytes of local memory; device '" +
                         d.name + "' runs " + std::to_string(limit) +
                         " (CL_KERNEL_WORK_GROUP_SIZE) and has " + std::to_string(d.local_mem) +
                         " (CL_DEVICE_LOCAL_MEM_SIZE)");
      }
      return items;
    }
    size_t items = std::min<size_t>(128, limit);
    while (items > 1 && local_bytes(items) > d.local_mem) items /= 2;
    if (local_bytes(items) > d.local_mem) {
      throw UsageError("segmented-local with " + parameter("segment") + " " + std::to_string(seg) +
                       " and radius " + std::to_string(radius) + " needs " +
                       std::to_string(local_bytes(1)) + " bytes of local memory; device '" +
                       d.name + "' has " + std::to_string(d.local_mem) +
                       " (CL_DEVICE_LOCAL_MEM_SIZE); use segmented");
    }
    return items;
  }

  bool col_ring_ = false;  // segmented, segmented-local: the column pass is box_cols_ring
  // segmented's default segment, which segmented-local's per-work-item column pass takes
  int segmented_default_segment_ = 0;
};

}  // namespace

size_t box_ring_local_bytes(int radius, Intermediate intermediate, PixelDepth depth) {
  const auto [ring, total] = ring_local_parts(radius, intermediate, depth);
  return ring + total;
}

size_t box_segmented_local_bytes(int radius, int segment, int items) {
  const size_t span = static_cast<size_t>(items) * segment + 2 * static_cast<size_t>(radius) + 1;
  return sizeof(cl_uint4) * (span + items);
}

int box_ring_segment(int width, int height, unsigned compute_units) {
  constexpr int batch = kBoxRingLanes * kBoxRingRows;
  const unsigned long long strips = (width + kBoxRingColumns - 1) / kBoxRingColumns;
  for (int rows = 1024; rows > batch; rows -= batch) {
    if (strips * ((height + rows - 1) / rows) >= 8ULL * compute_units) return rows;
  }
  return batch;
}

std::unique_ptr<BoxSchedule> make_box_running(const BoxSetup& setup) {
  return std::make_unique<BoxRunning>(setup);
}

}  // namespace blurtool
