// The OpenCL runtime's host code: error codes named, never bare numbers; the kernel selection that
// builds a program of only the kernels a run uses; build-log locations in the family file's
// numbering; and the cache directory. With a device: tests/device/test_runtime.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cl_runtime.h"
#include "runtime/kernel_sources.h"
#include "util/error.h"

namespace blurtool {
namespace {

TEST(ClErrors, CodesHaveNames) {
  EXPECT_EQ(cl_error_name(CL_INVALID_IMAGE_SIZE), "CL_INVALID_IMAGE_SIZE");
  EXPECT_EQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(cl_error_name(-9999), "CL_UNKNOWN_ERROR");
  const std::string line =
      describe_cl_error(cl::Error(CL_MEM_OBJECT_ALLOCATION_FAILURE, "clCreateImage"));
  EXPECT_EQ(line, "clCreateImage failed: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)");
  EXPECT_NE(describe_cl_error(cl::Error(-1001, "clGetPlatformIDs")).find("pocl-opencl-icd"),
            std::string::npos);
}

// --- Programs of the kernels a run uses --------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The kernels whose definition ("kernel [__attribute__((...))] void name(") starts a line of
// `text`, with that line's number (1-based), read independently of the runtime's scanner.
std::vector<std::pair<std::string, size_t>> kernel_definitions(const std::string& text) {
  static const std::regex definition(R"(^\s*(__)?kernel\b.*?\bvoid\s+(\w+)\s*\()");
  std::vector<std::pair<std::string, size_t>> kernels;
  const std::vector<std::string> lines = lines_of(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, definition)) kernels.emplace_back(m[2], i + 1);
  }
  return kernels;
}

// Every kernel of every family, alone: its text keeps the line count and the kernel's own
// definition line where it was, holds no other kernel, and is the family's text with some lines
// blanked, nothing else changed.
TEST(KernelSelection, EachKernelAloneKeepsItsLinesAndDropsTheOthers) {
  size_t families = 0;
  for (const auto& [family, source] : kernel_sources()) {
    if (family == "common" || family.find("_common") != std::string::npos) continue;
    ++families;
    const std::string whole = program_source(family, {});
    const std::vector<std::string> whole_lines = lines_of(whole);
    const auto defined = kernel_definitions(whole);
    ASSERT_GE(defined.size(), 1u) << family;
    const bool alone = defined.size() == 1;  // a family of one kernel: nothing to drop
    for (const auto& [name, line] : defined) {
      const std::string text = program_source(family, {name});
      const std::vector<std::string> lines = lines_of(text);
      ASSERT_EQ(lines.size(), whole_lines.size()) << family << " " << name;
      if (!alone) EXPECT_LT(text.size(), whole.size()) << family << " " << name;
      const std::vector<std::pair<std::string, size_t>> only = {{name, line}};
      EXPECT_EQ(kernel_definitions(text), only) << family << " " << name;
      for (size_t i = 0; i < lines.size(); ++i) {
        EXPECT_TRUE(lines[i].empty() || lines[i] == whole_lines[i])
            << family << " " << name << " line " << i + 1 << ": " << lines[i];
      }
    }
    if (alone) continue;
    // Two at once: both stay; the order and repeats of the names do not matter.
    const std::string pair = program_source(family, {defined[1].first, defined[0].first});
    EXPECT_EQ(kernel_definitions(pair).size(), 2u) << family;
    EXPECT_EQ(program_source(family, {defined[0].first, defined[1].first, defined[0].first}), pair);
  }
  EXPECT_GE(families, 5u);
  EXPECT_THROW(program_source("no_such_family", {"k"}), Error);
}

// What the selection keeps of texts made for it: helpers the kept kernel calls (and what they
// call), kernels that a kept kernel calls, macros and the functions they name, and whole texts
// where it cannot tell what a function's lines do.
TEST(KernelSelection, KeepsWhatItCannotProveUnused) {
  const std::string text =
      "#define SCALE 2\n"                                        // 1
      "inline int twice(int x) { return SCALE * x; }\n"          // 2
      "inline int used(int x) {\n"                               // 3
      "  return twice(x) + 1;\n"                                 // 4
      "}\n"                                                      // 5
      "inline int unused(int x) { return x; }\n"                 // 6
      "#define CALLS_NAMED(x) named(x)\n"                        // 7
      "inline int named(int x) { return x; }\n"                  // 8
      "kernel void a(global int* p) { p[0] = used(p[0]); }\n"    // 9
      "kernel __attribute__((reqd_work_group_size(1, 1, 1)))\n"  // 10
      "void b(global int* p) {\n"                                // 11
      "  a(p);  // a kernel that calls another\n"                // 12
      "}\n"                                                      // 13
      "kernel void c(global int* p) {\n"                         // 14
      "#define LOCAL_ONLY 3\n"                                   // 15
      "  p[0] = LOCAL_ONLY;\n"                                   // 16
      "#undef LOCAL_ONLY\n"                                      // 17
      "}\n"                                                      // 18
      "kernel void d(global int* p) {\n"                         // 19
      "#define LEAKS 4\n"                                        // 20
      "  p[0] = LEAKS;\n"                                        // 21
      "}\n"                                                      // 22
      "inline int after(void) { return LEAKS; }\n";              // 23
  auto kept = [&](const std::vector<std::string>& kernels) {
    const std::string selected = select_kernels(text, kernels);
    EXPECT_EQ(lines_of(selected).size(), lines_of(text).size());
    std::string lines;  // the numbers of the lines left, e.g. "1 2 3"
    const std::vector<std::string> all = lines_of(selected);
    for (size_t i = 0; i < all.size(); ++i)
      if (!all[i].empty()) lines += (lines.empty() ? "" : " ") + std::to_string(i + 1);
    return lines;
  };
  // a, its helper and the helper's helper, not unused(); named() stays since a macro names it;
  // d stays since a line after it names its macro, though after(), that line, goes (nothing
  // calls it).
  EXPECT_EQ(kept({"a"}), "1 2 3 4 5 7 8 9 19 20 21 22");
  // b calls a, so a and its helpers stay.
  EXPECT_EQ(kept({"b"}), "1 2 3 4 5 7 8 9 10 11 12 13 19 20 21 22");
  // c's macro lives and dies inside it.
  EXPECT_EQ(kept({"c"}), "1 7 8 14 15 16 17 18 19 20 21 22");
  EXPECT_EQ(kept({"c", "a"}), "1 2 3 4 5 7 8 9 14 15 16 17 18 19 20 21 22");
  EXPECT_EQ(select_kernels(text, {}), text);
  EXPECT_EQ(select_kernels(text, {"no_such_kernel"}), text);
  EXPECT_EQ(select_kernels(text, {"twice"}), text);  // a function, not a kernel

  // A kernel that a macro defines is not seen: asking for it keeps everything, and the macro's
  // use stays whatever is asked for.
  const std::string made =
      "#define MAKE(n) kernel void n(global int* p) { p[0] = 1; }\n"
      "MAKE(made)\n"
      "kernel void plain(global int* p) { p[0] = 2; }\n";
  EXPECT_EQ(select_kernels(made, {"made"}), made);
  EXPECT_EQ(select_kernels(made, {"plain"}), made);
  EXPECT_EQ(select_kernels(made, {"plain", "made"}), made);
  // Braces that differ between the branches of an #if: the text as it is.
  const std::string branches =
      "kernel void x(global int* p) {\n"
      "#ifdef A\n"
      "  if (p[0]) {\n"
      "#else\n"
      "  if (p[1]) {\n"
      "#endif\n"
      "    p[2] = 0;\n"
      "  }\n"
      "}\n"
      "kernel void y(global int* p) { p[0] = 0; }\n";
  EXPECT_EQ(select_kernels(branches, {"y"}), branches);
  // A comment or literal that mentions a name is no use of it.
  const std::string mentions =
      "inline int helper(void) { return 1; }\n"
      "kernel void k(global int* p) { p[0] = 0; }  // not helper()\n"
      "/* helper */ kernel void other(global int* p) { p[0] = helper(); }\n";
  EXPECT_EQ(select_kernels(mentions, {"k"}),
            "\nkernel void k(global int* p) { p[0] = 0; }  // "
            "not helper()\n\n");
}

// NVIDIA's compiler ignores #line and numbers the program's physical lines as "<kernel>:N:":
// family_locations writes them in the family file's numbering, as PoCL's log already is.
TEST(ClRuntime, NvidiaBuildLogLocationsNameTheFamilyLine) {
  const std::string program = program_source("box_running", {"box_cols_scan"});
  const std::vector<std::string> physical = lines_of(program);
  const std::vector<std::string> family = lines_of(kernel_sources().at("box_running"));
  size_t at = 0;  // box_cols_scan's first line, physical
  while (at < physical.size() && physical[at].find("void box_cols_scan(") == std::string::npos)
    ++at;
  ASSERT_LT(at, physical.size());
  size_t line = 0;  // ... and in the family file
  while (line < family.size() && family[line].find("void box_cols_scan(") == std::string::npos)
    ++line;
  ASSERT_LT(line, family.size());
  const std::string log = "<kernel>:" + std::to_string(at + 1) +
                          ":19: error: x\n<kernel>:3:1: note: y\n" + "<kernel>: no number\n";
  EXPECT_EQ(family_locations(log, "box_running"),
            "kernels/box_running.cl:" + std::to_string(line + 1) +
                ":19: error: x\nkernels/common.cl:3:1: note: y\n" + "<kernel>: no number\n");
  EXPECT_EQ(family_locations("no location", "box_running"), "no location");
}

TEST(CacheDirectory, FollowsTheEnvironment) {
  const char* saved = std::getenv("BLURTOOL_CACHE_DIR");
  const std::string restore = saved ? saved : "";
  ::setenv("BLURTOOL_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(cache_directory(), "/some/where");
  ::unsetenv("BLURTOOL_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg)
    EXPECT_EQ(cache_directory(), std::string(xdg) + "/blurtool");
  else
    EXPECT_EQ(cache_directory(), std::string(std::getenv("HOME")) + "/.cache/blurtool");
  if (saved) ::setenv("BLURTOOL_CACHE_DIR", restore.c_str(), 1);
  EXPECT_EQ(file_name_safe("NVIDIA CUDA/535.1"), "NVIDIA_CUDA_535.1");
}

}  // namespace
}  // namespace blurtool
