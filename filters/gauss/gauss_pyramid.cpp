// Host side of the Gaussian's pyramid method (kernels/gauss_pyramid.cl, GaussPyramid in
// gauss_weights.h): the cells' means in levels, the coarse Gaussian along rows and columns,
// and the interpolation back, on a grid of cells planned for each run's origin in the image.
#include <algorithm>
#include <cstdio>

#include "filters/gauss/gauss_schedule.h"
#include "filters/gauss/gauss_weights.h"

namespace blurtool {

namespace {

// Pixels of a row a work-item of gauss_pyramid_up makes (PYRAMID_UP_PIXELS), and cells a
// work-item of the coarse Gaussian's passes makes (PYRAMID_BLOCK).
constexpr int kUpPixels = 4;
constexpr int kBlock = 4;

class PyramidSchedule : public GaussSchedule {
 public:
  explicit PyramidSchedule(const GaussSetup& setup)
      : GaussSchedule(setup), pyramid_(gauss_pyramid(setup.params.sigma)) {
    first_ = std::min(pyramid_.factor, 4);
    for (int f = first_; f < pyramid_.factor; f *= 2) ++levels_;
  }

  // The 2 x 2 level only where f > 4: a first run builds only the kernels it launches.
  std::vector<std::string> kernel_names() override {
    if (levels_ == 0)
      return {"gauss_pyramid_down_pixels", "gauss_pyramid_rows", "gauss_pyramid_cols",
              "gauss_pyramid_up"};
    return {"gauss_pyramid_down_pixels", "gauss_pyramid_rows", "gauss_pyramid_cols",
            "gauss_pyramid_up", "gauss_pyramid_down_cells"};
  }
  // The first level's cells, two of them (ping and pong): 32 / a^2 bytes a pixel and the
  // grid's margins, which the planner's 16 covers for f >= 2.
  std::uint64_t intermediate_pixel_bytes() const override { return first_ == 1 ? 32 : 16; }

  std::vector<PassInfo> pass_infos(std::uint64_t pixel_bytes) override {
    const std::uint64_t pixels = static_cast<std::uint64_t>(s_.width) * s_.height;
    const std::uint64_t f2 = static_cast<std::uint64_t>(pyramid_.factor) * pyramid_.factor;
    const std::uint64_t coarse = 16 * pixels / f2;  // the last level's cells
    std::vector<PassInfo> passes;
    passes.push_back(
        {"gauss_pyramid_down_pixels", pixel_bytes * pixels + 16 * pixels / (first_ * first_)});
    // Level l + 2 reads the cells of factor a 2^l and writes those of a 2^(l + 1).
    for (int l = 0; l < levels_; ++l) {
      const std::uint64_t fine = static_cast<std::uint64_t>(first_) << l;
      passes.push_back({"gauss_pyramid_down_cells", 16 * pixels / (fine * fine) * 5 / 4});
    }
    passes.push_back({"gauss_pyramid_rows", 2 * coarse});
    passes.push_back({"gauss_pyramid_cols", 2 * coarse});
    passes.push_back({"gauss_pyramid_up", coarse + pixel_bytes * pixels});
    return passes;
  }

  void prepare(std::vector<cl::Kernel> kernels) override {
    kernels_ = std::move(kernels);
    const std::vector<double> weights =
        gauss_weights(pyramid_.coarse_sigma, pyramid_.coarse_radius);
    std::vector<float> w(weights.begin(), weights.end());
    cl::Context context = s_.runtime->context();
    weights_ = cl::Buffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          w.size() * sizeof(float), w.data());
    // The largest grid at any origin, at the first level.
    const size_t scale = static_cast<size_t>(pyramid_.factor / first_);
    const size_t cells = (static_cast<size_t>(grid_cells(s_.width)) * scale) *
                         (static_cast<size_t>(grid_cells(s_.height)) * scale);
    ping_ = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * cells);
    pong_ = cl::Buffer(context, CL_MEM_READ_WRITE, 16 * cells);
  }

  void set_origin(int x, int y) override {
    ox_ = x;
    oy_ = y;
  }

  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override {
    const int f = pyramid_.factor, rc = pyramid_.coarse_radius;
    // The grid: the cells the interpolation reads for this origin, and rc more on each side.
    const int cx0 = cell_of(ox_) - rc, cy0 = cell_of(oy_) - rc;
    const int cw = cell_of(ox_ + s_.width - 1) + 1 + rc + 1 - cx0;
    const int ch = cell_of(oy_ + s_.height - 1) + 1 + rc + 1 - cy0;
    cl::CommandQueue& queue = s_.runtime->queue();
    std::vector<cl::Event> events;
    // GPUs: 32 x 8 work-groups over a global size rounded up to them (the kernels skip what
    // lies outside), where the driver's own choice must divide the grid's size, which can be
    // prime (measured: a grid 4058 high ran 100x slower); CPUs: the driver's choice.
    const bool gpu = s_.runtime->device().type & CL_DEVICE_TYPE_GPU;
    auto launch = [&](cl::Kernel& k, int gw, int gh) {
      events.emplace_back();
      const auto up = [](int n, int m) { return static_cast<size_t>((n + m - 1) / m * m); };
      queue.enqueueNDRangeKernel(k, cl::NullRange,
                                 gpu ? cl::NDRange(up(gw, 32), up(gh, 8)) : cl::NDRange(gw, gh),
                                 gpu ? cl::NDRange(32, 8) : cl::NullRange, nullptr, &events.back());
    };
    const int scale = f / first_;
    cl::Buffer* from = &ping_;
    cl::Buffer* to = &pong_;
    cl::Kernel& down = kernels_[0];
    down.setArg(0, src);
    down.setArg(1, *from);
    down.setArg(2, static_cast<cl_int>(s_.width));
    down.setArg(3, static_cast<cl_int>(s_.height));
    down.setArg(4, static_cast<cl_int>(s_.params.edge));
    down.setArg(5, static_cast<cl_int>(first_));
    down.setArg(6, static_cast<cl_int>(ox_));
    down.setArg(7, static_cast<cl_int>(oy_));
    down.setArg(8, static_cast<cl_int>(cx0 * scale));
    down.setArg(9, static_cast<cl_int>(cy0 * scale));
    down.setArg(10, static_cast<cl_int>(cw * scale));
    down.setArg(11, static_cast<cl_int>(ch * scale));
    launch(down, cw * scale, ch * scale);
    for (int s = scale / 2; s >= 1; s /= 2) {
      cl::Kernel& k = kernels_[4];
      k.setArg(0, *from);
      k.setArg(1, *to);
      k.setArg(2, static_cast<cl_int>(cw * s));
      k.setArg(3, static_cast<cl_int>(ch * s));
      launch(k, cw * s, ch * s);
      std::swap(from, to);
    }
    for (int pass = 1; pass <= 2; ++pass) {
      cl::Kernel& k = kernels_[pass];
      k.setArg(0, *from);
      k.setArg(1, *to);
      k.setArg(2, static_cast<cl_int>(cw));
      k.setArg(3, static_cast<cl_int>(ch));
      k.setArg(4, static_cast<cl_int>(rc));
      k.setArg(5, weights_);
      const int blocks = pass == 1 ? (cw + kBlock - 1) / kBlock : (ch + kBlock - 1) / kBlock;
      launch(k, pass == 1 ? blocks : cw, pass == 1 ? ch : blocks);
      std::swap(from, to);
    }
    cl::Kernel& up = kernels_[3];
    up.setArg(0, *from);
    up.setArg(1, dst);
    up.setArg(2, static_cast<cl_int>(s_.width));
    up.setArg(3, static_cast<cl_int>(s_.height));
    up.setArg(4, static_cast<cl_int>(f));
    int shift = 1;
    while ((1 << (shift - 1)) < f) ++shift;
    up.setArg(5, static_cast<cl_int>(shift));
    up.setArg(6, static_cast<cl_int>(ox_));
    up.setArg(7, static_cast<cl_int>(oy_));
    up.setArg(8, static_cast<cl_int>(cx0));
    up.setArg(9, static_cast<cl_int>(cy0));
    up.setArg(10, static_cast<cl_int>(cw));
    launch(up, (s_.width + kUpPixels - 1) / kUpPixels, s_.height);
    return events;
  }

  std::string describe() const override {
    char text[96];
    std::snprintf(text, sizeof text, " f=%d coarse-sigma=%.3f R=%d reach=%d", pyramid_.factor,
                  pyramid_.coarse_sigma, pyramid_.coarse_radius, pyramid_.reach());
    return text;
  }

 private:
  // The first of the two cells the interpolation at image pixel x reads: floor((2x + 1 - f) /
  // 2f).
  int cell_of(int x) const {
    const int f = pyramid_.factor;
    return static_cast<int>(floor_div(2LL * x + 1 - f, 2LL * f));
  }
  // Cells of the grid on an axis of n pixels, at most (any origin): the interpolation's
  // (n - 1) / f + 2 and the coarse radius on each side.
  int grid_cells(int n) const { return n / pyramid_.factor + 4 + 2 * pyramid_.coarse_radius; }

  GaussPyramid pyramid_;
  int first_ = 1;   // a: pixels a first-level cell along each axis, min(f, 4)
  int levels_ = 0;  // 2 x 2 levels after the first: log2(f / a)
  int ox_ = 0, oy_ = 0;
  cl::Buffer ping_, pong_;
};

}  // namespace

std::unique_ptr<GaussSchedule> make_gauss_pyramid(const GaussSetup& setup) {
  return std::make_unique<PyramidSchedule>(setup);
}

}  // namespace blurtool
