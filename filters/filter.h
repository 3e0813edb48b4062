// What every device filter (box, Gaussian, ...) shares: its passes, how it is enqueued on
// device-resident RGBA8 or RGBA16 images, and one runner that uploads, runs (optionally many times,
// for benchmarks) and downloads, timing each kernel with profiling events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "image/jpeg_planes.h"
#include "runtime/cl_runtime.h"
#include "util/host_memory.h"

namespace blurtool {

class YCbCrConverter;

/// A work-group size in work-items (--wg WxH); 0x0 means the schedule's default.
struct WorkGroup {
  int x = 0, y = 0;
  bool is_default() const { return x == 0 && y == 0; }
  std::string text() const { return std::to_string(x) + "x" + std::to_string(y); }
};

/// One kernel launch of a schedule and the bytes it must move at least: every pixel it reads
/// and writes once (compulsory traffic; cache re-reads are not counted).
struct PassInfo {
  std::string kernel;
  std::uint64_t bytes = 0;
};

/// Sample depth of a filter's input and output on the device: 8 bits (RGBA8, CL_UNORM_INT8,
/// 4 bytes a pixel) or 16 bits (RGBA16, CL_UNORM_INT16, 8 bytes a pixel).
enum class PixelDepth { u8, u16 };

/// The depth of images of T samples (std::uint8_t or std::uint16_t).
template <typename T>
constexpr PixelDepth depth_of = sizeof(T) == 2 ? PixelDepth::u16 : PixelDepth::u8;

/// Bytes of one RGBA pixel at `depth`: 4 or 8.
inline int pixel_bytes(PixelDepth depth) {
  return depth == PixelDepth::u16 ? 8 : 4;
}

/// The OpenCL channel type of `depth`: CL_UNORM_INT8 or CL_UNORM_INT16.
inline cl_channel_type pixel_channel_type(PixelDepth depth) {
  return depth == PixelDepth::u16 ? CL_UNORM_INT16 : CL_UNORM_INT8;
}

/// Build options selecting `depth` in the kernels (kernels/common.cl): "" or " -DPIXEL16".
inline std::string pixel_options(PixelDepth depth) {
  return depth == PixelDepth::u16 ? " -DPIXEL16" : "";
}

/// Host memory a GPU reads and writes at full bus speed: a buffer made with
/// CL_MEM_ALLOC_HOST_PTR and kept mapped, whose host pointer is page-locked on NVIDIA's OpenCL
/// (its "pinned memory" recipe). A transfer from ordinary pageable memory is copied by the
/// driver through a small pinned buffer of its own, one chunk and one transfer at a time, so
/// that device threads of a batch queue behind each other; from pinned memory it is one DMA.
/// Empty (data() null) until made; unmapped and released with the last copy.
struct PinnedBuffer {
  PinnedBuffer() = default;
  /// `bytes` of pinned memory in `runtime`'s context, mapped for reading and writing. Throws
  /// cl::Error when the device cannot allocate or map it.
  PinnedBuffer(Runtime& runtime, std::size_t bytes);
  void* data() const { return host.get(); }
  std::size_t bytes = 0;
  cl::Buffer buffer;
  std::shared_ptr<void> host;  ///< the mapped pointer; its deleter unmaps
};

/// Whether transfers to and from `device` are faster through pinned host memory: on GPUs
/// (BLURTOOL_PINNED_STAGING=0: never; =1: on every device, for measurements and tests).
bool pins_host_memory(const DeviceInfo& device);

/// Whether a job's image (run_filter with runs == 0) on `device` is filtered where it lies in
/// host memory: the kernels read the input and write the output through buffers made over the
/// host pixels (CL_MEM_USE_HOST_PTR), which PoCL's CPU device uses as they are at any alignment,
/// so that neither is copied. On PoCL's CPU devices (other drivers may copy a pointer that is
/// not aligned to their liking, at making the buffer and at mapping it); BLURTOOL_ZERO_COPY=0:
/// never, for measurements and tests.
bool runs_in_place(const DeviceInfo& device);

/// Pinned memory for the pixels of a batch's images (a PixelPool, util/host_memory.h): blocks
/// made on demand in one context (PinnedBuffer), at most `limit_bytes` in all, each handed out
/// whole for a request of 3/4 of its size or more, and kept for reuse while the process lives.
/// Decoded images and downloaded results in these blocks go to and from the device without a
/// staging copy (run_filter).
class PinnedPool : public PixelPool {
 public:
  /// A pool allocating through `runtime` (its own queue: blocks are mapped on it).
  PinnedPool(std::unique_ptr<Runtime> runtime, std::size_t limit_bytes);
  void* take(std::size_t bytes) noexcept override;
  bool give_back(void* data) noexcept override;
  bool owns(const void* data) const noexcept override;

 private:
  struct Block {
    PinnedBuffer buffer;
    bool in_use = false;
  };
  mutable std::mutex mutex_;
  std::unique_ptr<Runtime> runtime_;
  std::map<const void*, Block> blocks_;  // by start address
  std::size_t total_ = 0;                // bytes of every block, and of those being made
  std::size_t limit_;
};

/// A filter schedule bound to one device, image size and pixel depth, with its intermediate
/// images.
class Filter {
 public:
  virtual ~Filter() = default;
  /// One line naming the schedule and its parameters, e.g. "box r=30 unrolled x8 rgba32f clamp".
  virtual std::string describe() const = 0;
  /// The kernels enqueue() launches, in order.
  virtual const std::vector<PassInfo>& passes() const = 0;
  /// Bytes the whole operation must move at least: for a blur the input read once and the
  /// output written once. Its copy over the device's copy bandwidth is the floor.
  virtual std::uint64_t compulsory_bytes() const = 0;
  /// Enqueues every pass, reading `src` and writing `dst` (RGBA images of the size and depth
  /// given at construction) on the runtime's queue; returns one profiling event per pass.
  virtual std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) = 0;

  /// Whether the schedule works on RGBA buffers (width * pixel_bytes(depth()) bytes a row, no
  /// padding) instead of images: run_filter then uploads to buffers and calls enqueue_buffers().
  /// The CPU schedules do: PoCL reads images in software, at a tenth of its buffer bandwidth.
  virtual bool takes_buffers() const { return false; }
  /// enqueue() on RGBA buffers; only for schedules whose takes_buffers() is true (the default
  /// throws blurtool::Error).
  virtual std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst);

  /// Where the buffers' pixel (0, 0) lies in the image (pixels), for the runs that follow: a
  /// tile's or strip's input region. Only filters whose output depends on it (the pyramid
  /// Gaussian aligns its cells to the image) use it; a new filter assumes (0, 0).
  virtual void set_origin(int x, int y) {
    (void)x;
    (void)y;
  }

  /// Enqueues every pass on the input and output run_filter made (io_src and io_dst, or
  /// io_src_buffer and io_dst_buffer); returns one profiling event per pass.
  std::vector<cl::Event> enqueue_io();

  /// The depth of the input and output the filter was built for.
  PixelDepth depth() const { return depth_; }

  /// The RGBA input and output images (or buffers, see takes_buffers) run_filter uploads to
  /// and downloads from: made on its first call and kept with the filter, so that a batch of
  /// same-size images allocates them once per device.
  cl::Image2D io_src, io_dst;
  cl::Buffer io_src_buffer, io_dst_buffer;
  /// Whether run_filter may filter a job's image where it lies (runs_in_place) instead of
  /// through io_src_buffer and io_dst_buffer; false for a caller that reruns enqueue_io().
  bool io_in_place = true;
  int io_width = 0, io_height = 0;  ///< pixels of the kept input and output
  /// On a GPU, the pinned host memory run_filter stages the input and the output through
  /// (see PinnedBuffer), made and kept like io_src and io_dst.
  PinnedBuffer io_staging_in, io_staging_out;
  int io_runs = 0;  ///< run_filter calls through the kept input and output
  /// JPEG colour planes run_filter uploads and downloads instead of RGBA (PlaneTransfer): the
  /// kernels converting them and the device buffers holding them, made on first use and kept.
  std::shared_ptr<YCbCrConverter> io_ycbcr;
  cl::Buffer io_planes_in, io_planes_out;
  std::size_t io_planes_in_bytes = 0, io_planes_out_bytes = 0;
  /// The planes' DCT blocks, where they travel as such (YCbCrPlanes::as_blocks).
  cl::Buffer io_blocks_in, io_blocks_out;
  std::size_t io_blocks_in_bytes = 0, io_blocks_out_bytes = 0;

 protected:
  /// " 16-bit" for a 16-bit filter, else "": the end of describe().
  std::string depth_text() const { return depth_ == PixelDepth::u16 ? " 16-bit" : ""; }
  PixelDepth depth_ = PixelDepth::u8;  ///< set by the constructor of each schedule
};

/// Timings of one run_filter() call, milliseconds: kernel times per pass per repetition (from
/// profiling events), and the upload and download, each with its conversions on the device:
/// host wall times for a timed run (runs > 0), which waits after each stage; device times
/// (profiling events of the copies and conversion kernels) for a job's run (runs == 0), which
/// waits once for the whole round trip. 0 where the driver gives no counters, or nothing was
/// copied (in_place_upload, in_place_download).
template <typename T>
struct BasicFilterRun {
  BasicImage<T> output;                      ///< RGBA, the input's size and depth
  std::vector<std::vector<double>> pass_ms;  ///< [pass][repetition]
  double upload_ms = 0;
  double download_ms = 0;
  /// The host-device copies alone within upload_ms and download_ms (profiling events; 0 where
  /// not timed: sparse DCT blocks, a driver without the counters).
  double upload_copy_ms = 0, download_copy_ms = 0;
  /// Whether the upload or the download moved JPEG colour planes (PlaneTransfer): its time
  /// then includes their conversion on the device.
  bool planes_in = false, planes_out = false;
  /// Whether the copies went from and into pinned host memory (the pixel pool's, or
  /// run_filter's staging) rather than pageable memory, which drivers copy far slower.
  bool pinned_upload = false, pinned_download = false;
  /// Whether the kernels read the input and wrote the output where they lie in host memory
  /// (runs_in_place), so that neither was copied.
  bool in_place_upload = false, in_place_download = false;
  /// A job's round trip (runs == 0) on the device's clock, nanoseconds: the earliest start and
  /// the latest end of its profiled copies and kernels (events); both 0 where not timed.
  /// Sparse DCT blocks' transfers (BLURTOOL_JPEG_DCT=sparse), which wait for themselves, and an
  /// in-place output's map are not among them.
  std::uint64_t device_start_ns = 0, device_end_ns = 0;
  /// A job's round trip on the host's clock, milliseconds: enqueuing its commands (host work
  /// before the one wait; with sparse blocks, their transfers and waits too), the one wait, and
  /// the checks and timings of its commands after it; and how many profiled commands it
  /// enqueued. 0 for a timed run (runs > 0).
  double enqueue_ms = 0, wait_ms = 0, check_ms = 0;
  int commands = 0;
};
using FilterRun = BasicFilterRun<std::uint8_t>;
using FilterRun16 = BasicFilterRun<std::uint16_t>;

/// JPEG colour planes (image/jpeg_planes.h) that run_filter moves instead of RGBA pixels, on
/// either side or both, for an 8-bit filter: the per-pixel colour stages of JPEG decoding and
/// encoding then run on the device (filters/ycbcr_device.h), and 1.5 bytes a pixel travel at
/// 4:2:0 instead of 4.
struct PlaneTransfer {
  /// A decoded JPEG's planes (decoder_layout), or its DCT blocks (decode_jpeg_blocks), uploaded
  /// and turned into the filter's RGBA input; run_filter's `rgba` is then not read.
  const YCbCrPlanes* input = nullptr;
  /// The input's DCT blocks already on the device (its dct entropy-coded, decoded there by
  /// EntropyDecoder): read from element input_blocks_base of this buffer, nothing uploaded.
  const cl::Buffer* input_blocks = nullptr;
  std::size_t input_blocks_base = 0;
  /// Planes in encoder_layout for the image's size, or encoder_block_layout: the result turned
  /// into them on the device and downloaded into their samples, or their DCT blocks; the run's
  /// RGBA output is then left empty.
  YCbCrPlanes* output = nullptr;
};

/// Runs `filter` on host image `rgba` (4 channels, 8-bit samples for a PixelDepth::u8 filter,
/// 16-bit for u16), or on `planes.input`: upload, then once, or with runs > 0 one warm-up plus
/// `runs` timed repetitions, then download (into `planes.output` where given). With runs == 0
/// (a job's image) it is one round trip: everything enqueued in order, waited for once at the
/// end; on a device that runs_in_place, RGBA pixels are then read and written where they lie
/// (unless filter.io_in_place is false), and the filter's io_src_buffer and io_dst_buffer are
/// left as they were. The upload and download times include the colour conversions of `planes` (see
/// BasicFilterRun for which clock). On an error it waits for what it enqueued before
/// rethrowing, so no transfer outlives the host memory it uses. Throws blurtool::Error if the
/// image exceeds the device's image limits or its depth is not the filter's (planes need an
/// 8-bit filter), cl::Error on a failing OpenCL call.
FilterRun run_filter(Runtime& runtime, Filter& filter, const Image& rgba, int runs = 0,
                     const PlaneTransfer& planes = {});
FilterRun16 run_filter(Runtime& runtime, Filter& filter, const Image16& rgba, int runs = 0);

/// The timings of `run` with an empty output, as the FilterRun that reports take.
FilterRun timings_of(const FilterRun16& run);

/// A device RGBA image of `width` x `height` pixels in `format` (CL_RGBA channel order).
/// Throws blurtool::Error naming the device and its limits if it has no image support or the
/// size exceeds CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT.
cl::Image2D make_image(Runtime& runtime, int width, int height, cl_channel_type type,
                       cl_mem_flags flags = CL_MEM_READ_WRITE);

/// A 2-D local size for a per-pixel kernel: 16x16, halved while the kernel or device cannot
/// run it (CL_KERNEL_WORK_GROUP_SIZE).
cl::NDRange local_size_2d(const cl::Kernel& kernel, const cl::Device& device);

/// Work-items of a schedule whose work-items each loop over tiles (the `tiled` CPU schedules):
/// four per compute unit, so that a slow tile does not leave a core idle, but no more than
/// `tiles` and at least 1. Bounding them bounds the per-work-item scratch such schedules keep.
size_t tile_work_items(size_t tiles, const DeviceInfo& device);

/// Global size covering width x height with `local`.
cl::NDRange global_size_2d(int width, int height, const cl::NDRange& local);

}  // namespace blurtool
