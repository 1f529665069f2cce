// The node structure of a stored trie, node by node in depth-first (key) order, for showing
// it: each node's kind, position, key part, reference (hashed or embedded), RLP size and
// value. Every row is read through load_verified and the walk to a start position goes
// through descend (core/node.hpp), so what is shown is what a lookup would meet.
//
// Thread safety: the functions keep no state; the reader is used from the calling thread.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/core/node.hpp>
#include <mpt/trie/node_source.hpp>

#include <cstdint>
#include <functional>

namespace mpt {

struct TreeNode {
    size_t depth = 0;  // levels below the start node (0: the start node)
    bytes position;    // nibbles (one per byte) from the root to this node
    int slot = -1;     // the nibble of the parent branch that holds it; -1 otherwise
    NodeView::Kind kind = NodeView::Kind::leaf;
    NibbleView key;  // leaf and extension: the node's own path
    bool embedded = false;
    Hash256 hash{};       // when not embedded: keccak256 of rlp
    bytes_view rlp;       // the node's RLP
    bytes_view value;     // leaf, and branch (empty: none)
    size_t children = 0;  // children the node refers to (a branch: up to 16; an extension: 1)
    size_t cut = 0;       // of them, not shown: below the depth limit, or past the node limit
};

struct TreeOptions {
    bytes from;               // start: the node at or just below this nibble path
    size_t max_depth = 4;     // levels below the start node shown
    size_t max_nodes = 1000;  // nodes shown
};

struct TreeSummary {
    size_t nodes = 0;         // nodes shown
    size_t cut_subtrees = 0;  // children left out (their subtrees not read)
    bool depth_cut = false;   // some were left out for the depth limit
    bool nodes_cut = false;   // some for the node limit
    bool found = true;        // false: no node lies on options.from (nothing was visited)
    bytes start;              // position of the start node
};

// Visits the nodes of the trie of root, from the node that stands at options.from (or, when
// from ends inside a short node's path, that node), down max_depth levels, at most max_nodes
// of them, in key order: a parent before its children. The views of a TreeNode are valid
// during the call. No node on from (no key has it as a prefix) is summary.found false;
// errors are what load_verified and decode_stored refuse. The empty root visits nothing.
Result<TreeSummary> walk_tree(NodeReader& reader, const Hash256& root, const TreeOptions& options,
                              const std::function<void(const TreeNode&)>& visit);

}  // namespace mpt
