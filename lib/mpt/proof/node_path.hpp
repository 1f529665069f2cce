// Node lookup by path, with the semantics of the snap protocol's GetTrieNodes.
//
// A path names a position in a trie: the nibbles from the root to where a node starts.
// Requests carry it hex-prefix ("compact") encoded. The answer is the RLP of the node that
// starts at exactly that position: a stored (hashed) node, the root included, or a node
// embedded in its parent's RLP. A position inside a short node's partial key, below a
// leaf, under an empty slot, or in the empty trie holds no node.
//
// One rule goes beyond geth (whose trie.GetNode answers nothing for it): a leaf's full
// key path, that is the leaf's position followed by its whole partial key, also names the
// leaf, with or without the compact leaf flag. The leaf flag is ignored everywhere.
//
// Thread safety: the functions keep no state; a reader is used by one thread at a time.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/trie/trie.hpp>
#include <optional>
#include <string_view>

namespace mpt {

struct NodeLookup {
    enum class Status : uint8_t {
        found,     // a hashed node (or the root) starts here; rlp is its stored row
        absent,    // no node starts here; rlp is empty
        embedded,  // a node lives here inside its parent's RLP; rlp is that node
    };
    Status status = Status::absent;
    bytes rlp;
};

std::string_view status_name(NodeLookup::Status s) noexcept;

// The nibbles named by a compact path, one per byte, leaf flag ignored. An empty input
// names the root (geth's compactToHex maps it to the empty path). Errc::bad_compact_path
// for a flag nibble above 3 or a nonzero pad nibble.
Result<bytes> compact_to_nibbles(bytes_view compact);

// The node at the position named by compact_path in the trie with the given root. Walks
// from the root along the path, reading each hashed node by its path and checking it
// against the hash its parent holds: a missing row or a mismatch is a storage error, never
// an answer. Reads at most one row per hashed node on the path.
Result<NodeLookup> lookup_node(NodeReader& reader, const Hash256& root, bytes_view compact_path);

// The same, for a path given as nibbles, one per byte (a byte above 15 is Errc::bad_input).
Result<NodeLookup> lookup_node_at(NodeReader& reader, const Hash256& root, bytes_view nibbles);

// A GetTrieNodes path set. One element: a compact path in the account (main) trie. Two or
// more: the first is a 32-byte account hash naming a storage trie, the rest compact paths
// in that trie.
struct PathSet {
    std::optional<Hash256> account;  // set: a storage trie
    std::vector<bytes> paths;        // compact encoded, each validated
};

// Parses comma-separated 0x hex elements ("0x" alone is the empty compact path, the root).
// Errors (Errc::bad_input, bad_hex, bad_compact_path) name the element.
Result<PathSet> parse_path_set(std::string_view comma_separated_hex);

// The soft byte limit of a snap response: responses are added while the bytes so far do
// not exceed the limit, so the response that crosses it is the last one included (geth's
// handler checks `bytes > limit` after appending). Absent answers add no bytes.
class ResponseLimit {
public:
    explicit ResponseLimit(std::optional<uint64_t> max_bytes) noexcept : max_(max_bytes) {}

    // Whether another response may still be added.
    bool open() const noexcept { return !max_ || total_ <= *max_; }
    // REQUIRES: open().
    void add(uint64_t response_bytes) noexcept {
        MPT_ASSERT(open());
        total_ += response_bytes;
    }
    uint64_t total() const noexcept { return total_; }

private:
    std::optional<uint64_t> max_;
    uint64_t total_ = 0;
};

}  // namespace mpt
