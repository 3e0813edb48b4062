// Helpers shared by the end-to-end tests of the blurtool executable (tests/cli/): running the
// real binary (fork + execve, no shell, so paths with spaces need no quoting) with its standard
// streams redirected to files, seeded random images of any channel count, and what blurtool
// writes for them (the CPU references through the working space). Only the cli test executable
// defines BLURTOOL_BINARY.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "filters/box/box_reference.h"
#include "filters/gauss/gauss_reference.h"
#include "filters/working_space.h"
#include "image/image_io.h"
#include "tests/support/test_support.h"

extern char** environ;

namespace blurtool {

/// What a run of the binary gave: its exit status (128 + signal if a signal ended it) and what
/// it wrote to stdout and stderr.
struct Result {
  int status = -1;
  std::string out, err;
};

/// A `w` x `h` image of `channels` (1..4) seeded random bytes.
inline Image random_image(int w, int h, int channels, unsigned seed) {
  Image img{w, h, channels, PixelVector<std::uint8_t>(static_cast<size_t>(w) * h * channels, 0)};
  std::mt19937 rng(seed);
  for (auto& p : img.pixels) p = static_cast<std::uint8_t>(rng() & 0xFF);
  return img;
}

/// Largest |a - b| over all bytes; 256 when the shapes differ.
inline int max_diff(const Image& a, const Image& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) return 256;
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i)
    worst = std::max(worst, std::abs(int(a.pixels[i]) - int(b.pixels[i])));
  return worst;
}

/// What blurtool writes by default for 8-bit `input` (1-4 channels) blurred by `blur16` (a CPU
/// reference on RGBA16) or `blur8` (the same on 8 bits): an image with transparency is blurred
/// in premultiplied form at 16 bits and rounded to 8 (filters/working_space.h), any other as
/// stored at 8 bits.
template <typename Blur16, typename Blur8>
Image expected_blur(const Image& input, Blur16 blur16, Blur8 blur8) {
  bool transparent = false;
  if (input.channels == 2 || input.channels == 4)
    for (size_t i = input.channels - 1; i < input.pixels.size(); i += input.channels)
      transparent = transparent || input.pixels[i] < 255;
  if (!transparent) return blur8(input);
  const WorkingSpace space{false, true, true};
  return narrow(
      from_rgba(from_working_space(blur16(to_working_space(widen(to_rgba(input)), space)), space),
                input.channels));
}

/// expected_blur for a box filter of `radius` pixels.
inline Image expected_box(const Image& input, int radius, EdgeMode edge) {
  return expected_blur(
      input, [&](const Image16& i) { return box_blur_reference(i, radius, edge); },
      [&](const Image& i) { return box_blur_reference(i, radius, edge); });
}

/// expected_blur for a Gaussian of `sigma` and `radius` pixels.
inline Image expected_gauss(const Image& input, double sigma, int radius, EdgeMode edge) {
  return expected_blur(
      input, [&](const Image16& i) { return gauss_blur_reference(i, sigma, radius, edge); },
      [&](const Image& i) { return gauss_blur_reference(i, sigma, radius, edge); });
}

/// How run_blurtool connects the child: standard input from `stdin_path` (default /dev/null),
/// standard output to `stdout_path` (default: a file in `scratch` read into Result::out),
/// BLURTOOL_DEVICE removed from the environment, then set to `env_device` if that is not null.
struct Spawn {
  std::filesystem::path stdin_path;
  std::filesystem::path stdout_path;
  const char* env_device = nullptr;
  int ignored_signal = 0;  ///< a signal the child starts with ignored (SIG_IGN, as under nohup)
  /// Called with the child's pid while it runs, before it is waited for (it must not reap it).
  std::function<void(pid_t)> while_running;
  /// Where the tests run as root: the user and group id the child runs as (0: root), so that
  /// permissions apply to it. Its HOME, XDG_CACHE_HOME and BLURTOOL_CACHE_DIR are then under
  /// `scratch`, which must let that user in. Its leak check is off (ASAN_OPTIONS
  /// detect_leaks=0, in the sanitizer build): with no compile cache of its own, PoCL's LLVM
  /// compiles afresh and leaves allocations that LeakSanitizer reports at exit. A child that
  /// cannot switch (a user namespace without that id) exits with status 125.
  uid_t unprivileged_id = 0;
  /// Seconds after which a child still running is killed (SIGKILL; status 128 + 9), for a test
  /// whose failure could be a hang; 0: waited for however long it takes.
  int timeout_s = 0;
};

/// Runs the blurtool binary with `args` in directory `cwd`, waits for it, and returns its
/// status and output; stderr (and stdout, unless redirected) go through files in `scratch`,
/// removed afterwards.
inline Result run_blurtool(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                           const std::filesystem::path& scratch, const Spawn& spawn = {}) {
  std::vector<std::string> argv_s = {BLURTOOL_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s;
  const bool drop = spawn.unprivileged_id != 0 && ::geteuid() == 0;
  std::vector<std::string> own_env;
  if (drop) {
    for (const char* name : {"HOME", "XDG_CACHE_HOME", "BLURTOOL_CACHE_DIR"})
      own_env.push_back(std::string(name) + "=" + (scratch / ".home").string());
    const char* asan = std::getenv("ASAN_OPTIONS");
    own_env.push_back(std::string("ASAN_OPTIONS=") +
                      (asan && *asan ? asan + std::string(":") : "") + "detect_leaks=0");
  }
  for (char** e = environ; *e; ++e) {
    bool replaced = std::strncmp(*e, "BLURTOOL_DEVICE=", 16) == 0;
    for (const std::string& v : own_env)
      replaced = replaced || std::strncmp(*e, v.c_str(), v.find('=') + 1) == 0;
    if (!replaced) env_s.push_back(*e);
  }
  env_s.insert(env_s.end(), own_env.begin(), own_env.end());
  if (spawn.env_device) env_s.push_back(std::string("BLURTOOL_DEVICE=") + spawn.env_device);
  const uid_t id = spawn.unprivileged_id;
  std::vector<char*> argv, envp;
  for (auto& s : argv_s) argv.push_back(s.data());
  for (auto& s : env_s) envp.push_back(s.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const std::string in_path = spawn.stdin_path.empty() ? "/dev/null" : spawn.stdin_path.string();
  const std::string own_out = (scratch / "stdout.txt").string();
  const std::string out_path = spawn.stdout_path.empty() ? own_out : spawn.stdout_path.string();
  const std::string err_path = (scratch / "stderr.txt").string();
  const std::string dir = cwd.string();

  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until execve
    const int i = ::open(in_path.c_str(), O_RDONLY);
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (i < 0 || o < 0 || e < 0 || ::dup2(i, 0) < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 ||
        ::chdir(dir.c_str()) != 0)
      ::_exit(126);
    if (spawn.ignored_signal) ::signal(spawn.ignored_signal, SIG_IGN);  // kept across execve
    if (drop && (::setgroups(0, nullptr) != 0 || ::setgid(id) != 0 || ::setuid(id) != 0))
      ::_exit(125);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  Result r;
  if (pid < 0) return r;
  if (spawn.while_running) spawn.while_running(pid);
  int status = 0;
  if (spawn.timeout_s > 0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(spawn.timeout_s);
    for (pid_t done = 0; done == 0;) {
      done = ::waitpid(pid, &status, WNOHANG);
      if (done < 0 && errno == EINTR) done = 0;
      if (done == 0 && std::chrono::steady_clock::now() > deadline) ::kill(pid, SIGKILL);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  } else {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (spawn.stdout_path.empty()) r.out = read_file(own_out);
  r.err = read_file(err_path);
  std::error_code ec;
  std::filesystem::remove(own_out, ec);
  std::filesystem::remove(err_path, ec);
  return r;
}

/// Whether `r`, a run as an unprivileged user (Spawn::unprivileged_id), could not start: exit
/// 125 (the child could not become that user, as in a user namespace without it), or no OpenCL
/// platform was found (a driver registered where only root reads it, as a bundled GPU driver
/// under root's home is). The tests that need such a run are skipped there.
inline bool unprivileged_run_unavailable(const Result& r) {
  return r.status == 125 || r.err.find("no OpenCL platform found") != std::string::npos;
}

/// The process's umask for one scope, restored when it ends; a blurtool run meanwhile inherits it.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : saved_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(saved_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t saved_;
};

/// The permission bits of `path` (its own, not a link's target's).
inline mode_t mode_of(const std::filesystem::path& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

/// Feeds named pipe `fifo` to the blurtool that reads it as an input: waits (up to a minute) for
/// a reader to open it, calls `meanwhile` (what happens while blurtool waits for its input, its
/// outputs planned), then writes `bytes` and closes the pipe. Returns false, having written
/// nothing, where no reader came. Run it in a thread beside run_blurtool.
inline bool feed_pipe_once_read(const std::filesystem::path& fifo, const std::string& bytes,
                                const std::function<void()>& meanwhile) {
  int fd = -1;
  for (int waited_ms = 0; fd < 0 && waited_ms < 60000; waited_ms += 5) {
    fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO: no reader yet
    if (fd < 0 && errno != ENXIO) return false;
    if (fd < 0) ::usleep(5000);
  }
  if (fd < 0) return false;
  ::fcntl(fd, F_SETFL, 0);  // blocking writes from here
  meanwhile();
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return true;
}

/// A Spawn::while_running that kills the child (SIGKILL) if it still runs after `limit`, so that
/// a run that hangs fails its test rather than holding it.
inline std::function<void(pid_t)> kill_after(std::chrono::milliseconds limit) {
  return [limit](pid_t pid) {
    for (auto waited = std::chrono::milliseconds(0); waited < limit;
         waited += std::chrono::milliseconds(10)) {
      siginfo_t info = {};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
          info.si_pid == pid)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
  };
}

/// Writes "partial" into each file of `files` (names in `dir`), last modified its age ago: the
/// temporary files a killed run left.
inline void write_aged_files(
    const std::filesystem::path& dir,
    const std::vector<std::pair<std::string, std::chrono::minutes>>& files) {
  const auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& [name, age] : files) {
    write_file(dir / name, "partial");
    std::filesystem::last_write_time(dir / name, now - age);
  }
}

/// Fixture of end-to-end tests that all start with one argument (a subcommand such as `bench` or
/// `probe`, or an operation such as `--box`): a fresh
/// scratch folder per test (root_, removed afterwards) and run(), which runs `blurtool
/// SUBCOMMAND ARGS...` in it.
class SubcommandCli : public ::testing::Test {
 protected:
  explicit SubcommandCli(std::string subcommand) : subcommand_(std::move(subcommand)) {}
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("blurtool " + subcommand_ + " " + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  Result run(const std::vector<std::string>& args) {
    std::vector<std::string> all = {subcommand_};
    all.insert(all.end(), args.begin(), args.end());
    return run_blurtool(all, root_, root_);
  }
  std::filesystem::path root_;

 private:
  std::string subcommand_;
};

}  // namespace blurtool
