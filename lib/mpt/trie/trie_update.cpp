#include <mpt/trie/detail/trie_nodes.hpp>

#include <algorithm>

namespace mpt {
namespace {

// The mutable operations, with the reader and the deletion record at hand.
class Mutator {
public:
    Mutator(NodeReader* reader, Trie::Impl& impl) : reader_(reader), impl_(impl) {}

    Status resolve_at(TrieNodePtr& slot, NibbleView key, size_t depth, int extra = -1) {
        if (slot->type != Type::stored) return {};
        return load_stored(reader_, slot, path_of(impl_.write_path, key, depth, extra));
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

    // What removing a key does to a subtree.
    enum class Removal : uint8_t { absent, present, emptied };

    // The first half of a remove: every read it needs, before anything changes, so that a
    // failed read leaves the trie as it was. Loads the nodes on the key's path and, where a
    // branch would be left with one entry, that entry (collapse joins it).
    Result<Removal> find_removal(TrieNodePtr& slot, NibbleView key, size_t depth) {
        if (!slot) return Removal::absent;
        MPT_RETURN_IF_ERROR(resolve_at(slot, key, depth));
        const NibbleView rest = key.sub(depth);
        switch (slot->type) {
            case Type::leaf:
                return nibbles_equal(as_leaf(*slot).path, rest) ? Removal::emptied
                                                                : Removal::absent;
            case Type::extension: {
                ExtensionNode& ext = as_ext(*slot);
                if (common_prefix(ext.path, rest) != ext.path.size()) return Removal::absent;
                return find_removal(ext.child, key, depth + ext.path.size());
            }
            case Type::branch: {
                BranchNode& b = as_branch(*slot);
                const int gone = rest.empty() ? -1 : rest[0];
                Removal r = b.value.empty() ? Removal::absent : Removal::emptied;
                if (gone >= 0) {
                    MPT_TRY(r, find_removal(b.children[gone], key, depth + 1));
                }
                int other = -1;
                size_t entries = b.value.empty() ? 0 : 1;
                for (int i = 0; i < 16; ++i) {
                    if (!b.children[i]) continue;
                    ++entries;
                    if (i != gone) other = i;
                }
                MPT_ASSERT(entries >= 2);
                if (r == Removal::emptied && entries == 2 && other >= 0) {
                    MPT_RETURN_IF_ERROR(resolve_at(b.children[other], key, depth, other));
                }
                return r == Removal::absent ? r : Removal::present;  // a branch keeps an entry
            }
            case Type::stored:
                break;
        }
        return {Errc::internal, "unresolved node"};
    }

    // The second half: the change, which reads nothing and cannot fail.
    // REQUIRES: find_removal(slot, key, depth) found the key and nothing changed since.
    void remove(TrieNodePtr& slot, NibbleView key, size_t depth) {
        MPT_ASSERT(slot && slot->type != Type::stored);
        const NibbleView rest = key.sub(depth);
        if (slot->type == Type::leaf) {
            drop(*slot, key, depth);
            slot.reset();
        } else if (slot->type == Type::extension) {
            ExtensionNode& ext = as_ext(*slot);
            const size_t n = ext.path.size();
            remove(ext.child, key, depth + n);
            touch(ext, key, depth);
            if (!ext.child) {  // only in a malformed stored trie: the child was a leaf
                slot.reset();
                return;
            }
            // The child was a branch; if it collapsed into a short node, absorb it.
            TrieNode& child = *ext.child;
            if (child.type == Type::leaf || child.type == Type::extension) {
                drop(child, key, depth + n);
                slot = merge(ext.path, std::move(ext.child));
            }
        } else {
            BranchNode& b = as_branch(*slot);
            if (rest.empty()) {
                b.value.clear();
            } else {
                remove(b.children[rest[0]], key, depth + 1);
            }
            touch(b, key, depth);
            collapse(slot, key, depth);
        }
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
    void collapse(TrieNodePtr& slot, NibbleView key, size_t depth) {
        BranchNode& b = as_branch(*slot);
        int only = -1;
        size_t entries = b.value.empty() ? 0 : 1;
        for (int i = 0; i < 16; ++i) {
            if (b.children[i]) {
                ++entries;
                only = i;
            }
        }
        if (entries >= 2) return;
        if (only < 0) {
            slot = make_leaf(Nibbles(), b.value);
            return;
        }
        TrieNodePtr& child = b.children[only];
        MPT_ASSERT(child->type != Type::stored);  // find_removal loaded it
        const Nibbles prefix(bytes{static_cast<uint8_t>(only)});
        if (child->type == Type::branch) {
            slot = make_ext(prefix, std::move(child));
        } else {
            drop(*child, key, depth, only);
            slot = merge(prefix, std::move(child));
        }
    }

    NodeReader* reader_;
    Trie::Impl& impl_;
};

}  // namespace

Status Trie::put(bytes_view key, bytes_view value) {
    if (value.empty()) return remove(key);
    Mutator m(reader_, *impl_);
    MPT_TRY([[maybe_unused]] bool changed, m.insert(root_, NibbleView(key), 0, value));
    return {};
}

Status Trie::remove(bytes_view key) {
    Mutator m(reader_, *impl_);
    // Every read first; the change itself then reads nothing.
    MPT_TRY(const Mutator::Removal r, m.find_removal(root_, NibbleView(key), 0));
    if (r != Mutator::Removal::absent) m.remove(root_, NibbleView(key), 0);
    return {};
}

}  // namespace mpt
