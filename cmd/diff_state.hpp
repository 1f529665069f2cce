// mpt diff on Ethereum states: the part of mpt diff that compares two states (state
// documents or state files, in any mix) account by account and slot by slot.
#pragma once

#include <cstdint>
#include <string>

namespace mpt::cli {

struct StateDiffOptions {
    std::string a, b;
    bool json = false;
    bool stats = false;
    bool verify = false;  // both states read whole and checked first (verify_state)
};

// True when path is a trie file whose trie main is an account trie (kind state).
bool is_state_file(const std::string& path);

// --stats: the nodes read on each side, one line on stderr (none under -q).
void print_nodes_read(uint64_t a, uint64_t b);

// Prints the difference of two states. Exit 0 equal, 1 different, 2 bad input, 3 storage.
int run_state_diff(const StateDiffOptions& o);

}  // namespace mpt::cli
