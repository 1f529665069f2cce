// Merkle proofs: single keys (EIP-1186 list form) and key ranges (the snap protocol's
// GetAccountRange / GetStorageRanges answers, checked with go-ethereum's VerifyRangeProof
// semantics).
//
// A proof is a list of node RLPs. Verifiers index the list by keccak256 of each node, so
// the order does not matter, extra nodes are ignored, and embedded nodes (RLP shorter than
// 32 bytes, which travel inside their parent) are simply unused when listed on their own.
// Every verifier walks at most one step per nibble of a key, so no proof, however crafted,
// makes it loop; none of them recurses along a path, so a deep proof cannot exhaust the
// stack either.
//
// Thread safety: the functions keep no shared state; a NodeReader is used by one thread at
// a time.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/trie/node_source.hpp>
#include <mpt/trie/trie.hpp>
#include <optional>
#include <vector>

namespace mpt {

// The proof of key in the trie stored in reader under root: the root node first, then every
// node on the key's path whose RLP is 32 bytes or more, in path order. It proves absence
// when the key is not there: it then ends at the node where the path diverges or reaches an
// empty slot. The empty trie has the empty proof. Nodes are read by path through
// load_verified, whose storage errors (missing node, hash mismatch, bad node) name the path.
// When value is given it receives the key's value (nullopt: absent), read on the same walk.
Result<std::vector<bytes>> prove(NodeReader& reader, const Hash256& root, bytes_view key,
                                 std::optional<bytes>* value = nullptr);

// prove() without keeping the proof: each node of it, in the same order, is passed to
// on_node(bytes_view rlp), the view valid during the call only. Returns the key's value,
// empty when absent, valid until reader's next read. path is scratch, kept between calls so
// that a batch of keys allocates nothing per key.
template <typename OnNode>
Result<bytes_view> prove_each(NodeReader& reader, const Hash256& root, bytes_view key, bytes& path,
                              OnNode&& on_node) {
    if (root == kEmptyRoot) return bytes_view{};
    PathCursor at(key);
    return descend_stored(reader, root, at, path, on_node);
}

// The value that proof proves for key under root (nullopt: proven absent), or
// Errc::invalid_proof with the reason: "root node missing", "node for hash 0x.. missing at
// depth d", "node RLP does not decode at depth d: ...", where d is the nibble depth. Under
// the empty root every key is absent whatever the proof holds.
Result<std::optional<bytes>> verify_proof(const Hash256& root, bytes_view key,
                                          const std::vector<bytes>& proof);

// A document's claim about key: valid (ok) exactly when the proof proves claimed (nullopt or
// an empty value: absence). Otherwise Errc::invalid_proof with verify_proof's reason, or one
// of "value mismatch", "the path diverges yet a value is claimed" (a value is claimed and
// the proof proves absence), "key is present but the document claims absence".
Status check_proof_claim(const Hash256& root, bytes_view key, const std::optional<bytes>& claimed,
                         const std::vector<bytes>& proof);

struct RangeResult {
    bool more = false;  // entries exist right of the last key (or of first, with no pairs)
};

// Checks that keys/values are exactly the trie's entries from first up to the last key,
// with go-ethereum's VerifyRangeProof semantics:
// - Always: as many keys as values, keys strictly increasing, no empty value (a deletion),
//   no key below first. Range proofs require keys of equal length (the edge walk compares
//   paths nibble by nibble); with a proof, first must have that length too.
// - proof == nullptr: the pairs must be the whole trie (their root must be root); more is
//   false.
// - A proof and no pairs: valid only when nothing exists at or right of first; more is
//   false. Under the empty root this holds with any proof.
// - One pair whose key is first: the proof must prove exactly that value.
// - Otherwise the proof holds the edge proofs of first (present or absent) and of the last
//   key: the verifier rebuilds the edge paths, drops everything between them, inserts the
//   pairs and compares the root, so a gap anywhere (embedded nodes included) or a wrong value
//   fails. Extra proof nodes are accepted. A key of another length that lies inside the
//   range (a shorter key, stored in a branch) is an entry the pairs cannot hold, so such a
//   range is invalid; go-ethereum, whose tries hold keys of one length, keeps those values.
// A failed check is Errc::invalid_proof with the reason in the detail.
Result<RangeResult> verify_range(const Hash256& root, bytes_view first,
                                 const std::vector<bytes>& keys, const std::vector<bytes>& values,
                                 const std::vector<bytes>* proof);

struct RangeProof {
    std::vector<bytes> keys;
    std::vector<bytes> values;
    std::vector<bytes> proof;
};

// A range as a snap server answers GetAccountRange: the pairs with key >= from in key
// order, stopping after limit pairs, after the first key >= *to (that key included), or once
// the keys and values returned reach max_bytes; at least one pair when any exists. proof
// holds the proof of from (present or not) and then the nodes of the last key's proof that
// it lacks; it is given even when the range is the whole trie. limit 0 is Errc::bad_input.
// Storage errors are prove()'s. In a trie whose keys differ in length the answer may hold
// keys of several lengths, which verify_range refuses.
Result<RangeProof> prove_range(NodeReader& reader, const Hash256& root, bytes_view from,
                               const bytes* to, size_t limit, size_t max_bytes);

}  // namespace mpt
