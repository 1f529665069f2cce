#include <mpt/stack_trie.hpp>

#include <cstring>

namespace mpt {
StackTrie::Frame& StackTrie::push_frame(size_t depth) {
    if (open_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[open_++];
    f.depth = depth;
    f.children.fill(NodeRef{});
    f.value.clear();
    return f;
}

NodeRef StackTrie::finalize(size_t path_len, bool root) {
    if (enc_.size() < 32 && !root) return NodeRef::of(enc_);
    const NodeRef ref = NodeRef::from_hash(keccak256(enc_));
    if (sink_ != nullptr) {
        path_buf_.clear();
        append_unpacked(path_buf_, pending_path().sub(0, path_len));
        sink_->put(path_buf_, enc_);
    }
    return ref;
}

void StackTrie::place_pending(Frame& f) {
    const NibbleView p = pending_path();
    if (p.size() == f.depth) {
        f.value = value_;
        return;
    }
    enc_.clear();
    encode_leaf(enc_, p.sub(f.depth + 1), value_);
    f.children[p[f.depth]] = finalize(f.depth + 1, false);
}

NodeRef StackTrie::branch_ref(const Frame& f, bool root) {
    enc_.clear();
    encode_branch(enc_, f.children.data(), f.value);
    return finalize(f.depth, root);
}

NodeRef StackTrie::wrap(NodeRef child, size_t from, size_t to, bool root) {
    if (from == to) return child;
    enc_.clear();
    encode_extension(enc_, pending_path().sub(from, to - from), child);
    return finalize(from, root);
}

Status StackTrie::add(bytes_view key, bytes_view value) {
    if (value.empty()) return {Errc::bad_input, "empty value"};
    if (!has_pending_) {
        key_.assign(key.begin(), key.end());
        value_.assign(value.begin(), value.end());
        has_pending_ = true;
        count_ = 1;
        return {};
    }
    if (!bytes_less(key_, key)) return {Errc::bad_input, "keys are not strictly increasing"};
    const NibbleView p = pending_path();
    // The pending key and the new one part at nibble c: there a branch must stand.
    const size_t c = common_prefix(p, NibbleView(key));
    if (open_ == 0 || frames_[open_ - 1].depth < c) {
        place_pending(push_frame(c));
    } else {
        place_pending(frames_[open_ - 1]);
        // Every frame deeper than c is complete: no later key can fall into it.
        while (frames_[open_ - 1].depth > c) {
            const Frame& f = frames_[--open_];
            const size_t depth = f.depth;
            const NodeRef ref = branch_ref(f, false);
            if (open_ > 0 && frames_[open_ - 1].depth >= c) {
                Frame& parent = frames_[open_ - 1];
                parent.children[p[parent.depth]] = wrap(ref, parent.depth + 1, depth, false);
            } else {
                // The frame at c is new. Reading p[c] before push_frame is safe: p is unchanged.
                const uint8_t slot = p[c];
                const NodeRef wrapped = wrap(ref, c + 1, depth, false);
                push_frame(c).children[slot] = wrapped;
            }
        }
    }
    key_.assign(key.begin(), key.end());
    value_.assign(value.begin(), value.end());
    ++count_;
    return {};
}

Hash256 StackTrie::finish() {
    Hash256 root;
    if (!has_pending_) {
        root = kEmptyRoot;
    } else if (open_ == 0) {
        enc_.clear();
        encode_leaf(enc_, pending_path(), value_);
        root = finalize(0, true).hash();
    } else {
        const NibbleView p = pending_path();
        place_pending(frames_[open_ - 1]);
        while (open_ > 1) {
            const Frame& f = frames_[--open_];
            const size_t depth = f.depth;
            const NodeRef ref = branch_ref(f, false);
            Frame& parent = frames_[open_ - 1];
            parent.children[p[parent.depth]] = wrap(ref, parent.depth + 1, depth, false);
        }
        const Frame& bottom = frames_[--open_];
        if (bottom.depth == 0) {
            root = branch_ref(bottom, true).hash();
        } else {
            const size_t depth = bottom.depth;
            const NodeRef ref = branch_ref(bottom, false);
            root = wrap(ref, 0, depth, true).hash();
        }
    }
    has_pending_ = false;
    open_ = 0;
    return root;
}

}  // namespace mpt
