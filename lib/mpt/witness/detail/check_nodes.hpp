// The listed nodes of a witness as its check sees them, shared by the walk of the tries
// (check.cpp) and the resolution of the keys (check_keys.cpp).
//
// Thread safety: see Entry; the walkers write an entry's fields through atomic_ref while they
// run, the resolvers only read.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/witness/check.hpp>
#include <mpt/witness/witness.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
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
    std::string reason;       // Decodes::no: why
};

// The listed nodes by hash, each first listing with its Entry.
struct Nodes {
    explicit Nodes(const Witness& w, const std::vector<Hash256>& node_hashes)
        : hashes(node_hashes),
          index(node_hashes),
          // Address space for every node a branch: only the pages used are touched.
          links(std::make_unique_for_overwrite<uint32_t[]>(16 * w.state.size())) {
        const size_t n = w.state.size();
        reserve_huge(entries, n);
        entries.resize(n);
        for (size_t i = 0; i < n; ++i) {
            entries[i].rlp = w.state[i];
            entries[i].index = static_cast<uint32_t>(i);
        }
        advise_huge_pages(links.get(), 16 * n * sizeof(uint32_t));
        reserve_huge(links_at, n);
        links_at.resize(n, kNoLinks);
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
};

// Resolves each key of w into out.keys, in order, in runs of keys on up to four threads,
// then marks the nodes on their ways (on_path, on_absence).
void resolve_keys(const Witness& w, WitnessCheck& out, Nodes& nodes);

}  // namespace mpt::witness_detail
