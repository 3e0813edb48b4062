// Settings read from the environment for measurements and tests (the util layer: no image or
// device code).
#pragma once

namespace blurtool {

/// The integer in environment variable `name` where it is one, written in decimal, in [low,
/// high]; else `fallback` (unset, empty, not a number, trailing characters, out of range). Never
/// throws: a bad setting is ignored, as a setting meant for measurements should be.
int env_int(const char* name, int low, int high, int fallback);

}  // namespace blurtool
