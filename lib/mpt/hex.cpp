#include <mpt/hex.hpp>

#include <cstring>

namespace mpt {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

// -1 for a character that is not a hex digit.
constexpr int digit_value(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

void append_hex_digits(std::string& out, bytes_view b) {
    const size_t start = out.size();
    out.resize(start + 2 * b.size());
    char* p = out.data() + start;
    for (const uint8_t x : b) {
        *p++ = kDigits[x >> 4];
        *p++ = kDigits[x & 0xf];
    }
}

std::string to_hex(bytes_view b) {
    std::string out;
    out.reserve(2 + 2 * b.size());
    out += "0x";
    append_hex_digits(out, b);
    return out;
}

Result<bytes> from_hex(std::string_view s) {
    if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
    if (s.size() % 2 != 0) return {Errc::bad_hex, "odd number of hex digits"};
    bytes out(s.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
        const int hi = digit_value(s[2 * i]);
        const int lo = digit_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            const size_t at = 2 * i + (hi < 0 ? 0 : 1);
            return {Errc::bad_hex, "not a hex digit at offset " + std::to_string(at)};
        }
        out[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return out;
}

Result<Hash256> hash_from_hex(std::string_view s) {
    MPT_TRY(bytes b, from_hex(s));
    if (b.size() != 32) {
        return {Errc::bad_hex, "expected 32 bytes, got " + std::to_string(b.size())};
    }
    Hash256 h;
    std::memcpy(h.data(), b.data(), 32);
    return h;
}

}  // namespace mpt
