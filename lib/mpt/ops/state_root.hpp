// State roots of state documents (state/document.hpp): each account's storage trie, then the
// account trie over them (Yellow Paper section 4.1; the encodings of state/account.hpp).
//
// An account's storage root is the root of its listed slots, each under keccak256(slot) with
// rlp(value without leading zeros), zero values skipped; an account that lists no slot and
// carries a dump's own storage root (claimed_storage_root: a dump made without storage) keeps
// that root. Its code hash is account.code_hash as the reader set it. The account trie maps
// address_hash to rlp([nonce, balance, storageRoot, codeHash]).
//
// Thread safety: state_root starts and joins its own threads; the document is only read.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/account.hpp>

namespace mpt {

struct StateRootInfo {
    Hash256 root{};
    size_t accounts = 0;
    size_t storage_slots = 0;  // nonzero slots, the leaves of all storage tries
    size_t storage_tries = 0;  // accounts whose storage root was built from nonzero slots
};

// The storage root of one account by the rule above. Its storage need not be sorted; a slot
// key given twice is Errc::bad_input.
Result<Hash256> storage_root(const StateAccount& a);

// The state root and what went into it. With threads > 1 and enough slots, the storage tries
// are built on several threads, and the account trie split by first nibble. Two accounts
// with one address_hash are Errc::bad_input.
Result<StateRootInfo> state_root_info(const StateDoc& doc, unsigned threads = 1);
Result<Hash256> state_root(const StateDoc& doc, unsigned threads = 1);

}  // namespace mpt
