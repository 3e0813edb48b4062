#include "util/error.h"

#include <cstring>

namespace blurtool {

std::string errno_text(int err) {
  return std::strerror(err);
}

namespace {
ParameterSpelling installed = nullptr;
}  // namespace

void set_parameter_spelling(ParameterSpelling spelling) {
  installed = spelling;
}

std::string parameter(const std::string& key) {
  return installed ? installed(key) : key;
}

}  // namespace blurtool
