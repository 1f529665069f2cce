#include <mpt/trie/node_tree.hpp>

#include <vector>

namespace mpt {
namespace {

// A node still to visit: where it stands and how its parent refers to it.
struct Pending {
    bytes position;  // one nibble per byte
    int slot = -1;
    size_t depth = 0;
    bool embedded = false;
    Hash256 hash{};  // when hashed
    bytes rlp;       // when embedded: the node itself
};

// The node p refers to, its RLP in rlp (owned: the reader's view ends at the next read).
Result<NodeView> load(NodeReader& reader, const Pending& p, bytes& rlp) {
    if (p.embedded) {
        rlp = p.rlp;
    } else {
        MPT_TRY(const NodeView v, load_verified(reader, p.position, p.hash));
        rlp.assign(v.rlp.begin(), v.rlp.end());
    }
    return decode_stored(reader, p.position, rlp);
}

// A child reference of a decoded node as a Pending at position.
Pending child_of(bytes_view ref, bytes position, int slot, size_t depth) {
    Pending c;
    c.position = std::move(position);
    c.slot = slot;
    c.depth = depth;
    if (ref.size() == 32) {
        std::memcpy(c.hash.data(), ref.data(), 32);
    } else {
        c.embedded = true;
        c.rlp.assign(ref.begin(), ref.end());
    }
    return c;
}

// Walks from the root down to the node at (or whose path continues) from (StoredDescent).
// nullopt when no node lies on from.
Result<std::optional<Pending>> find_start(NodeReader& reader, const Hash256& root,
                                          bytes_view from) {
    bytes packed;
    pack_nibbles(packed, from);
    PathCursor at(NibbleView(packed.data(), 0, from.size()));
    Pending p;  // the node the walk stands at
    p.hash = root;
    bytes path;
    StoredDescent walk(reader, root, at, path);
    while (true) {
        MPT_TRY(const NodeView v, walk.load());
        const NibbleView rest = at.remaining();
        if (rest.empty()) return std::optional<Pending>(std::move(p));
        // from ends inside this short node's own path: the node is the subtree's top.
        if (v.kind != NodeView::Kind::branch && common_prefix(v.path, rest) == rest.size()) {
            return std::optional<Pending>(std::move(p));
        }
        const int slot = v.kind == NodeView::Kind::branch ? rest[0] : -1;
        const Descent d = walk.step(v);
        if (d.kind != Descent::Kind::child) return std::optional<Pending>{};
        bytes position;
        append_unpacked(position, at.consumed());
        p = child_of(d.ref, std::move(position), slot, 0);
    }
}

}  // namespace

Result<TreeSummary> walk_tree(NodeReader& reader, const Hash256& root, const TreeOptions& options,
                              const std::function<void(const TreeNode&)>& visit) {
    TreeSummary summary;
    if (root == kEmptyRoot) {
        summary.found = options.from.empty();
        return summary;
    }
    MPT_TRY(std::optional<Pending> start, find_start(reader, root, options.from));
    if (!start) {
        summary.found = false;
        return summary;
    }
    summary.start = start->position;
    std::vector<Pending> stack;
    stack.push_back(std::move(*start));
    bytes rlp;
    while (!stack.empty()) {
        if (summary.nodes == options.max_nodes) {
            summary.nodes_cut = true;
            summary.cut_subtrees += stack.size();
            break;
        }
        Pending p = std::move(stack.back());
        stack.pop_back();
        MPT_TRY(const NodeView v, load(reader, p, rlp));
        TreeNode n;
        n.depth = p.depth;
        n.position = p.position;
        n.slot = p.slot;
        n.kind = v.kind;
        n.embedded = p.embedded;
        n.hash = p.hash;
        n.rlp = v.rlp;
        n.value = v.value;
        if (v.kind != NodeView::Kind::branch) n.key = v.path;
        // The children, in key order; pushed in reverse so that the first is visited first.
        std::vector<Pending> children;
        if (v.kind == NodeView::Kind::extension) {
            bytes position = p.position;
            append_unpacked(position, v.path);
            children.push_back(child_of(v.child, std::move(position), -1, p.depth + 1));
        } else if (v.kind == NodeView::Kind::branch) {
            for (int i = 0; i < 16; ++i) {
                if (v.children[i].empty()) continue;
                bytes position = p.position;
                position.push_back(static_cast<uint8_t>(i));
                children.push_back(child_of(v.children[i], std::move(position), i, p.depth + 1));
            }
        }
        n.children = children.size();
        if (p.depth >= options.max_depth && !children.empty()) {
            n.cut = children.size();
            summary.cut_subtrees += children.size();
            summary.depth_cut = true;
            children.clear();
        }
        visit(n);
        ++summary.nodes;
        for (auto it = children.rbegin(); it != children.rend(); ++it) {
            stack.push_back(std::move(*it));
        }
    }
    return summary;
}

}  // namespace mpt
