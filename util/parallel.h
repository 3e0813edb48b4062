// Runs independent pieces of one job (the strips of a PNG's deflate, of a JPEG's scan) on a few
// threads made for the job, the calling thread among them.
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace blurtool {

/// The threads to use for `pieces` pieces of work when `requested` were asked for (0:
/// std::thread::hardware_concurrency()): at least 1, at most `pieces` (or 1 where there are none).
inline int worker_threads(int requested, int pieces) {
  const int threads =
      requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(threads, 1, std::max(pieces, 1));
}

/// Runs work(piece, state) for every piece in 0..pieces-1 on up to `threads` threads (this one
/// included; one that cannot be started leaves its share to the others), each thread taking the
/// next piece not yet taken and keeping one State, default-constructed, for all of its pieces.
/// Returns when every piece is done; the first exception thrown is rethrown then, and once one
/// is thrown no further piece is started.
template <typename State, typename F>
void for_each_piece(int pieces, int threads, F work) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_lock;
  auto loop = [&] {
    try {
      State state;
      for (int p; (p = next.fetch_add(1)) < pieces;) work(p, state);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_lock);
      if (!error) error = std::current_exception();
      next.store(pieces);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(loop);
    } catch (...) {  // no more threads (or memory for one): the ones running do the work
      break;
    }
  }
  loop();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace blurtool
