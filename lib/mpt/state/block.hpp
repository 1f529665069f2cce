// Block bodies and the roots a header commits to them (Yellow Paper section 4.3; EIP-2718
// typed transactions; EIP-4895 withdrawals).
//
// A list of items (a block's transactions, receipts or withdrawals) is committed to by the
// root of the trie that maps rlp(i), the RLP of the index i as an integer (0x80 for 0, then
// 0x01..0x7f, 0x8180, ...), to the i-th item's encoding. A legacy transaction's encoding is
// its RLP list; a typed one's is type || payload, which a block body carries as the payload of
// an RLP string; a withdrawal's is its RLP list [index, validator, address, amount].
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

#include <optional>
#include <span>
#include <vector>

namespace mpt {

// The root of the trie of rlp(i) -> items[i]. The empty list has the empty root. An empty
// item is Errc::bad_input (it would mean no entry).
Result<Hash256> ordered_trie_root(std::span<const bytes_view> items);

// The trie key of index i: rlp(i) as an integer.
bytes index_key(uint64_t i);

// What a block's header says of its body, beside what the body gives.
struct BlockRoots {
    Hash256 header_transactions_root{};
    Hash256 transactions_root{};  // of the body's transactions
    size_t transactions = 0;
    // From Shanghai on the header has a withdrawalsRoot (field 16) and the body a fourth list;
    // before, neither. nullopt where the block has none.
    std::optional<Hash256> header_withdrawals_root;
    std::optional<Hash256> withdrawals_root;
    size_t withdrawals = 0;
    // The header's receiptsRoot (field 5; nullopt where it is not 32 bytes), and the root of
    // receipts given beside the block (nullopt where none are).
    std::optional<Hash256> header_receipts_root;
    std::optional<Hash256> receipts_root;
    size_t receipts = 0;

    bool transactions_match() const noexcept {
        return header_transactions_root == transactions_root;
    }
    bool withdrawals_match() const noexcept { return header_withdrawals_root == withdrawals_root; }
    bool receipts_match() const noexcept {
        return !receipts_root || receipts_root == header_receipts_root;
    }
    bool match() const noexcept {
        return transactions_match() && withdrawals_match() && receipts_match();
    }
};

// Decodes block_rlp, rlp([header, transactions, ommers, withdrawals?, ...]) as a block's RLP
// is written (ethereum/tests' "rlp", debug_getRawBlock), and computes the roots of its
// transactions and withdrawals. Strict: canonical RLP, exactly one item; the header a list of
// at least 15 fields with a 32-byte transactionsRoot (field 4) and, when it has 17 or more, a
// 32-byte withdrawalsRoot (field 16); each transaction a list
// (legacy) or a string whose first byte is a type below 0x80; each withdrawal a list. Errors
// (Errc::bad_input, or an RLP code) name the part and the byte offset where it starts. A root
// that differs is no error: see BlockRoots::match().
Result<BlockRoots> block_roots(bytes_view block_rlp);

// What a header says of its place in the chain: its hash (keccak256 of its RLP), its parent's
// hash, the state root after its block and its number.
struct HeaderFacts {
    Hash256 hash{};
    Hash256 parent_hash{};
    Hash256 state_root{};
    uint64_t number = 0;
};

// Decodes header_rlp as one header, strict as block_roots: canonical RLP, exactly one list of
// at least 15 fields, parentHash (field 1) and stateRoot (field 4) of 32 bytes, number
// (field 9) an integer of at most 8 bytes without leading zeros. Errors name the byte offset.
Result<HeaderFacts> header_facts(bytes_view header_rlp);

}  // namespace mpt
