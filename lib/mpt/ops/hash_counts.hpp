// The hashing a process does, counted: mpt root --stats, and the roofline of
// docs/PERFORMANCE.md (permutations times the time of one).
//
// Thread safety: every thread's hashes are counted, each on counters of its own; the
// functions may be called from any thread, keccak_counting(true) and (false) only while no
// other thread hashes (core/keccak.hpp, set_keccak_observer).
#pragma once

#include <cstdint>

namespace mpt {

// What has been hashed since counting began: the inputs, their bytes, and the
// Keccak-f[1600] permutations they took (an input of n bytes takes n / 136 + 1; a lane of a
// batch kernel counts as one input).
struct KeccakCounts {
    uint64_t hashes = 0;
    uint64_t bytes = 0;
    uint64_t permutations = 0;
};

// Turns counting on or off. The counts stay; turning it on does not clear them. On, each
// hash adds to its thread's counters.
void keccak_counting(bool on) noexcept;
// The counts of every thread, those that have ended included.
KeccakCounts keccak_counts() noexcept;

}  // namespace mpt
