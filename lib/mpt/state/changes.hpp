// The changes document: what a block changed in the state, account by account, read in one
// of its shapes into the updates a state file takes (and, later, what a witness applies).
//
//   changes         {address: account or null}. An account lists its post-state fields:
//                   "nonce", "balance", "code" (a field absent is unchanged, or zero for a
//                   new account; "codeHash" beside the code must be its hash, and alone
//                   names a code not given) and under "storage" the slots that changed, each to its
//                   new value, a zero value clearing the slot. null: the account is deleted.
//   prestate-diff   the result of geth's prestateTracer in diff mode, {"pre": {...},
//                   "post": {...}}: pre holds the accounts the block (or transaction)
//                   changed as they were, post what changed of them. An account in pre and
//                   not in post is deleted; a field absent from post is unchanged; a slot in
//                   pre's storage and not in post's was cleared (the tracer leaves zeros out
//                   of post).
//   prestate-list   the per-transaction list debug_traceBlockByNumber returns, [{"txHash",
//                   "result": {"pre", "post"}}, ...] (bare diffs too), merged in order.
//
// Each may come inside a JSON-RPC response. Addresses are 20 bytes of 0x hex; nonce a
// quantity ("0x.." or decimal, as a string or a JSON number) of at most 8 bytes; balance a
// quantity of at most 32; code 0x hex bytes; storage keys and values 0x hex of at most 32
// bytes (64 digits), left-padded. Errors (Errc::bad_json, bad_input, bad_hex) name the
// field as a path from the top and its line and column.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/account.hpp>

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace mpt {

// One slot's value: the slot word and its value (zero: no entry).
using SlotValue = std::pair<U256, U256>;

// An account as a tracer's pre says it was: the fields given, and the slots given; absent
// when the account was first seen being made (geth leaves a new account out of pre).
struct AccountBefore {
    bool absent = false;
    std::optional<uint64_t> nonce;
    std::optional<U256> balance;
    std::optional<bytes> code;
    std::vector<SlotValue> storage;  // by slot
};

// What a document does to one account over the whole document (all its transactions).
struct AccountUpdate {
    Address address{};
    bool deleted = false;           // gone afterwards
    bool clear_storage = false;     // its storage emptied (deleted, then perhaps made again)
                                    // before storage below applies
    std::optional<uint64_t> nonce;  // the new values; nullopt: unchanged
    std::optional<U256> balance;
    std::optional<bytes> code;
    std::optional<Hash256> code_hash;  // a code named by its hash alone (not kept)
    std::vector<SlotValue> storage;    // by slot, each once: the new values (zero: cleared)
    // From a tracer diff: the account before its first transaction, as pre gave it.
    std::optional<AccountBefore> before;
};

enum class ChangesShape : uint8_t { changes, prestate_diff, prestate_list };
std::string_view changes_shape_name(ChangesShape s) noexcept;

struct ChangesDoc {
    ChangesShape shape = ChangesShape::changes;
    std::vector<AccountUpdate> accounts;  // by address, each once
};

// The account after u, from the account now (Account{} when there is none): its nonce,
// balance and codeHash as u sets them (a code given sets its keccak256), and the empty storage
// root where u clears the storage. The storage root u's slots give is the caller's to set.
// REQUIRES: !u.deleted.
Account account_after(const AccountUpdate& u, Account now);

// Reads a changes document in any of its shapes.
Result<ChangesDoc> parse_changes_document(std::string_view text);

}  // namespace mpt
