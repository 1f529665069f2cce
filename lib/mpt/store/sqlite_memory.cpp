#include <sqlite3.h>

#include <mpt/store/sqlite_memory.hpp>

#include <atomic>

namespace mpt {
namespace {

std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_bytes{0};
sqlite3_mem_methods g_base;

void* counted_malloc(int n) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    return g_base.xMalloc(n);
}

void* counted_realloc(void* p, int n) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    return g_base.xRealloc(p, n);
}

}  // namespace

bool count_sqlite_allocations() noexcept {
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &g_base) != SQLITE_OK) return false;
    sqlite3_mem_methods wrapped = g_base;
    wrapped.xMalloc = counted_malloc;
    wrapped.xRealloc = counted_realloc;
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &wrapped) == SQLITE_OK;
}

SqliteAllocCount sqlite_allocations() noexcept {
    return {g_allocs.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}

const char* sqlite_version() noexcept { return sqlite3_libversion(); }

}  // namespace mpt
