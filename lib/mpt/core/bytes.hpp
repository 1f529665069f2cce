// Byte aliases and the helpers every layer shares.
//
// Thread safety: everything here is a value type; distinct objects may be used from
// different threads freely.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpt {

using bytes = std::vector<uint8_t>;
using bytes_view = std::span<const uint8_t>;
using Hash256 = std::array<uint8_t, 32>;

// A hash table's hash of a Hash256: keccak256 output is uniform, so its first 8 bytes are as
// good a hash as any.
struct Hash256Hasher {
    size_t operator()(const Hash256& h) const noexcept {
        uint64_t x;
        std::memcpy(&x, h.data(), sizeof x);
        return static_cast<size_t>(x);
    }
};

inline bytes_view as_bytes(std::string_view s) noexcept {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view as_chars(bytes_view b) noexcept {
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// The number of leading bytes a and b share, compared 8 at a time.
inline size_t common_byte_prefix(bytes_view a, bytes_view b) noexcept {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        std::memcpy(&x, a.data() + i, 8);
        std::memcpy(&y, b.data() + i, 8);
        if (x != y) {
            // The first differing byte is the lowest in memory order.
            const uint64_t d = x ^ y;
            if constexpr (std::endian::native == std::endian::little) {
                return i + static_cast<size_t>(std::countr_zero(d)) / 8;
            } else {
                return i + static_cast<size_t>(std::countl_zero(d)) / 8;
            }
        }
    }
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

// Byte-wise order, shorter first on a common prefix: the order of trie keys and of
// database path keys.
inline int compare_bytes(bytes_view a, bytes_view b) noexcept {
    const size_t i = common_byte_prefix(a, b);
    if (i < a.size() && i < b.size()) return a[i] < b[i] ? -1 : 1;
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}
inline bool bytes_less(bytes_view a, bytes_view b) noexcept { return compare_bytes(a, b) < 0; }
inline bool bytes_equal(bytes_view a, bytes_view b) noexcept {
    return a.size() == b.size() && compare_bytes(a, b) == 0;
}

// The first bytes of every SQLite database, its NUL included.
inline constexpr std::string_view kSqliteHeader("SQLite format 3\0", 16);

// Whether text starts as an SQLite database does: a trie file given where a document (or RLP)
// goes, which the readers name as such rather than as text that fails at its first byte.
inline bool is_sqlite_database(std::string_view text) noexcept {
    return text.starts_with(kSqliteHeader);
}

// Whether the on/off switch in the environment variable name is on: unset or any value but
// "off" (the command line refuses values other than on and off before the library reads one).
// Read once per call: callers on a hot path keep the answer.
bool env_switch_on(const char* name) noexcept;

// Asks for huge pages (2 MiB) under the n bytes at p, for a large buffer before it is first
// written: where a buffer is read in random order, 4 KiB pages make nearly every read a TLB
// miss, and filling it takes a page fault every 4 KiB (for 1M pairs, 37,500 faults in the
// key/value reader against 3,000). Only whole huge pages inside the range are affected;
// where the kernel has none to give, nothing changes. Not under MPT_HUGE_PAGES=off: on a
// virtual machine that gives its free memory back to the host, a huge page touched first
// after an idle spell costs more than the TLB misses it spares a single run
// (docs/PERFORMANCE.md).
void advise_huge_pages(const void* p, size_t n) noexcept;

// The allocator Alloc, except that a container grown without values (resize) leaves the new
// elements default-initialized, which for bytes is not at all: for a buffer that is read or
// written into next.
template <typename Alloc>
struct NoFill : Alloc {
    using Alloc::Alloc;
    template <typename U>
    struct rebind {  // NOLINT(readability-identifier-naming): the allocator protocol's name
        using other = NoFill<typename std::allocator_traits<Alloc>::template rebind_alloc<U>>;
    };
    template <typename U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

// Reserves room for n elements in v, on huge pages where the kernel has them.
template <typename T>
void reserve_huge(std::vector<T>& v, size_t n) {
    v.reserve(n);
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

struct KvPair {
    bytes_view key;
    bytes_view value;  // empty: delete
};

}  // namespace mpt
