// What every subcommand shares: the exit-code table, the one-line error report, opening a
// trie file, and the signal handling around a mapped input.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/store/sqlite_store.hpp>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>

#include <signal.h>

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

// The line report() prints, "mpt: error: <kind>: <where>: <detail>\n", as one line.
std::string error_line(const Error& e, const std::string& where = {});
// Prints error_line(e, where) on stderr and returns the exit code.
int report(const Error& e, const std::string& where = {});
// Prints "mpt: error: usage: <message>" on stderr and returns kInput.
int report_usage(const std::string& message);

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

    // The key as the trie stores it: keccak256(key) in a trie with hashed keys (secure or
    // state), unless key_hashed says the key given is the trie key already (--key-hashed).
    bytes trie_key(bytes_view key, bool key_hashed = false) const;
};

Result<OpenTrie> open_trie(const std::string& file, const std::string& trie);

// A key given on the command line: 0x hex, or the bytes of the text.
Result<bytes> parse_key(const std::string& text);

// True when stderr is a terminal, so progress may be shown there.
bool stderr_is_tty();

// The CPUs this process may run on.
unsigned available_cpus();

// While it lives, handler handles each of signals (at most kMaxSignals); the handlers
// before it come back when it goes.
class SignalHandlers {
public:
    using Handler = void (*)(int);
    SignalHandlers(std::initializer_list<int> signals, Handler handler);
    ~SignalHandlers();
    SignalHandlers(const SignalHandlers&) = delete;
    SignalHandlers& operator=(const SignalHandlers&) = delete;

private:
    static constexpr size_t kMaxSignals = 4;
    struct Saved {
        int signal = 0;
        struct sigaction previous {};
    };
    Saved saved_[kMaxSignals];
    size_t count_ = 0;
};

// While it lives, a SIGBUS (the mapped input `file` truncated by another process while it is
// read) prints one line naming the file and exits with kInput instead of killing the process.
// One guard at a time.
class SigbusGuard {
public:
    explicit SigbusGuard(const std::string& file);

private:
    SignalHandlers handlers_;
};

}  // namespace mpt::cli
