// The difference of two tries, found by walking both together.
//
// The walk visits both tries position by position (a position is a root-relative nibble
// path) and never descends into a pair of subtrees whose references are equal: the same
// hash, or the same embedded RLP, standing at the same position means the same content
// below it. Where the two sides' shapes differ (an extension against a branch, a leaf
// against a branch, extensions of different lengths, a node embedded on one side and
// hashed on the other), each side is seen as "what is at this position": a node starting
// here, the rest of a short node that started above, or nothing, and the walk goes on
// nibble by nibble, jumping over the stretches where both sides are inside short nodes.
// Only nodes below positions where the sides differ are read, each once.
//
// Every read is checked against the hash its parent holds; a missing row or a mismatch
// is a storage error. Equal references are trusted, not read: a damaged node below a
// reference both sides share goes unseen, unless DiffReads::all asks for every node.
//
// Thread safety: the functions keep no state; each reader is used by one thread at a time.
#pragma once

#include <functional>
#include <mpt/core/error.hpp>
#include <mpt/trie/trie.hpp>

namespace mpt {

// One trie of a diff: its stored nodes and its root (kEmptyRoot: the empty trie).
// REQUIRES: reader outlives the diff call.
struct DiffSide {
    NodeReader* reader = nullptr;
    Hash256 root = kEmptyRoot;
};

struct DiffEntry {
    enum class Kind : uint8_t { added, removed, changed };
    Kind kind = Kind::added;
    bytes_view key;
    bytes_view old_value;  // removed, changed
    bytes_view new_value;  // added, changed
};

// Rows read from each side's store (embedded nodes cost no read).
struct DiffStats {
    uint64_t nodes_read_a = 0;
    uint64_t nodes_read_b = 0;
};

// Which nodes the walk reads. differing: only those below positions where the sides differ
// (equal subtrees are trusted by their references). all: every node of both tries, each
// checked against its parent's hash as a differing one is; the answer is the same, and a
// damaged node anywhere is the storage error it would be if it differed.
enum class DiffReads : uint8_t { differing, all };

// Calls f for every key whose value differs from a to b, in key order, until f returns
// false. The views are valid during the call only.
using DiffVisitor = std::function<bool(const DiffEntry&)>;
Result<DiffStats> diff_tries(const DiffSide& a, const DiffSide& b, const DiffVisitor& f,
                             DiffReads reads = DiffReads::differing);

// What moves a path-keyed store from a to b. A path is written when b has a hashed node
// (or the root) there and a has none or one with another hash; deleted when a has a hashed
// node there and b has none. Paths are one nibble per byte, each list in path order.
struct NodeDiff {
    std::vector<bytes> writes;
    std::vector<bytes> deletes;
    DiffStats stats;
};
Result<NodeDiff> diff_nodes(const DiffSide& a, const DiffSide& b,
                            DiffReads reads = DiffReads::differing);

}  // namespace mpt
