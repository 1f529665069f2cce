// Counts heap allocations: the mpt binary replaces the global operator new and delete
// (alloc_counter.cpp). SQLite's own are counted by the store (store/sqlite_memory.hpp).
//
// Thread safety: the counters are relaxed atomics; snapshots taken on one thread while
// others allocate are approximate.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpt::cli {

struct AllocCount {
    uint64_t allocs = 0;
    uint64_t bytes = 0;
};

// Starts counting: until then (and in every command but count-allocs) operator new counts
// nothing.
void count_heap_allocations() noexcept;

// Operator new calls since count_heap_allocations.
AllocCount heap_allocations() noexcept;

}  // namespace mpt::cli
