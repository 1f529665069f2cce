// The difference of two Ethereum states: accounts added, removed and changed, and for each
// account whose storage root differs, its slots added, removed and changed.
//
// It is the two-sided walk of proof/diff.hpp over the account tries, and over the pair of
// storage tries of each account whose storage root differs: equal subtrees are never read in
// either, so two states that differ in a few accounts cost a few paths of reads, whatever
// their size. An account added or removed has all its slots added or removed (its storage
// against the empty trie).
//
// It lives in build/ rather than proof/ because it joins the diff walk with the account
// codec (state/) and the store (store/), which proof/ may not include.
//
// Thread safety: one call uses its views from the calling thread only.
#pragma once

#include <mpt/ops/state_file.hpp>
#include <mpt/proof/diff.hpp>

#include <functional>
#include <optional>

namespace mpt {

struct AccountChange {
    DiffEntry::Kind kind = DiffEntry::Kind::added;
    Hash256 address_hash{};
    std::optional<Account> old_account;  // removed, changed
    std::optional<Account> new_account;  // added, changed
};

struct SlotChange {
    DiffEntry::Kind kind = DiffEntry::Kind::added;
    Hash256 address_hash{};
    Hash256 slot_hash{};
    std::optional<U256> old_value;  // removed, changed
    std::optional<U256> new_value;  // added, changed
};

// An account whose storage roots differ while a side holds no slots for its root (the state
// of a dump that gives storage roots without slots, StateView::find_storage_trie): its slots
// cannot be compared, only its roots (which the account's change shows).
struct SlotsUnknown {
    Hash256 address_hash{};
    bool missing_a = false;  // A's account has storage that A does not list
    bool missing_b = false;
};

// Called in trie order: an account's change, then its slots' changes in trie order (or, when
// a side lacks them, one slots_unknown); any returns false to stop. Without slots_unknown,
// slots a side lacks are Errc::storage_missing_node. The arguments are valid during the call
// only.
struct StateDiffVisitor {
    std::function<bool(const AccountChange&)> account;
    std::function<bool(const SlotChange&)> slot;
    std::function<bool(const SlotsUnknown&)> slots_unknown;
};

// Rows read on each side, account trie and storage tries together.
Result<DiffStats> diff_states(const StateView& a, const StateView& b, const StateDiffVisitor& f);

// Reads every node of the state's account trie and of every account's storage trie, each
// checked against its parent's hash by the trie walk (load_verified), every account and slot
// decoded: the first damage found is the error, Status ok when there is none. What diff_states
// trusts (the subtrees both sides share) this reads, at the cost of reading the whole state.
Status verify_state(const StateView& v);

}  // namespace mpt
