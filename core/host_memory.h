// Host memory for image-sized buffers: fewer first-touch page faults.
//
// A decoded photo, a blurred result and their staging copies are tens of megabytes, allocated
// once per image. On a virtual machine every first touch of a 4 KiB page is a trap to the
// hypervisor, and a 12-Mpixel RGBA image is 12,000 of them, which can cost more than decoding
// it (kernels/NOTES.md, "Whole job on the H100 machine"). Two remedies, both hints the kernel
// and glibc may ignore (results never depend on them):
// - resize_fresh() asks for transparent huge pages (madvise MADV_HUGEPAGE, 2 MiB a fault) on a
//   buffer before its first touch, where the kernel offers them ("madvise" or "always" in
//   /sys/kernel/mm/transparent_hugepage/enabled);
// - tune_host_allocator() keeps glibc from mapping and unmapping each image-sized block, so that
//   a batch reuses the pages of the previous image's buffers instead of faulting in new ones.
#pragma once

#include <cstddef>
#include <vector>

namespace blurtool {

/// Advises the kernel to back [data, data + bytes) with transparent huge pages (madvise
/// MADV_HUGEPAGE over the 2 MiB-aligned part of it); a no-op for less than 4 MiB or where the
/// advice is refused. Call it before the memory is first written.
void advise_huge_pages(void* data, std::size_t bytes);

/// Resizes the empty vector `v` to `count` value-initialised elements, its storage advised to
/// huge pages (advise_huge_pages) between allocation and first touch. Throws std::bad_alloc.
template <typename T>
void resize_fresh(std::vector<T>& v, std::size_t count) {
  if (v.empty()) {
    v.reserve(count);
    advise_huge_pages(v.data(), count * sizeof(T));
  }
  v.resize(count);
}

/// Sets glibc's malloc for image-sized blocks (mallopt): blocks up to 32 MiB come from its
/// arenas rather than from a mapping of their own, and freed memory is kept (up to 512 MiB at the
/// top of an arena) for the next image; called once at program start, before any threads.
void tune_host_allocator();

}  // namespace blurtool
