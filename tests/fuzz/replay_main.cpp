// A main() for the libFuzzer harnesses of tests/fuzz without libFuzzer: the normal build (any
// compiler, no -DBLURTOOL_FUZZ) links each harness with it, and the ctest tests labelled fuzz
// (tests/fuzz/CMakeLists.txt) replay the seeds and the kept crash inputs through it.
//   fuzz_image FILE|DIR...
// calls LLVMFuzzerTestOneInput once on the bytes of each FILE and of every file under each DIR
// (sorted), each in a heap buffer of exactly its size, as libFuzzer does. Arguments that begin
// with '-' (libFuzzer's options) are ignored. An input that crashes or aborts the harness ends the
// process with it, after "Running: FILE" has named the input; the exit status is 1 when a path is
// missing or no input was found (a replay that runs nothing must not pass), 0 otherwise.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

bool replay(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: %s: cannot be read\n", file.c_str());
    return false;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  // A buffer of exactly the input's size (never null, even when empty), so that AddressSanitizer
  // sees a read past its end.
  const std::unique_ptr<std::uint8_t[]> data(new std::uint8_t[bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), data.get());
  std::printf("Running: %s (%zu bytes)\n", file.c_str(), bytes.size());
  std::fflush(stdout);  // named before a crash can lose the buffer
  LLVMFuzzerTestOneInput(data.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  bool ok = true;
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;  // a libFuzzer option
    std::error_code error;
    if (fs::is_directory(arg, error)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path& file : files) {
        if (replay(file))
          ++count;
        else
          ok = false;
      }
    } else if (fs::is_regular_file(arg, error)) {
      if (replay(arg))
        ++count;
      else
        ok = false;
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", arg.c_str());
      ok = false;
    }
  }
  std::printf("replay: %d inputs run\n", count);
  if (count == 0) std::fprintf(stderr, "replay: no input found\n");
  return ok && count > 0 ? 0 : 1;
}
