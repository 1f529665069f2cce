#include <mpt/hex.hpp>
#include <mpt/keccak.hpp>
#include <mpt/kv_input.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace mpt {

Result<std::string> read_file(const std::string& path) {
    const bool use_stdin = path == "-";
    std::FILE* f = use_stdin ? stdin : std::fopen(path.c_str(), "rb");
    if (f == nullptr) return {Errc::bad_input, path + ": " + std::strerror(errno)};
    std::string data;
    char buf[1 << 16];
    while (true) {
        const size_t n = std::fread(buf, 1, sizeof buf, f);
        data.append(buf, n);
        if (n < sizeof buf) break;
    }
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    if (!use_stdin) std::fclose(f);
    if (failed) return {Errc::bad_input, path + ": " + std::strerror(err)};
    return data;
}

Result<bytes> decode_kv_string(std::string_view s) {
    if (s.size() >= 2 && s[0] == '0' && s[1] == 'x') return from_hex(s);
    return bytes(as_bytes(s).begin(), as_bytes(s).end());
}

namespace {

int hex_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void append_utf8(bytes& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<uint8_t>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<uint8_t>(0xc0 | cp >> 6));
        out.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<uint8_t>(0xe0 | cp >> 12));
        out.push_back(static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3f)));
    } else {
        out.push_back(static_cast<uint8_t>(0xf0 | cp >> 18));
        out.push_back(static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3f)));
        out.push_back(static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3f)));
        out.push_back(static_cast<uint8_t>(0x80 | (cp & 0x3f)));
    }
}

}  // namespace

class KvParser {
public:
    explicit KvParser(std::string_view text) : p_(text.data()), begin_(text.data()),
                                               end_(text.data() + text.size()) {}

    Result<KvInput> parse() {
        // Room for the decoded bytes: never more than the text itself.
        out_.arena_.reserve(static_cast<size_t>(end_ - p_));
        skip_ws();
        if (p_ == end_) return fail("empty document; expected an object or an array");
        if (*p_ == '{') {
            MPT_CHECK(parse_object());
        } else if (*p_ == '[') {
            out_.ordered_ = true;
            MPT_CHECK(parse_array());
        } else {
            return fail("expected an object or an array of [key, value] pairs");
        }
        skip_ws();
        if (p_ != end_) return fail("unexpected data after the document");
        return std::move(out_);
    }

private:
    Status parse_object() {
        ++p_;
        skip_ws();
        if (peek() == '}') {
            ++p_;
            return {};
        }
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            KvInput::Entry e{};
            MPT_CHECK(parse_entry_string(e.key_off, e.key_len, "key"));
            skip_ws();
            if (peek() != ':') return fail("expected ':'");
            ++p_;
            skip_ws();
            MPT_CHECK(parse_value(e));
            out_.entries_.push_back(e);
            skip_ws();
            if (peek() == ',') {
                ++p_;
                continue;
            }
            if (peek() == '}') {
                ++p_;
                return {};
            }
            return fail("expected ',' or '}'");
        }
    }

    Status parse_array() {
        ++p_;
        skip_ws();
        if (peek() == ']') {
            ++p_;
            return {};
        }
        while (true) {
            skip_ws();
            if (peek() != '[') return fail("expected a [key, value] pair");
            ++p_;
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            KvInput::Entry e{};
            MPT_CHECK(parse_entry_string(e.key_off, e.key_len, "key"));
            skip_ws();
            if (peek() != ',') return fail("expected ',' between key and value");
            ++p_;
            skip_ws();
            MPT_CHECK(parse_value(e));
            skip_ws();
            if (peek() != ']') return fail("expected ']' after the value: a pair has two items");
            ++p_;
            out_.entries_.push_back(e);
            skip_ws();
            if (peek() == ',') {
                ++p_;
                continue;
            }
            if (peek() == ']') {
                ++p_;
                return {};
            }
            return fail("expected ',' or ']'");
        }
    }

    Status parse_value(KvInput::Entry& e) {
        if (peek() == '"') return parse_entry_string(e.value_off, e.value_len, "value");
        if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
            p_ += 4;
            e.value_off = out_.arena_.size();
            e.value_len = 0;
            return {};
        }
        return fail("value is not a string or null");
    }

    // Parses a JSON string at p_ and appends its bytes (hex-decoded for 0x strings).
    Status parse_entry_string(size_t& off, uint32_t& len, const char* what) {
        const char* start = p_;
        ++p_;
        bytes& arena = out_.arena_;
        off = arena.size();
        // Fast path: no escapes, the common case.
        const char* q = p_;
        while (q != end_ && *q != '"' && *q != '\\' && static_cast<unsigned char>(*q) >= 0x20) ++q;
        if (q != end_ && *q == '"') {
            const std::string_view s(p_, static_cast<size_t>(q - p_));
            p_ = q + 1;
            MPT_CHECK(append_decoded(s, start, what));
        } else {
            scratch_.clear();
            while (true) {
                if (p_ == end_) return fail_at(start, "unterminated string");
                const char c = *p_;
                if (c == '"') {
                    ++p_;
                    break;
                }
                if (static_cast<unsigned char>(c) < 0x20) {
                    return fail("control character in a string");
                }
                if (c != '\\') {
                    scratch_.push_back(static_cast<uint8_t>(c));
                    ++p_;
                    continue;
                }
                MPT_CHECK(parse_escape());
            }
            MPT_CHECK(append_decoded(as_chars(scratch_), start, what));
        }
        const size_t n = arena.size() - off;
        if (n > UINT32_MAX) return fail_at(start, "string too long");
        len = static_cast<uint32_t>(n);
        return {};
    }

    Status append_decoded(std::string_view s, const char* start, const char* what) {
        bytes& arena = out_.arena_;
        if (s.size() >= 2 && s[0] == '0' && s[1] == 'x') {
            const size_t digits = s.size() - 2;
            if (digits % 2 != 0) {
                return entry_error(start, what, "odd number of hex digits");
            }
            const size_t at = arena.size();
            arena.resize(at + digits / 2);
            for (size_t i = 0; i < digits / 2; ++i) {
                const int hi = hex_value(s[2 + 2 * i]);
                const int lo = hex_value(s[3 + 2 * i]);
                if ((hi | lo) < 0) {
                    arena.resize(at);
                    return entry_error(start, what, "not a hex digit");
                }
                arena[at + i] = static_cast<uint8_t>(hi << 4 | lo);
            }
            return {};
        }
        arena.insert(arena.end(), s.begin(), s.end());
        return {};
    }

    Status parse_escape() {
        ++p_;  // the backslash
        if (p_ == end_) return fail("unterminated escape");
        const char c = *p_++;
        switch (c) {
            case '"': scratch_.push_back('"'); return {};
            case '\\': scratch_.push_back('\\'); return {};
            case '/': scratch_.push_back('/'); return {};
            case 'b': scratch_.push_back('\b'); return {};
            case 'f': scratch_.push_back('\f'); return {};
            case 'n': scratch_.push_back('\n'); return {};
            case 'r': scratch_.push_back('\r'); return {};
            case 't': scratch_.push_back('\t'); return {};
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

    Result<uint32_t> parse_hex4() {
        if (end_ - p_ < 4) return fail("truncated \\u escape");
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const int d = hex_value(p_[i]);
            if (d < 0) return fail("invalid \\u escape");
            v = v << 4 | static_cast<uint32_t>(d);
        }
        p_ += 4;
        return v;
    }

    void skip_ws() noexcept {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    char peek() const noexcept { return p_ == end_ ? '\0' : *p_; }

    std::string where(const char* at) const {
        size_t line = 1;
        const char* line_start = begin_;
        for (const char* c = begin_; c < at; ++c) {
            if (*c == '\n') {
                ++line;
                line_start = c + 1;
            }
        }
        return "line " + std::to_string(line) + ", column " +
               std::to_string(at - line_start + 1);
    }

    Error fail_at(const char* at, const std::string& what) const {
        return {Errc::bad_json, where(at) + ": " + what};
    }
    Error fail(const std::string& what) const { return fail_at(p_, what); }

    Error entry_error(const char* at, const char* what, const std::string& why) const {
        return {Errc::bad_hex, "entry " + std::to_string(out_.entries_.size()) + " " + what +
                                   " (" + where(at) + "): " + why};
    }

    const char* p_;
    const char* begin_;
    const char* end_;
    bytes scratch_;
    KvInput out_;
};

Result<KvInput> parse_kv(std::string_view text) { return KvParser(text).parse(); }

SortedPairs sorted_final_pairs(const KvInput& input, bool secure) {
    SortedPairs out;
    const size_t n = input.size();
    std::vector<KvPair> all(n);
    if (secure) out.hashed_keys.resize(n);
    for (size_t i = 0; i < n; ++i) {
        all[i] = input[i];
        if (secure) {
            out.hashed_keys[i] = keccak256(all[i].key);
            all[i].key = out.hashed_keys[i];
        }
    }
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto key_less = [&](uint32_t a, uint32_t b) {
        const int c = compare_bytes(all[a].key, all[b].key);
        return c != 0 ? c < 0 : a < b;  // equal keys: later writes last
    };
    std::sort(order.begin(), order.end(), key_less);
    out.pairs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const KvPair& p = all[order[i]];
        const bool last_of_key = i + 1 == n || !bytes_equal(p.key, all[order[i + 1]].key);
        if (last_of_key && !p.value.empty()) out.pairs.push_back(p);
    }
    return out;
}

}  // namespace mpt
