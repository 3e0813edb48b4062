// CPU side of the probes: the write-up's host walk (timed by run_probe, and the stride kernel's
// reference) and the references of the cache and divergence kernels (for the tests).
#include <cmath>

#include "tools/probe.h"

namespace blurtool {

std::uint32_t stride_walk(std::uint8_t* buf, std::size_t bytes, std::uint32_t stride,
                          std::size_t accesses) {
  // As the write-up's time_stride(): unsigned loc, advanced by the stride, masked at each use.
  const std::uint32_t mask = static_cast<std::uint32_t>(bytes - 1);
  std::uint32_t sum = 0, loc = 0;
  for (std::size_t i = accesses; i > 0; --i) {
    sum += buf[loc & mask]++;
    loc += stride;
  }
  return sum;
}

std::vector<std::uint32_t> cache_reference(const Image& rgba, ProbeScale s) {
  const int w = rgba.width, h = rgba.height;
  const int step_x = std::max(1, w / 100), step_y = std::max(1, h / 100);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y) {
    const int sy = static_cast<int>(static_cast<long long>(y) * s.num / s.den % h);
    for (int x = 0; x < w; ++x) {
      const int sx = static_cast<int>(static_cast<long long>(x) * s.num / s.den % w);
      std::uint32_t packed = 0;
      for (int c = 0; c < 4; ++c) {
        std::uint32_t sum = 0;
        for (int i = 0; i < 5; ++i)
          sum += rgba.pixels[rgba.index((sx + i * step_x) % w, (sy + i * step_y) % h, c)];
        packed |= (sum + 2) / 5 << (8 * c);
      }
      out[static_cast<std::size_t>(y) * w + x] = packed;
    }
  }
  return out;
}

float branch_doit(int x, int width, float frequency) {
  const float inv_w = 1.0f / static_cast<float>(width);
  const float u = (static_cast<float>(x) + 0.5f) * inv_w;
  const float v = u * frequency;
  return v - std::floor(v);
}

namespace {

struct Float4 {
  float x, y, z, w;
};

// kernels/probe.cl's cool_colors, one float operation at a time.
Float4 cool_colors(float px, float py, int rounds) {
  Float4 c{0, 0, 0, 0};
  for (int k = 0; k < rounds; ++k) {
    c.x += std::sin(px);
    c.y += std::log(std::cos(py));
    c.z += std::exp(px);
    c.w += std::pow(px, py);
    px = px * 0.999f + 0.0005f;
    py = py * 0.999f + 0.0005f;
  }
  return c;
}

}  // namespace

std::vector<float> branch_reference(int width, int height, int rounds, BranchKind kind,
                                    float frequency) {
  const float inv_w = 1.0f / static_cast<float>(width), inv_h = 1.0f / static_cast<float>(height);
  std::vector<float> out(static_cast<std::size_t>(width) * height * 4);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float px = (static_cast<float>(x) + 0.5f) * inv_w;
      const float py = (static_cast<float>(y) + 0.5f) * inv_h;
      Float4 c;
      const float doit = kind == BranchKind::none ? 0.0f : branch_doit(x, width, frequency);
      if (doit < 0.3f) {
        const Float4 a = cool_colors(px, py, rounds);
        c = {a.w * 0.5f, a.x * 0.5f, a.y * 0.5f, a.z * 0.5f};
      } else if (doit < 0.7f) {
        const Float4 a = cool_colors(1.0f - px, 1.0f - py, rounds);
        c = {a.x * 4.5f, a.y * 4.5f, a.z * 4.5f, a.w * 4.5f};
      } else {
        const Float4 a = cool_colors(py, px, rounds);
        c = {a.x * 0.15f, a.y * 0.15f, a.z * 0.15f, a.w * 0.15f};
      }
      float* o = &out[(static_cast<std::size_t>(y) * width + x) * 4];
      o[0] = c.x;
      o[1] = c.y;
      o[2] = c.z;
      o[3] = c.w;
    }
  }
  return out;
}

}  // namespace blurtool
