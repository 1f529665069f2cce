// What a trie file can hold, checked against the input before anything is written.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>

#include <cstdint>

namespace mpt {

// Room a row needs beyond its key and value: the RLP headers of a leaf or a branch, the 16
// children (at most 33 bytes each) of a branch that holds the value, the record header and
// the trie id.
inline constexpr uint64_t kRowOverhead = 1024;

// Ok when every entry of input fits a row of at most max_row bytes (SQLite's length limit,
// SqliteNodeStore::max_blob_bytes): the row holds the value, the key's nibbles as its path
// and again, packed, in the RLP (a secure trie's keys are 32 bytes). Otherwise
// Errc::input_too_large naming the entry, its size and the limit.
Status check_entry_limits(const KvInput& input, bool hashed_keys, uint64_t max_row);

}  // namespace mpt
