// The lexical layer shared by the library's strict JSON readers (kv_input.cpp for key/value
// documents, json_tree.cpp for the tree that proof documents and the nested documents are read
// through, state/ for state and changes documents): whitespace, string escapes, and errors that
// name a line and column. Internal to the library.
//
// Thread safety: a lexer is used by one thread.
#pragma once

#include <algorithm>
#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/core/hex.hpp>
#include <span>
#include <string>
#include <string_view>

namespace mpt {

// What the JSON readers say of such a text.
inline constexpr std::string_view kSqliteNotADocument =
    "an SQLite database (a trie file?), not a document";

}  // namespace mpt

namespace mpt::json_detail {

// The UTF-8 byte order mark, which RFC 8259 (section 8.1) lets a parser ignore before a
// document; the readers of pieces and of streams, which cannot take without_bom, test for it.
inline constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// text without a leading byte order mark: every document reader starts from here, so lines
// and columns count from after it.
inline std::string_view without_bom(std::string_view text) noexcept {
    if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
    return text;
}

// JSON's white space (RFC 8259): space, tab, line feed, carriage return.
inline bool is_ws(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Where a stream of input stops, one rule for every reader of pipes (read_file, the key/value
// stream): at its first byte that no JSON text holds (a control character other than tab,
// line feed and carriage return), so that an endless stream such as /dev/zero ends there
// instead of filling memory; at its first byte after white space and a byte order mark when
// that opens no object, array, string or text dump (`yes x | mpt root -`); and in a text dump
// (`0x<key> 0x<value>` lines) at its first byte that is not a hex digit, 'x' or white space.
// The byte it stops at is kept, for the parser to report where it stands.
class StreamStop {
public:
    // For a stream of which `before` was read already (opened if it holds more than white
    // space).
    explicit StreamStop(std::string_view before = {}) noexcept
        : opened_(std::find_if_not(before.begin(), before.end(), is_ws) != before.end()) {}

    // The byte the stream stops at among its next bytes [begin, end), or end; at_start: they
    // are its first.
    const char* stop(const char* begin, const char* end, bool at_start) noexcept {
        if (at_start &&
            std::string_view(begin, static_cast<size_t>(end - begin)).starts_with(kByteOrderMark)) {
            begin += kByteOrderMark.size();
        }
        // A trie file piped in stops after its header, which the reader then names.
        if (at_start &&
            is_sqlite_database(std::string_view(begin, static_cast<size_t>(end - begin)))) {
            opened_ = true;
            return begin + kSqliteHeader.size();
        }
        const char* bad = std::find_if_not(begin, end, json_byte);
        if (!opened_) {
            const char* first = std::find_if_not(begin, bad, is_ws);
            if (first != bad) {
                opened_ = true;
                text_ = *first == '0';
                if (*first != '{' && *first != '[' && *first != '"' && !text_) return first;
            }
        }
        return text_ ? std::find_if_not(begin, bad, dump_byte) : bad;
    }

private:
    static bool json_byte(char c) noexcept {
        return static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r';
    }
    static bool dump_byte(char c) noexcept {
        return kHexDigitValue[static_cast<uint8_t>(c)] <= 0x0f || c == 'x' || is_ws(c);
    }

    bool opened_;
    bool text_ = false;
};

// The first '"', '\\', control character or non-ASCII byte in [p, end), or end: the end of a
// plain run of a JSON string, which needs no decoding and no UTF-8 check.
const char* scan_plain(const char* p, const char* end) noexcept;

// Ok unless two of names differ only in case ("balance", "Balance"); then Errc::bad_input
// naming both. A reader that matches member names in any case, as Go's encoding/json does,
// would take either of them, where mpt takes the one spelled as its field: the document has
// no one reading. A name given twice alike is not this (the last one counts, for every
// reader).
Status check_case_twins(std::span<const std::string_view> names);

// A position in one JSON text. The text outlives the lexer.
class JsonLexer {
protected:
    explicit JsonLexer(std::string_view text) noexcept
        : p_(text.data()), begin_(text.data()), end_(text.data() + text.size()) {}

    void skip_ws() noexcept {
        while (p_ != end_ && is_ws(*p_)) ++p_;
    }
    char peek() const noexcept { return p_ == end_ ? '\0' : *p_; }

    // REQUIRES: p_ at the '[' or '{' of a container that close ends. Moves past it, and past
    // close too when the container is empty (true).
    bool open_is_empty(char close) noexcept {
        ++p_;
        skip_ws();
        if (peek() != close) return false;
        ++p_;
        return true;
    }

    // After an item of an array or object that close ends: moves past a ',' (true: another
    // item follows) or past close (false).
    Result<bool> next_item(char close) {
        skip_ws();
        if (peek() == ',') {
            ++p_;
            return true;
        }
        if (peek() == close) {
            ++p_;
            return false;
        }
        return fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    }

    // REQUIRES: p_ at the opening quote of a string. Decodes the whole string, escapes
    // included, into scratch_ and moves past its closing quote. A string must be UTF-8
    // (RFC 8259 section 8.1; RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
    Status lex_string();

    // REQUIRES: p_ at the opening quote of a string. Moves past it; its content: a view into
    // the text when it has no escapes (the common case, found without decoding), else into
    // scratch_ (valid until the next string; lex_string).
    Result<std::string_view> string_content() {
        const char* s = p_ + 1;
        const char* q = scan_plain(s, end_);
        if (q != end_ && *q == '"') {
            p_ = q + 1;
            return std::string_view(s, static_cast<size_t>(q - s));
        }
        MPT_RETURN_IF_ERROR(lex_string());
        return std::string_view(scratch_);
    }

    // REQUIRES: p_ at a backslash inside a string. Appends the escaped character to scratch_
    // (a \u escape as UTF-8; a surrogate must be paired) and moves past the escape.
    Status parse_escape();

    // REQUIRES: p_ at a non-ASCII byte inside a string. Appends one UTF-8 sequence to scratch_
    // and moves past it.
    Status take_utf8();

    // Deeper nesting is refused rather than followed (skip_value recurses once per level).
    static constexpr int kMaxDepth = 256;

    // Checks one value of any kind (RFC 8259) at nesting depth `depth` and moves past it.
    Status skip_value(int depth);
    // REQUIRES: p_ at the opening quote of a string. Checks it and moves past it; the content
    // is in scratch_ only when it held escapes or non-ASCII bytes.
    Status skip_string();
    // RFC 8259: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    Status skip_number();
    // Past trailing whitespace, the end of the text; else an error.
    Status expect_end() {
        skip_ws();
        if (p_ != end_) return fail("unexpected data after the document");
        return {};
    }

    // "line L, column C" of at (columns count bytes from 1).
    std::string where(const char* at) const;
    // Errc::bad_json, where(at) and what; a document that is an SQLite database (a trie file
    // given where a document goes) fails at its first byte, and is named as such instead.
    Error fail_at(const char* at, const std::string& what) const;
    Error fail(const std::string& what) const { return fail_at(p_, what); }

    const char* p_;
    const char* begin_;
    const char* end_;
    // Where begin_ stands in the whole document, for a text that is a piece of one: its
    // line, and bytes into that line.
    size_t base_line_ = 1;
    size_t base_column_ = 0;
    std::string scratch_;  // a string with escapes, unescaped

private:
    Result<uint32_t> parse_hex4();
    Status skip_container(char close, int depth);
    Status skip_literal(std::string_view word);
};

}  // namespace mpt::json_detail
