// OpenCL device discovery, selection, context, queue and program cache (see cl_runtime.h).
#include "runtime/cl_runtime.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "runtime/kernel_sources.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/trace.h"

namespace blurtool {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back()))))
    s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

constexpr cl_int kPlatformNotFound = -1001;  // CL_PLATFORM_NOT_FOUND_KHR (cl_khr_icd)

const char* kNoPlatformHint =
    "no OpenCL platform found (CL_PLATFORM_NOT_FOUND_KHR, -1001): install pocl-opencl-icd "
    "for the CPU, or the GPU vendor's OpenCL driver";

// --- On-disk program cache -------------------------------------------------------------------
// A file is kProgramMagic, the key's length as 8 little-endian bytes, the key, the binary's
// FNV-1a hash as 8 little-endian bytes, then the device binary (CL_PROGRAM_BINARIES). The key
// holds everything the binary depends on; the hash is checked before the driver sees the
// binary, since some drivers abort the process on a damaged one (PoCL asserts).

const char kProgramMagic[] = "blurtool program binary 2\n";

template <class Bytes>
std::uint64_t fnv1a64(const Bytes& bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::uint64_t read_u64(const std::string& bytes, size_t at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

void append_u64(std::vector<std::uint8_t>& bytes, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// BLURTOOL_PROGRAM_CACHE: "0"/"off" neither reads nor writes; "1"/"on" reads and writes;
// anything else ("auto", unset) reads, and writes only where the driver keeps no compile
// cache of its own.
enum class CacheMode { off, on, automatic };

CacheMode program_cache_mode() {
  const char* e = std::getenv("BLURTOOL_PROGRAM_CACHE");
  if (e && (std::strcmp(e, "0") == 0 || std::strcmp(e, "off") == 0)) return CacheMode::off;
  if (e && (std::strcmp(e, "1") == 0 || std::strcmp(e, "on") == 0)) return CacheMode::on;
  return CacheMode::automatic;
}

bool env_is(const char* name, const char* value) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, value) == 0;
}

std::string program_cache_path(const std::string& key) {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.bin", static_cast<unsigned long long>(fnv1a64(key)));
  return cache_directory() + "/programs/" + name;
}

// The binary cached under `key`, or empty when there is none (or the file is another key's,
// or damaged).
std::vector<unsigned char> load_program_binary(const std::string& key) {
  std::ifstream in(program_cache_path(key), std::ios::binary);
  if (!in) return {};
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  const size_t magic = sizeof kProgramMagic - 1;
  if (bytes.size() < magic + 8 || bytes.compare(0, magic, kProgramMagic) != 0) return {};
  const std::uint64_t key_size = read_u64(bytes, magic);
  const size_t binary_at = magic + 8 + key.size() + 8;
  if (key_size != key.size() || bytes.size() <= binary_at ||
      bytes.compare(magic + 8, key.size(), key) != 0)
    return {};
  std::vector<unsigned char> binary(bytes.begin() + static_cast<long>(binary_at), bytes.end());
  if (fnv1a64(binary) != read_u64(bytes, binary_at - 8)) return {};
  return binary;
}

// Writes `binary` under `key`; false if it could not (the cache is only an optimisation).
bool store_program_binary(const std::string& key, const std::vector<unsigned char>& binary) {
  if (binary.empty()) return false;
  std::vector<std::uint8_t> bytes(kProgramMagic, kProgramMagic + sizeof kProgramMagic - 1);
  append_u64(bytes, key.size());
  bytes.insert(bytes.end(), key.begin(), key.end());
  append_u64(bytes, fnv1a64(binary));
  bytes.insert(bytes.end(), binary.begin(), binary.end());
  const std::string path = program_cache_path(key);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  try {
    write_file_atomic(path, bytes);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// --- Kernel selection -------------------------------------------------------------------------
// Drivers compile every function of a program's text, used or not: NVIDIA each kernel down to
// machine code, PoCL each function to IR (it builds with -Dinline=, at -O0), linked with what
// it calls of its built-in library. So a program's text keeps only the kernels asked for and the
// functions that the rest of the text still names (select_kernels).

// A function definition at file scope: from the start of the line of its first token to the end
// of the line of its closing brace.
struct FunctionSpan {
  std::string name;
  bool kernel = false;              // qualified `kernel` or `__kernel`
  bool removable = true;            // false where its lines hold anything the rest could depend on
  std::vector<std::string> macros;  // what its #define and #undef lines name
  size_t begin = 0, end = 0;  // byte offsets; `end` is at the line's newline (or the text's end)
};

// An identifier outside comments and literals (directives included), at byte `at`.
struct Token {
  std::string name;
  size_t at = 0;
};

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The function definitions at file scope of OpenCL C `text` and every identifier in it; false
// where the text cannot be split safely: braces or parentheses that do not balance, an
// unterminated comment or literal, or braces that differ between the branches of a
// preprocessor conditional (the scan cannot tell then which brace closes a function). A
// function is not removable where other text shares its first or last line, where its lines
// hold a directive other than a conditional, #pragma unroll, or a #define or #undef (those
// are listed in `macros`, for the caller to check that no later line names them), or where it
// starts or ends inside a conditional that it does not close. Functions that a macro
// defines are not seen: their text is a directive, and they always stay.
bool scan_functions(const std::string& text, std::vector<FunctionSpan>& spans,
                    std::vector<Token>& tokens) {
  enum class State { between, statement, body };
  State state = State::between;
  FunctionSpan span;             // the statement or function being read
  size_t span_conditionals = 0;  // conditional depth where it began
  char last = 0;                 // the last significant character of the statement ('a': a word)
  std::string last_word;
  bool attribute_group = false;  // the last group at file scope was __attribute__((...))
  int braces = 0, parens = 0;
  std::vector<int> conditionals;  // brace depth at each open #if
  bool line_blank = true;         // nothing but white space or comments so far on this line
  size_t line_start = 0;
  const size_t n = text.size();
  size_t i = 0;
  auto begin_statement = [&]() {
    if (state != State::between) return;
    state = State::statement;
    span = FunctionSpan();
    span.begin = line_start;
    span.removable = line_blank;
    span_conditionals = conditionals.size();
  };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      line_blank = true;
      line_start = ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), n);
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      const size_t close = text.find("*/", i + 2);
      if (close == std::string::npos) return false;
      i = close + 2;  // white space: a span that starts after it takes it along
      continue;
    }
    if (c == '#' && line_blank) {  // a directive, continued over lines that end in '\'
      size_t end = i;
      while ((end = text.find('\n', end)) != std::string::npos) {
        size_t back = end;
        while (back > i &&
               (text[back - 1] == ' ' || text[back - 1] == '\t' || text[back - 1] == '\r'))
          --back;
        if (back == i || text[back - 1] != '\\') break;
        ++end;
      }
      if (end == std::string::npos) end = n;
      for (size_t at = i + 1; at < end;) {  // its identifiers are mentions, not its comments
        if (text.compare(at, 2, "//") == 0) break;
        if (text.compare(at, 2, "/*") == 0) {
          at = std::min(text.find("*/", at + 2), end);
          continue;
        }
        if (text[at] == '"') {
          at = std::min(text.find('"', at + 1), end) + 1;
          continue;
        }
        if (!is_identifier_char(text[at])) {
          ++at;
          continue;
        }
        size_t word_end = at;
        while (word_end < end && is_identifier_char(text[word_end])) ++word_end;
        tokens.push_back({text.substr(at, word_end - at), at});
        at = word_end;
      }
      size_t at = i + 1;
      while (at < end && (text[at] == ' ' || text[at] == '\t')) ++at;
      size_t word_end = at;
      while (word_end < end && is_identifier_char(text[word_end])) ++word_end;
      const std::string word = text.substr(at, word_end - at);
      if (word == "if" || word == "ifdef" || word == "ifndef") {
        conditionals.push_back(braces);
      } else if (word == "elif" || word == "else" || word == "endif") {
        if (conditionals.empty() || conditionals.back() != braces) return false;
        if (state != State::between && conditionals.size() <= span_conditionals)
          span.removable = false;  // closes a conditional opened before the function
        if (word == "endif") conditionals.pop_back();
      } else if (state != State::between && (word == "define" || word == "undef")) {
        size_t name = word_end;  // the macro: the span stays if later text names it
        while (name < end && (text[name] == ' ' || text[name] == '\t')) ++name;
        size_t name_end = name;
        while (name_end < end && is_identifier_char(text[name_end])) ++name_end;
        span.macros.push_back(text.substr(name, name_end - name));
      } else if (state != State::between) {
        // #pragma unroll binds to the loop after it; anything else (#include, #line, #error,
        // #pragma OPENCL EXTENSION) may matter to later lines.
        size_t arg = word_end;
        while (arg < end && (text[arg] == ' ' || text[arg] == '\t')) ++arg;
        if (word != "pragma" ||
            !(text.compare(arg, 6, "unroll") == 0 || text.compare(arg, 8, "nounroll") == 0))
          span.removable = false;
      }
      i = end;  // its newline, if any, is read above
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      begin_statement();
      for (++i; i < n && text[i] != c && text[i] != '\n'; ++i)
        if (text[i] == '\\') ++i;
      if (i >= n || text[i] != c) return false;
      ++i;
      line_blank = false;
      last = c;
      continue;
    }
    if (is_identifier_char(c)) {
      size_t end = i;
      while (end < n && is_identifier_char(text[end])) ++end;
      std::string word = text.substr(i, end - i);
      // A word after a closed group other than an attribute's: the group ended a macro call
      // with no ';' after it (DEFINE_STAGE_ROWS4(...)), and a new statement begins.
      if (state == State::statement && braces == 0 && parens == 0 && last == ')' &&
          !attribute_group && word != "__attribute__" && word != "__attribute")
        state = State::between;
      begin_statement();
      line_blank = false;
      if (state == State::statement && parens == 0 && (word == "kernel" || word == "__kernel"))
        span.kernel = true;
      tokens.push_back({word, i});
      last_word = std::move(word);
      last = 'a';
      i = end;
      continue;
    }
    begin_statement();
    line_blank = false;
    switch (c) {
      case '(':
        if (state == State::statement && braces == 0 && parens == 0) {
          attribute_group =
              last == 'a' && (last_word == "__attribute__" || last_word == "__attribute");
          if (span.name.empty() && last == 'a' && !attribute_group) span.name = last_word;
        }
        ++parens;
        break;
      case ')':
        if (--parens < 0) return false;
        break;
      case ';':
        if (braces == 0 && parens == 0) state = State::between;  // a declaration
        break;
      case '{':
        if (state == State::statement && braces == 0 && parens == 0 && last == ')' &&
            !span.name.empty())
          state = State::body;
        ++braces;
        break;
      case '}':
        if (--braces < 0) return false;
        if (state == State::body && braces == 0) {
          if (conditionals.size() != span_conditionals) span.removable = false;
          size_t at = i + 1;  // only white space or a // comment may follow on its line
          while (at < n && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r')) ++at;
          if (at < n && text[at] != '\n' && text.compare(at, 2, "//") != 0) span.removable = false;
          span.end = std::min(text.find('\n', at), n);
          spans.push_back(span);
          state = State::between;
        }
        break;
      default:
        break;
    }
    last = c;
    ++i;
  }
  return state == State::between && braces == 0 && parens == 0 && conditionals.empty();
}

// The sorted, deduplicated kernel names, joined by spaces: the selection part of a cache key.
std::string selection_key(std::vector<std::string> kernels) {
  std::sort(kernels.begin(), kernels.end());
  kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
  std::string key;
  for (const std::string& name : kernels) key += (key.empty() ? "" : " ") + name;
  return key;
}

}  // namespace

std::string select_kernels(const std::string& text, const std::vector<std::string>& keep) {
  if (keep.empty()) return text;
  std::vector<FunctionSpan> spans;
  std::vector<Token> tokens;
  if (!scan_functions(text, spans, tokens)) return text;
  for (const std::string& name : keep) {
    if (std::none_of(spans.begin(), spans.end(),
                     [&name](const FunctionSpan& s) { return s.kernel && s.name == name; }))
      return text;
  }
  // Every removable function but the kernels asked for starts out removed; a removed one whose
  // name the kept text mentions comes back, with what it mentions, until nothing changes.
  std::vector<bool> removed(spans.size());
  for (size_t s = 0; s < spans.size(); ++s) {
    for (const std::string& macro : spans[s].macros) {
      spans[s].removable =
          spans[s].removable && std::none_of(tokens.begin(), tokens.end(), [&](const Token& t) {
            return t.at > spans[s].end && t.name == macro;
          });
    }
    removed[s] = spans[s].removable && !(spans[s].kernel && std::find(keep.begin(), keep.end(),
                                                                      spans[s].name) != keep.end());
  }
  std::vector<size_t> owner(tokens.size(), spans.size());  // the span each token lies in
  for (size_t t = 0, s = 0; t < tokens.size(); ++t) {
    while (s < spans.size() && spans[s].end < tokens[t].at) ++s;
    if (s < spans.size() && spans[s].begin <= tokens[t].at) owner[t] = s;
  }
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> mentioned;
    for (size_t t = 0; t < tokens.size(); ++t)
      if (owner[t] == spans.size() || !removed[owner[t]]) mentioned.insert(tokens[t].name);
    for (size_t s = 0; s < spans.size(); ++s) {
      if (removed[s] && mentioned.count(spans[s].name)) {
        removed[s] = false;
        changed = true;
      }
    }
  }
  std::string result;
  result.reserve(text.size());
  size_t copied = 0;
  for (size_t s = 0; s < spans.size(); ++s) {
    if (!removed[s]) continue;
    const auto first = text.begin() + static_cast<long>(spans[s].begin);
    const auto last = text.begin() + static_cast<long>(spans[s].end);
    result.append(text, copied, spans[s].begin - copied);
    result.append(static_cast<size_t>(std::count(first, last, '\n')), '\n');
    copied = spans[s].end;
  }
  result.append(text, copied, std::string::npos);
  return result;
}

bool driver_caches_programs(const DeviceInfo& device) {
  // PoCL keeps compiled kernels in ~/.cache/pocl unless POCL_KERNEL_CACHE=0. Asking it for a
  // program's binary compiles each kernel again, for any work-group size (a run compiles it for
  // its own size): even with programs of one kernel that makes a first run about a third
  // slower, and a later run reading our binary instead of PoCL's cache gains only the
  // preprocessing PoCL does to find its entry (kernels/NOTES.md, 2026-11-24). So on PoCL ours
  // only reads. NVIDIA keeps its JIT output in ~/.nv/ComputeCache unless CUDA_CACHE_DISABLE=1.
  if (device.platform.find("Portable Computing Language") != std::string::npos)
    return !env_is("POCL_KERNEL_CACHE", "0");
  if (device.platform.find("NVIDIA") != std::string::npos)
    return !env_is("CUDA_CACHE_DISABLE", "1");
  return false;
}

std::string cache_directory() {
  if (const char* e = std::getenv("BLURTOOL_CACHE_DIR"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/blurtool";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/blurtool";
}

std::string file_name_safe(std::string text) {
  for (char& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return text;
}

std::string cl_error_name(cl_int code) {
#define BLURTOOL_CL_ERROR(name) \
  case name:                    \
    return #name;
  switch (code) {
    BLURTOOL_CL_ERROR(CL_SUCCESS)
    BLURTOOL_CL_ERROR(CL_DEVICE_NOT_FOUND)
    BLURTOOL_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    BLURTOOL_CL_ERROR(CL_OUT_OF_RESOURCES)
    BLURTOOL_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    BLURTOOL_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_MEM_COPY_OVERLAP)
    BLURTOOL_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    BLURTOOL_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    BLURTOOL_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    BLURTOOL_CL_ERROR(CL_MAP_FAILURE)
    BLURTOOL_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    BLURTOOL_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    BLURTOOL_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    BLURTOOL_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    BLURTOOL_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    BLURTOOL_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    BLURTOOL_CL_ERROR(CL_INVALID_VALUE)
    BLURTOOL_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    BLURTOOL_CL_ERROR(CL_INVALID_PLATFORM)
    BLURTOOL_CL_ERROR(CL_INVALID_DEVICE)
    BLURTOOL_CL_ERROR(CL_INVALID_CONTEXT)
    BLURTOOL_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    BLURTOOL_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    BLURTOOL_CL_ERROR(CL_INVALID_HOST_PTR)
    BLURTOOL_CL_ERROR(CL_INVALID_MEM_OBJECT)
    BLURTOOL_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    BLURTOOL_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_SAMPLER)
    BLURTOOL_CL_ERROR(CL_INVALID_BINARY)
    BLURTOOL_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    BLURTOOL_CL_ERROR(CL_INVALID_PROGRAM)
    BLURTOOL_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL_NAME)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL)
    BLURTOOL_CL_ERROR(CL_INVALID_ARG_INDEX)
    BLURTOOL_CL_ERROR(CL_INVALID_ARG_VALUE)
    BLURTOOL_CL_ERROR(CL_INVALID_ARG_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    BLURTOOL_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    BLURTOOL_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    BLURTOOL_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    BLURTOOL_CL_ERROR(CL_INVALID_EVENT)
    BLURTOOL_CL_ERROR(CL_INVALID_OPERATION)
    BLURTOOL_CL_ERROR(CL_INVALID_GL_OBJECT)
    BLURTOOL_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_MIP_LEVEL)
    BLURTOOL_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    BLURTOOL_CL_ERROR(CL_INVALID_PROPERTY)
    BLURTOOL_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    BLURTOOL_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    BLURTOOL_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    BLURTOOL_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
    case kPlatformNotFound:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR";
  }
#undef BLURTOOL_CL_ERROR
}

std::string describe_cl_error(const cl::Error& error) {
  if (error.err() == kPlatformNotFound) return kNoPlatformHint;
  std::ostringstream out;
  out << error.what() << " failed: " << cl_error_name(error.err()) << " (" << error.err() << ")";
  return out.str();
}

bool DeviceInfo::has_extension(const std::string& extension) const {
  return device.getInfo<CL_DEVICE_EXTENSIONS>().find(extension) != std::string::npos;
}

std::string DeviceInfo::type_name() const {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

std::vector<DeviceInfo> list_devices() {
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    if (e.err() == kPlatformNotFound) throw Error(kNoPlatformHint);
    throw Error(describe_cl_error(e));
  }
  if (platforms.empty()) throw Error(kNoPlatformHint);
  trace("OpenCL platforms enumerated");

  std::vector<DeviceInfo> result;
  for (const cl::Platform& platform : platforms) {
    std::vector<cl::Device> devices;
    try {
      platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error& e) {
      if (e.err() == CL_DEVICE_NOT_FOUND) continue;  // a platform with no device is no error
      throw;
    }
    for (const cl::Device& d : devices) {
      DeviceInfo info;
      info.index = static_cast<int>(result.size());
      info.platform = trim(platform.getInfo<CL_PLATFORM_NAME>());
      info.name = trim(d.getInfo<CL_DEVICE_NAME>());
      info.version = trim(d.getInfo<CL_DEVICE_VERSION>());
      info.driver = trim(d.getInfo<CL_DRIVER_VERSION>());
      info.type = d.getInfo<CL_DEVICE_TYPE>();
      info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
      info.global_mem = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
      info.local_mem = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
      info.max_alloc = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
      info.max_work_group = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
      info.image_support = d.getInfo<CL_DEVICE_IMAGE_SUPPORT>() == CL_TRUE;
      if (info.image_support) {
        info.image2d_max_width = d.getInfo<CL_DEVICE_IMAGE2D_MAX_WIDTH>();
        info.image2d_max_height = d.getInfo<CL_DEVICE_IMAGE2D_MAX_HEIGHT>();
      }
      if (d.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_nv_device_attribute_query") !=
          std::string::npos) {
        constexpr cl_device_info kComputeCapabilityMajorNv = 0x4000;  // cl_ext.h's name
        cl_uint major = 0;
        if (clGetDeviceInfo(d(), kComputeCapabilityMajorNv, sizeof major, &major, nullptr) ==
            CL_SUCCESS)
          info.nv_compute_major = static_cast<int>(major);
      }
      info.device = d;
      result.push_back(std::move(info));
    }
  }
  return result;
}

std::string no_device_message() {
  std::vector<cl::Platform> platforms;
  std::string names;
  try {
    cl::Platform::get(&platforms);
    for (const cl::Platform& p : platforms)
      names += (names.empty() ? "'" : ", '") + trim(p.getInfo<CL_PLATFORM_NAME>()) + "'";
  } catch (const cl::Error&) {
    names.clear();
  }
  if (names.empty())
    return "no OpenCL device found: install pocl-opencl-icd for the CPU, or the GPU vendor's "
           "OpenCL driver";
  const bool one = platforms.size() == 1;
  return std::string("no OpenCL device found: the OpenCL platform") + (one ? " " : "s ") + names +
         (one ? " reports" : " report") +
         " none (its driver failed to start or offers none: PoCL, for one, needs a writable HOME "
         "or POCL_CACHE_DIR, and POCL_DEVICES, where set, naming a driver it has)";
}

std::string device_driver_name(const DeviceInfo& device) {
  std::istringstream words(device.version);
  std::string opencl, number, name;
  if (!(words >> opencl >> number >> name) || opencl != "OpenCL") return "";
  return name;
}

DeviceInfo select_device(const std::string& spec_arg, const std::string& option) {
  std::string spec = spec_arg;
  std::string source = option;
  if (spec.empty()) {
    const char* env = std::getenv("BLURTOOL_DEVICE");
    if (env && *env) {
      spec = env;
      source = "BLURTOOL_DEVICE";
    }
  }
  std::vector<DeviceInfo> devices = list_devices();
  if (devices.empty()) throw Error(no_device_message());
  if (spec.empty()) {
    for (cl_device_type wanted : {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_CPU}) {
      for (const DeviceInfo& d : devices)
        if (d.type & wanted) return d;
    }
    return devices.front();
  }
  if (std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    size_t index = std::stoul(spec);
    if (index >= devices.size()) {
      throw UsageError(source + " " + spec + ": no such device index (devices 0.." +
                       std::to_string(devices.size() - 1) + "; see " + parameter("list_devices") +
                       ")");
    }
    return devices[index];
  }
  // Names, then the driver's short name, the word after "OpenCL x.y" in the device version
  // ("OpenCL 3.0 PoCL HSTR: ...", "OpenCL 3.0 CUDA"): `--device pocl` and `--device cuda` work.
  const std::string needle = lower(spec);
  for (const DeviceInfo& d : devices) {
    if (lower(d.platform + " " + d.name).find(needle) != std::string::npos) return d;
  }
  for (const DeviceInfo& d : devices) {
    if (lower(device_driver_name(d)).find(needle) != std::string::npos) return d;
  }
  throw UsageError(source + " '" + spec +
                   "': no OpenCL device or platform name, nor driver name, contains it (see " +
                   parameter("list_devices") + ")");
}

Runtime::Runtime(DeviceInfo device)
    : device_(std::move(device)),
      context_(device_.device),
      queue_(context_, device_.device, CL_QUEUE_PROFILING_ENABLE) {
  trace("context and queue made");
}

Runtime::Runtime(const Runtime& base, cl::CommandQueue queue)
    : device_(base.device_),
      context_(base.context_),
      queue_(std::move(queue)),
      programs_(base.programs_) {}

std::unique_ptr<Runtime> Runtime::sibling() const {
  cl::CommandQueue queue(context_, device_.device, CL_QUEUE_PROFILING_ENABLE);
  return std::unique_ptr<Runtime>(new Runtime(*this, std::move(queue)));
}

namespace {

// The file that family "X_Y" shares with the other families of filter X, "X_common"
// (kernels/X_common.cl), where one is embedded; "" for none, and for X_common itself.
std::string filter_common(const std::string& family) {
  const std::size_t underscore = family.find('_');
  if (underscore == std::string::npos) return "";
  const std::string common = family.substr(0, underscore) + "_common";
  return common != family && kernel_sources().count(common) ? common : "";
}

// One file of a program's text: its family name and the physical lines before its first line.
struct ProgramFile {
  std::string name;
  std::size_t offset;
};

// The text program_source puts before the family's own ("" for common itself):
// kernels/common.cl, then kernels/X_common.cl for a family "X_Y" that has one (filter_common),
// and a #line directive for the family's text. Every file after the first starts behind
// "#line 1 \"kernels/<name>.cl\"", so that build logs that honour #line (PoCL's) give each
// file's own name and line numbers. `files` (where not null) gets the program's files in
// order, the family's last.
std::string program_prefix(const std::string& family, std::vector<ProgramFile>* files = nullptr) {
  const auto& sources = kernel_sources();
  std::string text;
  bool first = true;
  auto start_file = [&](const std::string& name) {
    if (!first) text += "\n#line 1 \"kernels/" + name + ".cl\"\n";
    first = false;
    const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    if (files) files->push_back({name, lines});
  };
  const auto common = sources.find("common");
  if (family != "common" && common != sources.end()) {
    start_file("common");
    text += common->second;
    const std::string filter = filter_common(family);
    if (!filter.empty()) {
      start_file(filter);
      text += sources.at(filter);
    }
  }
  start_file(family);
  return text;
}

}  // namespace

std::string family_locations(const std::string& log, const std::string& family) {
  const std::string tag = "<kernel>:";
  std::vector<ProgramFile> files;
  program_prefix(family, &files);
  std::string out;
  std::size_t at = 0;
  for (std::size_t found; (found = log.find(tag, at)) != std::string::npos;) {
    std::size_t digits = found + tag.size(), end = digits;
    while (end < log.size() && std::isdigit(static_cast<unsigned char>(log[end]))) ++end;
    out.append(log, at, found - at);
    if (end == digits || end - digits > 9 || end >= log.size() || log[end] != ':') {
      out.append(tag);
      at = digits;
      continue;
    }
    const std::size_t line = std::stoul(log.substr(digits, end - digits));
    const ProgramFile* file = &files.front();  // the last file that starts before the line
    for (const ProgramFile& f : files)
      if (line > f.offset) file = &f;
    out += "kernels/" + file->name + ".cl:" + std::to_string(line - file->offset);
    at = end;
  }
  out.append(log, at, std::string::npos);
  return out;
}

std::string program_source(const std::string& family, const std::vector<std::string>& kernels) {
  const auto& sources = kernel_sources();
  auto source = sources.find(family);
  if (source == sources.end()) throw Error("no embedded kernel family '" + family + "'");
  return select_kernels(program_prefix(family) + source->second, kernels);
}

cl::Program& Runtime::program(const std::string& family, const std::string& schedule_options,
                              const std::vector<std::string>& kernels) {
  // BLURTOOL_CL_OPTIONS: build options for kernel work (say -cl-nv-verbose for NVIDIA's
  // register counts), appended to every program's own; part of the cache key like them.
  std::string options = schedule_options;
  if (const char* extra = std::getenv("BLURTOOL_CL_OPTIONS"); extra && *extra)
    options += std::string(options.empty() ? "" : " ") + extra;
  const std::string selection = selection_key(kernels);
  const auto id = std::make_tuple(family, options, selection);
  auto found = programs_.find(id);
  if (found != programs_.end()) return found->second;

  const std::string text = program_source(family, kernels);
  const CacheMode mode = program_cache_mode();
  const bool use_disk = mode != CacheMode::off;
  const bool store = mode == CacheMode::on || !driver_caches_programs(device_);
  // The selection is in the key as well as the text it selects, so that two selections never
  // share an entry even where the text could not be split and is the same.
  const std::string key = device_.platform + "\n" + device_.name + "\n" + device_.version + "\n" +
                          device_.driver + "\n" + options + "\nkernels: " + selection + "\n" + text;
  if (use_disk) {
    const std::vector<unsigned char> binary = load_program_binary(key);
    if (!binary.empty()) {
      try {
        cl::Program cached(context_, {device_.device}, {binary});
        cached.build({device_.device}, options.c_str());
        ++cache_stats_.loaded;
        if (tracing())
          trace(("program from blurtool's cache: " + family + " (" + selection + ")").c_str());
        return programs_.emplace(id, cached).first->second;
      } catch (const cl::Error&) {
        // A binary the driver no longer accepts: compile from source and replace it.
      }
    }
  }

  // "kernels/box_buffer.cl", or "kernels/box_buffer.cl (box_tiled)" for a selection, in messages.
  const std::string what =
      "kernels/" + family + ".cl" + (selection.empty() ? "" : " (" + selection + ")");
  // NVIDIA's logs in the family file's numbering (family_locations); other drivers' as they are.
  const bool nvidia = device_driver_name(device_) == "CUDA";
  auto nvidia_locations = [&](const std::string& log) {
    return nvidia ? family_locations(log, family) : log;
  };
  cl::Program program(context_, text);
  // -w (a standard build option): no compiler warnings, which some drivers print on standard
  // error themselves (PoCL on CPUs without AVX-512: "N warnings generated." about float16
  // arguments), between a user's own messages; BLURTOOL_BUILD_LOG keeps them in the log. It
  // changes no code, so it is not part of the cache key.
  const char* log_wanted = std::getenv("BLURTOOL_BUILD_LOG");
  const bool quiet = !log_wanted || !*log_wanted || std::strcmp(log_wanted, "0") == 0;
  const std::string build_options = quiet ? options + (options.empty() ? "-w" : " -w") : options;
  try {
    program.build({device_.device}, build_options.c_str());
  } catch (const cl::BuildError& e) {
    std::string log;
    for (const auto& entry : e.getBuildLog()) log += entry.second;
    throw Error("building " + what + " failed on " + device_.name + " with options '" + options +
                "':\n" + nvidia_locations(log));
  } catch (const cl::Error& e) {
    std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
    throw Error("building " + what + " failed on " + device_.name + " with options '" + options +
                "': " + describe_cl_error(e) + "\n" + nvidia_locations(log));
  }
  ++cache_stats_.built;
  if (tracing())
    trace(("program built from source (or the driver's cache): " + family + " (" + selection + ")")
              .c_str());
  if (!quiet) {
    const std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
    std::fprintf(stderr, "blurtool: built %s on %s with options '%s'%s%s\n", what.c_str(),
                 device_.name.c_str(), options.c_str(),
                 log.find_first_not_of(" \n\r\t") == std::string::npos ? "" : ":\n",
                 nvidia_locations(log).c_str());
  }
  if (use_disk && store) {
    try {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (binaries.size() == 1 && store_program_binary(key, binaries[0])) ++cache_stats_.stored;
    } catch (const cl::Error&) {
      // A driver that cannot hand back binaries: nothing to cache.
    }
  }
  return programs_.emplace(id, program).first->second;
}

cl::Kernel Runtime::kernel(const std::string& family, const std::string& name,
                           const std::string& options) {
  return cl::Kernel(program(family, options, {name}), name.c_str());
}

std::vector<cl::Kernel> Runtime::kernels(const std::string& family,
                                         const std::vector<std::string>& names,
                                         const std::string& options) {
  cl::Program& built = program(family, options, names);
  std::vector<cl::Kernel> result;
  for (const std::string& name : names) result.emplace_back(built, name.c_str());
  return result;
}

double event_ms(const cl::Event& event) {
  cl_ulong start = event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  cl_ulong end = event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  if (start == 0 || end < start) return 0;
  return static_cast<double>(end - start) * 1e-6;
}

double summed_event_ms(const std::vector<cl::Event>& events) noexcept {
  double ms = 0;
  for (const cl::Event& e : events) {
    try {
      if (e()) ms += event_ms(e);
    } catch (...) {
    }
  }
  return ms;
}

void event_span_ns(const std::vector<cl::Event>& events, std::uint64_t* start,
                   std::uint64_t* end) noexcept {
  bool found = false;
  std::uint64_t first = 0, last = 0;
  for (const cl::Event& e : events) {
    try {
      if (!e()) continue;
      const std::uint64_t s = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
      const std::uint64_t t = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
      if (s == 0 || t < s) continue;  // no span (as event_ms)
      first = found ? std::min(first, s) : s;
      last = found ? std::max(last, t) : t;
      found = true;
    } catch (...) {
    }
  }
  *start = first;
  *end = last;
}

void throw_if_failed(const std::vector<cl::Event>& events) {
  for (const cl::Event& e : events) {
    if (!e()) continue;
    const cl_int status = e.getInfo<CL_EVENT_COMMAND_EXECUTION_STATUS>();
    if (status < 0) throw cl::Error(status, "a command of the image's round trip");
  }
}

void finish_quietly(cl::CommandQueue& queue) noexcept {
  try {
    queue.finish();
  } catch (...) {
  }
}

}  // namespace blurtool
