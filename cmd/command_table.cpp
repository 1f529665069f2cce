// The table of commands (cmd/commands.hpp).
#include "commands.hpp"

#include <iterator>

namespace mpt::cli {

namespace {

// In the order `mpt --help` lists them. Each row's page is checked by scripts/check-man.sh
// through `mpt --commands`, which prints this table.
constexpr Command kCommands[] = {
    {"root", "mpt-root.1",
     "Print the root hash of key/value files, trie files or state documents, or run test vectors",
     register_root},
    {"build", "mpt-build.1",
     "Create a trie in a trie file, or apply key/value input to an existing one", register_build},
    {"get", "mpt-get.1",
     "Print the values of keys, or an account and its slots (exit 1 when absent)", register_get},
    {"dump", "mpt-dump.1", "Print the pairs of a trie in key order", register_dump},
    {"check", "mpt-check.1",
     "Verify a stored trie: every hash, every row reachable, no row missing", register_check},
    {"stats", "mpt-stats.1", "Node counts and sizes by type and depth", register_stats},
    {"count-allocs", "mpt-count-allocs.1",
     "Heap allocations per operation on a trie reopened from its root", register_count_allocs},
    {"diff", "mpt-diff.1", "Keys added, removed and changed from A to B", register_diff},
    {"get-node", "mpt-get-node.1", "Fetch nodes by path, as a snap server answers GetTrieNodes",
     register_get_node},
    {"proof", "mpt-proof.1",
     "Make a Merkle proof or a range proof from a trie file, or check a proof", register_proof},
    {"verify-range", "mpt-verify-range.1",
     "Check a range of key/value pairs and its edge proofs against a root", register_verify_range},
    {"keccak", "mpt-keccak.1", "Print the Keccak-256 hash of a value or of stdin", register_keccak},
    {"rlp", "mpt-rlp.1", "Decode RLP into a JSON tree of hex strings, or encode one", register_rlp},
    {"tries", "mpt-tries.1", "List the tries of a trie file", register_tries},
    {"drop", "mpt-drop.1", "Remove a trie and its rows from a trie file", register_drop},
    {"copy", "mpt-copy.1", "Copy a trie under a new name in the same file", register_copy},
    {"vacuum", "mpt-vacuum.1", "Compact a trie file, giving freed space back", register_vacuum},
    {"tree", "mpt-tree.1", "Show a stored trie's nodes as an indented tree", register_tree},
};

}  // namespace

std::span<const Command> command_table() noexcept {
    return {std::begin(kCommands), std::end(kCommands)};
}

}  // namespace mpt::cli
