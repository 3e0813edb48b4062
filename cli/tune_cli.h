// `blurtool tune [options]`: measures the fastest schedules of one device and stores them for
// `--variant auto` (see tools/tune.h).
#pragma once

namespace blurtool {

/// Parses the subcommand's arguments (argv[0] is "tune"), tunes the chosen device, prints the
/// winner of each case and the table's path, and returns 0. Throws blurtool::UsageError for bad
/// arguments (before any measurement), blurtool::Error when the table cannot be written.
int run_tune_command(int argc, const char* const* argv);

}  // namespace blurtool
