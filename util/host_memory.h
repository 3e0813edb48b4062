// Host memory for image-sized buffers: fewer first-touch page faults, no needless zeroing, and
// pinned memory where a GPU transfers from it.
//
// A decoded photo, a blurred result and their staging copies are tens of megabytes, allocated
// once per image. On a virtual machine every first touch of a 4 KiB page is a trap to the
// hypervisor, and a 12-Mpixel RGBA image is 12,000 of them, which can cost more than decoding
// it (kernels/NOTES.md, "Whole job on the H100 machine"). Image pixels are a PixelVector, whose
// allocator:
// - leaves samples unwritten on resize (a decoder or a download writes every one);
// - asks for transparent huge pages (madvise MADV_HUGEPAGE, 2 MiB a fault) on each block it
//   takes from malloc, before its first touch, where the kernel offers them ("madvise" or
//   "always" in /sys/kernel/mm/transparent_hugepage/enabled);
// - on a batch's threads, takes blocks from a pool of pinned memory (PixelPool, UsePixelPool).
// tune_host_allocator() keeps glibc from mapping and unmapping each image-sized block, so that a
// batch reuses the pages of the previous image's buffers instead of faulting in new ones. The
// page hints may be ignored by the kernel and glibc; results never depend on them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace blurtool {

/// A source of memory for pixels besides malloc, such as the pinned memory of an OpenCL context
/// (filters/filter.h PinnedPool), from which a GPU transfers without a staging copy. Thread-safe.
class PixelPool {
 public:
  virtual ~PixelPool() = default;
  /// At least `bytes` of the pool's memory, or null when it has none to give.
  virtual void* take(std::size_t bytes) noexcept = 0;
  /// Takes `data` back if the pool gave it (true), else leaves it (false).
  virtual bool give_back(void* data) noexcept = 0;
  /// Whether `data` points into a block the pool gave.
  virtual bool owns(const void* data) const noexcept = 0;
};

/// Makes `pool` the process's pixel pool, for good: it is never removed or destroyed, since the
/// blocks it gave may outlive whatever installed it. Only the first call installs one; later
/// calls return false and leave `pool` to the caller.
bool install_pixel_pool(PixelPool* pool);

/// Whether `data` is memory of the installed pixel pool (so pinned, where the pool is).
bool in_pixel_pool(const void* data) noexcept;

/// While one lives, the calling thread's pixel allocations of 1 MiB and more come from the
/// installed pixel pool where it has memory to give (a batch's decoding and device threads);
/// elsewhere, and beyond the pool's memory, from malloc.
class UsePixelPool {
 public:
  UsePixelPool();
  ~UsePixelPool();
  UsePixelPool(const UsePixelPool&) = delete;
  UsePixelPool& operator=(const UsePixelPool&) = delete;

 private:
  bool was_;
};

/// Alignment of pixel memory from allocate_pixels, in bytes: a cache line, and more than the
/// widest vector (16 samples of 16 bits, 32 bytes) that a CPU device's kernels load from pixels
/// they read where they lie (CL_MEM_USE_HOST_PTR), which PoCL loads with aligned instructions.
constexpr std::size_t kPixelAlignment = 64;

/// `bytes` of memory for pixels (PixelAllocator), aligned to kPixelAlignment: see UsePixelPool;
/// memory from the C library is advised to huge pages (advise_huge_pages). Throws
/// std::bad_alloc.
void* allocate_pixels(std::size_t bytes);
/// Frees what allocate_pixels gave for `bytes`: back to the pool, or to malloc.
void free_pixels(void* data, std::size_t bytes) noexcept;

/// Advises the kernel to back [data, data + bytes) with transparent huge pages (madvise
/// MADV_HUGEPAGE over the 2 MiB-aligned part of it); a no-op for less than 4 MiB or where the
/// advice is refused. Call it before the memory is first written.
void advise_huge_pages(void* data, std::size_t bytes);

/// The allocator of image pixels (PixelVector): memory from std::malloc, or from a pinned pool
/// when one is installed (install_pixel_pool) and has a block of the size; elements are
/// default-initialised, so that resize() leaves the samples unwritten (a decoder or a download
/// writes every one) instead of zeroing image-sized buffers first.
template <typename T>
struct PixelAllocator {
  using value_type = T;
  PixelAllocator() = default;
  template <typename U>
  PixelAllocator(const PixelAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_pixels(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_pixels(p, n * sizeof(T)); }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
  template <typename U>
  friend bool operator==(const PixelAllocator&, const PixelAllocator<U>&) {
    return true;
  }
  template <typename U>
  friend bool operator!=(const PixelAllocator&, const PixelAllocator<U>&) {
    return false;
  }
};

/// A vector of pixels' samples (see PixelAllocator).
template <typename T>
using PixelVector = std::vector<T, PixelAllocator<T>>;

/// Pixels against samples in an ordinary vector (tests, decoders' own buffers): equal when the
/// same samples in the same order.
template <typename T>
bool operator==(const PixelVector<T>& a, const std::vector<T>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}
template <typename T>
bool operator==(const std::vector<T>& a, const PixelVector<T>& b) {
  return b == a;
}
template <typename T>
bool operator!=(const PixelVector<T>& a, const std::vector<T>& b) {
  return !(a == b);
}
template <typename T>
bool operator!=(const std::vector<T>& a, const PixelVector<T>& b) {
  return !(b == a);
}

/// Sets glibc's malloc for image-sized blocks (mallopt): blocks up to 32 MiB come from its
/// arenas rather than from a mapping of their own, and freed memory is kept (up to 512 MiB at the
/// top of an arena) for the next image; called once at program start, before any threads.
void tune_host_allocator();

}  // namespace blurtool
