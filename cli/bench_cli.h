// `blurtool bench [options]`: the fixed benchmark suite's options (see tools/bench_suite.h).
#pragma once

namespace blurtool {

/// Parses the subcommand's arguments (argv[0] is "bench"), runs the suite on the chosen device,
/// prints its table (or CSV, JSON) to stdout and progress to stderr, and with --plot writes the
/// radius-sweep chart. Returns 0. Throws blurtool::UsageError for bad arguments (before any
/// measurement), blurtool::Error when the chart cannot be written.
int run_bench_command(int argc, const char* const* argv);

}  // namespace blurtool
