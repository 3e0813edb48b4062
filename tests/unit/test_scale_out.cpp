// What spreading a batch over processes and hosts rests on: --files-from lists, the path keys
// and mirrors of listed paths, --shard's stable hash and partition (pipeline/file_list.h), and
// the devices of --devices all (pipeline/batch_pipeline.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "pipeline/batch_pipeline.h"
#include "pipeline/file_list.h"
#include "util/error.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

// A list file holding exactly `bytes`.
std::string list_file(const std::string& bytes) {
  const fs::path path = fs::temp_directory_path() / ("blurtool list " + std::to_string(::getpid()));
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

TEST(FileList, LinesKeepSpacesAndSkipEmptyLines) {
  const std::string path = list_file("a b.jpg\n\n  lead.png\ntrail .jpg \nlast.jpg");
  EXPECT_EQ(read_file_list(path, false),
            (std::vector<std::string>{"a b.jpg", "  lead.png", "trail .jpg ", "last.jpg"}));
  fs::remove(path);
}

TEST(FileList, CrlfLineEndsAreLineEnds) {
  const std::string path = list_file("a.jpg\r\nb c.png\r\n");
  EXPECT_EQ(read_file_list(path, false), (std::vector<std::string>{"a.jpg", "b c.png"}));
  fs::remove(path);
}

TEST(FileList, NulSeparatedNamesMayHoldNewlines) {
  const std::string path = list_file(std::string("new\nline.jpg\0plain.png\0\0", 24));
  EXPECT_EQ(read_file_list(path, true), (std::vector<std::string>{"new\nline.jpg", "plain.png"}));
  // Read line by line, the same list would join and split names: refused with the way out.
  try {
    read_file_list(path, false);
    ADD_FAILURE() << "a list with NUL bytes read as lines";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("needs -0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--files-from '" + path + "'"), std::string::npos);
  }
  fs::remove(path);
}

TEST(FileList, AMissingListIsAnErrorNamingIt) {
  try {
    read_file_list("/no/such/list.txt", false);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--files-from '/no/such/list.txt': cannot open: No such file or directory");
  }
}

TEST(FileList, PathKeysAreLexicallyNormal) {
  EXPECT_EQ(path_key("./a//b/../c.jpg"), "a/c.jpg");
  EXPECT_EQ(path_key("a.jpg"), path_key("./a.jpg"));
  EXPECT_EQ(path_key("photos/"), "photos");
  EXPECT_EQ(path_key("/data/./x.png"), "/data/x.png");
  EXPECT_EQ(mirrored_path("/data/x.png"), "data/x.png");
  EXPECT_EQ(mirrored_path("./a/b.jpg"), "a/b.jpg");
  EXPECT_EQ(mirrored_path("a/../../b.jpg"), "");
  EXPECT_EQ(mirrored_path("../b.jpg"), "");
  EXPECT_EQ(mirrored_path(".."), "");
  EXPECT_EQ(mirrored_path("..b/c.jpg"), "..b/c.jpg");  // a name that starts with two dots
}

// The published FNV-1a test vectors: the hash, and so every shard, is the same everywhere.
TEST(FileList, TheShardHashIsFnv1a64) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

TEST(FileList, ShardsPartitionAnyListExactlyOnce) {
  std::vector<std::string> paths;
  for (int i = 0; i < 500; ++i) paths.push_back("photos/img " + std::to_string(i) + ".jpg");
  for (std::uint64_t n = 1; n <= 7; ++n) {
    std::map<std::string, int> taken;
    std::vector<size_t> sizes(n);
    for (std::uint64_t i = 0; i < n; ++i)
      for (const std::string& p : paths)
        if (parse_shard(std::to_string(i) + "/" + std::to_string(n)).takes(p)) {
          ++taken[p];
          ++sizes[i];
        }
    ASSERT_EQ(taken.size(), paths.size()) << n;
    for (const auto& [p, count] : taken) EXPECT_EQ(count, 1) << p << " in " << n << " shards";
    for (size_t size : sizes) EXPECT_GT(size, 500 / n / 2) << "a share far from 1/" << n;
    // Numbered from 1 (GNU parallel's {%}, Slurm arrays from 1): N is the share 0 is.
    for (const std::string& p : paths)
      EXPECT_EQ(parse_shard("0/" + std::to_string(n)).takes(p),
                parse_shard(std::to_string(n) + "/" + std::to_string(n)).takes(p));
  }
  // Spellings of one path fall in one share.
  const Shard s = parse_shard("1/3");
  for (const std::string& p : paths) EXPECT_EQ(s.takes(p), s.takes("./" + p));
}

TEST(FileList, BadShardsAreUsageErrors) {
  for (const char* bad : {"", "1", "1/", "/4", "5/4", "-1/4", "1/0", "a/b", "1/4/2", " 1/4",
                          "1/4294967297", "99999999999/4"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--shard '" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(parse_shard("4/4").index, 4u);
  EXPECT_EQ(parse_shard("0/1").count, 1u);
}

}  // namespace
}  // namespace blurtool

namespace blurtool {
namespace {

DeviceInfo device_of(int index, cl_device_type type) {
  DeviceInfo d;
  d.index = index;
  d.type = type;
  return d;
}

std::vector<int> indices(const std::vector<DeviceInfo>& devices) {
  std::vector<int> out;
  for (const DeviceInfo& d : devices) out.push_back(d.index);
  return out;
}

// --devices all on a GPU host leaves out the CPU device that a CPU driver (PoCL) adds; on a host
// of CPU devices only, it takes them all.
TEST(EveryDevice, GpusAndAcceleratorsWhereThereAreAnyElseEveryDevice) {
  const std::vector<DeviceInfo> gpu_host = {
      device_of(0, CL_DEVICE_TYPE_GPU), device_of(1, CL_DEVICE_TYPE_GPU),
      device_of(2, CL_DEVICE_TYPE_CPU), device_of(3, CL_DEVICE_TYPE_ACCELERATOR)};
  EXPECT_EQ(indices(every_device(gpu_host)), (std::vector<int>{0, 1, 3}));
  const std::vector<DeviceInfo> cpu_host = {device_of(0, CL_DEVICE_TYPE_CPU),
                                            device_of(1, CL_DEVICE_TYPE_CPU)};
  EXPECT_EQ(indices(every_device(cpu_host)), (std::vector<int>{0, 1}));
  EXPECT_TRUE(every_device({}).empty());
}

}  // namespace
}  // namespace blurtool
