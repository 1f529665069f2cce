// The Trie's nodes in memory (internal to lib/mpt/trie/): one type per node kind, drawn
// from per-size pools, and the trie's scratch and record of released rows.
//
// Thread safety: the pools are shared by all tries and locked; a node belongs to one trie.
#pragma once

#include <mpt/trie/trie.hpp>

#include <cstddef>
#include <mutex>
#include <new>

namespace mpt {

struct TrieNode {
    enum class Type : uint8_t { leaf, extension, branch, stored };

    explicit TrieNode(Type t) noexcept : type(t) {}

    Type type;
    bool dirty = true;       // changed since it was loaded or last committed
    bool ref_valid = false;  // ref is the reference to the node as it is now
    bool has_row = false;    // a row for this node exists at its current path
    NodeRef ref;
};

using Type = TrieNode::Type;

// Nodes of one type are recycled through a free list instead of going back to the heap, so
// that loading, replacing and dropping nodes allocates nothing once the pool holds enough:
// the heap sees one allocation per chunk of nodes. Chunks live until the program ends.
template <size_t Size>
class NodePool {
public:
    static void* take() {
        std::lock_guard<std::mutex> lock(mutex());
        State& s = state();
        if (s.free == nullptr) grow(s);
        Free* f = s.free;
        s.free = f->next;
        return f;
    }
    static void give(void* p) noexcept {
        std::lock_guard<std::mutex> lock(mutex());
        State& s = state();
        s.free = new (p) Free{s.free};
    }

private:
    struct Free {
        Free* next;
    };
    static_assert(Size >= sizeof(Free));
    static constexpr size_t kAlign = alignof(std::max_align_t);
    static constexpr size_t kSlot = (Size + kAlign - 1) / kAlign * kAlign;

    struct State {
        Free* free = nullptr;
        size_t next_chunk = 64;  // nodes; doubles up to 4096
        std::vector<std::unique_ptr<std::byte[]>> chunks;
    };
    static State& state() {
        static State* s = new State;  // never destroyed: nodes may outlive static objects
        return *s;
    }
    static std::mutex& mutex() {
        static std::mutex* m = new std::mutex;
        return *m;
    }
    static void grow(State& s) {
        const size_t n = s.next_chunk;
        s.next_chunk = std::min<size_t>(n * 2, 4096);
        s.chunks.emplace_back(new std::byte[n * kSlot]);
        std::byte* base = s.chunks.back().get();
        for (size_t i = n; i-- > 0;) s.free = new (base + i * kSlot) Free{s.free};
    }
};

template <typename T>
struct Pooled {
    static void* operator new(size_t n) {
        if (n != sizeof(T)) return ::operator new(n);
        return NodePool<sizeof(T)>::take();
    }
    static void operator delete(void* p, size_t n) noexcept {
        if (n != sizeof(T)) return ::operator delete(p);
        NodePool<sizeof(T)>::give(p);
    }
};

struct LeafNode : TrieNode, Pooled<LeafNode> {
    LeafNode(Nibbles p, bytes v) : TrieNode(Type::leaf), path(std::move(p)), value(std::move(v)) {}
    Nibbles path;
    bytes value;
};

struct ExtensionNode : TrieNode, Pooled<ExtensionNode> {
    ExtensionNode(Nibbles p, TrieNodePtr c)
        : TrieNode(Type::extension), path(std::move(p)), child(std::move(c)) {}
    Nibbles path;
    TrieNodePtr child;
};

struct BranchNode : TrieNode, Pooled<BranchNode> {
    BranchNode() : TrieNode(Type::branch) {}
    std::array<TrieNodePtr, 16> children;
    bytes value;
};

// A hashed child that has not been loaded: only its reference, and a row at its path.
struct StoredNode : TrieNode, Pooled<StoredNode> {
    explicit StoredNode(const NodeRef& r) : TrieNode(Type::stored) {
        ref = r;
        ref_valid = true;
        dirty = false;
        has_row = true;
    }
};

inline LeafNode& as_leaf(TrieNode& n) { return static_cast<LeafNode&>(n); }
inline ExtensionNode& as_ext(TrieNode& n) { return static_cast<ExtensionNode&>(n); }
inline BranchNode& as_branch(TrieNode& n) { return static_cast<BranchNode&>(n); }
inline const LeafNode& as_leaf(const TrieNode& n) { return static_cast<const LeafNode&>(n); }
inline const ExtensionNode& as_ext(const TrieNode& n) {
    return static_cast<const ExtensionNode&>(n);
}
inline const BranchNode& as_branch(const TrieNode& n) { return static_cast<const BranchNode&>(n); }

inline TrieNodePtr make_leaf(Nibbles path, bytes_view value) {
    return TrieNodePtr(new LeafNode(std::move(path), bytes(value.begin(), value.end())));
}
inline TrieNodePtr make_ext(Nibbles path, TrieNodePtr child) {
    return TrieNodePtr(new ExtensionNode(std::move(path), std::move(child)));
}

// Nibbles [0, depth) of key, plus one more nibble when extra >= 0: a node's database key,
// written into out.
inline bytes_view path_of(bytes& out, NibbleView key, size_t depth, int extra = -1) {
    out.clear();
    append_unpacked(out, key.sub(0, depth));
    if (extra >= 0) out.push_back(static_cast<uint8_t>(extra));
    return out;
}

// Replaces a StoredNode in slot by the node its row holds at path, checked by load_verified;
// does nothing to a node in memory. REQUIRES: slot is not empty.
Status load_stored(NodeReader* reader, TrieNodePtr& slot, bytes_view path);

struct Trie::Impl {
    Impl() {
        path.reserve(2 * 32 + 1);
        write_path.reserve(2 * 32 + 1);
        // Room for the rows one update of a 32-byte key releases, so that an update
        // allocates the same whatever its depth.
        deleted.reserve(32, 1024);
    }

    bytes path;           // read-path scratch of get()
    bytes write_path;     // path scratch of put() and remove()
    PackedBytes deleted;  // paths of rows that no longer hold their node

    // The node's row is gone from path once the node changes or leaves it.
    void release(TrieNode& n, bytes_view path_key) {
        if (!n.has_row) return;
        deleted.push_back(path_key);
        n.has_row = false;
    }
};

}  // namespace mpt
