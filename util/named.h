// Name tables for enumerations: one table per enum, shared by the command line (parsing and
// --help), the tests (which loop over every entry) and the benchmarks, so that a new entry is
// parsed, tested and benchmarked without extra wiring (Halide's one-algorithm, many-schedules
// idea).
#pragma once

#include <string>
#include <vector>

#include "util/error.h"

namespace blurtool {

/// One entry of a name table: the value, its command-line name and a one-line description.
template <class E>
struct Named {
  E value;
  const char* name;
  const char* summary;
};

/// The value whose name is `text`. Throws blurtool::UsageError naming `option`, the bad text and
/// the accepted names.
template <class E>
E parse_named(const std::vector<Named<E>>& table, const std::string& text,
              const std::string& option) {
  std::string names;
  for (const Named<E>& entry : table) {
    if (text == entry.name) return entry.value;
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw UsageError(option + " '" + text + "': unknown value; choose one of " + names);
}

/// The command-line name of `value` ("?" if the table lacks it).
template <class E>
const char* name_of(const std::vector<Named<E>>& table, E value) {
  for (const Named<E>& entry : table)
    if (entry.value == value) return entry.name;
  return "?";
}

/// All names of a table joined by ", ", for help texts (so they wrap between names).
template <class E>
std::string names_of(const std::vector<Named<E>>& table) {
  std::string names;
  for (const Named<E>& entry : table)
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

}  // namespace blurtool
