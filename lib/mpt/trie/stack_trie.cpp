#include <mpt/trie/stack_trie.hpp>

#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <cstring>
#include <optional>

namespace mpt {
namespace {

// encode_leaf(out, NibbleView(key).sub(depth), value), a byte at a time: a leaf's path ends
// where its key ends, on a byte boundary, so past the flag byte (which carries the first
// nibble when the length is odd, Yellow Paper appendix C) the path is whole bytes of the key.
// The lengths are known first, so the node is written in one piece. REQUIRES: a nonempty
// value (add_pair refuses an empty one).
void encode_key_leaf(bytes& out, bytes_view key, size_t depth, bytes_view value) {
    MPT_ASSERT(!value.empty());
    const size_t compact = (2 * key.size() - depth) / 2 + 1;
    // A one-byte compact path (0x20, 0x3n) is below 0x80: its own encoding.
    const size_t path_item = compact == 1 ? 1 : rlp::header_length(compact) + compact;
    const size_t payload = path_item + rlp::string_length(value);
    const size_t at = out.size();
    out.resize(at + rlp::header_length(payload) + payload);
    uint8_t* o = out.data() + at;
    o += rlp::write_header(o, payload, 0xc0);
    if (compact != 1) o += rlp::write_header(o, compact, 0x80);
    const size_t first = (depth + 1) / 2;  // the first whole byte of the path
    *o++ = depth % 2 != 0 ? static_cast<uint8_t>(0x30 | (key[depth / 2] & 0x0f)) : uint8_t{0x20};
    if (first < key.size()) {
        std::memcpy(o, key.data() + first, key.size() - first);
        o += key.size() - first;
    }
    if (value.size() == 1 && value[0] < 0x80) {
        *o = value[0];
    } else {
        o += rlp::write_header(o, value.size(), 0x80);
        std::memcpy(o, value.data(), value.size());
    }
}

}  // namespace

StackTrie::Frame& StackTrie::push_frame(size_t depth) {
    if (open_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[open_++];
    f.depth = depth;
    f.children.fill(NodeRef{});
    f.value.clear();
    f.deferred = 0;
    f.leaves.clear();
    return f;
}

void StackTrie::to_sink(size_t path_len, bytes_view rlp) {
    if (sink_ == nullptr) return;
    path_buf_.resize(path_len);
    pending_path().sub(0, path_len).unpack_to(path_buf_.data());
    sink_->put(path_buf_, rlp);
}

NodeRef StackTrie::finalize(size_t path_len, bool root) {
    if (enc_.size() < 32 && !root) return NodeRef::of(enc_);
    const NodeRef ref = NodeRef::from_hash(keccak256(enc_));
    to_sink(path_len, enc_);
    return ref;
}

void StackTrie::place_pending(Frame& f) {
    const NibbleView p = pending_path();
    if (p.size() == f.depth) {
        f.value.assign(value_view_.begin(), value_view_.end());
        return;
    }
    // The leaf goes to the sink now (children before parents, in key order, as it always
    // has) and is hashed with its siblings when the branch is encoded, unless add_run made and
    // hashed it already.
    const uint8_t v = p[f.depth];
    if (pending_leaf_.depth == f.depth + 1) {
        const ReadyLeaf& leaf = pending_leaf_;
        if (leaf.rlp.size() < 32) {
            f.children[v] = NodeRef::of(leaf.rlp);
            return;
        }
        to_sink(f.depth + 1, leaf.rlp);
        f.children[v] = NodeRef::from_hash(leaf.hash);
        return;
    }
    const size_t at = f.leaves.size();
    encode_key_leaf(f.leaves, key_view_, f.depth + 1, value_view_);
    const bytes_view leaf(f.leaves.data() + at, f.leaves.size() - at);
    if (leaf.size() < 32) {
        f.children[v] = NodeRef::of(leaf);
        f.leaves.resize(at);
        return;
    }
    to_sink(f.depth + 1, leaf);
    defer(f, v, at, leaf.size());
}

void StackTrie::hash_deferred(Frame& f) {
    bytes_view in[16];
    uint8_t slot[16];
    size_t n = 0;
    for (uint8_t v = 0; v < 16; ++v) {
        if ((f.deferred >> v & 1) == 0) continue;
        in[n] = bytes_view(f.leaves.data() + f.leaf_at[v], f.leaf_size[v]);
        slot[n++] = v;
    }
    Hash256 out[16];
    keccak256_batch({in, n}, {out, n});
    for (size_t i = 0; i < n; ++i) f.children[slot[i]] = NodeRef::from_hash(out[i]);
    f.deferred = 0;
}

void StackTrie::defer(Frame& f, uint8_t slot, size_t at, size_t size) {
    f.leaf_at[slot] = static_cast<uint32_t>(at);
    f.leaf_size[slot] = static_cast<uint32_t>(size);
    f.deferred |= 1u << slot;
}

void StackTrie::encode_frame(Frame& f) {
    if (f.deferred != 0) hash_deferred(f);
    enc_.clear();
    encode_branch(enc_, f.children.data(), f.value);
}

StackTrie::Closed StackTrie::close(Frame& f, size_t parent_depth) {
    if (const ReadyBranch* made = pending_leaf_.branch; made != nullptr && made->depth == f.depth) {
        // add_run made and hashed this branch with others: f holds the pending pair's leaf
        // and those of the pairs before it that the branch has.
        MPT_ASSERT(f.deferred == 0);
        NodeRef ref;
        if (made->rlp.size() < 32) {
            ref = NodeRef::of(made->rlp);
        } else {
            to_sink(f.depth, made->rlp);
            ref = NodeRef::from_hash(made->hash);
        }
        return {wrap(ref, parent_depth + 1, f.depth, false), false};
    }
    if (f.depth != parent_depth + 1) {
        // Under an extension, which needs the branch's hash now.
        const size_t depth = f.depth;
        return {wrap(branch_ref(f, false), parent_depth + 1, depth, false), false};
    }
    encode_frame(f);
    if (enc_.size() < 32) return {NodeRef::of(enc_), false};
    to_sink(f.depth, enc_);
    return {NodeRef{}, true};
}

void StackTrie::place(Frame& parent, uint8_t slot, const Closed& child) {
    if (!child.deferred) {
        parent.children[slot] = child.ref;
        return;
    }
    const size_t at = parent.leaves.size();
    parent.leaves.insert(parent.leaves.end(), enc_.begin(), enc_.end());
    defer(parent, slot, at, enc_.size());
}

NodeRef StackTrie::branch_ref(Frame& f, bool root) {
    encode_frame(f);
    return finalize(f.depth, root);
}

NodeRef StackTrie::wrap(NodeRef child, size_t from, size_t to, bool root) {
    if (from == to) return child;
    enc_.clear();
    encode_extension(enc_, pending_path().sub(from, to - from), child);
    return finalize(from, root);
}

Status StackTrie::add(bytes_view key, bytes_view value) { return add_pair(key, value, true); }

Status StackTrie::add_view(bytes_view key, bytes_view value) { return add_pair(key, value, false); }

Status StackTrie::add_pair(bytes_view key, bytes_view value, bool copy, const ReadyLeaf* ready) {
    if (value.empty()) return {Errc::bad_input, "empty value"};
    MPT_ASSERT(2 * key.size() >= top_);
    MPT_ASSERT(!has_pending_ || common_prefix(NibbleView(key), NibbleView(key_view_)) >= top_);
    const auto keep = [&] {
        if (copy) {
            key_.assign(key.begin(), key.end());
            value_.assign(value.begin(), value.end());
            key = key_;
            value = value_;
        }
        key_view_ = key;
        value_view_ = value;
        pending_leaf_ = ready != nullptr ? *ready : ReadyLeaf{};
    };
    if (!has_pending_) {
        keep();
        has_pending_ = true;
        count_ = 1;
        return {};
    }
    // The pending key and the new one part at nibble c: there a branch must stand.
    const bytes_view prev = key_view_;
    const size_t m = std::min(prev.size(), key.size());
    const size_t i = common_byte_prefix(prev, key);
    const bool increasing = i < m ? prev[i] < key[i] : prev.size() < key.size();
    if (!increasing) return {Errc::bad_input, "keys are not strictly increasing"};
    const size_t c = i < m && prev[i] >> 4 == key[i] >> 4 ? 2 * i + 1 : 2 * i;
    const NibbleView p = pending_path();
    if (open_ == 0 || frames_[open_ - 1].depth < c) {
        place_pending(push_frame(c));
    } else {
        place_pending(frames_[open_ - 1]);
        // Every frame deeper than c is complete: no later key can fall into it.
        while (frames_[open_ - 1].depth > c) {
            Frame& f = frames_[--open_];
            if (open_ > 0 && frames_[open_ - 1].depth >= c) {
                Frame& parent = frames_[open_ - 1];
                place(parent, p[parent.depth], close(f, parent.depth));
            } else {
                // The frame at c is new: f is closed before push_frame, which reuses its
                // place. Reading p[c] first is safe: p is unchanged.
                const uint8_t slot = p[c];
                const Closed child = close(f, c);
                place(push_frame(c), slot, child);
            }
        }
    }
    keep();
    ++count_;
    return {};
}

NodeRef StackTrie::finish_top(bool root) {
    NodeRef top;
    if (!has_pending_) {
        top = NodeRef{};
    } else if (open_ == 0) {
        enc_.clear();
        encode_key_leaf(enc_, key_view_, top_, value_view_);
        top = finalize(top_, root);
    } else {
        const NibbleView p = pending_path();
        place_pending(frames_[open_ - 1]);
        while (open_ > 1) {
            Frame& f = frames_[--open_];
            Frame& parent = frames_[open_ - 1];
            place(parent, p[parent.depth], close(f, parent.depth));
        }
        Frame& bottom = frames_[--open_];
        if (bottom.depth == top_) {
            top = branch_ref(bottom, root);
        } else {
            const size_t depth = bottom.depth;
            const NodeRef ref = branch_ref(bottom, false);
            top = wrap(ref, top_, depth, root);
        }
    }
    has_pending_ = false;
    open_ = 0;
    return top;
}

Hash256 StackTrie::finish() {
    MPT_ASSERT(top_ == 0);
    if (!has_pending_) {
        open_ = 0;
        return kEmptyRoot;
    }
    return finish_top(true).hash();
}

NodeRef StackTrie::finish_ref() { return finish_top(false); }

void StackTrie::make_leaves(std::span<const KvPair> pairs, size_t begin, size_t end, size_t slot) {
    std::vector<ReadyLeaf>& ready = ready_[slot];
    bytes& rlp = ready_rlp_[slot];
    ready.assign(end - begin, ReadyLeaf{});
    rlp.clear();
    hash_of_.clear();
    // Where each leaf's encoding begins in rlp, and its size: views only once rlp is whole.
    std::vector<std::array<size_t, 2>>& place = ready_at_;
    place.assign(end - begin, {0, 0});
    // Where each key parts from the one before (the pending one for the run's first), and,
    // through the entry of the next, from the one after; a key not below both is refused by
    // add_view before its leaf is placed.
    shared_.assign(end - begin + 1, 0);
    if (begin > 0 || has_pending_) {
        const bytes_view before = begin > 0 ? pairs[begin - 1].key : key_view_;
        shared_[0] = common_prefix(NibbleView(before), NibbleView(pairs[begin].key));
    }
    for (size_t k = begin; k < end; ++k) {
        constexpr size_t kAhead = 16;
        if (k + kAhead < pairs.size()) {
            const KvPair& p = pairs[k + kAhead];
            __builtin_prefetch(p.key.data());
            if (!p.value.empty()) {  // refused by add_view
                __builtin_prefetch(p.value.data());
                __builtin_prefetch(p.value.data() + p.value.size() - 1);
            }
        }
        if (k + 1 >= pairs.size()) break;  // the run's last: where its key parts is not known
        const bytes_view key = pairs[k].key;
        const bytes_view value = pairs[k].value;
        shared_[k - begin + 1] = common_prefix(NibbleView(key), NibbleView(pairs[k + 1].key));
        if (value.empty()) continue;  // refused by add_view
        const size_t parts = std::max(shared_[k - begin], shared_[k - begin + 1]);
        if (parts >= 2 * key.size()) continue;  // its value is the branch's there
        const size_t from = rlp.size();
        encode_key_leaf(rlp, key, parts + 1, value);
        ready[k - begin].depth = parts + 1;
        place[k - begin] = {from, rlp.size() - from};
        if (rlp.size() - from >= 32) hash_of_.push_back(static_cast<uint32_t>(k - begin));
    }
    hash_in_.clear();
    for (size_t i = 0; i < ready.size(); ++i) {
        ready[i].rlp = bytes_view(rlp.data() + place[i][0], place[i][1]);
    }
    for (const uint32_t i : hash_of_) hash_in_.push_back(ready[i].rlp);
    hash_out_.resize(hash_in_.size());
    keccak256_batch(hash_in_, hash_out_);
    for (size_t j = 0; j < hash_of_.size(); ++j) ready[hash_of_[j]].hash = hash_out_[j];
    make_branches(pairs, begin, slot);
}

void StackTrie::make_branches(std::span<const KvPair> pairs, size_t begin, size_t slot) {
    std::vector<ReadyLeaf>& ready = ready_[slot];
    bytes& rlp = ready_branch_rlp_[slot];
    rlp.clear();
    branch_at_.clear();
    // A branch starts at a leaf that parts from the key after deeper than from the one before,
    // goes on while the keys part at that depth, and ends where the key after parts higher up;
    // a leaf not made, a key parting deeper, or the chunk's end give it up.
    const size_t n = ready.size();
    for (size_t i = 0; i < n;) {
        if (ready[i].depth == 0 || shared_[i] >= shared_[i + 1]) {
            ++i;
            continue;
        }
        const size_t depth = shared_[i + 1];
        size_t j = i + 1;
        while (j < n && ready[j].depth != 0 && shared_[j + 1] == depth) ++j;
        if (j == n || ready[j].depth == 0 || shared_[j + 1] > depth) {
            i = j;
            continue;
        }
        std::array<NodeRef, 16> children{};
        for (size_t k = i; k <= j; ++k) {
            const ReadyLeaf& leaf = ready[k];
            children[NibbleView(pairs[begin + k].key)[depth]] =
                leaf.rlp.size() < 32 ? NodeRef::of(leaf.rlp) : NodeRef::from_hash(leaf.hash);
        }
        const size_t from = rlp.size();
        encode_branch(rlp, children.data(), {});
        branch_at_.push_back({j, from, rlp.size() - from});
        i = j + 1;
    }
    std::vector<ReadyBranch>& made = ready_branches_[slot];
    made.assign(branch_at_.size(), ReadyBranch{});
    hash_in_.clear();
    for (size_t b = 0; b < made.size(); ++b) {
        const auto [last, from, size] = branch_at_[b];
        made[b].depth = ready[last].depth - 1;
        made[b].rlp = bytes_view(rlp.data() + from, size);
        if (size >= 32) hash_in_.push_back(made[b].rlp);
        ready[last].branch = &made[b];
    }
    hash_out_.resize(hash_in_.size());
    keccak256_batch(hash_in_, hash_out_);
    for (size_t b = 0, h = 0; b < made.size(); ++b) {
        if (made[b].rlp.size() >= 32) made[b].hash = hash_out_[h++];
    }
}

Status StackTrie::add_run(std::span<const KvPair> pairs) {
    constexpr size_t kChunk = 64;
    for (size_t begin = 0, slot = 0; begin < pairs.size(); begin += kChunk, slot ^= 1) {
        const size_t end = std::min(begin + kChunk, pairs.size());
        make_leaves(pairs, begin, end, slot);
        for (size_t k = begin; k < end; ++k) {
            const ReadyLeaf& leaf = ready_[slot][k - begin];
            MPT_RETURN_IF_ERROR(
                add_pair(pairs[k].key, pairs[k].value, false, leaf.depth != 0 ? &leaf : nullptr));
        }
    }
    return {};
}

namespace {

Result<Hash256> sequential_root(std::span<const KvPair> pairs, PartSinks* sinks) {
    StackTrie st(sinks != nullptr ? sinks->part(PartSinks::kTopPart) : nullptr);
    for (size_t k = 0; k < pairs.size(); k += PartSinks::kProgressPairs) {
        const size_t n = std::min(PartSinks::kProgressPairs, pairs.size() - k);
        MPT_RETURN_IF_ERROR(add_fetching_ahead(st, pairs.subspan(k, n)));
        if (sinks != nullptr && n == PartSinks::kProgressPairs) sinks->advanced();
    }
    const Hash256 root = st.finish();
    if (sinks != nullptr) {
        for (size_t v = 0; v <= PartSinks::kTopPart; ++v) sinks->done(v);
    }
    return root;
}

// Nibble n of key, or -1 past its end.
int nibble_at(bytes_view key, size_t n) noexcept {
    return n < 2 * key.size() ? NibbleView(key)[n] : -1;
}

// A run of stack_trie_root's split: the pairs [begin, end) under one child of the top
// branch, and what their builder made of them.
struct SplitRun {
    size_t begin = 0, end = 0;
    NodeRef ref;
    Status status;
};

// What stack_trie_root's split assumed of the order, checked at its edges; within a run the
// builder checks it. Strictly increasing runs whose first and last keys start with the top
// branch's path (the first c nibbles of first) and the run's nibble hold only such keys, and
// increasing edges between runs make the whole input increasing.
bool runs_hold(std::span<const KvPair> pairs, const std::array<SplitRun, 16>& runs,
               NibbleView first, size_t c) {
    const KvPair* previous = nullptr;
    for (int v = 0; v < 16; ++v) {
        if (runs[v].begin == runs[v].end) continue;
        const KvPair& lo = pairs[runs[v].begin];
        const KvPair& hi = pairs[runs[v].end - 1];
        for (const KvPair* p : {&lo, &hi}) {
            if (nibble_at(p->key, c) != v || common_prefix(first, NibbleView(p->key)) < c) {
                return false;
            }
        }
        if (previous != nullptr && !bytes_less(previous->key, lo.key)) return false;
        previous = &hi;
    }
    return true;
}

// The root of a split trie: the branch of children with top_value, under an extension of
// the keys' shared nibbles when there are any; the top nodes go to top (when given) as
// StackTrie::finalize would hand them over: the root always, the branch below an extension
// when it is hashed.
Hash256 top_root(const std::array<NodeRef, 16>& children, bytes_view top_value, NibbleView shared,
                 NodeSink* top) {
    bytes enc;
    enc.reserve(kMaxBranchWithoutValue + rlp::header_length(top_value.size()) + top_value.size());
    encode_branch(enc, children.data(), top_value);
    bytes path;
    if (shared.empty()) {
        if (top != nullptr) top->put(path, enc);
        return keccak256(enc);
    }
    const NodeRef branch = NodeRef::of(enc);
    if (top != nullptr && branch.is_hash()) {
        append_unpacked(path, shared);
        top->put(path, enc);
        path.clear();
    }
    enc.clear();
    encode_extension(enc, shared, branch);
    if (top != nullptr) top->put(path, enc);
    return keccak256(enc);
}

}  // namespace

Result<Hash256> stack_trie_root(std::span<const KvPair> pairs, unsigned threads, size_t min_pairs,
                                PartSinks* sinks) {
    if (threads <= 1 || pairs.size() < std::max<size_t>(min_pairs, 2)) {
        return sequential_root(pairs, sinks);
    }
    // Sorted keys share the nibbles the first and the last share, and there the top branch
    // stands; only the first key can end at it (a prefix of all others), its value going
    // to the branch's 17th slot. Every other key continues with a nibble that picks the
    // branch's child, and the keys under one child are a contiguous run, found by binary
    // search: the keys themselves are read only by the builders.
    const NibbleView first(pairs.front().key);
    const size_t c = common_prefix(first, NibbleView(pairs.back().key));
    bytes_view top_value;
    size_t begin = 0;
    if (first.size() == c) top_value = pairs[begin++].value;
    std::array<SplitRun, 16> runs;
    for (int v = 0; v < 16; ++v) {
        runs[v].begin = begin;
        begin = static_cast<size_t>(
            std::partition_point(pairs.begin() + static_cast<ptrdiff_t>(begin), pairs.end(),
                                 [&](const KvPair& p) { return nibble_at(p.key, c) <= v; }) -
            pairs.begin());
        runs[v].end = begin;
    }
    // Anything amiss goes the sequential way, which reports it as StackTrie::add does.
    const bool split_holds = begin == pairs.size() && (first.size() != c || !top_value.empty()) &&
                             runs_hold(pairs, runs, first, c);
    if (!split_holds) return sequential_root(pairs, sinks);

    // Progress after every kProgressPairs pairs a thread added.
    std::vector<size_t> added(std::min<size_t>(threads, runs.size()), 0);
    run_tasks(threads, runs.size(), [&](size_t r, unsigned self) {
        SplitRun& run = runs[r];
        StackTrie st(sinks != nullptr ? sinks->part(r) : nullptr, c + 1);
        for (size_t k = run.begin; k < run.end && run.status.ok();) {
            const size_t n = std::min(run.end - k, PartSinks::kProgressPairs - added[self]);
            run.status = add_fetching_ahead(st, pairs.subspan(k, n));
            k += n;
            added[self] += n;
            if (added[self] == PartSinks::kProgressPairs) {
                added[self] = 0;
                if (sinks != nullptr) sinks->advanced();
            }
        }
        run.ref = st.finish_ref();
        if (sinks != nullptr) sinks->done(r);
    });
    for (const SplitRun& run : runs) {
        if (!run.status.ok()) return sequential_root(pairs, sinks);
    }

    std::array<NodeRef, 16> children;
    for (size_t r = 0; r < runs.size(); ++r) children[r] = runs[r].ref;
    const Hash256 root = top_root(children, top_value, first.sub(0, c),
                                  sinks != nullptr ? sinks->part(PartSinks::kTopPart) : nullptr);
    if (sinks != nullptr) sinks->done(PartSinks::kTopPart);
    return root;
}

}  // namespace mpt
