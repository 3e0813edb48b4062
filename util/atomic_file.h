// Files written whole or not at all: a temporary file in the destination's directory renamed
// into place, and the registry of temporary files in flight that signal handlers remove, so
// that an interrupted run leaves no partial output (the util layer: no image or device code).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace blurtool {

/// Writes `bytes` to `path` through a temporary file in the same directory renamed into place,
/// so that no partial file is ever left. Throws blurtool::Error naming `path` on any failure,
/// and where `path` is a device, named pipe or socket (which renaming would replace).
/// Thread-safe. The temporary file is registered for the signal handlers of
/// install_cleanup_handlers(), which the first call installs.
void write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes);

/// Writes `bytes` to `path` as the output of one image: into it where `path` is a character
/// device or a named pipe (/dev/null, a FIFO: opening a FIFO waits for a reader) or lies under
/// /dev or /proc (/dev/stdout onto a file: truncated and written, as cp does), else through
/// write_file_atomic. Throws blurtool::Error naming `path` on any failure.
void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes);

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that unlink the temporary files of every
/// write_file_atomic in flight, in any thread, then hand the signal on: to the handler that was
/// installed before, if any, else to the default action (the signal is re-raised, so the exit
/// status still says which signal ended the process; other threads stop writing at once). If a
/// chained handler returns, the process goes on and the writes that were in flight fail, their
/// temporary files gone. A signal that is ignored (SIG_IGN, as under nohup) stays ignored.
/// Idempotent and thread-safe; write_file_atomic calls it, a program may call it earlier. The
/// registry is a fixed table of 64 paths of up to 4095 bytes, written and read with lock-free
/// atomics only (async-signal-safe); a temporary file that finds no free slot is still written and
/// renamed, but not removed by a signal.
void install_cleanup_handlers();

/// The number of temporary files registered right now (for tests and diagnostics).
int in_flight_temp_files();

}  // namespace blurtool
