// `blurtool probe`'s kernels in process: each computes what the tables say it times (the cache
// probe's five texels through the sampler and through a buffer, the divergence probe's branch
// bodies, the stride walk's bytes, the transfers' bytes), checked against the CPU references of
// probe_reference.cpp. Timings are not checked: they belong to the probes' own runs. The command
// itself: tests/cli/test_probe.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "tests/support/test_support.h"
#include "tools/probe.h"
#include "util/error.h"

namespace blurtool {
namespace {

TEST(Probe, CacheKernelsReadTheFiveTexelsOfTheReference) {
  if (!runtime().device().image_support) GTEST_SKIP() << "no image support";
  // 300 x 210: steps of 3 and 2 texels, fetches wrapping at both edges at every scale.
  const Image source = random_rgba(300, 210, 41);
  CacheProbe probe(runtime(), source);
  for (const ProbeScale& s : cache_scales()) {
    const std::vector<std::uint32_t> want = cache_reference(source, s);
    for (CacheRead read : {CacheRead::image, CacheRead::buffer}) {
      probe.enqueue(read, s).wait();
      const std::vector<std::uint32_t> got = probe.output();
      ASSERT_EQ(got.size(), want.size());
      size_t wrong = 0, first = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i] && wrong++ == 0) first = i;
      }
      EXPECT_EQ(wrong, 0u) << "scale " << s.value()
                           << (read == CacheRead::image ? " image" : " buffer")
                           << ", first at pixel " << first;
    }
  }
  // The reference itself depends on the scale (so the comparison above can fail).
  EXPECT_NE(cache_reference(source, {1, 1}), cache_reference(source, {2, 1}));
}

TEST(Probe, BranchKernelsRunTheBodyTheirConditionPicks) {
  const int w = 120, h = 40, rounds = 3;
  BranchProbe probe(runtime(), w, h, rounds);
  struct Case {
    BranchKind kind;
    float frequency;
  };
  for (const Case c : {Case{BranchKind::none, 0}, Case{BranchKind::three_way, 1},
                       Case{BranchKind::three_way, 7}, Case{BranchKind::three_way, 100}}) {
    probe.enqueue(c.kind, c.frequency).wait();
    const std::vector<float> got = probe.output();
    const std::vector<float> want = branch_reference(w, h, rounds, c.kind, c.frequency);
    ASSERT_EQ(got.size(), want.size());
    std::set<int> taken;
    size_t wrong = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const float doit = c.kind == BranchKind::none ? 0 : branch_doit(x, w, c.frequency);
        taken.insert(doit < 0.3f ? 0 : doit < 0.7f ? 1 : 2);
        for (int ch = 0; ch < 4; ++ch) {
          const size_t i = (static_cast<size_t>(y) * w + x) * 4 + ch;
          if (!(std::abs(got[i] - want[i]) <= 1e-4f * std::max(1.0f, std::abs(want[i])))) ++wrong;
        }
      }
    }
    EXPECT_EQ(wrong, 0u) << "frequency " << c.frequency;
    // Every body is exercised where the probe says it is.
    EXPECT_EQ(taken.size(), c.kind == BranchKind::none ? 1u : 3u) << "frequency " << c.frequency;
  }
  // The three bodies differ: a kernel running the wrong one could not pass.
  const std::vector<float> none = branch_reference(w, h, rounds, BranchKind::none, 0);
  const std::vector<float> split = branch_reference(w, h, rounds, BranchKind::three_way, 1);
  EXPECT_NE(none[(w / 2) * 4], split[(w / 2) * 4]);
  EXPECT_NE(split[(w / 2) * 4], split[(w - 1) * 4]);
}

TEST(Probe, StrideKernelLeavesTheBytesOfTheHostWalk) {
  // 64 KiB and 8 Ki accesses: as the probe's 32 MiB and 4 Mi, no two accesses meet.
  const size_t bytes = 1 << 16, accesses = 1 << 13;
  StrideProbe probe(runtime(), bytes, accesses);
  for (std::uint32_t stride : {1u, 2u, 4u, 8u, 15u, 28u, 53u, 99u, 185u}) {
    probe.clear();
    probe.enqueue(stride).wait();
    const std::vector<std::uint8_t> got = probe.output();
    std::vector<std::uint8_t> want(bytes, 0);
    stride_walk(want.data(), bytes, stride, accesses);
    EXPECT_EQ(got, want) << "stride " << stride;
    EXPECT_EQ(static_cast<size_t>(std::count(got.begin(), got.end(), 1)), accesses)
        << "stride " << stride;
  }
  // The host walk's sum counts what it read: a second walk over the same bytes reads 1s.
  std::vector<std::uint8_t> buf(bytes, 0);
  EXPECT_EQ(stride_walk(buf.data(), bytes, 8, accesses), 0u);
  EXPECT_EQ(stride_walk(buf.data(), bytes, 8, accesses), accesses);
  EXPECT_THROW(StrideProbe(runtime(), 3000, 16), Error);
}

TEST(Probe, StrideKernelAtTheProbesOwnSize) {
  const size_t bytes = size_t(32) << 20, accesses = size_t(1) << 22;
  StrideProbe probe(runtime(), bytes, accesses);
  probe.enqueue(8).wait();  // the largest power-of-two factor of the probe's strides
  const std::vector<std::uint8_t> got = probe.output();
  std::vector<std::uint8_t> want(bytes, 0);
  stride_walk(want.data(), bytes, 8, accesses);
  EXPECT_EQ(got, want);
}

TEST(Probe, TransfersCarryTheBytesEachWayAndOnBothQueues) {
  const std::size_t bytes = (std::size_t(1) << 20) + 12;
  TransferProbe probe(runtime(), bytes);
  auto pattern = [&](std::uint8_t* p, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i)
      p[i] = static_cast<std::uint8_t>(i * 7 + seed + i / 251);
  };
  auto holds = [&](const std::uint8_t* p, unsigned seed) {
    for (std::size_t i = 0; i < bytes; ++i)
      if (p[i] != static_cast<std::uint8_t>(i * 7 + seed + i / 251)) return false;
    return true;
  };
  // Queue 0: pinned up, pageable down; then pageable up, pinned down.
  pattern(probe.host(true, 0), 1);
  probe.run(TransferKind::to_device_pinned);
  std::memset(probe.host(false, 0), 0, bytes);
  probe.run(TransferKind::from_device_pageable);
  EXPECT_TRUE(holds(probe.host(false, 0), 1));
  pattern(probe.host(false, 0), 2);
  probe.run(TransferKind::to_device_pageable);
  std::memset(probe.host(true, 0), 0, bytes);
  probe.run(TransferKind::from_device_pinned);
  EXPECT_TRUE(holds(probe.host(true, 0), 2));
  // Two uploads at once fill both queues' buffers; both ways at once reads queue 1's back.
  pattern(probe.host(true, 0), 3);
  pattern(probe.host(true, 1), 4);
  probe.run(TransferKind::two_to_device_pinned);
  std::memset(probe.host(false, 0), 0, bytes);
  probe.run(TransferKind::from_device_pageable);
  EXPECT_TRUE(holds(probe.host(false, 0), 3));
  // Both ways at once: queue 0 uploads a new pattern while queue 1 reads its buffer back.
  std::memset(probe.host(true, 1), 0, bytes);
  pattern(probe.host(true, 0), 5);
  probe.run(TransferKind::both_ways_pinned);
  EXPECT_TRUE(holds(probe.host(true, 1), 4));
  std::memset(probe.host(false, 0), 0, bytes);
  probe.run(TransferKind::from_device_pageable);
  EXPECT_TRUE(holds(probe.host(false, 0), 5));
  EXPECT_EQ(probe.moved(TransferKind::to_device_pinned), bytes);
  EXPECT_EQ(probe.moved(TransferKind::both_ways_pinned), 2 * bytes);
}

}  // namespace
}  // namespace blurtool
