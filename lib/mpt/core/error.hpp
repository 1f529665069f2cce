// The library's error type: one flat error enum, an Error with its place, and Result<T>.
//
// Library code returns errors as values; data from a file, a proof or the command line never
// triggers an assertion. MPT_ASSERT states what the code itself guarantees (a REQUIRES: line,
// an invariant): it is checked in Debug and sanitizer builds (where NDEBUG is not defined, or
// MPT_ASSERTIONS is), so the fuzzers and sanitizer runs check the contracts, and compiles to
// nothing in Release.
//
// Thread safety: value types; distinct objects may be used from different threads freely.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mpt {

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
    input_too_large,  // an entry or a stream past a documented limit
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
    storage_bad_record,  // a tries-table row whose kind, root or checksum is damaged
    storage_damaged,     // a file's check found problems, which its report lists
    no_such_trie,
    trie_kind_mismatch,
    // Internal, or out of a resource the process needs (memory, threads): exit 4.
    internal,
    out_of_memory,
};

enum class ErrorCategory : uint8_t { invalid = 1, input = 2, storage = 3, internal = 4 };

ErrorCategory category(Errc e) noexcept;
std::string_view errc_name(Errc e) noexcept;

struct Error {
    Error(Errc c, std::string d = {}) : code(c), detail(std::move(d)) {}  // NOLINT

    Errc code;
    std::string detail;  // why, for a human; may be empty
    // Where, each filled once by the code that knows it; empty when unknown.
    std::string file;  // the file the error concerns
    std::string trie;  // as its reader names it ("trie main"); a diff names the side first
    std::string path;  // the nibble path in the trie, as path_string() writes it

    // "<trie>, path <path>: <detail>", leaving out what is empty (the file is the caller's).
    std::string context() const;
    // "<kind>: <context>".
    std::string message() const;
};

// An error about a file: the file goes in Error::file, the detail says the rest.
Error file_error(Errc code, std::string file, std::string detail = {});
// An input file that could not be opened or read, err its errno: Errc::bad_input with
// strerror(err), but for the process's own limits, which are no fault of the input: out of
// descriptors (EMFILE, ENFILE) is Errc::storage_io naming the limit, ENOMEM out_of_memory;
// an empty name that names no file says so.
Error input_error(std::string file, int err);

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

// Result<void>: success or an Error. Success holds no Error: a Status is made and dropped
// on every step of the hot paths.
template <>
class [[nodiscard]] Result<void> {
public:
    // Not defaulted: `return {};` would then zero the whole object (the room of an Error)
    // before constructing it, on every success.
    // NOLINTNEXTLINE(modernize-use-equals-default)
    Result() noexcept {}
    Result(Error error) : error_(std::move(error)) {}  // NOLINT
    Result(Errc code, std::string detail = {}) : error_(Error{code, std::move(detail)}) {}

    bool ok() const noexcept { return !error_.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
    // REQUIRES: !ok().
    const Error& error() const& { return *error_; }
    Error&& error() && { return std::move(*error_); }

private:
    std::optional<Error> error_;
};

using Status = Result<void>;

[[noreturn]] void assertion_failed(const char* expr, const char* file, int line) noexcept;

}  // namespace mpt

// Propagates an error from an expression yielding a Result; binds the value otherwise.
// NOLINTBEGIN(bugprone-macro-parentheses): decl is a declaration and tmp a name, neither an
// expression that parentheses could protect.
#define MPT_CONCAT_INNER(a, b) a##b
#define MPT_CONCAT(a, b) MPT_CONCAT_INNER(a, b)
#define MPT_TRY_IMPL(tmp, decl, expr)             \
    auto tmp = (expr);                            \
    if (!tmp.ok()) return std::move(tmp).error(); \
    decl = std::move(tmp).value()
#define MPT_TRY(decl, expr) MPT_TRY_IMPL(MPT_CONCAT(mpt_try_, __LINE__), decl, expr)
// NOLINTEND(bugprone-macro-parentheses)
#define MPT_RETURN_IF_ERROR(expr)                                     \
    do {                                                              \
        auto mpt_status_ = (expr);                                    \
        if (!mpt_status_.ok()) return std::move(mpt_status_).error(); \
    } while (0)

#if !defined(NDEBUG) || defined(MPT_ASSERTIONS)
#define MPT_ASSERT(cond) \
    ((cond) ? static_cast<void>(0) : ::mpt::assertion_failed(#cond, __FILE__, __LINE__))
#else
#define MPT_ASSERT(cond) static_cast<void>(0)
#endif
