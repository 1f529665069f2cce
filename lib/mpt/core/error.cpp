#include <sys/resource.h>
#include <mpt/core/error.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mpt {

ErrorCategory category(Errc e) noexcept {
    switch (e) {
        case Errc::invalid_proof:
            return ErrorCategory::invalid;
        case Errc::storage_open:
        case Errc::storage_not_mpt:
        case Errc::storage_version:
        case Errc::storage_missing_node:
        case Errc::storage_hash_mismatch:
        case Errc::storage_bad_node:
        case Errc::storage_io:
        case Errc::storage_readonly:
        case Errc::storage_full:
        case Errc::storage_bad_record:
        case Errc::storage_damaged:
        case Errc::no_such_trie:
        case Errc::trie_kind_mismatch:
            return ErrorCategory::storage;
        case Errc::internal:
        case Errc::out_of_memory:
            return ErrorCategory::internal;
        default:
            return ErrorCategory::input;
    }
}

std::string_view errc_name(Errc e) noexcept {
    switch (e) {
        case Errc::bad_hex:
            return "bad hex";
        case Errc::bad_json:
            return "malformed JSON";
        case Errc::bad_input:
            return "bad input";
        case Errc::rlp_truncated:
            return "RLP truncated";
        case Errc::rlp_non_canonical:
            return "non-canonical RLP";
        case Errc::rlp_trailing_bytes:
            return "trailing bytes after RLP item";
        case Errc::rlp_expected_list:
            return "RLP: expected a list";
        case Errc::rlp_expected_string:
            return "RLP: expected a string";
        case Errc::bad_node:
            return "malformed trie node";
        case Errc::bad_compact_path:
            return "malformed compact path";
        case Errc::input_too_large:
            return "input too large";
        case Errc::invalid_proof:
            return "invalid proof";
        case Errc::storage_open:
            return "cannot open trie file";
        case Errc::storage_not_mpt:
            return "not an mpt trie file";
        case Errc::storage_version:
            return "unsupported trie file version";
        case Errc::storage_missing_node:
            return "missing node";
        case Errc::storage_hash_mismatch:
            return "node hash mismatch";
        case Errc::storage_bad_node:
            return "malformed stored node";
        case Errc::storage_io:
            return "storage I/O error";
        case Errc::storage_readonly:
            return "trie file is read-only";
        case Errc::storage_full:
            return "disk or database full";
        case Errc::storage_bad_record:
            return "damaged trie record";
        case Errc::storage_damaged:
            return "damaged trie file";
        case Errc::no_such_trie:
            return "no such trie";
        case Errc::trie_kind_mismatch:
            return "secure and plain tries cannot be mixed";
        case Errc::internal:
            return "internal error";
        case Errc::out_of_memory:
            return "out of memory";
    }
    return "unknown error";
}

std::string Error::context() const {
    std::string c = trie;
    if (!path.empty()) c += (c.empty() ? "path " : ", path ") + path;
    if (!detail.empty()) c += (c.empty() ? "" : ": ") + detail;
    return c;
}

std::string Error::message() const {
    std::string m{errc_name(code)};
    const std::string c = context();
    if (!c.empty()) m += ": " + c;
    return m;
}

Error file_error(Errc code, std::string file, std::string detail) {
    Error e{code, std::move(detail)};
    e.file = std::move(file);
    return e;
}

Error input_error(std::string file, int err) {
    // No name to put before the reason: say that it was empty, not that no file is there.
    if (file.empty() && err == ENOENT) return Error{Errc::bad_input, "an empty file name"};
    if (err == EMFILE || err == ENFILE) {
        struct rlimit limit {};
        std::string detail = std::strerror(err);
        if (err == EMFILE && ::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
            detail += " (this process may have " + std::to_string(limit.rlim_cur) +
                      "; ulimit -n raises it)";
        }
        return file_error(Errc::storage_io, std::move(file), std::move(detail));
    }
    if (err == ENOMEM) return file_error(Errc::out_of_memory, std::move(file), std::strerror(err));
    return file_error(Errc::bad_input, std::move(file), std::strerror(err));
}

void assertion_failed(const char* expr, const char* file, int line) noexcept {
    std::fprintf(stderr, "mpt: assertion failed: %s (%s:%d)\n", expr, file, line);
    std::abort();
}

}  // namespace mpt
