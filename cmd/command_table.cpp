// The table of commands (cmd/commands.hpp).
#include "commands.hpp"

#include <iterator>

namespace mpt::cli {

namespace {

// In the order `mpt --help` lists them. Each row's page, man/mpt-<name>.1, is checked by
// scripts/check-man.sh through `mpt --commands`, which prints this table.
constexpr Command kCommands[] = {
    {"root",
     "Print the root hash of key/value files, trie files or state documents, or run test vectors",
     register_root},
    {"build", "Create a trie in a trie file, or apply key/value input to an existing one",
     register_build},
    {"update", "Apply a block's changes to a state file in one write", register_update},
    {"get", "Print the values of keys, or an account and its slots (exit 1 when absent)",
     register_get},
    {"dump", "Print the pairs of a trie in key order", register_dump},
    {"check", "Verify a stored trie: every hash, every row reachable, no row missing",
     register_check},
    {"stats", "Node counts and sizes by type and depth", register_stats},
    {"count-allocs", "Heap allocations per operation on a trie reopened from its root",
     register_count_allocs},
    {"diff", "Keys added, removed and changed from A to B", register_diff},
    {"get-node", "Fetch nodes by path, as a snap server answers GetTrieNodes", register_get_node},
    {"proof", "Make a Merkle proof or a range proof from a trie file, or check a proof",
     register_proof},
    {"verify-range", "Check a range of key/value pairs and its edge proofs against a root",
     register_verify_range},
    {"keccak", "Print the Keccak-256 hash of a value or of stdin", register_keccak},
    {"rlp", "Decode RLP into a JSON tree of hex strings, or encode one", register_rlp},
    {"slot", "The storage slot of a Solidity mapping entry or dynamic array element",
     register_slot},
    {"witness", "Make, check and apply execution witnesses (stateless block execution)",
     register_witness},
    {"tries", "List the tries of a trie file", register_tries},
    {"drop", "Remove a trie and its rows from a trie file", register_drop},
    {"copy", "Copy a trie under a new name in the same file", register_copy},
    {"vacuum", "Compact a trie file, giving freed space back", register_vacuum},
    {"tree", "Show a stored trie's nodes as an indented tree", register_tree},
    {"completion", "Print a completion script for bash, zsh or fish", register_completion},
};

}  // namespace

std::span<const Command> command_table() noexcept {
    return {std::begin(kCommands), std::end(kCommands)};
}

}  // namespace mpt::cli
