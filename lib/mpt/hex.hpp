// Hex in and out. Output is lowercase with a 0x prefix; input is strict.
#pragma once

#include <mpt/bytes.hpp>

namespace mpt {

// "0x" followed by two lowercase digits per byte.
std::string to_hex(bytes_view b);

// Appends the lowercase digits of b, without a prefix.
void append_hex_digits(std::string& out, bytes_view b);

// Parses hex digits of even length, with or without a 0x prefix. Upper and lower case are
// accepted. An odd length or a non-hex character is Errc::bad_hex.
Result<bytes> from_hex(std::string_view s);

// Like from_hex, for exactly 32 bytes.
Result<Hash256> hash_from_hex(std::string_view s);

}  // namespace mpt
