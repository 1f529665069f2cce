// mpt_update_floor BEFORE AFTER KEYS [1]: the SQLite floor of one block's `mpt build BLOCK -o DB`
// on an existing trie (bench/update_bench.sh).
//
// BEFORE is a copy of the trie file before the block, AFTER the file after it; both hold the
// trie `main` (plain), with the same trie id. KEYS holds the block's keys (0x hex, one a line,
// in the block's order). Not timed:
//   - the rows read: for each key in order, the rows its proof reads in BEFORE (the nodes on
//     its path, as the update must load them), each row once, where it is first asked for;
//   - the rows written and deleted: the two files' `main` rows compared by path in one ordered
//     pass (a row of AFTER that BEFORE lacks or holds different bytes is written; a row of
//     BEFORE that AFTER lacks is deleted).
// Timed, on BEFORE, through the store's own connection and statements (SqliteNodeStore: the
// same pragmas, the row writer of 64 rows a statement): one write transaction that reads
// those rows by path in that order, writes the written rows in path order, deletes the
// deleted rows, sets the new root, and commits. BEFORE then holds AFTER's rows. With a
// fourth argument 1, each written row is its own statement (SqliteNodeStore::put), as
// apply_commit in lib/mpt/store/node_store.cpp writes them, for comparison.
//
// Prints one JSON object: reads, writes, deletes, seconds (wall clock of the transaction,
// begin to commit).
#include <sqlite3.h>
#include <mpt/core/hex.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/store/sqlite_store.hpp>
#include "recording_reader.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

using mpt::bench::RecordingReader;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "mpt_update_floor: %s\n", what.c_str());
    std::exit(2);
}

struct Cursor {
    sqlite3_stmt* st = nullptr;
    bool done = false;
    mpt::bytes_view path() const {
        return {static_cast<const uint8_t*>(sqlite3_column_blob(st, 0)),
                static_cast<size_t>(sqlite3_column_bytes(st, 0))};
    }
    mpt::bytes_view rlp() const {
        return {static_cast<const uint8_t*>(sqlite3_column_blob(st, 1)),
                static_cast<size_t>(sqlite3_column_bytes(st, 1))};
    }
    void step() {
        const int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) {
            done = true;
        } else if (rc != SQLITE_ROW) {
            fail("scan failed");
        }
    }
};

int compare(mpt::bytes_view a, mpt::bytes_view b) {
    const size_t n = std::min(a.size(), b.size());
    const int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
    if (c != 0) return c;
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

bool same(mpt::bytes_view a, mpt::bytes_view b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// The rows written and deleted between the trie `main` of before and of after.
void diff_rows(const char* before, const char* after, int64_t trie,
               std::vector<mpt::bytes>& write_paths, std::vector<mpt::bytes>& write_rlps,
               std::vector<mpt::bytes>& deletes) {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(before, &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        fail(std::string("cannot open ") + before);
    }
    const std::string attach = std::string("ATTACH DATABASE '") + after + "' AS a";
    if (sqlite3_exec(db, attach.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
        fail(std::string("cannot attach ") + after);
    }
    Cursor b, a;
    const char* qb = "SELECT path, rlp FROM main.nodes WHERE trie = ?1 ORDER BY path";
    const char* qa = "SELECT path, rlp FROM a.nodes WHERE trie = ?1 ORDER BY path";
    if (sqlite3_prepare_v2(db, qb, -1, &b.st, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db, qa, -1, &a.st, nullptr) != SQLITE_OK) {
        fail(std::string("prepare: ") + sqlite3_errmsg(db));
    }
    sqlite3_bind_int64(b.st, 1, trie);
    sqlite3_bind_int64(a.st, 1, trie);
    b.step();
    a.step();
    auto copy = [](mpt::bytes_view v) { return mpt::bytes(v.begin(), v.end()); };
    while (!b.done || !a.done) {
        const int c = b.done ? 1 : a.done ? -1 : compare(b.path(), a.path());
        if (c < 0) {
            deletes.push_back(copy(b.path()));
            b.step();
        } else if (c > 0) {
            write_paths.push_back(copy(a.path()));
            write_rlps.push_back(copy(a.rlp()));
            a.step();
        } else {
            if (!same(b.rlp(), a.rlp())) {
                write_paths.push_back(copy(a.path()));
                write_rlps.push_back(copy(a.rlp()));
            }
            b.step();
            a.step();
        }
    }
    sqlite3_finalize(b.st);
    sqlite3_finalize(a.st);
    sqlite3_close(db);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 && !(argc == 5 && std::string(argv[4]) == "1")) {
        fail("usage: mpt_update_floor BEFORE AFTER KEYS [1]");
    }
    const bool row_per_statement = argc == 5;
    mpt::Hash256 after_root{};
    {
        auto after = mpt::SqliteNodeStore::open(argv[2], mpt::SqliteNodeStore::Mode::read_only);
        if (!after) fail(after.error().message());
        auto info = (*after)->find_trie("main");
        if (!info || !*info) fail("no trie main in AFTER");
        after_root = (*info)->root;
    }
    auto store = mpt::SqliteNodeStore::open(argv[1], mpt::SqliteNodeStore::Mode::read_write);
    if (!store) fail(store.error().message());
    auto found = (*store)->find_trie("main");
    if (!found || !*found) fail("no trie main in BEFORE");
    const mpt::TrieInfo info = **found;

    // The rows read, each once, in the order first read.
    std::vector<mpt::bytes> reads;
    {
        if (!(*store)->begin_read().ok()) fail("begin_read");
        mpt::TrieReader reader(**store, info);
        std::vector<mpt::bytes> paths;
        RecordingReader recording(reader, paths);
        std::ifstream in(argv[3]);
        if (!in) fail(std::string("cannot read ") + argv[3]);
        std::string line;
        while (std::getline(in, line)) {
            auto key = mpt::from_hex(line);
            if (!key) fail("bad key: " + line);
            auto proof = mpt::prove(recording, info.root, *key);
            if (!proof) fail(proof.error().message());
        }
        (*store)->end_read();
        std::unordered_set<std::string> seen;
        for (mpt::bytes& p : paths) {
            if (seen.emplace(reinterpret_cast<const char*>(p.data()), p.size()).second) {
                reads.push_back(std::move(p));
            }
        }
    }

    std::vector<mpt::bytes> write_paths, write_rlps, deletes;
    diff_rows(argv[1], argv[2], info.id, write_paths, write_rlps, deletes);
    std::vector<mpt::RowList::Row> writes;
    writes.reserve(write_paths.size());
    for (size_t i = 0; i < write_paths.size(); ++i)
        writes.push_back({write_paths[i], write_rlps[i]});

    unsigned sum = 0;
    const auto start = std::chrono::steady_clock::now();
    if (!(*store)->begin_write().ok()) fail("begin_write");
    for (const mpt::bytes& p : reads) {
        auto row = (*store)->get(info.id, p);
        if (!row) fail(row.error().message());
        if (!row->empty()) sum += (*row)[row->size() - 1];
    }
    if (row_per_statement) {
        for (const mpt::RowList::Row& r : writes) {
            if (auto s = (*store)->put(info.id, r.path, r.rlp); !s.ok()) fail(s.error().message());
        }
    } else if (auto s = (*store)->put_rows(info.id, writes); !s.ok()) {
        fail(s.error().message());
    }
    for (const mpt::bytes& p : deletes) {
        if (auto s = (*store)->erase(info.id, p); !s.ok()) fail(s.error().message());
    }
    if (auto s = (*store)->set_root(info.id, after_root); !s.ok()) fail(s.error().message());
    if (auto s = (*store)->commit_write(); !s.ok()) fail(s.error().message());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (sum == 1) std::fputc(' ', stderr);  // keeps the reads from being optimised away
    std::printf("{\"reads\":%zu,\"writes\":%zu,\"deletes\":%zu,\"seconds\":%.6f}\n", reads.size(),
                writes.size(), deletes.size(), seconds);
    return 0;
}
