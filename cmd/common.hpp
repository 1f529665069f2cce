// What every subcommand shares: the exit-code table and the one-line error report.
#pragma once

#include <mpt/bytes.hpp>

#include <string>

namespace mpt::cli {

// The exit codes, the same for every command (man/mpt.1).
enum Exit : int {
    kOk = 0,        // success; valid; identical; every vector passed
    kNegative = 1,  // invalid proof or range, differences, a failed vector, key absent
    kInput = 2,     // usage or input error
    kStorage = 3,   // storage error
    kInternal = 4,  // internal error
};

int exit_code(const Error& e) noexcept;

// Prints "mpt: error: <kind>: <where>: <detail>" on stderr and returns the exit code.
int report(const Error& e, const std::string& where = {});
// Prints "mpt: error: usage: <message>" on stderr and returns kInput.
int report_usage(const std::string& message);

}  // namespace mpt::cli

#include <mpt/sqlite_store.hpp>

#include <memory>

#include <signal.h>

namespace mpt::cli {

// A trie file opened for reading one trie, inside a read transaction (a consistent
// snapshot) that ends when the object goes.
struct OpenTrie {
    std::unique_ptr<SqliteNodeStore> store;
    TrieInfo info;
    std::unique_ptr<TrieReader> reader;

    OpenTrie() = default;
    OpenTrie(OpenTrie&&) = default;
    ~OpenTrie() {
        if (store) store->end_read();
    }

    // The key as the trie stores it: keccak256(key) in a secure trie.
    bytes trie_key(bytes_view key) const;
};

Result<OpenTrie> open_trie(const std::string& file, const std::string& trie);

// A key given on the command line: 0x hex, or the bytes of the text.
Result<bytes> parse_key(const std::string& text);

// True when stderr is a terminal, so progress may be shown there.
bool stderr_is_tty();

// While it lives, a SIGBUS (the mapped input `file` truncated by another process while it is
// read) prints one line naming the file and exits with kInput instead of killing the process.
// Restores the previous handler when it goes. One guard at a time.
class SigbusGuard {
public:
    explicit SigbusGuard(const std::string& file);
    ~SigbusGuard();
    SigbusGuard(const SigbusGuard&) = delete;
    SigbusGuard& operator=(const SigbusGuard&) = delete;

private:
    struct sigaction previous_ {};
    bool installed_ = false;
};

}  // namespace mpt::cli
