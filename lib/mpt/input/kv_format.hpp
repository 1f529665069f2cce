// The shapes of key/value input (kv_input.hpp), told by a document's first bytes after a byte
// order mark and white space: the one table that the whole-document reader, the two-half
// parse, the reader in pieces and the command line's sniffing of a file consult.
//
// Thread safety: constant data and pure functions.
#pragma once

#include <mpt/input/json_lexer.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace mpt {

enum class KvShape : uint8_t {
    object,  // {"key": "value", ...}
    pairs,   // [["key", "value"], ...], applied in order
    text,    // `0x<key> 0x<value>` lines, as mpt dump prints them, applied in order
};

struct KvFormat {
    KvShape shape;
    std::string_view opener;  // the first bytes of such a document; its first byte tells it
    bool ordered;             // its pairs apply in order: the last write of a key wins
    bool lines;               // a piece may end after a line feed, not after a ',' between
                              // two entries at depth 1
};

inline constexpr KvFormat kKvFormats[] = {
    {KvShape::object, "{", false, false},
    {KvShape::pairs, "[", true, false},
    {KvShape::text, "0x", true, true},
};

// The format whose opener starts with byte c, or nullptr.
inline const KvFormat* kv_format_of(char c) noexcept {
    for (const KvFormat& f : kKvFormats) {
        if (f.opener.front() == c) return &f;
    }
    return nullptr;
}

// The format of a document from its first bytes (a byte order mark and white space skipped),
// when they begin its opener whole; nullptr otherwise, and for a document of white space only.
inline const KvFormat* sniff_kv_format(std::string_view document) noexcept {
    const std::string_view body = json_detail::without_bom(document);
    const auto first = std::find_if_not(body.begin(), body.end(), json_detail::is_ws);
    if (first == body.end()) return nullptr;
    const KvFormat* f = kv_format_of(*first);
    if (f == nullptr ||
        !body.substr(static_cast<size_t>(first - body.begin())).starts_with(f->opener)) {
        return nullptr;
    }
    return f;
}

// sniff_kv_format of a file's first bytes, however much white space precedes the opener;
// nullptr also for a file that cannot be opened or read.
const KvFormat* sniff_kv_file(const std::string& path);

}  // namespace mpt
