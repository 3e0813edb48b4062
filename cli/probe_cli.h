// `blurtool probe cache|divergence|stride [options]`: the performance-model probes' options (see
// tools/probe.h).
#pragma once

namespace blurtool {

/// Parses the subcommand's arguments (argv[0] is "probe"), runs the named probe on the chosen
/// device, prints its table (or CSV, JSON) to stdout and progress to stderr, and with --plot
/// writes its chart. Returns 0. Throws blurtool::UsageError for bad arguments (before any
/// measurement), blurtool::Error when the chart cannot be written.
int run_probe_command(int argc, const char* const* argv);

}  // namespace blurtool
