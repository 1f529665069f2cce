#include <mpt/trie/detail/trie_nodes.hpp>

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
    // One descent: through the nodes in memory, then from the first node that is only
    // stored, through its row and the rows below, read by path without keeping them.
    bytes_view value;
    for (const TrieNode* n = root_.get(); n != nullptr;) {
        const NibbleView rest = at.remaining();
        if (n->type == Type::stored) {
            MPT_TRY(value,
                    descend_stored(*reader_, n->ref.hash(), at, impl_->path, [](bytes_view) {}));
            break;
        }
        if (n->type == Type::extension) {
            const ExtensionNode& ext = as_ext(*n);
            if (common_prefix(ext.path, rest) != ext.path.size()) return false;
            at.advance(ext.path.size());
            n = ext.child.get();
        } else if (n->type == Type::branch && !rest.empty()) {
            at.advance(1);
            n = as_branch(*n).children[rest[0]].get();
        } else {
            const bool leaf = n->type == Type::leaf;
            if (!leaf || nibbles_equal(as_leaf(*n).path, rest)) {
                value = leaf ? as_leaf(*n).value : as_branch(*n).value;
            }
            break;
        }
    }
    if (value.empty()) return false;
    out.assign(value.begin(), value.end());
    return true;
}

Result<std::optional<bytes>> Trie::get(bytes_view key) const {
    bytes out;
    MPT_TRY(bool found, get(key, out));
    if (!found) return std::optional<bytes>{};
    return std::optional<bytes>{std::move(out)};
}

}  // namespace mpt
