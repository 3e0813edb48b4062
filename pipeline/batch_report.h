// A batch's record of what became of each input (--report): JSON lines, one object a file,
// written as each file is settled, and a summary object at the end, so that engines which spread
// a folder over hosts (docs/scale-out.md) can merge, count and retry. Each line goes out in one
// write() to a file opened for appending: an interrupted run leaves whole lines, and several runs
// may append to one report on a local file system.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace blurtool {

/// One input's line. Numbers below zero (and an empty device) are not known and written as
/// null: a file that failed before decoding has no size, a skipped one no times.
struct FileRecord {
  std::string input;   ///< the path as the batch found it (listed, or folder/name)
  std::string output;  ///< the output path it was to get ("" when it had none)
  enum class Status { done, skipped, failed } status = Status::done;
  std::string reason;           ///< why skipped or failed ("" when done)
  int width = -1, height = -1;  ///< pixels, as decoded (EXIF orientation applied)
  double bytes_in = -1;         ///< bytes of the input file
  double bytes_out = -1;        ///< bytes of the output written
  double decode_ms = -1;        ///< wall ms reading and decoding the file
  double device_ms = -1;        ///< wall ms of the device stage (upload, kernels, download)
  double encode_ms = -1;        ///< wall ms encoding and writing the output
  std::string device;           ///< the OpenCL device that ran it
  int device_index = -1;        ///< its index in --list-devices
  bool strips = false;          ///< run in strips of rows (--max-memory): one device_ms
};

/// The last line: counts, time and rate of the whole run.
struct SummaryRecord {
  std::uint64_t done = 0, skipped = 0, failed = 0;
  std::uint64_t ignored = 0;  ///< files of the input folders that are no image name
  double seconds = 0;         ///< wall time of the batch
  double bytes_in = 0, bytes_out = 0;
  std::string shard;                 ///< "I/N" with I modulo N (4/4 as 0/4); "" without --shard
  std::vector<std::string> devices;  ///< the devices that ran the batch
};

/// The report file of --report, open for appending ("-": standard output) for the run's life.
/// Thread-safe.
class BatchReport {
 public:
  /// Opens `path` for appending (created with mode 0666 less the umask). Throws
  /// blurtool::UsageError naming "--report 'path'" when it cannot.
  explicit BatchReport(const std::string& path);
  ~BatchReport();
  BatchReport(const BatchReport&) = delete;
  BatchReport& operator=(const BatchReport&) = delete;

  /// {"record":"file","input":...,"output":...,"status":"done|skipped|failed","reason":...,
  /// "width","height","bytes_in","bytes_out","decode_ms","device_ms","encode_ms","device",
  /// "device_index","strips"}. Names that are not UTF-8 are written with U+FFFD for their bad
  /// bytes.
  void file(const FileRecord& r);
  /// {"record":"summary","done","skipped","failed","ignored","seconds","images_per_s","bytes_in",
  /// "bytes_out","shard","devices"}.
  void summary(const SummaryRecord& s);

 private:
  void line(const std::string& text);
  std::string path_;
  int fd_ = -1;
  bool own_fd_ = false;
  bool warned_ = false;
  std::mutex mutex_;
};

}  // namespace blurtool
