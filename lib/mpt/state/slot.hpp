// Solidity's storage layout: the slot of a mapping's entry and of a dynamic array's element
// (the Solidity documentation, "Layout of State Variables in Storage"), for reading a
// contract's storage with a slot the layout gives.
//
// A mapping declared at slot p keeps the value of key k at keccak256(h(k) . p), p as a
// 32-byte word and h(k) the key's encoding: a value type padded to 32 bytes (an integer or an
// address on the left, a negative integer sign-extended, a bool as 0 or 1, a bytesN on the
// right), a string or bytes key as its bytes, unpadded. A mapping in a mapping applies the
// rule again to the slot found. A dynamic array declared at slot p keeps element i at
// keccak256(p) + i * n, for elements of n slots each (modulo 2^256).
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/state/account.hpp>

#include <string_view>

namespace mpt {

// A number written in decimal, or in hex after 0x, at most 2^256 - 1. Errc::bad_input.
Result<U256> parse_u256(std::string_view text);

// The encoding h(k) of a mapping key written TYPE:VALUE: address:0x<40 hex>, bool:true|false,
// uint<N>:<number> and int<N>:<number> (N a multiple of 8 up to 256; uint and int are 256; a
// negative int in decimal), bytes<N>:0x<2N hex> (N from 1 to 32), string:<text> (its UTF-8
// bytes) and bytes:0x<hex>. Errc::bad_input naming what is wrong, a value out of its type's
// range included.
Result<bytes> encode_mapping_key(std::string_view typed);

// keccak256(key . position): the slot of the entry under key (an encode_mapping_key encoding)
// of the mapping at position.
U256 mapping_slot(bytes_view key, const U256& position);

// keccak256(position) + index * element_slots, modulo 2^256: the slot of element index of the
// dynamic array at position.
U256 array_element_slot(const U256& position, const U256& index, uint64_t element_slots);

}  // namespace mpt
