#include <mpt/trie/detail/trie_nodes.hpp>

namespace mpt {
namespace {

// Ordered traversal from a lower bound.
class Walker {
public:
    Walker(NodeReader* reader, NibbleView from, const Trie::Visitor& f)
        : reader_(reader), from_(from), f_(f) {}

    // Returns false once the visitor asked to stop. prefix holds the node's path.
    Result<bool> walk(const TrieNode& node, bool bounded) {
        if (node.type == Type::stored) {
            TrieNodePtr loaded(new StoredNode(node.ref));
            MPT_RETURN_IF_ERROR(load_stored(reader_, loaded, prefix_));
            return walk(*loaded, bounded);
        }
        const size_t depth = prefix_.size();
        const NibbleView rest = bounded ? from_.sub(depth) : NibbleView{};
        switch (node.type) {
            case Type::leaf: {
                const LeafNode& leaf = as_leaf(node);
                if (bounded && key_vs_short_node(rest, leaf.path, true) > 0) return true;
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
                    const int c = key_vs_short_node(rest, ext.path, false);
                    if (c > 0) return true;
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
    Result<bool> emit(const bytes& value) {
        if (prefix_.size() % 2 != 0) return {Errc::bad_node, "value at an odd nibble depth"};
        pack_nibbles(key_, prefix_);
        return f_(key_, value);
    }

    NodeReader* reader_;
    NibbleView from_;
    const Trie::Visitor& f_;
    bytes prefix_;
    bytes key_;
};

}  // namespace

Status Trie::for_each(bytes_view from, const Visitor& f) const {
    if (!root_) return {};
    const NibbleView bound(from);
    Walker w(reader_, bound, f);
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
