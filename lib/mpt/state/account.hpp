// Ethereum state in the trie (Yellow Paper, section 4.1 and appendix D, as go-ethereum
// applies it): the state trie maps keccak256(address) to rlp([nonce, balance, storageRoot,
// codeHash]); an account's storage trie maps keccak256(slot as 32 bytes) to rlp(value with its
// leading zero bytes removed), and a zero value is no entry. Empty code hashes to
// keccak256 of nothing; an account without storage has the empty trie's root.
//
// This header is the state layer's seam: the document readers (state/document.hpp) produce a
// StateDoc, the builders (build/) consume one.
//
// Thread safety: value types and pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/core/node.hpp>

#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace mpt {

using Address = std::array<uint8_t, 20>;
// A 256-bit unsigned integer, big-endian (balances, slot keys and values).
using U256 = std::array<uint8_t, 32>;

// keccak256 of the empty string: the code hash of an account without code.
inline constexpr Hash256 kEmptyCodeHash = {
    0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d, 0xb2, 0xdc, 0xc7, 0x03, 0xc0,
    0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82, 0x27, 0x3b, 0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70};

// The trie order of two 32-byte keys (byte-wise): the first 8 bytes compared as one
// big-endian word decide nearly always, for sorting accounts and slots by hashed key.
inline bool hash_less(const Hash256& a, const Hash256& b) noexcept {
    uint64_t x, y;
    std::memcpy(&x, a.data(), 8);
    std::memcpy(&y, b.data(), 8);
    if (x != y) {
        if constexpr (std::endian::native == std::endian::little) {
            x = __builtin_bswap64(x);
            y = __builtin_bswap64(y);
        }
        return x < y;
    }
    return std::memcmp(a.data() + 8, b.data() + 8, 24) < 0;
}

// An account as the state trie holds it.
struct Account {
    uint64_t nonce = 0;
    U256 balance{};
    Hash256 storage_root = kEmptyRoot;
    Hash256 code_hash = kEmptyCodeHash;

    bool operator==(const Account&) const = default;
};

// The bytes of a big-endian integer without its leading zeros (empty for zero): the payload
// of its RLP integer.
bytes_view significant_bytes(bytes_view v) noexcept;
// True when every byte of v is zero.
inline bool is_zero(bytes_view v) noexcept { return significant_bytes(v).empty(); }
// A big-endian integer as a JSON-RPC quantity: 0x and its hex digits without leading zeros,
// "0x0" for zero.
std::string quantity_text(bytes_view be);

// Appends rlp([nonce, balance, storageRoot, codeHash]) to out; nonce and balance as RLP
// integers (no leading zero bytes; zero is the empty string).
void encode_account(bytes& out, const Account& a);
// The most bytes encode_account writes: 1 + 2 (list header) + 9 (nonce) + 33 (balance) + 2 * 33.
inline constexpr size_t kMaxAccountRlp = 112;
// Decodes a state trie value. Strict: canonical RLP, exactly four items, integers without
// leading zeros, a nonce of at most 8 bytes, a balance of at most 32, both hashes 32 bytes.
Result<Account> decode_account(bytes_view rlp) noexcept;
// A value read from an account trie (`main`, of a state file or a witness), decoded: a value
// that is no account is Errc::storage_bad_node naming the account by its address hash.
Result<Account> decode_stored_account(bytes_view value, const Hash256& address_hash);

// Appends the storage trie value of v: rlp(v without its leading zero bytes). REQUIRES: v is
// not zero (a zero value is no entry).
void encode_storage_value(bytes& out, const U256& v);
// Decodes a storage trie value: an RLP string of 1 to 32 bytes without a leading zero byte.
Result<U256> decode_storage_value(bytes_view rlp) noexcept;

// One storage slot of a document. key is the trie key (keccak256 of the slot); slot is the
// slot itself where the document gives it (a dump may give only the hash).
struct StorageEntry {
    Hash256 key;
    std::optional<U256> slot;
    U256 value;  // zero: no entry (documents may list zeros; the builders skip them)
};

// One account of a document. address_hash is the trie key; address is known unless the
// document gives the hash only. account.storage_root is the root of storage once computed
// (the readers leave kEmptyRoot; a dump's own root is claimed_storage_root, which the
// builders take for an account that lists no slot: a dump made without storage).
struct StateAccount {
    Hash256 address_hash{};
    std::optional<Address> address;
    Account account;
    bytes code;  // empty when the document has none (or gives only a hash)
    std::vector<StorageEntry> storage;
    std::optional<Hash256> claimed_storage_root;  // what a dump says it is
    size_t line = 0;  // where the account starts in its document (from 1)
};

// The shapes a state document can take (state/document.hpp detects them).
enum class StateShape : uint8_t {
    genesis,          // geth genesis.json: its "alloc"
    alloc,            // a bare alloc object (ethereum/tests pre and postState)
    geth_dump,        // geth's dump: {"root": ..., "accounts": {...}}
    geth_dump_lines,  // geth's iterative dump: one account a line, the root on the first
    reth_dump,        // reth's state dump: one JSON object a line, the first carrying the root
    mpt_dump,         // mpt dump --accounts: one account a line, with no root line
};
std::string_view state_shape_name(StateShape s) noexcept;

// A whole document's state, accounts in document order (not trie order); no two share an
// address_hash.
struct StateDoc {
    StateShape shape = StateShape::alloc;
    std::vector<StateAccount> accounts;
    std::optional<Hash256> claimed_root;  // the root a dump carries
};

}  // namespace mpt
