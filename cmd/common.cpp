#include "common.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/state/document.hpp>
#include <mpt/store/whole_file.hpp>
#include <mpt/trie/node_source.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#if defined(__linux__)
#include <sched.h>
#endif

namespace mpt::cli {
namespace {
bool g_stdin_closed = false;  // set once, before any thread starts
}  // namespace

int exit_code(const Error& e) noexcept { return static_cast<int>(category(e.code)); }

std::string error_line(const Error& e, const std::string& where) {
    // <kind>: <file>: <trie>, path <path>: <detail>, each part when known. The error's own
    // file comes first; the caller's is for errors that do not name one.
    std::string line = "mpt: error: " + std::string(errc_name(e.code));
    const std::string& file = e.file.empty() ? where : e.file;
    if (!file.empty()) line += ": " + file;
    if (g_stdin_closed && file == "-") {
        line += ": standard input is closed";
    } else if (const std::string c = e.context(); !c.empty()) {
        line += ": " + c;
    }
    return printable(line) + '\n';
}

std::string printable(std::string_view text) {
    // One line that moves no cursor and sets no colour, whatever a document, a name or a
    // message held: each control byte and DEL as \xNN.
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x20 && b != 0x7f) {
            out += c;
            continue;
        }
        constexpr char kDigits[] = "0123456789abcdef";
        out += {'\\', 'x', kDigits[b >> 4], kDigits[b & 15]};
    }
    return out;
}

int report(const Error& e, const std::string& where) {
    try {
        write_stderr(error_line(e, where));
    } catch (...) {
        write_stderr("mpt: error: out of memory\n");
    }
    return exit_code(e);
}

int report_usage(const std::string& message) {
    eprint("mpt: error: usage: {}\n", printable(message));
    return kInput;
}

namespace {

// Unbuffered, one write(2) per line where it fits, so that lines of concurrent processes do
// not interleave; EINTR is retried, any other failure ends the attempt.
void write_all_stderr(std::string_view text) noexcept {
    while (!text.empty()) {
        const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text.remove_prefix(static_cast<size_t>(n));
    }
}

// stderr has one owner: the progress line and every other write take turns under this lock.
std::mutex g_stderr_mutex;
bool g_progress_shown = false;  // a progress line is on the terminal, the cursor at its end

constexpr std::string_view kEraseLine = "\r\033[K";

}  // namespace

void write_stderr(std::string_view text) noexcept {
    const std::lock_guard lock(g_stderr_mutex);
    if (g_progress_shown) {
        write_all_stderr(kEraseLine);
        g_progress_shown = false;
    }
    write_all_stderr(text);
}

void draw_progress_line(std::string_view text) noexcept {
    const std::lock_guard lock(g_stderr_mutex);
    write_all_stderr("\r");
    write_all_stderr(text);
    write_all_stderr("\033[K");
    g_progress_shown = true;
}

void erase_progress_line() noexcept {
    const std::lock_guard lock(g_stderr_mutex);
    if (!g_progress_shown) return;
    write_all_stderr(kEraseLine);
    g_progress_shown = false;
}

namespace {
char g_remove_path[4096];  // a signal-safe copy: the terminate handler only unlinks
}  // namespace

void remove_on_abnormal_exit(const std::string& path) noexcept {
    const size_t n = std::min(path.size(), sizeof g_remove_path - 16);
    std::memcpy(g_remove_path, path.data(), n);
    g_remove_path[n] = 0;
}

void remove_abnormal_exit_file() noexcept {
    if (g_remove_path[0] == 0) return;
    char name[sizeof g_remove_path];
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::strcpy(name, g_remove_path);
        std::strcat(name, suffix);
        ::unlink(name);
    }
}

void guard_standard_streams() noexcept {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // Opened the other way round, so that reading a closed stdin fails (EBADF) as writing
        // a closed stdout does: never an empty input.
        if (fd == STDIN_FILENO) g_stdin_closed = true;
        const int null = ::open("/dev/null", fd == STDIN_FILENO ? O_WRONLY : O_RDONLY);
        if (null >= 0 && null != fd) {
            ::dup2(null, fd);
            ::close(null);
        }
    }
}

Result<bool> make_new_file(const std::string& output,
                           const std::function<Status(const std::string& path)>& fill) {
    if (output.empty()) return Error{Errc::storage_open, "the trie file name is empty"};
    const std::filesystem::path out(output);
    std::filesystem::path dir = out.parent_path();
    if (dir.empty()) dir = ".";
    std::string name = (dir / ("." + out.filename().string() + ".new-XXXXXX")).string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
        const int err = errno;
        const bool refused = err == EROFS || err == EACCES || err == EPERM;
        return file_error(refused ? Errc::storage_readonly : Errc::storage_open, output,
                          std::strerror(err));
    }
    // The mode SQLite and the whole-file way give a new file, not mkstemp's 0600.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0644 & ~mask);
    ::close(fd);
    const auto remove_new = [&] {
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
            ::unlink((name + suffix).c_str());
        }
    };
    remove_on_abnormal_exit(name);
    Status filled = fill(name);
    remove_on_abnormal_exit({});
    if (!filled) {
        remove_new();
        Error e = std::move(filled).error();
        if (e.file == name || e.file.empty()) e.file = output;
        return e;
    }
    // The store is closed: its log is folded into the file and gone. One that holds
    // something would be left behind by the new name.
    struct stat st {};
    if (::lstat((name + "-wal").c_str(), &st) == 0 && st.st_size > 0) {
        remove_new();
        return file_error(Errc::internal, output, "the new file's log was not folded into it");
    }
    // A log or a rollback journal left beside the name by an earlier file of it would be
    // played into this one: SQLite's own rule for a new, empty file is that they go.
    if (::lstat(output.c_str(), &st) != 0 && errno == ENOENT) {
        for (const char* side : {"-wal", "-journal"}) ::unlink((output + side).c_str());
    }
    if (::link(name.c_str(), output.c_str()) != 0) {
        const int err = errno;
        remove_new();
        if (err == EEXIST) return false;
        return file_error(Errc::storage_io, output, std::strerror(err));
    }
    ::unlink(name.c_str());
    sync_folder(dir);
    return true;
}

int report_write_error(int errno_value) noexcept {
    const char* reason = errno_value != 0 ? std::strerror(errno_value) : "the output stream failed";
    eprint("mpt: error: write: {}\n", reason);
    return kStorage;
}

int finish_output(int code) noexcept {
    errno = 0;
    const bool flushed = std::fflush(stdout) == 0;
    const int err = errno;
    if (flushed && !std::ferror(stdout)) return code;
    // A command that failed has said why already; its write error is a consequence.
    if (code >= kInput) return code;
    return report_write_error(flushed ? 0 : err);
}

namespace {

// Ok when file opens with flags; else the input error naming the OS's reason.
Status require_open(const std::string& file, int flags) {
    const int fd = ::open(file.c_str(), flags | O_CLOEXEC);
    if (fd >= 0) {
        ::close(fd);
        return {};
    }
    return file_error(Errc::bad_input, file, std::strerror(errno));
}

}  // namespace

Status require_input_file(const std::string& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0 && errno == ENOENT) return input_error(file, ENOENT);
    // A file there but unreadable (its permissions) is the user's to fix, not damage: the
    // OS's reason, never "not an SQLite database". A folder is left to the reader's message.
    if (S_ISDIR(st.st_mode)) return {};
    return require_open(file, O_RDONLY);
}

bool file_looks_like_state(const std::string& path) {
    // Only a regular file can be looked at and then read again (not stdin, not a pipe).
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    // Enough for a genesis's config, a dump's root, an alloc's first account.
    std::string head(64 * 1024, '\0');
    head.resize(std::fread(head.data(), 1, head.size(), f));
    std::fclose(f);
    return looks_like_state_document(head);
}

Result<std::unique_ptr<SqliteNodeStore>> open_trie_file(const std::string& file,
                                                        SqliteNodeStore::Mode mode) {
    // SQLite reads a file by its pages, not as a stream.
    if (file == "-")
        return file_error(Errc::bad_input, file, "a trie file is a file; - (stdin) cannot be one");
    MPT_RETURN_IF_ERROR(require_input_file(file));
    return SqliteNodeStore::open(file, mode);
}

Result<OpenTrie> open_trie(const std::string& file, const std::string& trie) {
    OpenTrie t;
    MPT_TRY(t.store, open_trie_file(file, SqliteNodeStore::Mode::read_only));
    MPT_RETURN_IF_ERROR(t.store->begin_read());
    auto info = require_trie(*t.store, trie);
    if (!info) {
        Error e = std::move(info).error();
        // The store's own errors name the file already.
        if (e.code == Errc::no_such_trie || e.code == Errc::bad_input) e.file = file;
        return e;
    }
    t.info = std::move(*info);
    t.reader = std::make_unique<TrieReader>(*t.store, t.info);
    return t;
}

Status verify_root_row(OpenTrie& t) {
    if (t.info.root == kEmptyRoot) return {};
    // The one check of a stored node against the hash that names it (load_verified).
    auto root = load_verified(*t.reader, {}, t.info.root);
    if (root) return {};
    Error e = std::move(root).error();
    if (e.code == Errc::storage_hash_mismatch) {
        e.detail = "the root row's hash is not the stored root";
    }
    e.file = t.store->path();
    return e;
}

bytes OpenTrie::trie_key(bytes_view key, bool key_hashed) const {
    if (!info.hashed_keys() || key_hashed) return bytes(key.begin(), key.end());
    const Hash256 h = keccak256(key);
    return bytes(h.begin(), h.end());
}

std::optional<Hash256> parse_root_flag(const std::string& text) {
    if (!text.starts_with("0x")) return std::nullopt;
    auto h = hash_from_hex(text);
    if (!h) return std::nullopt;
    return *h;
}

Result<bytes> parse_key(const std::string& text) {
    auto k = decode_kv_string(text);
    if (!k) return Error{k.error().code, "key " + text + ": " + k.error().detail};
    return k;
}

std::string count_of(size_t n, std::string_view noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

namespace {
bool g_quiet = false;
}  // namespace

void set_quiet(bool quiet) noexcept { g_quiet = quiet; }
bool quiet() noexcept { return g_quiet; }

bool stderr_is_tty() { return !g_quiet && ::isatty(STDERR_FILENO) == 1; }

namespace {

// The line the handler prints, made when the guard is: a signal handler may only write.
char g_sigbus_line[1024];
size_t g_sigbus_length = 0;

void on_sigbus(int) {
    const ssize_t ignored = write(STDERR_FILENO, g_sigbus_line, g_sigbus_length);
    (void)ignored;
    _exit(kInput);
}

// Makes the line on_sigbus prints for the mapped input file, and returns on_sigbus.
SignalHandlers::Handler on_sigbus_for(const std::string& file) {
    std::string line =
        error_line(Error{Errc::bad_input, "the file shrank while it was being read"}, file);
    if (line.size() > sizeof g_sigbus_line) {
        line.resize(sizeof g_sigbus_line - 1);
        line += '\n';
    }
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result): written with its length, no NUL
    std::memcpy(g_sigbus_line, line.data(), line.size());
    g_sigbus_length = line.size();
    return on_sigbus;
}

}  // namespace

SignalHandlers::SignalHandlers(std::initializer_list<int> signals, Handler handler) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (const int sig : signals) {
        if (count_ == kMaxSignals) break;
        // SIGPIPE and SIGHUP that the parent ignores stay ignored: a write to a closed pipe
        // then fails with EPIPE and is reported as a write error (exit 3), and nohup's command
        // goes on. SIGINT is handled even so (a shell's background job ignores it; kill -INT
        // still stops the command).
        struct sigaction now {};
        if ((sig == SIGPIPE || sig == SIGHUP) && sigaction(sig, nullptr, &now) == 0 &&
            now.sa_handler == SIG_IGN) {
            continue;
        }
        if (sigaction(sig, &sa, &saved_[count_].previous) == 0) saved_[count_++].signal = sig;
    }
}

SignalHandlers::~SignalHandlers() {
    for (size_t i = 0; i < count_; ++i) sigaction(saved_[i].signal, &saved_[i].previous, nullptr);
}

SigbusGuard::SigbusGuard(const std::string& file) : handlers_({SIGBUS}, on_sigbus_for(file)) {}

uint64_t regular_file_bytes(const std::string& path) {
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return static_cast<uint64_t>(st.st_size);
}

unsigned available_cpus() {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
#endif
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace mpt::cli
