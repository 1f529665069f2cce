#include <memory>
#include <mpt/proof/diff.hpp>

namespace mpt {
namespace {

// A decoded leaf or extension, owned: row views do not outlive the next read.
struct ShortData {
    bytes path;  // one nibble per byte
    bool leaf = false;
    bytes value;    // leaf
    NodeRef child;  // extension
};

struct BranchData {
    std::array<NodeRef, 16> children;
    bytes value;
};

// What stands at a position on one side of the walk.
//   empty:      nothing; no key at or below the position.
//   ref:        a node starts here, known only by its parent's reference (not read yet).
//   short_node: a leaf or extension, of which path[offset, end) is still ahead. offset 0
//               means the node starts here (it was just resolved); above 0 it started
//               above. A leaf with nothing ahead holds the value of this position's key.
//   branch:     a branch that starts here.
struct Handle {
    enum class Kind : uint8_t { empty, ref, short_node, branch };
    Kind kind = Kind::empty;
    NodeRef ref;
    std::shared_ptr<const ShortData> sn;
    size_t offset = 0;
    std::shared_ptr<const BranchData> br;

    // REQUIRES: kind == short_node.
    size_t remaining() const noexcept {
        MPT_ASSERT(kind == Kind::short_node && offset <= sn->path.size());
        return sn->path.size() - offset;
    }
    uint8_t ahead(size_t i) const noexcept { return sn->path[offset + i]; }
};

Handle ref_handle(const NodeRef& r) {
    Handle h;
    if (!r.empty()) {
        h.kind = Handle::Kind::ref;
        h.ref = r;
    }
    return h;
}

// The handle k nibbles further down a short node. An extension whose path is used up
// gives way to its child, which starts there.
// REQUIRES: h.kind == short_node and k <= h.remaining().
Handle advance(const Handle& h, size_t k) {
    MPT_ASSERT(k <= h.remaining());
    if (!h.sn->leaf && h.offset + k == h.sn->path.size()) return ref_handle(h.sn->child);
    Handle out = h;
    out.offset += k;
    return out;
}

// True only when both sides hold the same content at and below this position and the
// same rows strictly below it. False when unsure: that costs reads, never correctness.
bool same(const Handle& a, const Handle& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
        case Handle::Kind::empty:
            return true;
        case Handle::Kind::ref:
            // A node's reference is a function of its RLP: equal references at one
            // position mean equal subtrees (and equal rows below, stored by path).
            return a.ref == b.ref;
        case Handle::Kind::short_node: {
            if (a.sn == b.sn && a.offset == b.offset) return true;
            if (a.sn->leaf != b.sn->leaf || a.remaining() != b.remaining()) return false;
            for (size_t i = 0; i < a.remaining(); ++i) {
                if (a.ahead(i) != b.ahead(i)) return false;
            }
            return a.sn->leaf ? a.sn->value == b.sn->value : a.sn->child == b.sn->child;
        }
        case Handle::Kind::branch:
            return a.br == b.br;
    }
    return false;
}

class DiffWalker {
public:
    DiffWalker(const DiffSide& a, const DiffSide& b, const DiffVisitor* visitor, NodeDiff* nodes,
               DiffReads reads)
        : sides_{a, b}, visitor_(visitor), nodes_(nodes), read_all_(reads == DiffReads::all) {}

    Result<DiffStats> run() {
        for (const DiffSide& s : sides_) {
            if (s.root != kEmptyRoot && s.reader == nullptr) {
                return {Errc::internal, "diff of a stored root without a reader"};
            }
        }
        // The root is always referenced by its hash, whatever its length.
        std::vector<Frame> stack;
        stack.push_back({{}, root_handle(sides_[0]), root_handle(sides_[1])});
        while (!stack.empty()) {
            Frame f = std::move(stack.back());
            stack.pop_back();
            MPT_TRY(bool go_on, visit(f, stack));
            if (!go_on) break;
        }
        return stats_;
    }

private:
    struct Frame {
        bytes path;  // the position, one nibble per byte
        Handle a, b;
    };

    static Handle root_handle(const DiffSide& s) {
        if (s.root == kEmptyRoot) return {};
        return ref_handle(NodeRef::from_hash(s.root));
    }

    // Whether the walk leaves the position alone: nothing on either side, or (unless every
    // node is to be read) the same content on both.
    bool skip(const Handle& a, const Handle& b) const {
        if (read_all_) return a.kind == Handle::Kind::empty && b.kind == Handle::Kind::empty;
        return same(a, b);
    }

    // Visits one position; pushes the positions below it that differ (with read_all_, every
    // one that is not empty on both sides), last first, so that the stack pops them in path
    // order (which is key order).
    Result<bool> visit(Frame& f, std::vector<Frame>& stack) {
        if (skip(f.a, f.b)) return true;
        if (nodes_ != nullptr) record_rows(f);
        MPT_RETURN_IF_ERROR(resolve(f.a, f.path, 0));
        MPT_RETURN_IF_ERROR(resolve(f.b, f.path, 1));
        if (skip(f.a, f.b)) return true;

        using Kind = Handle::Kind;
        if (f.a.kind != Kind::branch && f.b.kind != Kind::branch) {
            // Both inside short nodes (or one side empty): no node starts and no key ends
            // before the sides part, so jump there.
            size_t k;
            if (f.a.kind == Kind::empty) {
                k = f.b.remaining();
            } else if (f.b.kind == Kind::empty) {
                k = f.a.remaining();
            } else {
                k = 0;
                const size_t n = std::min(f.a.remaining(), f.b.remaining());
                while (k < n && f.a.ahead(k) == f.b.ahead(k)) ++k;
            }
            if (k > 0) {
                const Handle& lead = f.a.kind == Kind::empty ? f.b : f.a;
                Frame next;
                next.path = f.path;
                for (size_t i = 0; i < k; ++i) next.path.push_back(lead.ahead(i));
                if (f.a.kind != Kind::empty) next.a = advance(f.a, k);
                if (f.b.kind != Kind::empty) next.b = advance(f.b, k);
                stack.push_back(std::move(next));
                return true;
            }
        }

        // One nibble at a time: this position's value, then the sixteen positions below.
        bytes_view value_a, value_b;
        std::array<Handle, 16> children_a, children_b;
        expand(f.a, value_a, children_a);
        expand(f.b, value_b, children_b);
        if (visitor_ != nullptr && !bytes_equal(value_a, value_b)) {
            MPT_TRY(bool go_on, emit(f.path, value_a, value_b));
            if (!go_on) return false;
        }
        for (int i = 15; i >= 0; --i) {
            if (skip(children_a[i], children_b[i])) continue;
            Frame next;
            next.path.reserve(f.path.size() + 1);
            next.path = f.path;
            next.path.push_back(static_cast<uint8_t>(i));
            next.a = std::move(children_a[i]);
            next.b = std::move(children_b[i]);
            stack.push_back(std::move(next));
        }
        return true;
    }

    // Rows are kept for hashed nodes only, by the path where the node starts: an
    // unresolved hash reference is exactly such a start.
    void record_rows(const Frame& f) {
        const bool in_a = f.a.kind == Handle::Kind::ref && f.a.ref.is_hash();
        const bool in_b = f.b.kind == Handle::Kind::ref && f.b.ref.is_hash();
        if (in_b && !(in_a && f.a.ref == f.b.ref)) {
            nodes_->writes.push_back(f.path);
        } else if (in_a && !in_b) {
            nodes_->deletes.push_back(f.path);
        }
    }

    // Turns a reference into the node it names, reading and checking a hashed one.
    Status resolve(Handle& h, const bytes& path, int side) {
        if (h.kind != Handle::Kind::ref) return {};
        NodeReader& reader = *sides_[side].reader;  // run() checked it: the root is stored
        auto v = h.ref.is_hash() ? load_verified(reader, path, h.ref.hash())
                                 : decode_stored(reader, path, h.ref.view());
        if (!v) {
            Error e = std::move(v).error();
            if (!e.trie.empty()) e.trie = (side == 0 ? "A: " : "B: ") + e.trie;
            return e;
        }
        if (h.ref.is_hash()) ++(side == 0 ? stats_.nodes_read_a : stats_.nodes_read_b);
        // Everything is copied out of rlp before h (which may own it) is replaced.
        Handle out;
        if (v->kind == NodeView::Kind::branch) {
            auto br = std::make_shared<BranchData>();
            for (size_t i = 0; i < 16; ++i) br->children[i] = NodeRef::from_view(v->children[i]);
            br->value.assign(v->value.begin(), v->value.end());
            out.kind = Handle::Kind::branch;
            out.br = std::move(br);
        } else {
            auto sn = std::make_shared<ShortData>();
            append_unpacked(sn->path, v->path);
            sn->leaf = v->kind == NodeView::Kind::leaf;
            if (sn->leaf) {
                sn->value.assign(v->value.begin(), v->value.end());
            } else {
                sn->child = NodeRef::from_view(v->child);
            }
            out.kind = Handle::Kind::short_node;
            out.sn = std::move(sn);
        }
        h = std::move(out);
        return {};
    }

    // The value of this position's key and what stands one nibble below.
    // REQUIRES: h is resolved (not a ref).
    static void expand(const Handle& h, bytes_view& value, std::array<Handle, 16>& children) {
        MPT_ASSERT(h.kind != Handle::Kind::ref);
        switch (h.kind) {
            case Handle::Kind::empty:
            case Handle::Kind::ref:
                break;
            case Handle::Kind::short_node:
                if (h.remaining() == 0) {
                    value = h.sn->value;  // only a leaf stops here; see advance()
                } else {
                    children[h.ahead(0)] = advance(h, 1);
                }
                break;
            case Handle::Kind::branch:
                value = h.br->value;
                for (size_t i = 0; i < 16; ++i) children[i] = ref_handle(h.br->children[i]);
                break;
        }
    }

    Result<bool> emit(const bytes& path, bytes_view old_value, bytes_view new_value) {
        // Keys are byte strings: a value can only end an even nibble path.
        if (path.size() % 2 != 0) {
            return {Errc::bad_node, "value at an odd nibble depth, path " + path_string(path)};
        }
        pack_nibbles(key_, path);
        DiffEntry e;
        e.key = key_;
        e.old_value = old_value;
        e.new_value = new_value;
        e.kind = old_value.empty()   ? DiffEntry::Kind::added
                 : new_value.empty() ? DiffEntry::Kind::removed
                                     : DiffEntry::Kind::changed;
        return (*visitor_)(e);
    }

    DiffSide sides_[2];
    const DiffVisitor* visitor_;
    NodeDiff* nodes_;
    bool read_all_;
    DiffStats stats_;
    bytes key_;
};

}  // namespace

Result<DiffStats> diff_tries(const DiffSide& a, const DiffSide& b, const DiffVisitor& f,
                             DiffReads reads) {
    return DiffWalker(a, b, &f, nullptr, reads).run();
}

Result<NodeDiff> diff_nodes(const DiffSide& a, const DiffSide& b, DiffReads reads) {
    NodeDiff out;
    MPT_TRY(out.stats, DiffWalker(a, b, nullptr, &out, reads).run());
    return out;
}

}  // namespace mpt
