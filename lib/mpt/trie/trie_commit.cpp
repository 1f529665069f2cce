#include <mpt/trie/detail/trie_nodes.hpp>

#include <mpt/core/keccak.hpp>

#include <algorithm>
#include <array>

namespace mpt {
namespace {

// The scratch of hashing a trie's nodes, one a thread (scratch()): a commit allocates
// nothing for it once its thread has hashed as many nodes before.
struct TrieScratch {
    struct Job {
        TrieNode* node;
        uint32_t height;  // one more than its highest planned child's; 0 for none
        bool root;
        bool write;  // its row is emitted (when it is hashed)
        size_t path_at = 0;
        size_t path_len = 0;
        size_t enc_at = 0;
        size_t enc_len = 0;
    };
    std::vector<Job> jobs;          // the nodes to hash, children first
    bytes paths;                    // the written jobs' paths
    bytes encs;                     // every job's encoding
    std::vector<uint32_t> starts;   // by height: where its jobs start in order
    std::vector<uint32_t> order;    // the jobs by height
    std::vector<uint32_t> filled;   // by height: where order's next job of it goes
    std::vector<bytes_view> views;  // one height's encodings to hash
    std::vector<TrieNode*> hashed;  // and their nodes
    std::vector<Hash256> digests;
};

// This thread's scratch.
TrieScratch& scratch() {
    thread_local TrieScratch s;
    return s;
}

// Hashes the nodes of a trie that need it; with a batch, also emits the dirty hashed nodes as
// rows. The nodes are planned in the order a walk from the root finishes them (children
// first), then hashed a height at a time, every node of one height together
// (keccak256_batch: a commit of many nodes keeps the batched kernel's lanes full), and their
// rows emitted in the planned order, children before parents.
class Hasher {
public:
    Hasher(TrieScratch& scratch, CommitBatch* batch) : s_(scratch), batch_(batch) {
        s_.jobs.clear();
        s_.paths.clear();
        s_.encs.clear();
    }

    NodeRef hash(TrieNode& root) {
        bytes path;
        const int top = plan(root, path, true);
        if (top < 0) return root.ref;
        // The jobs by height (stable): starts[h] is where height h starts in order.
        std::vector<uint32_t>& starts = s_.starts;
        starts.assign(static_cast<size_t>(top) + 2, 0);
        for (const TrieScratch::Job& j : s_.jobs) ++starts[j.height + 1];
        for (size_t h = 1; h < starts.size(); ++h) starts[h] += starts[h - 1];
        s_.order.resize(s_.jobs.size());
        std::vector<uint32_t>& at = s_.filled;
        at.assign(starts.begin(), starts.end() - 1);
        for (size_t i = 0; i < s_.jobs.size(); ++i) {
            s_.order[at[s_.jobs[i].height]++] = static_cast<uint32_t>(i);
        }
        for (size_t h = 0; h + 1 < starts.size(); ++h) hash_height(starts[h], starts[h + 1]);
        if (batch_ != nullptr) emit();
        // A scratch a large commit grew is let go rather than kept for the thread's life.
        constexpr size_t kKeep = size_t{64} << 20;
        if (s_.encs.capacity() + s_.jobs.capacity() * sizeof(TrieScratch::Job) > kKeep) {
            s_ = TrieScratch{};
        }
        return root.ref;
    }

private:
    // Plans n, standing at path, and the nodes under it that need hashing, children first:
    // n's height (one more than its highest planned child; 0 for none), or -1 when n needs
    // none (stored, or its reference stands and no row is due).
    int plan(TrieNode& n, bytes& path, bool root) {
        if (n.type == Type::stored) return -1;
        const bool write = batch_ != nullptr && (n.dirty || (root && !n.has_row));
        if (n.ref_valid && !write && (!root || n.ref.is_hash())) return -1;
        int below = -1;
        if (n.type == Type::extension) {
            ExtensionNode& ext = as_ext(n);
            const size_t len = path.size();
            path.insert(path.end(), ext.path.unpacked().begin(), ext.path.unpacked().end());
            below = plan(*ext.child, path, false);
            path.resize(len);
        } else if (n.type == Type::branch) {
            BranchNode& b = as_branch(n);
            for (uint8_t i = 0; i < 16; ++i) {
                if (!b.children[i]) continue;
                path.push_back(i);
                below = std::max(below, plan(*b.children[i], path, false));
                path.pop_back();
            }
        }
        TrieScratch::Job j{&n, static_cast<uint32_t>(below + 1), root, write};
        if (write) {
            j.path_at = s_.paths.size();
            j.path_len = path.size();
            s_.paths.insert(s_.paths.end(), path.begin(), path.end());
        }
        s_.jobs.push_back(j);
        return below + 1;
    }

    // Encodes the planned nodes of one height, order[begin, end) (their children are
    // hashed), then hashes the ones referenced by hash together.
    void hash_height(size_t begin, size_t end) {
        for (size_t k = begin; k < end; ++k) {
            TrieScratch::Job& j = s_.jobs[s_.order[k]];
            j.enc_at = s_.encs.size();
            encode(*j.node, s_.encs);
            j.enc_len = s_.encs.size() - j.enc_at;
        }
        s_.views.clear();
        s_.hashed.clear();
        for (size_t k = begin; k < end; ++k) {
            TrieScratch::Job& j = s_.jobs[s_.order[k]];
            const bytes_view enc(s_.encs.data() + j.enc_at, j.enc_len);
            if (j.root || enc.size() >= 32) {
                s_.views.push_back(enc);
                s_.hashed.push_back(j.node);
            } else {
                j.node->ref = NodeRef::of(enc);
                j.node->ref_valid = true;
            }
        }
        s_.digests.resize(s_.views.size());
        keccak256_batch(s_.views, s_.digests);
        for (size_t k = 0; k < s_.hashed.size(); ++k) {
            s_.hashed[k]->ref = NodeRef::from_hash(s_.digests[k]);
            s_.hashed[k]->ref_valid = true;
        }
    }

    static void encode(TrieNode& n, bytes& out) {
        switch (n.type) {
            case Type::leaf: {
                const LeafNode& leaf = as_leaf(n);
                encode_leaf(out, leaf.path, leaf.value);
                break;
            }
            case Type::extension: {
                const ExtensionNode& ext = as_ext(n);
                encode_extension(out, ext.path, ext.child->ref);
                break;
            }
            case Type::branch: {
                const BranchNode& b = as_branch(n);
                std::array<NodeRef, 16> refs;
                for (uint8_t i = 0; i < 16; ++i) {
                    if (b.children[i]) refs[i] = b.children[i]->ref;
                }
                encode_branch(out, refs.data(), b.value);
                break;
            }
            case Type::stored:
                break;
        }
    }

    // The rows of the planned nodes that are written, in the planned order.
    void emit() {
        for (const TrieScratch::Job& j : s_.jobs) {
            if (!j.write) continue;
            if (j.node->ref.is_hash()) {
                batch_->puts.push_back(bytes_view(s_.paths.data() + j.path_at, j.path_len),
                                       bytes_view(s_.encs.data() + j.enc_at, j.enc_len));
                j.node->has_row = true;
            }
            j.node->dirty = false;
        }
    }

    TrieScratch& s_;
    CommitBatch* batch_;
};

}  // namespace

Result<Hash256> Trie::root_hash() {
    if (!root_) return kEmptyRoot;
    Hasher h(scratch(), nullptr);
    return h.hash(*root_).hash();
}

Result<CommitBatch> Trie::commit() {
    CommitBatch batch;
    if (!root_) {
        batch.root = kEmptyRoot;
    } else {
        Hasher h(scratch(), &batch);
        batch.root = h.hash(*root_).hash();
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
