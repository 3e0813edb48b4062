// Image input and output: PNG and JPEG files to and from 8-bit interleaved pixels.
//
// Which library does what:
// - the format is recognised by the file's signature bytes only, PNG (89 50 4E 47 0D 0A 1A 0A) or
//   JPEG (FF D8 FF), so no other decoder (GIF, TGA, PNM, HDR, ...) is ever reached;
// - stb_image (Debian's libstb) reads the header first (width, height, channels, 16-bit PNG)
//   so that max_pixels is enforced before anything is decoded;
// - JPEGs are decoded by libjpeg-turbo's TurboJPEG API (SIMD; 2x faster than stb_image on
//   12-Mpixel photos), PNGs by libpng straight into the Image (stb_image needs a second buffer
//   and a copy; 1.1x to 1.7x faster); stb_image decodes whatever those two refuse (CMYK JPEGs,
//   PNGs libpng rejects), so that every file accepted before is still accepted;
// - PNGs are encoded by libpng (filter Up, zlib's run-length strategy: 7x faster than
//   stb_image_write and 25-32% smaller on photos), JPEGs by TurboJPEG (13x faster; 4:2:0
//   chroma subsampling, or greyscale).
// Outputs are written to a temporary file in the output's directory and renamed into place, so
// an interrupted or failed run never leaves a partial file; the temporary files in flight are
// also removed when the process is killed by SIGINT, SIGTERM or SIGHUP (install_cleanup_handlers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blurtool {

/// An image in host memory: `width` x `height` pixels of `channels` (1 grey, 2 grey+alpha,
/// 3 RGB, 4 RGBA) interleaved samples of type T, rows top to bottom, row pitch = width *
/// channels samples. Image holds 8-bit samples (0..255), Image16 16-bit ones (0..65535, native
/// byte order), as decoded from a 16-bit PNG.
template <typename T>
struct BasicImage {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<T> pixels;

  /// Sample offset of pixel (x, y), channel c.
  std::size_t index(int x, int y, int c = 0) const {
    return (static_cast<std::size_t>(y) * width + x) * channels + c;
  }
};
using Image = BasicImage<std::uint8_t>;
using Image16 = BasicImage<std::uint16_t>;

/// Container formats blurtool reads and writes.
enum class ImageFormat { png, jpeg };

/// Largest image accepted, in pixels (width * height), checked from the header before decoding.
constexpr std::uint64_t kDefaultMaxPixels = std::uint64_t{1} << 28;

/// Largest input file accepted, in bytes, checked before it is read (stb_image takes an int
/// length, so at most 2^31 - 1).
constexpr std::uint64_t kDefaultMaxFileBytes = std::uint64_t{1} << 30;

/// Reads a PNG or JPEG file. The format is recognised by its signature bytes, not its name.
/// 16-bit PNGs are reduced to 8 bits and a warning is appended to `warnings` (if not null).
/// A JPEG without its end-of-image marker after the scan data is refused as truncated.
/// Throws blurtool::Error naming `path` when the file is missing, empty, unreadable, not PNG or
/// JPEG, truncated, corrupt, larger than `max_pixels` (width * height, from the header) or
/// longer than `max_file_bytes` (from the file's size before reading, or while reading one that
/// has none, such as a pipe).
/// With `orient`, a JPEG's EXIF orientation is applied (exif_orientation, apply_orientation), so
/// that a phone photo comes out upright; without it the stored pixels are returned as they are.
Image load_image(const std::string& path, std::vector<std::string>* warnings = nullptr,
                 std::uint64_t max_pixels = kDefaultMaxPixels,
                 std::uint64_t max_file_bytes = kDefaultMaxFileBytes, bool orient = true);

/// Reads all of an open file descriptor (standard input, a pipe) into memory, refusing more
/// than `max_file_bytes`. `name` is used in error messages. Throws blurtool::Error.
std::vector<std::uint8_t> read_all(int fd, const std::string& name,
                                   std::uint64_t max_file_bytes = kDefaultMaxFileBytes);

/// The same from bytes in memory; `name` is used in error messages.
Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                   std::vector<std::string>* warnings = nullptr,
                   std::uint64_t max_pixels = kDefaultMaxPixels, bool orient = true);

/// The EXIF orientation of a JPEG file's bytes, 1 to 8 (TIFF tag 0x0112 in IFD0 of the first
/// APP1 "Exif" segment, read by libexif): 1 upright, 2 mirrored left-right, 3 turned 180
/// degrees, 4 mirrored top-bottom, 5 transposed, 6 to be turned 90 degrees clockwise, 7
/// transversed, 8 to be turned 90 degrees anticlockwise. 1 when there is no such tag, its value
/// is out of range, the file is not a JPEG, or its markers are damaged (the decoder reports
/// that). Never throws.
int exif_orientation(const std::vector<std::uint8_t>& bytes);

/// `image` as a viewer shows it with EXIF orientation `orientation` (see exif_orientation):
/// mirrored and/or turned; for 5 to 8 width and height swap. 1, or a value outside 1..8, returns
/// it unchanged.
Image apply_orientation(const Image& image, int orientation);

/// The output format implied by `path`'s extension (.png, .jpg, .jpeg; case-insensitive).
/// Throws blurtool::UsageError naming `path` for any other extension.
ImageFormat output_format_for(const std::string& path);

/// Encodes `image` as PNG or JPEG (`jpeg_quality` 1..100) into bytes.
/// Throws blurtool::Error if encoding fails.
/// PNG keeps all 1-4 channels exactly. JPEG has no alpha: it is dropped, so a 1- or 2-channel
/// image is saved as a greyscale JPEG and reads back as 1 channel, a 3- or 4-channel one as
/// YCbCr with 4:2:0 chroma subsampling that reads back as 3 channels. A `jpeg_quality` outside
/// 1..100 throws blurtool::UsageError (it is ignored for PNG).
std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format, int jpeg_quality);

/// Writes `image` to `path` in the format its extension names: encodes, writes to a temporary
/// file in the same directory, then renames it into place (no partial file on any failure).
/// Throws blurtool::Error naming `path` if the directory is missing or unwritable.
void save_image(const Image& image, const std::string& path, int jpeg_quality = 95);

/// Writes `bytes` to `path` through a temporary file in the same directory renamed into place,
/// so that no partial file is ever left. Throws blurtool::Error naming `path` on any failure.
/// Thread-safe. The temporary file is registered for the signal handlers of
/// install_cleanup_handlers(), which the first call installs.
void write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes);

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that unlink the temporary files of every
/// write_file_atomic in flight, in any thread, then hand the signal on: to the handler that was
/// installed before, if any, else to the default action (the signal is re-raised, so the exit
/// status still says which signal ended the process; other threads stop writing at once). If a
/// chained handler returns, the process goes on and the writes that were in flight fail, their
/// temporary files gone. A signal that is ignored (SIG_IGN, as under nohup) stays ignored.
/// Idempotent and thread-safe; write_file_atomic calls it, a program may call it earlier. The
/// registry is a fixed table of 64 paths of up to 4095 bytes, written and read with lock-free
/// atomics only (async-signal-safe); a temporary file that finds no free slot is still written and
/// renamed, but not removed by a signal.
void install_cleanup_handlers();

/// The number of temporary files registered right now (for tests and diagnostics).
int in_flight_temp_files();

/// Expands 1-4 channels to RGBA (grey -> R=G=B, missing alpha -> 255), the layout the device
/// kernels work on.
Image to_rgba(const Image& image);

/// Reduces an RGBA image back to `channels` (1: R, 2: R and A, 3: RGB, 4: all), the inverse of
/// to_rgba for images that came from it.
Image from_rgba(const Image& rgba, int channels);

}  // namespace blurtool
