// Host memory hints (see host_memory.h).
#include "core/host_memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>

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

void tune_host_allocator() {
#ifdef M_MMAP_THRESHOLD
  // 32 MiB is glibc's ceiling for the threshold on 64-bit (HEAP_MAX_SIZE / 2): a 1920x1080 RGBA
  // image (8 MiB) and its 16-bit twin stay in the arenas; a 12-Mpixel one is still mapped, and
  // gets huge pages through resize_fresh instead.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace blurtool
