// The listed nodes of a witness as its check sees them, shared by the walk of the tries
// (check.cpp) and the resolution of the keys (check_keys.cpp).
//
// Thread safety: see Entry; the walkers write an entry's fields through atomic_ref while they
// run, the resolvers only read.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/trie/task_pool.hpp>
#include <mpt/witness/check.hpp>
#include <mpt/witness/witness.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace mpt::witness_detail {

// One listed node, by hash.
struct Entry {
    bytes_view rlp;
    uint32_t index = 0;  // its listing: entries[i].index is i
    // Whether it is a node: decided where a walk first decodes it, or at the end for one no
    // walk reached.
    enum class Decodes : uint8_t { unknown, yes, no } decodes = Decodes::unknown;
    // By the account walk, by a storage walk: set by the walker that stacks it (atomic_ref
    // while the walkers run).
    bool reached[2] = {false, false};
    // A walker has taken it: that one alone writes decodes, reason and links (a node reached
    // in both kinds of trie is visited twice, maybe on two threads at once).
    bool taken = false;
    bool on_path = false;     // on the way to a key present or unresolved
    bool on_absence = false;  // on the way to a key proven absent
    // The listing that linked it, by the account walk and by a storage walk (kNoParent: the
    // root of its trie, or not reached); set by the walker that stacks it.
    uint32_t parent[2] = {kNoParent, kNoParent};
    std::string reason;  // Decodes::no: why

    static constexpr uint32_t kNoParent = UINT32_MAX;
};

// A leaf a walk reached at a whole 64-nibble path: its value and where it stands. The walk
// reaches a node once a kind of trie, so where tries share a node only the first walk through
// it finds the leaves below; a key that is not here is looked up from its root.
struct Leaf {
    Hash256 key{};        // the path: the key's keccak256
    uint32_t root = 0;    // the listing of its trie's root
    uint32_t holder = 0;  // the listing that holds it: the leaf, or the one it is embedded in
    uint8_t kind = 0;     // 0 the account trie, 1 a storage trie: which parent link leads up
    bytes_view value;
};

// The leaves the walks found, by root and key: an open-addressing table of places in the
// leaves, probed from the key's first eight bytes and the root mixed together.
class LeafIndex {
public:
    void assign(std::vector<Leaf> leaves) {
        leaves_ = std::move(leaves);
        size_t capacity = 16;
        shift_ = 60;
        while (capacity < 2 * leaves_.size()) {
            capacity *= 2;
            --shift_;
        }
        slots_.assign(capacity, 0);
        mask_ = capacity - 1;
        for (size_t i = 0; i < leaves_.size(); ++i) {
            uint32_t& s = slots_[probe(leaves_[i].root, leaves_[i].key)];
            if (s == 0) s = static_cast<uint32_t>(i + 1);
        }
    }

    // The leaf at key in the trie whose root is listing root, or nullptr.
    const Leaf* find(uint32_t root, const Hash256& key) const noexcept {
        if (slots_.empty()) return nullptr;
        const uint32_t s = slots_[probe(root, key)];
        return s == 0 ? nullptr : &leaves_[s - 1];
    }

private:
    size_t probe(uint32_t root, const Hash256& key) const noexcept {
        // The same slots are keys of many storage tries: the root is mixed in by a
        // multiplication, whose high bits depend on all of the sum's.
        uint64_t start;
        std::memcpy(&start, key.data(), 8);
        for (size_t at = ((start + root) * 0x9e3779b97f4a7c15ULL) >> shift_;;
             at = (at + 1) & mask_) {
            const uint32_t s = slots_[at];
            if (s == 0 || (leaves_[s - 1].root == root && leaves_[s - 1].key == key)) return at;
        }
    }

    std::vector<Leaf> leaves_;
    std::vector<uint32_t> slots_;  // a leaf's place + 1; 0 is empty
    size_t mask_ = 0;
    int shift_ = 60;  // 64 - log2(slots)
};

// The listed nodes by hash, each first listing with its Entry.
struct Nodes {
    explicit Nodes(const Witness& w, const std::vector<Hash256>& node_hashes)
        : hashes(node_hashes),
          index(std::span<const Hash256>()),
          // Address space for every node a branch: only the pages used are touched.
          links(std::make_unique_for_overwrite<uint32_t[]>(16 * w.state.size())) {
        const size_t n = w.state.size();
        // The index on one thread, the entries on another: neither reads the other.
        run_tasks(2, 2, [&](size_t task, unsigned) {
            if (task == 0) {
                index = NodeIndex(node_hashes);
                return;
            }
            reserve_huge(entries, n);
            entries.resize(n);
            for (size_t i = 0; i < n; ++i) {
                entries[i].rlp = w.state[i];
                entries[i].index = static_cast<uint32_t>(i);
            }
            advise_huge_pages(links.get(), 16 * n * sizeof(uint32_t));
            reserve_huge(links_at, n);
            links_at.resize(n, kNoLinks);
        });
    }

    // The first listing of the node whose hash is h, or nullptr.
    Entry* find(const Hash256& h) noexcept {
        const size_t i = index.find(h);
        return i == NodeIndex::kNone ? nullptr : &entries[i];
    }
    const Entry* find(const Hash256& h) const noexcept {
        const size_t i = index.find(h);
        return i == NodeIndex::kNone ? nullptr : &entries[i];
    }

    // Sixteen links for a branch, all kEmpty.
    uint32_t add_links() noexcept {
        const size_t at = links_used.fetch_add(16, std::memory_order_relaxed);
        std::fill_n(&links[at], 16, kEmpty);
        return static_cast<uint32_t>(at);
    }

    // A link of a branch to a child: its first listing, or one of these.
    static constexpr uint32_t kEmpty = UINT32_MAX;         // no child
    static constexpr uint32_t kUnlinked = UINT32_MAX - 1;  // embedded, or not listed
    // A listing's links_at: where its links start, or one of these.
    static constexpr uint32_t kNoLinks = UINT32_MAX;  // no branch the walk decoded
    static constexpr uint32_t kUndecodable = UINT32_MAX - 1;

    const std::vector<Hash256>& hashes;
    NodeIndex index;
    std::vector<Entry> entries;  // by listing; a repeated listing's is unused
    // Sixteen a branch the walk decoded: where a key's lookup goes without decoding it
    // again, reading links and links_at alone (4 bytes a node: near the core).
    std::unique_ptr<uint32_t[]> links;
    std::atomic<size_t> links_used = 0;
    std::vector<uint32_t> links_at;  // by listing
    LeafIndex leaves;                // the walk's
};

// Resolves each key of w into out.keys, in order, in runs of keys on up to four threads,
// then marks the nodes on their ways (on_path, on_absence).
void resolve_keys(const Witness& w, WitnessCheck& out, Nodes& nodes);

}  // namespace mpt::witness_detail
