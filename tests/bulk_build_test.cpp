// build_new_trie_file (bulk_build.hpp): a new trie file written whole must hold the trie, rows
// and root that a build through the store gives, be sound to SQLite, and take later writes
// as any trie file does; and the way must close, writing nothing, wherever it could write
// over a file.
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <random>
#include <sstream>

#include "sqlite_check.hpp"
#include "test_util.hpp"

using namespace mpt;
using mpt::test::TempFile;

namespace {

std::string kv_json(const std::map<bytes, bytes>& pairs, size_t deletions_every = 0) {
    std::string s = "{";
    size_t i = 0;
    for (const auto& [k, v] : pairs) {
        if (i != 0) s += ",";
        const bool deleted = deletions_every != 0 && i % deletions_every == 0;
        s += "\"" + to_hex(k) + "\":" + (deleted ? "null" : "\"" + to_hex(v) + "\"");
        ++i;
    }
    return s + "}";
}

KvInput parse_kv_ok(const std::string& json) {
    auto input = parse_kv(json);
    REQUIRE(input.ok());
    return std::move(*input);
}

std::map<bytes, bytes> rows_of(const std::string& path, TrieInfo* info) {
    auto s = SqliteNodeStore::open(path, SqliteNodeStore::Mode::read_only);
    REQUIRE(s.ok());
    auto t = (*s)->find_trie("main");
    REQUIRE((t.ok() && t->has_value()));
    *info = **t;
    std::map<bytes, bytes> rows;
    REQUIRE((*s)->scan(info->id, {},
                       [&](bytes_view p, bytes_view r) {
                           rows.emplace(bytes(p.begin(), p.end()), bytes(r.begin(), r.end()));
                           return true;
                       })
                .ok());
    auto check = check_trie(**s, *info);
    REQUIRE(check.ok());
    CHECK(check->problems.empty());
    CHECK(check->reachable == rows.size());
    return rows;
}

std::string integrity(const std::string& path) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    const std::string verdict = test::integrity_verdict(db);
    sqlite3_close(db);
    return verdict;
}

Result<BuildResult> build_through_store(const std::string& path, const KvInput& input,
                                        const BuildOptions& o) {
    MPT_TRY(auto store, SqliteNodeStore::open(path, SqliteNodeStore::Mode::create));
    return build_trie(*store, input, o);
}

// The preimages table's rows, in hash order.
std::vector<std::pair<bytes, bytes>> preimages_of(const std::string& path) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT hash, preimage FROM preimages ORDER BY hash", -1, &st,
                               nullptr) == SQLITE_OK);
    std::vector<std::pair<bytes, bytes>> rows;
    const auto blob = [&](int i) {
        const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, i));
        return bytes(p, p + sqlite3_column_bytes(st, i));
    };
    while (sqlite3_step(st) == SQLITE_ROW) rows.emplace_back(blob(0), blob(1));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rows;
}

}  // namespace

TEST_CASE("a new trie file written whole holds what a build through the store does") {
    std::mt19937_64 rng(test::seed("bulk_build"));
    struct Case {
        size_t pairs;
        size_t max_value;  // values up to this long; over a page's worth, overflow pages
        bool secure;
        unsigned threads;
        bool shared_byte;  // every key starts with 0xab: the top branch under an extension
    };
    const Case cases[] = {{0, 40, false, 1, false},      {1, 40, false, 1, false},
                          {2, 40, true, 2, false},       {300, 40, false, 1, false},
                          {6000, 40, false, 2, false},   {6000, 40, true, 2, false},
                          {6000, 40, false, 2, true},    {400, 20000, false, 2, false},
                          {3000, 3000, false, 1, false}, {5000, 3000, true, 2, false}};
    for (const Case& c : cases) {
        INFO(c.pairs << " pairs, values up to " << c.max_value
                     << std::string(c.secure ? ", secure" : "") << ", " << c.threads << " threads"
                     << std::string(c.shared_byte ? ", keys 0xab.." : ""));
        std::map<bytes, bytes> content = test::random_mixed_content(rng, c.pairs, 33, 0xff, false);
        if (c.max_value > 40) {
            for (auto& [k, v] : content) v = test::random_bytes(rng, 1 + rng() % c.max_value);
        }
        if (c.shared_byte) {
            std::map<bytes, bytes> shared;
            for (const auto& [k, v] : content) {
                bytes key(1 + k.size(), 0xab);
                std::copy(k.begin(), k.end(), key.begin() + 1);
                shared[key] = v;
            }
            content = std::move(shared);
        }
        const KvInput input = parse_kv_ok(kv_json(content));
        BuildOptions o;
        o.secure = c.secure;
        o.threads = c.threads;
        TempFile whole, through;
        auto a = build_new_trie_file(whole.path, input, o);
        REQUIRE_MESSAGE(a.ok(), test::why(a));
        REQUIRE(a->has_value());
        auto b = build_through_store(through.path, input, o);
        REQUIRE_MESSAGE(b.ok(), test::why(b));
        CHECK((*a)->root == b->root);
        CHECK((*a)->created);
        CHECK((*a)->rows_written == b->rows_written);
        CHECK(integrity(whole.path) == "ok\n");
        // A secure build's preimages: one row a key, as the store writes them.
        const auto preimages = preimages_of(whole.path);
        CHECK(preimages == preimages_of(through.path));
        CHECK(preimages.size() == (c.secure ? content.size() : 0));
        if (c.threads > 1) {
            // Written as the parts are hashed (or after, when the root's row is not the one
            // foreseen): the file of a build on one thread all the same.
            BuildOptions one = o;
            one.threads = 1;
            TempFile single;
            auto s = build_new_trie_file(single.path, input, one);
            REQUIRE_MESSAGE(s.ok(), test::why(s));
            CHECK(test::file_bytes(whole.path) == test::file_bytes(single.path));
        }
        TrieInfo ta, tb;
        CHECK(rows_of(whole.path, &ta) == rows_of(through.path, &tb));
        CHECK((ta.id == tb.id && ta.root == tb.root && ta.kind == tb.kind));
        CHECK(ta.root == b->root);

        // Later writes go through the store, as to any trie file.
        std::map<bytes, bytes> change =
            test::random_mixed_content(rng, c.pairs / 2 + 1, 33, 0xff, false);
        for (auto it = content.begin(); it != content.end() && change.size() < c.pairs; ++it) {
            change[it->first] = test::random_bytes(rng, 1 + rng() % 40);
        }
        const KvInput update = parse_kv_ok(kv_json(change, 3));
        auto a2 = build_through_store(whole.path, update, o);
        auto b2 = build_through_store(through.path, update, o);
        REQUIRE_MESSAGE(a2.ok(), test::why(a2));
        REQUIRE_MESSAGE(b2.ok(), test::why(b2));
        CHECK(!a2->created);
        CHECK(a2->root == b2->root);
        CHECK(integrity(whole.path) == "ok\n");
        CHECK(rows_of(whole.path, &ta) == rows_of(through.path, &tb));
    }
}

TEST_CASE("a new trie file's build reports its progress") {
    std::map<bytes, bytes> content;
    for (uint32_t i = 0; i < 140000; ++i) {
        const Hash256 k = keccak256(bytes_view(reinterpret_cast<const uint8_t*>(&i), 4));
        content[bytes(k.begin(), k.end())] = bytes{1, static_cast<uint8_t>(i)};
    }
    const KvInput input = parse_kv_ok(kv_json(content));
    for (const unsigned threads : {1u, 2u}) {
        std::vector<std::pair<size_t, size_t>> calls;
        BuildOptions o;
        o.threads = threads;
        o.progress = [&](size_t done, size_t all) { calls.emplace_back(done, all); };
        TempFile f;
        auto r = build_new_trie_file(f.path, input, o);
        REQUIRE((r.ok() && r->has_value()));
        // A call per 65536 pairs a thread adds: two from one thread; from two, one or two
        // (the 16 subtries go to whichever thread is free).
        INFO(threads << " threads");
        const std::vector<std::pair<size_t, size_t>> two = {{65536, 140000}, {131072, 140000}};
        if (threads == 1) {
            CHECK(calls == two);
        } else {
            CHECK((calls == two || calls == std::vector(two.begin(), two.begin() + 1)));
        }
    }
}

TEST_CASE("a new trie file sorted and hashed a subtrie at a time is the file of one thread") {
    // Two threads sort and hash each first nibble's keys and write their rows as they go, two
    // nibbles down, foreseeing a root branch of 16 hashed children and 16 such branches below
    // it. Where that turns out otherwise the file is written anew from the sorted pairs: keys
    // of two nibbles only (a smaller branch), keys of two nibbles whose one is all deleted (no
    // branch at the root at all), keys of one first nibble that share their second (an
    // extension below the root), a first nibble with no keys of one second (a smaller
    // branch below the root, with a part of no rows), and keys of no, one and two bytes beside
    // the rest (values at the root, at a part's own path and below it).
    std::mt19937_64 rng(test::seed("bulk_build_streamed"));
    struct Case {
        const char* name;
        std::vector<uint8_t> first_bytes;  // the keys' first bytes, in turn
        bool delete_second;                // the keys of the second first byte are deleted
        uint8_t mask = 0;                  // a key whose first byte & mask is `from` ...
        uint8_t from = 0;
        uint8_t to = 0;                      // ... gets first byte `to` (when mask is set)
        std::vector<bytes> short_keys = {};  // added beside the rest
    };
    const std::vector<bytes> short_keys = {{0x00}, {0x12}, {0xff}, {0x12, 0x34}, {0x00, 0xff}};
    const Case cases[] = {{"every nibble", {}, false},
                          {"two nibbles", {0x1f, 0xe0}, false},
                          {"one nibble left after deletions", {0x1f, 0xe0}, true},
                          {"one second nibble under a first", {}, false, 0xf0, 0x30, 0x37},
                          {"a second nibble missing under a first", {}, false, 0xff, 0x5a, 0x5b},
                          {"keys of one and two bytes", {}, false, 0, 0, 0, short_keys},
                          {"the empty key", {}, false, 0, 0, 0, {bytes{}, bytes{0x12}}}};
    for (const Case& c : cases) {
        INFO(c.name);
        std::map<bytes, bytes> content;
        std::string json = "{";
        for (size_t i = 0; i < 9000; ++i) {
            bytes key = test::random_bytes(rng, 32);
            const bool second = !c.first_bytes.empty() && i % 2 == 1;
            if (!c.first_bytes.empty()) key[0] = c.first_bytes[i % 2];
            if (c.mask != 0 && (key[0] & c.mask) == c.from) key[0] = c.to;
            const bool deleted = second && c.delete_second;
            const bytes value = test::random_bytes(rng, 1 + rng() % 40);
            if (!deleted) content[key] = value;
            json += std::string(i == 0 ? "" : ",") + "\"" + to_hex(key) +
                    "\":" + (deleted ? "null" : "\"" + to_hex(value) + "\"");
        }
        for (const bytes& key : c.short_keys) {
            const bytes value = test::random_bytes(rng, 1 + rng() % 40);
            content[key] = value;
            json += ",\"" + to_hex(key) + "\":\"" + to_hex(value) + "\"";
        }
        const KvInput input = parse_kv_ok(json + "}");
        BuildOptions two;
        two.threads = 2;
        BuildOptions one;
        one.threads = 1;
        TempFile split, single, through;
        auto a = build_new_trie_file(split.path, input, two);
        REQUIRE_MESSAGE(a.ok(), test::why(a));
        REQUIRE(a->has_value());
        auto b = build_new_trie_file(single.path, input, one);
        REQUIRE_MESSAGE(b.ok(), test::why(b));
        REQUIRE(b->has_value());
        auto s = build_through_store(through.path, parse_kv_ok(kv_json(content)), one);
        REQUIRE_MESSAGE(s.ok(), test::why(s));
        CHECK((*a)->root == s->root);
        CHECK((*a)->rows_written == s->rows_written);
        CHECK((*a)->rows_written == (*b)->rows_written);
        CHECK(test::file_bytes(split.path) == test::file_bytes(single.path));
        CHECK(integrity(split.path) == "ok\n");
    }
}

TEST_CASE("a new trie file is written only where no file is") {
    const KvInput input = parse_kv_ok(R"({"0x01": "0x02", "0x0102": "0x03"})");
    const BuildOptions o;
    const auto closed = [&](const std::string& path) {
        auto r = build_new_trie_file(path, input, o);
        REQUIRE_MESSAGE(r.ok(), test::why(r));
        return !r->has_value();
    };
    TempFile f;
    SUBCASE("an existing file, even an empty one, is left as it is") {
        for (const std::string content : {"not a trie file", ""}) {
            std::ofstream(f.path, std::ios::binary) << content;
            CHECK(closed(f.path));
            CHECK(test::file_bytes(f.path) == content);
        }
    }
    SUBCASE("a link to nowhere is not followed") {
        const std::string target = f.path + "-target";
        REQUIRE(::symlink(target.c_str(), f.path.c_str()) == 0);
        CHECK(closed(f.path));
        struct stat st {};
        CHECK(::lstat(target.c_str(), &st) != 0);
    }
    SUBCASE("a log or a rollback journal left beside the name") {
        for (const char* side : {"-wal", "-journal"}) {
            std::ofstream(f.path + side, std::ios::binary) << "log";
            CHECK(closed(f.path));
            struct stat st {};
            CHECK(::lstat(f.path.c_str(), &st) != 0);
            ::unlink((f.path + side).c_str());
        }
    }
    SUBCASE("a folder that does not exist") { CHECK(closed(f.path + "/no/such/folder/x.db")); }
    SUBCASE("rows that would take more memory than allowed") {
        BuildOptions small;
        small.bulk_memory = 400;  // two pairs: about 2 x 166 bytes by the estimate
        auto r = build_new_trie_file(f.path, input, small);
        REQUIRE((r.ok() && r->has_value()));
        small.bulk_memory = 300;
        TempFile g;
        r = build_new_trie_file(g.path, input, small);
        REQUIRE(r.ok());
        CHECK(!r->has_value());
        struct stat st {};
        CHECK(::lstat(g.path.c_str(), &st) != 0);
    }
    SUBCASE("a free name") {
        auto r = build_new_trie_file(f.path, input, o);
        REQUIRE((r.ok() && r->has_value()));
        CHECK(integrity(f.path) == "ok\n");
        CHECK(closed(f.path));  // and now it is taken
    }
}
