// Counts heap allocations: the mpt binary replaces the global operator new and delete
// (alloc_counter.cpp), and SQLite's allocator is wrapped through its configuration hook.
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

// Operator new calls since the program started.
AllocCount heap_allocations() noexcept;

// Routes SQLite's allocations through a counter. REQUIRES: called before SQLite is first
// used. Returns false if SQLite refused the configuration.
bool count_sqlite_allocations() noexcept;
AllocCount sqlite_allocations() noexcept;

}  // namespace mpt::cli
