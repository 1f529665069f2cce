#include <algorithm>
#include <bit>
#include <cstring>
#include <mpt/input/json_lexer.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mpt::json_detail {

namespace {

// name as Go's encoding/json compares member names: ASCII letters in one case, and the two
// other characters that fold to ASCII letters (KELVIN SIGN to k, LATIN SMALL LETTER LONG S to
// s).
std::string folded(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (name.substr(i).starts_with("\xE2\x84\xAA")) {
            out += 'k';
            i += 2;
        } else if (name.substr(i).starts_with("\xC5\xBF")) {
            out += 's';
            i += 1;
        } else {
            out += c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
        }
    }
    return out;
}

}  // namespace

Status check_case_twins(std::span<const std::string_view> names) {
    if (names.size() < 2) return {};
    std::vector<std::pair<std::string, std::string_view>> keyed;
    keyed.reserve(names.size());
    for (const std::string_view n : names) keyed.emplace_back(folded(n), n);
    // Names that fold alike sort next to each other; among them, two that differ do too.
    std::sort(keyed.begin(), keyed.end());
    for (size_t i = 1; i < keyed.size(); ++i) {
        if (keyed[i].first == keyed[i - 1].first && keyed[i].second != keyed[i - 1].second) {
            return Error{Errc::bad_input, "members \"" + std::string(keyed[i - 1].second) +
                                              "\" and \"" + std::string(keyed[i].second) +
                                              "\" differ only in case (a reader that ignores case "
                                              "would take either)"};
        }
    }
    return {};
}
namespace {

void append_utf8(std::string& out, uint32_t cp) {
    const auto byte = [&](uint32_t v) { out.push_back(static_cast<char>(v)); };
    if (cp < 0x80) {
        byte(cp);
    } else if (cp < 0x800) {
        byte(0xc0 | cp >> 6);
        byte(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        byte(0xe0 | cp >> 12);
        byte(0x80 | ((cp >> 6) & 0x3f));
        byte(0x80 | (cp & 0x3f));
    } else {
        byte(0xf0 | cp >> 18);
        byte(0x80 | ((cp >> 12) & 0x3f));
        byte(0x80 | ((cp >> 6) & 0x3f));
        byte(0x80 | (cp & 0x3f));
    }
}

// A nonzero value when one of the 8 bytes of w (as loaded little-endian) is '"', '\\', a
// control character or a non-ASCII byte, the bytes that end a plain run of a JSON string;
// its lowest set bit is in the first such byte. The first three terms are the classic "has
// a zero byte" test, (x - 0x01..) & ~x & 0x80.., whose lowest flag is exact (a borrow only
// runs upwards from a true hit, and a byte with its high bit set flags itself).
inline uint64_t special_bytes(uint64_t w) noexcept {
    constexpr uint64_t kOnes = 0x0101010101010101;
    constexpr uint64_t kHigh = 0x8080808080808080;
    const uint64_t quote = w ^ (kOnes * '"');
    const uint64_t backslash = w ^ (kOnes * '\\');
    return (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
            ((w - kOnes * 0x20) & ~w) | w) &
           kHigh;
}

bool is_special(char c) noexcept {
    const auto u = static_cast<unsigned char>(c);
    return c == '"' || c == '\\' || u < 0x20 || u >= 0x80;
}

}  // namespace

const char* scan_plain(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
    // Sixteen bytes a compare: a byte below 0x20 as a signed byte is a control character or
    // non-ASCII (0x80 and up are negative).
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    for (; end - p >= 16; p += 16) {
        // Half a page ahead: the hardware's own prefetch stops at each 4 KiB page, and a
        // document read for the first time comes from memory (a witness's 56 MB JSON tree
        // 22.3 -> 16.0 ms; 1024 ahead 18.1, 4096 16.0). A prefetch past the end is dropped.
        __builtin_prefetch(p + 2048);
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                         _mm_cmplt_epi8(v, space));
        if (const int m = _mm_movemask_epi8(hit))
            return p + std::countr_zero(static_cast<unsigned>(m));
    }
#endif
    if constexpr (std::endian::native == std::endian::little) {
        for (; end - p >= 8; p += 8) {
            uint64_t w;
            std::memcpy(&w, p, 8);
            if (const uint64_t m = special_bytes(w)) return p + std::countr_zero(m) / 8;
        }
    }
    while (p != end && !is_special(*p)) ++p;
    return p;
}

Status JsonLexer::lex_string() {
    const char* start = p_;
    ++p_;
    scratch_.clear();
    while (true) {
        const char* q = scan_plain(p_, end_);
        scratch_.append(p_, q);
        p_ = q;
        if (p_ == end_) return fail_at(start, "unterminated string");
        if (*p_ == '"') {
            ++p_;
            return {};
        }
        const auto c = static_cast<unsigned char>(*p_);
        if (c < 0x20) return fail("control character in a string");
        if (c >= 0x80) {
            MPT_RETURN_IF_ERROR(take_utf8());
        } else {
            MPT_RETURN_IF_ERROR(parse_escape());
        }
    }
}

Status JsonLexer::take_utf8() {
    const auto* u = reinterpret_cast<const unsigned char*>(p_);
    const size_t left = static_cast<size_t>(end_ - p_);
    // The lead byte gives the length; C0, C1 and F5..FF lead only overlong or out-of-range
    // forms, and a continuation byte leads nothing.
    size_t n = 0;
    uint32_t cp = 0;
    if (u[0] >= 0xc2 && u[0] <= 0xdf) {
        n = 2;
        cp = u[0] & 0x1fu;
    } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
        n = 3;
        cp = u[0] & 0x0fu;
    } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
        n = 4;
        cp = u[0] & 0x07u;
    } else {
        return fail("invalid UTF-8 in a string");
    }
    for (size_t i = 1; i < n; ++i) {
        if (i >= left || (u[i] & 0xc0) != 0x80) return fail("invalid UTF-8 in a string");
        cp = cp << 6 | (u[i] & 0x3fu);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
        return fail("invalid UTF-8 in a string");
    }
    scratch_.append(p_, n);
    p_ += n;
    return {};
}

Status JsonLexer::parse_escape() {
    ++p_;  // the backslash
    if (p_ == end_) return fail("unterminated escape");
    const char c = *p_++;
    switch (c) {
        case '"':
        case '\\':
        case '/':
            scratch_.push_back(c);
            return {};
        case 'b':
            scratch_.push_back('\b');
            return {};
        case 'f':
            scratch_.push_back('\f');
            return {};
        case 'n':
            scratch_.push_back('\n');
            return {};
        case 'r':
            scratch_.push_back('\r');
            return {};
        case 't':
            scratch_.push_back('\t');
            return {};
        case 'u': {
            MPT_TRY(uint32_t cp, parse_hex4());
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
                    return fail("unpaired surrogate in \\u escape");
                }
                p_ += 2;
                MPT_TRY(uint32_t lo, parse_hex4());
                if (lo < 0xdc00 || lo > 0xdfff) return fail("unpaired surrogate in \\u escape");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                return fail("unpaired surrogate in \\u escape");
            }
            append_utf8(scratch_, cp);
            return {};
        }
        default:
            --p_;
            return fail("invalid escape");
    }
}

Result<uint32_t> JsonLexer::parse_hex4() {
    // The digits the text holds first: a byte that is no hex digit is the error wherever the
    // text ends, so that a piece of a document cut inside the escape fails as the whole does.
    const ptrdiff_t held = std::min<ptrdiff_t>(end_ - p_, 4);
    uint32_t v = 0;
    for (ptrdiff_t i = 0; i < held; ++i) {
        const uint8_t d = kHexDigitValue[static_cast<uint8_t>(p_[i])];
        if (d > 0x0f) return fail("invalid \\u escape");
        v = v << 4 | d;
    }
    if (held < 4) return fail("truncated \\u escape");
    p_ += 4;
    return v;
}

Status JsonLexer::skip_string() {
    const char* q = scan_plain(p_ + 1, end_);
    if (q != end_ && *q == '"') {
        p_ = q + 1;
        return {};
    }
    return lex_string();
}

Status JsonLexer::skip_value(int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
    switch (peek()) {
        case '"':
            return skip_string();
        case '{':
            return skip_container('}', depth);
        case '[':
            return skip_container(']', depth);
        case 't':
            return skip_literal("true");
        case 'f':
            return skip_literal("false");
        case 'n':
            return skip_literal("null");
        default:
            return skip_number();
    }
}

Status JsonLexer::skip_container(char close, int depth) {
    const bool object = close == '}';
    if (open_is_empty(close)) return {};
    while (true) {
        skip_ws();
        if (object) {
            if (peek() != '"') return fail("expected a string key");
            MPT_RETURN_IF_ERROR(skip_string());
            skip_ws();
            if (peek() != ':') return fail("expected ':'");
            ++p_;
            skip_ws();
        }
        MPT_RETURN_IF_ERROR(skip_value(depth + 1));
        MPT_TRY(const bool more, next_item(close));
        if (!more) return {};
    }
}

Status JsonLexer::skip_literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() ||
        std::memcmp(p_, word.data(), word.size()) != 0) {
        return fail("invalid literal");
    }
    p_ += word.size();
    return {};
}

Status JsonLexer::skip_number() {
    const auto digit = [&] { return p_ != end_ && *p_ >= '0' && *p_ <= '9'; };
    const auto digits = [&] {
        if (!digit()) return false;
        while (digit()) ++p_;
        return true;
    };
    if (peek() == '-') ++p_;
    if (peek() == '0') {
        ++p_;
    } else if (!digits()) {
        return fail(p_ == end_ ? "unexpected end of the document" : "expected a value");
    }
    if (peek() == '.') {
        ++p_;
        if (!digits()) return fail("expected a digit");
    }
    if (peek() == 'e' || peek() == 'E') {
        ++p_;
        if (peek() == '+' || peek() == '-') ++p_;
        if (!digits()) return fail("expected a digit");
    }
    return {};
}

Error JsonLexer::fail_at(const char* at, const std::string& what) const {
    const bool document_start = at == begin_ && base_line_ == 1 && base_column_ == 0;
    if (document_start && is_sqlite_database(std::string_view(begin_, end_))) {
        return {Errc::bad_json, std::string(kSqliteNotADocument)};
    }
    return {Errc::bad_json, where(at) + ": " + what};
}

std::string JsonLexer::where(const char* at) const {
    size_t line = base_line_;
    const char* line_start = begin_;
    size_t column = base_column_;
    for (const char* c = begin_; c < at; ++c) {
        if (*c == '\n') {
            ++line;
            line_start = c + 1;
            column = 0;
        }
    }
    column += static_cast<size_t>(at - line_start);
    return "line " + std::to_string(line) + ", column " + std::to_string(column + 1);
}

}  // namespace mpt::json_detail
