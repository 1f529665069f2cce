#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_format.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/stream_limit.hpp>
#include <optional>
#include <utility>

namespace mpt {

namespace {

// Decodes the hex digit pairs from q on into o, 16 digits at a time while it can: stops at
// the first pair that is not two digits, or with fewer than two bytes left before end.
// Returns where it stopped; o is past what it wrote. The JSON strings' and the dump lines'
// hot loop.
[[gnu::always_inline]] inline const char* decode_hex_run(const char* q, const char* end,
                                                         uint8_t*& o) noexcept {
    for (; end - q >= 16 && decode_hex16(q, o); q += 16) o += 8;
    while (end - q >= 2) {
        const uint8_t hi = kHexDigitValue[static_cast<uint8_t>(q[0])];
        const uint8_t lo = kHexDigitValue[static_cast<uint8_t>(q[1])];
        if ((hi | lo) > 0x0f) break;
        *o++ = static_cast<uint8_t>(hi << 4 | lo);
        q += 2;
    }
    return q;
}

}  // namespace

Result<bytes> decode_kv_string(std::string_view s) {
    if (s.size() >= 2 && s[0] == '0' && s[1] == 'x') return from_hex(s);
    return bytes(as_bytes(s).begin(), as_bytes(s).end());
}

using json_detail::scan_plain;

class KvParser : json_detail::JsonLexer {
public:
    explicit KvParser(std::string_view text) : JsonLexer(text) {}

    Result<KvInput> parse() {
        // The decoded bytes of a string never outnumber its characters in the text (two hex
        // digits make a byte, an escape of 2 to 12 characters at most 4), so one arena the
        // size of the text holds them all and writes need no bounds checks. Pages the
        // decoding never reaches are never touched.
        const size_t arena_bytes = std::max<size_t>(text_size(), 1);
        out_.arenas_.push_back({std::unique_ptr<uint8_t[]>(new uint8_t[arena_bytes]), arena_bytes});
        w_ = out_.arenas_.back().bytes.get();
        advise_huge_pages(w_, text_size());
        // Room for an entry per 32 bytes of text (a pair of 32-byte hex strings takes 140): a
        // larger document grows the vector; the unused part of this is never touched.
        reserve_huge(out_.entries_, text_size() / 32 + 1);
        skip_ws();
        if (!piece_.started) {
            if (p_ == end_) {
                // The text form of the empty trie's dump: no lines.
                out_.ordered_ = true;
                return std::move(out_);
            }
            const KvFormat* format = kv_format_of(*p_);
            if (format == nullptr ||
                !std::string_view(p_, static_cast<size_t>(end_ - p_)).starts_with(format->opener)) {
                return fail(
                    "expected an object or an array of [key, value] pairs, or `0x<key> 0x<value>` "
                    "lines");
            }
            piece_.ordered = format->ordered;
            piece_.text = format->shape == KvShape::text;
            piece_.started = true;
            if (!piece_.text) piece_.closed = open_is_empty(piece_.ordered ? ']' : '}');
        }
        out_.ordered_ = piece_.ordered;
        if (piece_.text) {
            // Lines to the end of the text; a piece of a text dump ends after a line feed.
            MPT_RETURN_IF_ERROR(parse_lines());
            return std::move(out_);
        }
        if (!piece_.closed) {
            MPT_RETURN_IF_ERROR(piece_.ordered ? parse_array() : parse_object());
            if (!piece_.closed) return std::move(out_);  // a piece that ends after a ','
        }
        skip_ws();
        if (p_ != end_) return fail("unexpected data after the document");
        return std::move(out_);
    }

    // A piece of a document (parse_kv_piece): the place of its first byte, and whether the
    // document goes on after it.
    void resume(const kv_detail::KvPieceState& state, bool last) {
        piece_ = state;
        last_ = last;
        base_line_ = state.line;
        base_column_ = state.column;
    }
    const kv_detail::KvPieceState& piece() const noexcept { return piece_; }

private:
    size_t text_size() const noexcept { return static_cast<size_t>(end_ - begin_); }

    // Entries up to the closing bracket, or up to the end of a piece that ends after a ','.
    bool piece_ends() const noexcept { return !last_ && p_ == end_; }

    Status parse_object() {
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            KvInput::Entry e{};
            MPT_RETURN_IF_ERROR(parse_entry_string(e.key, e.key_len, "key"));
            skip_ws();
            if (peek() != ':') return fail("expected ':'");
            ++p_;
            skip_ws();
            MPT_RETURN_IF_ERROR(parse_value(e));
            MPT_RETURN_IF_ERROR(push(e));
            MPT_TRY(const bool more, next_item('}'));
            if (!more) piece_.closed = true;
            if (!more || piece_ends()) return {};
        }
    }

    Status parse_array() {
        while (true) {
            skip_ws();
            if (peek() != '[') return fail("expected a [key, value] pair");
            ++p_;
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            KvInput::Entry e{};
            MPT_RETURN_IF_ERROR(parse_entry_string(e.key, e.key_len, "key"));
            skip_ws();
            if (peek() != ',') return fail("expected ',' between key and value");
            ++p_;
            skip_ws();
            MPT_RETURN_IF_ERROR(parse_value(e));
            skip_ws();
            if (peek() != ']') return fail("expected ']' after the value: a pair has two items");
            ++p_;
            MPT_RETURN_IF_ERROR(push(e));
            MPT_TRY(const bool more, next_item(']'));
            if (!more) piece_.closed = true;
            if (!more || piece_ends()) return {};
        }
    }

    // The text form of `mpt dump`: a line `0x<key> 0x<value>` a pair, applied in order.
    // Blanks (spaces, tabs) separate and may end a line, which ends with LF or CRLF (the last
    // one may have none); blank lines are skipped. Errors name line and column as the JSON
    // errors do: Errc::bad_input for the shape, Errc::bad_hex for the digits. Kept out of
    // parse(), which the JSON documents pass through too.
    [[gnu::noinline]] Status parse_lines() {
        const auto blank = [&] { return p_ != end_ && (*p_ == ' ' || *p_ == '\t'); };
        while (true) {
            skip_ws();
            if (p_ == end_) return {};
            KvInput::Entry e{};
            MPT_RETURN_IF_ERROR(parse_line_hex(e.key, e.key_len, "key"));
            // parse_line_hex stopped at a blank, a line end or the end of the text.
            if (!blank()) return line_error(p_, "expected a blank and 0x<value> after the key");
            while (blank()) ++p_;
            const uint8_t* value = nullptr;  // right after the key (KvInput::Entry)
            MPT_RETURN_IF_ERROR(parse_line_hex(value, e.value_len, "value"));
            MPT_ASSERT(value == e.key + e.key_len);
            while (blank()) ++p_;
            if (end_ - p_ >= 2 && p_[0] == '\r' && p_[1] == '\n') ++p_;
            if (p_ != end_ && *p_ != '\n') {
                return line_error(p_, "expected the end of the line after the value");
            }
            MPT_RETURN_IF_ERROR(push(e));
        }
    }

    // 0x and hex digits at p_, decoded into the arena; stops at the first byte that is no
    // digit, which the caller judges.
    Status parse_line_hex(const uint8_t*& out, uint32_t& len, const char* what) {
        const char* start = p_;
        if (end_ - p_ < 2 || p_[0] != '0' || p_[1] != 'x') {
            return line_error(p_, std::string("expected 0x<") + what + ">");
        }
        const char* q = p_ + 2;
        uint8_t* const first = w_;
        uint8_t* o = first;
        q = decode_hex_run(q, end_, o);
        const auto separator = [](char c) {
            return c == ' ' || c == '\t' || c == '\n' || c == '\r';
        };
        if (q != end_ && kHexDigitValue[static_cast<uint8_t>(*q)] <= 0x0f) {
            // One digit left over: odd, unless something that is no digit follows it directly.
            ++q;
        }
        if (q != end_ && !separator(*q)) {
            return line_hex_error(q, what, "not a hex digit (" + describe_non_hex(*q) + ")");
        }
        if ((q - p_) % 2 != 0) return line_hex_error(start, what, "odd number of hex digits");
        p_ = q;
        // Not through finish_string, which is inlined into the JSON paths.
        const size_t n = static_cast<size_t>(o - first);
        if (n > UINT32_MAX) return line_error(start, std::string(what) + " too long");
        out = first;
        len = static_cast<uint32_t>(n);
        w_ = o;
        return {};
    }

    Error line_error(const char* at, const std::string& why) const {
        return {Errc::bad_input, where(at) + ": " + why};
    }
    Error line_hex_error(const char* at, const char* what, const std::string& why) const {
        return {Errc::bad_hex, where(at) + ": " + what + ": " + why};
    }

    Status push(const KvInput::Entry& e) {
        // Entries are numbered by uint32_t in SortedPairCursor.
        if (out_.entries_.size() == UINT32_MAX) return fail("too many entries");
        out_.entries_.push_back(e);
        return {};
    }

    // The value's bytes go right after the key's (KvInput::Entry).
    Status parse_value(KvInput::Entry& e) {
        if (peek() == '"') {
            const uint8_t* value = nullptr;
            MPT_RETURN_IF_ERROR(parse_entry_string(value, e.value_len, "value"));
            MPT_ASSERT(value == e.key + e.key_len);
            return {};
        }
        if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
            p_ += 4;
            e.value_len = 0;
            return {};
        }
        // An object where a value goes: most often a state document given as key/value input.
        if (peek() == '{') {
            return fail(
                "value is an object, not a string or null (a state document or a test file? "
                "--state and --vectors read them)");
        }
        return fail("value is not a string or null");
    }

    // Parses a JSON string at p_ and appends its bytes (hex-decoded for 0x strings) to the
    // arena. Two fast paths cover strings without escapes; anything else, errors included,
    // takes the general path from the start of the string.
    // The hot path of every JSON key/value read; inlined, as finish_string below, because GCC
    // stopped doing so by itself when the text form joined this class (callgrind: 0.6% more
    // instructions for `mpt root`, against 0.2% fewer so).
    [[gnu::always_inline]] Status parse_entry_string(const uint8_t*& out, uint32_t& len,
                                                     const char* what) {
        const char* start = p_;
        const char* s = p_ + 1;
        uint8_t* const first = w_;
        if (end_ - s >= 2 && s[0] == '0' && s[1] == 'x') {
            // Hex digits decoded while scanning; the closing quote ends the run.
            const char* q = s + 2;
            uint8_t* o = first;
            q = decode_hex_run(q, end_, o);
            if (q != end_ && *q == '"') {
                p_ = q + 1;
                return finish_string(out, len, first, o, start);
            }
        } else {
            const char* q = scan_plain(s, end_);
            if (q != end_ && *q == '"') {
                const size_t n = static_cast<size_t>(q - s);
                std::memcpy(first, s, n);
                p_ = q + 1;
                return finish_string(out, len, first, first + n, start);
            }
        }
        return parse_string_general(out, len, what);
    }

    [[gnu::always_inline]] Status finish_string(const uint8_t*& out, uint32_t& len, uint8_t* first,
                                                uint8_t* last, const char* start) {
        const size_t n = static_cast<size_t>(last - first);
        if (n > UINT32_MAX) return fail_at(start, "string too long");
        out = first;
        len = static_cast<uint32_t>(n);
        w_ = last;
        return {};
    }

    Status parse_string_general(const uint8_t*& out, uint32_t& len, const char* what) {
        const char* start = p_;
        MPT_RETURN_IF_ERROR(lex_string());
        uint8_t* const first = w_;
        MPT_TRY(uint8_t * last, put_decoded(first, scratch_, start, what));
        return finish_string(out, len, first, last, start);
    }

    // Writes s, hex-decoded when it starts with 0x, at o; returns the end of what it wrote.
    Result<uint8_t*> put_decoded(uint8_t* o, std::string_view s, const char* start,
                                 const char* what) const {
        if (s.size() >= 2 && s[0] == '0' && s[1] == 'x') {
            const size_t digits = s.size() - 2;
            // A character that is no digit is named first: "0x01 " has a trailing space, not
            // an odd number of digits.
            for (size_t i = 2; i < s.size(); ++i) {
                if (kHexDigitValue[static_cast<uint8_t>(s[i])] > 0x0f) {
                    return entry_error(start, what,
                                       "not a hex digit at offset " + std::to_string(i - 2) + " (" +
                                           describe_non_hex(s[i]) + ")");
                }
            }
            if (digits % 2 != 0) return entry_error(start, what, "odd number of hex digits");
            decode_hex_pairs(s.substr(2), o);
            return o + digits / 2;
        }
        if (!s.empty()) std::memcpy(o, s.data(), s.size());
        return o + s.size();
    }

    Error entry_error(const char* at, const char* what, const std::string& why) const {
        return {Errc::bad_hex, "entry " +
                                   std::to_string(piece_.entries + out_.entries_.size() + 1) + " " +
                                   what + " (" + where(at) + "): " + why};
    }

    uint8_t* w_ = nullptr;  // the arena's write position
    KvInput out_;
    kv_detail::KvPieceState piece_;
    bool last_ = true;
};

Result<KvInput> parse_kv(std::string_view text) {
    return KvParser(json_detail::without_bom(text)).parse();
}

void KvInput::append(KvInput&& other) {
    for (auto& a : other.arenas_) arenas_.push_back(std::move(a));
    if (more_.empty() && other.more_.empty()) {
        more_ = std::move(other.entries_);
    } else {
        more_.insert(more_.end(), other.entries_.begin(), other.entries_.end());
        more_.insert(more_.end(), other.more_.begin(), other.more_.end());
    }
    other = KvInput();
}

size_t KvInput::arena_of(const uint8_t* p) const noexcept {
    // A key ends before its arena does (a string decodes into fewer bytes than its text
    // takes), so an empty key's address is inside its arena too.
    const std::less<const uint8_t*> below;
    for (size_t i = 0; i < arenas_.size(); ++i) {
        const uint8_t* first = arenas_[i].bytes.get();
        if (!below(p, first) && below(p, first + arenas_[i].size)) return i;
    }
    return arenas_.size();
}

bool KvInput::before(const uint8_t* p, const uint8_t* q) const noexcept {
    const size_t a = arena_of(p);
    const size_t b = arena_of(q);
    return a != b ? a < b : std::less<const uint8_t*>()(p, q);
}

namespace {

// Where text may be cut into two pieces for parse_kv_piece: after the first ',' at depth 1
// (in a text dump, lines, the first line feed) at or past at; 0 when there is none before
// its end. A JSON document is read from its start for this, to know what is inside strings.
size_t find_cut(std::string_view text, size_t at, bool lines) {
    if (at >= text.size()) return 0;
    const char* const begin = text.data();
    const char* const end = begin + text.size();
    const char* cut = nullptr;
    if (lines) {
        const void* nl = std::memchr(begin + at, '\n', text.size() - at);
        if (nl != nullptr) cut = static_cast<const char*>(nl) + 1;
    } else {
        kv_detail::CutScan cuts;
        static_cast<void>(cuts.scan(begin, begin + at, false));
        cut = cuts.scan(begin + at, end, true);
    }
    return cut == nullptr || cut == end ? 0 : static_cast<size_t>(cut - begin);
}

// A guess at find_cut's answer for a JSON document that reads only from at: the first ','
// past it that stands, white space aside, between the last byte of an entry and the first of
// the next as a document of this shape has them: a string or null before and a string after
// (an object), ']' before and '[' after (an array of pairs). Such bytes can stand inside a
// string too, where the first piece's parse, which must end just after a ',' between two
// entries, then fails. 0 when there is none.
size_t guess_cut(std::string_view text, size_t at, KvShape shape) {
    const bool pairs = shape == KvShape::pairs;
    for (size_t i = at; i < text.size(); ++i) {
        if (text[i] != ',') continue;
        size_t before = i;
        while (before > at && json_detail::is_ws(text[before - 1])) --before;
        if (before == at) continue;
        const char last = text[before - 1];
        if (pairs ? last != ']' : last != '"' && last != 'l') continue;
        size_t after = i + 1;
        while (after < text.size() && json_detail::is_ws(text[after])) ++after;
        if (after < text.size() && text[after] == (pairs ? '[' : '"')) return i + 1;
    }
    return 0;
}

// The document parsed in two pieces cut at cut, on this thread and one other; nullopt when
// either piece fails or the two do not agree (as where the cut is no place between entries).
std::optional<KvInput> parse_halves(std::string_view text, size_t cut,
                                    const kv_detail::KvPieceState& second) {
    kv_detail::KvPieceState state = second;
    auto tail = std::async(std::launch::async, [text, cut, &state] {
        return kv_detail::parse_kv_piece(text.substr(cut), true, state);
    });
    kv_detail::KvPieceState first;
    Result<KvInput> head = kv_detail::parse_kv_piece(text.substr(0, cut), false, first);
    Result<KvInput> rest = tail.get();
    if (!head || !rest || first.closed || first.ordered != second.ordered ||
        first.text != second.text || head->size() + rest->size() > UINT32_MAX) {
        return std::nullopt;
    }
    head->append(std::move(*rest));
    return std::move(*head);
}

}  // namespace

Result<KvInput> parse_kv(std::string_view text, unsigned threads, size_t split_bytes) {
    if (threads < 2 || text.size() < split_bytes) return parse_kv(text);
    const KvFormat* format = sniff_kv_format(text);
    if (format == nullptr) return parse_kv(text);
    // The second piece's state as the first piece leaves it, told by the document's first
    // byte, and checked once both are parsed. Its place in the document (line, column,
    // entries before it) would only name errors, and an error in either piece sends the
    // document to parse_kv, for its own error.
    kv_detail::KvPieceState second;
    second.started = true;
    second.text = format->shape == KvShape::text;
    second.ordered = format->ordered;
    const size_t middle = text.size() / 2;
    // A JSON document is cut first where guess_cut puts it: reading the first half to find the
    // cut takes half as long as parsing it, on one thread. Where the guess fails, at the cut
    // read from the start; where that fails too, whole.
    const size_t guess =
        format->lines ? find_cut(text, middle, true) : guess_cut(text, middle, format->shape);
    if (guess != 0) {
        if (std::optional<KvInput> both = parse_halves(text, guess, second))
            return std::move(*both);
    }
    if (!format->lines) {
        const size_t cut = find_cut(text, middle, false);
        if (cut != 0 && cut != guess) {
            if (std::optional<KvInput> both = parse_halves(text, cut, second)) {
                return std::move(*both);
            }
        }
    }
    return parse_kv(text);
}

namespace kv_detail {

const char* CutScan::scan(const char* p, const char* end, bool first) noexcept {
    const char* cut = nullptr;
    while (p != end) {
        if (in_string) {
            if (escaped) {
                escaped = false;
                ++p;
                continue;
            }
            const void* q = std::memchr(p, '"', static_cast<size_t>(end - p));
            const char* const quote = q != nullptr ? static_cast<const char*>(q) : end;
            // A backslash before the quote escapes it, or something before it.
            const void* bs = std::memchr(p, '\\', static_cast<size_t>(quote - p));
            if (bs != nullptr) {
                p = static_cast<const char*>(bs) + 1;
                escaped = true;
                continue;
            }
            if (quote == end) return cut;
            in_string = false;
            p = quote + 1;
            continue;
        }
        const char c = *p++;
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            ++depth;
        } else if (c == ']' || c == '}') {
            --depth;
        } else if (c == ',' && depth == 1) {
            cut = p;
            if (first) return cut;
        }
    }
    return cut;
}

Result<KvInput> parse_kv_piece(std::string_view text, bool last, KvPieceState& state) {
    KvParser parser(state.started ? text : json_detail::without_bom(text));
    parser.resume(state, last);
    MPT_TRY(KvInput piece, parser.parse());
    const bool started = parser.piece().started;
    state.started = started;
    state.ordered = parser.piece().ordered;
    state.closed = parser.piece().closed;
    state.text = parser.piece().text;
    state.entries += piece.size();
    return piece;
}

}  // namespace kv_detail

}  // namespace mpt
