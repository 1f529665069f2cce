// Range verification (verify_range, proof.hpp): the partial trie that a range's edge proofs
// and pairs rebuild, and the checks on it. One mechanism in one file, a little over the
// library's ~500 lines: inserting the proven nodes, clearing what lies between the edges and
// hashing the result are three parts of one invariant (every node the proofs do not fix
// is rebuilt from the pairs), and split apart each would need the others' internals.
#include <mpt/proof/detail/proof_index.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/trie/stack_trie.hpp>

namespace mpt {
namespace {

bytes unpack(NibbleView v) {
    bytes out;
    append_unpacked(out, v);
    return out;
}

constexpr uint32_t kNil = UINT32_MAX;

// The part of a trie that edge proofs reveal, as go-ethereum rebuilds it for a range check:
// nodes on the edge paths are decoded, everything else stays a reference (a hash, or the RLP
// of an embedded node) that hashes to itself. Nodes live in an arena and name each other by
// index; every walk is a loop and hashing keeps an explicit stack, so a path as deep as a
// proof can make it costs heap, not stack.
class PartialTrie {
public:
    // Room for nodes nodes is reserved up front: the arena then never moves, and the pages
    // it does not use are never touched.
    PartialTrie(const ProofIndex& index, const Hash256& root, size_t nodes) : index_(index) {
        nodes_.reserve(nodes);
        Node r;
        r.ref = NodeRef::from_hash(root);
        root_ = add(std::move(r));
    }

    // go-ethereum's proofToPath: decodes the nodes on key's path, from the proof or from the
    // embedded RLP their parent holds. Returns the value at key when the path reaches it.
    Result<std::optional<bytes>> resolve_path(NibbleView key);

    // go-ethereum's unsetInternal: drops every entry and reference that lies between the
    // edges lo and hi, and the entries at lo and hi themselves, so that the pairs of the range
    // can be inserted into what remains. REQUIRES: lo < hi, equal lengths, both resolved.
    Status clear_between(NibbleView lo, NibbleView hi);

    // Inserts a pair. A pair whose path runs into an unresolved reference lies outside the
    // part the edge proofs opened.
    Status insert(bytes_view key, bytes_view value);

    Hash256 root_hash() const;

    // go-ethereum's hasRightElement: whether any entry lies right of key. REQUIRES: key's
    // path is resolved.
    Result<bool> has_right(NibbleView key) const;

private:
    struct Node {
        enum class Kind : uint8_t { ref, leaf, extension, branch };
        Node() { children.fill(kNil); }
        Kind kind = Kind::ref;
        NodeRef ref;                        // ref: what the parent holds for this subtree
        bytes path;                         // leaf, extension: one nibble per byte
        bytes value;                        // leaf, branch
        uint32_t child = kNil;              // extension
        std::array<uint32_t, 16> children;  // branch
    };
    using Kind = Node::Kind;

    // A place that holds a node index: the root, a branch child (0-15) or an extension's
    // child (16).
    struct Slot {
        uint32_t parent = kNil;
        uint8_t index = 0;
    };
    static constexpr uint8_t kExtChild = 16;

    // The reference is valid until the next add().
    uint32_t& at(Slot s) {
        if (s.parent == kNil) return root_;
        Node& p = nodes_[s.parent];
        return s.index == kExtChild ? p.child : p.children[s.index];
    }
    uint32_t add(Node n) {
        nodes_.push_back(std::move(n));
        return static_cast<uint32_t>(nodes_.size() - 1);
    }
    uint32_t add_ref(bytes_view rlp_or_hash) {
        Node n;
        n.ref = NodeRef::from_view(rlp_or_hash);
        return add(std::move(n));
    }
    uint32_t add_leaf(bytes path, bytes_view value) {
        Node n;
        n.kind = Kind::leaf;
        n.path = std::move(path);
        n.value.assign(value.begin(), value.end());
        return add(std::move(n));
    }
    // Node id's path and the rest of a new key part after cp shared nibbles: a branch there,
    // under an extension over those nibbles, takes what is left of the old node and the
    // new value.
    void split(uint32_t id, size_t cp, NibbleView rest, bytes_view value);

    Status resolve(uint32_t id, size_t depth);
    Status clear_side(Slot slot, NibbleView key, size_t pos, bool right_of_key);

    const ProofIndex& index_;
    std::vector<Node> nodes_;
    uint32_t root_ = kNil;
};

Status PartialTrie::resolve(uint32_t id, size_t depth) {
    const NodeRef ref = nodes_[id].ref;  // a copy: adding children moves the arena
    bytes_view rlp;
    if (ref.is_hash()) {
        const Hash256 h = ref.hash();
        const bytes_view* found = index_.find(h);
        if (found == nullptr) return invalid(missing_reason(h, depth));
        rlp = *found;
    } else {
        rlp = ref.view();
    }
    auto v = decode_node(rlp);
    if (!v) return invalid(decode_reason(v.error(), depth));
    Node n;
    n.ref = ref;
    switch (v->kind) {
        case NodeView::Kind::leaf:
            n.kind = Kind::leaf;
            n.path = unpack(v->path);
            n.value.assign(v->value.begin(), v->value.end());
            break;
        case NodeView::Kind::extension:
            n.kind = Kind::extension;
            n.path = unpack(v->path);
            n.child = add_ref(v->child);
            break;
        case NodeView::Kind::branch:
            n.kind = Kind::branch;
            for (size_t i = 0; i < 16; ++i) {
                if (!v->children[i].empty()) n.children[i] = add_ref(v->children[i]);
            }
            n.value.assign(v->value.begin(), v->value.end());
            break;
    }
    nodes_[id] = std::move(n);
    return {};
}

Result<std::optional<bytes>> PartialTrie::resolve_path(NibbleView key) {
    uint32_t id = root_;
    size_t pos = 0;
    // Each turn consumes at least one nibble (an extension's path is never empty) or ends.
    while (id != kNil) {
        if (nodes_[id].kind == Kind::ref) MPT_RETURN_IF_ERROR(resolve(id, pos));
        const Node& n = nodes_[id];
        const NibbleView rest = key.sub(pos);
        switch (n.kind) {
            case Kind::leaf:
                if (!nibbles_equal(n.path, rest)) return std::optional<bytes>{};
                return std::optional<bytes>{n.value};
            case Kind::extension:
                if (common_prefix(n.path, rest) != n.path.size()) return std::optional<bytes>{};
                pos += n.path.size();
                id = n.child;
                break;
            case Kind::branch:
                if (rest.empty()) {
                    if (n.value.empty()) return std::optional<bytes>{};
                    return std::optional<bytes>{n.value};
                }
                id = n.children[rest[0]];
                ++pos;
                break;
            case Kind::ref:
                return Error{Errc::internal, "unresolved node on a resolved path"};
        }
    }
    return std::optional<bytes>{};
}

Status PartialTrie::clear_between(NibbleView lo, NibbleView hi) {
    MPT_ASSERT(lo.size() == hi.size() && key_vs_short_node(lo, Nibbles(hi), true) < 0);
    // Down the common path of both edges to the fork point.
    Slot slot;
    size_t pos = 0;
    while (true) {
        const uint32_t id = at(slot);
        if (id == kNil) return {};
        Node& n = nodes_[id];
        switch (n.kind) {
            case Kind::ref:
                return invalid("edge path not resolved at depth " + std::to_string(pos));
            case Kind::leaf:
            case Kind::extension: {
                const bool leaf = n.kind == Kind::leaf;
                const int l = key_vs_short_node(lo.sub(pos), n.path, leaf);
                const int h = key_vs_short_node(hi.sub(pos), n.path, leaf);
                if (!leaf && l == 0 && h == 0) {
                    pos += n.path.size();
                    slot = {id, kExtChild};
                    continue;
                }
                // lo < hi, so l <= h.
                if (l == h) {
                    return invalid(
                        "empty range: both edges lie on the same side of the node at depth " +
                        std::to_string(pos));
                }
                if (l < 0 && h > 0) {  // the whole node lies between the edges
                    at(slot) = kNil;
                    return {};
                }
                if (leaf) {  // the leaf is one edge's own entry
                    at(slot) = kNil;
                    return {};
                }
                const size_t below = pos + n.path.size();
                if (l == 0) return clear_side({id, kExtChild}, lo, below, true);
                return clear_side({id, kExtChild}, hi, below, false);
            }
            case Kind::branch: {
                // Equal lengths and lo != hi: both still have a nibble here.
                MPT_ASSERT(pos < lo.size());
                const uint8_t a = lo[pos];
                const uint8_t b = hi[pos];
                if (a == b && n.children[a] != kNil) {
                    slot = {id, a};
                    ++pos;
                    continue;
                }
                // The fork. The branch's own value has a proper prefix of lo as its key and
                // so lies left of the range: it stays.
                for (unsigned i = a + 1u; i < b; ++i) n.children[i] = kNil;
                MPT_RETURN_IF_ERROR(clear_side({id, a}, lo, pos + 1, true));
                return clear_side({id, b}, hi, pos + 1, false);
            }
        }
    }
}

// Below the fork, along one edge: clears what lies right of key (right_of_key: key is the
// left edge) or left of it (key is the right edge), and key's own entry.
Status PartialTrie::clear_side(Slot slot, NibbleView key, size_t pos, bool right_of_key) {
    while (true) {
        const uint32_t id = at(slot);
        if (id == kNil) return {};
        Node& n = nodes_[id];
        switch (n.kind) {
            case Kind::ref:
                return invalid("edge path not resolved at depth " + std::to_string(pos));
            case Kind::leaf:
            case Kind::extension: {
                const bool leaf = n.kind == Kind::leaf;
                const int c = key_vs_short_node(key.sub(pos), n.path, leaf);
                if (c == 0) {
                    if (leaf) {
                        at(slot) = kNil;
                        return {};
                    }
                    pos += n.path.size();
                    slot = {id, kExtChild};
                    continue;
                }
                // The node lies wholly on one side of the edge.
                if (right_of_key ? c < 0 : c > 0) at(slot) = kNil;
                return {};
            }
            case Kind::branch: {
                if (pos == key.size()) {
                    // The edge ends here: the value is its entry, and every child lies right
                    // of it.
                    n.value.clear();
                    if (right_of_key) n.children.fill(kNil);
                    return {};
                }
                // The value's key is a proper prefix of the edge. Left of the left edge it
                // stays; under the right edge, below the fork, it lies inside the range.
                if (!right_of_key) n.value.clear();
                const uint8_t e = key[pos];
                if (right_of_key) {
                    for (unsigned i = e + 1u; i < 16; ++i) n.children[i] = kNil;
                } else {
                    for (unsigned i = 0; i < e; ++i) n.children[i] = kNil;
                }
                slot = {id, e};
                ++pos;
                continue;
            }
        }
    }
}

void PartialTrie::split(uint32_t id, size_t cp, NibbleView rest, bytes_view value) {
    Node old = std::move(nodes_[id]);
    Node b;
    b.kind = Kind::branch;
    if (cp == old.path.size()) {
        b.value = std::move(old.value);  // a leaf whose key the new one continues
    } else {
        const uint8_t nibble = old.path[cp];
        old.path.erase(old.path.begin(), old.path.begin() + static_cast<ptrdiff_t>(cp) + 1);
        // An extension with no path left is its child.
        const bool bare = old.kind == Kind::extension && old.path.empty();
        b.children[nibble] = bare ? old.child : add(std::move(old));
    }
    if (cp == rest.size()) {
        b.value.assign(value.begin(), value.end());
    } else {
        b.children[rest[cp]] = add_leaf(unpack(rest.sub(cp + 1)), value);
    }
    if (cp == 0) {
        nodes_[id] = std::move(b);
        return;
    }
    Node e;
    e.kind = Kind::extension;
    e.path = unpack(rest.sub(0, cp));
    e.child = add(std::move(b));
    nodes_[id] = std::move(e);
}

Status PartialTrie::insert(bytes_view key_bytes, bytes_view value) {
    const NibbleView key(key_bytes);
    Slot slot;
    size_t pos = 0;
    while (true) {
        const uint32_t id = at(slot);
        const NibbleView rest = key.sub(pos);
        if (id == kNil) {
            const uint32_t leaf = add_leaf(unpack(rest), value);
            at(slot) = leaf;
            return {};
        }
        switch (nodes_[id].kind) {
            case Kind::ref:
                return invalid("key " + to_hex(key_bytes) +
                               " lies in a part of the trie the edge proofs do not open");
            case Kind::leaf:
            case Kind::extension: {
                Node& n = nodes_[id];
                const size_t cp = common_prefix(n.path, rest);
                if (n.kind == Kind::extension && cp == n.path.size()) {
                    pos += cp;
                    slot = {id, kExtChild};
                    continue;
                }
                if (cp == n.path.size() && cp == rest.size()) {  // the leaf's own key
                    n.value.assign(value.begin(), value.end());
                    return {};
                }
                split(id, cp, rest, value);
                return {};
            }
            case Kind::branch:
                if (rest.empty()) {
                    nodes_[id].value.assign(value.begin(), value.end());
                    return {};
                }
                slot = {id, rest[0]};
                ++pos;
                continue;
        }
    }
}

namespace {

// Encodings of 32 bytes or more waiting for their hashes until a parent needs their
// references; then hashed together (keccak256_batch).
class PendingRefs {
public:
    void add(uint32_t id, bytes_view enc) {
        data_.insert(data_.end(), enc.begin(), enc.end());
        ends_.push_back(data_.size());
        ids_.push_back(id);
    }
    // Sets the reference of every waiting node in refs, and empties this.
    void hash_into(std::vector<NodeRef>& refs) {
        if (ids_.empty()) return;
        inputs_.clear();
        for (size_t i = 0, begin = 0; i < ends_.size(); begin = ends_[i++]) {
            inputs_.emplace_back(data_.data() + begin, ends_[i] - begin);
        }
        hashes_.resize(inputs_.size());
        keccak256_batch(inputs_, hashes_);
        for (size_t i = 0; i < ids_.size(); ++i) refs[ids_[i]] = NodeRef::from_hash(hashes_[i]);
        data_.clear();
        ends_.clear();
        ids_.clear();
    }

private:
    bytes data_;                 // the encodings, one after another
    std::vector<size_t> ends_;   // where each ends in data_
    std::vector<uint32_t> ids_;  // whose they are
    std::vector<bytes_view> inputs_;
    std::vector<Hash256> hashes_;
};

}  // namespace

Hash256 PartialTrie::root_hash() const {
    if (root_ == kNil) return kEmptyRoot;
    if (nodes_[root_].kind == Kind::ref) return nodes_[root_].ref.hash();  // the given root
    // Post-order with an explicit stack: a node is encoded once its children's references
    // are known. The encodings of 32 bytes or more wait in pending until a parent needs
    // their references, and are then hashed together (keccak256_batch): a branch's children
    // in one batch.
    std::vector<NodeRef> refs(nodes_.size());
    std::vector<std::pair<uint32_t, bool>> stack{{root_, false}};
    bytes enc;
    PendingRefs pending;
    Hash256 root{};
    while (!stack.empty()) {
        const auto [id, expanded] = stack.back();
        const Node& n = nodes_[id];
        if (n.kind == Kind::ref) {
            refs[id] = n.ref;
            stack.pop_back();
            continue;
        }
        if (!expanded) {
            stack.back().second = true;
            if (n.kind == Kind::extension && n.child != kNil) stack.emplace_back(n.child, false);
            if (n.kind == Kind::branch) {
                for (const uint32_t c : n.children) {
                    if (c != kNil) stack.emplace_back(c, false);
                }
            }
            continue;
        }
        enc.clear();
        if (n.kind != Kind::leaf) pending.hash_into(refs);
        switch (n.kind) {
            case Kind::leaf:
                encode_leaf(enc, n.path, n.value);
                break;
            case Kind::extension:
                // A child cleared away and not refilled encodes as empty: such a node can only
                // hash to the root by a collision, so the check fails as it should.
                encode_extension(enc, n.path, n.child == kNil ? NodeRef{} : refs[n.child]);
                break;
            case Kind::branch: {
                std::array<NodeRef, 16> children{};
                for (size_t i = 0; i < 16; ++i) {
                    if (n.children[i] != kNil) children[i] = refs[n.children[i]];
                }
                encode_branch(enc, children.data(), n.value);
                break;
            }
            case Kind::ref:
                break;
        }
        if (id == root_) {
            root = keccak256(enc);  // the root is hashed whatever its size
        } else if (enc.size() < 32) {
            refs[id] = NodeRef::of(enc);
        } else {
            pending.add(id, enc);
        }
        stack.pop_back();
    }
    return root;
}

Result<bool> PartialTrie::has_right(NibbleView key) const {
    uint32_t id = root_;
    size_t pos = 0;
    while (id != kNil) {
        const Node& n = nodes_[id];
        switch (n.kind) {
            case Kind::ref:
                return invalid("path not resolved at depth " + std::to_string(pos));
            case Kind::leaf:
                return key_vs_short_node(key.sub(pos), n.path, true) < 0;
            case Kind::extension: {
                const int c = key_vs_short_node(key.sub(pos), n.path, false);
                if (c != 0) return c < 0;
                pos += n.path.size();
                id = n.child;
                break;
            }
            case Kind::branch: {
                if (pos == key.size()) {
                    for (const uint32_t c : n.children) {
                        if (c != kNil) return true;
                    }
                    return false;
                }
                for (unsigned i = key[pos] + 1u; i < 16; ++i) {
                    if (n.children[i] != kNil) return true;
                }
                id = n.children[key[pos]];
                ++pos;
                break;
            }
        }
    }
    return false;
}

}  // namespace

Result<RangeResult> verify_range(const Hash256& root, bytes_view first,
                                 const std::vector<bytes>& keys, const std::vector<bytes>& values,
                                 const std::vector<bytes>* proof) {
    if (keys.size() != values.size()) {
        return invalid("keys and values differ in number (" + std::to_string(keys.size()) +
                       " keys, " + std::to_string(values.size()) + " values)");
    }
    for (size_t i = 0; i < keys.size(); ++i) {
        if (values[i].empty()) {
            return invalid("value " + std::to_string(i + 1) + " is empty (a deletion)");
        }
        if (i == 0) continue;
        if (!bytes_less(keys[i - 1], keys[i])) {
            return invalid("keys are not strictly increasing at key " + std::to_string(i + 1));
        }
        if (keys[i].size() != keys[0].size()) {
            return invalid("range proofs require keys of equal length (key " +
                           std::to_string(i + 1) + " has " + std::to_string(keys[i].size()) +
                           " bytes, key 1 has " + std::to_string(keys[0].size()) + ")");
        }
    }
    if (!keys.empty() && bytes_less(keys[0], first)) return invalid("key 1 precedes first");

    if (proof == nullptr) {
        // No proof: the pairs must be the whole trie.
        StackTrie st;
        for (size_t i = 0; i < keys.size(); ++i) {
            if (auto s = st.add(keys[i], values[i]); !s) return invalid(s.error().message());
        }
        const Hash256 got = st.finish();
        if (got != root) {
            return invalid("the pairs are not the whole trie: their root is " + to_hex(got));
        }
        return RangeResult{false};
    }
    if (!keys.empty() && first.size() != keys[0].size()) {
        return invalid("range proofs require keys of equal length (first has " +
                       std::to_string(first.size()) + " bytes, the keys " +
                       std::to_string(keys[0].size()) + ")");
    }
    if (keys.empty() && root == kEmptyRoot) return RangeResult{false};  // nothing anywhere

    const ProofIndex index(*proof);
    // Each of the two edge walks resolves at most one node per nibble and the root, each
    // adding up to 17 references; each pair inserted adds at most a leaf, a branch and an
    // extension.
    PartialTrie trie(index, root, 2 * 18 * (2 * first.size() + 1) + 3 * keys.size());
    const NibbleView lo(first);
    if (keys.empty()) {
        // No pairs: valid only when nothing exists at or right of first.
        MPT_TRY(const std::optional<bytes> at_first, trie.resolve_path(lo));
        if (at_first) return invalid("no pairs are given but first is present");
        MPT_TRY(const bool right, trie.has_right(lo));
        if (right) return invalid("no pairs are given but entries exist right of first");
        return RangeResult{false};
    }
    const bytes& last = keys.back();
    if (keys.size() == 1 && bytes_equal(first, last)) {
        // One pair at first: a single proof decides it.
        MPT_TRY(const std::optional<bytes> got, trie.resolve_path(lo));
        if (!got) return invalid("the only key is absent from the trie");
        if (*got != values[0]) return invalid("value mismatch for the only key");
        MPT_TRY(const bool more, trie.has_right(lo));
        return RangeResult{more};
    }
    // The general case: first < last, both edge paths from the proof.
    const NibbleView hi(last);
    MPT_TRY([[maybe_unused]] const std::optional<bytes> at_lo, trie.resolve_path(lo));
    MPT_TRY([[maybe_unused]] const std::optional<bytes> at_hi, trie.resolve_path(hi));
    MPT_RETURN_IF_ERROR(trie.clear_between(lo, hi));
    for (size_t i = 0; i < keys.size(); ++i) MPT_RETURN_IF_ERROR(trie.insert(keys[i], values[i]));
    const Hash256 got = trie.root_hash();
    if (got != root) {
        return invalid("root mismatch: the pairs and edge proofs give " + to_hex(got));
    }
    MPT_TRY(const bool more, trie.has_right(hi));
    return RangeResult{more};
}

}  // namespace mpt
