#include <mpt/trie/detail/trie_nodes.hpp>

#include <algorithm>

namespace mpt {
namespace {

// Hashes node n standing at path; with a batch, also emits dirty hashed nodes as rows.
class Hasher {
public:
    Hasher(bytes& enc, CommitBatch* batch) : enc_(enc), batch_(batch) {}

    NodeRef hash(TrieNode& n, bytes& path, bool root) {
        if (n.type == Type::stored) return n.ref;
        const bool write = batch_ != nullptr && (n.dirty || (root && !n.has_row));
        if (n.ref_valid && !write && (!root || n.ref.is_hash())) return n.ref;
        switch (n.type) {
            case Type::leaf: {
                LeafNode& leaf = as_leaf(n);
                enc_.clear();
                encode_leaf(enc_, leaf.path, leaf.value);
                break;
            }
            case Type::extension: {
                ExtensionNode& ext = as_ext(n);
                const size_t len = path.size();
                path.insert(path.end(), ext.path.unpacked().begin(), ext.path.unpacked().end());
                const NodeRef child = hash(*ext.child, path, false);
                path.resize(len);
                enc_.clear();
                encode_extension(enc_, ext.path, child);
                break;
            }
            case Type::branch: {
                BranchNode& b = as_branch(n);
                std::array<NodeRef, 16> refs;
                for (uint8_t i = 0; i < 16; ++i) {
                    if (!b.children[i]) continue;
                    path.push_back(i);
                    refs[i] = hash(*b.children[i], path, false);
                    path.pop_back();
                }
                enc_.clear();
                encode_branch(enc_, refs.data(), b.value);
                break;
            }
            case Type::stored:
                break;
        }
        n.ref = root ? NodeRef::from_hash(keccak256(enc_)) : NodeRef::of(enc_);
        n.ref_valid = true;
        if (write) {
            if (n.ref.is_hash()) {
                batch_->puts.push_back(path, enc_);
                n.has_row = true;
            }
            n.dirty = false;
        }
        return n.ref;
    }

private:
    bytes& enc_;
    CommitBatch* batch_;
};

}  // namespace

Result<Hash256> Trie::root_hash() {
    if (!root_) return kEmptyRoot;
    bytes path;
    Hasher h(impl_->enc, nullptr);
    return h.hash(*root_, path, true).hash();
}

Result<CommitBatch> Trie::commit() {
    CommitBatch batch;
    if (!root_) {
        batch.root = kEmptyRoot;
    } else {
        bytes path;
        Hasher h(impl_->enc, &batch);
        batch.root = h.hash(*root_, path, true).hash();
    }
    // The released paths, less those written again, sorted and without repeats.
    std::vector<bytes_view> del(impl_->deleted.begin(), impl_->deleted.end());
    std::sort(del.begin(), del.end(), bytes_less);
    del.erase(std::unique(del.begin(), del.end(), bytes_equal), del.end());
    std::vector<bytes_view> written(batch.puts.paths().begin(), batch.puts.paths().end());
    std::sort(written.begin(), written.end(), bytes_less);
    size_t w = 0;
    for (const bytes_view p : del) {
        while (w < written.size() && bytes_less(written[w], p)) ++w;
        if (w < written.size() && bytes_equal(written[w], p)) continue;
        batch.deletes.push_back(p);
    }
    impl_->deleted.clear();
    return batch;
}

}  // namespace mpt
