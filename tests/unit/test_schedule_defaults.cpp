// The built-in default schedule table (filters/schedule_table.h): every entry names a variant
// its filter knows and a reason whose note exists, and auto falls back from vendor to device
// type to any device as the table says.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "filters/box/box_blur.h"
#include "filters/bright/bright_points.h"
#include "filters/gauss/gauss_blur.h"
#include "filters/schedule_table.h"
#include "runtime/kernel_sources.h"

namespace blurtool {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ScheduleDefaults, EveryEntryNamesAKnownVariantAndAnExistingNote) {
  ASSERT_FALSE(default_schedule_table().empty());
  ASSERT_FALSE(default_parameter_table().empty());
  std::vector<DefaultSchedule> entries = default_schedule_table();
  for (const DefaultSchedule& d : default_parameter_table()) entries.push_back(d);
  for (const DefaultSchedule& d : entries) {
    const std::string& op = d.schedule.op;
    const std::string& v = d.schedule.variant;
    if (op == "box")
      EXPECT_NO_THROW(parse_named(box_variant_table(), v, "box")) << v;
    else if (op == "gauss")
      EXPECT_NO_THROW(parse_named(gauss_variant_table(), v, "gauss")) << v;
    else if (op == "bright")
      EXPECT_NO_THROW(parse_named(bright_variant_table(), v, "bright")) << v;
    else
      ADD_FAILURE() << "unknown op " << op;
    EXPECT_NE(v, "auto") << op;
    ASSERT_FALSE(d.reason.empty()) << op << " " << v;
    // A reason citing a note names its file and its title: "docs/notes/F.md, 'TITLE': ...".
    if (d.reason.rfind("docs/notes/", 0) == 0) {
      const std::string file = d.reason.substr(0, d.reason.find(','));
      const std::string text = read_text(std::string(BLURTOOL_SOURCE_DIR) + "/" + file);
      ASSERT_FALSE(text.empty()) << file << " (cited by " << op << " " << v << ") is missing";
      const size_t open = d.reason.find('\'');
      const size_t close = d.reason.find('\'', open + 1);
      ASSERT_NE(close, std::string::npos) << d.reason;
      std::string title = d.reason.substr(open + 1, close - open - 1);
      // Notes quote variant names in backticks; the reasons do not.
      std::string plain;
      for (char c : text)
        if (c != '`') plain += c;
      EXPECT_NE(plain.find("## " + title), std::string::npos)
          << file << " has no note titled '" << title << "'";
    }
  }
}

TEST(ScheduleDefaults, EveryOpHasADefaultForAnyDevice) {
  DeviceInfo other;
  other.type = CL_DEVICE_TYPE_ACCELERATOR;
  for (const char* op : {"box", "gauss", "bright"})
    EXPECT_FALSE(default_schedules(other, op, 30).empty()) << op;
}

TEST(ScheduleDefaults, VendorEntriesOnlyForTheirVendor) {
  DeviceInfo nvidia;
  nvidia.type = CL_DEVICE_TYPE_GPU;
  nvidia.platform = "NVIDIA CUDA";
  DeviceInfo amd = nvidia;
  amd.platform = "AMD Accelerated Parallel Processing";
  EXPECT_EQ(device_vendor(nvidia), "NVIDIA");
  EXPECT_EQ(device_vendor(amd), "AMD");
  EXPECT_EQ(default_schedules(nvidia, "gauss", 16).front().variant, "fused-mma");
  EXPECT_EQ(default_schedules(amd, "gauss", 16).front().variant, "fused");
  // fused is the default up to R 32 only.
  EXPECT_EQ(default_schedules(amd, "gauss", 33).front().variant, "separable-buffer");
}

// The parameters a schedule takes where the user gives none come from the default parameter
// table: the values the schedules were measured fastest with, by radius where they differ.
TEST(ScheduleDefaults, ParametersComeFromTheTable) {
  DeviceInfo gpu;
  gpu.type = CL_DEVICE_TYPE_GPU;
  gpu.platform = "NVIDIA CUDA";
  const DeviceInfo any;
  for (const DeviceInfo* d : std::vector<const DeviceInfo*>{&gpu, &any}) {
    const TunedSchedule fused = default_parameters(*d, "box", "fused", 30);
    EXPECT_EQ(fused.wg.text(), "16x8");
    EXPECT_EQ(box_fused_preferred_group(*d).text(), "16x8");
    const TunedSchedule seg = default_parameters(*d, "box", "segmented", 30);
    EXPECT_EQ(seg.segment, 128);
    EXPECT_EQ(seg.unroll, 2);
    EXPECT_EQ(default_parameters(*d, "gauss", "fused", 32).wg.text(), "256x1");
    EXPECT_EQ(default_parameters(*d, "gauss", "fused", 33).wg.text(), "128x1");
    EXPECT_EQ(default_parameters(*d, "gauss", "fused", 33).segment, 8);
    EXPECT_EQ(gauss_fused_default_group(40, *d), 128);
    const TunedSchedule sep = default_parameters(*d, "gauss", "separable-buffer", 16);
    EXPECT_EQ(sep.wg.text(), "128x1");
    EXPECT_EQ(sep.segment, 8);
  }
  EXPECT_EQ(box_default_segment(BoxVariant::segmented_local), 8);
  EXPECT_EQ(box_default_unroll(BoxVariant::scan), 8);
  // A schedule without an entry computes its own: zeros.
  const TunedSchedule tiled = default_parameters(gpu, "box", "tiled", 30);
  EXPECT_EQ(box_default_segment(BoxVariant::single), 0);
  EXPECT_TRUE(tiled.wg.is_default());
  EXPECT_EQ(tiled.segment, 0);
  EXPECT_EQ(tiled.unroll, 0);
}

// The tuning table's fingerprint hashes the kernels without their comments: a comment edited
// leaves the winners valid; a code change, a string or a character does not.
TEST(ScheduleDefaults, KernelCodeDropsCommentsOnly) {
  EXPECT_EQ(kernel_code("a // note\nb /* x\ny */ c"), "a  \nb   c");
  EXPECT_EQ(kernel_code("#error \"no // comment\" /* here */"), "#error \"no // comment\"  ");
  EXPECT_EQ(kernel_code("char s = '/'; int d = 4 / 2; /* open"), "char s = '/'; int d = 4 / 2;  ");
  EXPECT_EQ(kernel_code("x = \"a\\\"//\"; y"), "x = \"a\\\"//\"; y");
  EXPECT_NE(kernel_code("int a = 1;"), kernel_code("int a = 2;"));
}

}  // namespace
}  // namespace blurtool
