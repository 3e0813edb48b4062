// Option handling shared by the subcommands (see subcommand.h).
#include "cli/subcommand.h"

#include <unistd.h>

#include <filesystem>

#include "core/error.h"

namespace blurtool {

cxxopts::ParseResult parse_subcommand(cxxopts::Options& spec, int argc, const char* const* argv,
                                      const std::string& name) {
  try {
    return spec.parse(argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    throw UsageError(name + ": " + e.what());
  }
}

std::string bench_format_option(const cxxopts::ParseResult& parsed) {
  const std::string format = parsed["bench-format"].as<std::string>();
  if (format != "table" && format != "csv" && format != "json")
    throw UsageError("--bench-format '" + format + "': choose table, csv or json");
  return format;
}

std::string plot_option(const cxxopts::ParseResult& parsed) {
  if (!parsed.count("plot")) return "";
  const std::string plot = parsed["plot"].as<std::string>();
  if (plot.empty()) throw UsageError("--plot: give a file name");
  const std::filesystem::path dir = std::filesystem::path(plot).parent_path();
  const std::string where = dir.empty() ? "." : dir.string();
  if (!std::filesystem::is_directory(where) || ::access(where.c_str(), W_OK) != 0)
    throw UsageError("--plot '" + plot + "': folder '" + where + "' is missing or not writable");
  if (std::filesystem::is_directory(plot))
    throw UsageError("--plot '" + plot + "': is a folder; give a file name");
  return plot;
}

}  // namespace blurtool
