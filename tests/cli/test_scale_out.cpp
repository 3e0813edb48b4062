// What engines that spread a folder over processes and hosts need from a batch
// (docs/scale-out.md): inputs from a list (--files-from, -0), a deterministic share (--shard), a
// record of each file (--report), and reruns that complete only what is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "tests/support/cli_support.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every file under `dir` with its bytes, by path relative to it.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = read_file(e.path());
  return files;
}

// The JSON objects of a report, line by line (each line must parse on its own).
std::vector<json> report_lines(const fs::path& path) {
  std::vector<json> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

// The inputs of a report's file records with `status`.
std::multiset<std::string> inputs_with(const std::vector<json>& lines, const std::string& status) {
  std::multiset<std::string> inputs;
  for (const json& j : lines)
    if (j["record"] == "file" && j["status"] == status)
      inputs.insert(j["input"].get<std::string>());
  return inputs;
}

// Single-quoted for sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class ScaleOut : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ = fs::temp_directory_path() /
            ("blurtool scale out " + name + " " + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Runs blurtool in the test's root, standard input from `stdin_path` if given.
  Result run(const std::vector<std::string>& args, const fs::path& stdin_path = {}) {
    Spawn spawn;
    spawn.stdin_path = stdin_path;
    return run_blurtool(args, root_, root_, spawn);
  }

  // `count` small PNGs and JPEGs under "photos/" (some in sub-folders, names with spaces), as
  // paths relative to the root.
  std::vector<std::string> make_photos(int count) {
    std::vector<std::string> paths;
    for (int i = 0; i < count; ++i) {
      const std::string dir = i % 3 == 0 ? "photos/" : i % 3 == 1 ? "photos/day 2/" : "photos/x/";
      const std::string path = dir + "img " + std::to_string(i) + (i % 4 == 0 ? ".jpg" : ".png");
      fs::create_directories(root_ / dir);
      save_image(random_image(12 + i % 5, 9 + i % 3, 3, 100 + i), (root_ / path).string());
      paths.push_back(path);
    }
    return paths;
  }

  // A list file of `paths`, newline- or NUL-separated.
  fs::path write_list(const std::string& name, const std::vector<std::string>& paths,
                      bool nul = false) {
    std::string text;
    for (const std::string& p : paths) text += p + (nul ? '\0' : '\n');
    const fs::path path = root_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  fs::path root_;
};

// For N from 1 to 7 the N shards' outputs together are one unsharded run's, no file done twice,
// and each shard takes the same files whatever the order of the list.
TEST_F(ScaleOut, ShardsCoverTheListOnceInAnyOrder) {
  std::vector<std::string> paths = make_photos(24);
  const fs::path forward = write_list("forward.txt", paths);
  std::reverse(paths.begin(), paths.end());
  std::swap(paths[3], paths[17]);
  const fs::path backward = write_list("backward.txt", paths);

  const Result all = run({"--box", "1", "--files-from", forward.string(), "-o", "all"});
  ASSERT_EQ(all.status, 0) << all.err;
  const auto expected = contents(root_ / "all");
  ASSERT_EQ(expected.size(), paths.size());
  ASSERT_EQ(expected.count("photos/day 2/img 1.png"), 1u) << "outputs mirror the listed paths";

  for (int n = 1; n <= 7; ++n) {
    std::map<std::string, std::multiset<std::string>> done_by_list;
    for (const fs::path& list : {forward, backward}) {
      const std::string out = "n" + std::to_string(n) + " " + list.stem().string();
      std::multiset<std::string> done;
      for (int i = 0; i < n; ++i) {
        const std::string shard = std::to_string(i) + "/" + std::to_string(n);
        const std::string report = out + " " + std::to_string(i) + ".jsonl";
        const Result r = run({"--box", "1", "--files-from", list.string(), "--shard", shard,
                              "--report", report, "-o", out});
        ASSERT_EQ(r.status, 0) << shard << ": " << r.err;
        const std::vector<json> lines = report_lines(root_ / report);
        EXPECT_TRUE(inputs_with(lines, "skipped").empty()) << shard << ": a file done twice";
        const std::multiset<std::string> mine = inputs_with(lines, "done");
        done_by_list[list.stem().string() + " " + shard] = mine;
        done.insert(mine.begin(), mine.end());
      }
      EXPECT_EQ(done, std::multiset<std::string>(paths.begin(), paths.end())) << out;
      EXPECT_EQ(contents(root_ / out), expected) << out;
    }
    for (int i = 0; i < n; ++i) {
      const std::string shard = std::to_string(i) + "/" + std::to_string(n);
      EXPECT_EQ(done_by_list["forward " + shard], done_by_list["backward " + shard]) << shard;
    }
  }
}

// Four shards at once under GNU parallel, each given the whole list on standard input (--tee),
// as docs/scale-out.md's recipe runs them over hosts: every output once, and the merged report
// says so.
TEST_F(ScaleOut, FourShardsUnderGnuParallelMakeEveryOutputOnce) {
  ASSERT_EQ(std::system("parallel --version > /dev/null 2>&1"), 0)
      << "GNU parallel is missing (scripts/setup.sh installs Debian's 'parallel')";
  const std::vector<std::string> paths = make_photos(200);
  const fs::path list = write_list("list.txt", paths);
  const std::string command =
      "cd " + quoted(root_.string()) + " && parallel --will-cite --pipe --tee -j4 " +
      quoted(std::string(BLURTOOL_BINARY) +
             " --box 1 --quiet --files-from - --shard {}/4 -o out --report report-{}.jsonl") +
      " ::: 0 1 2 3 < list.txt 2> parallel.err";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_file(root_ / "parallel.err");

  std::vector<json> merged;
  for (int i = 0; i < 4; ++i) {
    const std::vector<json> lines =
        report_lines(root_ / ("report-" + std::to_string(i) + ".jsonl"));
    ASSERT_FALSE(lines.empty()) << i;
    EXPECT_EQ(lines.back()["record"], "summary") << i;
    EXPECT_EQ(lines.back()["shard"], std::to_string(i) + "/4");
    merged.insert(merged.end(), lines.begin(), lines.end());
  }
  EXPECT_EQ(inputs_with(merged, "done"), std::multiset<std::string>(paths.begin(), paths.end()));
  std::uint64_t done = 0;
  for (const json& j : merged)
    if (j["record"] == "summary") done += j["done"].get<std::uint64_t>();
  EXPECT_EQ(done, paths.size());
  const auto outputs = contents(root_ / "out");
  ASSERT_EQ(outputs.size(), paths.size());
  for (const std::string& p : {paths[1], paths[101], paths[199]}) {  // PNGs: lossless outputs
    const Image in = load_image((root_ / p).string());
    EXPECT_EQ(
        max_diff(load_image((root_ / "out" / p).string()), expected_box(in, 1, EdgeMode::clamp)), 0)
        << p;
  }
}

// Names with spaces and (with -0) newlines, a missing file, a file listed twice under two
// spellings, a folder, an absolute path and a path above the current folder: each as the
// report and the outputs say.
TEST_F(ScaleOut, ListsWithOddNamesMissingFilesDuplicatesAndFolders) {
  fs::create_directories(root_ / "in" / "sub");
  save_image(random_image(10, 8, 3, 1), (root_ / "in/with space.png").string());
  save_image(random_image(10, 8, 3, 2), (root_ / "in/new\nline.png").string());
  save_image(random_image(10, 8, 3, 3), (root_ / "in/sub/a.png").string());
  save_image(random_image(10, 8, 3, 4), (root_ / "in/sub/b.png").string());
  fs::create_directories(root_ / "abs");
  save_image(random_image(10, 8, 3, 5), (root_ / "abs/far.png").string());
  const std::string absolute = (root_ / "abs/far.png").string();
  const fs::path list =
      write_list("list",
                 {"in/with space.png", "in/new\nline.png", "in/missing.png", "./in/with space.png",
                  "in/sub", absolute, "../outside.png", "-"},
                 true);

  const Result r = run(
      {"--box", "1", "-0", "--files-from", list.string(), "-o", "out", "--report", "report.jsonl"});
  EXPECT_EQ(r.status, 1) << r.err;  // some failed
  EXPECT_NE(r.err.find("blurtool: in/missing.png: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("blurtool: ../outside.png: a listed path that leaves its starting folder"),
            std::string::npos)
      << r.err;
  std::set<std::string> made;
  for (const auto& [name, bytes] : contents(root_ / "out")) made.insert(name);
  const std::string abs_mirror = fs::path(absolute).relative_path().string();
  EXPECT_EQ(made, (std::set<std::string>{"in/with space.png", "in/new\nline.png", "in/sub/a.png",
                                         "in/sub/b.png", abs_mirror}));

  const std::vector<json> lines = report_lines(root_ / "report.jsonl");
  EXPECT_EQ(inputs_with(lines, "done"),
            (std::multiset<std::string>{"in/with space.png", "in/new\nline.png", "in/sub/a.png",
                                        "in/sub/b.png", absolute}));
  EXPECT_EQ(inputs_with(lines, "failed"),
            (std::multiset<std::string>{"in/missing.png", "../outside.png", "-"}));
  for (const json& j : lines) {
    if (j["record"] != "file" || j["status"] != "done") continue;
    EXPECT_EQ(j["width"], 10);
    EXPECT_EQ(j["height"], 8);
    EXPECT_EQ(j["bytes_in"].get<double>(), fs::file_size(root_ / j["input"].get<std::string>()));
    EXPECT_EQ(j["bytes_out"].get<double>(), fs::file_size(root_ / j["output"].get<std::string>()));
    EXPECT_TRUE(j["decode_ms"].is_number() && j["device_ms"].is_number() &&
                j["encode_ms"].is_number())
        << j.dump();
    EXPECT_TRUE(j["device"].is_string()) << j.dump();
  }
  EXPECT_EQ(lines.back()["record"], "summary");
  EXPECT_EQ(lines.back()["done"], 5);
  EXPECT_EQ(lines.back()["failed"], 3);
}

// A rerun of the same list and shard completes only what is missing, appending to the report.
TEST_F(ScaleOut, ARerunMakesOnlyWhatIsMissing) {
  const std::vector<std::string> paths = make_photos(12);
  const fs::path list = write_list("list.txt", paths);
  const std::vector<std::string> args = {"--box",    "1",      "--files-from", list.string(),
                                         "-o",       "out",    "--shard",      "1/2",
                                         "--report", "r.jsonl"};
  ASSERT_EQ(run(args).status, 0);
  const auto first = contents(root_ / "out");
  ASSERT_GE(first.size(), 2u);
  const std::string lost = first.begin()->first;
  fs::remove(root_ / "out" / lost);
  const Result again = run(args);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(contents(root_ / "out"), first);
  const std::vector<json> lines = report_lines(root_ / "r.jsonl");
  size_t summaries = 0;
  for (const json& j : lines) summaries += j["record"] == "summary";
  EXPECT_EQ(summaries, 2u) << "the second run appends";
  const json& last = lines.back();
  EXPECT_EQ(last["done"], 1);
  EXPECT_EQ(last["skipped"], first.size() - 1);
  std::multiset<std::string> redone;
  for (size_t i = first.size() + 1; i < lines.size(); ++i)
    if (lines[i]["record"] == "file" && lines[i]["status"] == "done")
      redone.insert(lines[i]["output"].get<std::string>());
  EXPECT_EQ(redone, std::multiset<std::string>{"out/" + lost});
}

// Sets an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

// Spread over two devices (PoCL with two CPU devices, POCL_DEVICES), shards with a report:
// every image once, each line naming the device that made it, and neither device left idle.
TEST_F(ScaleOut, DevicesAllComposesWithShardAndReport) {
  const ScopedEnv two_devices("POCL_DEVICES", "pthread pthread");
  const std::vector<std::string> paths = make_photos(80);
  const fs::path list = write_list("list.txt", paths);
  for (const char* shard : {"1/2", "2/2"}) {
    const Result r = run({"--box", "1", "--devices", "all", "--files-from", list.string(), "-o",
                          "out", "--shard", shard, "--report", "r.jsonl"});
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const std::vector<json> lines = report_lines(root_ / "r.jsonl");
  std::map<int, size_t> by_device;
  for (const json& j : lines) {
    if (j["record"] == "summary") {
      EXPECT_EQ(j["devices"].size(), 2u) << j.dump();
      EXPECT_TRUE(j["shard"] == "1/2" || j["shard"] == "0/2") << j.dump();  // 2/2 as 0/2
    }
    if (j["record"] != "file") continue;
    ++by_device[j["device_index"].get<int>()];
    EXPECT_TRUE(j["device"].is_string()) << j.dump();
  }
  EXPECT_EQ(by_device.size(), 2u) << "a device made no image";
  EXPECT_EQ(inputs_with(lines, "done"), std::multiset<std::string>(paths.begin(), paths.end()));
  EXPECT_EQ(contents(root_ / "out").size(), paths.size());
}

// A list made again from `find .` after a run lists the outputs too: they are no inputs, and
// the rerun skips every output that exists.
TEST_F(ScaleOut, OutputsInTheListAreNoInputs) {
  const std::vector<std::string> paths = make_photos(6);
  const fs::path list = write_list("list.txt", paths);
  ASSERT_EQ(run({"--box", "1", "--files-from", list.string(), "-o", "out"}).status, 0);
  std::vector<std::string> again = paths;
  for (const std::string& p : paths) again.push_back("./out/" + p);
  again.push_back("out");
  const fs::path list2 = write_list("list2.txt", again);
  const Result r =
      run({"--box", "1", "--files-from", list2.string(), "-o", "out", "--report", "out/r.jsonl"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + std::to_string(paths.size() + 1) +
                       " listed paths lie in the output folder 'out' and are no inputs"),
            std::string::npos)
      << r.err;
  const std::vector<json> lines = report_lines(root_ / "out/r.jsonl");
  EXPECT_EQ(inputs_with(lines, "skipped"), std::multiset<std::string>(paths.begin(), paths.end()));
  EXPECT_EQ(lines.size(), paths.size() + 1);
  EXPECT_FALSE(fs::exists(root_ / "out/out"));
}

// Two inputs with one output (--format png), in shards that got the list in different orders:
// the path that sorts first makes it, in whichever shard it is, and the other fails once.
TEST_F(ScaleOut, TwoInputsWithOneOutputResolveAlikeInEveryShard) {
  fs::create_directories(root_ / "p");
  std::vector<std::string> paths;
  std::multiset<std::string> jpgs, pngs;
  for (int i = 0; i < 6; ++i) {
    paths.push_back("p/" + std::to_string(i) + ".jpg");
    jpgs.insert(paths.back());
    save_image(random_image(9, 7, 3, i), (root_ / paths.back()).string());
    paths.push_back("p/" + std::to_string(i) + ".png");
    pngs.insert(paths.back());
    save_image(random_image(9, 7, 3, i), (root_ / paths.back()).string());
  }
  const fs::path forward = write_list("forward.txt", paths);
  const fs::path backward =
      write_list("backward.txt", std::vector<std::string>(paths.rbegin(), paths.rend()));
  for (const auto& [shard, list] : {std::pair{"0/2", forward}, std::pair{"1/2", backward}}) {
    const Result r = run({"--box", "1", "--format", "png", "--files-from", list.string(), "-o",
                          "out", "--shard", shard, "--report", "r.jsonl"});
    EXPECT_LE(r.status, 1) << r.err;
  }
  const std::vector<json> lines = report_lines(root_ / "r.jsonl");
  EXPECT_EQ(inputs_with(lines, "done"), jpgs);
  EXPECT_EQ(inputs_with(lines, "failed"), pngs);
  EXPECT_EQ(contents(root_ / "out").size(), 6u);
}

TEST_F(ScaleOut, BadListsShardsAndReportsAreErrorsNamingTheOption) {
  save_image(random_image(8, 8, 3, 1), (root_ / "a.png").string());
  std::ofstream(root_ / "notes") << "an input without an image name";
  const fs::path list = write_list("list.txt", {"a.png", "notes"});
  const std::string a = read_file(root_ / "a.png"), listed = read_file(list);
  struct Case {
    std::vector<std::string> args;
    int status;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--box", "1", "--files-from", "no list", "-o", "out"},
       2,
       "--files-from 'no list': cannot open: No such file or directory"},
      {{"--box", "1", "--files-from", list.string(), "out"}, 2, "give -o"},
      {{"--box", "1", "-0", "a.png", "b.png"}, 2, "-0 (--null)"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--shard", "4/3"},
       2,
       "--shard '4/3'"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--shard", "1"},
       2,
       "--shard '1'"},
      {{"--box", "1", "--shard", "0/2", "a.png", "b.png"}, 2, "--shard goes with a batch"},
      {{"--box", "1", "--report", "r.jsonl", "a.png", "b.png"}, 2, "--report goes with a batch"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--report", "a.png"},
       2,
       "--report 'a.png' names an image"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--report", "-", "--bench"},
       2,
       "--report - and --bench"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--report", "no dir/r.jsonl"},
       2,
       "--report 'no dir/r.jsonl': cannot open"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--report", list.string()},
       2,
       "is the --files-from list"},
      {{"--box", "1", "--files-from", list.string(), "-o", "out", "--report", "notes"},
       2,
       "--report 'notes' is the input 'notes'"},
      {{"--box", "1", "--files-from", root_.string(), "-o", "out"},
       2,
       "--files-from '" + root_.string() + "': is a folder"},
      {{"--box", "1", "--files-from", list.string(), "--files-from", list.string(), "-o", "out"},
       2,
       "--files-from given 2 times"},
      {{"--box", "1", "-0", "--files-from", list.string(), "-o", "out"},
       2,
       "-0 given, but the list holds no NUL byte"},
      {{"--box", "1", "--files-from", list.string(), "--shard", "0/2", "--shard", "1/2", "-o",
        "out"},
       2,
       "--shard given 2 times"},
      {{"--box", "1", "--files-from", list.string(), "--report", "a.jsonl", "--report", "b.jsonl",
        "-o", "out"},
       2,
       "--report given 2 times"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.status, c.status) << c.says << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(root_ / "out")) << c.says << ": output written";
    EXPECT_FALSE(fs::exists(root_ / "b.png")) << c.says;
  }
  EXPECT_EQ(read_file(root_ / "a.png"), a);
  EXPECT_EQ(read_file(list), listed);
  EXPECT_EQ(read_file(root_ / "notes"), "an input without an image name");
}

// An empty list is a batch with nothing to do, said in a warning.
TEST_F(ScaleOut, AnEmptyListDoesNothingAndSaysSo) {
  const fs::path list = write_list("empty.txt", {});
  const Result r = run({"--box", "1", "--files-from", list.string(), "-o", "out"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --files-from '" + list.string() + "' lists no path"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(contents(root_ / "out").empty());
}

// The list from standard input, and a report on standard output.
TEST_F(ScaleOut, ListFromStandardInputAndReportToStandardOutput) {
  const std::vector<std::string> paths = make_photos(5);
  const fs::path list = write_list("list.txt", paths);
  const Result r = run({"--box", "1", "--files-from", "-", "-o", "out", "--report", "-"}, list);
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::multiset<std::string> done;
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    const json j = json::parse(line);
    if (j["record"] == "file") done.insert(j["input"].get<std::string>());
  }
  EXPECT_EQ(count, paths.size() + 1);
  EXPECT_EQ(done, std::multiset<std::string>(paths.begin(), paths.end()));
}

}  // namespace
}  // namespace blurtool

namespace blurtool {
namespace {

// The shell blocks of docs/scale-out.md marked `<!-- recipe: NAME -->`, by name.
std::map<std::string, std::string> recipes() {
  std::istringstream doc(read_file(std::string(BLURTOOL_SOURCE_DIR) + "/docs/scale-out.md"));
  std::map<std::string, std::string> blocks;
  std::string name, line;
  bool in_block = false;
  while (std::getline(doc, line)) {
    if (line.rfind("<!-- recipe: ", 0) == 0) {
      name = line.substr(13, line.find(' ', 13) - 13);
    } else if (!name.empty() && !in_block && line == "```sh") {
      in_block = true;
    } else if (in_block && line == "```") {
      in_block = false;
      name.clear();
    } else if (in_block) {
      blocks[name] += line + "\n";
    }
  }
  return blocks;
}

// Every recipe of docs/scale-out.md, run here as its engine would run it (GNU parallel on the
// local host, a Slurm array's and an indexed Job's indices set by hand), makes every output
// once, and the merge counts them.
TEST_F(ScaleOut, DocumentedRecipesWork) {
  ASSERT_EQ(std::system("parallel --version > /dev/null 2>&1"), 0)
      << "GNU parallel is missing (scripts/setup.sh installs Debian's 'parallel')";
  const std::map<std::string, std::string> blocks = recipes();
  for (const char* name : {"gnu-parallel", "slurm", "kubernetes", "merge"})
    ASSERT_EQ(blocks.count(name), 1u) << "docs/scale-out.md has no recipe " << name;
  // Photos as the recipes find them (*.jpg under photos/), blurtool on the PATH.
  std::vector<std::string> jpegs;
  for (const std::string& p : make_photos(16))
    if (p.size() > 4 && p.substr(p.size() - 4) == ".jpg") jpegs.push_back(p);
  ASSERT_EQ(jpegs.size(), 4u);
  for (int i = 0; i < 12; ++i) {
    const std::string p = "photos/more/" + std::to_string(i) + " shot.jpg";
    fs::create_directories(root_ / "photos/more");
    save_image(random_image(11, 7, 3, 500 + i), (root_ / p).string());
    jpegs.push_back(p);
  }
  fs::create_directories(root_ / "bin");
  fs::create_symlink(BLURTOOL_BINARY, root_ / "bin/blurtool");
  write_list("list.txt", jpegs);

  auto sh = [&](const std::string& env, const std::string& script) {
    const fs::path file = root_ / "recipe.sh";
    std::ofstream(file) << script;
    const std::string command = "cd " + quoted(root_.string()) +
                                " && PATH=" + quoted((root_ / "bin").string()) + ":\"$PATH\" " +
                                env + " sh recipe.sh > recipe.out 2> recipe.err";
    const int status = std::system(command.c_str());
    EXPECT_EQ(status, 0) << script << read_file(root_ / "recipe.err");
    return read_file(root_ / "recipe.out");
  };
  const std::multiset<std::string> all(jpegs.begin(), jpegs.end());
  auto made_once = [&](const std::string& recipe) {
    std::vector<json> merged;
    for (int i = 0; i < 4; ++i) {
      const fs::path report = root_ / ("report-" + std::to_string(i) + ".jsonl");
      ASSERT_TRUE(fs::exists(report)) << recipe << " " << i;
      const std::vector<json> lines = report_lines(report);
      merged.insert(merged.end(), lines.begin(), lines.end());
    }
    EXPECT_EQ(inputs_with(merged, "done"), all) << recipe;
    EXPECT_EQ(contents(root_ / "blurred").size(), jpegs.size()) << recipe;
  };
  auto clean = [&] {
    fs::remove_all(root_ / "blurred");
    for (int i = 0; i < 4; ++i) fs::remove(root_ / ("report-" + std::to_string(i) + ".jsonl"));
    fs::remove(root_ / "report.jsonl");
  };

  sh("HOSTS=:", blocks.at("gnu-parallel"));
  made_once("gnu-parallel");
  clean();
  for (int i = 0; i < 4; ++i) sh("SLURM_ARRAY_TASK_ID=" + std::to_string(i), blocks.at("slurm"));
  made_once("slurm");
  clean();
  for (int i = 0; i < 4; ++i)
    sh("JOB_COMPLETION_INDEX=" + std::to_string(i), blocks.at("kubernetes"));
  made_once("kubernetes");
  const std::string merged = sh("", blocks.at("merge"));
  EXPECT_EQ(merged.substr(0, merged.find('\n')), std::to_string(jpegs.size())) << merged;
}

}  // namespace
}  // namespace blurtool
