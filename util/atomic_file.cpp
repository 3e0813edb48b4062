// Atomic file writes and the temporary-file registry (see atomic_file.h).
//
// Output is written to a temporary file in the destination's directory that is renamed over the
// destination. Each temporary file in flight is registered in a fixed, lock-free table that the
// SIGINT/SIGTERM/SIGHUP handlers walk to unlink them (the "temporary-file registry" below).
#include "util/atomic_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <mutex>
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

// A temporary file made by mkostemp (close-on-exec: a child another thread starts does not keep
// it open) from a template ending in XXXXXX, registered for the signal
// handlers and unlinked by the destructor unless renamed into place.
class TempFile {
 public:
  explicit TempFile(std::string name_template) : path_(std::move(name_template)) {
    CleanupSignalsBlocked blocked;
    if (path_.size() < kTempPathBytes) slot_ = claim_slot();
    if (!slot_) {  // no free slot, or a path too long to register (mkostemp then fails anyway)
      fd_ = ::mkostemp(path_.data(), O_CLOEXEC);
      created_ = fd_ >= 0;
      return;
    }
    if (g_terminating.load()) {  // seq_cst: after the store that claimed the slot
      slot_->state.store(next_free(state_));
      wait_if_terminating();
    }
    std::memcpy(slot_->path, path_.c_str(), path_.size() + 1);
    fd_ = ::mkostemp(slot_->path, O_CLOEXEC);
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
  // Renames the file to `target`; returns 0 or errno. The file is then no longer ours to remove.
  int rename_to(const std::string& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      const int err = errno;
      wait_if_terminating();  // the handler removed the file: no error, the process is ending
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
int write_all(int fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  install_cleanup_handlers();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw Error(path + ": is a device, named pipe or socket, not a file; refusing to replace it");
  const std::filesystem::path target(path);
  std::string dir = target.parent_path().string();
  if (dir.empty()) dir = ".";
  // Hidden, unique name beside the target, so that rename() stays within one file system.
  const std::string stem = target.filename().string().substr(0, 200);  // NAME_MAX is 255
  TempFile temp(dir + "/." + stem + ".XXXXXX");
  if (temp.fd() < 0) {
    const int err = errno;  // before any allocation can clobber it
    throw Error(path + ": cannot create a temporary file in '" + dir + "': " + errno_text(err));
  }

  if (const int err = write_all(temp.fd(), bytes))
    throw Error(path + ": cannot write '" + temp.path() + "': " + errno_text(err));
  // mkostemp creates the file 0600; give it the permissions an ordinary output file would have.
  if (::fchmod(temp.fd(), 0644) != 0) {
    const int err = errno;
    throw Error(path + ": cannot set permissions of '" + temp.path() + "': " + errno_text(err));
  }
  if (const int err = temp.close()) {
    throw Error(path + ": cannot write '" + temp.path() + "': " + errno_text(err));
  }
  if (const int err = temp.rename_to(path)) {
    throw Error(path + ": cannot rename the temporary file into place: " + errno_text(err));
  }
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  // Written into, not replaced: a character device or named pipe (/dev/null, a FIFO), and any
  // path under /dev or /proc (/dev/stdout, /dev/fd/N, /proc/self/fd/N name whatever the
  // descriptor is, a regular file too; renaming over them would replace the link itself).
  bool special_name = false;
  std::filesystem::path hop = path;  // the path, then each link's target in turn
  for (int links = 0; links < 40 && !special_name; ++links) {
    const std::string normal = std::filesystem::absolute(hop).lexically_normal().string();
    special_name = normal.rfind("/dev/", 0) == 0 || normal.rfind("/proc/", 0) == 0;
    std::error_code ec;
    if (!std::filesystem::is_symlink(hop, ec)) break;
    const std::filesystem::path target = std::filesystem::read_symlink(hop, ec);
    if (ec) break;
    hop = target.is_absolute() ? target : hop.parent_path() / target;
  }
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists || !(special_name || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    write_file_atomic(path, bytes);
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
    write_file_atomic(path, bytes);
    return;
  }
  if (S_ISREG(opened.st_mode)) (void)::ftruncate(fd, 0);  // /dev/stdout onto a file, as cp does
  if (const int err = write_all(fd, bytes)) {
    ::close(fd);
    throw Error(path + ": cannot write: " + errno_text(err));
  }
  if (::close(fd) != 0 && errno != EINTR) {
    const int err = errno;
    throw Error(path + ": cannot write: " + errno_text(err));
  }
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

int in_flight_temp_files() {
  int count = 0;
  for (const TempSlot& slot : g_temp_slots) {
    if ((slot.state.load(std::memory_order_acquire) & kStateMask) != kFree) ++count;
  }
  return count;
}

}  // namespace blurtool
