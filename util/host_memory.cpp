// Host memory hints (see host_memory.h).
#include "util/host_memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace blurtool {

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (!data || bytes < 2 * kHuge) return;
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (start + bytes) & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

namespace {

std::atomic<PixelPool*> installed_pool{nullptr};
thread_local bool use_pool = false;
constexpr std::size_t kPoolMinBytes = std::size_t{1} << 20;

}  // namespace

bool install_pixel_pool(PixelPool* pool) {
  PixelPool* none = nullptr;
  return installed_pool.compare_exchange_strong(none, pool);
}

bool in_pixel_pool(const void* data) noexcept {
  PixelPool* pool = installed_pool.load(std::memory_order_acquire);
  return pool && data && pool->owns(data);
}

UsePixelPool::UsePixelPool() : was_(use_pool) {
  use_pool = true;
}
UsePixelPool::~UsePixelPool() {
  use_pool = was_;
}

void* allocate_pixels(std::size_t bytes) {
  if (use_pool && bytes >= kPoolMinBytes) {
    if (PixelPool* pool = installed_pool.load(std::memory_order_acquire))
      if (void* p = pool->take(bytes)) return p;
  }
  // aligned_alloc takes a multiple of the alignment; std::free releases it.
  const std::size_t rounded =
      (std::max<std::size_t>(bytes, 1) + kPixelAlignment - 1) / kPixelAlignment * kPixelAlignment;
  void* p = std::aligned_alloc(kPixelAlignment, rounded);
  if (!p) throw std::bad_alloc();
  advise_huge_pages(p, bytes);  // before the first touch, which is the caller's
  return p;
}

void free_pixels(void* data, std::size_t bytes) noexcept {
  if (!data) return;
  // The pool gives only blocks of kPoolMinBytes or more (allocate_pixels), so a smaller one is
  // malloc's and needs no look into the pool under its lock.
  PixelPool* pool =
      bytes >= kPoolMinBytes ? installed_pool.load(std::memory_order_acquire) : nullptr;
  if (pool && pool->give_back(data)) return;
  std::free(data);
}

void tune_host_allocator() {
#ifdef M_MMAP_THRESHOLD
  // 32 MiB is glibc's ceiling for the threshold on 64-bit (HEAP_MAX_SIZE / 2): a 1920x1080 RGBA
  // image (8 MiB) and its 16-bit twin stay in the arenas; a 12-Mpixel one is still mapped, and
  // gets huge pages through allocate_pixels instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace blurtool
