// A block's changes applied to tries read from elsewhere, for the post-state root alone:
// from a witness's nodes (witness apply), or from a state file through readers that note
// every node the changes need (witness making). Nothing is written anywhere.
//
// The rule is the one mpt update applies to a state file (account_after, slots written or
// cleared in the account's storage trie, an account deleted with its storage), and the tries
// are mpt's Trie, which reads a node when an operation reaches it: a key's path, and the
// surviving sibling where a deletion collapses a branch or an extension.
//
// Thread safety: one call per source at a time.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/changes.hpp>
#include <mpt/trie/node_source.hpp>
#include <mpt/witness/witness.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpt {

// Where apply_changes reads the tries it changes.
class TrieSource {
public:
    virtual ~TrieSource() = default;
    // A reader of the trie named name ("main", or the storage trie 0x<keccak256(address)>),
    // whose root is root (not the empty root). The reader lives as long as the source.
    virtual Result<NodeReader*> reader(const std::string& name, const Hash256& root) = 0;
};

struct AppliedChanges {
    Hash256 root{};
    size_t accounts = 0;  // written (made or changed)
    size_t deleted = 0;
    size_t slots = 0;  // written or cleared
};

// The root after doc's changes to the state under root. A node a source lacks is its
// reader's error (Errc::storage_missing_node naming the trie and the path).
Result<AppliedChanges> apply_changes(TrieSource& tries, const Hash256& root, const ChangesDoc& doc);

// The tries a witness holds: each node the tries read is found by the hash its parent holds
// for it, among the witness's nodes (keyed by keccak256). A node the witness lacks reads as
// no row, its hash kept as missing().
class WitnessTries : public TrieSource {
public:
    // The views point into w, which must outlive this. Its nodes are hashed and indexed
    // here.
    explicit WitnessTries(const Witness& w);
    // As above, with the index of w's nodes made already (check_witness's), which must
    // outlive this too.
    WitnessTries(const Witness& w, const NodeIndex& index);
    ~WitnessTries() override;

    Result<NodeReader*> reader(const std::string& name, const Hash256& root) override;
    // The hash of the last node a read looked for and did not find.
    const std::optional<Hash256>& missing() const noexcept { return missing_; }
    // From now on, the hash of each node a read finds is appended to *found (nullptr: none).
    void note_found(std::vector<Hash256>* found) noexcept { found_ = found; }

private:
    class HashReader;
    const Witness& w_;
    std::vector<Hash256> own_hashes_;     // when no index was given
    std::optional<NodeIndex> own_index_;  // over own_hashes_
    const NodeIndex& index_;
    std::vector<std::unique_ptr<HashReader>> readers_;
    std::optional<Hash256> missing_;
    std::vector<Hash256>* found_ = nullptr;
};

}  // namespace mpt
