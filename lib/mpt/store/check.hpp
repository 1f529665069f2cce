// The integrity check and the statistics of one stored trie: every row read by path from the
// root, each hash recomputed, and the rows reached against the rows present.
//
// Thread safety: each call uses its store from the calling thread only.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/node_store.hpp>

#include <string>
#include <vector>

namespace mpt {

struct CheckReport {
    size_t rows = 0;                    // rows of the trie in the store
    size_t reachable = 0;               // rows reached from the root
    std::vector<std::string> problems;  // each names the path
};

// Validates every row of the store's tries table (a damaged one is its error,
// Errc::storage_bad_record); then walks the trie from its root by path, recomputing every
// hash, and compares the rows reached with the rows present (orphans) in one ordered pass.
Result<CheckReport> check_trie(NodeStore& store, const TrieInfo& trie);
// check_trie without the tries table's rows: for a caller that has validated them once
// (list_tries) and checks many tries.
Result<CheckReport> check_trie_rows(NodeStore& store, const TrieInfo& trie);

struct TrieStats {
    struct Count {
        size_t nodes = 0;
        size_t bytes = 0;
    };
    size_t rows = 0;
    size_t row_bytes = 0;  // path + rlp bytes of every row
    Count leaf, extension, branch, embedded;
    std::vector<Count> by_depth;  // rows by path length
    size_t pairs = 0;
};

// Counts the rows of a trie by node type and path length, and the embedded nodes they carry.
Result<TrieStats> trie_stats(NodeStore& store, const TrieInfo& trie);

}  // namespace mpt
