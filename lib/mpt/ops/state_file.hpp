// Ethereum state in a trie file: the account trie `main` and one storage trie per account
// with storage, named `0x<keccak256(address)>` in lowercase hex, in one file, with the
// preimages of their keys (address hash -> address, slot hash -> slot) where the document
// gives them. An account's storageRoot in the account trie is the root of its storage trie;
// an account without storage has the empty root and no storage trie.
//
// Building: the storage tries are hashed first, account by account in trie order, so that
// each account's value carries its storage root when the account trie takes it; every row
// goes to the store inside one write transaction that publishes the roots last.
//
// Reading: StateView opens the account trie and, per account, the storage trie at the root
// the account holds, so a storage trie whose rows do not match its account is a storage
// error (hash mismatch), never a wrong answer.
//
// Thread safety: each call uses its store from the calling thread only.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/state/account.hpp>
#include <mpt/store/node_store.hpp>

#include <functional>
#include <optional>
#include <string>

namespace mpt {

// "0x" and the 64 lowercase hex digits of address_hash: the name of an account's storage trie.
std::string storage_trie_name(const Hash256& address_hash);

struct StateBuildOptions {
    // Rebuild an existing state in the store; without it an existing `main` is refused.
    bool replace = false;
    bool preimages = true;  // record address and slot preimages
    unsigned threads = 1;   // for hashing the storage tries of a new file (build_new_state_file)
    // build_new_state_file_streamed: compare the roots the document states, its own and each
    // account's beside its slots, with the ones its accounts give, and write no file when one
    // differs (StreamedStateBuild::stated_mismatch).
    bool check_stated_roots = false;
    // Called now and then with (accounts done, accounts in all).
    std::function<void(size_t, size_t)> progress;
};

struct StateBuildResult {
    Hash256 root{};
    size_t accounts = 0;
    size_t storage_tries = 0;
    size_t slots = 0;  // non-zero slots written
    size_t rows_written = 0;
    size_t preimages = 0;
    size_t codes = 0;  // distinct contract codes kept
};

// Writes the state of doc into store: the account trie `main` (kind state) and the storage
// tries (kind secure), in one write transaction; the root is state_root(doc) of
// ops/state_root.hpp. Zero-valued slots are skipped. Errors:
// bad_input (two entries of one account with the same slot, or two accounts with the same
// address hash), trie_kind_mismatch and bad_input for an existing trie without replace, and
// the store's errors.
Result<StateBuildResult> build_state(NodeStore& store, const StateDoc& doc,
                                     const StateBuildOptions& o);

// The same state into a new file at path, written whole (bulk_build.hpp): the rows held in
// memory, put in (trie, path) order and the nodes and preimages tables' b-trees written page
// by page. Returns std::nullopt, having made no file, when this way is closed (path exists,
// or as build_new_trie_file); the caller then builds through the store.
Result<std::optional<StateBuildResult>> build_new_state_file(const std::string& path,
                                                             const StateDoc& doc,
                                                             const StateBuildOptions& o);

// For the builders: the accounts of doc in trie order (bad_input for an address hash given
// twice), and an account's non-zero slots in trie order (bad_input for a slot given twice).
Result<std::vector<const StateAccount*>> sorted_state_accounts(const StateDoc& doc);
Result<std::vector<const StorageEntry*>> sorted_state_slots(const StateAccount& acc);

// A state read from a store. REQUIRES: store outlives the view and is inside a read (or
// write) transaction for as long as the view is used.
class StateView {
public:
    // Opens the account trie `accounts` (usually "main"). Errors: no_such_trie, and
    // trie_kind_mismatch when the trie is not a state trie.
    static Result<StateView> open(NodeStore& store, std::string_view accounts = "main");

    const TrieInfo& accounts() const noexcept { return accounts_; }
    NodeStore& store() const noexcept { return *store_; }

    // The account under address_hash, or std::nullopt when absent. Errors: storage errors;
    // storage_bad_node for a value that is no account.
    Result<std::optional<Account>> account(const Hash256& address_hash) const;

    // The value of the slot whose trie key is slot_hash in the storage of account a (found
    // under address_hash), or std::nullopt when absent (zero).
    Result<std::optional<U256>> slot(const Hash256& address_hash, const Account& a,
                                     const Hash256& slot_hash) const;

    // Calls f(address_hash, account) for every account with address_hash >= from, in trie
    // order, until f returns false. Memory stays that of one path through the trie.
    using AccountVisitor = std::function<bool(const Hash256&, const Account&)>;
    Status for_each_account(const Hash256& from, const AccountVisitor& f) const;

    // Calls f(slot_hash, value) for every slot of account a (under address_hash), in trie
    // order, until f returns false.
    using SlotVisitor = std::function<bool(const Hash256&, const U256&)>;
    Status for_each_slot(const Hash256& address_hash, const Account& a, const SlotVisitor& f) const;

    // The storage trie of account a: its info (root set to a.storage_root), or std::nullopt
    // when a has no storage. Errors: storage_missing_node when a has storage but the file
    // has no trie of that name.
    Result<std::optional<TrieInfo>> storage_trie(const Hash256& address_hash,
                                                 const Account& a) const;

    // As storage_trie, but an account with storage whose trie the file does not hold at all
    // (no trie of that name: the state was built from a dump that gives storage roots
    // without their slots) is absent, not an error. A trie that is there but lacks rows
    // stays a storage error when it is read.
    struct StorageLookup {
        std::optional<TrieInfo> trie;  // set when the account has storage and the file has it
        bool absent = false;           // the account has storage; the file has no trie for it
    };
    Result<StorageLookup> find_storage_trie(const Hash256& address_hash, const Account& a) const;

private:
    StateView(NodeStore& store, TrieInfo accounts)
        : store_(&store), accounts_(std::move(accounts)) {}
    NodeStore* store_;
    TrieInfo accounts_;
};

struct StateCheckReport {
    size_t accounts = 0;
    size_t storage_tries = 0;  // storage tries in the file
    size_t slots = 0;
    size_t rows = 0;                    // rows of every trie checked
    size_t preimages_read = 0;          // preimages read, every one of which hashed to its key
    size_t missing_preimages = 0;       // accounts and slots the file holds no preimage of
    size_t storage_not_held = 0;        // accounts with storage whose trie the file does not hold
    size_t codes_read = 0;              // accounts whose code was read, each hashed to codeHash
    size_t codes_not_held = 0;          // accounts with code whose code the file does not hold
    std::vector<std::string> problems;  // each names its trie, and its path or account
    // The keys whose stored preimage does not hash to them, each once, named in problems by
    // the first account or slot that reads it.
    std::vector<Hash256> bad_preimages;
    std::vector<Hash256> bad_codes;  // the same for codes
};

// Checks the whole state whose account trie is accounts (kind state): check_trie of it and
// of every storage trie in the store; every account value decodes as an account, every
// account's storageRoot is the root of the storage trie of its name (or the empty root, with
// no such trie), every storage trie is an account's, every slot value decodes, and the
// preimage of every account and slot key, where the store holds one, hashes to the key.
// Problems are the report's; storage errors other than damage end the check. An account
// whose storage trie the file does not hold at all (built from a dump that gives storage
// roots without slots) is counted, not a problem, as is a key without its preimage.
Result<StateCheckReport> check_state(NodeStore& store, const TrieInfo& accounts);

// For a storage trie (a name of 0x and 64 hex digits) in a store whose trie main holds
// accounts: the problem that no account of main names it with its root, or nullopt.
Result<std::optional<std::string>> check_storage_owner(NodeStore& store, const TrieInfo& trie);

// 32 bytes from a trie key or value view. REQUIRES: v.size() == 32.
Hash256 hash_from_view(bytes_view v) noexcept;

}  // namespace mpt
