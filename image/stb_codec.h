// stb_image (Debian's libstb), the decoder of last resort for image_io's front door: it decodes
// whatever TurboJPEG and libpng do not read (CMYK JPEGs, Apple's CgBI PNGs), but no file they
// refuse as damaged, in a child process so that an assertion or a crash in stb ends the child
// only.
// Internal to image/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image/codec_common.h"
#include "image/image_io.h"

namespace blurtool {

/// Decodes the checked `file` (check_file: format, header, max_pixels held) from `bytes` with
/// stb_image at the depth of T (8 bits, stbi_load; or 16 for a 16-bit PNG, stbi_load_16), in the
/// file's own channels (1-4, interleaved). Debian's libstb is built with assertions, so stb
/// decodes in a child process into shared memory sized from the header (see stb_codec.cpp).
/// `first_reason`: why the fast decoder refused the file, reported instead of stb's when not "".
/// Throws blurtool::Error naming `name` where the image is too large for stb, stb refuses it,
/// the decoded size differs from the header, the child fails, or memory or fork fail. T is
/// std::uint8_t or std::uint16_t.
template <typename T>
BasicImage<T> decode_stb(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         const CheckedFile& file, const std::string& first_reason);

}  // namespace blurtool
