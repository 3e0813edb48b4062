#include "pipeline/batch_report.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace blurtool {

namespace {

// Keys in the order written: record, input, output, status, reason, ... read best.
using json = nlohmann::ordered_json;

json known(int v) {
  return v < 0 ? json(nullptr) : json(v);
}
json bytes(double v) {
  return v < 0 ? json(nullptr) : json(static_cast<std::uint64_t>(v));
}
// Milliseconds to the microsecond: the report stays short and diffable.
json ms(double v) {
  return v < 0 ? json(nullptr) : json(std::round(v * 1000) / 1000);
}

const char* status_name(FileRecord::Status s) {
  switch (s) {
    case FileRecord::Status::done:
      return "done";
    case FileRecord::Status::skipped:
      return "skipped";
    case FileRecord::Status::failed:
      return "failed";
  }
  return "failed";
}

}  // namespace

BatchReport::BatchReport(const std::string& path) : path_(path) {
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) throw UsageError("--report '" + path + "': cannot open: " + std::strerror(errno));
  own_fd_ = true;
}

BatchReport::~BatchReport() {
  if (own_fd_) ::close(fd_);
}

void BatchReport::line(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!warned_)
        std::cerr << "blurtool: warning: --report '" << path_
                  << "': cannot write: " << std::strerror(n < 0 ? errno : EIO)
                  << "; the report misses lines\n";
      warned_ = true;
      return;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void BatchReport::file(const FileRecord& r) {
  json j;
  j["record"] = "file";
  j["input"] = r.input;
  j["output"] = r.output.empty() ? json(nullptr) : json(r.output);
  j["status"] = status_name(r.status);
  j["reason"] = r.reason.empty() ? json(nullptr) : json(r.reason);
  j["width"] = known(r.width);
  j["height"] = known(r.height);
  j["bytes_in"] = bytes(r.bytes_in);
  j["bytes_out"] = bytes(r.bytes_out);
  j["decode_ms"] = ms(r.decode_ms);
  j["device_ms"] = ms(r.device_ms);
  j["encode_ms"] = ms(r.encode_ms);
  j["device"] = r.device.empty() ? json(nullptr) : json(r.device);
  j["device_index"] = known(r.device_index);
  j["strips"] = r.strips;
  line(j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

void BatchReport::summary(const SummaryRecord& s) {
  json j;
  j["record"] = "summary";
  j["done"] = s.done;
  j["skipped"] = s.skipped;
  j["failed"] = s.failed;
  j["ignored"] = s.ignored;
  j["seconds"] = std::round(s.seconds * 1000) / 1000;
  j["images_per_s"] =
      s.done > 0 && s.seconds > 0 ? json(std::round(s.done / s.seconds * 10) / 10) : json(nullptr);
  j["bytes_in"] = bytes(s.bytes_in);
  j["bytes_out"] = bytes(s.bytes_out);
  j["shard"] = s.shard.empty() ? json(nullptr) : json(s.shard);
  j["devices"] = s.devices;
  line(j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace blurtool
