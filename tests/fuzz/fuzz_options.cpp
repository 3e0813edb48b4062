// libFuzzer harness over the argument parser: the input, split at NUL bytes, is the argument
// list after "blurtool", given to parse_options(). Its contract: a CliOptions, or a
// blurtool::UsageError (or Error) naming what is wrong; never a crash or any other exception
// (cxxopts' own exceptions must have been turned into UsageError). Built by scripts/fuzz; the
// normal build links it with replay_main.cpp and replays the argument lists of
// options_seeds.txt and the kept crash inputs (ctest -L fuzz).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = {"blurtool", ""};
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      args.emplace_back();
    else
      args.back() += static_cast<char>(data[i]);
  }
  if (args.size() > 64) return 0;  // long lists add nothing the parser has not seen
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    (void)blurtool::parse_options(static_cast<int>(argv.size()), argv.data());
  } catch (const blurtool::UsageError&) {
  } catch (const blurtool::Error&) {
  }
  return 0;
}
