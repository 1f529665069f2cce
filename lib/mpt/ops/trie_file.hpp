// Operations on stored tries that the commands share: build or update from key/value input,
// drop and copy; the integrity check and statistics of one trie are the store's
// (store/check.hpp, included here).
//
// Thread safety: each call uses its store from the calling thread only.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/kv_stream.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/store/check.hpp>
#include <mpt/store/node_store.hpp>

#include <functional>

namespace mpt {

struct BuildOptions {
    std::string trie = "main";
    bool secure = false;   // hash keys; required to match an existing trie's kind when given
    bool replace = false;  // drop the existing content first
    // Record keccak256(key) -> key in the file's preimages table for the keys a secure build
    // puts (mpt build --no-preimages clears it).
    bool preimages = true;
    unsigned threads = 1;  // for hashing a new trie (build_new_trie_file)
    // The most memory the rows of a new file's trie may take (build_new_trie_file, which
    // holds them all); 0: half the least of the physical memory, the address space limit
    // and the cgroup's memory limit.
    size_t bulk_memory = 0;
    // Called now and then with (pairs done, pairs in all).
    std::function<void(size_t, size_t)> progress;
};

struct BuildResult {
    Hash256 root{};
    bool created = false;  // a new trie (or a replaced one) rather than an update
    size_t rows_written = 0;
    size_t rows_deleted = 0;
};

// Errc::bad_input, its detail ending in refusal, when the trie name of store holds state or
// would read as holding it: a trie of kind state (an account trie), or in a store whose trie
// main holds accounts (a state file) a name of 0x and 64 hex digits, a storage trie's, which
// changes with its account only. Ok for any other trie.
Status refuse_state_trie(NodeStore& store, std::string_view name, std::string_view refusal);

// Creates the trie (streaming builder, rows in one pass) or applies input to the existing
// one as a change set; all in one write transaction that publishes the root last. Errors:
// bad_input, with nothing written, for a trie that holds state (an account trie; in a file
// whose trie main holds accounts, a storage trie or a new trie named 0x<64 hex digits>).
Result<BuildResult> build_trie(NodeStore& store, const KvInput& input, const BuildOptions& o);

// build_trie for an input read in pieces (a document past the memory budget), in one write
// as well. Into an existing trie (without o.replace) each piece is applied as changes in
// input order and committed to the store before the next is read, so that memory holds one
// piece and the nodes it touches: the trie and the file are the ones build_trie gives, but
// rows_written and rows_deleted count each piece's commit. A new trie (or o.replace) has its
// pairs sorted by sorter, spilling past its budget, and streamed into the builder, with
// the keys as extras when o.secure and o.preimages. check, when given, sees every piece
// first. Errors: build_trie's, the stream's, the sorter's and check's.
Result<BuildResult> build_trie_streamed(NodeStore& store, KvStreamReader& stream,
                                        SpillingPairSorter& sorter, const BuildOptions& o,
                                        const std::function<Status(const KvInput&)>& check = {});

// The preimages of the keys of sorted, pairs of a secure SortedPairCursor of input: each
// hashed key with the input's key it hashes. The views live as long as input and sorted.
std::vector<Preimage> secure_preimages(const KvInput& input, const SortedPairs& sorted);

// Opens a stored trie by name for reading. Errors: no_such_trie.
Result<TrieInfo> require_trie(NodeStore& store, std::string_view name);

// Removes the trie name, its tries row and all its rows, in one write; returns how many rows
// went. Errors: no_such_trie; bad_input for a storage trie of a state file
// (refuse_state_trie).
Result<uint64_t> drop_trie(NodeStore& store, std::string_view name);

struct CopyResult {
    TrieInfo trie;          // the new trie
    uint64_t rows = 0;      // rows copied
    bool replaced = false;  // a trie of that name was there and is gone
};

// Makes the trie `to` a copy of `from` (its kind, root and every row), independent of it from
// then on, in one write. A trie `to` that exists is Errc::bad_input unless replace, which drops
// it first. Errors: no_such_trie for from; bad_input for a bad name, from and to the same, or
// a to that holds state (refuse_state_trie).
Result<CopyResult> copy_trie(NodeStore& store, std::string_view from, std::string_view to,
                             bool replace);

}  // namespace mpt
