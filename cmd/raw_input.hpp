// Byte input for the commands that take bytes rather than JSON (keccak, rlp decode, root
// --block): a file or standard input read whole, with no stop at control characters, and
// the rule for telling hex text from binary.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>

#include <string>

namespace mpt::cli {

// Refused beyond this many bytes: the inputs are blocks and RLP items, not data sets.
inline constexpr size_t kMaxRawInput = size_t{1} << 30;

// The bytes of path ("-": standard input), whole: a regular file mapped (no copy; hold a
// SigbusGuard while it is read), anything else read. Errc::bad_input naming path when it
// cannot be read or holds more than kMaxRawInput bytes.
Result<InputText> read_raw(const std::string& path);

// Input that is "0x" and hex digits (whitespace around it allowed, as a line piped from
// another command has) is that hex; anything else is taken as the binary bytes themselves.
// Errc::bad_hex for text that starts with 0x but is not hex.
Result<bytes> hex_or_binary(std::string_view input);

// text without the JSON white space (space, tab, line feed, carriage return) around it.
std::string_view without_space(std::string_view text);

// True when text is one 0x hex item and white space around it, such as an RLP encoding, which
// no JSON document and no key/value file is: a JSON reader's error then says what was given.
bool is_one_hex_item(std::string_view text);

// The error e of reading text as JSON, with what the text is instead when it is one 0x hex
// item: "RLP (0x hex), not JSON: " and what reads it (rlp decode, root --list of its items).
Error json_not_rlp(Error e, std::string_view text);

}  // namespace mpt::cli
