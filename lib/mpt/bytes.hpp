// Byte aliases and the library's error type.
//
// Thread safety: everything here is a value type; distinct objects may be used from
// different threads freely.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace mpt {

using bytes = std::vector<uint8_t>;
using bytes_view = std::span<const uint8_t>;
using Hash256 = std::array<uint8_t, 32>;

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

// Asks for huge pages (2 MiB) under the n bytes at p, for a large buffer before it is first
// written: where a buffer is read in random order, 4 KiB pages make nearly every read a TLB
// miss, and filling it takes a page fault every 4 KiB (for 1M pairs, 37,500 faults in the
// key/value reader against 3,000). Only whole huge pages inside the range are affected;
// where the kernel has none to give, nothing changes.
void advise_huge_pages(const void* p, size_t n) noexcept;

// One flat error enum for the whole library. The command line maps each code to an exit
// status through category().
enum class Errc : uint8_t {
    // Malformed input: exit 2.
    bad_hex,
    bad_json,
    bad_input,
    // RLP decoding (proof documents, stored rows, vectors).
    rlp_truncated,
    rlp_non_canonical,
    rlp_trailing_bytes,
    rlp_expected_list,
    rlp_expected_string,
    bad_node,
    bad_compact_path,
    // A negative answer: exit 1.
    invalid_proof,
    // Storage: exit 3.
    storage_open,
    storage_not_mpt,
    storage_version,
    storage_missing_node,
    storage_hash_mismatch,
    storage_bad_node,  // a stored row whose hash checks but which is no valid node
    storage_io,
    storage_readonly,
    storage_full,
    no_such_trie,
    trie_kind_mismatch,
    // Internal: exit 4.
    internal,
};

enum class ErrorCategory : uint8_t { invalid = 1, input = 2, storage = 3, internal = 4 };

ErrorCategory category(Errc e) noexcept;
std::string_view errc_name(Errc e) noexcept;

struct Error {
    Errc code;
    std::string detail;  // what and where, for a human; may be empty

    std::string message() const;
};

// An expected-like result: either a T or an Error. std::expected is C++23.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
    Result(Errc code, std::string detail = {}) : v_(Error{code, std::move(detail)}) {}

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    // REQUIRES: ok().
    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    // REQUIRES: !ok().
    const Error& error() const& { return std::get<1>(v_); }
    Error&& error() && { return std::get<1>(std::move(v_)); }

private:
    std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT
    Result(Errc code, std::string detail = {}) : error_{code, std::move(detail)}, failed_(true) {}

    bool ok() const noexcept { return !failed_; }
    explicit operator bool() const noexcept { return ok(); }
    const Error& error() const& { return error_; }
    Error&& error() && { return std::move(error_); }

private:
    Error error_{Errc::internal, {}};
    bool failed_ = false;
};

using Status = Result<void>;

}  // namespace mpt

// Propagates an error from an expression yielding a Result; binds the value otherwise.
#define MPT_CONCAT_INNER(a, b) a##b
#define MPT_CONCAT(a, b) MPT_CONCAT_INNER(a, b)
#define MPT_TRY_IMPL(tmp, decl, expr)             \
    auto tmp = (expr);                            \
    if (!tmp.ok()) return std::move(tmp).error(); \
    decl = std::move(tmp).value()
#define MPT_TRY(decl, expr) MPT_TRY_IMPL(MPT_CONCAT(mpt_try_, __LINE__), decl, expr)
#define MPT_CHECK(expr)                                               \
    do {                                                              \
        auto mpt_status_ = (expr);                                    \
        if (!mpt_status_.ok()) return std::move(mpt_status_).error(); \
    } while (0)
