// mpt_state_update_floor BEFORE AFTER KEYS: the SQLite floor of one block's
// `mpt update DB --changes BLOCK` on a state file (bench/update_bench.sh --state).
//
// BEFORE is a copy of the state file before the block, AFTER the file after it. KEYS holds
// the block's keys, one a line: "A <address>" for an account, "S <address> <slot>" for a
// slot, 0x hex. Not timed:
//   - the rows read: for each key in order, the rows its proof reads in BEFORE (the account
//     trie's for an account, the account's storage trie's for a slot), each row once;
//   - the rows written and deleted: each trie whose root differs, or that one file holds and
//     the other not, compared by path in one ordered pass, as mpt_update_floor compares one.
// Timed, on BEFORE, through the store's own connection and statements: one write transaction
// that reads those rows by path, makes the new storage tries, writes the written rows of each
// trie (64 a statement), deletes the deleted rows and the tries gone, sets the new roots, and
// commits.
//
// Prints one JSON object: reads, writes, deletes, tries (changed), seconds.
#include <sqlite3.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/store/sqlite_store.hpp>

#include "recording_reader.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using mpt::bench::RecordingReader;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "mpt_state_update_floor: %s\n", what.c_str());
    std::exit(2);
}

mpt::bytes copy(const void* p, int n) {
    const auto* b = static_cast<const uint8_t*>(p);
    return mpt::bytes(b, b + n);
}

// All rows of trie id in schema s ("main" or "a") of db, by path.
std::map<mpt::bytes, mpt::bytes> rows_of(sqlite3* db, const char* s, int64_t id) {
    std::map<mpt::bytes, mpt::bytes> out;
    if (id < 0) return out;
    sqlite3_stmt* st = nullptr;
    const std::string q = std::string("SELECT path, rlp FROM ") + s + ".nodes WHERE trie = ?1";
    if (sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr) != SQLITE_OK) fail("prepare");
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        out.emplace(copy(sqlite3_column_blob(st, 0), sqlite3_column_bytes(st, 0)),
                    copy(sqlite3_column_blob(st, 1), sqlite3_column_bytes(st, 1)));
    }
    sqlite3_finalize(st);
    return out;
}

struct TrieChange {
    std::string name;
    int64_t before = -1;  // id in BEFORE, or -1
    bool after = false;   // AFTER holds it
    mpt::Hash256 root{};
    std::vector<mpt::RowList::Row> writes;
    std::vector<mpt::bytes> paths, rlps, deletes;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) fail("usage: mpt_state_update_floor BEFORE AFTER KEYS");
    std::map<std::string, mpt::TrieInfo> before_tries, after_tries;
    {
        auto after = mpt::SqliteNodeStore::open(argv[2], mpt::SqliteNodeStore::Mode::read_only);
        if (!after) fail(after.error().message());
        auto list = (*after)->list_tries();
        if (!list) fail(list.error().message());
        for (const mpt::TrieInfo& t : *list) after_tries.emplace(t.name, t);
    }
    auto store = mpt::SqliteNodeStore::open(argv[1], mpt::SqliteNodeStore::Mode::read_write);
    if (!store) fail(store.error().message());
    {
        auto list = (*store)->list_tries();
        if (!list) fail(list.error().message());
        for (const mpt::TrieInfo& t : *list) before_tries.emplace(t.name, t);
    }

    // The rows read, each once, in the order first read: (trie id, path).
    std::vector<std::pair<int64_t, mpt::bytes>> reads;
    {
        if (!(*store)->begin_read().ok()) fail("begin_read");
        std::set<std::pair<int64_t, mpt::bytes>> seen;
        std::ifstream in(argv[3]);
        if (!in) fail(std::string("cannot read ") + argv[3]);
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream words(line);
            std::string kind, a, s;
            words >> kind >> a >> s;
            auto address = mpt::from_hex(a);
            if (!address || address->size() != 20) fail("bad address: " + line);
            const mpt::Hash256 address_hash = mpt::keccak256(*address);
            const std::string trie = kind == "A" ? "main" : mpt::to_hex(address_hash);
            const auto t = before_tries.find(trie);
            if (t == before_tries.end()) continue;  // a storage trie the block makes
            mpt::Hash256 key = address_hash;
            if (kind == "S") {
                auto slot = mpt::from_hex(s);
                if (!slot || slot->size() > 32) fail("bad slot: " + line);
                mpt::bytes word(32 - slot->size(), 0);
                word.insert(word.end(), slot->begin(), slot->end());
                key = mpt::keccak256(word);
            }
            mpt::TrieReader reader(**store, t->second);
            std::vector<mpt::bytes> paths;
            RecordingReader recording(reader, paths);
            auto proof = mpt::prove(recording, t->second.root, key);
            if (!proof) fail(proof.error().message());
            for (mpt::bytes& p : paths) {
                if (seen.emplace(t->second.id, p).second) reads.emplace_back(t->second.id, p);
            }
        }
        (*store)->end_read();
    }

    // The tries that changed, and their rows written and deleted.
    std::vector<TrieChange> changes;
    {
        sqlite3* db = nullptr;
        if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            fail(std::string("cannot open ") + argv[1]);
        }
        const std::string attach = std::string("ATTACH DATABASE '") + argv[2] + "' AS a";
        if (sqlite3_exec(db, attach.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
            fail(std::string("cannot attach ") + argv[2]);
        }
        std::set<std::string> names;
        for (const auto& [n, t] : before_tries) names.insert(n);
        for (const auto& [n, t] : after_tries) names.insert(n);
        for (const std::string& n : names) {
            const auto b = before_tries.find(n);
            const auto a = after_tries.find(n);
            if (b != before_tries.end() && a != after_tries.end() &&
                b->second.root == a->second.root)
                continue;
            TrieChange c;
            c.name = n;
            c.before = b != before_tries.end() ? b->second.id : -1;
            c.after = a != after_tries.end();
            if (c.after) c.root = a->second.root;
            const auto old_rows = rows_of(db, "main", c.before);
            const auto new_rows = rows_of(db, "a", c.after ? a->second.id : -1);
            if (c.after) {
                for (const auto& [p, r] : new_rows) {
                    const auto o = old_rows.find(p);
                    if (o == old_rows.end() || o->second != r) {
                        c.paths.push_back(p);
                        c.rlps.push_back(r);
                    }
                }
                for (const auto& [p, r] : old_rows) {
                    if (!new_rows.contains(p)) c.deletes.push_back(p);
                }
            }
            for (size_t i = 0; i < c.paths.size(); ++i) c.writes.push_back({c.paths[i], c.rlps[i]});
            changes.push_back(std::move(c));
        }
        sqlite3_close(db);
    }
    size_t writes = 0, deletes = 0;
    for (const TrieChange& c : changes) {
        writes += c.writes.size();
        deletes += c.deletes.size();
    }

    unsigned sum = 0;
    const auto start = std::chrono::steady_clock::now();
    if (!(*store)->begin_write().ok()) fail("begin_write");
    for (const auto& [id, p] : reads) {
        auto row = (*store)->get(id, p);
        if (!row) fail(row.error().message());
        if (!row->empty()) sum += (*row)[row->size() - 1];
    }
    for (TrieChange& c : changes) {
        if (!c.after) {
            if (auto s = (*store)->delete_trie(c.before); !s.ok()) fail(s.error().message());
            continue;
        }
        int64_t id = c.before;
        if (id < 0) {
            auto made = (*store)->create_trie(c.name, mpt::TrieKind::secure);
            if (!made) fail(made.error().message());
            id = *made;
        }
        if (auto s = (*store)->put_rows(id, c.writes); !s.ok()) fail(s.error().message());
        for (const mpt::bytes& p : c.deletes) {
            if (auto s = (*store)->erase(id, p); !s.ok()) fail(s.error().message());
        }
        if (auto s = (*store)->set_root(id, c.root); !s.ok()) fail(s.error().message());
    }
    if (auto s = (*store)->commit_write(); !s.ok()) fail(s.error().message());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (sum == 1) std::fputc(' ', stderr);  // keeps the reads from being optimised away
    std::printf("{\"reads\":%zu,\"writes\":%zu,\"deletes\":%zu,\"tries\":%zu,\"seconds\":%.6f}\n",
                reads.size(), writes, deletes, changes.size(), seconds);
    return 0;
}
