// State documents: the JSON shapes Ethereum state is handed around in, read into a StateDoc
// (state/account.hpp). The shape is detected from the document itself:
//
//   genesis          geth's genesis.json: an object with "alloc" (everything else ignored)
//   alloc            a bare alloc object {address: account} (ethereum/tests pre, postState)
//   geth-dump        geth's dump: {"root": ..., "accounts": {address or "pre(hash)": account}}
//   geth-dump-lines  geth's iterative dump: {"root": ...} on the first line, then one account
//                    object a line (with "root" and "codeHash" of its own)
//   reth-dump        reth's init-state dump: {"root": ...} on the first line, then one account
//                    object a line with its "address"
//   mpt-dump         mpt dump --accounts: one account object a line, no root line, each
//                    beginning {"address":"0x..","nonce": or {"key":"0x..","nonce":
//
// Field rules follow geth's decoders (core/types/account.go, common/math, common/hexutil):
//   address     40 hex digits, 0x optional, any case (common.UnprefixedAddress)
//   balance     required; a hex ("0x..", any length, leading zeros allowed) or decimal
//               quantity, as a string or a JSON number, at most 2^256 - 1; "" is zero
//               (math.HexOrDecimal256: ParseBig256). No sign, no "0x" without digits.
//   nonce       optional; as balance, at most 2^64 - 1 (math.HexOrDecimal64)
//   code        optional; 0x-prefixed hex of even length, "0x" or "" is none (hexutil.Bytes)
//   storage     optional; keys and values hex of at most 64 digits, even length, "0x"
//               optional, left-padded to 32 bytes; "" and "0x" are zero (storageJSON)
// Field names match in any case, as Go's encoding/json matches them ("Balance" is "balance").
// Dumps add "root" (the account's storage root; "storageRoot" in mpt's), "codeHash", "key"
// (the address hash) and "address"; a dump's storage values may lack the 0x prefix (geth
// writes them so) or be quantities of odd length (mpt writes them so), and a dump's slot
// named "pre(0x<hash>)" is given by its hash. A key given twice (an address, a slot, a
// field) keeps its last value, as Go's and serde's maps do.
//
// Every error names the place: "line L, column C: account A: field F: why".
//
// Thread safety: pure functions; read_state_document starts and joins its own threads.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/account.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mpt {

// Reads a state document from text. Accounts keep their document order (a repeated address
// keeps the place of its first appearance and the content of its last); each account's
// storage is sorted by key with no key twice (zero values are kept: the builders skip them);
// code hashes are keccak256 of the code, or the dump's codeHash (checked against the code
// when both are given). threads: for hashing addresses, slots and code (1: this thread).
// Errors: Errc::bad_json for bad JSON, Errc::bad_input or Errc::bad_hex for a field, each
// with its line and column.
Result<StateDoc> parse_state_document(std::string_view text, unsigned threads = 1);

// True when head, the beginning of a document (a file's first kilobytes suffice), is a state
// document rather than key/value input: a JSON object whose first member with an object for
// its value (a key/value file's values are strings or null) is an account (an address), an
// alloc, a genesis's config or a dump's accounts, among the members head holds whole; or an
// object followed by another (the first line of a dump by lines). Test files (TrieTests,
// BlockchainTests: objects under test names) are not. A guess from the shape alone: the
// reader of the kind it picks checks the whole document.
bool looks_like_state_document(std::string_view head) noexcept;

// Reads the file at path ("-" for standard input) through load_input and parses it. Errors
// name path in Error::file. A regular file is mapped while it is read (see InputText).
Result<StateDoc> read_state_document(const std::string& path, unsigned threads = 1);

// A block of a BlockchainTests test that has both an "rlp" and a decoded "blockHeader": the
// block's RLP as the fixture writes it (0x hex, unchecked) and the roots its header gives.
struct BlockchainBlock {
    size_t index = 0;  // its place in "blocks", from 0
    std::string rlp;
    std::optional<Hash256> transactions_trie;  // blockHeader.transactionsTrie
    std::optional<Hash256> withdrawals_root;   // blockHeader.withdrawalsRoot (Shanghai on)
};

// One test of an ethereum/tests BlockchainTests file: {"name": {"pre", "genesisBlockHeader",
// "blocks", "postState" or "postStateHash", ...}}.
struct BlockchainTest {
    std::string name;
    StateDoc pre;
    Hash256 genesis_state_root{};         // genesisBlockHeader.stateRoot
    std::optional<StateDoc> post;         // postState; nullopt when only postStateHash is given
    Hash256 post_state_root{};            // the stateRoot of the last block with a blockHeader
                                          // (the genesis's when no block has one)
    std::vector<BlockchainBlock> blocks;  // those with "rlp" and "blockHeader", in order
    size_t line = 0;                      // where the test starts (from 1)
};

// Reads a BlockchainTests file. nullopt when the text is a JSON object whose first member is
// not a test of that shape (an object with "pre", "genesisBlockHeader" and "blocks"), so the
// caller may read it as another kind of vector file. Errors as parse_state_document, naming
// the test.
Result<std::optional<std::vector<BlockchainTest>>> parse_blockchain_tests(std::string_view text);

}  // namespace mpt
