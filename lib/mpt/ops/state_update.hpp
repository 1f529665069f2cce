// A changes document (state/changes.hpp) applied to a state file: the account trie, the
// storage tries, the preimages and the codes together, in one write transaction of the
// store that publishes the new roots last, so that the file holds the old state or the new
// one, whole.
//
// Thread safety: each call uses its store from the calling thread only.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/changes.hpp>
#include <mpt/store/node_store.hpp>

#include <optional>
#include <string>

namespace mpt {

struct StateUpdateOptions {
    bool preimages = true;  // record the preimages of the addresses and slots written
    // Refuse (nothing written) when the root the changes give is not this one.
    std::optional<Hash256> expect_root;
};

struct StateUpdateResult {
    Hash256 root{};
    size_t accounts = 0;  // accounts written (made or changed)
    size_t deleted = 0;   // accounts deleted
    size_t slots = 0;     // slots written or cleared
    size_t codes = 0;     // codes recorded
    size_t rows_written = 0;
    size_t rows_deleted = 0;
    // Set when the update was refused and nothing was written: why (the changes' root is
    // not expect_root, or a tracer's pre is not what the file holds).
    std::string refused;
};

// Applies doc to the state whose account trie is `main` in store. Errors: no_such_trie and
// trie_kind_mismatch for a file without a state, storage errors (the write rolled back).
Result<StateUpdateResult> update_state(NodeStore& store, const ChangesDoc& doc,
                                       const StateUpdateOptions& o);

}  // namespace mpt
