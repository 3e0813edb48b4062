// The atomic file writes of util/atomic_file.h as the outputs of a run rely on them: a new file's
// mode follows the umask and a replaced one keeps its own, a rename that must not replace leaves
// a file that appeared in its place as it was (with its bytes), whichever way the file system
// allows it, and the temporary files a killed run left beside its outputs are removed when they
// are old and named for an output, and only then. Fsync itself cannot be observed from a test:
// these check that the writes stay correct with it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "tests/support/test_support.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace blurtool {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ =
        fs::temp_directory_path() / ("blurtool atomic " + name + " " + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    umask_ = ::umask(022);
  }
  void TearDown() override {
    ::umask(umask_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::set<std::string> listing() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename());
    return names;
  }
  fs::path dir_;
  mode_t umask_ = 0;
};

mode_t mode_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

Bytes bytes_of(const std::string& text) {
  return Bytes(text.begin(), text.end());
}

// Sets the modification time of `path` to `age` ago.
void age(const std::string& path, std::chrono::seconds age) {
  const timespec now = {::time(nullptr) - static_cast<time_t>(age.count()), 0};
  const timespec times[2] = {now, now};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

TEST_F(AtomicFile, ANewFileTakesTheUmaskAndAReplacedFileKeepsItsMode) {
  for (const mode_t mask : {mode_t{077}, mode_t{022}, mode_t{027}, mode_t{0}}) {
    SCOPED_TRACE(mask);
    ::umask(mask);
    const std::string file = path("new " + std::to_string(mask));
    EXPECT_TRUE(write_file_atomic(file, bytes_of("new")));
    EXPECT_EQ(mode_of(file), 0666 & ~mask);
    EXPECT_EQ(read_file(file), "new");
  }
  // Replaced, as cp(1) replaces: the file's own bits, whatever the umask.
  for (const mode_t mask : {mode_t{022}, mode_t{077}}) {
    ::umask(mask);
    for (const mode_t own :
         {mode_t{0600}, mode_t{0640}, mode_t{0755}, mode_t{0666}, mode_t{0444}}) {
      SCOPED_TRACE(std::to_string(mask) + " " + std::to_string(own));
      const std::string file = path("old");
      write_file(file, "old");
      ASSERT_EQ(::chmod(file.c_str(), own), 0);
      EXPECT_TRUE(write_file_atomic(file, bytes_of("replaced")));
      EXPECT_EQ(mode_of(file), own);
      EXPECT_EQ(read_file(file), "replaced");
    }
  }
  EXPECT_EQ(listing().size(), 5u) << "a temporary file was left";
}

// The rename that must not replace, both ways: renameat2(RENAME_NOREPLACE) and the link() +
// unlink() that stands in where the kernel or file system lacks it. A target that appeared
// between the caller's plan and the rename (a regular file, a dangling link) survives whole.
TEST_F(AtomicFile, ARenameThatMustNotReplaceLeavesATargetThatAppeared) {
  using Rename = int (*)(const std::string&, const std::string&);
  for (const Rename rename : {Rename{rename_no_replace}, Rename{link_no_replace}}) {
    SCOPED_TRACE(rename == link_no_replace ? "link" : "renameat2");
    const std::string from = path(".out.png.AbC123"), to = path("out.png");
    write_file(from, "ours");
    write_file(to, "theirs");  // appeared after the plan, before the rename
    EXPECT_EQ(rename(from, to), EEXIST);
    EXPECT_EQ(read_file(to), "theirs");
    EXPECT_EQ(read_file(from), "ours");  // still the caller's, to remove

    fs::remove(to);
    ASSERT_EQ(::symlink("nowhere", to.c_str()), 0);
    EXPECT_EQ(rename(from, to), EEXIST);
    EXPECT_TRUE(fs::is_symlink(to));
    EXPECT_EQ(fs::read_symlink(to), "nowhere");

    fs::remove(to);
    EXPECT_EQ(rename(from, to), 0);
    EXPECT_EQ(read_file(to), "ours");
    EXPECT_FALSE(fs::exists(from));
    EXPECT_EQ(listing(), std::set<std::string>{"out.png"});
    fs::remove(to);
  }
}

TEST_F(AtomicFile, KeepWritesNothingWhereTheFileExistsAndLeavesNoTemporaryFile) {
  const std::string file = path("out.png");
  // Planned as new; another process made it before the write.
  write_file(file, "theirs");
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  EXPECT_FALSE(write_file_atomic(file, bytes_of("ours"), IfExists::keep));
  EXPECT_FALSE(write_file(file, bytes_of("ours"), IfExists::keep));
  EXPECT_EQ(read_file(file), "theirs");
  EXPECT_EQ(mode_of(file), 0600u);
  EXPECT_EQ(listing(), std::set<std::string>{"out.png"});
  // Where nothing is in the way, keep writes as replace does.
  const std::string other = path("other.png");
  EXPECT_TRUE(write_file_atomic(other, bytes_of("ours"), IfExists::keep));
  EXPECT_EQ(read_file(other), "ours");
  EXPECT_EQ(mode_of(other), 0644u);
  EXPECT_TRUE(write_file_atomic(file, bytes_of("replaced")));  // replace still replaces
  EXPECT_EQ(read_file(file), "replaced");
  EXPECT_EQ(listing(), (std::set<std::string>{"out.png", "other.png"}));
}

// An output made in pieces (strips) appears whole at commit or not at all.
TEST_F(AtomicFile, AnOutputWrittenInPiecesAppearsWholeAtCommitOrNotAtAll) {
  const std::string file = path("out.png");
  const Bytes first = bytes_of("first strip, "), second = bytes_of("second strip");
  {
    OutputFile out(file, OutputFile::Special::refuse);
    EXPECT_FALSE(out.taken());
    out.write(first.data(), first.size());
    EXPECT_EQ(listing().count("out.png"), 0u);  // only the temporary file so far
    EXPECT_EQ(listing().size(), 1u);
    out.write(second.data(), second.size());
    EXPECT_TRUE(out.commit());
    EXPECT_THROW(out.write(first.data(), first.size()), Error);
  }
  EXPECT_EQ(read_file(file), "first strip, second strip");
  EXPECT_EQ(listing(), std::set<std::string>{"out.png"});
  {  // abandoned halfway (the image failed): the old output stays, the temporary file goes
    OutputFile out(file, OutputFile::Special::refuse);
    out.write(second.data(), second.size());
  }
  EXPECT_EQ(read_file(file), "first strip, second strip");
  EXPECT_EQ(listing(), std::set<std::string>{"out.png"});
  {  // kept: nothing created
    OutputFile out(file, OutputFile::Special::refuse, IfExists::keep);
    EXPECT_TRUE(out.taken());
    EXPECT_FALSE(out.commit());
    EXPECT_THROW(out.write(first.data(), first.size()), Error);
  }
  {  // appeared meanwhile: left as it is, the temporary file removed
    const std::string other = path("other.png");
    OutputFile out(other, OutputFile::Special::refuse, IfExists::keep);
    EXPECT_FALSE(out.taken());
    out.write(first.data(), first.size());
    write_file(other, "theirs");
    EXPECT_FALSE(out.commit());
    EXPECT_EQ(read_file(other), "theirs");
  }
  EXPECT_EQ(listing(), (std::set<std::string>{"out.png", "other.png"}));
}

// A TIFF goes back to its header once its strips are written: bytes written at an offset land
// there in the temporary file (a gap before them reads as zeros) and appear with the rest at
// commit; a pipe cannot take them, and says so before anything is written.
TEST_F(AtomicFile, AnOutputFileTakesBytesAtOffsetsWhereItIsAFile) {
  const std::string file = path("out.tif");
  {
    OutputFile out(file, OutputFile::Special::write_into);
    ASSERT_TRUE(out.seekable());
    const Bytes header = {'I', 'I', '*', 0, '.', '.', '.', '.'};
    const Bytes strip = bytes_of("strip"), pointer = bytes_of("1234"), tail = bytes_of("dir");
    out.write_at(0, header.data(), header.size());
    out.write_at(header.size(), strip.data(), strip.size());
    out.write_at(header.size() + strip.size() + 2, tail.data(), tail.size());  // a gap of 2
    out.write_at(4, pointer.data(), pointer.size());
    EXPECT_EQ(listing().count("out.tif"), 0u);
    EXPECT_TRUE(out.commit());
    EXPECT_FALSE(out.seekable());
    EXPECT_THROW(out.write_at(0, tail.data(), tail.size()), Error);
  }
  EXPECT_EQ(read_file(file), std::string("II*\0"
                                         "1234"
                                         "strip\0\0dir",
                                         18));
  // A named pipe written into: not seekable, before it is opened too.
  const std::string fifo = path("pipe.tif");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(unseekable_reason(fifo), "a pipe");
  EXPECT_EQ(unseekable_reason(path("new.tif")), "");  // a temporary file will be written
  EXPECT_EQ(unseekable_reason(file), "");
  EXPECT_EQ(unseekable_reason(std::string("/dev/null")),
            "a character device (a terminal, /dev/null)");
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // so that opening it to write
  ASSERT_GE(reader, 0);                                            // does not wait
  {
    OutputFile out(fifo, OutputFile::Special::write_into);
    EXPECT_FALSE(out.seekable());
    const Bytes b = bytes_of("x");
    try {
      out.write_at(0, b.data(), b.size());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), fifo + ": cannot be written at an offset (a pipe)");
    }
  }
  ::close(reader);
  // Descriptors: a pipe, a file opened to append (where pwrite would append), a file.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EXPECT_EQ(unseekable_reason(fds[1]), "a pipe");
  ::close(fds[0]);
  ::close(fds[1]);
  const int appending = ::open(file.c_str(), O_WRONLY | O_APPEND);
  EXPECT_EQ(unseekable_reason(appending), "opened for appending");
  ::close(appending);
  const int plain = ::open(file.c_str(), O_WRONLY);
  EXPECT_EQ(unseekable_reason(plain), "");
  ::close(plain);
}

TEST_F(AtomicFile, OnlyOldTemporaryFilesNamedForAnOutputAreRemoved) {
  using namespace std::chrono_literals;
  const std::vector<std::string> old = {".out.png.blurtool-AbC123", ".out.png.blurtool-zz9ZZ0",
                                        ".b.jpg.blurtool-QQQQQQ"};
  const std::vector<std::string> kept = {
      ".out.png.blurtool-XyZ789",    // a minute old: a run may be writing it
      ".out.png.blurtool-Ab-123",    // not six letters or digits
      ".out.png.blurtool-AbC1234",   // seven
      ".out.png.blurtool-",          // none
      "out.png.blurtool-AbC123",     // not hidden
      ".other.png.blurtool-AAAAAA",  // no output of this run
      ".out.png.blurtool-link00",    // a link, not a file
      ".out.png.AbC123",             // not blurtool's: rsync names its temporary files so
      ".out.png.notes1",             // nor a user's own hidden file
  };
  for (const std::string& name : old) write_file(path(name), "partial");
  for (const std::string& name : kept)
    if (name != ".out.png.blurtool-link00") write_file(path(name), "partial");
  ASSERT_EQ(::symlink(".out.png.blurtool-AbC123", path(".out.png.blurtool-link00").c_str()), 0);
  fs::create_directory(path(".out.png.blurtool-DIR000"));
  for (const std::string& name : old) age(path(name), 2h);
  for (const std::string& name : kept)
    age(path(name), name == ".out.png.blurtool-XyZ789" ? 1min : 2h);
  age(path(".out.png.blurtool-DIR000"), 2h);
  write_file(path("b.jpg"), "an output");

  EXPECT_EQ(remove_stale_temp_files({path("out.png"), path("b.jpg"), path("missing/c.png"), "-"}),
            old.size());
  std::set<std::string> left(kept.begin(), kept.end());
  left.insert({".out.png.blurtool-DIR000", "b.jpg"});
  EXPECT_EQ(listing(), left);
  EXPECT_EQ(remove_stale_temp_files({path("out.png")}), 0u);
  // With a shorter age, the minute-old one goes too.
  EXPECT_EQ(remove_stale_temp_files({path("out.png")}, 30s), 1u);
  EXPECT_FALSE(fs::exists(path(".out.png.blurtool-XyZ789")));
}

// Another user's file of the same name stays: only this process's user's are taken. Run as
// root, which can give the file away (not otherwise).
TEST_F(AtomicFile, AnotherUsersTemporaryFileStays) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a file another user's";
  const std::string name = ".out.png.blurtool-AbC123";
  write_file(path(name), "theirs");
  ASSERT_EQ(::chown(path(name).c_str(), 65534, 65534), 0);
  age(path(name), std::chrono::hours(2));
  EXPECT_EQ(remove_stale_temp_files({path("out.png")}), 0u);
  EXPECT_TRUE(fs::exists(path(name)));
}

// A write-protected output is left as it is by IfExists::replace_writable (single mode's
// default: cp(1) without -f leaves it) and replaced by IfExists::replace (--force). Permissions
// bind a user who is not root, so where the test runs as root a child process drops to nobody
// (uid 65534) over a file nobody owns and may not write, in a folder anyone may write.
TEST_F(AtomicFile, AWriteProtectedFileIsKeptUnlessReplacedAnyway) {
  const std::string out = path("ro.png");
  write_file(out, "theirs");
  ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chown(out.c_str(), 65534, 65534), 0);
  }
  ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // exit codes only: no gtest assertion in the child
    if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(10);
    if (::access(dir_.c_str(), W_OK | X_OK) != 0) ::_exit(11);  // a TMPDIR nobody cannot reach
    int code = 0;
    try {
      write_file_atomic(out, bytes_of("ours"), IfExists::replace_writable);
      code = 1;  // replaced
    } catch (const Error& e) {
      if (std::string(e.what()) != out + ": is write-protected; not replaced (--force replaces it)")
        code = 2;
    }
    if (code == 0 && read_file(out) != "theirs") code = 3;
    try {
      if (code == 0 && !write_file_atomic(out, bytes_of("forced"), IfExists::replace)) code = 4;
    } catch (const Error&) {
      code = 5;
    }
    if (code == 0 && read_file(out) != "forced") code = 6;
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 11) GTEST_SKIP() << "nobody cannot reach " << dir_;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: replaced, 2: another error, 3: changed, 4-6: --force "
                                       "did not replace it";
  EXPECT_EQ(mode_of(out), 0444u);  // a replaced file keeps its mode
}

// A name up to 255 bytes: its temporary file holds the first 200 (NAME_MAX is 255), which is
// what the removal looks for.
TEST_F(AtomicFile, ALongOutputNamesItsTemporaryFilesByItsFirst200Bytes) {
  const std::string name(250, 'n');
  const std::string stale = "." + name.substr(0, 200) + ".blurtool-AbC123";
  write_file(path(stale), "partial");
  age(path(stale), std::chrono::hours(2));
  EXPECT_EQ(remove_stale_temp_files({path(name)}), 1u);
  EXPECT_TRUE(write_file_atomic(path(name), bytes_of("whole")));
  EXPECT_EQ(listing(), std::set<std::string>{name});
}

}  // namespace
}  // namespace blurtool
