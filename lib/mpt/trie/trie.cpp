#include <mpt/trie/trie_nodes.hpp>

#include <algorithm>

namespace mpt {

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

}  // namespace mpt
