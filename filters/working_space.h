// The working space of a blur (issue 10): premultiplied alpha and linear light. A blur averages
// pixels; averaging straight-alpha colour lets the colour of transparent pixels bleed into
// opaque ones (dark or coloured halos at transparent edges), and averaging sRGB-encoded values
// darkens every edge (a black/white edge blurs to sRGB 128 where light mixes to 188). Both are
// fixed by converting into the working space before the blur and back after it, on RGBA16
// pixels so that neither conversion costs precision (premultiplied colour at 8 bits keeps only
// alpha's levels; linear light at 8 bits loses the shadows). The device does the conversions
// (kernels/working_space.cl) with the same integer arithmetic as the CPU reference here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "filters/filter.h"
#include "image/image_io.h"
#include "runtime/cl_runtime.h"

namespace blurtool {

/// Which conversions a blur's working space applies. The default (neither) is the stored form.
struct WorkingSpace {
  bool linear_light = false;   ///< colour through the exact sRGB transfer curves (--linear-light)
  bool premultiplied = false;  ///< colour times alpha (the default for images with alpha)
  /// The result is written with 8 bits: the conversion back takes an alpha that rounds to 0
  /// there (at most 128 of 65535) as 0, so that such a pixel comes out black-transparent, not
  /// with a sliver of premultiplied colour divided by a sliver of alpha (any colour at all).
  bool eight_bit_alpha = false;
  bool is_stored_form() const { return !linear_light && !premultiplied; }
  bool operator==(const WorkingSpace& o) const {
    return linear_light == o.linear_light && premultiplied == o.premultiplied &&
           eight_bit_alpha == o.eight_bit_alpha;
  }
  /// "linear-light", "premultiplied", both joined by a space, or "" for the stored form.
  std::string text() const;
};

/// The sRGB decoding table on 16-bit values: entry v is round(65535 * L(v / 65535)), L the
/// exact sRGB electro-optical transfer function (IEC 61966-2-1: V / 12.92 up to 0.04045, else
/// ((V + 0.055) / 1.055)^2.4). 65536 entries.
const std::vector<std::uint16_t>& srgb_to_linear_table();

/// The sRGB encoding table, the inverse curve (12.92 L up to 0.0031308, else 1.055 L^(1/2.4)
/// - 0.055), on 16-bit values. 65536 entries.
const std::vector<std::uint16_t>& linear_to_srgb_table();

/// The CPU reference of the conversion into `space`: RGBA16 `rgba` (straight alpha,
/// sRGB-encoded) with colour linearised by srgb_to_linear_table() if linear_light, then
/// multiplied by alpha (c a / 65535, rounded half down) if premultiplied. Alpha is unchanged.
Image16 to_working_space(const Image16& rgba, WorkingSpace space);

/// The CPU reference of the conversion back: alpha at most 128 taken as 0 if eight_bit_alpha,
/// colour divided by alpha (c 65535 / a, rounded half up, at most 65535; every
/// channel 0 where alpha is 0) if premultiplied, then encoded by linear_to_srgb_table() if
/// linear_light.
Image16 from_working_space(const Image16& rgba, WorkingSpace space);

/// A 16-bit filter run in a working space: a prepare pass (stored form -> working space), the
/// passes of `inner` (built for PixelDepth::u16 and the same size), and a finish pass (back).
/// Its input and output are RGBA buffers of the stored form's depth `stored` (takes_buffers()
/// is true; depth() is `stored`): RGBA16, or RGBA8 widened on the device (v * 257) and
/// reduced on the way out ((v * 255 + 32767) / 65535), exactly as widen() and narrow() would
/// on the host, so that an 8-bit image goes to and from the device as it is stored. For an
/// image schedule the working pixels are copied into and out of images around its passes (two
/// more passes). Throws blurtool::Error if `inner` is not a 16-bit filter; cl::Error on OpenCL
/// failures.
class WorkingSpaceFilter : public Filter {
 public:
  WorkingSpaceFilter(Runtime& runtime, std::shared_ptr<Filter> inner, WorkingSpace space, int width,
                     int height, PixelDepth stored = PixelDepth::u16);
  std::string describe() const override;
  const std::vector<PassInfo>& passes() const override { return passes_; }
  /// The inner filter's compulsory bytes at the stored form's size a pixel.
  std::uint64_t compulsory_bytes() const override;
  std::vector<cl::Event> enqueue(const cl::Image2D& src, const cl::Image2D& dst) override;
  bool takes_buffers() const override { return true; }
  std::vector<cl::Event> enqueue_buffers(const cl::Buffer& src, const cl::Buffer& dst) override;
  void set_origin(int x, int y) override { inner_->set_origin(x, y); }
  /// The filter that runs in the working space.
  Filter& inner() { return *inner_; }

 private:
  Runtime& runtime_;
  std::shared_ptr<Filter> inner_;
  WorkingSpace space_;
  int width_, height_;
  std::vector<PassInfo> passes_;
  cl::Kernel prepare_, finish_;
  cl::Buffer to_linear_, to_srgb_;  // the tables
  cl::Buffer work_a_, work_b_;      // working pixels before and after the inner filter
  cl::Image2D image_a_, image_b_;   // the same as images, for an image schedule
};

}  // namespace blurtool
