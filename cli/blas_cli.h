// `blurtool blas saxpy|sdot|sgemm [options]`: the BLAS comparison subcommand's options.
#pragma once

namespace blurtool {

/// Parses the subcommand's arguments (argv[0] is "blas"), runs the benchmark and prints its
/// table. Returns the exit status: 0, or 1 when a result is outside tolerance. Throws
/// blurtool::UsageError for bad arguments.
int run_blas_command(int argc, const char* const* argv);

}  // namespace blurtool
