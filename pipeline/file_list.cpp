#include "pipeline/file_list.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "util/error.h"

namespace blurtool {

std::vector<std::string> read_file_list(const std::string& list, bool nul_separated) {
  std::string text;
  const std::string name = "--files-from '" + list + "'";
  if (list == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) throw UsageError(name + ": cannot read standard input");
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(list, ec))
      throw UsageError(name + ": is a folder; give a file that lists paths");
    std::ifstream in(list, std::ios::binary);
    if (!in) throw UsageError(name + ": cannot open: " + std::strerror(errno));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) throw UsageError(name + ": cannot read: " + std::strerror(errno));
  }
  const char separator = nul_separated ? '\0' : '\n';
  if (!nul_separated && text.find('\0') != std::string::npos)
    throw UsageError(name + ": holds NUL bytes; a NUL-separated list (find -print0) needs -0");
  if (nul_separated && text.find('\0') == std::string::npos && text.find('\n') != std::string::npos)
    throw UsageError(name +
                     ": -0 given, but the list holds no NUL byte and its paths end in "
                     "newlines (find -print, not -print0): drop -0");
  std::vector<std::string> paths;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    size_t stop = end;
    if (!nul_separated && stop > start && text[stop - 1] == '\r') --stop;  // a CRLF line end
    if (stop > start) paths.push_back(text.substr(start, stop - start));
    start = end + 1;
  }
  return paths;
}

std::string path_key(const std::string& path) {
  std::string key = std::filesystem::path(path).lexically_normal().generic_string();
  // "a/" and "a" name the same folder; "." is the current one ("" stays "").
  while (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

std::string mirrored_path(const std::string& path) {
  std::string key = path_key(path);
  size_t root = 0;
  while (root < key.size() && key[root] == '/') ++root;
  key.erase(0, root);
  if (key == ".." || key.rfind("../", 0) == 0) return "";
  return key;
}

std::uint64_t fnv1a64(const std::string& text) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

Shard parse_shard(const std::string& text) {
  const std::string bad = "--shard '" + text +
                          "': give I/N, this run's share I (0 to N-1, or 1 to N) of N shares "
                          "(N from 1 to 4294967296), e.g. 0/4";
  const size_t slash = text.find('/');
  auto whole = [&](const std::string& digits) {
    if (digits.empty() || digits.size() > 10 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(bad);
    return std::stoull(digits);
  };
  if (slash == std::string::npos) throw UsageError(bad);
  Shard s;
  s.index = whole(text.substr(0, slash));
  s.count = whole(text.substr(slash + 1));
  if (s.count < 1 || s.count > (1ULL << 32) || s.index > s.count) throw UsageError(bad);
  return s;
}

}  // namespace blurtool
