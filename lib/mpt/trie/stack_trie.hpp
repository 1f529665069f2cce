// A streaming root builder for keys given in strictly increasing order.
//
// It keeps one branch frame per level of the current key's path (O(depth) memory), hashes
// each subtree as soon as no later key can fall into it, and can hand every hashed node to
// a sink with its root-relative path, children before parents. Keys of any length are
// supported, including keys that are prefixes of later keys (their value goes to the
// branch's 17th slot).
//
// Thread safety: an object is used by one thread at a time. stack_trie_root starts and joins
// its own threads.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/core/node.hpp>

#include <span>
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
    // A builder of the subtrie whose top node stands at nibble depth `depth` (a child of a
    // branch at depth - 1). REQUIRES: every key added has at least `depth` nibbles and all
    // share their first `depth` nibbles. Take its result with finish_ref().
    StackTrie(NodeSink* sink, size_t depth) : sink_(sink), top_(depth) {}

    // Adds a pair. An empty value is refused (it means absence), and so is a key that is not
    // strictly greater than the previous one.
    Status add(bytes_view key, bytes_view value);
    // As add(), keeping views of key and value instead of copies.
    // REQUIRES: both stay valid and unchanged until the next add or finish.
    Status add_view(bytes_view key, bytes_view value);

    // The root of all pairs added since construction or the last finish(); then resets.
    // REQUIRES: built at depth 0.
    Hash256 finish();
    // The reference the parent branch holds to the subtrie built so far (embedded when its
    // RLP is under 32 bytes; empty when no pair was added); then resets.
    NodeRef finish_ref();

    // Adds pairs (strictly increasing keys, nonempty values) by view, as add_view one at a
    // time, and with the same result, but with their leaves made ahead a chunk at a time and
    // hashed together (keccak256_batch): a pair's leaf stands one nibble below where its key
    // parts from the key before or the one after, whichever is later, so that every pair but
    // the last has its leaf known before it is placed. Asks for the key and both ends of the
    // value of a pair a few ahead before they are read: sorted pairs usually point into their
    // input in a random order. REQUIRES: as add_view, until the add after the last pair's.
    Status add_run(std::span<const KvPair> pairs);

    size_t count() const noexcept { return count_; }

private:
    // A branch made by add_run: that of consecutive pairs whose keys part from one another at
    // nibble `depth` and nowhere deeper, and from the keys on either side higher up, so that
    // its children are their leaves. Its encoding and, when 32 bytes or more, its hash.
    struct ReadyBranch {
        size_t depth = 0;
        bytes_view rlp;
        Hash256 hash;
    };
    // A pair's leaf made by add_run: its encoding at nibble depth `depth` (0: none made) and,
    // when 32 bytes or more, its hash; on the last pair of a branch made, that branch.
    struct ReadyLeaf {
        size_t depth = 0;
        bytes_view rlp;
        Hash256 hash;
        const ReadyBranch* branch = nullptr;
    };
    // The leaves of pairs [begin, end) of a run, where the next pair is known, into
    // ready_[slot] (a chunk's leaves, by pair), their encodings in ready_rlp_[slot].
    void make_leaves(std::span<const KvPair> pairs, size_t begin, size_t end, size_t slot);
    // The branches of a chunk's leaves (make_leaves) whose children are all in the chunk, into
    // ready_branches_[slot], each pointed to by its last pair's leaf.
    void make_branches(std::span<const KvPair> pairs, size_t begin, size_t slot);

    struct Frame {
        size_t depth = 0;
        std::array<NodeRef, 16> children{};
        bytes value;
        // The leaves placed here and the branches closed right below, of 32 bytes or more,
        // wait to be hashed together when the branch is encoded (keccak256_batch): bit v of
        // deferred says that children[v] is the node leaves[leaf_at[v], leaf_at[v] +
        // leaf_size[v]).
        uint32_t deferred = 0;
        std::array<uint32_t, 16> leaf_at{};
        std::array<uint32_t, 16> leaf_size{};
        bytes leaves;
    };

    NibbleView pending_path() const noexcept { return NibbleView(key_view_); }
    Status add_pair(bytes_view key, bytes_view value, bool copy, const ReadyLeaf* ready = nullptr);
    Frame& push_frame(size_t depth);
    void place_pending(Frame& f);
    NodeRef branch_ref(Frame& f, bool root);
    void hash_deferred(Frame& f);
    // A complete frame as its parent's child: ref, or, when deferred, the branch in enc_,
    // handed to the sink and waiting to be hashed with its siblings.
    struct Closed {
        NodeRef ref;
        bool deferred = false;
    };
    // Closes f, complete, as the child of a frame at parent_depth: right below it, f's branch
    // is encoded and deferred (or embedded); deeper, it is hashed now and wrapped in an
    // extension. enc_ holds a deferred branch until place.
    Closed close(Frame& f, size_t parent_depth);
    // Makes child slot `slot` of parent.
    void place(Frame& parent, uint8_t slot, const Closed& child);
    // Notes that children[slot] of f is the node f.leaves[at, at + size), to be hashed when
    // f's branch is encoded.
    void defer(Frame& f, uint8_t slot, size_t at, size_t size);
    // f's branch into enc_, its deferred children hashed first.
    void encode_frame(Frame& f);
    // Hands the sink (if any) rlp at the first path_len nibbles of the pending key.
    void to_sink(size_t path_len, bytes_view rlp);
    // The reference to node sitting at depth `to`, seen from depth `from` (an extension
    // over the pending key's nibbles [from, to) when they differ).
    NodeRef wrap(NodeRef child, size_t from, size_t to, bool root);
    NodeRef finalize(size_t path_len, bool root);
    NodeRef finish_top(bool root);

    NodeSink* sink_;
    size_t top_ = 0;             // the depth of the subtrie's top node
    std::vector<Frame> frames_;  // frames_[0, open_) are open; the rest are kept for reuse
    size_t open_ = 0;
    // The pending pair: its place is known only when the next key arrives. The views point
    // into key_ and value_ (add) or into the caller's memory (add_view).
    bytes_view key_view_;
    bytes_view value_view_;
    bytes key_;
    bytes value_;
    bool has_pending_ = false;
    size_t count_ = 0;
    bytes enc_;       // encoding scratch
    bytes path_buf_;  // unpacked path scratch for the sink
    // The pending pair's leaf, when add_run made it (depth 0 otherwise).
    ReadyLeaf pending_leaf_;
    // add_run's two chunks of leaves: a pair's leaf is placed as the pair after it is added,
    // the first of the next chunk for a chunk's last.
    std::array<std::vector<ReadyLeaf>, 2> ready_;
    std::array<bytes, 2> ready_rlp_;
    std::vector<bytes_view> hash_in_;  // scratch: the leaves hashed together
    std::vector<Hash256> hash_out_;
    std::vector<uint32_t> hash_of_;  // the pair (in its chunk) of each leaf hashed
    std::vector<std::array<size_t, 2>> ready_at_;
    // The nibbles pair i of a chunk shares with the pair before (0 for the first pair added).
    std::vector<size_t> shared_;
    std::array<std::vector<ReadyBranch>, 2> ready_branches_;
    std::array<bytes, 2> ready_branch_rlp_;
    // Scratch of make_branches: of each branch, its last pair and where its encoding is.
    std::vector<std::array<size_t, 3>> branch_at_;
};

// Below this many pairs stack_trie_root stays on the calling thread: starting a thread
// costs more than the work it would take over. Measured with 2 threads on 2 shared cores
// (mpt_micro_bench BM_stack_trie_root_threads, wall time): slower at 256 pairs, even at
// 1024, 1.5x faster at 4096.
inline constexpr size_t kParallelRootMinPairs = 4096;

// Where stack_trie_root hands the nodes it hashes: part(v) takes the nodes of the subtrie
// under the top branch's child v (v < 16), part(kTopPart) the top branch and the extension
// above it, if any. A build that does not split (one thread, few pairs, or a top branch that
// is the only branch) hands every node to part(kTopPart). The nodes of a part come from one
// thread, children before parents, and then done(v) is called on that thread, once for
// every part. The nodes of parts 0..15 have paths that start with the top part's, and with
// their own nibble where the top branch stands.
class PartSinks {
public:
    static constexpr size_t kTopPart = 16;
    static constexpr size_t kProgressPairs = 65536;
    virtual ~PartSinks() = default;
    virtual NodeSink* part(size_t v) = 0;
    virtual void done(size_t v) = 0;
    // Called by each building thread after every kProgressPairs pairs it added.
    virtual void advanced() {}
};

// The root of pairs with strictly increasing keys and nonempty values (as
// sorted_final_pairs gives them), equal to adding them to a StackTrie one by one. Given more
// than one thread and at least min_pairs pairs, the subtries under the top branch are built
// in parallel, on the calling thread and threads - 1 others. With sinks, every hashed node
// goes to one of them, the nodes a StackTrie would hand its sink. Errors as StackTrie::add;
// after an error the sinks may have had some nodes, and done(), more than once.
Result<Hash256> stack_trie_root(std::span<const KvPair> pairs, unsigned threads = 1,
                                size_t min_pairs = kParallelRootMinPairs,
                                PartSinks* sinks = nullptr);

// st.add_run(pairs).
inline Status add_fetching_ahead(StackTrie& st, std::span<const KvPair> pairs) {
    return st.add_run(pairs);
}

}  // namespace mpt
