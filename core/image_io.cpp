// PNG and JPEG reading and writing (see image_io.h). Input is checked before stb_image sees it:
// the signature picks the format (so stb's GIF, TGA, PNM, HDR, ... decoders are never reached),
// stbi_info_from_memory's width and height are held against max_pixels before anything is
// decoded, and a JPEG's top-level marker segments are walked to its first scan so that a
// truncated file, which stb_image would decode without complaint, is refused. Output is encoded
// in memory and then written to a temporary file that is renamed over the destination.
#include "core/image_io.h"

#include <fcntl.h>
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

#include "core/error.h"

namespace blurtool {

namespace {

constexpr std::uint8_t kPngSignature[] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
constexpr std::uint8_t kJpegSignature[] = {0xFF, 0xD8, 0xFF};

// stb_image_write's PNG encoder keeps the filtered rows, (width * channels + 1) * height bytes,
// and its deflate output (up to 9/8 of that, in a buffer that grows by doubling) in `int`s;
// below this many filtered bytes none of those can overflow.
constexpr std::uint64_t kMaxPngFilteredBytes = std::uint64_t{896} << 20;

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string stb_reason() {
  const char* reason = stbi_failure_reason();
  return reason ? reason : "unknown error";
}

template <std::size_t N>
bool starts_with(const std::vector<std::uint8_t>& bytes, const std::uint8_t (&prefix)[N]) {
  return bytes.size() >= N && std::equal(prefix, prefix + N, bytes.begin());
}

// Bytes in an image of these dimensions; throws if they are not a valid 8-bit image's.
std::size_t checked_size(int width, int height, int channels, const char* what) {
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error(std::string(what) + ": invalid image " + std::to_string(width) + "x" +
                std::to_string(height) + " with " + std::to_string(channels) + " channels");
  }
  return static_cast<std::size_t>(width) * static_cast<std::size_t>(height) *
         static_cast<std::size_t>(channels);
}

void check_image(const Image& image, const char* what) {
  if (image.pixels.size() != checked_size(image.width, image.height, image.channels, what)) {
    throw Error(std::string(what) + ": pixel buffer holds " + std::to_string(image.pixels.size()) +
                " bytes, not width * height * channels");
  }
}

[[noreturn]] void throw_truncated(const std::string& name, const std::string& where) {
  throw Error(name + ": truncated JPEG (" + where + ")");
}

// Walks the JPEG's top-level marker segments from SOI to the first SOS (skipping each segment
// whole by its big-endian length, so that markers inside an APP1 EXIF thumbnail are never read
// as the image's own), then requires an EOI marker somewhere in the scan data after it. In
// entropy-coded data a 0xFF byte is stuffed as FF 00, so FF D9 there can only be the EOI.
void check_jpeg_complete(const std::vector<std::uint8_t>& b, const std::string& name) {
  std::size_t pos = 2;  // after SOI
  for (;;) {
    if (pos >= b.size()) throw_truncated(name, "ends before its image data");
    if (b[pos] != 0xFF) {
      throw Error(name + ": corrupt JPEG (no marker at byte " + std::to_string(pos) + ")");
    }
    while (pos < b.size() && b[pos] == 0xFF) ++pos;  // a marker may follow any number of FFs
    if (pos >= b.size()) throw_truncated(name, "ends before its image data");
    const std::uint8_t marker = b[pos++];
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // TEM, RSTn: no length
    if (marker == 0x00 || marker == 0xD8 || marker == 0xD9) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "FF %02X", marker);
      throw Error(name + ": corrupt JPEG (unexpected marker " + hex + " before its image data)");
    }
    if (b.size() - pos < 2) throw_truncated(name, "ends inside a marker segment");
    const std::size_t length = (std::size_t{b[pos]} << 8) | b[pos + 1];
    if (length < 2) throw Error(name + ": corrupt JPEG (marker segment length < 2)");
    if (length > b.size() - pos) throw_truncated(name, "ends inside a marker segment");
    pos += length;
    if (marker == 0xDA) break;  // SOS: entropy-coded data follows
  }
  for (; pos + 1 < b.size(); ++pos) {
    if (b[pos] == 0xFF && b[pos + 1] == 0xD9) return;
  }
  throw_truncated(name, "no end-of-image marker after the scan data");
}

// Receives stb_image_write's output. Never lets an exception unwind through stb's C frames.
struct Sink {
  std::vector<std::uint8_t> bytes;
  bool failed = false;
};

void append_to_sink(void* context, void* data, int size) {
  Sink* sink = static_cast<Sink*>(context);
  if (sink->failed || size <= 0) return;
  const std::uint8_t* p = static_cast<const std::uint8_t*>(data);
  try {
    sink->bytes.insert(sink->bytes.end(), p, p + size);
  } catch (...) {
    sink->failed = true;
  }
}

// Deletes a temporary file unless release()d, so every early exit from save_image cleans up.
class TempFile {
 public:
  TempFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  int close() {  // returns 0 or errno
    const int result = ::close(fd_);
    fd_ = -1;
    return result == 0 ? 0 : errno;
  }
  void release() { path_.clear(); }

 private:
  std::string path_;
  int fd_;
};

}  // namespace

Image load_image(const std::string& path, std::vector<std::string>* warnings,
                 std::uint64_t max_pixels) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw Error(path + ": cannot open: " + errno_text(err));
  }
  std::vector<std::uint8_t> bytes;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= INT_MAX) {
    bytes.reserve(static_cast<std::size_t>(st.st_size));
  }
  std::uint8_t buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot read: " + errno_text(err));
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > INT_MAX) {  // stb_image takes an int length
      ::close(fd);
      throw Error(path + ": file is too large (2 GiB or more)");
    }
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  ::close(fd);
  return decode_image(bytes, path, warnings, max_pixels);
}

Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& name,
                   std::vector<std::string>* warnings, std::uint64_t max_pixels) {
  if (bytes.empty()) throw Error(name + ": file is empty");
  if (bytes.size() > INT_MAX) throw Error(name + ": file is too large (2 GiB or more)");
  const bool png = starts_with(bytes, kPngSignature);
  if (!png && !starts_with(bytes, kJpegSignature)) {
    throw Error(name + ": not a PNG or JPEG image (unrecognised signature bytes)");
  }
  const char* format = png ? "PNG" : "JPEG";
  if (!png) check_jpeg_complete(bytes, name);

  const int length = static_cast<int>(bytes.size());
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(bytes.data(), length, &width, &height, &channels)) {
    throw Error(name + ": corrupt or unsupported " + format + " header (" + stb_reason() + ")");
  }
  if (width <= 0 || height <= 0 || channels < 1 || channels > 4) {
    throw Error(name + ": unsupported " + format + " (" + std::to_string(width) + "x" +
                std::to_string(height) + ", " + std::to_string(channels) + " channels)");
  }
  const std::uint64_t pixels = std::uint64_t(width) * std::uint64_t(height);
  if (pixels > max_pixels) {
    throw Error(name + ": image is " + std::to_string(width) + "x" + std::to_string(height) +
                " = " + std::to_string(pixels) + " pixels, more than the limit of " +
                std::to_string(max_pixels) + " pixels");
  }
  const bool sixteen_bit = png && stbi_is_16_bit_from_memory(bytes.data(), length);

  int w = 0, h = 0, c = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> data(
      stbi_load_from_memory(bytes.data(), length, &w, &h, &c, 0), stbi_image_free);
  if (!data) throw Error(name + ": cannot decode " + format + " (" + stb_reason() + ")");
  if (w != width || h != height || c < 1 || c > 4) {
    throw Error(name + ": corrupt " + format + " (decoded size differs from its header)");
  }
  Image image;
  image.width = w;
  image.height = h;
  image.channels = c;
  image.pixels.assign(data.get(), data.get() + checked_size(w, h, c, name.c_str()));
  if (sixteen_bit && warnings) warnings->push_back(name + ": 16-bit PNG read as 8-bit");
  return image;
}

ImageFormat output_format_for(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (ext == ".png") return ImageFormat::png;
  if (ext == ".jpg" || ext == ".jpeg") return ImageFormat::jpeg;
  throw UsageError(path + ": unknown output format; the file name must end in .png, .jpg or .jpeg");
}

std::vector<std::uint8_t> encode_image(const Image& image, ImageFormat format, int jpeg_quality) {
  check_image(image, "encode_image");
  const int w = image.width, h = image.height, c = image.channels;
  Sink sink;
  int ok = 0;
  if (format == ImageFormat::png) {
    if ((std::uint64_t(w) * c + 1) * std::uint64_t(h) > kMaxPngFilteredBytes) {
      throw Error("image " + std::to_string(w) + "x" + std::to_string(h) +
                  " is too large to encode as PNG");
    }
    ok = stbi_write_png_to_func(append_to_sink, &sink, w, h, c, image.pixels.data(), w * c);
  } else {
    if (jpeg_quality < 1 || jpeg_quality > 100) {
      throw UsageError("JPEG quality " + std::to_string(jpeg_quality) + " is not in 1..100");
    }
    if (w > 65535 || h > 65535 || image.pixels.size() > INT_MAX) {
      throw Error("image " + std::to_string(w) + "x" + std::to_string(h) +
                  " is too large to encode as JPEG");
    }
    ok = stbi_write_jpg_to_func(append_to_sink, &sink, w, h, c, image.pixels.data(), jpeg_quality);
  }
  if (!ok || sink.failed || sink.bytes.empty()) {
    throw Error(std::string("encoding ") + (format == ImageFormat::png ? "PNG" : "JPEG") +
                " failed (out of memory?)");
  }
  return std::move(sink.bytes);
}

void save_image(const Image& image, const std::string& path, int jpeg_quality) {
  write_file_atomic(path, encode_image(image, output_format_for(path), jpeg_quality));
}

void write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  const std::filesystem::path target(path);
  std::string dir = target.parent_path().string();
  if (dir.empty()) dir = ".";
  // Hidden, unique name beside the target, so that rename() stays within one file system.
  const std::string stem = target.filename().string().substr(0, 200);  // NAME_MAX is 255
  std::string name_template = dir + "/." + stem + ".XXXXXX";
  const int fd = ::mkstemp(name_template.data());
  if (fd < 0) {
    const int err = errno;  // before any allocation can clobber it
    throw Error(path + ": cannot create a temporary file in '" + dir + "': " + errno_text(err));
  }
  TempFile temp(name_template, fd);

  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(temp.fd(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      throw Error(path + ": cannot write '" + temp.path() + "': " + errno_text(err));
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp creates the file 0600; give it the permissions an ordinary output file would have.
  if (::fchmod(temp.fd(), 0644) != 0) {
    const int err = errno;
    throw Error(path + ": cannot set permissions of '" + temp.path() + "': " + errno_text(err));
  }
  if (const int err = temp.close()) {
    throw Error(path + ": cannot write '" + temp.path() + "': " + errno_text(err));
  }
  if (::rename(temp.path().c_str(), path.c_str()) != 0) {
    const int err = errno;
    throw Error(path + ": cannot rename the temporary file into place: " + errno_text(err));
  }
  temp.release();
}

Image to_rgba(const Image& image) {
  check_image(image, "to_rgba");
  Image out;
  out.width = image.width;
  out.height = image.height;
  out.channels = 4;
  const std::size_t count = static_cast<std::size_t>(image.width) * image.height;
  out.pixels.resize(count * 4);
  const int c = image.channels;
  const std::uint8_t* src = image.pixels.data();
  std::uint8_t* dst = out.pixels.data();
  for (std::size_t i = 0; i < count; ++i, src += c, dst += 4) {
    const bool grey = c < 3;
    dst[0] = src[0];
    dst[1] = grey ? src[0] : src[1];
    dst[2] = grey ? src[0] : src[2];
    dst[3] = c == 2 ? src[1] : c == 4 ? src[3] : 255;
  }
  return out;
}

Image from_rgba(const Image& rgba, int channels) {
  check_image(rgba, "from_rgba");
  if (rgba.channels != 4 || channels < 1 || channels > 4) {
    throw Error("from_rgba: needs a 4-channel image and 1..4 output channels, got " +
                std::to_string(rgba.channels) + " -> " + std::to_string(channels));
  }
  Image out;
  out.width = rgba.width;
  out.height = rgba.height;
  out.channels = channels;
  const std::size_t count = static_cast<std::size_t>(rgba.width) * rgba.height;
  out.pixels.resize(count * channels);
  const std::uint8_t* src = rgba.pixels.data();
  std::uint8_t* dst = out.pixels.data();
  for (std::size_t i = 0; i < count; ++i, src += 4, dst += channels) {
    switch (channels) {
      case 1:
        dst[0] = src[0];
        break;
      case 2:
        dst[0] = src[0], dst[1] = src[3];
        break;
      case 3:
        std::copy(src, src + 3, dst);
        break;
      default:
        std::copy(src, src + 4, dst);
        break;
    }
  }
  return out;
}

}  // namespace blurtool
