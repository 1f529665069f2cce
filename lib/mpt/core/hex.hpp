// Hex in and out. Output is lowercase with a 0x prefix; input is strict.
#pragma once

#include <array>
#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

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
