// SQLite as a process sees it: its version, and a count of the allocations it makes (for
// mpt count-allocs, which counts operator new itself).
//
// Thread safety: the counters are relaxed atomics; a snapshot taken while other threads use
// SQLite is approximate. count_sqlite_allocations configures SQLite for the whole process.
#pragma once

#include <cstdint>

namespace mpt {

struct SqliteAllocCount {
    uint64_t allocs = 0;  // calls of SQLite's malloc and realloc
    uint64_t bytes = 0;   // bytes they asked for
};

// Routes SQLite's allocations through a counter. REQUIRES: called before SQLite is first
// used. Returns false if SQLite refused the configuration.
bool count_sqlite_allocations() noexcept;

// What SQLite has allocated since count_sqlite_allocations.
SqliteAllocCount sqlite_allocations() noexcept;

// The version of the SQLite library linked in, as "3.40.1".
const char* sqlite_version() noexcept;

}  // namespace mpt
