// The ethereum/tests TrieTests runner.
//
// Root files: {"name": {"in": pairs, "root": "0x..."}} where pairs is an object or an
// ordered array whose null values delete. Every case is computed twice, by the in-memory
// trie applying the pairs in order and by the streaming builder over the final sorted
// content; both must give the expected root. Files whose name contains "secure" hash
// every key with keccak256 first. Next/prev files: {"name": {"in": [keys], "tests":
// [[key, prev, next], ...]}}, answered by ordered iteration ("" means none).
//
// BlockchainTests files ({"test": {"pre", "genesisBlockHeader", "blocks", "postState" or
// "postStateHash"}}): per test, the state root of pre against genesisBlockHeader.stateRoot,
// and of postState against the stateRoot of the last block whose header is given. A test
// with only postStateHash has its pre checked alone, and counts as skipped. Then each block
// that has an "rlp" and a "blockHeader" (case "file:test:block N", N from 0): its RLP's
// header must give the fixture header's transactionsTrie and withdrawalsRoot (none where the
// fixture has none), and its body's transactions and withdrawals those same roots.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/input/kv_input.hpp>
#include <mpt/trie/trie.hpp>

#include <string>
#include <vector>

namespace mpt {

// The root of a document applied in order to an in-memory trie.
Result<Hash256> root_by_trie(const KvInput& input, bool secure);
// The root of a document's final content through the streaming builder.
Result<Hash256> root_by_stack_trie(const KvInput& input, bool secure);

struct VectorCase {
    std::string name;  // "file:case" or "file:case:key" for next/prev queries
    bool passed = false;
    std::string detail;  // what differed
};

// Runs every case of one TrieTests file. Errors only for an unreadable or malformed file.
Result<std::vector<VectorCase>> run_trie_vectors(const std::string& path);
Result<std::vector<VectorCase>> run_trie_vectors(const std::string& path, std::string_view text);

struct VectorRun {
    std::vector<VectorCase> cases;
    size_t skipped = 0;  // postState checks not made: the test gives only postStateHash
};

// Runs one vector file of either kind, told apart by its shape.
Result<VectorRun> run_vector_file(const std::string& path);

}  // namespace mpt
