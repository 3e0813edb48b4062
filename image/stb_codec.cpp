// stb_image: the decoder of last resort (see stb_codec.h).
#include "image/stb_codec.h"

#include <stb/stb_image.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>

#include "util/error.h"

namespace blurtool {

namespace {

// stb_image's last failure reason in plain words. stb reports an unknown critical PNG chunk by
// its type, which is clipped (even to "") when the type holds zero bytes.
std::string stb_reason() {
  const std::string reason = stbi_failure_reason() ? stbi_failure_reason() : "";
  if (reason == "outofdata") return "the file ends early";
  if (reason == "outofmem") return "out of memory";
  if (reason.size() < 4) return "stb_image refused it";
  return reason;
}

// Debian's libstb is built with assertions, and a malformed file that the fast decoders refused
// can trip one inside stb's JPEG decoder and abort the whole process (found by fuzz_image; the
// input did not reproduce outside the fuzzer, as if stb read memory it had not written). So stb
// decodes in a child process, into shared memory sized from the header that max_pixels already
// bounds: an assertion, a crash or memory corruption there ends the child only, and the file is
// reported as corrupt. Samples of T: 8 bits (stbi_load), or 16 for a 16-bit PNG (stbi_load_16).
struct StbResult {
  int width, height, channels;
  char reason[120];
};

// Whether stb_image's PNG decoder takes an image of this size: at most 2^24 pixels a side and
// 2^30 bytes of 8-bit pixels before palette expansion (4 bytes a pixel for a palette).
bool stb_png_fits(const CheckedFile& file) {
  const std::uint64_t w = file.width, h = file.height;
  const int c = file.png_header.color_type;
  const std::uint64_t n = c == 3 ? 4 : (c & 2 ? 3 : 1) + (c & 4 ? 1 : 0);
  constexpr std::uint64_t kSide = std::uint64_t{1} << 24, kBytes = std::uint64_t{1} << 30;
  return w <= kSide && h <= kSide && kBytes / w / n >= h;
}

}  // namespace

template <typename T>
BasicImage<T> decode_stb(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         const CheckedFile& file, const std::string& first_reason) {
  const char* format = file.format;
  const int width = file.width, height = file.height;
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  const std::string too_large = "image is " + size + ", too large for the stb_image decoder";
  if (file.png && !stb_png_fits(file)) {
    if (first_reason.empty()) throw Error(name + ": " + too_large);
    throw Error(name + ": cannot decode PNG (" + first_reason + "; at " + size +
                " it is too large for stb_image, the fallback decoder)");
  }
  const std::size_t capacity = checked_size(width, height, 4, name.c_str()) * sizeof(T);
  const std::size_t length = sizeof(StbResult) + capacity;
  void* shared = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw Error(name + ": cannot decode " + format + " (out of memory)");
  std::unique_ptr<void, std::function<void(void*)>> unmap(
      shared, [length](void* p) { ::munmap(p, length); });
  auto* result = static_cast<StbResult*>(shared);
  std::uint8_t* pixels = static_cast<std::uint8_t*>(shared) + sizeof(StbResult);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error(name + ": cannot decode " + format + " (fork: " + errno_text(errno) + ")");
  if (pid == 0) {  // the child: decode, copy out, and leave without running any exit handler
    int w = 0, h = 0, ch = 0;
    const int length = static_cast<int>(bytes.size());
    void* data = nullptr;
    if constexpr (sizeof(T) == 1) {
      data = stbi_load_from_memory(bytes.data(), length, &w, &h, &ch, 0);
    } else {
      data = stbi_load_16_from_memory(bytes.data(), length, &w, &h, &ch, 0);
    }
    if (!data) {
      std::snprintf(result->reason, sizeof result->reason, "%s", stb_reason().c_str());
      ::_exit(1);
    }
    result->width = w;
    result->height = h;
    result->channels = ch;
    if (w != width || h != height || ch < 1 || ch > 4) ::_exit(2);
    std::memcpy(pixels, data, static_cast<std::size_t>(w) * h * ch * sizeof(T));
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) {
    if (!first_reason.empty())
      throw Error(name + ": cannot decode " + format + " (" + first_reason + ")");
    if (std::strcmp(result->reason, "too large") == 0) throw Error(name + ": " + too_large);
    throw Error(name + ": cannot decode " + format + " (" + result->reason + ")");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
    throw Error(name + ": corrupt " + format + " (decoded size differs from its header)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(name + ": corrupt " + format + " (the stb_image decoder failed on it)");
  BasicImage<T> image;
  image.width = result->width;
  image.height = result->height;
  image.channels = result->channels;
  image.pixels.resize(checked_size(image.width, image.height, image.channels, name.c_str()));
  std::memcpy(image.pixels.data(), pixels, image.pixels.size() * sizeof(T));
  return image;
}

template Image decode_stb(const std::vector<std::uint8_t>&, const std::string&, const CheckedFile&,
                          const std::string&);
template Image16 decode_stb(const std::vector<std::uint8_t>&, const std::string&,
                            const CheckedFile&, const std::string&);

}  // namespace blurtool
