// Kernel source without comments (see kernel_sources.h).
#include <algorithm>

#include "runtime/kernel_sources.h"

namespace blurtool {

std::string kernel_code(const std::string& source) {
  std::string code;
  code.reserve(source.size());
  const size_t n = source.size();
  for (size_t i = 0; i < n;) {
    const char c = source[i];
    if (c == '"' || c == '\'') {  // a literal, escapes included, up to its closing quote
      const size_t start = i++;
      while (i < n && source[i] != c && source[i] != '\n') i += source[i] == '\\' ? 2 : 1;
      i = std::min(n, i + 1);
      code.append(source, start, i - start);
    } else if (c == '/' && i + 1 < n && source[i + 1] == '/') {
      while (i < n && source[i] != '\n') ++i;
      code += ' ';
    } else if (c == '/' && i + 1 < n && source[i + 1] == '*') {
      const size_t end = source.find("*/", i + 2);
      i = end == std::string::npos ? n : end + 2;
      code += ' ';
    } else {
      code += c;
      ++i;
    }
  }
  return code;
}

}  // namespace blurtool
