// What the commands on Ethereum state share: reading an address or slot from the command
// line under the key rule, and printing accounts and values as JSON-RPC quantities.
#pragma once

#include <mpt/ops/state_file.hpp>

#include <optional>
#include <string>

namespace mpt::cli {

// The trie key of an account given on the command line: keccak256 of a 20-byte address
// (0x optional, any case), or with key_hashed the 32-byte address hash itself.
Result<Hash256> account_key(const std::string& text, bool key_hashed);
// A 20-byte address (0x optional, any case).
Result<Address> parse_address(const std::string& text);
// The trie key of a slot: keccak256 of the slot (hex, 0x optional, any case, up to 32 bytes,
// left-padded with zeros), or with key_hashed the 32-byte slot hash itself.
Result<Hash256> slot_key(const std::string& text, bool key_hashed);

// Appends `"nonce":...,"balance":...,"storageRoot":...,"codeHash":...` (no braces).
void append_account_fields(std::string& out, const Account& a);

}  // namespace mpt::cli
