// mpt count-allocs: heap allocations per trie operation on a trie reopened from its root.
#include "alloc_counter.hpp"
#include "commands.hpp"
#include "common.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/store/sqlite_memory.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <fmt/core.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>

namespace mpt::cli {
namespace {

// The largest trie measured: its temporary file takes about 135 bytes per leaf.
constexpr size_t kMaxLeaves = 10'000'000;

// The temporary trie file and its log, named for the signal handler: a measurement stopped
// by Ctrl-C, kill or a closed terminal removes them as one that ends does.
char g_temp_names[3][64];

void remove_temp_files() noexcept {
    for (const char* name : g_temp_names) {
        if (name[0] != '\0') ::unlink(name);
    }
}

void remove_temp_files_and_stop(int sig) {
    remove_temp_files();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// While it lives, the files of the temporary trie file `path` are removed when the process
// ends, by return or by SIGINT, SIGTERM or SIGHUP.
class TempTrieFile {
public:
    explicit TempTrieFile(const std::string& path) {
        const char* suffixes[] = {"", "-wal", "-shm"};
        for (size_t i = 0; i < 3; ++i) {
            std::snprintf(g_temp_names[i], sizeof g_temp_names[i], "%s%s", path.c_str(),
                          suffixes[i]);
        }
    }
    ~TempTrieFile() {
        remove_temp_files();
        std::memset(g_temp_names, 0, sizeof g_temp_names);
    }
    TempTrieFile(const TempTrieFile&) = delete;
    TempTrieFile& operator=(const TempTrieFile&) = delete;

private:
    // Ctrl-C, kill and a closed terminal remove the files as a return does.
    SignalHandlers handlers_{{SIGINT, SIGTERM, SIGHUP}, remove_temp_files_and_stop};
};

struct CountOptions {
    std::vector<std::string> leaves{"1000,50000"};  // each checked by kLeavesList
    size_t samples = 64;
    bool json = false;
};

// The deterministic key set: key_i = keccak256(uint64 big-endian i), value = keccak256(key).
Hash256 key_of(uint64_t i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (56 - 8 * b));
    return keccak256(bytes_view(be, 8));
}

struct Row {
    size_t leaves;
    std::string op;
    double allocs, bytes, sqlite_allocs, sqlite_bytes;
};

class Meter {
public:
    void start() {
        heap_ = heap_allocations();
        sqlite_ = sqlite_allocations();
    }
    void stop() {
        const AllocCount h = heap_allocations();
        const SqliteAllocCount s = sqlite_allocations();
        total_.allocs += h.allocs - heap_.allocs;
        total_.bytes += h.bytes - heap_.bytes;
        sqlite_total_.allocs += s.allocs - sqlite_.allocs;
        sqlite_total_.bytes += s.bytes - sqlite_.bytes;
    }
    Row row(size_t leaves, const char* op, size_t n) const {
        const double d = static_cast<double>(n);
        return {leaves,
                op,
                total_.allocs / d,
                total_.bytes / d,
                sqlite_total_.allocs / d,
                sqlite_total_.bytes / d};
    }

private:
    AllocCount heap_, total_, sqlite_total_;
    SqliteAllocCount sqlite_;
};

// Builds the n-leaf trie into a fresh file.
Status build_file(SqliteNodeStore& store, size_t n) {
    std::vector<Hash256> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = key_of(i);
    std::sort(keys.begin(), keys.end());
    MPT_RETURN_IF_ERROR(store.begin_write());
    MPT_TRY(TrieId id, store.create_trie("main", TrieKind::plain));
    struct Sink : NodeSink {
        SqliteNodeStore& s;
        TrieId id;
        Status status;
        Sink(SqliteNodeStore& st, TrieId i) : s(st), id(i) {}
        void put(bytes_view path, bytes_view rlp) override {
            if (status.ok()) status = s.put(id, path, rlp);
        }
    } sink(store, id);
    StackTrie st(&sink);
    for (const Hash256& k : keys) MPT_RETURN_IF_ERROR(st.add(k, keccak256(k)));
    const Hash256 root = st.finish();
    MPT_RETURN_IF_ERROR(sink.status);
    MPT_RETURN_IF_ERROR(store.set_root(id, root));
    return store.commit_write();
}

Status measure(size_t n, size_t samples, std::vector<Row>& rows) {
    const char* dir = std::getenv("TMPDIR");
    std::string path = (dir != nullptr && *dir != '\0') ? dir : "/tmp";
    path += "/mpt-count-allocs-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0)
        return {Errc::storage_open,
                "cannot create a temporary file in " + path.substr(0, path.rfind('/'))};
    ::close(fd);
    const TempTrieFile cleanup(path);
    MPT_TRY(auto store, SqliteNodeStore::open(path, SqliteNodeStore::Mode::create));
    MPT_RETURN_IF_ERROR(build_file(*store, n));
    MPT_RETURN_IF_ERROR(store->begin_read());
    MPT_TRY(std::optional<TrieInfo> info, store->find_trie("main"));
    if (!info) return {Errc::internal, "the trie just built is missing"};
    TrieReader reader(*store, *info);
    const Trie trie = Trie::open(&reader, info->root);

    Meter hit, miss, insert, remove, commit, proof;
    for (size_t s = 0; s < samples; ++s) {
        const Hash256 present = key_of((s * 7919) % n);
        hit.start();
        auto v = trie.get(present);
        hit.stop();
        if (!v) return v.error();
        // A "hit" that silently missed would measure a truncated descent.
        if (!*v || !bytes_equal(**v, keccak256(present))) {
            return {Errc::internal, "sanity check: a present key was not found"};
        }
        const Hash256 absent = key_of(n + s);
        miss.start();
        auto m = trie.get(absent);
        miss.stop();
        if (!m) return m.error();
        if (*m) return {Errc::internal, "sanity check: an absent key was found"};

        proof.start();
        auto p = prove(reader, info->root, present);
        proof.stop();
        if (!p) return p.error();
        if (p->empty()) return {Errc::internal, "sanity check: an empty proof"};

        // Writes on a trie freshly reopened from the root: every node on the path is loaded.
        Trie w = Trie::open(&reader, info->root);
        insert.start();
        MPT_RETURN_IF_ERROR(w.put(absent, present));
        insert.stop();
        Trie r = Trie::open(&reader, info->root);
        remove.start();
        MPT_RETURN_IF_ERROR(r.remove(present));
        remove.stop();
        Trie c = Trie::open(&reader, info->root);
        for (uint64_t d = 0; d < 64; ++d) {
            const Hash256 k = key_of(n + samples + s * 64 + d);
            MPT_RETURN_IF_ERROR(c.put(k, k));
        }
        commit.start();
        MPT_TRY(CommitBatch b, c.commit());
        commit.stop();
        if (b.root == info->root) return {Errc::internal, "sanity check: commit changed nothing"};
    }
    store->end_read();
    rows.push_back(hit.row(n, "get_hit", samples));
    rows.push_back(miss.row(n, "get_miss", samples));
    rows.push_back(insert.row(n, "insert", samples));
    rows.push_back(remove.row(n, "remove", samples));
    rows.push_back(commit.row(n, "commit", samples));
    rows.push_back(proof.row(n, "proof", samples));
    return {};
}

// Reads a --leaves list, whole numbers of 1 to kMaxLeaves separated by commas, into sizes;
// returns why it is not one, or nothing. An empty item (which a delimited CLI11 option would
// drop without a word) is refused. All of it is checked before anything is measured.
std::string read_leaves(std::string_view text, std::vector<size_t>& sizes) {
    for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        std::string item(text.substr(at, comma - at));
        if (item.empty()) return "has an empty item: " + std::string(text);
        if (std::string why = kPositiveCount(item); !why.empty()) return why;
        size_t n = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
        if (ec != std::errc() || n > kMaxLeaves) {
            return "is at most " + std::to_string(kMaxLeaves) + ", got " + item;
        }
        sizes.push_back(n);
        at = comma + 1;
    }
    return {};
}

const CLI::Validator kLeavesList(
    [](std::string& text) {
        std::vector<size_t> sizes;
        return read_leaves(text, sizes);
    },
    "");

int run_count_allocs(const CountOptions& o) {
    if (!count_sqlite_allocations()) {
        return report(Error{Errc::internal, "cannot hook SQLite's allocator"});
    }
    count_heap_allocations();
    std::vector<Row> rows;
    std::vector<size_t> sizes;
    for (const std::string& list : o.leaves) read_leaves(list, sizes);  // kLeavesList passed
    for (const size_t n : sizes) {
        if (auto s = measure(n, o.samples, rows); !s) return report(s.error());
    }
    if (o.json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const Row& r : rows) {
            j.push_back({{"leaves", r.leaves},
                         {"op", r.op},
                         {"allocs", r.allocs},
                         {"bytes", r.bytes},
                         {"sqliteAllocs", r.sqlite_allocs},
                         {"sqliteBytes", r.sqlite_bytes}});
        }
        fmt::print("{}\n", j.dump());
        return kOk;
    }
    fmt::print("{:>9} {:<9} {:>9} {:>10} {:>14} {:>13}\n", "leaves", "op", "allocs", "bytes",
               "sqlite_allocs", "sqlite_bytes");
    for (const Row& r : rows) {
        fmt::print("{:>9} {:<9} {:>9.2f} {:>10.1f} {:>14.2f} {:>13.1f}\n", r.leaves, r.op, r.allocs,
                   r.bytes, r.sqlite_allocs, r.sqlite_bytes);
    }
    return kOk;
}

}  // namespace

void register_count_allocs(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<CountOptions>();
    sub->add_option("--leaves", o->leaves,
                    "Trie sizes to measure, separated by commas or given as several arguments")
        ->type_name("N,...")
        ->check(kLeavesList)
        ->capture_default_str();
    sub->add_option("--samples", o->samples, "Operations per measurement")
        ->check(CLI::Range(size_t{1}, size_t{1000000}))
        ->capture_default_str();
    sub->add_flag("--json", o->json,
                  "Print a flat array of {leaves, op, allocs, bytes, sqlite_allocs, sqlite_bytes}");
    sub->footer(
        "Keys are keccak256(uint64 big-endian i), values keccak256(key). Each trie is built into\n"
        "a temporary trie file and reopened from its root, so every operation reads nodes by\n"
        "path. Writes are measured on a trie freshly reopened for each sample. Heap counts come\n"
        "from the replaced global operator new; SQLite's own allocations are counted apart.");
    sub->final_callback([o, &runner] { runner = [o] { return run_count_allocs(*o); }; });
}

}  // namespace mpt::cli
