// Files written whole or not at all: a temporary file in the destination's directory synced and
// renamed into place (never over a file the caller did not mean to replace), the registry of
// temporary files in flight that signal handlers remove, so that an interrupted run leaves no
// partial output, and the removal of those a killed run left (the util layer: no image or
// device code).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace blurtool {

/// What write_file_atomic does where `path` exists when the new file is to take its place.
enum class IfExists {
  replace,  ///< replace it; a regular file's permission bits are kept (a 0600 file stays 0600)
  /// replace it where this user may write it (access(2) W_OK), else an Error: a write-protected
  /// file is left as it is, as cp(1) without -f leaves it (root may write any)
  replace_writable,
  keep,  ///< leave it as it is and write nothing (a file planned as new, and taken meanwhile)
};

/// When write_file_atomic syncs the output's folder, which puts the rename itself on disk.
enum class SyncFolder {
  now,     ///< after the rename: two syncs a file
  caller,  ///< left to the caller, who syncs each folder once after many files (sync_folders_of)
};

/// Writes `bytes` to `path` through a temporary file beside it (".NAME.blurtool-XXXXXX", NAME the
/// output's file name up to 200 bytes) that is synced to disk, renamed into place, and the
/// folder then synced (by the caller with SyncFolder::caller), so that no partial file is ever
/// left and a crash or power loss leaves the old file or the new one, whole. A new file gets mode
/// 0666 less the umask, as any file a program creates; a replaced regular file keeps its permission
/// bits (as cp(1) keeps them). With IfExists::keep the rename never replaces: a `path` that exists
/// by then, even if it appeared after the call began, is left as it is, nothing is written and
/// false is returned (true otherwise). Throws blurtool::Error naming `path` on any failure, and
/// where `path` is a device, named pipe or socket (which renaming would replace). Thread-safe. The
/// temporary file is registered for the signal handlers of install_cleanup_handlers(), which the
/// first call installs.
bool write_file_atomic(const std::string& path, const std::vector<std::uint8_t>& bytes,
                       IfExists if_exists = IfExists::replace,
                       SyncFolder sync_folder = SyncFolder::now);

/// An output written in pieces as it is made (an image encoded strip by strip) and put in place
/// whole by commit(): into a temporary file beside `path`, synced and renamed into place as
/// write_file_atomic does (mode, IfExists and SyncFolder alike), or, with Special::write_into,
/// straight into a character device, named pipe or /dev or /proc path that exists, as write_file
/// does. Destroyed without a commit (an exception while the image is made), the temporary file
/// is removed: no partial file is ever left under `path` (a device, named pipe or /dev path
/// written into has had the bytes written so far). Not thread-safe; one writer.
class OutputFile {
 public:
  /// What an output that is a device, named pipe or socket gets.
  enum class Special {
    refuse,      ///< an Error (write_file_atomic)
    write_into,  ///< written into (write_file); a socket is still refused
  };

  /// Opens the output: creates the temporary file (or opens the device). Throws
  /// blurtool::Error naming `path` where it cannot. With IfExists::keep and `path` existing,
  /// nothing is created and taken() is true.
  OutputFile(const std::string& path, Special special, IfExists if_exists = IfExists::replace,
             SyncFolder sync_folder = SyncFolder::now);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Whether the output is left as it is (IfExists::keep and `path` exists): nothing is written.
  bool taken() const;

  /// Appends `size` bytes. Throws blurtool::Error naming `path` (and the temporary file) on a
  /// write failure, or when the file is taken() or committed.
  void write(const std::uint8_t* data, std::size_t size);

  /// Whether write_at can write: the temporary file, or a regular file (or block device)
  /// written into (/dev/stdout onto a file); not a pipe or a character device, nor once taken()
  /// or committed.
  bool seekable() const;

  /// Writes `size` bytes at byte `offset` of the output (0: its first byte), over bytes
  /// written before or past its end (a gap holds zeros), without moving where write() appends:
  /// for a format that goes back to its header once the rest is written (a TIFF). Throws
  /// blurtool::Error naming `path` (and the temporary file) on a write failure, where the
  /// output is not seekable(), and when it is taken() or committed.
  void write_at(std::uint64_t offset, const std::uint8_t* data, std::size_t size);

  /// Syncs and renames the file into place (or closes the device). Returns false, writing
  /// nothing, where the output is taken(), also when `path` appeared meanwhile under
  /// IfExists::keep (the temporary file is then removed); true otherwise. Throws
  /// blurtool::Error naming `path` on any failure.
  bool commit();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Writes the `size` bytes at `data` at byte `offset` of the open file `fd` (pwrite, resumed
/// after short writes and EINTR), not moving its file offset. Returns 0, or the errno.
int write_all_at(int fd, const std::uint8_t* data, std::size_t size, std::uint64_t offset);

/// Why the open descriptor `fd` cannot be written at any offset, in words for a message ("a
/// pipe", "a socket", "a character device (a terminal, /dev/null)", "opened for appending",
/// where pwrite would append); "" where it can (a regular file or a block device).
std::string unseekable_reason(int fd);

/// The same for an output named `path`, from what is there now: "" where nothing is (or a
/// folder), since OutputFile then writes a temporary file; a regular file found through /dev
/// or /proc names is written into and seekable too.
std::string unseekable_reason(const std::string& path);

/// Syncs the folder of each of `outputs` once, so that the renames of the write_file_atomic
/// calls with SyncFolder::caller that wrote them are on disk. Throws blurtool::Error naming a
/// folder that cannot be synced.
void sync_folders_of(const std::vector<std::string>& outputs);

/// Writes `bytes` to `path` as the output of one image: into it where `path` is a character
/// device or a named pipe (/dev/null, a FIFO: opening a FIFO waits for a reader) or lies under
/// /dev or /proc (/dev/stdout onto a file: truncated and written, as cp does), else through
/// write_file_atomic. With IfExists::keep a `path` that exists is neither written into nor
/// replaced: false is returned. Throws blurtool::Error naming `path` on any failure.
bool write_file(const std::string& path, const std::vector<std::uint8_t>& bytes,
                IfExists if_exists = IfExists::replace);

/// Renames `from` to `to` unless `to` exists (a file of any kind, a dangling link too), in one
/// step: renameat2() with RENAME_NOREPLACE, or where the kernel or file system lacks it
/// (EINVAL, ENOSYS), link_no_replace(). Returns 0, or the errno: EEXIST where `to` exists,
/// `from` then left as it was.
int rename_no_replace(const std::string& from, const std::string& to);

/// rename_no_replace without renameat2: link() `from` as `to`, which fails with EEXIST where
/// `to` exists, then unlink() `from`. On a file system without hard links (EPERM, ENOTSUP), a
/// check that `to` is absent and a rename, which a file created in between would lose to.
/// Returns 0 or the errno, as rename_no_replace.
int link_no_replace(const std::string& from, const std::string& to);

/// IfExists::replace_writable's check, for a caller that would refuse before its work: throws
/// blurtool::Error "PATH: is write-protected; not replaced (--force replaces it)" where `path`
/// is a regular file this user may not write (access(2) W_OK fails with EACCES; root may write
/// any). A symbolic link is not refused whatever its target: the rename replaces the link.
void refuse_write_protected(const std::string& path);

/// Removes the temporary files write_file_atomic left beside `outputs` in a run that was killed
/// (SIGKILL, a power loss: no handler could remove them): regular files in an output's folder
/// named as that output's temporary files are (".NAME.blurtool-XXXXXX", X a letter or digit),
/// owned by this process's user and last modified at least `min_age` ago, so that the temporary
/// file of a run still writing is never taken, nor another program's or user's file. A folder
/// that cannot be read is passed over. Returns how many files were removed.
std::size_t remove_stale_temp_files(const std::vector<std::string>& outputs,
                                    std::chrono::seconds min_age = std::chrono::hours(1));

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that unlink the temporary files of every
/// write_file_atomic in flight, in any thread, then hand the signal on: to the handler that was
/// installed before, if any, else to the default action (the signal is re-raised, so the exit
/// status still says which signal ended the process; other threads stop writing at once). If a
/// chained handler returns, the process goes on and the writes that were in flight fail, their
/// temporary files gone. A signal that is ignored (SIG_IGN, as under nohup) stays ignored.
/// Idempotent and thread-safe; write_file_atomic calls it, a program may call it earlier. The
/// registry is a fixed table of 64 paths of up to 4095 bytes, written and read with lock-free
/// atomics only (async-signal-safe); a temporary file that finds no free slot is still written and
/// renamed, but not removed by a signal.
void install_cleanup_handlers();

/// The number of temporary files registered right now (for tests and diagnostics).
int in_flight_temp_files();

}  // namespace blurtool
