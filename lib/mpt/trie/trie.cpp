#include <mpt/trie/trie.hpp>

#include <algorithm>
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

namespace {

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

LeafNode& as_leaf(TrieNode& n) { return static_cast<LeafNode&>(n); }
ExtensionNode& as_ext(TrieNode& n) { return static_cast<ExtensionNode&>(n); }
BranchNode& as_branch(TrieNode& n) { return static_cast<BranchNode&>(n); }
const LeafNode& as_leaf(const TrieNode& n) { return static_cast<const LeafNode&>(n); }
const ExtensionNode& as_ext(const TrieNode& n) { return static_cast<const ExtensionNode&>(n); }
const BranchNode& as_branch(const TrieNode& n) { return static_cast<const BranchNode&>(n); }

TrieNodePtr make_leaf(Nibbles path, bytes_view value) {
    return TrieNodePtr(new LeafNode(std::move(path), bytes(value.begin(), value.end())));
}
TrieNodePtr make_ext(Nibbles path, TrieNodePtr child) {
    return TrieNodePtr(new ExtensionNode(std::move(path), std::move(child)));
}

// Nibbles [0, depth) of key, plus one more nibble when extra >= 0: a node's database key,
// written into out.
bytes_view path_of(bytes& out, NibbleView key, size_t depth, int extra = -1) {
    out.clear();
    append_unpacked(out, key.sub(0, depth));
    if (extra >= 0) out.push_back(static_cast<uint8_t>(extra));
    return out;
}

Result<TrieNodePtr> from_view(const NodeView& v, const NodeRef& ref, bool has_row);

// A child as decoded from its parent's RLP: a hash becomes a StoredNode, an embedded RLP a
// node of its own (without a row).
Result<TrieNodePtr> child_from(bytes_view c) {
    if (c.empty()) return TrieNodePtr{};
    if (c.size() == 32) return TrieNodePtr(new StoredNode(NodeRef::from_view(c)));
    MPT_TRY(NodeView v, decode_node(c));
    return from_view(v, NodeRef::from_view(c), false);
}

Result<TrieNodePtr> from_view(const NodeView& v, const NodeRef& ref, bool has_row) {
    TrieNodePtr n;
    switch (v.kind) {
        case NodeView::Kind::leaf:
            n = make_leaf(Nibbles(v.path), v.value);
            break;
        case NodeView::Kind::extension: {
            MPT_TRY(TrieNodePtr child, child_from(v.child));
            n = make_ext(Nibbles(v.path), std::move(child));
            break;
        }
        case NodeView::Kind::branch: {
            auto b = std::make_unique<BranchNode>();
            for (size_t i = 0; i < 16; ++i) {
                MPT_TRY(b->children[i], child_from(v.children[i]));
            }
            b->value.assign(v.value.begin(), v.value.end());
            n = TrieNodePtr(b.release());
            break;
        }
    }
    n->dirty = false;
    n->ref_valid = true;
    n->has_row = has_row;
    n->ref = ref;
    return n;
}

}  // namespace

void TrieNodeDeleter::operator()(TrieNode* n) const noexcept {
    switch (n->type) {
        case Type::leaf:
            delete static_cast<LeafNode*>(n);
            break;
        case Type::extension:
            delete static_cast<ExtensionNode*>(n);
            break;
        case Type::branch:
            delete static_cast<BranchNode*>(n);
            break;
        case Type::stored:
            delete static_cast<StoredNode*>(n);
            break;
    }
}

struct Trie::Impl {
    Impl() {
        path.reserve(2 * 32 + 1);
        write_path.reserve(2 * 32 + 1);
        // Room for the rows one update of a 32-byte key releases, so that an update
        // allocates the same whatever its depth.
        deleted.reserve(1024);
        deleted_spans.reserve(32);
    }

    bytes path;        // read-path scratch of get()
    bytes write_path;  // path scratch of put() and remove()
    bytes enc;         // encoding scratch
    // Paths of rows that no longer hold their node, packed one after another.
    bytes deleted;
    std::vector<std::pair<size_t, size_t>> deleted_spans;  // (offset, length) into deleted

    // The node's row is gone from path once the node changes or leaves it.
    void release(TrieNode& n, bytes_view path_key) {
        if (!n.has_row) return;
        deleted_spans.emplace_back(deleted.size(), path_key.size());
        deleted.insert(deleted.end(), path_key.begin(), path_key.end());
        n.has_row = false;
    }
};

namespace {

// The mutable operations, with the reader and the deletion record at hand.
class Mutator {
public:
    Mutator(NodeReader* reader, Trie::Impl& impl) : reader_(reader), impl_(impl) {}

    Status resolve(TrieNodePtr& slot, bytes_view path) {
        if (slot->type != Type::stored) return {};
        if (reader_ == nullptr) return {Errc::internal, "stored node without a reader"};
        MPT_TRY(const NodeView v, load_verified(*reader_, path, slot->ref.hash()));
        auto n = from_view(v, slot->ref, true);
        // An embedded child that is no valid node: the row holding it is at fault.
        if (!n) return node_error(Errc::storage_bad_node, *reader_, path, n.error().message());
        slot = std::move(*n);
        return {};
    }

    Status resolve_at(TrieNodePtr& slot, NibbleView key, size_t depth, int extra = -1) {
        if (slot->type != Type::stored) return {};
        return resolve(slot, path_of(impl_.write_path, key, depth, extra));
    }

    void touch(TrieNode& n, NibbleView key, size_t depth) {
        if (n.has_row) impl_.release(n, path_of(impl_.write_path, key, depth));
        n.dirty = true;
        n.ref_valid = false;
    }

    void drop(TrieNode& n, NibbleView key, size_t depth, int extra = -1) {
        if (n.has_row) impl_.release(n, path_of(impl_.write_path, key, depth, extra));
    }

    Result<bool> insert(TrieNodePtr& slot, NibbleView key, size_t depth, bytes_view value) {
        const NibbleView rest = key.sub(depth);
        if (!slot) {
            slot = make_leaf(Nibbles(rest), value);
            return true;
        }
        MPT_RETURN_IF_ERROR(resolve_at(slot, key, depth));
        switch (slot->type) {
            case Type::leaf: {
                LeafNode& leaf = as_leaf(*slot);
                const size_t cp = common_prefix(leaf.path, rest);
                if (cp == leaf.path.size() && cp == rest.size()) {
                    if (std::equal(leaf.value.begin(), leaf.value.end(), value.begin(),
                                   value.end())) {
                        return false;
                    }
                    touch(leaf, key, depth);
                    leaf.value.assign(value.begin(), value.end());
                    return true;
                }
                auto b = std::make_unique<BranchNode>();
                if (cp == leaf.path.size()) {
                    b->value = std::move(leaf.value);
                } else {
                    b->children[leaf.path[cp]] = make_leaf(leaf.path.sub(cp + 1), leaf.value);
                }
                add_new(*b, rest, cp, value);
                drop(leaf, key, depth);
                slot = wrap(Nibbles(rest.sub(0, cp)), std::move(b));
                return true;
            }
            case Type::extension: {
                ExtensionNode& ext = as_ext(*slot);
                const size_t cp = common_prefix(ext.path, rest);
                if (cp == ext.path.size()) {
                    MPT_TRY(bool changed, insert(ext.child, key, depth + cp, value));
                    if (changed) touch(ext, key, depth);
                    return changed;
                }
                auto b = std::make_unique<BranchNode>();
                // The old child keeps its depth, so its row stays valid.
                b->children[ext.path[cp]] =
                    cp + 1 == ext.path.size()
                        ? std::move(ext.child)
                        : make_ext(ext.path.sub(cp + 1), std::move(ext.child));
                add_new(*b, rest, cp, value);
                drop(ext, key, depth);
                slot = wrap(Nibbles(rest.sub(0, cp)), std::move(b));
                return true;
            }
            case Type::branch: {
                BranchNode& b = as_branch(*slot);
                bool changed;
                if (rest.empty()) {
                    changed =
                        !std::equal(b.value.begin(), b.value.end(), value.begin(), value.end());
                    if (changed) b.value.assign(value.begin(), value.end());
                } else {
                    MPT_TRY(changed, insert(b.children[rest[0]], key, depth + 1, value));
                }
                if (changed) touch(b, key, depth);
                return changed;
            }
            case Type::stored:
                break;
        }
        return {Errc::internal, "unresolved node"};
    }

    Result<bool> remove(TrieNodePtr& slot, NibbleView key, size_t depth) {
        if (!slot) return false;
        MPT_RETURN_IF_ERROR(resolve_at(slot, key, depth));
        const NibbleView rest = key.sub(depth);
        switch (slot->type) {
            case Type::leaf: {
                if (!nibbles_equal(as_leaf(*slot).path, rest)) return false;
                drop(*slot, key, depth);
                slot.reset();
                return true;
            }
            case Type::extension: {
                ExtensionNode& ext = as_ext(*slot);
                const size_t n = ext.path.size();
                if (common_prefix(ext.path, rest) != n) return false;
                MPT_TRY(bool changed, remove(ext.child, key, depth + n));
                if (!changed) return false;
                touch(ext, key, depth);
                if (!ext.child) {  // only in a malformed stored trie: the child was a leaf
                    slot.reset();
                    return true;
                }
                // The child was a branch; if it collapsed into a short node, absorb it.
                TrieNode& child = *ext.child;
                if (child.type == Type::leaf || child.type == Type::extension) {
                    drop(child, key, depth + n);
                    slot = merge(ext.path, std::move(ext.child));
                }
                return true;
            }
            case Type::branch: {
                BranchNode& b = as_branch(*slot);
                if (rest.empty()) {
                    if (b.value.empty()) return false;
                    b.value.clear();
                } else {
                    MPT_TRY(bool changed, remove(b.children[rest[0]], key, depth + 1));
                    if (!changed) return false;
                }
                touch(b, key, depth);
                return collapse(slot, key, depth);
            }
            case Type::stored:
                break;
        }
        return {Errc::internal, "unresolved node"};
    }

private:
    static void add_new(BranchNode& b, NibbleView rest, size_t cp, bytes_view value) {
        if (cp == rest.size()) {
            b.value.assign(value.begin(), value.end());
        } else {
            b.children[rest[cp]] = make_leaf(Nibbles(rest.sub(cp + 1)), value);
        }
    }

    static TrieNodePtr wrap(Nibbles path, std::unique_ptr<BranchNode> b) {
        TrieNodePtr node(b.release());
        if (path.empty()) return node;
        return make_ext(std::move(path), std::move(node));
    }

    // A short node under prefix, replacing the short node child: their paths join.
    static TrieNodePtr merge(const Nibbles& prefix, TrieNodePtr child) {
        if (child->type == Type::leaf) {
            LeafNode& leaf = as_leaf(*child);
            return TrieNodePtr(new LeafNode(prefix.concat(leaf.path), std::move(leaf.value)));
        }
        ExtensionNode& ext = as_ext(*child);
        return make_ext(prefix.concat(ext.path), std::move(ext.child));
    }

    // A branch left with one entry becomes a short node.
    Result<bool> collapse(TrieNodePtr& slot, NibbleView key, size_t depth) {
        BranchNode& b = as_branch(*slot);
        int only = -1;
        size_t entries = b.value.empty() ? 0 : 1;
        for (int i = 0; i < 16; ++i) {
            if (b.children[i]) {
                ++entries;
                only = i;
            }
        }
        if (entries >= 2) return true;
        if (only < 0) {
            slot = make_leaf(Nibbles(), b.value);
            return true;
        }
        TrieNodePtr& child = b.children[only];
        MPT_RETURN_IF_ERROR(resolve_at(child, key, depth, only));
        const Nibbles prefix(bytes{static_cast<uint8_t>(only)});
        if (child->type == Type::branch) {
            slot = make_ext(prefix, std::move(child));
        } else {
            drop(*child, key, depth, only);
            slot = merge(prefix, std::move(child));
        }
        return true;
    }

    NodeReader* reader_;
    Trie::Impl& impl_;
};

// Hashes node n standing at path; with a batch, also emits dirty hashed nodes as rows.
class Hasher {
public:
    Hasher(bytes& enc, CommitBatch* batch) : enc_(enc), batch_(batch) {}

    NodeRef hash(TrieNode& n, bytes& path, bool root) {
        if (n.type == Type::stored) return n.ref;
        const bool write = batch_ != nullptr && (n.dirty || (root && !n.has_row));
        if (n.ref_valid && !write && (!root || n.ref.is_hash())) return n.ref;
        switch (n.type) {
            case Type::leaf: {
                LeafNode& leaf = as_leaf(n);
                enc_.clear();
                encode_leaf(enc_, leaf.path, leaf.value);
                break;
            }
            case Type::extension: {
                ExtensionNode& ext = as_ext(n);
                const size_t len = path.size();
                path.insert(path.end(), ext.path.unpacked().begin(), ext.path.unpacked().end());
                const NodeRef child = hash(*ext.child, path, false);
                path.resize(len);
                enc_.clear();
                encode_extension(enc_, ext.path, child);
                break;
            }
            case Type::branch: {
                BranchNode& b = as_branch(n);
                std::array<NodeRef, 16> refs;
                for (uint8_t i = 0; i < 16; ++i) {
                    if (!b.children[i]) continue;
                    path.push_back(i);
                    refs[i] = hash(*b.children[i], path, false);
                    path.pop_back();
                }
                enc_.clear();
                encode_branch(enc_, refs.data(), b.value);
                break;
            }
            case Type::stored:
                break;
        }
        n.ref = root ? NodeRef::from_hash(keccak256(enc_)) : NodeRef::of(enc_);
        n.ref_valid = true;
        if (write) {
            if (n.ref.is_hash()) {
                batch_->puts.push_back(path, enc_);
                n.has_row = true;
            }
            n.dirty = false;
        }
        return n.ref;
    }

private:
    bytes& enc_;
    CommitBatch* batch_;
};

// Ordered traversal from a lower bound.
class Walker {
public:
    Walker(NodeReader* reader, Trie::Impl& impl, NibbleView from, const Trie::Visitor& f)
        : mutator_(reader, impl), from_(from), f_(f) {}

    // Returns false once the visitor asked to stop. prefix holds the node's path.
    Result<bool> walk(const TrieNode& node, bool bounded) {
        if (node.type == Type::stored) {
            TrieNodePtr loaded(new StoredNode(node.ref));
            MPT_RETURN_IF_ERROR(mutator_.resolve(loaded, prefix_));
            return walk(*loaded, bounded);
        }
        const size_t depth = prefix_.size();
        const NibbleView rest = bounded ? from_.sub(depth) : NibbleView{};
        switch (node.type) {
            case Type::leaf: {
                const LeafNode& leaf = as_leaf(node);
                if (bounded && compare(leaf.path, rest, /*leaf=*/true) < 0) return true;
                prefix_.insert(prefix_.end(), leaf.path.unpacked().begin(),
                               leaf.path.unpacked().end());
                auto r = emit(leaf.value);
                prefix_.resize(depth);
                return r;
            }
            case Type::extension: {
                const ExtensionNode& ext = as_ext(node);
                bool child_bounded = false;
                if (bounded) {
                    const int c = compare(ext.path, rest, /*leaf=*/false);
                    if (c < 0) return true;
                    child_bounded = c == 0;
                }
                prefix_.insert(prefix_.end(), ext.path.unpacked().begin(),
                               ext.path.unpacked().end());
                auto r = walk(*ext.child, child_bounded);
                prefix_.resize(depth);
                return r;
            }
            case Type::branch: {
                const BranchNode& b = as_branch(node);
                // The value's key is the prefix itself: at or after from only if equal.
                if (!b.value.empty() && (!bounded || rest.empty())) {
                    MPT_TRY(bool go_on, emit(b.value));
                    if (!go_on) return false;
                }
                const uint8_t first = bounded && !rest.empty() ? rest[0] : 0;
                for (uint8_t i = first; i < 16; ++i) {
                    if (!b.children[i]) continue;
                    prefix_.push_back(i);
                    auto r = walk(*b.children[i], bounded && !rest.empty() && i == first);
                    prefix_.pop_back();
                    MPT_TRY(bool go_on, std::move(r));
                    if (!go_on) return false;
                }
                return true;
            }
            case Type::stored:
                break;
        }
        return {Errc::internal, "unresolved node"};
    }

private:
    // For a short node's path against the rest of the bound: <0 when every key below the
    // node precedes the bound, 0 when the bound still falls inside (an extension whose path
    // prefixes it, or a leaf equal to it), >0 when every key follows it.
    static int compare(const Nibbles& path, NibbleView rest, bool leaf) {
        const size_t cp = common_prefix(path, rest);
        if (cp == path.size()) {
            if (leaf) return cp == rest.size() ? 0 : -1;
            return 0;
        }
        if (cp == rest.size()) return 1;
        return path[cp] < rest[cp] ? -1 : 1;
    }

    Result<bool> emit(const bytes& value) {
        if (prefix_.size() % 2 != 0) return {Errc::bad_node, "value at an odd nibble depth"};
        pack_nibbles(key_, prefix_);
        return f_(key_, value);
    }

    Mutator mutator_;
    NibbleView from_;
    const Trie::Visitor& f_;
    bytes prefix_;
    bytes key_;
};

}  // namespace

Trie::Trie() : impl_(std::make_unique<Impl>()) {}
Trie::~Trie() = default;
Trie::Trie(Trie&&) noexcept = default;
Trie& Trie::operator=(Trie&&) noexcept = default;

Trie Trie::open(NodeReader* reader, const Hash256& root) {
    Trie t;
    t.reader_ = reader;
    if (root != kEmptyRoot) t.root_ = TrieNodePtr(new StoredNode(NodeRef::from_hash(root)));
    return t;
}

Result<bool> Trie::get(bytes_view key, bytes& out) const {
    PathCursor at(key);
    const TrieNode* n = root_.get();
    // One descent: the nodes in memory, then from the first node that is only stored, its
    // row and the rows below, read by path without keeping them.
    while (n != nullptr && n->type != Type::stored) {
        const NibbleView rest = at.remaining();
        const bytes* value = nullptr;
        switch (n->type) {
            case Type::leaf:
                if (nibbles_equal(as_leaf(*n).path, rest)) value = &as_leaf(*n).value;
                break;
            case Type::extension: {
                const ExtensionNode& ext = as_ext(*n);
                if (common_prefix(ext.path, rest) != ext.path.size()) return false;
                at.advance(ext.path.size());
                n = ext.child.get();
                continue;
            }
            case Type::branch: {
                const BranchNode& b = as_branch(*n);
                if (!rest.empty()) {
                    at.advance(1);
                    n = b.children[rest[0]].get();
                    continue;
                }
                value = &b.value;
                break;
            }
            case Type::stored:
                break;
        }
        if (value == nullptr || value->empty()) return false;
        out.assign(value->begin(), value->end());
        return true;
    }
    if (n == nullptr) return false;
    Hash256 expected = n->ref.hash();
    bytes& path = impl_->path;
    while (true) {
        path.clear();
        append_unpacked(path, at.consumed());
        MPT_TRY(NodeView v, load_verified(*reader_, path, expected));
        // Embedded children live inside the row just read.
        while (true) {
            const Descent d = descend(v, at);
            if (d.kind == Descent::Kind::absent) return false;
            if (d.kind == Descent::Kind::value) {
                out.assign(d.ref.begin(), d.ref.end());
                return true;
            }
            if (d.ref.size() == 32) {
                std::copy(d.ref.begin(), d.ref.end(), expected.begin());
                break;
            }
            MPT_TRY(v, decode_stored(*reader_, path, d.ref));
        }
    }
}

Result<std::optional<bytes>> Trie::get(bytes_view key) const {
    bytes out;
    MPT_TRY(bool found, get(key, out));
    if (!found) return std::optional<bytes>{};
    return std::optional<bytes>{std::move(out)};
}

Status Trie::put(bytes_view key, bytes_view value) {
    if (value.empty()) return remove(key);
    Mutator m(reader_, *impl_);
    MPT_TRY([[maybe_unused]] bool changed, m.insert(root_, NibbleView(key), 0, value));
    return {};
}

Status Trie::remove(bytes_view key) {
    Mutator m(reader_, *impl_);
    MPT_TRY([[maybe_unused]] bool changed, m.remove(root_, NibbleView(key), 0));
    return {};
}

Result<Hash256> Trie::root_hash() {
    if (!root_) return kEmptyRoot;
    bytes path;
    Hasher h(impl_->enc, nullptr);
    return h.hash(*root_, path, true).hash();
}

Result<CommitBatch> Trie::commit() {
    CommitBatch batch;
    if (!root_) {
        batch.root = kEmptyRoot;
    } else {
        bytes path;
        Hasher h(impl_->enc, &batch);
        batch.root = h.hash(*root_, path, true).hash();
    }
    // The released paths, less those written again, sorted and without repeats.
    const bytes& arena = impl_->deleted;
    std::vector<bytes_view> del;
    del.reserve(impl_->deleted_spans.size());
    for (const auto& [off, len] : impl_->deleted_spans) del.emplace_back(arena.data() + off, len);
    std::sort(del.begin(), del.end(), bytes_less);
    del.erase(std::unique(del.begin(), del.end(), bytes_equal), del.end());
    std::vector<bytes_view> written;
    written.reserve(batch.puts.size());
    for (const bytes_view p : batch.puts.paths()) written.push_back(p);
    std::sort(written.begin(), written.end(), bytes_less);
    size_t w = 0;
    for (const bytes_view p : del) {
        while (w < written.size() && bytes_less(written[w], p)) ++w;
        if (w < written.size() && bytes_equal(written[w], p)) continue;
        batch.deletes.push_back(p);
    }
    impl_->deleted.clear();
    impl_->deleted_spans.clear();
    return batch;
}

Status Trie::for_each(bytes_view from, const Visitor& f) const {
    if (!root_) return {};
    const NibbleView bound(from);
    Walker w(reader_, *impl_, bound, f);
    MPT_TRY([[maybe_unused]] bool completed, w.walk(*root_, true));
    return {};
}

Result<std::optional<bytes>> Trie::prev_key(bytes_view key) const {
    std::optional<bytes> last;
    const bytes target(key.begin(), key.end());
    MPT_RETURN_IF_ERROR(for_each({}, [&](bytes_view k, bytes_view) {
        if (!bytes_less(k, target)) return false;
        last = bytes(k.begin(), k.end());
        return true;
    }));
    return last;
}

Result<std::optional<bytes>> Trie::next_key(bytes_view key) const {
    std::optional<bytes> next;
    MPT_RETURN_IF_ERROR(for_each(key, [&](bytes_view k, bytes_view) {
        if (bytes_equal(k, key)) return true;
        next = bytes(k.begin(), k.end());
        return false;
    }));
    return next;
}

}  // namespace mpt
