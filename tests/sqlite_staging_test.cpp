// The staging of a new trie in SqliteNodeStore (sqlite_store.hpp): rows of a trie created in a
// file without rows go to a temporary table until commit. Inside that write every row
// operation must still see them, a rollback must leave nothing behind, and the result must
// be the compact file staging exists for.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <random>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::TempFile;

namespace {

std::unique_ptr<SqliteNodeStore> open_new(const TempFile& f) {
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(s.ok());
    return std::move(*s);
}

size_t row_size(NodeStore& s, TrieId trie, const bytes& path) {
    auto r = s.get(trie, path);
    REQUIRE(r.ok());
    return r->size();
}

size_t count_rows(NodeStore& s, TrieId trie, const bytes& prefix) {
    size_t n = 0;
    REQUIRE(s.scan(trie, prefix, [&](bytes_view, bytes_view) { return ++n, true; }).ok());
    return n;
}

}  // namespace

TEST_CASE("staged rows are visible inside the write and after commit") {
    TempFile f;
    auto s = open_new(f);
    const bytes p1{1, 2}, p2{1, 3}, p3{2}, p4{2, 0};
    const bytes r40(40, 0xaa), r50(50, 0xbb);
    REQUIRE(s->begin_write().ok());
    auto id = s->create_trie("main", TrieKind::plain);
    REQUIRE(id.ok());
    for (const bytes& p : {p1, p2, p3, p4}) REQUIRE(s->put(*id, p, p == p1 ? r40 : r50).ok());
    CHECK(row_size(*s, *id, p1) == 40);
    CHECK(count_rows(*s, *id, bytes{1}) == 2);
    REQUIRE(s->erase(*id, p2).ok());
    auto erased = s->erase_subtree(*id, bytes{2});
    REQUIRE(erased.ok());
    CHECK(*erased == 2);
    CHECK(count_rows(*s, *id, {}) == 1);
    REQUIRE(s->set_root(*id, Hash256{}).ok());
    REQUIRE(s->commit_write().ok());

    REQUIRE(s->begin_read().ok());
    CHECK(row_size(*s, *id, p1) == 40);
    CHECK(row_size(*s, *id, p2) == 0);
    CHECK(row_size(*s, *id, p3) == 0);
    CHECK(count_rows(*s, *id, {}) == 1);
    s->end_read();

    // A second trie, with rows in the file now, is written in place; both stay readable.
    REQUIRE(s->begin_write().ok());
    auto id2 = s->create_trie("0x01", TrieKind::plain);
    REQUIRE(id2.ok());
    REQUIRE(s->put(*id2, p1, r50).ok());
    CHECK(row_size(*s, *id2, p1) == 50);
    REQUIRE(s->commit_write().ok());
    REQUIRE(s->begin_read().ok());
    CHECK(row_size(*s, *id2, p1) == 50);
    CHECK(row_size(*s, *id, p1) == 40);
    s->end_read();

    // Another connection sees the same.
    auto other = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::read_only);
    REQUIRE(other.ok());
    REQUIRE((*other)->begin_read().ok());
    CHECK(row_size(**other, *id, p1) == 40);
    CHECK(count_rows(**other, *id2, {}) == 1);
    (*other)->end_read();
}

TEST_CASE("a rolled back staged trie leaves nothing, and the store writes on") {
    TempFile f;
    auto s = open_new(f);
    REQUIRE(s->begin_write().ok());
    auto id = s->create_trie("main", TrieKind::plain);
    REQUIRE(id.ok());
    REQUIRE(s->put(*id, bytes{7}, bytes(33, 1)).ok());
    CHECK(row_size(*s, *id, bytes{7}) == 33);
    s->rollback();
    auto t = s->find_trie("main");
    REQUIRE(t.ok());
    CHECK(!t->has_value());

    REQUIRE(s->begin_write().ok());
    id = s->create_trie("main", TrieKind::plain);
    REQUIRE(id.ok());
    REQUIRE(s->put(*id, bytes{8}, bytes(34, 2)).ok());
    REQUIRE(s->commit_write().ok());
    REQUIRE(s->begin_read().ok());
    CHECK(row_size(*s, *id, bytes{7}) == 0);
    CHECK(row_size(*s, *id, bytes{8}) == 34);
    s->end_read();
}

TEST_CASE("a connection stages again after a staged commit") {
    // A trie without rows leaves the file without rows, so the next new trie is staged
    // again on the same connection, whose first staging table outlived its commit.
    TempFile f;
    auto s = open_new(f);
    REQUIRE(s->begin_write().ok());
    auto empty = s->create_trie("empty", TrieKind::plain);
    REQUIRE(empty.ok());
    REQUIRE(s->commit_write().ok());
    for (const char* name : {"a", "b"}) {
        REQUIRE(s->begin_write().ok());
        auto id = s->create_trie(name, TrieKind::plain);
        REQUIRE(id.ok());
        REQUIRE(s->put(*id, bytes{1}, bytes(40, static_cast<uint8_t>(name[0]))).ok());
        REQUIRE(s->commit_write().ok());
    }
    REQUIRE(s->begin_read().ok());
    auto a = s->find_trie("a");
    auto b = s->find_trie("b");
    REQUIRE((a.ok() && a->has_value() && b.ok() && b->has_value()));
    auto row = s->get((*a)->id, bytes{1});
    REQUIRE(row.ok());
    CHECK(bytes_equal(*row, bytes(40, 'a')));
    CHECK(count_rows(*s, (*b)->id, {}) == 1);
    s->end_read();
}

TEST_CASE("a new trie fills its pages") {
    // 20000 keccak keys: ~27000 rows, ~2.4 MB of path and rlp. Rows inserted one by one in
    // the builder's order leave the file ~1.2x that; staged, it is ~1.1x.
    TempFile f;
    size_t row_bytes = 0;
    {
        auto s = open_new(f);
        std::vector<Hash256> keys;
        for (uint64_t i = 0; i < 20000; ++i) {
            uint8_t be[8];
            for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (56 - 8 * b));
            keys.push_back(keccak256(bytes_view(be, 8)));
        }
        std::sort(keys.begin(), keys.end(),
                  [](const Hash256& a, const Hash256& b) { return bytes_less(a, b); });
        REQUIRE(s->begin_write().ok());
        auto id = s->create_trie("main", TrieKind::plain);
        REQUIRE(id.ok());
        struct Sink : NodeSink {
            NodeStore* store;
            TrieId trie;
            size_t* bytes_out;
            void put(bytes_view path, bytes_view rlp) override {
                REQUIRE(store->put(trie, path, rlp).ok());
                *bytes_out += path.size() + rlp.size();
            }
        } sink;
        sink.store = s.get();
        sink.trie = *id;
        sink.bytes_out = &row_bytes;
        StackTrie st(&sink);
        for (const Hash256& k : keys) REQUIRE(st.add(k, keccak256(k)).ok());
        REQUIRE(s->set_root(*id, st.finish()).ok());
        REQUIRE(s->commit_write().ok());
    }  // closing checkpoints the log into the file
    const auto file_bytes = std::filesystem::file_size(f.path);
    INFO("file " << file_bytes << " bytes, rows " << row_bytes << " bytes");
    CHECK(static_cast<double>(file_bytes) <= 1.13 * static_cast<double>(row_bytes));
}

TEST_CASE("put_rows writes as puts in order do, staged and in place") {
    // Paths from a small set, so that a path repeats inside one batch statement and across
    // batches; the last write of a path wins. 2 batches and a tail of single puts.
    std::mt19937_64 rng(test::seed("put_rows"));
    const size_t n = 2 * SqliteNodeStore::kPutRowsBatch + 5;
    std::vector<bytes> paths, rlps;
    for (size_t i = 0; i < n; ++i) {
        bytes p = test::random_bytes(rng, 1 + rng() % 2);
        for (uint8_t& x : p) x &= 0x0f;
        if (i == 7) p.clear();  // the root's path
        paths.push_back(std::move(p));
        rlps.push_back(test::random_bytes(rng, 33 + rng() % 40));
    }
    std::vector<RowList::Row> rows;
    for (size_t i = 0; i < n; ++i) rows.push_back({paths[i], rlps[i]});
    std::map<bytes, bytes> expected;
    for (size_t i = 0; i < n; ++i) expected[paths[i]] = rlps[i];
    REQUIRE(expected.size() < n);  // some path repeats

    TempFile f;
    auto s = open_new(f);
    for (const char* name : {"staged", "in place"}) {
        INFO(name);
        REQUIRE(s->begin_write().ok());
        auto id = s->create_trie(name, TrieKind::plain);
        REQUIRE(id.ok());
        REQUIRE(s->put_rows(*id, rows).ok());
        REQUIRE(s->commit_write().ok());
        REQUIRE(s->begin_read().ok());
        std::map<bytes, bytes> got;
        REQUIRE(s->scan(*id, {}, [&](bytes_view p, bytes_view r) {
                     got[bytes(p.begin(), p.end())] = bytes(r.begin(), r.end());
                     return true;
                 }).ok());
        s->end_read();
        CHECK(got == expected);
    }
}
