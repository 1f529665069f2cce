// A streaming root builder for keys given in strictly increasing order.
//
// It keeps one branch frame per level of the current key's path (O(depth) memory), hashes
// each subtree as soon as no later key can fall into it, and can hand every hashed node to
// a sink with its root-relative path, children before parents. Keys of any length are
// supported, including keys that are prefixes of later keys (their value goes to the
// branch's 17th slot).
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <mpt/node.hpp>

#include <vector>

namespace mpt {

// Receives the hashed nodes of a trie being built. path is the node's root-relative path,
// one nibble per byte; both views are valid only during the call.
class NodeSink {
public:
    virtual ~NodeSink() = default;
    virtual void put(bytes_view path, bytes_view rlp) = 0;
};

class StackTrie {
public:
    explicit StackTrie(NodeSink* sink = nullptr) : sink_(sink) {}

    // Adds a pair. An empty value is refused (it means absence), and so is a key that is not
    // strictly greater than the previous one.
    Status add(bytes_view key, bytes_view value);

    // The root of all pairs added since construction or the last finish(); then resets.
    Hash256 finish();

    size_t count() const noexcept { return count_; }

private:
    struct Frame {
        size_t depth = 0;
        std::array<NodeRef, 16> children{};
        bytes value;
    };

    NibbleView pending_path() const noexcept { return NibbleView(key_); }
    Frame& push_frame(size_t depth);
    void place_pending(Frame& f);
    NodeRef branch_ref(const Frame& f, bool root);
    // The reference to node sitting at depth `to`, seen from depth `from` (an extension
    // over the pending key's nibbles [from, to) when they differ).
    NodeRef wrap(NodeRef child, size_t from, size_t to, bool root);
    NodeRef finalize(size_t path_len, bool root);

    NodeSink* sink_;
    std::vector<Frame> frames_;  // frames_[0, open_) are open; the rest are kept for reuse
    size_t open_ = 0;
    bytes key_;    // the pending key: its place is known only when the next key arrives
    bytes value_;  // its value
    bool has_pending_ = false;
    size_t count_ = 0;
    bytes enc_;        // encoding scratch
    bytes path_buf_;   // unpacked path scratch for the sink
};

}  // namespace mpt
