// The execution witness of reads (and changes) from a state file: the nodes a stateless
// client needs, the codes of the accounts read, and the keys, as witness/ reads them back.
//
// Thread safety: each call uses its store from the calling thread only.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/changes.hpp>
#include <mpt/store/node_store.hpp>
#include <mpt/witness/apply.hpp>
#include <mpt/witness/witness.hpp>

#include <optional>
#include <vector>

namespace mpt {

struct WitnessRequest {
    // 20-byte addresses and 32-byte slots, each slot of the address before it.
    std::vector<bytes> keys;
    // With changes, the witness also holds every node applying them needs.
    const ChangesDoc* changes = nullptr;
    std::vector<bytes> headers;  // each header's RLP, given as they are
};

struct MadeWitness {
    // The nodes each once, sorted bytewise; the codes likewise; the keys as requested.
    Witness witness;
    size_t read_nodes = 0;                  // the nodes the reads need
    size_t change_nodes = 0;                // the further nodes the changes need
    size_t codes_missing = 0;               // codes of accounts read that the file does not hold
    std::optional<AppliedChanges> applied;  // with changes: the root after them
};

// Reads each key from the state in store (the account trie `main`) and keeps every node read
// on the way: the union of the keys' proofs. With changes, applies them (nothing written) and
// keeps the nodes that needs too. A slot with no address before it is Errc::bad_input; storage
// errors pass through.
Result<MadeWitness> make_witness(NodeStore& store, const WitnessRequest& request);

}  // namespace mpt
