// State roots and state files of documents larger than memory: the document is read once as
// a stream (state/document_stream.hpp) and every account and every nonzero slot goes to one
// SpillingPairSorter, an account under keccak256(address) (32 bytes) and a slot under
// keccak256(address) || keccak256(slot) (64 bytes). In key order an account comes right before
// its slots (a key sorts before the keys it begins), so one pass over the merged runs hashes
// each storage trie, then the account's leaf, with a StackTrie each.
//
// The result is that of the whole-document path for the same document: the same root
// (state_root.hpp) and, for a new file, the same file byte for byte (build_new_state_file of
// state_file.hpp). What read_state_document does over the whole document is done in the
// merge: of an address given twice the last account is taken with its own storage only (each
// record carries the number of the account object it came from, and a slot of another object
// is dropped), and so are the accounts of an "alloc" or "accounts" member that a later one
// replaced.
//
// Memory: the sorter's runs, the rows kept before they spill (build), and one account object
// of text at a time. A build keeps each storage trie's address hash and root in a run too,
// and makes the file's tries table in a SQLite database in a temporary file
// (make_state_image_on_disk), so nothing grows with the number of contracts either.
//
// Thread safety: each call uses its own objects from the calling thread.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/state/document_stream.hpp>

#include <optional>
#include <string>

namespace mpt {

// What a streamed document gave beside its state.
struct StreamedStateInfo {
    StateShape shape = StateShape::alloc;
    std::optional<Hash256> claimed_root;
    size_t temp_files = 0;
    uint64_t temp_bytes = 0;
};

struct StreamedStateRoot {
    StateRootInfo info;
    StreamedStateInfo doc;
};

// The state root of the document of stream, sorted within spill's budget. With more than one
// thread and runs spilled, the account trie is hashed as the spilled key/value root is
// (kv_root_sorted): the accounts of each first nibble, with their storage tries, on a pool of
// threads. Errors: those of stream_state_document and of the sorter's files.
Result<StreamedStateRoot> streamed_state_root(TextStream& stream, const SpillOptions& spill,
                                              unsigned threads = 1);

struct StreamedStateBuild {
    StateBuildResult result;
    StreamedStateInfo doc;
    // With check_stated_roots, the first stated root that differs, said in a line; no file
    // was written. Empty otherwise.
    std::string stated_mismatch;
};

// The state of the document of stream into a new file at path, as build_new_state_file
// writes it: the pairs sorted within spill's budget, the rows kept up to row_bytes (half each
// for the account trie's and the storage tries') and past that written to temporary files
// and merged into the b-tree (and with o.check_stated_roots, no file when a stated root
// differs: stated_mismatch). Returns nullopt, having made no file, when path exists or the
// file system cannot make unnamed files. Errors: those of streamed_state_root, storage_full,
// storage_io.
Result<std::optional<StreamedStateBuild>> build_new_state_file_streamed(const std::string& path,
                                                                        TextStream& stream,
                                                                        const StateBuildOptions& o,
                                                                        const SpillOptions& spill,
                                                                        size_t row_bytes);

}  // namespace mpt
