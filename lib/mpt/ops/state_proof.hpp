// eth_getProof answers (EIP-1186) from a state file: an account's proof and the proofs of
// storage keys, as go-ethereum's GetProof gives them (state/getproof.hpp says the form).
//
// Thread safety: each call uses the view's store from the calling thread only.
#pragma once

#include <mpt/ops/state_file.hpp>
#include <mpt/state/getproof.hpp>
#include <mpt/trie/node_source.hpp>

#include <span>

namespace mpt {

// The answer for address and keys under the view's state root, filled as go-ethereum fills
// it:
// - the account proof of keccak256(address) in the account trie, the root node first, then
//   every node of 32 bytes or more on the path (prove() of proof/proof.hpp); it proves
//   absence for an absent account;
// - a present account's nonce, balance, codeHash and storageHash; an absent one's nonce and
//   balance 0 and codeHash and storageHash 32 zero bytes (go-ethereum 1.13.4 on);
// - per key, in the order given, its echo, its value (0 when absent) and the proof of
//   keccak256(slot) in the account's storage trie; no nodes at all when the account is
//   absent or has no storage (the empty root).
// Errors: the store's, storage_bad_node for a value that is no account or no storage value,
// storage_missing_node for an account whose storage trie the file lacks.
// account_rows, when given, keeps the account trie's rows near the root across calls (see
// VerifiedRows in trie/node_source.hpp): for answering many accounts of one view.
// REQUIRES: the view's store is inside a read transaction.
Result<GetProofDoc> prove_account(const StateView& view, const Address& address,
                                  std::span<const StorageKeyArg> keys,
                                  VerifiedRows* account_rows = nullptr);

}  // namespace mpt
