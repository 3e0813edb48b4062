// Atomic file writes and the temporary-file registry (see atomic_file.h).
//
// Output is written to a temporary file in the destination's directory, synced, and renamed over
// the destination (or beside it, never over it, where the caller planned a new file); the folder
// is synced after the rename. Each temporary file in flight is registered in a fixed, lock-free
// table that the SIGINT/SIGTERM/SIGHUP handlers walk to unlink them (the "temporary-file
// registry" below); those of a killed run are removed by a later run over the same outputs.
#include "util/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "util/error.h"

namespace blurtool {

namespace {

// --- Temporary-file registry ----------------------------------------------------------------
//
// Each write_file_atomic in flight owns one slot holding its temporary file's path. A slot's
// state word is the slot's generation (bits 2 and up, bumped on every release, so that a stale
// owner can never free a slot someone else has since claimed) and one of four states:
//   free -> claimed (by an owner: mkostemp is writing the path) -> active (the file exists)
//   active -> free (the owner renamed or unlinked the file)
//   active -> cleaning (a signal handler unlinks the file) -> free.
// Owners create the file with the cleanup signals blocked in their thread, so a handler never
// runs in a thread that holds a claimed slot; a handler in another thread waits (briefly) for a
// claimed slot to become active. When the handler is going to end the process (no handler of
// the program's own to chain to), it first sets g_terminating, and an owner checks it after
// claiming a slot and before creating its file: of the two sequentially consistent
// store-then-load pairs one side always sees the other's store, so either the owner creates no
// file or the sweep finds its slot claimed and waits to unlink the file. An owner that sees the
// flag, or whose file the sweep removed, waits for the end instead of failing. Everything a handler
// touches is a lock-free atomic or a char array, and it calls only unlink, nanosleep, sigaction,
// pthread_sigmask and raise (async-signal-safe).

constexpr int kTempSlots = 64;
constexpr std::size_t kTempPathBytes = 4096;  // PATH_MAX on Linux, the terminating NUL included
constexpr std::uint32_t kFree = 0, kClaimed = 1, kActive = 2, kCleaning = 3, kStateMask = 3,
                        kNextGeneration = 4;
constexpr int kCleanupSignals[] = {SIGHUP, SIGINT, SIGTERM};

struct TempSlot {
  std::atomic<std::uint32_t> state{kFree};
  char path[kTempPathBytes] = {};
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

TempSlot g_temp_slots[kTempSlots];
std::atomic<bool> g_terminating{false};  // a handler is about to end the process
struct sigaction g_previous_actions[std::size(kCleanupSignals)];  // chained to by the handler

std::uint32_t next_free(std::uint32_t state) {
  return (state & ~kStateMask) + kNextGeneration;
}

// Unlinks every registered temporary file; safe in a signal handler.
void unlink_temp_files() {
  for (TempSlot& slot : g_temp_slots) {
    std::uint32_t state = slot.state.load();  // seq_cst: after the store to g_terminating
    // A claimed slot becomes active or free within one mkostemp; wait up to 2 s for it.
    for (int wait = 0; (state & kStateMask) == kClaimed && wait < 20000; ++wait) {
      const timespec pause = {0, 100 * 1000};
      ::nanosleep(&pause, nullptr);
      state = slot.state.load(std::memory_order_acquire);
    }
    if ((state & kStateMask) != kActive) continue;
    const std::uint32_t cleaning = (state & ~kStateMask) | kCleaning;
    if (!slot.state.compare_exchange_strong(state, cleaning, std::memory_order_acq_rel)) continue;
    ::unlink(slot.path);
    slot.state.store(next_free(cleaning), std::memory_order_release);
  }
}

void on_cleanup_signal(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const struct sigaction* previous = nullptr;
  for (std::size_t i = 0; i < std::size(kCleanupSignals); ++i) {
    if (kCleanupSignals[i] == signal) previous = &g_previous_actions[i];
  }
  const bool chain_sigaction =
      previous && (previous->sa_flags & SA_SIGINFO) && previous->sa_sigaction;
  const bool chain_handler = previous && !(previous->sa_flags & SA_SIGINFO) &&
                             previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN;
  if (!chain_sigaction && !chain_handler) g_terminating.store(true);  // seq_cst
  unlink_temp_files();
  if (chain_sigaction) {
    previous->sa_sigaction(signal, info, context);
  } else if (chain_handler) {
    previous->sa_handler(signal);
  } else {
    // The default action, for the right exit status, at once: the signal is blocked while its
    // handler runs, and the other threads must not go on writing.
    struct sigaction default_action = {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    ::sigaction(signal, &default_action, nullptr);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signal);
    ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
    ::raise(signal);
  }
  errno = saved_errno;
}

// Called by an owner whose file a terminating handler may have removed: the process is ending.
void wait_if_terminating() {
  if (!g_terminating.load()) return;
  for (;;) ::pause();
}

// Blocks the cleanup signals in the calling thread for its lifetime.
class CleanupSignalsBlocked {
 public:
  CleanupSignalsBlocked() {
    sigset_t block;
    sigemptyset(&block);
    for (int signal : kCleanupSignals) sigaddset(&block, signal);
    ::pthread_sigmask(SIG_BLOCK, &block, &saved_);
  }
  ~CleanupSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  CleanupSignalsBlocked(const CleanupSignalsBlocked&) = delete;
  CleanupSignalsBlocked& operator=(const CleanupSignalsBlocked&) = delete;

 private:
  sigset_t saved_;
};

// The letters and digits of a temporary file's XXXXXX (mkostemp's).
constexpr char kTempLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr int kTempLetterCount = sizeof kTempLetters - 1;
constexpr std::size_t kTempSuffix = 6;  // the XXXXXX

// As mkostemp(path, O_CLOEXEC), but the file is created with `mode` (less the umask) rather than
// 0600: the trailing XXXXXX of `path` is replaced by letters and digits until a name is free.
// Returns the descriptor, or -1 with errno.
int create_unique(char* path, mode_t mode) {
  const std::size_t n = std::strlen(path);
  if (n < kTempSuffix || std::strcmp(path + n - kTempSuffix, "XXXXXX") != 0) {
    errno = EINVAL;
    return -1;
  }
  static std::atomic<std::uint64_t> counter{0};
  for (int attempt = 0; attempt < 1000; ++attempt) {
    timespec now = {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    // splitmix64 of the time, the process and a count: distinct names across threads and
    // processes, as mkostemp's are.
    std::uint64_t x = counter.fetch_add(1) + (static_cast<std::uint64_t>(::getpid()) << 32) +
                      static_cast<std::uint64_t>(now.tv_nsec) * 0x9E3779B97F4A7C15ULL +
                      static_cast<std::uint64_t>(now.tv_sec);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    for (std::size_t i = n - kTempSuffix; i < n; ++i, x /= kTempLetterCount)
      path[i] = kTempLetters[x % kTempLetterCount];
    const int fd = ::open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno: EEXIST
}

// A temporary file made by create_unique (close-on-exec: a child another thread starts does not
// keep it open) from a template ending in XXXXXX, registered for the signal handlers and
// unlinked by the destructor unless renamed into place.
class TempFile {
 public:
  TempFile(std::string name_template, mode_t mode) : path_(std::move(name_template)) {
    CleanupSignalsBlocked blocked;
    if (path_.size() < kTempPathBytes) slot_ = claim_slot();
    if (!slot_) {  // no free slot, or a path too long to register (open then fails anyway)
      fd_ = create_unique(path_.data(), mode);
      created_ = fd_ >= 0;
      return;
    }
    if (g_terminating.load()) {  // seq_cst: after the store that claimed the slot
      slot_->state.store(next_free(state_));
      wait_if_terminating();
    }
    std::memcpy(slot_->path, path_.c_str(), path_.size() + 1);
    fd_ = create_unique(slot_->path, mode);
    const int err = errno;
    created_ = fd_ >= 0;
    if (created_) {
      path_ = slot_->path;
      state_ = (state_ & ~kStateMask) | kActive;
      slot_->state.store(state_, std::memory_order_release);
    } else {
      slot_->state.store(next_free(state_), std::memory_order_release);
      slot_ = nullptr;
    }
    errno = err;  // for the caller's message
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (created_ && !renamed_) ::unlink(path_.c_str());
    unregister();  // after the unlink: a signal in between finds the file already gone
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  int close() {  // returns 0 or errno
    const int result = ::close(fd_);
    fd_ = -1;
    return result == 0 ? 0 : errno;
  }
  // Renames the file to `target`, over it where `replace`, else only where it does not exist;
  // returns 0 or errno (EEXIST: `target` exists, the file is still ours). The file is then no
  // longer ours to remove.
  int rename_to(const std::string& target, bool replace) {
    const int err = replace ? (::rename(path_.c_str(), target.c_str()) == 0 ? 0 : errno)
                            : rename_no_replace(path_, target);
    if (err != 0) {
      if (err != EEXIST) wait_if_terminating();  // the handler removed the file: the end
      return err;
    }
    renamed_ = true;
    unregister();
    return 0;
  }

 private:
  TempSlot* claim_slot() {
    for (TempSlot& slot : g_temp_slots) {
      std::uint32_t state = slot.state.load(std::memory_order_relaxed);
      if ((state & kStateMask) != kFree) continue;
      const std::uint32_t claimed = state | kClaimed;
      if (slot.state.compare_exchange_strong(state, claimed)) {  // seq_cst, see above
        state_ = claimed;
        return &slot;
      }
    }
    return nullptr;
  }
  void unregister() {
    if (!slot_) return;
    // Fails only if a signal handler took the slot to clean it; the handler frees it then.
    std::uint32_t expected = state_;
    slot_->state.compare_exchange_strong(expected, next_free(state_), std::memory_order_release);
    slot_ = nullptr;
  }

  std::string path_;
  int fd_ = -1;
  bool created_ = false;
  bool renamed_ = false;
  TempSlot* slot_ = nullptr;
  std::uint32_t state_ = 0;  // the slot's state word as this owner last set it
};

}  // namespace

namespace {

// Writes all of `bytes` to `fd`, resuming after short writes and EINTR; 0, or the errno.
int write_all(int fd, const std::uint8_t* bytes, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Why a file of `mode` cannot be written at any offset; "" where it can.
std::string unseekable_kind(mode_t mode) {
  if (S_ISREG(mode) || S_ISBLK(mode)) return "";
  return S_ISFIFO(mode)   ? "a pipe"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISCHR(mode)  ? "a character device (a terminal, /dev/null)"
                          : "a special file";
}

// The folder and the temporary files' name prefix of output `path`: ".NAME.blurtool-" (NAME its
// file name, at most 200 bytes: NAME_MAX is 255), which XXXXXX completes. The word marks the file
// as blurtool's: remove_stale_temp_files takes no other program's hidden files (rsync names its
// own ".NAME.XXXXXX").
std::pair<std::string, std::string> temp_prefix(const std::string& path) {
  const std::filesystem::path target(path);
  std::string dir = target.parent_path().string();
  if (dir.empty()) dir = ".";
  return {dir, "." + target.filename().string().substr(0, 200) + ".blurtool-"};
}

// fsync() that retries on EINTR; 0 or the errno. EINVAL (a file that cannot be synced, such as
// a folder on some file systems) is not a failure.
int sync_fd(int fd) {
  int result;
  do result = ::fsync(fd);
  while (result != 0 && errno == EINTR);
  return result == 0 || errno == EINVAL ? 0 : errno;
}

// Syncs folder `dir`, so that a rename in it is on disk; 0 or the errno. A folder that cannot be
// opened to read (write and search permission only) cannot be synced, and is not a failure.
int sync_folder(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  const int err = sync_fd(fd);
  ::close(fd);
  return err;
}

}  // namespace

int write_all_at(int fd, const std::uint8_t* data, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

std::string unseekable_reason(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return "not open";
  std::string why = unseekable_kind(st.st_mode);
  const int flags = ::fcntl(fd, F_GETFL);
  if (why.empty() && flags != -1 && (flags & O_APPEND)) why = "opened for appending";
  return why;
}

std::string unseekable_reason(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return "";
  return unseekable_kind(st.st_mode);
}

int link_no_replace(const std::string& from, const std::string& to) {
  if (::link(from.c_str(), to.c_str()) == 0) {
    // ENOENT: a signal handler removed `from` after the link; `to` is in place all the same.
    if (::unlink(from.c_str()) != 0 && errno != ENOENT) return errno;
    return 0;
  }
  const int err = errno;
  if (err != EPERM && err != ENOTSUP && err != EOPNOTSUPP && err != EMLINK) return err;
  // No hard links here (FAT, some network file systems): as near as rename() comes.
  struct stat st;
  if (::lstat(to.c_str(), &st) == 0) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

int rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  const int err = errno;
  if (err != EINVAL && err != ENOSYS) return err;
  return link_no_replace(from, to);
}

namespace {

// Whether `path` names a file to be written into rather than replaced: a character device or
// named pipe (/dev/null, a FIFO), or a path under /dev or /proc, through any links
// (/dev/stdout, /dev/fd/N, /proc/self/fd/N name whatever the descriptor is, a regular file
// too; renaming over them would replace the link itself). `special_name` says which of the
// latter it is; `st` is the stat of `path`.
bool written_into(const std::string& path, const struct stat& st, bool* special_name) {
  *special_name = false;
  std::filesystem::path hop = path;  // the path, then each link's target in turn
  for (int links = 0; links < 40 && !*special_name; ++links) {
    const std::string normal = std::filesystem::absolute(hop).lexically_normal().string();
    *special_name = normal.rfind("/dev/", 0) == 0 || normal.rfind("/proc/", 0) == 0;
    std::error_code ec;
    if (!std::filesystem::is_symlink(hop, ec)) break;
    const std::filesystem::path target = std::filesystem::read_symlink(hop, ec);
    if (ec) break;
    hop = target.is_absolute() ? target : hop.parent_path() / target;
  }
  return *special_name || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode);
}

}  // namespace

struct OutputFile::State {
  std::string path;
  IfExists if_exists = IfExists::replace;
  SyncFolder sync = SyncFolder::now;
  bool taken = false;  // the path exists and is kept: nothing is written
  int direct = -1;     // the descriptor of a device, pipe or /dev path written into
  std::optional<TempFile> temp;
  bool keep_mode = false;  // a replaced regular file's permission bits, set on the temporary file
  mode_t mode = 0666;
  std::string dir;
  bool done = false;  // committed (or failed to): nothing more is written

  ~State() {
    if (direct >= 0) ::close(direct);
  }

  // The temporary file beside `path` (write_file_atomic's way).
  void open_temp() {
    install_cleanup_handlers();
    struct stat st;
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
      throw Error(path + ": is a device, named pipe or socket, not a file; refusing to replace it");
    if (exists && if_exists == IfExists::keep) {
      taken = true;
      return;
    }
    if (exists && if_exists == IfExists::replace_writable) refuse_write_protected(path);
    // A new file takes 0666 less the umask (and a folder's default ACL), which the kernel
    // applies at creation; a replaced file keeps its permission bits, set at commit once the
    // umask has narrowed them (created with them, the file is never readable by more than it
    // will be).
    keep_mode = exists && S_ISREG(st.st_mode);
    mode = keep_mode ? (st.st_mode & 0777) : 0666;
    auto [folder, prefix] = temp_prefix(path);
    dir = std::move(folder);
    // Hidden, unique name beside the target, so that rename() stays within one file system.
    temp.emplace(dir + "/" + prefix + "XXXXXX", mode);
    if (temp->fd() < 0) {
      const int err = errno;  // before any allocation can clobber it
      throw Error(path + ": cannot create a temporary file in '" + dir + "': " + errno_text(err));
    }
  }

  // write_file's way: into a device, pipe or /dev path that exists, else open_temp().
  void open_any() {
    struct stat st;
    bool special_name = false;
    if (::stat(path.c_str(), &st) != 0 || !written_into(path, st, &special_name))
      return open_temp();
    if (if_exists == IfExists::keep) {
      taken = true;
      return;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // no O_CREAT: it exists
    if (fd < 0) {
      const int err = errno;
      throw Error(path + ": cannot open: " + errno_text(err));
    }
    struct stat opened;
    if (::fstat(fd, &opened) != 0 || (S_ISREG(opened.st_mode) && !special_name)) {
      ::close(fd);  // it became a regular file after the stat(): replace it as any other
      return open_temp();
    }
    if (S_ISREG(opened.st_mode)) (void)::ftruncate(fd, 0);  // /dev/stdout onto a file, as cp does
    direct = fd;
  }
};

OutputFile::OutputFile(const std::string& path, Special special, IfExists if_exists,
                       SyncFolder sync)
    : state_(std::make_unique<State>()) {
  state_->path = path;
  state_->if_exists = if_exists;
  state_->sync = sync;
  if (special == Special::write_into)
    state_->open_any();
  else
    state_->open_temp();
}

OutputFile::~OutputFile() = default;

bool OutputFile::taken() const {
  return state_->taken;
}

void OutputFile::write(const std::uint8_t* data, std::size_t size) {
  State& s = *state_;
  if (s.taken || s.done) throw Error(s.path + ": written after it was finished");
  if (s.direct >= 0) {
    if (const int err = write_all(s.direct, data, size))
      throw Error(s.path + ": cannot write: " + errno_text(err));
    return;
  }
  if (const int err = write_all(s.temp->fd(), data, size))
    throw Error(s.path + ": cannot write '" + s.temp->path() + "': " + errno_text(err));
}

bool OutputFile::seekable() const {
  const State& s = *state_;
  if (s.taken || s.done) return false;
  return s.direct < 0 || unseekable_reason(s.direct).empty();
}

void OutputFile::write_at(std::uint64_t offset, const std::uint8_t* data, std::size_t size) {
  State& s = *state_;
  if (s.taken || s.done) throw Error(s.path + ": written after it was finished");
  if (!seekable())
    throw Error(s.path + ": cannot be written at an offset (" + unseekable_reason(s.direct) + ")");
  const int fd = s.direct >= 0 ? s.direct : s.temp->fd();
  if (const int err = write_all_at(fd, data, size, offset))
    throw Error(s.path + ": cannot write" +
                (s.direct >= 0 ? std::string() : " '" + s.temp->path() + "'") + ": " +
                errno_text(err));
}

bool OutputFile::commit() {
  State& s = *state_;
  if (s.taken) return false;
  if (s.done) throw Error(s.path + ": finished twice");
  s.done = true;
  if (s.direct >= 0) {
    const int fd = s.direct;
    s.direct = -1;
    if (::close(fd) != 0 && errno != EINTR) {
      const int err = errno;
      throw Error(s.path + ": cannot write: " + errno_text(err));
    }
    return true;
  }
  TempFile& temp = *s.temp;
  if (s.keep_mode && ::fchmod(temp.fd(), s.mode) != 0) {
    const int err = errno;
    throw Error(s.path + ": cannot set permissions of '" + temp.path() + "': " + errno_text(err));
  }
  // On disk before the rename makes it the output: after a crash the name holds the old file
  // or the whole new one, never a renamed file whose data had not been written yet.
  if (const int err = sync_fd(temp.fd()))
    throw Error(s.path + ": cannot write '" + temp.path() + "': " + errno_text(err));
  if (const int err = temp.close())
    throw Error(s.path + ": cannot write '" + temp.path() + "': " + errno_text(err));
  if (const int err = temp.rename_to(s.path, s.if_exists != IfExists::keep)) {
    if (err == EEXIST && s.if_exists == IfExists::keep) {  // it appeared meanwhile
      s.taken = true;
      return false;
    }
    throw Error(s.path + ": cannot rename the temporary file into place: " + errno_text(err));
  }
  // The rename itself on disk.
  if (s.sync == SyncFolder::now) {
    if (const int err = sync_folder(s.dir))
      throw Error(s.path + ": written, but its folder '" + s.dir +
                  "' cannot be synced: " + errno_text(err));
  }
  return true;
}

bool write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes,
                       IfExists if_exists, SyncFolder sync) {
  OutputFile file(path, OutputFile::Special::refuse, if_exists, sync);
  if (file.taken()) return false;
  file.write(bytes.data(), bytes.size());
  return file.commit();
}

void sync_folders_of(const std::vector<std::string>& outputs) {
  std::set<std::string> folders;
  for (const std::string& output : outputs) folders.insert(temp_prefix(output).first);
  for (const std::string& dir : folders)
    if (const int err = sync_folder(dir))
      throw Error("output folder '" + dir + "': cannot be synced to disk: " + errno_text(err));
}

bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes,
                IfExists if_exists) {
  OutputFile file(path, OutputFile::Special::write_into, if_exists);
  if (file.taken()) return false;
  file.write(bytes.data(), bytes.size());
  return file.commit();
}

void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (std::size_t i = 0; i < std::size(kCleanupSignals); ++i) {
      struct sigaction previous = {};
      if (::sigaction(kCleanupSignals[i], nullptr, &previous) != 0) continue;
      if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) continue;
      g_previous_actions[i] = previous;  // before the handler that reads it is installed
      struct sigaction action = {};
      action.sa_sigaction = on_cleanup_signal;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&action.sa_mask);
      for (int signal : kCleanupSignals) sigaddset(&action.sa_mask, signal);
      ::sigaction(kCleanupSignals[i], &action, nullptr);
    }
  });
}

void refuse_write_protected(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), W_OK) != 0 &&
      errno == EACCES)
    throw Error(path + ": is write-protected; not replaced (--force replaces it)");
}

std::size_t remove_stale_temp_files(const std::vector<std::string>& outputs,
                                    std::chrono::seconds min_age) {
  // The prefixes to look for, by folder: each folder is listed once, however many outputs.
  std::map<std::string, std::set<std::string>> prefixes;
  for (const std::string& output : outputs) {
    if (output.empty() || output == "-") continue;
    auto [dir, prefix] = temp_prefix(output);
    prefixes[dir].insert(std::move(prefix));
  }
  const auto now = std::chrono::system_clock::now();
  std::size_t removed = 0;
  for (const auto& [dir, names] : prefixes) {
    DIR* folder = ::opendir(dir.c_str());
    if (!folder) continue;
    while (const dirent* entry = ::readdir(folder)) {
      const std::string name = entry->d_name;
      if (name.size() <= kTempSuffix || name[0] != '.') continue;
      const std::string prefix = name.substr(0, name.size() - kTempSuffix);
      if (!names.count(prefix)) continue;
      if (name.find_first_not_of(kTempLetters, prefix.size()) != std::string::npos) continue;
      const std::string file = dir + "/" + name;
      struct stat st;
      if (::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
        continue;
      const auto modified = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
      if (now - modified < min_age) continue;
      if (::unlink(file.c_str()) == 0) ++removed;
    }
    ::closedir(folder);
  }
  return removed;
}

int in_flight_temp_files() {
  int count = 0;
  for (const TempSlot& slot : g_temp_slots) {
    if ((slot.state.load(std::memory_order_acquire) & kStateMask) != kFree) ++count;
  }
  return count;
}

}  // namespace blurtool
