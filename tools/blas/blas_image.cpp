// The image implementation of the BLAS comparison (kernels/blas_image.cl): the write-up's
// design ("outperform cublas with opengl") in OpenCL. Operands live in RGBA32F images, 4 floats per
// texel, in rows as wide as the device allows and no wider than needed; strided vectors are
// gathered into packed images on upload and scattered back on download (part of the end-to-end
// time, as the write-up's glblasMemcpy is). Full rows go straight from and to the caller's
// memory; only the last, zero-padded row passes through a copy (the write-up's "safe buffer").
#include <algorithm>
#include <climits>

#include "filters/filter.h"
#include "tools/blas/blas_impl.h"
#include "util/error.h"

namespace blurtool {

namespace {

constexpr size_t kGroup = 256;  // work-items per work-group, at most

// Where `count` floats lie in an image: texels of 4 floats, `width` per row.
struct Layout {
  size_t count = 0, texels = 1, width = 1, height = 1;
  size_t bytes() const { return width * height * 4 * sizeof(float); }
};

Layout layout(Runtime& rt, size_t count, const std::string& what) {
  const DeviceInfo& d = rt.device();
  if (!d.image_support)
    throw Error("device '" + d.name + "' has no image support; choose another with " +
                parameter("device"));
  Layout l;
  l.count = count;
  l.texels = std::max<size_t>(1, (count + 3) / 4);
  l.width = std::min(l.texels, d.image2d_max_width);
  l.height = (l.texels + l.width - 1) / l.width;
  if (l.height > d.image2d_max_height || l.texels > UINT_MAX) {
    throw Error(what + ": " + std::to_string(count) + " floats need " + std::to_string(l.texels) +
                " texels (" + std::to_string(l.width) + "x" + std::to_string(l.height) +
                "), which exceeds the device's image limits (" +
                std::to_string(d.image2d_max_width) + "x" + std::to_string(d.image2d_max_height) +
                " texels, CL_DEVICE_IMAGE2D_MAX_WIDTH/HEIGHT of '" + d.name + "')");
  }
  return l;
}

cl::Image2D make(Runtime& rt, const Layout& l, cl_mem_flags flags) {
  return make_image(rt, static_cast<int>(l.width), static_cast<int>(l.height), CL_FLOAT, flags);
}

cl::array<size_t, 3> at_row(size_t row) {
  return {0, row, 0};
}
cl::array<size_t, 3> rows(const Layout& l, size_t n) {
  return {l.width, n, 1};
}

// Writes l.count packed floats into `img`, blocking: the full rows from `data` itself, the last
// partial row from a zero-padded copy.
void write_packed(Runtime& rt, cl::Image2D& img, const Layout& l, const float* data) {
  const size_t row = l.width * 4, full = l.count / row;
  if (full > 0) rt.queue().enqueueWriteImage(img, CL_TRUE, at_row(0), rows(l, full), 0, 0, data);
  if (full == l.height) return;
  std::vector<float> tail(row, 0.0f);
  std::copy(data + full * row, data + l.count, tail.begin());
  rt.queue().enqueueWriteImage(img, CL_TRUE, at_row(full), rows(l, 1), 0, 0, tail.data());
}

// Reads l.count packed floats from `img` into `data`, blocking (the inverse of write_packed).
void read_packed(Runtime& rt, const cl::Image2D& img, const Layout& l, float* data) {
  const size_t row = l.width * 4, full = l.count / row;
  if (full > 0) rt.queue().enqueueReadImage(img, CL_TRUE, at_row(0), rows(l, full), 0, 0, data);
  if (full == l.height || l.count == full * row) return;
  std::vector<float> tail(row);
  rt.queue().enqueueReadImage(img, CL_TRUE, at_row(full), rows(l, 1), 0, 0, tail.data());
  std::copy(tail.begin(), tail.begin() + (l.count - full * row), data + full * row);
}

// Offset of element i of a strided vector (BLAS: a negative stride walks from the end).
size_t at(long long i, long long n, long long inc) {
  return static_cast<size_t>(inc > 0 ? i * inc : (n - 1 - i) * -inc);
}

// Uploads elements v[at(i)], i < n, packed: straight from v when inc is 1, else gathered.
cl::Image2D upload_vector(Runtime& rt, const Layout& l, const std::vector<float>& v,
                          long long inc) {
  cl::Image2D img = make(rt, l, CL_MEM_READ_ONLY);
  const long long n = static_cast<long long>(l.count);
  if (inc == 1) {
    write_packed(rt, img, l, v.data());
  } else {
    std::vector<float> packed(l.count);
    for (long long i = 0; i < n; ++i) packed[i] = v[at(i, n, inc)];
    write_packed(rt, img, l, packed.data());
  }
  return img;
}

// Work-items per work-group for `kernel`: a multiple of 4 (sgemm pools texels in groups of 4).
size_t group_size(Runtime& rt, const cl::Kernel& kernel) {
  const size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(rt.device().device);
  if (limit < 4) throw Error("blas image: '" + rt.device().name + "' runs work-groups of < 4");
  return std::min(kGroup, limit) / 4 * 4;
}

// Enqueues `kernel` over `items` work-items (rounded up to whole groups), recording its event.
void launch(Runtime& rt, cl::Kernel& kernel, size_t items, std::vector<cl::Event>& events) {
  const size_t group = group_size(rt, kernel);
  events.emplace_back();
  rt.queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(round_up(items, group)),
                                  cl::NDRange(group), nullptr, &events.back());
}

template <class... Args>
void set_args(cl::Kernel& kernel, const Args&... args) {
  cl_uint index = 0;
  (kernel.setArg(index++, args), ...);
}

cl_long L(long long v) {
  return static_cast<cl_long>(v);
}
cl_uint U(size_t v) {
  return static_cast<cl_uint>(v);
}

}  // namespace

BlasTiming saxpy_image(Runtime& rt, const SaxpyArgs& a, const std::vector<float>& x,
                       std::vector<float>& y, int runs) {
  const std::string what = "saxpy n=" + std::to_string(a.n);
  const Layout l = layout(rt, static_cast<size_t>(a.n), what);
  check_fits(rt, {l.bytes(), l.bytes(), l.bytes()}, what);
  cl::Kernel kernel = rt.kernel("blas_image", "blas_image_saxpy", "");
  const std::vector<float> y0 = y;
  return time_runs(runs, [&]() {
    if (a.n == 0) return 0.0;
    cl::Image2D ix = upload_vector(rt, l, x, a.incx), iy = upload_vector(rt, l, y0, a.incy);
    cl::Image2D out = make(rt, l, CL_MEM_WRITE_ONLY);
    std::vector<cl::Event> events;
    set_args(kernel, ix, iy, out, U(l.texels), a.alpha);
    launch(rt, kernel, l.texels, events);
    if (a.incy == 1) {
      read_packed(rt, out, l, y.data());
    } else {
      std::vector<float> packed(l.count);
      read_packed(rt, out, l, packed.data());
      for (long long i = 0; i < a.n; ++i) y[at(i, a.n, a.incy)] = packed[i];
    }
    return events_ms(events);
  });
}

BlasTiming sdot_image(Runtime& rt, const SdotArgs& a, const std::vector<float>& x,
                      const std::vector<float>& y, float& result, int runs) {
  const std::string what = "sdot n=" + std::to_string(a.n);
  const Layout l = layout(rt, static_cast<size_t>(a.n), what);
  check_fits(rt, {l.bytes(), l.bytes(), l.bytes(), l.bytes()}, what);
  std::vector<cl::Kernel> kernels =
      rt.kernels("blas_image", {"blas_image_mul", "blas_image_halve"}, "");
  cl::Kernel mul = kernels[0];
  cl::Kernel halve = kernels[1];
  return time_runs(runs, [&]() {
    result = 0;
    if (a.n == 0) return 0.0;
    cl::Image2D ix = upload_vector(rt, l, x, a.incx), iy = upload_vector(rt, l, y, a.incy);
    cl::Image2D ping = make(rt, l, CL_MEM_READ_WRITE), pong = make(rt, l, CL_MEM_READ_WRITE);
    std::vector<cl::Event> events;
    set_args(mul, ix, iy, ping, U(l.texels));
    launch(rt, mul, l.texels, events);
    for (size_t texels = l.texels; texels > 1; texels -= texels / 2) {
      set_args(halve, ping, pong, U(texels));
      launch(rt, halve, texels - texels / 2, events);
      std::swap(ping, pong);
    }
    float v[4];
    rt.queue().enqueueReadImage(ping, CL_TRUE, at_row(0), {1, 1, 1}, 0, 0, v);
    result = (v[0] + v[1]) + (v[2] + v[3]);
    return events_ms(events);
  });
}

BlasTiming sgemm_image(Runtime& rt, int form, const SgemmArgs& a, const std::vector<float>& A,
                       const std::vector<float>& B, std::vector<float>& C, int runs) {
  const std::string what = "sgemm " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" +
                           std::to_string(a.k) + " form " + std::to_string(form);
  if (form != 1 && form != 4) throw Error(what + ": the image sgemm form is 1 or 4");
  const bool four = form == 4, read_c = a.beta != 0;
  // 4x4: op(A)'s rows and op(B)'s columns must run along l, starting on a texel; an operand
  // laid out otherwise is reordered (A when !trans_a, B when trans_b: the write-up's rule, and
  // also where the leading dimension is not a multiple of 4).
  const bool reorder_a = four && a.k > 0 && (!a.trans_a || a.lda % 4 != 0);
  const bool reorder_b = four && a.k > 0 && (a.trans_b || a.ldb % 4 != 0);
  const long long k4 = (a.k + 3) / 4 * 4;
  const Layout la = layout(rt, matrix_a_length(a), what + " A");
  const Layout lb = layout(rt, matrix_b_length(a), what + " B");
  const Layout lc = layout(rt, matrix_c_length(a), what + " C");
  const Layout lra = layout(rt, reorder_a ? a.m * k4 : 0, what + " reordered A");
  const Layout lrb = layout(rt, reorder_b ? a.n * k4 : 0, what + " reordered B");
  std::vector<size_t> bytes = {la.bytes(), lb.bytes(), lc.bytes()};
  if (read_c) bytes.push_back(lc.bytes());
  if (reorder_a) bytes.push_back(lra.bytes());
  if (reorder_b) bytes.push_back(lrb.bytes());
  check_fits(rt, bytes, what);

  std::vector<cl::Kernel> kernels = rt.kernels(
      "blas_image", {four ? "blas_image_sgemm_4x4" : "blas_image_sgemm_1x1", "blas_image_reorder"},
      "");
  cl::Kernel gemm = kernels[0];
  cl::Kernel reorder = kernels[1];
  const size_t group = group_size(rt, gemm);
  const std::vector<float> c0 = C;
  return time_runs(runs, [&]() {
    if (a.m == 0 || a.n == 0) return 0.0;
    cl::Image2D ia = make(rt, la, CL_MEM_READ_ONLY), ib = make(rt, lb, CL_MEM_READ_ONLY);
    write_packed(rt, ia, la, A.data());
    write_packed(rt, ib, lb, B.data());
    // With beta = 0, C is never read: a 1x1 image stands in for it.
    cl::Image2D ic = make(rt, read_c ? lc : Layout{}, CL_MEM_READ_ONLY);
    if (read_c) write_packed(rt, ic, lc, c0.data());
    cl::Image2D out = make(rt, lc, CL_MEM_WRITE_ONLY);
    std::vector<cl::Event> events;
    // Element (r, l) of an operand at r * r_stride + l * l_stride, reordered into `dst`.
    auto reordered = [&](const cl::Image2D& src, const Layout& ld, long long r_stride,
                         long long l_stride) {
      cl::Image2D dst = make(rt, ld, CL_MEM_READ_WRITE);
      set_args(reorder, src, dst, U(ld.texels), U(k4 / 4), L(a.k), L(r_stride), L(l_stride));
      launch(rt, reorder, ld.texels, events);
      return dst;
    };
    if (four) {
      // Texels from one row of op(A) (column of op(B)) to the next.
      cl_uint a_stride = U(a.lda / 4), b_stride = U(a.ldb / 4);
      if (reorder_a) {
        ia = a.trans_a ? reordered(ia, lra, a.lda, 1) : reordered(ia, lra, 1, a.lda);
        a_stride = U(k4 / 4);
      }
      if (reorder_b) {
        ib = a.trans_b ? reordered(ib, lrb, 1, a.ldb) : reordered(ib, lrb, a.ldb, 1);
        b_stride = U(k4 / 4);
      }
      set_args(gemm, ia, ib, ic, out, cl::Local(group * sizeof(float)), U(lc.texels), L(a.m),
               L(a.n), L(a.k), a_stride, b_stride, L(a.ldc), a.alpha, a.beta);
    } else {
      set_args(gemm, ia, ib, ic, out, cl::Local(group * sizeof(float)), U(lc.texels), L(a.m),
               L(a.n), L(a.k), L(a.lda), L(a.ldb), L(a.ldc), cl_int(a.trans_a), cl_int(a.trans_b),
               a.alpha, a.beta);
    }
    launch(rt, gemm, lc.texels * 4, events);
    // Back into the ldc layout: columns of m elements; the rows i >= m keep the caller's data.
    if (a.ldc == a.m) {
      read_packed(rt, out, lc, C.data());
    } else {
      std::vector<float> packed(lc.count);
      read_packed(rt, out, lc, packed.data());
      for (long long j = 0; j < a.n; ++j)
        std::copy_n(packed.begin() + j * a.ldc, a.m, C.begin() + j * a.ldc);
    }
    return events_ms(events);
  });
}

}  // namespace blurtool
