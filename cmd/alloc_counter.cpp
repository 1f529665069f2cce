#include "alloc_counter.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_bytes{0};
std::atomic<uint64_t> g_sqlite_allocs{0};
std::atomic<uint64_t> g_sqlite_bytes{0};

void* counted_alloc(std::size_t n) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}

void* counted_aligned_alloc(std::size_t n, std::size_t align) {
    g_allocs.fetch_add(1, std::memory_order_relaxed);
    g_bytes.fetch_add(n, std::memory_order_relaxed);
    const std::size_t rounded = (n + align - 1) / align * align;
    if (void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded)) return p;
    throw std::bad_alloc();
}

sqlite3_mem_methods g_sqlite_base;

void* sqlite_malloc(int n) {
    g_sqlite_allocs.fetch_add(1, std::memory_order_relaxed);
    g_sqlite_bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    return g_sqlite_base.xMalloc(n);
}

void* sqlite_realloc(void* p, int n) {
    g_sqlite_allocs.fetch_add(1, std::memory_order_relaxed);
    g_sqlite_bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    return g_sqlite_base.xRealloc(p, n);
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
    return counted_aligned_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return counted_aligned_alloc(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace mpt::cli {

AllocCount heap_allocations() noexcept {
    return {g_allocs.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}

bool count_sqlite_allocations() noexcept {
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &g_sqlite_base) != SQLITE_OK) return false;
    sqlite3_mem_methods wrapped = g_sqlite_base;
    wrapped.xMalloc = sqlite_malloc;
    wrapped.xRealloc = sqlite_realloc;
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &wrapped) == SQLITE_OK;
}

AllocCount sqlite_allocations() noexcept {
    return {g_sqlite_allocs.load(std::memory_order_relaxed),
            g_sqlite_bytes.load(std::memory_order_relaxed)};
}

}  // namespace mpt::cli
