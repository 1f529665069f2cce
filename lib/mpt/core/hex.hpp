// Hex in and out. Output is lowercase with a 0x prefix; input is strict.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <string_view>

namespace mpt {

// The value of a hex digit (either case), or 0xff for any other byte.
inline constexpr std::array<uint8_t, 256> kHexDigitValue = [] {
    std::array<uint8_t, 256> t{};
    for (int c = 0; c < 256; ++c) {
        t[c] = c >= '0' && c <= '9'   ? static_cast<uint8_t>(c - '0')
               : c >= 'a' && c <= 'f' ? static_cast<uint8_t>(c - 'a' + 10)
               : c >= 'A' && c <= 'F' ? static_cast<uint8_t>(c - 'A' + 10)
                                      : 0xff;
    }
    return t;
}();

// Decodes the 16 hex digits (either case) at in into 8 bytes at out, 16 at a time; false,
// with nothing written, when any of the 16 is no hex digit. The readers' hot loops take it
// before going on a digit pair at a time.
[[gnu::always_inline]] inline bool decode_hex16(const char* in, uint8_t* out) noexcept {
    if constexpr (std::endian::native != std::endian::little) {
        return false;
    } else {
        using Chars = signed char __attribute__((vector_size(16)));
        using Pairs = uint16_t __attribute__((vector_size(16)));
        using Bytes = uint8_t __attribute__((vector_size(8)));
        Chars c;
        std::memcpy(&c, in, 16);
        // A byte of 0x80 or more is negative here, and neither a digit nor a letter.
        const Chars lower = c | 0x20;
        const Chars letter = (lower >= 'a') & (lower <= 'f');
        const Chars ok = ((c >= '0') & (c <= '9')) | letter;
        uint64_t all[2];
        std::memcpy(all, &ok, 16);
        if ((all[0] & all[1]) != ~uint64_t{0}) return false;
        const Chars value = (c & 0x0f) + (letter & 9);
        // Each 16-bit lane holds a digit pair, the first digit in its low byte.
        Pairs pairs;
        std::memcpy(&pairs, &value, 16);
        const Bytes bytes = __builtin_convertvector(pairs << 4 | pairs >> 8, Bytes);
        std::memcpy(out, &bytes, 8);
        return true;
    }
}

// Decodes digits (hex digits of either case, an even number of them, no prefix) into
// digits.size() / 2 bytes at out; false when any is no hex digit (the bytes written are then
// not to be used). The digit-pair loop of every reader that knows its digits' count.
[[gnu::always_inline]] inline bool decode_hex_pairs(std::string_view digits,
                                                    uint8_t* out) noexcept {
    // Sixteen digits at a time while they are digits; the pairs left (or the block that is
    // not all digits) one pair at a time, where a byte that is no digit maps to 0xff, so one
    // test of all the values or-ed together finds any.
    size_t i = 0;
    for (; i + 16 <= digits.size() && decode_hex16(digits.data() + i, out); i += 16) out += 8;
    uint8_t bad = 0;
    for (; i + 1 < digits.size(); i += 2) {
        const uint8_t hi = kHexDigitValue[static_cast<uint8_t>(digits[i])];
        const uint8_t lo = kHexDigitValue[static_cast<uint8_t>(digits[i + 1])];
        bad |= hi | lo;
        *out++ = static_cast<uint8_t>(hi << 4 | (lo & 0x0f));
    }
    return bad <= 0x0f;
}

// "0x" followed by two lowercase digits per byte.
std::string to_hex(bytes_view b);

// Appends the lowercase digits of b, without a prefix.
void append_hex_digits(std::string& out, bytes_view b);

// How a character that is no hex digit is named in errors: "a space", 'g', "byte 0x0a".
std::string describe_non_hex(char c);

// Parses hex digits of even length, with or without a 0x prefix. Upper and lower case are
// accepted. An odd length or a non-hex character is Errc::bad_hex.
Result<bytes> from_hex(std::string_view s);

// Like from_hex, for exactly 32 bytes.
Result<Hash256> hash_from_hex(std::string_view s);

}  // namespace mpt
