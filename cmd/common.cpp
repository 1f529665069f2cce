#include "common.hpp"

#include <mpt/keccak.hpp>
#include <mpt/kv_input.hpp>
#include <mpt/trie_file.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <unistd.h>

namespace mpt::cli {

int exit_code(const Error& e) noexcept { return static_cast<int>(category(e.code)); }

int report(const Error& e, const std::string& where) {
    // <what>: <where>: <detail>, the order of the errors that carry their file in the detail.
    std::string line(errc_name(e.code));
    // A store's errors name their file already.
    if (!where.empty() && !e.detail.starts_with(where + ": ")) line += ": " + where;
    if (!e.detail.empty()) line += ": " + e.detail;
    // One line, whatever the detail held.
    for (char& c : line) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    fmt::print(stderr, "mpt: error: {}\n", line);
    return exit_code(e);
}

int report_usage(const std::string& message) {
    fmt::print(stderr, "mpt: error: usage: {}\n", message);
    return kInput;
}

Result<OpenTrie> open_trie(const std::string& file, const std::string& trie) {
    OpenTrie t;
    MPT_TRY(t.store, SqliteNodeStore::open(file, SqliteNodeStore::Mode::read_only));
    MPT_CHECK(t.store->begin_read());
    auto info = require_trie(*t.store, trie);
    if (!info && info.error().code == Errc::no_such_trie) {
        return Error{info.error().code, file + ": " + info.error().detail};
    }
    if (!info) return info.error();  // the store's errors name the file already
    t.info = std::move(*info);
    t.reader = std::make_unique<TrieReader>(*t.store, t.info);
    return t;
}

bytes OpenTrie::trie_key(bytes_view key) const {
    if (!info.secure) return bytes(key.begin(), key.end());
    const Hash256 h = keccak256(key);
    return bytes(h.begin(), h.end());
}

Result<bytes> parse_key(const std::string& text) {
    auto k = decode_kv_string(text);
    if (!k) return Error{k.error().code, "key " + text + ": " + k.error().detail};
    return k;
}

bool stderr_is_tty() { return ::isatty(STDERR_FILENO) == 1; }

namespace {

// The line the handler prints, made when the guard is: a signal handler may only write.
char g_sigbus_line[1024];
size_t g_sigbus_length = 0;

void on_sigbus(int) {
    const ssize_t ignored = write(STDERR_FILENO, g_sigbus_line, g_sigbus_length);
    (void)ignored;
    _exit(kInput);
}

}  // namespace

SigbusGuard::SigbusGuard(const std::string& file) {
    std::string line = "mpt: error: " + std::string(errc_name(Errc::bad_input)) + ": " + file +
                       ": the file shrank while it was being read";
    for (char& c : line) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    line.resize(std::min(line.size(), sizeof g_sigbus_line - 1));
    line += '\n';
    std::memcpy(g_sigbus_line, line.data(), line.size());
    g_sigbus_length = line.size();
    struct sigaction sa {};
    sa.sa_handler = on_sigbus;
    sigemptyset(&sa.sa_mask);
    installed_ = sigaction(SIGBUS, &sa, &previous_) == 0;
}

SigbusGuard::~SigbusGuard() {
    if (installed_) sigaction(SIGBUS, &previous_, nullptr);
}

}  // namespace mpt::cli
