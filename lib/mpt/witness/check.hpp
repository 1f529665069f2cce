// The check of an execution witness against a pre-state root: what its nodes reach, and what
// each of its keys resolves to.
//
// The nodes are keyed by keccak256 and linked from the root through the account trie, and
// from each account reached through its storageRoot into its storage trie. A node listed twice
// counts once (and as duplicated); a listed node that no walk reaches is superfluous; a node
// that is no valid trie node, or an account trie leaf that is no account, is undecodable. A
// walk visits a node once per trie kind (the account trie, the storage tries), so that a
// crafted witness whose branches all point at one node costs no more than its size.
//
// A key resolves when the walk down its path ends at its value (present) or proves that there
// is none (absent); it is unresolved where the path needs a node the witness does not hold or
// cannot decode. A 20-byte key is an address, looked up in the account trie under
// keccak256(address); a 32-byte key is a slot, looked up in an account's storage trie under
// keccak256(slot). Which account: where the keys are listed in reth's order (an address, then
// that address's slots), the nearest address before the slot; where they are sorted bytewise
// without repeats (the canonical shape, which pairs no slot with an address), each address
// listed, the slot resolving in the first of them whose storage trie resolves it. An absent
// account, or one whose storageRoot is the empty root, holds every slot absent.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/state/changes.hpp>
#include <mpt/witness/witness.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mpt {

// Where a key's walk stops unresolved: the trie ("main" or 0x<keccak256(address)>), the path
// (one nibble a byte) and the hash of the node the walk needs, and why it stops there:
// "missing" (the witness lacks it), "does not decode", or another reason where no node is
// named (and then no trie).
struct KeyStop {
    std::string trie;
    bytes path;
    std::optional<Hash256> missing;
    std::string reason;
};

// A key as the check resolves it. Its views point into the witness checked (its keys and its
// nodes), which must outlive it.
struct WitnessKey {
    enum class Kind : uint8_t { account, slot };
    enum class Status : uint8_t { present, absent, unresolved };
    Kind kind = Kind::account;
    Status status = Status::unresolved;
    // A slot whose account is unresolved: its stop is the account's.
    bool account_unresolved = false;
    bytes_view key;                       // as listed
    bytes_view address;                   // a slot's account, where one was found; else empty
    bytes_view value;                     // present: the account's RLP or the slot's value RLP
    std::shared_ptr<const KeyStop> stop;  // unresolved: where and why
};

// Why a listed node is in the witness, the first that holds: on the path of a key that
// resolved present (or stopped unresolved), on the path of a key proven absent, read by
// applying the changes (the surviving sibling of a collapse, a new key's divergence), reached
// from the root by nothing of these, reached by nothing at all, or no node.
enum class NodeClass : uint8_t {
    key_path,
    absence_proof,
    changes,
    reached,
    superfluous,
    undecodable
};
std::string_view node_class_name(NodeClass c) noexcept;

struct UndecodableNode {
    size_t index = 0;  // in the witness's state list, from 0
    Hash256 hash{};
    std::string reason;
};

struct WitnessCheck {
    Hash256 root{};
    size_t nodes = 0;                          // listed
    size_t reached = 0;                        // distinct nodes the walks reach (that decode)
    size_t duplicated = 0;                     // listings past a node's first
    std::vector<Hash256> superfluous;          // in listed order
    std::vector<UndecodableNode> undecodable;  // listed nodes that are no trie node
    // Nodes reached in the account trie whose leaf value is no account (a storage trie's
    // node where the account trie leads, or a forgery), in listed order.
    std::vector<UndecodableNode> bad_accounts;
    size_t accounts = 0;       // account leaves reached
    size_t storage_tries = 0;  // distinct storage roots whose root node is held
    size_t slots = 0;          // storage leaves reached
    size_t codes = 0;          // listed
    size_t codes_matched = 0;  // whose hash is a reached account's codeHash
    std::vector<Hash256> codes_unmatched;
    bool keys_sorted = false;  // the keys are in the canonical order
    std::vector<WitnessKey> keys;
    // Each listed node's keccak256 and class, in listed order (a repeat: its first
    // listing's class).
    std::vector<Hash256> hashes;
    std::vector<NodeClass> classes;
    // With changes: the root after them, or what stopped them (the node they need and the
    // witness lacks, with the error naming its trie and path).
    std::optional<Hash256> post_root;
    std::optional<Hash256> changes_missing;
    std::optional<Error> changes_error;

    size_t unresolved() const noexcept;
};

// Checks w against root (the keys' views point into w); with changes, also applies them
// (apply_changes on the witness's tries) to class the nodes they read and say whether the
// witness holds all they need.
WitnessCheck check_witness(const Witness& w, const Hash256& root,
                           const ChangesDoc* changes = nullptr);

}  // namespace mpt
