#include <mpt/trie/detail/trie_nodes.hpp>

namespace mpt {
namespace {

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

Status load_stored(NodeReader* reader, TrieNodePtr& slot, bytes_view path) {
    MPT_ASSERT(slot != nullptr);
    if (slot->type != Type::stored) return {};
    if (reader == nullptr) return {Errc::internal, "stored node without a reader"};
    MPT_TRY(const NodeView v, load_verified(*reader, path, slot->ref.hash()));
    auto n = from_view(v, slot->ref, true);
    // An embedded child that is no valid node: the row holding it is at fault.
    if (!n) return node_error(Errc::storage_bad_node, *reader, path, n.error().message());
    slot = std::move(*n);
    return {};
}

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

}  // namespace mpt
