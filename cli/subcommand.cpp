// Option handling shared by the subcommands (see subcommand.h).
#include "cli/subcommand.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "util/error.h"

namespace blurtool {

void check_switch_values(const cxxopts::Options& spec, int argc, const char* const* argv) {
  std::set<std::string> switches;
  for (const std::string& group : spec.groups())
    for (const cxxopts::HelpOptionDetails& option : spec.group_help(group).options)
      if (option.is_boolean) switches.insert(option.l.begin(), option.l.end());
  // What cxxopts takes as a switch's value: (t|T)(rue)?|1 and (f|F)(alse)?|0.
  static const std::set<std::string> values = {"t", "T", "true",  "True",  "1",
                                               "f", "F", "false", "False", "0"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) continue;
    const std::string name = arg.substr(2, eq - 2), value = arg.substr(eq + 1);
    if (switches.count(name) && !values.count(value))
      throw UsageError("'" + arg + "': --" + name +
                       " is a switch; give it alone (or =true, =false)");
  }
}

void check_single_dash_long(const cxxopts::Options& spec, int argc, const char* const* argv) {
  std::set<std::string> long_names, valued, short_switches;
  for (const std::string& group : spec.groups())
    for (const cxxopts::HelpOptionDetails& option : spec.group_help(group).options) {
      for (const std::string& l : option.l) {
        if (l.size() > 1) long_names.insert(l);
        if (!option.is_boolean) valued.insert("--" + l);
      }
      if (!option.s.empty() && option.is_boolean) short_switches.insert(option.s);
      if (!option.s.empty() && !option.is_boolean) valued.insert("-" + option.s);
    }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg[0] != '-' || arg[1] == '-') continue;
    // The value of the option before it (`--device -gpu`), given as the next argument.
    if (i > 1 && valued.count(argv[i - 1])) continue;
    const std::string name = arg.substr(1, arg.find('=') - 1);
    if (!long_names.count(name)) continue;
    // A cluster of short switches that spells a long name stays a cluster.
    if (std::all_of(name.begin(), name.end(),
                    [&](char c) { return short_switches.count(std::string(1, c)) > 0; }))
      continue;
    throw UsageError("unknown option '" + arg.substr(0, name.size() + 1) + "': did you mean --" +
                     name + "?");
  }
}

cxxopts::ParseResult parse_subcommand(cxxopts::Options& spec, int argc, const char* const* argv,
                                      const std::string& name) {
  check_switch_values(spec, argc, argv);
  check_single_dash_long(spec, argc, argv);
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
  // '-' is standard output elsewhere; here the table goes there, so the chart needs a file.
  if (plot == "-")
    throw UsageError("--plot -: give a file name (standard output carries the table)");
  const std::filesystem::path dir = std::filesystem::path(plot).parent_path();
  const std::string where = dir.empty() ? "." : dir.string();
  if (!std::filesystem::is_directory(where) || ::access(where.c_str(), W_OK) != 0)
    throw UsageError("--plot '" + plot + "': folder '" + where + "' is missing or not writable");
  if (std::filesystem::is_directory(plot))
    throw UsageError("--plot '" + plot + "': is a folder; give a file name");
  return plot;
}

}  // namespace blurtool
