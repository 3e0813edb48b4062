// Where a whole process's time goes: milestones on standard error when BLURTOOL_TRACE is set.
#pragma once

#include <cstddef>

namespace blurtool {

/// With BLURTOOL_TRACE set (and not "0"), prints "blurtool: trace T ms: WHAT" on standard
/// error, T the milliseconds since the process's static initialisation (the dynamic loader's
/// few milliseconds before it are not counted). One line a call, whole even from several
/// threads. Without the variable it does nothing but read it once. For finding where a run's
/// wall time goes (device opening, decoding, encoding, exit); timings of kernels are
/// `--bench`'s.
void trace(const char* what) noexcept;

/// The same, with " COUNT" after WHAT (images so far, for example).
void trace(const char* what, std::size_t count) noexcept;

/// Seconds since the process's static initialisation: trace()'s clock, for rates over the whole
/// process (its CPU time over this is the cores it kept busy).
double process_seconds() noexcept;

/// Whether BLURTOOL_TRACE asks for the milestones: for callers that would build a message.
bool tracing() noexcept;

}  // namespace blurtool
