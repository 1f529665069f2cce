// The commands of mpt: one table of them (name, one-line summary, register function; the
// manual page is man/mpt-<name>.1), which main.cpp registers, `mpt --help` and `mpt --commands`
// list, and the man-page check and the completion read through `mpt --commands`. Adding a command
// is a row here and its register function. A register_* binds the flags of its subcommand, which
// main made from the row, and once parsing succeeds leaves the function that runs the command in
// runner.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpt {
class NodeStore;
}

namespace mpt::cli {

using Runner = std::function<int()>;

// Whether text is decimal digits only: the count flags' rule, since CLI11 alone would read
// "-1" into an unsigned option as its largest value.
inline bool all_digits(const std::string& text) noexcept {
    return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
}

// Checks a count flag: a whole number, 0 or more.
inline const CLI::Validator kCount(
    [](std::string& text) -> std::string {
        return all_digits(text) ? std::string() : "must be a whole number (0 or more), got " + text;
    },
    "COUNT");

// Checks a count flag that must be 1 or more.
inline const CLI::Validator kPositiveCount(
    [](std::string& text) -> std::string {
        const bool positive = all_digits(text) && text.find_first_not_of('0') != std::string::npos;
        return positive ? std::string() : "must be a whole number (1 or more), got " + text;
    },
    "COUNT");

struct Command {
    const char* name;     // its manual page is man/mpt-<name>.1
    const char* summary;  // one line
    void (*add)(CLI::App* sub, Runner& runner);
};

// Every command, in the order `mpt --help` lists them (cmd/command_table.cpp).
std::span<const Command> command_table() noexcept;

void register_root(CLI::App* sub, Runner& runner);
void register_build(CLI::App* sub, Runner& runner);
void register_get(CLI::App* sub, Runner& runner);
void register_dump(CLI::App* sub, Runner& runner);
void register_check(CLI::App* sub, Runner& runner);
void register_stats(CLI::App* sub, Runner& runner);
void register_count_allocs(CLI::App* sub, Runner& runner);
void register_diff(CLI::App* sub, Runner& runner);
void register_get_node(CLI::App* sub, Runner& runner);

// mpt get-node, apart from opening the trie file: a register_get_node binds these flags
// with add_get_node_options, opens DB as a NodeStore and calls run_get_node_on.
struct GetNodeOptions {
    std::string db;
    std::vector<std::string> path_sets;
    std::string trie = "main";  // the trie of one-element path sets
    std::optional<uint64_t> max_bytes;
    bool json = false;
};
void add_get_node_options(CLI::App& sub, GetNodeOptions& o);
// Answers the path sets from store. Exit 0, or the code of the first error.
int run_get_node_on(NodeStore& store, const GetNodeOptions& o);
void register_proof(CLI::App* sub, Runner& runner);
// mpt proof --verify FILE [--root R] (cmd/proof_verify.cpp): the exit code.
int run_proof_verify(const std::string& file, const std::optional<std::string>& root, bool json);
// mpt proof DB --account ADDR... [--slot SLOT]... (cmd/proof_state.cpp): the exit code.
int run_proof_accounts(const std::string& db, const std::string& trie,
                       const std::vector<std::string>& accounts,
                       const std::vector<std::string>& slots, bool json);
void register_verify_range(CLI::App* sub, Runner& runner);
// mpt root --list FILE / --block FILE (cmd/root_block.cpp): inputs the command's operands,
// other_flag when a flag of the other forms was given too. The exit code.
int run_root_list_or_block(bool list, bool block, const std::vector<std::string>& inputs,
                           bool other_flag, bool json);
void register_keccak(CLI::App* sub, Runner& runner);
void register_rlp(CLI::App* sub, Runner& runner);
// Managing the tries of a file (cmd/tries.cpp, drop.cpp, copy.cpp, vacuum.cpp) and showing
// one (cmd/tree.cpp).
void register_tries(CLI::App* sub, Runner& runner);
void register_drop(CLI::App* sub, Runner& runner);
void register_copy(CLI::App* sub, Runner& runner);
void register_vacuum(CLI::App* sub, Runner& runner);
void register_tree(CLI::App* sub, Runner& runner);
void register_slot(CLI::App* sub, Runner& runner);
void register_completion(CLI::App* sub, Runner& runner);
// mpt update (cmd/update.cpp).
void register_witness(CLI::App* sub, Runner& runner);
void register_update(CLI::App* sub, Runner& runner);

}  // namespace mpt::cli
