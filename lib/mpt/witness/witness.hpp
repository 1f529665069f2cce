// Execution witnesses: what a stateless client is given to run a block without the state, the
// trie nodes of the account and storage tries it touches (one unordered list), the contract
// codes it runs, the keys it reads and the headers before the block.
//
// Shapes read (Witness::shape names the one found):
// - JSON, as debug_executionWitness answers, bare or as a JSON-RPC response's result:
//   {"state": [node...], "codes": [code...], "keys": [key...], "headers": [header...]}, every
//   item 0x hex. reth, Nethermind and Erigon give each header as its RLP; geth's ExtWitness
//   gives header objects (JSON-RPC's field names), which are encoded here. "keys" (and "codes",
//   "headers") may be absent or null; other members are ignored.
// - RLP, as geth's stateless.ExtWitness: [headers, codes, state, keys], each header a list,
//   or the three-item [headers, codes, state] of geth's older writer and Nethermind; binary, or
//   as 0x hex text.
//
// Thread safety: pure functions; a Witness is a value.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/state/block.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpt {

struct Witness {
    std::vector<bytes> state;    // trie nodes, as listed
    std::vector<bytes> codes;    // contract codes, as listed
    std::vector<bytes> keys;     // 20-byte addresses and 32-byte slots, as listed
    std::vector<bytes> headers;  // each header's RLP, as listed
    std::string shape;           // which shape was read, for messages
};

// Reads a witness in any of the shapes above: JSON when its first character that is not
// white space is '{', 0x hex RLP when it starts with "0x", binary RLP when its first byte
// starts a list. Errors (Errc::bad_input, bad_json, bad_hex or an RLP code) say where: the
// JSON member and item with its line and column, or the RLP part and its byte offset. A key of
// neither 20 nor 32 bytes is an error.
Result<Witness> read_witness(std::string_view input);

// The witness as geth's ExtWitness RLP, [headers, codes, state, keys], each header the list it
// is; read_witness reads it back as it was.
bytes encode_witness_rlp(const Witness& w);

// The witness's headers decoded, in the order listed.
Result<std::vector<HeaderFacts>> witness_headers(const Witness& w);

// The pre-state root the headers give: the stateRoot of the highest-numbered one, after
// checking that, sorted by number, each is the parent of the next (its hash the next one's
// parentHash, its number one less). nullopt when there are no headers. A broken chain or two
// headers of one number is Errc::bad_input naming the two headers.
Result<std::optional<Hash256>> witness_pre_state_root(const std::vector<HeaderFacts>& headers);

// The keccak256 of each node (or code, or key), in order, on up to four threads: a witness of
// 10,000 accounts holds 160,000 nodes and 60,000 keys.
std::vector<Hash256> node_hashes(const std::vector<bytes>& nodes);

// The nodes of a witness by hash: an open-addressing table of eight-byte slots, each a
// listing and four bytes of its hash, probed from the hash's first eight bytes (a keccak256
// is uniform already). A witness's table stays small enough for the cache (4 MiB for 160,000
// nodes); the hash itself is compared only where the four bytes match.
class NodeIndex {
public:
    static constexpr size_t kNone = SIZE_MAX;

    // hashes[i] is node i's (node_hashes); the first listing of a hash is the one found.
    // hashes must outlive the index.
    explicit NodeIndex(std::span<const Hash256> hashes);

    // The first listing of a node whose hash is h, or kNone.
    size_t find(const Hash256& h) const noexcept;
    // Starts loading the slot where find(h) looks first, so that finds of several hashes
    // known together wait for memory once rather than once each.
    void prefetch(const Hash256& h) const noexcept;
    // The first listing of node i's hash (i itself unless it repeats one).
    size_t first(size_t i) const noexcept { return first_[i]; }
    // Listings of a hash listed before.
    size_t duplicated() const noexcept { return duplicated_; }

private:
    struct Slot {
        uint32_t tag = 0;      // bytes 8 to 11 of the hash
        uint32_t listing = 0;  // listing + 1; 0 is an empty slot
    };
    // Where h stands, or the empty slot where it would.
    size_t probe(const Hash256& h) const noexcept;
    std::span<const Hash256> hashes_;
    std::vector<Slot> slots_;
    std::vector<uint32_t> first_;
    size_t mask_ = 0;
    size_t duplicated_ = 0;
};

}  // namespace mpt
