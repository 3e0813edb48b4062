// Every schedule that runs on buffers stays inside its input and output: each buffer is host
// memory (CL_MEM_USE_HOST_PTR, which a CPU device such as PoCL uses in place) that ends, or
// begins, at an inaccessible page, so a read or write one byte outside it faults and the test
// binary dies. A buffer is made exactly width * height * pixel bytes, as run_filter makes them.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <memory>

#include "filters/box/box_blur.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/working_space.h"
#include "tests/support/test_support.h"

namespace blurtool {
namespace {

// `bytes` of read-write memory with an inaccessible page right after it (at_end) or right
// before it; page-aligned at one end, 128-byte aligned when bytes is a multiple of 128.
class GuardedBytes {
 public:
  GuardedBytes(size_t bytes, bool at_end) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t body = (bytes + page - 1) / page * page;
    size_ = body + 2 * page;
    void* map = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<std::uint8_t*>(map);
    mprotect(base_, page, PROT_NONE);
    mprotect(base_ + page + body, page, PROT_NONE);
    data_ = at_end ? base_ + page + body - bytes : base_ + page;
  }
  ~GuardedBytes() { munmap(base_, size_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  std::uint8_t* data() { return data_; }

 private:
  std::uint8_t* base_ = nullptr;
  std::uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Whether the device works in CL_MEM_USE_HOST_PTR `buffer` (of `bytes` at `host`) in place
// (mapping it gives the host pointer back): only then can a read outside it reach a guard page.
bool in_place(const cl::Buffer& buffer, const std::uint8_t* host, size_t bytes) {
  void* mapped = runtime().queue().enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ, 0, bytes);
  runtime().queue().enqueueUnmapMemObject(buffer, mapped);
  runtime().queue().finish();
  return mapped == host;
}

// Runs `filter` (buffer schedule, 8-bit) on `input` in guarded buffers, the guard after each
// buffer (at_end) or before it, and returns its output.
Image run_guarded(Filter& filter, const Image& input, bool at_end) {
  const size_t bytes = input.pixels.size();
  GuardedBytes in(bytes, at_end), out(bytes, at_end);
  std::memcpy(in.data(), input.pixels.data(), bytes);
  cl::Buffer src(runtime().context(), CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, bytes, in.data());
  cl::Buffer dst(runtime().context(), CL_MEM_WRITE_ONLY | CL_MEM_USE_HOST_PTR, bytes, out.data());
  EXPECT_TRUE(in_place(src, in.data(), bytes) && in_place(dst, out.data(), bytes))
      << "the device copied a guarded buffer: nothing is checked";
  filter.enqueue_buffers(src, dst);
  runtime().queue().finish();
  Image output{input.width, input.height, 4, {}};
  output.pixels.resize(bytes);
  runtime().queue().enqueueReadBuffer(dst, CL_TRUE, 0, bytes, output.pixels.data());
  return output;
}

// Each buffer schedule of `variants` that `make` builds for this device (others are skipped:
// a GPU-only schedule on a CPU, say), on images whose rows are whole 16-byte groups and on one
// whose rows are not: nothing outside the buffers is touched, and the output equals the same
// filter's through run_filter's own buffers (whose accuracy the schedule's tests check).
template <typename Variant>
void check_every_buffer_schedule(
    const std::vector<Variant>& variants,
    const std::function<std::unique_ptr<Filter>(Variant, int, int)>& make,
    const std::string& what) {
  {
    constexpr size_t kProbeBytes = 4096;
    GuardedBytes probe(kProbeBytes, true);
    cl::Buffer buffer(runtime().context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, kProbeBytes,
                      probe.data());
    if (!in_place(buffer, probe.data(), kProbeBytes))
      GTEST_SKIP() << runtime().device().name << " copies CL_MEM_USE_HOST_PTR buffers";
  }
  int checked = 0;
  // 64x37 and 96x40: rows of whole 16-byte groups; 33x32: rows of 132 bytes. Every size
  // (9472, 15360, 4224 bytes) is a multiple of 128, so that a buffer ending at a page boundary
  // is 128-byte aligned, as a device needs to use it in place.
  for (auto [w, h] : {std::pair{64, 37}, std::pair{96, 40}, std::pair{33, 32}}) {
    const Image input = random_rgba(w, h, static_cast<unsigned>(w * h));
    for (Variant v : variants) {
      std::unique_ptr<Filter> filter;
      try {
        filter = make(v, w, h);
      } catch (const UsageError&) {
        continue;  // not on this device
      }
      if (!filter->takes_buffers()) continue;
      const Image expected = run_filter(runtime(), *filter, input).output;
      for (bool at_end : {true, false}) {
        EXPECT_EQ(max_error(run_guarded(*filter, input, at_end), expected), 0)
            << what << " " << filter->describe() << " " << w << "x" << h
            << (at_end ? " guard after" : " guard before");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0) << what << ": no buffer schedule ran";
}

// The schedules of a variant table but auto.
template <typename Table>
auto all_but_auto(const Table& table) {
  using Variant = decltype(table.begin()->value);
  std::vector<Variant> variants;
  for (const auto& v : table)
    if (v.value != Variant::automatic) variants.push_back(v.value);
  return variants;
}

// Every schedule of a filter family (its parameter type P: BoxParams, GaussParams) but auto, in
// every edge mode, with each of `sizes` (radius or sigma) set on P by `set_size`.
template <typename FilterT, typename P, typename Table, typename Size>
void check_family(const Table& table, std::initializer_list<Size> sizes, void (*set_size)(P&, Size),
                  const std::string& name) {
  using Variant = decltype(P::variant);
  const std::vector<Variant> variants = all_but_auto(table);
  for (EdgeMode edge : {EdgeMode::clamp, EdgeMode::mirror, EdgeMode::zero}) {
    for (Size size : sizes) {
      check_every_buffer_schedule<Variant>(
          variants,
          [&](Variant v, int w, int h) {
            P p;
            set_size(p, size);
            p.variant = v;
            p.edge = edge;
            return std::make_unique<FilterT>(runtime(), p, w, h);
          },
          name + " " + std::to_string(size));
    }
  }
}

TEST(Bounds, BoxBufferSchedulesStayInsideTheirBuffers) {
  // Radius 45: wider and taller than the images.
  check_family<BoxFilter, BoxParams>(
      box_variant_table(), {1, 7, 45}, +[](BoxParams& p, int r) { p.radius = r; }, "box radius");
}

// The working space's 8-bit input and output (widened and narrowed on the device) around every
// box schedule at 16 bits.
TEST(Bounds, EightBitWorkingSpaceStaysInsideItsBuffers) {
  check_every_buffer_schedule<BoxVariant>(
      all_but_auto(box_variant_table()),
      [](BoxVariant v, int w, int h) -> std::unique_ptr<Filter> {
        BoxParams p;
        p.radius = 7;
        p.variant = v;
        auto inner = std::make_shared<BoxFilter>(runtime(), p, w, h, PixelDepth::u16);
        return std::make_unique<WorkingSpaceFilter>(
            runtime(), inner, WorkingSpace{true, true, true}, w, h, PixelDepth::u8);
      },
      "box radius 7 in linear light, premultiplied");
}

TEST(Bounds, GaussianBufferSchedulesStayInsideTheirBuffers) {
  // Sigma 15: radius 45, wider and taller than the images.
  check_family<GaussFilter, GaussParams>(
      gauss_variant_table(), {2.0, 15.0}, +[](GaussParams& p, double s) { p.sigma = s; },
      "gauss sigma");
}

// The fast Gaussian's two walks (one work-item a channel in streams, per-sample byte and short
// indices) at a reach beyond the images, whole lines and short segments, every edge mode.
TEST(Bounds, FastGaussianWalksStayInsideTheirBuffers) {
  for (EdgeMode edge : {EdgeMode::clamp, EdgeMode::mirror, EdgeMode::zero})
    for (int segment : {0, 1, 7})
      check_every_buffer_schedule<CascadeWalk>(
          {CascadeWalk::rings, CascadeWalk::streams},
          [&](CascadeWalk walk, int w, int h) {
            GaussParams p;
            p.sigma = 15.0;  // reach 45, wider and taller than the images
            p.method = GaussMethod::fast;
            p.cascade = walk;
            p.segment = segment;
            p.edge = edge;
            return std::make_unique<GaussFilter>(runtime(), p, w, h);
          },
          "fast gauss segment " + std::to_string(segment));
}

// The pyramid Gaussian's first level reads the input through the edge mode and its last
// writes every output pixel from the cells: at factors 4 and 32 (a reach beyond the images),
// with the image's origin and a tile's (cells cut at other phases), every edge mode.
TEST(Bounds, PyramidGaussianStaysInsideItsBuffers) {
  for (EdgeMode edge : {EdgeMode::clamp, EdgeMode::mirror, EdgeMode::zero})
    for (int origin : {0, 13})
      check_every_buffer_schedule<double>(
          {9.0, 100.0},
          [&](double sigma, int w, int h) {
            GaussParams p;
            p.sigma = sigma;
            p.method = GaussMethod::pyramid;
            p.edge = edge;
            auto filter = std::make_unique<GaussFilter>(runtime(), p, w, h);
            filter->set_origin(origin, 2 * origin + 1);
            return filter;
          },
          "pyramid gauss origin " + std::to_string(origin));
}

}  // namespace
}  // namespace blurtool
