// What every subcommand shares: the exit-code table, the one-line error report, opening a
// trie file, and the signal handling around a mapped input.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/store/sqlite_store.hpp>

#include <fmt/core.h>

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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

// Output. Commands print to stdout with fmt::print, which throws std::system_error when a
// write fails, or with std::fwrite; main() checks stdout then and at the final flush
// (finish_output), so that a failed write is one line "mpt: error: write: <reason>" and exit
// kStorage, never a success. A SIGPIPE still ends the process the UNIX way (exit 141, no line).
// Writes to stderr go through write_stderr: they never throw, and a failed one is ignored (there
// is nowhere left to say so), so the exit code stays the error's.
void write_stderr(std::string_view text) noexcept;
// The progress line (progress.hpp): drawn over the line shown, if any, it stays until the next
// write to stderr, which erases it first, or erase_progress_line.
void draw_progress_line(std::string_view text) noexcept;
void erase_progress_line() noexcept;
template <typename... T>
void eprint(fmt::format_string<T...> format, T&&... args) noexcept {
    try {
        write_stderr(fmt::format(format, std::forward<T>(args)...));
    } catch (...) {
        // Formatting ran out of memory: the line is lost, as a failed write would be.
    }
}
// Opens /dev/null on each of stdin, stdout and stderr that is closed, so that no file the
// process opens lands there: write-only on stdin, so that reading it fails (an error that names
// - says the stream is closed; never an empty input), read-only on the others, so that a write
// to a closed stdout still fails, with EBADF.
void guard_standard_streams() noexcept;
// Flushes stdout. Returns code when every write to stdout succeeded; otherwise reports the
// write error (unless code already reported an error) and returns kStorage.
int finish_output(int code) noexcept;
// While set, the file (with its -wal, -shm and -journal) that an abnormal end of the process
// (an exception escaping a worker thread) removes: a new file that holds nothing yet. An empty
// path clears it. One at a time.
void remove_on_abnormal_exit(const std::string& path) noexcept;
// Removes that file; called by the terminate handler.
void remove_abnormal_exit_file() noexcept;
// Makes a new trie file named output through the store: fill(path) writes it under a
// temporary name beside output, and the file takes the name output only once it is whole and
// closed (link(2), which fails on a name taken), so of several writers of one new name exactly
// one wins and none deletes a file another wrote. Returns true when the file was named, false
// when the name was taken meanwhile (nothing of this call is left; the caller may write into
// that file instead). An error of fill naming the temporary file names output.
Result<bool> make_new_file(const std::string& output,
                           const std::function<Status(const std::string& path)>& fill);
// The line and exit code for a failed write to stdout, errno_value its cause.
int report_write_error(int errno_value) noexcept;

// text with each byte below 0x20 and 0x7f written as \xNN: safe to print on a terminal.
std::string printable(std::string_view text);
// The line report() prints, "mpt: error: <kind>: <where>: <detail>\n", as one line, printable.
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

// A file to read that is not there, or that this process may not read (its permissions), is
// an input error (exit 2) in every command, a trie file as much as a key/value file: an error
// with the file named and the OS's reason, or ok.
Status require_input_file(const std::string& file);

// True when the named regular file (not -, not a pipe) starts as a state document does
// (looks_like_state_document of its first 64 KiB): root, build and diff read it as state without
// --state.
bool file_looks_like_state(const std::string& path);

// Opens an existing trie file in mode (read_only or read_write): require_input_file first,
// so that a missing or unreadable file is an input error in every command, then the store
// (whose refusal to write a file this process may not write is a storage error, as for a
// new file where nothing may be written).
Result<std::unique_ptr<SqliteNodeStore>> open_trie_file(const std::string& file,
                                                        SqliteNodeStore::Mode mode);

// Opens a trie file to read (open_trie_file) at the trie named trie.
Result<OpenTrie> open_trie(const std::string& file, const std::string& trie);

// Reads the trie's root row and checks it against the stored root: a missing row or another
// hash is a storage error (a trie with the empty root needs no row).
Status verify_root_row(OpenTrie& t);

// A root given with a flag (--root, --expect-root): 0x and 64 hex digits, any case; nullopt
// for anything else.
std::optional<Hash256> parse_root_flag(const std::string& text);

// A key given on the command line: 0x hex, or the bytes of the text.
Result<bytes> parse_key(const std::string& text);

// -q/--quiet: no progress and no notes on stderr (errors are still reported). Set once, by
// main() before a command runs.
void set_quiet(bool quiet) noexcept;
bool quiet() noexcept;

// n and the noun, the noun in the plural unless n is 1: "1 problem", "2 problems".
std::string count_of(size_t n, std::string_view noun);

// True when stderr is a terminal and -q was not given, so progress may be shown there.
bool stderr_is_tty();

// The CPUs this process may run on.
unsigned available_cpus();

// The size of the regular file at path; 0 for standard input ("-"), anything else that is
// not a regular file, and a file that cannot be read.
uint64_t regular_file_bytes(const std::string& path);

// While it lives, handler handles each of signals (at most kMaxSignals), but SIGPIPE and SIGHUP
// when the process ignores them; the handlers before it come back when it goes.
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
