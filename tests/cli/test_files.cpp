// End-to-end tests of the files blurtool reads and writes: unreadable inputs, unwritable and
// read-only output folders, signals while the output is written, named pipes, an output equal to
// the input, and the input limits. Each test runs the real binary (fork + execve, no shell, so
// paths with spaces need no quoting) in its own temporary directory, whose name holds spaces on
// purpose, with stdout and stderr captured to files (support/cli_fixture.h). Successful runs are
// decoded and compared with the exact CPU reference; failures must give the documented exit status
// (1 file or device, 2 usage), a stderr line naming the file or option at fault, and leave the
// output directory exactly as it was (no output, no hidden .NAME.blurtool-XXXXXX temporary file).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "image/image_io.h"
#include "tests/support/cli_fixture.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;

TEST_F(Cli, UnreadableInputsFailWithTheirPath) {
  const fs::path missing = in_ / "no such.png", empty = in_ / "empty.png", text = in_ / "notes.png",
                 truncated = in_ / "half.jpg";
  write_file(empty, "");
  write_file(text, "this is plain text, not an image\n");
  const std::string dune = read_file(kDune);
  ASSERT_GT(dune.size(), 1000u);
  write_file(truncated, dune.substr(0, dune.size() / 2));
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {missing, "cannot open"},
      {empty, "empty"},
      {text, "not a PNG, JPEG, TIFF or WebP"},
      {truncated, "truncated"}};
  for (const auto& [input, reason] : cases) {
    SCOPED_TRACE(input.string());
    expect_failure(run({"--box", "3", input, out_ / "o.png"}), 1, {input, reason}, Files{});
  }
}

// A GIF or a BMP is named as such, with what to do, not called an unrecognised file; a text
// file that happens to begin with "BM" is still just not an image.
TEST_F(Cli, GifAndBmpInputsAreNamed) {
  // A 1x1 GIF89a (a two-colour table, one LZW-coded pixel) and a 1x1 24-bit BMP (an info header
  // of 40 bytes, one row of 3 bytes padded to 4).
  const std::string gif(
      "GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff"
      ",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00;",
      35);
  std::string bmp("BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00", 18);
  bmp += std::string("\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x18\x00", 12);
  bmp += std::string(24, '\0') + std::string("\x10\x20\x30\x00", 4);
  ASSERT_EQ(bmp.size(), 58u);
  write_file(in_ / "photo.gif", gif);
  write_file(in_ / "scan.bmp", bmp);
  write_file(in_ / "notes.png", "BM is how this text begins, and it is no image\n");
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {in_ / "photo.gif",
       ": GIF is not supported; convert it to PNG (blurtool reads PNG, JPEG, TIFF and WebP)"},
      {in_ / "scan.bmp",
       ": BMP is not supported; convert it to PNG (blurtool reads PNG, JPEG, TIFF and WebP)"},
      {in_ / "notes.png", ": not a PNG, JPEG, TIFF or WebP image (unrecognised signature bytes)"}};
  for (const auto& [input, reason] : cases) {
    SCOPED_TRACE(input.string());
    const Result r = run({"--box", "3", input, out_ / "o.png"});
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "blurtool: " + input.string() + reason + "\n");
    EXPECT_EQ(listing(out_), Files{});
  }
}

TEST_F(Cli, UnwritableOutputDirectoryFailsWithoutLeftovers) {
  write_file(out_ / "plain file", "x");
  const Files before = listing(out_);
  for (const fs::path& out : {out_ / "missing dir" / "o.png", out_ / "plain file" / "o.png"}) {
    SCOPED_TRACE(out.string());
    expect_failure(run({"--box", "3", kCoffee, out}), 1, {out}, before);
  }
}

TEST_F(Cli, ReadOnlyOutputDirectoryFailsWithoutLeftovers) {
  const fs::path ro = out_ / "read only", in = in_ / "coffee.png";
  fs::copy_file(kCoffee, in);  // where an unprivileged child can read it
  fs::create_directory(ro);
  fs::permissions(ro, fs::perms(0555));
  fs::permissions(root_, fs::perms::all);  // the child's HOME and caches go here
  Spawn as_user;
  as_user.unprivileged_id = 65534;  // root writes into a 0555 folder: run as nobody there
  const Result r =
      run_blurtool({"--box", "3", in.string(), (ro / "o.png").string()}, root_, root_, as_user);
  if (unprivileged_run_unavailable(r)) {
    fs::permissions(ro, fs::perms(0755));
    GTEST_SKIP() << "cannot run blurtool as uid 65534 here: " << r.err;
  }
  fs::permissions(ro, fs::perms(0755));
  expect_failure(r, 1, {ro / "o.png"}, Files{"read only"});
  EXPECT_EQ(listing(ro), Files{});
}

// What blur_signalled_while_writing gave: the run, its input, whether the signal was sent.
struct SignalledRun {
  Result result;
  Image input;
  bool sent = false;
};

// Blurs a 2400x2400 noise PNG (17 MB: a long write) from `in_dir` to `out_dir`/out.png and sends
// `signal` as soon as the temporary output (".out.png.blurtool-XXXXXX") is created (inotify, so
// without polling delays). `ignored`: the child starts with that signal ignored, as under nohup.
// Tries up to 5 runs for one in which the signal was sent while the file existed.
SignalledRun blur_signalled_while_writing(const fs::path& in_dir, const fs::path& out_dir,
                                          const fs::path& scratch, int signal, bool ignored) {
  SignalledRun run;
  run.input = random_image(2400, 2400, 3, 7);
  const fs::path in = in_dir / "noise.png";
  save_image(run.input, in);
  const std::vector<std::string> args = {"--box", "1", in.string(), (out_dir / "out.png").string()};
  const std::string prefix = ".out.png.blurtool-";
  for (int attempt = 0; attempt < 5 && !run.sent; ++attempt) {
    const int watch = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (watch < 0 || ::inotify_add_watch(watch, out_dir.c_str(), IN_CREATE) < 0) {
      ADD_FAILURE() << "inotify: " << std::strerror(errno);
      return run;
    }
    Spawn spawn;
    if (ignored) spawn.ignored_signal = signal;
    spawn.while_running = [&](pid_t pid) {
      alignas(inotify_event) char buffer[4096];
      for (;;) {
        pollfd ready = {watch, POLLIN, 0};
        if (::poll(&ready, 1, 20) > 0) {
          const ssize_t n = ::read(watch, buffer, sizeof buffer);
          for (ssize_t at = 0; at < n;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
            if (event->len && std::string(event->name).rfind(prefix, 0) == 0) {
              ::kill(pid, signal);
              run.sent = true;
              return;
            }
            at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
          }
        }
        siginfo_t info = {};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
            info.si_pid == pid)
          return;  // it ended without our seeing the file
      }
    };
    run.result = run_blurtool(args, scratch, scratch, spawn);
    ::close(watch);
  }
  return run;
}

// Under nohup SIGHUP is ignored, and must stay ignored while the output is written: PoCL's LLVM
// replaces an ignored signal's SIG_IGN with its own handler when OpenCL starts, so blurtool reads
// the dispositions before that. A hang-up sent while the temporary output file exists once
// removed that file and lost the output ("cannot rename the temporary file into place").
TEST_F(Cli, AnIgnoredHangupWhileWritingKeepsTheOutput) {
  const SignalledRun run = blur_signalled_while_writing(in_, out_, root_, SIGHUP, true);
  const Result& r = run.result;
  ASSERT_TRUE(run.sent) << "no temporary file seen; status " << r.status << ": " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(listing(out_), Files{"out.png"});
  EXPECT_EQ(max_diff(load_image(out_ / "out.png"), expected_box(run.input, 1, EdgeMode::clamp)), 0);
}

// SIGTERM while the output is written (the cleanup handlers now sit below LLVM's): the process
// dies by the signal and leaves no temporary file and no output. On a loaded machine the signal
// can arrive only after the rename (the test sends it when the temporary file appears): then the
// output must be whole, and the run is tried again, up to 5 times, for one that was cut short.
TEST_F(Cli, TerminatedWhileWritingLeavesNoFile) {
  bool cut_short = false;
  for (int attempt = 0; attempt < 5 && !cut_short; ++attempt) {
    const SignalledRun run = blur_signalled_while_writing(in_, out_, root_, SIGTERM, false);
    const Result& r = run.result;
    ASSERT_TRUE(run.sent) << "no temporary file seen; status " << r.status << ": " << r.err;
    // 0: it finished before the signal came (the output must then be whole, as below).
    if (r.status != 0) {
      EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
    }
    const Files left = listing(out_);
    if (left.empty()) {
      cut_short = true;
      continue;
    }
    ASSERT_EQ(left, Files{"out.png"}) << "a temporary file was left";
    EXPECT_EQ(max_diff(load_image(out_ / "out.png"), expected_box(run.input, 1, EdgeMode::clamp)),
              0)
        << "a partial output";
    fs::remove(out_ / "out.png");
  }
  EXPECT_TRUE(cut_short) << "the signal never arrived while the output was being written";
}

// A named pipe as INPUT is read once: the check of its name against its format does not open it
// again (a FIFO's second open waits for a new writer: blurtool hung).
TEST_F(Cli, NamedPipeInputIsReadOnce) {
  const fs::path fifo = in_ / "pipe.png";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  std::thread writer([&] { write_file(fifo, read_file(kCoffee)); });
  Spawn spawn;
  spawn.while_running = kill_after(std::chrono::seconds(60));  // hung
  const Result r =
      run_blurtool({"--box", "2", fifo.string(), (out_ / "o.png").string()}, root_, root_, spawn);
  writer.join();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(
      max_diff(load_image(out_ / "o.png"), expected_box(load_image(kCoffee), 2, EdgeMode::clamp)),
      0);
}

TEST_F(Cli, OutputEqualToInputIsRefused) {
  const fs::path in = out_ / "in.png";
  fs::copy_file(kCoffee, in);
  const std::string original = read_file(in);
  const std::string other_spelling = (out_ / "." / "in.png").string();
  for (const std::string& out : {in.string(), other_spelling}) {
    SCOPED_TRACE(out);
    expect_failure(run({"--box", "3", in, out}), 2, {out, "input"}, Files{"in.png"});
    EXPECT_TRUE(read_file(in) == original) << "input file modified";
  }
}

// --max-pixels and --max-file-size: refused before decoding, the file and the limit named,
// exit status 1, no output; their own bad values are usage errors.
TEST_F(Cli, InputLimitsRefuseLargeImagesAndFiles) {
  const std::string out = out_ / "o.png";
  const std::string size = std::to_string(fs::file_size(kCoffee));
  expect_failure(run({"--box", "3", "--max-pixels", "239999", kCoffee, out}), 1,
                 {kCoffee, "600x400", "239999 pixels", "--max-pixels"}, Files{});
  expect_failure(run({"--box", "3", "--max-file-size", "1K", kCoffee, out}), 1,
                 {kCoffee, size + " bytes", "limit of 1024 bytes", "--max-file-size"}, Files{});
  EXPECT_EQ(
      run({"--box", "3", "--max-pixels", "240000", "--max-file-size", size, kCoffee, out}).status,
      0);
  for (const auto& [option, value] :
       std::vector<std::pair<std::string, std::string>>{{"--max-pixels", "0"},
                                                        {"--max-pixels", "1e6"},
                                                        {"--max-pixels", "1099511627777"},
                                                        {"--max-file-size", "2G"},
                                                        {"--max-file-size", "0"},
                                                        {"--max-file-size", "12Q"}}) {
    SCOPED_TRACE(option + " " + value);
    expect_failure(run({"--box", "3", option, value, kCoffee, out_ / "x.png"}), 2, {option, value},
                   Files{"o.png"});
  }
}

// An output is created as any program creates a file, mode 0666 less the umask (it was 0644
// under every umask, readable by all under umask 077), and an output replaced keeps its mode, as
// cp(1) keeps it (a 0600 output became 0644).
TEST_F(Cli, AnOutputTakesTheUmaskAndAReplacedOutputKeepsItsMode) {
  const fs::path out = out_ / "o.png";
  {
    const ScopedUmask mask(077);
    ASSERT_EQ(run({"--box", "3", kCoffee, out}).status, 0);
    EXPECT_EQ(mode_of(out), 0600u);
  }
  const std::string blurred = read_file(out);
  const ScopedUmask mask(022);
  ASSERT_EQ(run({"--box", "3", kCoffee, out_ / "p.png"}).status, 0);
  EXPECT_EQ(mode_of(out_ / "p.png"), 0644u);
  for (const mode_t own : {mode_t{0600}, mode_t{0640}, mode_t{0666}}) {
    SCOPED_TRACE(own);
    write_file(out, "stale");
    fs::permissions(out, fs::perms(own));
    const Result r = run({"--box", "3", kCoffee, out});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(mode_of(out), own);
    EXPECT_TRUE(read_file(out) == blurred) << "not replaced";
  }
  EXPECT_EQ(listing(out_), (Files{"o.png", "p.png"}));
}

// Single mode replaces an output that exists when it starts, as cp(1) does; one that appears
// while the image is made (here while blurtool waits for its input, a named pipe) is another
// program's: it is left as it is, whole, and the run fails naming it (it was replaced). --force
// replaces it.
TEST_F(Cli, AnOutputThatAppearsWhileTheImageIsMadeIsNotReplaced) {
  const fs::path fifo = in_ / "pipe.png", out = out_ / "o.png";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  for (const bool force : {false, true}) {
    SCOPED_TRACE(force ? "--force" : "no --force");
    fs::remove(out);
    bool fed = false;
    std::thread feeder([&] {
      fed = feed_pipe_once_read(fifo, read_file(kCoffee), [&] { write_file(out, "theirs"); });
    });
    std::vector<std::string> args = {"--box", "2", fifo.string(), out.string()};
    if (force) args.insert(args.begin(), "--force");
    const Result r = run(args);
    feeder.join();
    ASSERT_TRUE(fed) << r.err;
    EXPECT_EQ(listing(out_), Files{"o.png"}) << "a temporary file was left";
    if (force) {
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(max_diff(load_image(out), expected_box(load_image(kCoffee), 2, EdgeMode::clamp)),
                0);
    } else {
      EXPECT_EQ(r.status, 1) << r.err;
      EXPECT_NE(r.err.find(out.string() + ": appeared while the image was made; left as it is"),
                std::string::npos)
          << r.err;
      EXPECT_TRUE(read_file(out) == "theirs") << "replaced";
    }
  }
}

// Single mode leaves a write-protected output as it is (exit 1, naming it, before any work) and
// replaces it with --force, keeping its mode, as cp(1) and cp -f do; a symbolic link at the
// output is replaced whatever its target. Permissions bind a user who is not root: where the
// test runs as root, blurtool runs as nobody (Spawn::unprivileged_id), over a file nobody may
// not write in a folder anyone may write.
TEST_F(Cli, AWriteProtectedOutputIsKeptUnlessForced) {
  const bool root = ::geteuid() == 0;
  const fs::path in = in_ / "coffee.png", out = out_ / "out.png", link = out_ / "link.png";
  fs::copy_file(kCoffee, in);  // where an unprivileged child can read it
  write_file(out, "theirs");
  fs::create_symlink(out, link);
  ASSERT_EQ(::chmod(out.c_str(), root ? 0644 : 0444), 0);  // root's 0644: nobody may not write
  fs::permissions(root_, fs::perms::all);                  // the child's HOME and caches go here
  fs::permissions(out_, fs::perms::all);
  Spawn as_user;
  as_user.unprivileged_id = 65534;  // nobody, where the tests run as root
  const auto blur = [&](const std::vector<std::string>& extra, const fs::path& to) {
    std::vector<std::string> args = {"--box", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {in.string(), to.string()});
    return run_blurtool(args, root_, root_, as_user);
  };
  Result r = blur({}, out);
  if (unprivileged_run_unavailable(r)) GTEST_SKIP() << "cannot run blurtool as uid 65534 here";
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "blurtool: " + out.string() +
                       ": is write-protected; not replaced (--force replaces it)\n");
  EXPECT_EQ(read_file(out), "theirs");
  r = blur({}, link);  // the link is replaced, its target not written
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(read_file(out), "theirs");
  r = blur({"--force"}, out);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(load_image(out).width, load_image(kCoffee).width);
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            root ? fs::perms(0644) : fs::perms(0444));
}

// The temporary file of a run that was killed outright (SIGKILL, a power loss) is removed by the
// next run over the same output once it is an hour old, with a note; a younger one (a run may be
// writing it), one named for another output and a hidden file not named as blurtool's stay.
TEST_F(Cli, LeftOverTemporaryFilesOfTheOutputAreRemovedWhenAnHourOld) {
  const fs::path out = out_ / "o.png";
  write_aged_files(out_, {{".o.png.blurtool-AbC123", std::chrono::hours(2)},
                          {".o.png.blurtool-XyZ789", std::chrono::minutes(1)},
                          {".other.png.blurtool-QQQQQQ", std::chrono::hours(2)},
                          {".o.png.draft1", std::chrono::hours(2)}});
  const Result r = run({"--box", "3", kCoffee, out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(listing(out_), (Files{"o.png", ".o.png.blurtool-XyZ789", ".other.png.blurtool-QQQQQQ",
                                  ".o.png.draft1"}));
  EXPECT_EQ(r.err, "blurtool: note: removed 1 left-over temporary file of '" + out.string() +
                       "' (older than an hour)\n");
  // Nothing left to remove: no note.
  EXPECT_EQ(run({"--box", "3", kCoffee, out}).err, "");
}

}  // namespace
}  // namespace blurtool
