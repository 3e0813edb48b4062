// libjpeg's block arrays in the caller's memory (see jpeg_block_arrays.h).
#include "image/jpeg_block_arrays.h"

#include <jerror.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace blurtool {

void BlockArrays::install(j_common_ptr info, const std::array<BlockTarget, 3>& targets) {
  targets_ = targets;
  arrays_.clear();
  info->client_data = this;
  realize_others_ = info->mem->realize_virt_arrays;
  info->mem->request_virt_barray = &BlockArrays::request;
  info->mem->realize_virt_arrays = &BlockArrays::realize;
  info->mem->access_virt_barray = &BlockArrays::access;
}

bool BlockArrays::in_place(std::size_t i) const {
  return i < arrays_.size() && arrays_[i].in_place;
}

BlockArrays& BlockArrays::of(j_common_ptr info) {
  return *static_cast<BlockArrays*>(info->client_data);
}

jvirt_barray_ptr BlockArrays::request(j_common_ptr info, int pool_id, boolean pre_zero,
                                      JDIMENSION across, JDIMENSION down, JDIMENSION) {
  // jmemmgr.c allows virtual arrays only in the image pool; so does this.
  if (pool_id != JPOOL_IMAGE) ERREXIT1(info, JERR_BAD_POOL_ID, pool_id);
  BlockArrays& self = of(info);
  Array* a = nullptr;
  try {  // no exception through libjpeg's C frames: its own error instead
    a = &self.arrays_.emplace_back();
  } catch (const std::bad_alloc&) {
  }
  if (!a) ERREXIT1(info, JERR_OUT_OF_MEMORY, 10);
  a->across = across;
  a->down = down;
  a->pre_zero = pre_zero != FALSE;
  return reinterpret_cast<jvirt_barray_ptr>(a);
}

void BlockArrays::realize(j_common_ptr info) {
  BlockArrays& self = of(info);
  for (std::size_t i = 0; i < self.arrays_.size(); ++i) {
    Array& a = self.arrays_[i];
    if (!a.rows.empty()) continue;  // realised already
    const BlockTarget t = i < self.targets_.size() ? self.targets_[i] : BlockTarget{};
    a.in_place = t.base && (!t.padding_written || a.across <= t.stride);
    const JDIMENSION own = a.in_place ? std::min(a.down, t.rows) : 0;  // rows in the target
    // The decoder's Huffman coder writes only non-zero coefficients: it asks for zeroed arrays.
    if (a.pre_zero && own > 0)
      std::memset(static_cast<void*>(t.base), 0, sizeof(JBLOCK) * t.stride * own);
    // The rest in scratch memory, zeroed by assign. No longjmp out of a catch block: failure
    // is raised after it.
    bool allocated = true;
    try {
      a.scratch.assign(static_cast<std::size_t>(a.down - own) * a.across * DCTSIZE2, 0);
      a.rows.resize(a.down);
    } catch (const std::bad_alloc&) {
      allocated = false;
    }
    if (!allocated) ERREXIT1(info, JERR_OUT_OF_MEMORY, 10);
    for (JDIMENSION r = 0; r < a.down; ++r)
      a.rows[r] =
          r < own ? t.base + static_cast<std::size_t>(r) * t.stride
                  : reinterpret_cast<JBLOCKROW>(
                        a.scratch.data() + static_cast<std::size_t>(r - own) * a.across * DCTSIZE2);
  }
  if (self.realize_others_) self.realize_others_(info);
}

JBLOCKARRAY BlockArrays::access(j_common_ptr info, jvirt_barray_ptr handle, JDIMENSION start_row,
                                JDIMENSION num_rows, boolean) {
  // Only a handle this object gave out: a stale or foreign one is libjpeg's error, not a read
  // through a wild pointer.
  BlockArrays& self = of(info);
  Array* a = nullptr;
  for (Array& mine : self.arrays_)
    if (reinterpret_cast<jvirt_barray_ptr>(&mine) == handle) a = &mine;
  if (!a || a->rows.empty() || start_row > a->down || num_rows > a->down - start_row)
    ERREXIT(info, JERR_BAD_VIRTUAL_ACCESS);
  return a->rows.data() + start_row;
}

}  // namespace blurtool
