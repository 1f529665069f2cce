// mpt_sqlite_floor N JSON_OUT DB_OUT [ROWS_PER_STATEMENT]: the dataset of the build benchmark,
// and the floor a trie file build cannot beat.
//
// The dataset: N pairs, key_i = keccak256(i as 8 bytes big-endian), value_i = keccak256(key_i).
// It is written to JSON_OUT as one JSON object (the input of `mpt build`).
//
// The floor: the rows `mpt build` writes for that dataset (the streaming builder's nodes, in
// the order it emits them), computed first and held in memory, then only inserted into a new
// trie file in one transaction. The file is created by SqliteNodeStore, so schema and header
// are the real ones; the connection pragmas and the insert statements repeat those of
// lib/mpt/sqlite_store.cpp (SqliteNodeStore::put_rows: kPutRowsBatch rows per statement, the
// rest one by one). ROWS_PER_STATEMENT 1 inserts every row by its own statement instead, the
// floor of a writer that does not batch. What is timed is the transaction (begin to commit) and the
// close (which checkpoints the write-ahead log into the file).
//
// Prints one JSON object: rows, row_bytes (path + rlp), root, insert_seconds, close_seconds
// (wall clock) and insert_cpu_seconds, close_cpu_seconds (user + system), file_bytes.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mpt/core/hex.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <string>
#include <vector>

namespace {

using mpt::bytes;
using mpt::bytes_view;
using mpt::Hash256;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "mpt_sqlite_floor: %s\n", what.c_str());
    std::exit(2);
}

// All rows in one arena: (path offset, path length, rlp length), rlp right after the path.
class RowCollector : public mpt::NodeSink {
public:
    void put(bytes_view path, bytes_view rlp) override {
        rows_.push_back({arena_.size(), path.size(), rlp.size()});
        arena_.insert(arena_.end(), path.begin(), path.end());
        arena_.insert(arena_.end(), rlp.begin(), rlp.end());
    }
    size_t size() const noexcept { return rows_.size(); }
    bytes_view path(size_t i) const noexcept {
        return {arena_.data() + rows_[i].at, rows_[i].path_len};
    }
    bytes_view rlp(size_t i) const noexcept {
        return {arena_.data() + rows_[i].at + rows_[i].path_len, rows_[i].rlp_len};
    }
    size_t bytes_total() const noexcept { return arena_.size(); }

private:
    struct Row {
        size_t at, path_len, rlp_len;
    };
    std::vector<Row> rows_;
    bytes arena_;
};

void check(sqlite3* db, int rc, const char* what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fail(std::string(what) + ": " + sqlite3_errmsg(db));
    }
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// CPU time of this process (user + system), which a busy machine disturbs less than the
// wall clock.
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: mpt_sqlite_floor N JSON_OUT DB_OUT [ROWS_PER_STATEMENT]\n");
        return 2;
    }
    const bool batched = argc == 4 || std::string(argv[4]) != "1";
    const size_t n = std::strtoull(argv[1], nullptr, 10);
    const std::string json_out = argv[2];
    const std::string db_out = argv[3];

    struct Pair {
        Hash256 key, value;
    };
    std::vector<Pair> pairs(n);
    for (size_t i = 0; i < n; ++i) {
        uint8_t be[8];
        for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(uint64_t{i} >> (56 - 8 * b));
        pairs[i].key = mpt::keccak256(bytes_view(be, 8));
        pairs[i].value = mpt::keccak256(pairs[i].key);
    }

    {
        std::FILE* f = std::fopen(json_out.c_str(), "wb");
        if (f == nullptr) fail(json_out + ": cannot write");
        std::string line;
        std::fputc('{', f);
        for (size_t i = 0; i < n; ++i) {
            line = i ? ",\n\"" : "\n\"";
            line += mpt::to_hex(pairs[i].key);
            line += "\":\"";
            line += mpt::to_hex(pairs[i].value);
            line += '"';
            std::fwrite(line.data(), 1, line.size(), f);
        }
        std::fputs("\n}\n", f);
        if (std::fclose(f) != 0) fail(json_out + ": write failed");
    }

    std::sort(pairs.begin(), pairs.end(),
              [](const Pair& a, const Pair& b) { return mpt::bytes_less(a.key, b.key); });
    RowCollector rows;
    mpt::StackTrie st(&rows);
    for (const Pair& p : pairs) {
        if (auto s = st.add(p.key, p.value); !s) fail("stack trie: " + s.error().message());
    }
    const Hash256 root = st.finish();

    std::filesystem::remove(db_out);
    {
        auto store = mpt::SqliteNodeStore::open(db_out, mpt::SqliteNodeStore::Mode::create);
        if (!store) fail(store.error().message());
    }

    sqlite3* db = nullptr;
    // The flags of SqliteNodeStore::open: no mutexes (one thread uses the connection).
    check(
        db,
        sqlite3_open_v2(db_out.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr),
        "open");
    check(db, sqlite3_exec(db, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr), "pragma");
    check(db, sqlite3_exec(db, "PRAGMA cache_size=-65536", nullptr, nullptr, nullptr), "pragma");
    sqlite3_stmt* ins = nullptr;
    check(db,
          sqlite3_prepare_v3(db, "INSERT OR REPLACE INTO nodes(trie, path, rlp) VALUES(?1, ?2, ?3)",
                             -1, SQLITE_PREPARE_PERSISTENT, &ins, nullptr),
          "prepare");
    constexpr size_t kBatch = mpt::SqliteNodeStore::kPutRowsBatch;
    std::string batch_sql = "INSERT OR REPLACE INTO nodes(trie, path, rlp) VALUES";
    for (size_t i = 0; i < kBatch; ++i) batch_sql += i == 0 ? "(?1, ?, ?)" : ", (?1, ?, ?)";
    sqlite3_stmt* batch = nullptr;
    check(db,
          sqlite3_prepare_v3(db, batch_sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &batch, nullptr),
          "prepare");

    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    check(db, sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), "begin");
    // The tries row as the store writes it; its root is set after the rows, as the store's
    // is. The checksum is not computed: nothing reads the floor's file as a trie file.
    check(db,
          sqlite3_exec(db,
                       "INSERT INTO tries(id, name, root, kind, checksum) "
                       "VALUES(1, 'main', zeroblob(32), 'plain', zeroblob(32))",
                       nullptr, nullptr, nullptr),
          "insert trie");
    static const uint8_t kEmpty = 0;
    size_t first = 0;
    for (; batched && rows.size() - first >= kBatch; first += kBatch) {
        sqlite3_reset(batch);
        sqlite3_bind_int64(batch, 1, 1);
        for (size_t j = 0; j < kBatch; ++j) {
            const bytes_view path = rows.path(first + j);
            const bytes_view rlp = rows.rlp(first + j);
            const int at = 2 + 2 * static_cast<int>(j);
            sqlite3_bind_blob(batch, at, path.empty() ? &kEmpty : path.data(),
                              static_cast<int>(path.size()), SQLITE_STATIC);
            sqlite3_bind_blob(batch, at + 1, rlp.data(), static_cast<int>(rlp.size()),
                              SQLITE_STATIC);
        }
        check(db, sqlite3_step(batch), "insert");
    }
    sqlite3_reset(batch);
    for (size_t i = first; i < rows.size(); ++i) {
        const bytes_view path = rows.path(i);
        const bytes_view rlp = rows.rlp(i);
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, 1);
        sqlite3_bind_blob(ins, 2, path.empty() ? &kEmpty : path.data(),
                          static_cast<int>(path.size()), SQLITE_STATIC);
        sqlite3_bind_blob(ins, 3, rlp.data(), static_cast<int>(rlp.size()), SQLITE_STATIC);
        check(db, sqlite3_step(ins), "insert");
    }
    sqlite3_reset(ins);
    sqlite3_stmt* up = nullptr;
    check(db, sqlite3_prepare_v2(db, "UPDATE tries SET root=?1 WHERE id=1", -1, &up, nullptr),
          "prepare");
    sqlite3_bind_blob(up, 1, root.data(), 32, SQLITE_STATIC);
    check(db, sqlite3_step(up), "set root");
    sqlite3_finalize(up);
    check(db, sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), "commit");
    const double insert_s = seconds_since(t0);
    const double insert_cpu = cpu_seconds() - c0;
    sqlite3_finalize(ins);
    sqlite3_finalize(batch);
    const auto t1 = std::chrono::steady_clock::now();
    const double c1 = cpu_seconds();
    check(db, sqlite3_close(db), "close");
    const double close_s = seconds_since(t1);
    const double close_cpu = cpu_seconds() - c1;

    std::printf(
        "{\"rows\":%zu,\"row_bytes\":%zu,\"root\":\"%s\",\"insert_seconds\":%.3f,"
        "\"insert_cpu_seconds\":%.3f,\"close_seconds\":%.3f,\"close_cpu_seconds\":%.3f,"
        "\"file_bytes\":%llu}\n",
        rows.size(), rows.bytes_total(), mpt::to_hex(root).c_str(), insert_s, insert_cpu, close_s,
        close_cpu, static_cast<unsigned long long>(std::filesystem::file_size(db_out)));
    return 0;
}
