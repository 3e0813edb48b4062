// Shared device-image plumbing and the timed filter runner (see filter.h).
#include "filters/filter.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "filters/ycbcr_device.h"
#include "runtime/fault_injection.h"
#include "util/error.h"
#include "util/host_memory.h"

namespace blurtool {

cl::Image2D make_image(Runtime& runtime, int width, int height, cl_channel_type type,
                       cl_mem_flags flags) {
  const DeviceInfo& d = runtime.device();
  if (!d.image_support)
    throw Error("device '" + d.name + "' has no image support; choose another with " +
                parameter("device"));
  if (static_cast<size_t>(width) > d.image2d_max_width ||
      static_cast<size_t>(height) > d.image2d_max_height) {
    throw Error("image of " + std::to_string(width) + "x" + std::to_string(height) +
                " pixels exceeds the largest image device '" + d.name + "' supports (" +
                std::to_string(d.image2d_max_width) + "x" + std::to_string(d.image2d_max_height) +
                "); choose another with " + parameter("device"));
  }
  return cl::Image2D(runtime.context(), flags, cl::ImageFormat(CL_RGBA, type), width, height);
}

cl::NDRange local_size_2d(const cl::Kernel& kernel, const cl::Device& device) {
  size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device);
  size_t x = 16, y = 16;
  while (x * y > limit) {
    if (y >= x && y > 1)
      y /= 2;
    else
      x /= 2;
  }
  return cl::NDRange(x, y);
}

size_t tile_work_items(size_t tiles, const DeviceInfo& device) {
  const size_t four_per_unit = 4 * static_cast<size_t>(device.compute_units);
  return std::max<size_t>(1, std::min(tiles, four_per_unit));
}

cl::NDRange global_size_2d(int width, int height, const cl::NDRange& local) {
  return cl::NDRange(round_up(width, local[0]), round_up(height, local[1]));
}

PinnedBuffer::PinnedBuffer(Runtime& runtime, std::size_t size)
    : bytes(size), buffer(runtime.context(), CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, size) {
  cl::CommandQueue queue = runtime.queue();
  void* mapped = queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size);
  cl::Buffer mapped_buffer = buffer;
  host = std::shared_ptr<void>(mapped, [queue, mapped_buffer](void* p) mutable {
    try {
      queue.enqueueUnmapMemObject(mapped_buffer, p);
      queue.finish();
    } catch (const cl::Error&) {  // a lost device: nothing left to unmap
    }
  });
}

PinnedPool::PinnedPool(std::unique_ptr<Runtime> runtime, std::size_t limit_bytes)
    : runtime_(std::move(runtime)), limit_(limit_bytes) {}

void* PinnedPool::take(std::size_t bytes) noexcept {
  std::unique_lock<std::mutex> lock(mutex_);
  Block* best = nullptr;
  for (auto& [start, block] : blocks_) {
    const std::size_t size = block.buffer.bytes;
    if (!block.in_use && size >= bytes && size - size / 4 <= bytes &&
        (!best || size < best->buffer.bytes))
      best = &block;
  }
  if (best) {
    best->in_use = true;
    return best->buffer.data();
  }
  if (total_ + bytes > limit_) return nullptr;
  total_ += bytes;
  lock.unlock();
  // Made outside the lock: page-locking takes a while, and other threads may reuse blocks.
  PinnedBuffer buffer;
  try {
    buffer = PinnedBuffer(*runtime_, bytes);
  } catch (...) {  // no pinned memory to spare: the caller takes pageable memory
    lock.lock();
    total_ -= bytes;
    return nullptr;
  }
  void* data = buffer.data();
  lock.lock();
  try {
    blocks_.emplace(data, Block{std::move(buffer), true});
  } catch (...) {
    total_ -= bytes;
    return nullptr;
  }
  return data;
}

bool PinnedPool::give_back(void* data) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = blocks_.find(data);
  if (it == blocks_.end()) return false;
  it->second.in_use = false;
  return true;
}

bool PinnedPool::owns(const void* data) const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.upper_bound(data);
  if (it == blocks_.begin()) return false;
  --it;
  const auto* start = static_cast<const std::uint8_t*>(it->first);
  return static_cast<const std::uint8_t*>(data) < start + it->second.buffer.bytes;
}

std::vector<cl::Event> Filter::enqueue_buffers(const cl::Buffer&, const cl::Buffer&) {
  throw Error("schedule '" + describe() + "' does not run on buffers");
}

std::vector<cl::Event> Filter::enqueue_io() {
  return takes_buffers() ? enqueue_buffers(io_src_buffer, io_dst_buffer) : enqueue(io_src, io_dst);
}

namespace {

// When run_filter stages through pinned memory: on GPUs from the second run through the same
// buffers (a CPU device reads host memory where it is); BLURTOOL_PINNED_STAGING=0 never, =1
// on every device from the first run (for measurements and tests).
enum class Staging { never, reused, always };
Staging staging_of(const DeviceInfo& device) {
  const char* text = std::getenv("BLURTOOL_PINNED_STAGING");
  if (text && std::string(text) == "0") return Staging::never;
  if (text && std::string(text) == "1") return Staging::always;
  return device.type & CL_DEVICE_TYPE_GPU ? Staging::reused : Staging::never;
}

}  // namespace

bool pins_host_memory(const DeviceInfo& device) {
  return staging_of(device) != Staging::never;
}

bool runs_in_place(const DeviceInfo& device) {
  const char* text = std::getenv("BLURTOOL_ZERO_COPY");
  if (text && std::string(text) == "0") return false;
  return (device.type & CL_DEVICE_TYPE_CPU) && device_driver_name(device) == "PoCL";
}

namespace {

// Whether host pixels at `p` may back a device buffer (CL_MEM_USE_HOST_PTR) for the kernels to
// read and write where they lie: aligned for the widest vector the kernels move to and from
// the pixel buffers, 16 samples (4 pixels; `sample_bytes` each), which PoCL loads with aligned
// instructions. Pixels from allocate_pixels are (kPixelAlignment); pixels on a 16-byte boundary
// only, as malloc gives them, once crashed a 16-bit blur, so any such pixels take the copying
// way.
bool aligned_for_kernels(const void* p, std::size_t sample_bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % (16 * sample_bytes) == 0;
}

// A device buffer of at least `bytes` in `buffer` (kept while large enough).
void ensure_buffer(Runtime& runtime, cl::Buffer& buffer, std::size_t& size, std::size_t bytes,
                   cl_mem_flags flags) {
  if (buffer() && size >= bytes) return;
  buffer = cl::Buffer();
  buffer = cl::Buffer(runtime.context(), flags, bytes);
  size = bytes;
}

template <typename T>
BasicFilterRun<T> run_filter_at(Runtime& runtime, Filter& filter, const BasicImage<T>& rgba,
                                int runs, const PlaneTransfer& planes = {}) {
  const YCbCrPlanes* planes_in = planes.input;
  if (!planes_in && rgba.channels != 4) throw Error("run_filter: expected an RGBA image");
  const PixelDepth depth = depth_of<T>;
  if (filter.depth() != depth) {
    throw Error("run_filter: schedule '" + filter.describe() + "' was built for " +
                std::string(filter.depth() == PixelDepth::u16 ? "16" : "8") +
                "-bit samples, the image has " + std::to_string(8 * sizeof(T)));
  }
  const int w = planes_in ? planes_in->width : rgba.width;
  const int h = planes_in ? planes_in->height : rgba.height;
  if (planes.output && (planes.output->width != w || planes.output->height != h))
    throw Error("run_filter: output planes of another size than the image");
  const bool buffers = filter.takes_buffers();
  const size_t bytes = static_cast<size_t>(w) * h * 4 * sizeof(T);
  inject_allocation_failure(w, h);  // tests only: a device out of memory on demand
  // The output first: on a batch's device thread it comes from the pinned pool, as the input
  // may have (UsePixelPool); such pixels go to and from the device without a staging copy.
  BasicFilterRun<T> run;
  if (!planes.output) {
    run.output = BasicImage<T>{w, h, 4, {}};
    run.output.pixels.resize(static_cast<size_t>(w) * h * 4);
  }
  // A job's RGBA pixels on PoCL are read and written where they lie (runs_in_place), unless
  // they are in the pixel pool's memory, which is a mapped buffer already.
  const bool in_place =
      buffers && runs == 0 && filter.io_in_place && runs_in_place(runtime.device());
  const bool in_place_src = in_place && !planes_in && !in_pixel_pool(rgba.pixels.data()) &&
                            aligned_for_kernels(rgba.pixels.data(), sizeof(T));
  const bool in_place_dst = in_place && !planes.output &&
                            !in_pixel_pool(run.output.pixels.data()) &&
                            aligned_for_kernels(run.output.pixels.data(), sizeof(T));
  if (filter.io_width != w || filter.io_height != h) {
    filter.io_src_buffer = filter.io_dst_buffer = cl::Buffer();
    filter.io_src = filter.io_dst = cl::Image2D();
    filter.io_width = w;
    filter.io_height = h;
    filter.io_staging_in = PinnedBuffer();
    filter.io_staging_out = PinnedBuffer();
    filter.io_runs = 0;
  }
  if (!(in_place_src && in_place_dst) && (buffers ? !filter.io_src_buffer() : !filter.io_src())) {
    // Read and written by kernels on both sides: the filter's, and with planes the colour
    // conversions writing its input and reading its output (NVIDIA refuses a kernel argument
    // whose access the memory flags forbid).
    if (buffers) {
      filter.io_src_buffer = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, bytes);
      filter.io_dst_buffer = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE, bytes);
    } else {
      const cl_channel_type type = pixel_channel_type(depth);
      filter.io_src = make_image(runtime, w, h, type, CL_MEM_READ_WRITE);
      filter.io_dst = make_image(runtime, w, h, type, CL_MEM_READ_WRITE);
    }
  }
  const bool pinned_in = planes_in || in_pixel_pool(rgba.pixels.data()),
             pinned_out = planes.output || in_pixel_pool(run.output.pixels.data());
  if ((planes_in || planes.output) && !filter.io_ycbcr)
    filter.io_ycbcr = std::make_shared<YCbCrConverter>(runtime);
  // Pinned staging is made for the second image through the same buffers: for one image,
  // allocating and page-locking it costs more than the faster transfers save.
  const Staging staging = staging_of(runtime.device());
  if (!in_place && !filter.io_staging_in.data() && staging != Staging::never &&
      !(pinned_in && pinned_out) && (staging == Staging::always || filter.io_runs > 0)) {
    try {
      filter.io_staging_in = PinnedBuffer(runtime, bytes);
      filter.io_staging_out = PinnedBuffer(runtime, bytes);
    } catch (const cl::Error&) {
      // No pinned memory to spare (page-locked memory is scarcer than pageable): the
      // transfers go from pageable memory, as for the first image.
      filter.io_staging_in = PinnedBuffer();
      filter.io_staging_out = PinnedBuffer();
    }
  }
  ++filter.io_runs;
  const bool staged = filter.io_staging_in.data() && filter.io_staging_out.data();
  cl::CommandQueue& queue = runtime.queue();
  const cl::array<size_t, 3> origin = {0, 0, 0};
  const cl::array<size_t, 3> region = {static_cast<size_t>(w), static_cast<size_t>(h), 1};

  // A job's image (runs == 0) is one round trip: its transfers and kernels are enqueued in
  // order on the queue and waited for once, at the download, so that the host waits on the
  // device once an image instead of after every stage; the stages' times then come from
  // profiling events. Timed runs (runs > 0, --bench) wait after each stage and time the
  // upload and download by the host's clock.
  const bool one_wait = runs == 0;
  const cl_bool block = one_wait ? CL_FALSE : CL_TRUE;
  cl::Event up_copy, down_copy;              // the transfers
  double sparse_ms = 0, sparse_down_ms = 0;  // sparse DCT blocks' transfers: host clock
  std::vector<cl::Event> up, passes, down;   // the kernels of each stage
  auto keep = [](std::vector<cl::Event>& to, std::vector<cl::Event> events) {
    to.insert(to.end(), events.begin(), events.end());
  };
  run.planes_in = planes_in != nullptr;
  run.planes_out = planes.output != nullptr;
  run.pass_ms.resize(filter.passes().size());
  const bool staged_out = !planes.output && staged && !pinned_out && !in_place_dst;
  // In place: buffers over the host pixels, which the kernels read (the input: a filter's
  // kernels take it const) and write.
  cl::Buffer src_buffer = filter.io_src_buffer, dst_buffer = filter.io_dst_buffer;
  if (in_place_src)
    src_buffer = cl::Buffer(runtime.context(), CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes,
                            const_cast<T*>(rgba.pixels.data()));
  if (in_place_dst)
    dst_buffer = cl::Buffer(runtime.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes,
                            run.output.pixels.data());
  run.in_place_upload = in_place_src;
  run.in_place_download = in_place_dst;
  const auto round_trip_start = std::chrono::steady_clock::now();
  try {
    auto start = std::chrono::steady_clock::now();
    if (planes_in) {
      // The planes go up as they are (from pinned memory in a batch), or as DCT blocks that
      // the inverse DCT turns into them, and become RGBA there.
      const size_t n = planes_in->sample_count();
      ensure_buffer(runtime, filter.io_planes_in, filter.io_planes_in_bytes, n, CL_MEM_READ_WRITE);
      if (planes.input_blocks) {  // decoded there already (EntropyDecoder)
        keep(up, filter.io_ycbcr->blocks_to_planes(*planes.input_blocks, *planes_in,
                                                   filter.io_planes_in, planes.input_blocks_base));
      } else if (planes_in->dct.is_entropy()) {
        throw Error("run_filter: entropy-coded blocks need the device's entropy decoding first");
      } else if (planes_in->as_blocks()) {
        const DctBlocks& dct = planes_in->dct;
        const size_t coef_bytes = dct.block_count() * 64 * sizeof(std::int16_t);
        ensure_buffer(runtime, filter.io_blocks_in, filter.io_blocks_in_bytes, coef_bytes,
                      CL_MEM_READ_WRITE);
        if (dct.is_sparse()) {  // unpacked into whole blocks there (waits for its writes)
          const auto sparse_start = std::chrono::steady_clock::now();
          filter.io_ycbcr->upload_sparse(dct, filter.io_blocks_in);
          sparse_ms += ms_since(sparse_start);
          run.pinned_upload = in_pixel_pool(dct.sparse.values.data());
        } else {
          queue.enqueueWriteBuffer(filter.io_blocks_in, block, 0, coef_bytes, dct.coef.data(),
                                   nullptr, &up_copy);
          run.pinned_upload = in_pixel_pool(dct.coef.data());
        }
        keep(up, filter.io_ycbcr->blocks_to_planes(filter.io_blocks_in, *planes_in,
                                                   filter.io_planes_in));
      } else {
        queue.enqueueWriteBuffer(filter.io_planes_in, block, 0, n, planes_in->samples.data(),
                                 nullptr, &up_copy);
        run.pinned_upload = in_pixel_pool(planes_in->samples.data());
      }
      if (buffers)
        up.push_back(
            filter.io_ycbcr->to_rgba(filter.io_planes_in, *planes_in, filter.io_src_buffer));
      else
        up.push_back(filter.io_ycbcr->to_rgba(filter.io_planes_in, *planes_in, filter.io_src));
      if (!one_wait) queue.finish();
    } else if (!in_place_src) {
      const void* upload = rgba.pixels.data();
      if (staged && !pinned_in) {
        std::memcpy(filter.io_staging_in.data(), upload, bytes);
        upload = filter.io_staging_in.data();
      }
      run.pinned_upload = pinned_in || upload != rgba.pixels.data();
      if (buffers)
        queue.enqueueWriteBuffer(filter.io_src_buffer, block, 0, bytes, upload, nullptr, &up_copy);
      else
        queue.enqueueWriteImage(filter.io_src, block, origin, region, 0, 0, upload, nullptr,
                                &up_copy);
    }
    if (!one_wait) run.upload_ms = ms_since(start);

    const int repetitions = runs > 0 ? runs + 1 : 1;  // the first of several is the warm-up
    for (int rep = 0; rep < repetitions; ++rep) {
      passes = buffers ? filter.enqueue_buffers(src_buffer, dst_buffer) : filter.enqueue_io();
      if (one_wait) break;
      queue.finish();
      if (rep == 0) continue;
      for (size_t p = 0; p < passes.size(); ++p) run.pass_ms[p].push_back(event_ms(passes[p]));
    }

    start = std::chrono::steady_clock::now();
    if (planes.output) {
      YCbCrPlanes& out = *planes.output;
      const size_t n = out.sample_count();
      ensure_buffer(runtime, filter.io_planes_out, filter.io_planes_out_bytes, n,
                    CL_MEM_READ_WRITE);
      if (buffers)
        keep(down, filter.io_ycbcr->to_planes(filter.io_dst_buffer, out, filter.io_planes_out));
      else
        keep(down, filter.io_ycbcr->to_planes(filter.io_dst, out, filter.io_planes_out));
      if (out.as_blocks()) {  // and on to DCT blocks, which the host entropy-codes
        const size_t coef_bytes = out.dct.block_count() * 64 * sizeof(std::int16_t);
        ensure_buffer(runtime, filter.io_blocks_out, filter.io_blocks_out_bytes, coef_bytes,
                      CL_MEM_READ_WRITE);
        keep(down,
             filter.io_ycbcr->planes_to_blocks(filter.io_planes_out, out, filter.io_blocks_out));
        if (out.dct.is_sparse()) {  // packed there, then read (waiting for all before it)
          const auto sparse_start = std::chrono::steady_clock::now();
          filter.io_ycbcr->download_sparse(filter.io_blocks_out, &out.dct);
          sparse_down_ms = ms_since(sparse_start);
          run.pinned_download = in_pixel_pool(out.dct.sparse.values.data());
        } else {
          queue.enqueueReadBuffer(filter.io_blocks_out, block, 0, coef_bytes, out.dct.coef.data(),
                                  nullptr, &down_copy);
          run.pinned_download = in_pixel_pool(out.dct.coef.data());
        }
      } else {
        queue.enqueueReadBuffer(filter.io_planes_out, block, 0, n, out.samples.data(), nullptr,
                                &down_copy);
        run.pinned_download = in_pixel_pool(out.samples.data());
      }
    } else if (!in_place_dst) {
      void* download = staged_out ? filter.io_staging_out.data() : run.output.pixels.data();
      run.pinned_download = pinned_out || staged_out;
      if (buffers)
        queue.enqueueReadBuffer(filter.io_dst_buffer, block, 0, bytes, download, nullptr,
                                &down_copy);
      else
        queue.enqueueReadImage(filter.io_dst, block, origin, region, 0, 0, download, nullptr,
                               &down_copy);
    }
    if (one_wait) {  // the one wait of the round trip, and whether each step succeeded
      run.enqueue_ms = ms_since(round_trip_start);
      queue.finish();
      run.wait_ms = ms_since(round_trip_start) - run.enqueue_ms;
      throw_if_failed({up_copy, down_copy});
      throw_if_failed(up);
      throw_if_failed(passes);
      throw_if_failed(down);
      if (in_place_dst) {  // the written pixels made visible to the host (a no-op on CPUs)
        void* mapped = queue.enqueueMapBuffer(dst_buffer, CL_TRUE, CL_MAP_READ, 0, bytes);
        queue.enqueueUnmapMemObject(dst_buffer, mapped);
        queue.finish();
      }
    }
    if (staged_out) std::memcpy(run.output.pixels.data(), filter.io_staging_out.data(), bytes);
    if (!one_wait) run.download_ms = ms_since(start);
  } catch (...) {
    finish_quietly(queue);  // no transfer outlives the host memory it reads or writes
    throw;
  }
  run.upload_copy_ms = summed_event_ms({up_copy});
  run.download_copy_ms = summed_event_ms({down_copy});
  if (one_wait) {  // device times: copies and conversion kernels (sparse transfers: host clock)
    run.upload_ms = run.upload_copy_ms + sparse_ms + summed_event_ms(up);
    run.download_ms = summed_event_ms(down) + run.download_copy_ms + sparse_down_ms;
    for (size_t p = 0; p < passes.size(); ++p)
      run.pass_ms[p].push_back(summed_event_ms({passes[p]}));
    std::vector<cl::Event> all = {up_copy, down_copy};
    for (const std::vector<cl::Event>* v : {&up, &passes, &down})
      all.insert(all.end(), v->begin(), v->end());
    event_span_ns(all, &run.device_start_ns, &run.device_end_ns);
    run.commands = static_cast<int>(
        std::count_if(all.begin(), all.end(), [](const cl::Event& e) { return e() != nullptr; }));
    run.check_ms = ms_since(round_trip_start) - run.enqueue_ms - run.wait_ms;
  }
  return run;
}

}  // namespace

FilterRun run_filter(Runtime& runtime, Filter& filter, const Image& rgba, int runs,
                     const PlaneTransfer& planes) {
  return run_filter_at(runtime, filter, rgba, runs, planes);
}

FilterRun16 run_filter(Runtime& runtime, Filter& filter, const Image16& rgba, int runs) {
  return run_filter_at(runtime, filter, rgba, runs);
}

FilterRun timings_of(const FilterRun16& run) {
  FilterRun t;
  t.pass_ms = run.pass_ms;
  t.upload_ms = run.upload_ms;
  t.download_ms = run.download_ms;
  t.upload_copy_ms = run.upload_copy_ms;
  t.download_copy_ms = run.download_copy_ms;
  t.planes_in = run.planes_in;
  t.planes_out = run.planes_out;
  t.pinned_upload = run.pinned_upload;
  t.pinned_download = run.pinned_download;
  t.in_place_upload = run.in_place_upload;
  t.in_place_download = run.in_place_download;
  t.device_start_ns = run.device_start_ns;
  t.device_end_ns = run.device_end_ns;
  t.enqueue_ms = run.enqueue_ms;
  t.wait_ms = run.wait_ms;
  t.check_ms = run.check_ms;
  t.commands = run.commands;
  return t;
}

}  // namespace blurtool
