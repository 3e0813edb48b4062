// GCC function multi-versioning for the host filters' loops.
#pragma once

/// Marks a function whose loops GCC compiles twice on x86-64, for AVX2 and for the baseline,
/// the CPU's version chosen as the program loads (target_clones): 8-lane float and integer
/// vectors where AVX2 is there, without requiring it. Empty elsewhere.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BLURTOOL_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define BLURTOOL_MULTIVERSION
#endif
