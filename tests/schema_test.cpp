// Schema 2 of the trie file (man/mpt-file.5): trie kinds, the tries-row checksum, preimages,
// trie names, and the new-file image; the same contract for the memory and SQLite stores.
#include <sqlite3.h>

#include <doctest/doctest.h>

#include <mpt/core/keccak.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/store/faulty_store.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/sqlite_store.hpp>

#include <fstream>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::TempFile;

namespace {

// Runs sql on the file directly, around the store under test.
void exec_raw(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    INFO(sql << ": " << (err ? err : ""));
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

// The store contract every NodeStore keeps for kinds, names and preimages.
void kinds_names_preimages(NodeStore& s) {
    REQUIRE(s.begin_write().ok());
    auto p = s.create_trie("p", TrieKind::plain);
    auto c = s.create_trie("c", TrieKind::secure);
    auto st = s.create_trie("st", TrieKind::state);
    REQUIRE((p.ok() && c.ok() && st.ok()));
    for (const char* bad : {"", "a\nb", "tab\there", "del\x7f"}) {
        auto r = s.create_trie(bad, TrieKind::plain);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == Errc::bad_input);
    }
    auto twice = s.create_trie("p", TrieKind::secure);
    REQUIRE_FALSE(twice.ok());
    CHECK(twice.error().code == Errc::bad_input);
    const bytes a = {1, 2, 3};
    const bytes b = {9};
    const Hash256 ha = keccak256(a);
    const Preimage items[] = {{ha, a}, {ha, b}};  // the second is ignored: first one wins
    REQUIRE(s.put_preimages(items).ok());
    REQUIRE(s.commit_write().ok());

    auto got = s.get_preimage(ha);
    REQUIRE(got.ok());
    REQUIRE(got->has_value());
    CHECK(**got == a);
    auto none = s.get_preimage(keccak256(b));
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    auto list = s.list_tries();
    REQUIRE(list.ok());
    REQUIRE(list->size() == 3);
    for (const TrieInfo& t : *list) {
        const TrieKind want = t.name == "p"   ? TrieKind::plain
                              : t.name == "c" ? TrieKind::secure
                                              : TrieKind::state;
        CHECK(t.kind == want);
        CHECK(t.hashed_keys() == (want != TrieKind::plain));
    }
}

}  // namespace

TEST_CASE("trie kinds: names and parser agree") {
    for (const TrieKind k : {TrieKind::plain, TrieKind::secure, TrieKind::state}) {
        CHECK(parse_trie_kind(trie_kind_name(k)) == k);
    }
    CHECK(trie_kind_name(TrieKind::state) == "state");
    CHECK_FALSE(parse_trie_kind("Plain").has_value());
    CHECK_FALSE(parse_trie_kind("").has_value());
}

TEST_CASE("kinds, names and preimages: memory store") {
    MemoryNodeStore s;
    kinds_names_preimages(s);
}

TEST_CASE("kinds, names and preimages: faulty store passes them through") {
    MemoryNodeStore inner;
    FaultyNodeStore s(inner);
    kinds_names_preimages(s);
}

TEST_CASE("kinds, names and preimages: SQLite file, and after reopening") {
    TempFile f;
    {
        auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
        REQUIRE(s.ok());
        kinds_names_preimages(**s);
    }
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::read_only);
    REQUIRE(s.ok());
    CHECK((*s)->schema_version() == 3);
    auto st = (*s)->find_trie("st");
    REQUIRE(st.ok());
    REQUIRE(st->has_value());
    CHECK((*st)->kind == TrieKind::state);
    auto got = (*s)->get_preimage(keccak256(bytes{1, 2, 3}));
    REQUIRE(got.ok());
    CHECK(got->has_value());
}

TEST_CASE("the tries-row checksum covers id, name, kind and root") {
    const Hash256 base = sqlite::tries_row_checksum(1, "main", TrieKind::plain, kEmptyRoot);
    CHECK(base != sqlite::tries_row_checksum(2, "main", TrieKind::plain, kEmptyRoot));
    CHECK(base != sqlite::tries_row_checksum(1, "main2", TrieKind::plain, kEmptyRoot));
    CHECK(base != sqlite::tries_row_checksum(1, "main", TrieKind::secure, kEmptyRoot));
    Hash256 root = kEmptyRoot;
    root[31] ^= 1;
    CHECK(base != sqlite::tries_row_checksum(1, "main", TrieKind::plain, root));
    // The fields are length-prefixed: moving bytes between name and kind changes the sum.
    CHECK(sqlite::tries_row_checksum(1, "ab", TrieKind::plain, kEmptyRoot) !=
          sqlite::tries_row_checksum(1, "a", TrieKind::plain, kEmptyRoot));
}

TEST_CASE("a damaged tries row is refused at open, and when read later") {
    TempFile f;
    {
        auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
        REQUIRE(s.ok());
        REQUIRE((*s)->begin_write().ok());
        REQUIRE((*s)->create_trie("main", TrieKind::plain).ok());
        REQUIRE((*s)->create_trie("other", TrieKind::secure).ok());
        REQUIRE((*s)->commit_write().ok());
    }
    SUBCASE("where it is read, not at open") {
        exec_raw(f.path, "UPDATE tries SET kind='plain' WHERE name='other'");
        auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::read_only);
        REQUIRE(s.ok());
        // A reader of another trie does not read the row.
        auto main = (*s)->find_trie("main");
        REQUIRE(main.ok());
        REQUIRE(main->has_value());
        auto other = (*s)->find_trie("other");
        REQUIRE_FALSE(other.ok());
        CHECK(other.error().code == Errc::storage_bad_record);
        CHECK(other.error().detail.find("trie other:") != std::string::npos);
        // The check of any trie reads every row.
        auto c = check_trie(**s, **main);
        REQUIRE_FALSE(c.ok());
        CHECK(c.error().code == Errc::storage_bad_record);
        CHECK(c.error().detail.find("trie other:") != std::string::npos);
    }
    SUBCASE("while open: every read of the row checks it") {
        auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::read_only);
        REQUIRE(s.ok());
        exec_raw(f.path, "UPDATE tries SET root=zeroblob(32) WHERE name='main'");
        auto t = (*s)->find_trie("main");
        REQUIRE_FALSE(t.ok());
        CHECK(t.error().code == Errc::storage_bad_record);
        auto l = (*s)->list_tries();
        REQUIRE_FALSE(l.ok());
    }
    SUBCASE("a write does not seal a damaged row with a new checksum") {
        auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::read_write);
        REQUIRE(s.ok());
        auto t = (*s)->find_trie("main");
        REQUIRE(t.ok());
        exec_raw(f.path, "UPDATE tries SET kind='state' WHERE name='main'");
        REQUIRE((*s)->begin_write().ok());
        auto r = (*s)->set_root((*t)->id, kEmptyRoot);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == Errc::storage_bad_record);
        (*s)->rollback();
    }
}

TEST_CASE("the kind column refuses other values") {
    TempFile f;
    {
        auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
        REQUIRE(s.ok());
    }
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(f.path.c_str(), &db) == SQLITE_OK);
    for (const char* v : {"'Plain'", "'secret'", "1", "NULL"}) {
        const std::string sql =
            std::string(
                "INSERT INTO tries(name, root, kind, checksum) VALUES('x', zeroblob(32), ") +
            v + ", zeroblob(32))";
        INFO(sql);
        CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_CONSTRAINT);
    }
    CHECK(sqlite3_exec(db,
                       "INSERT INTO tries(name, root, kind, checksum) VALUES('x', zeroblob(31), "
                       "'plain', zeroblob(32))",
                       nullptr, nullptr, nullptr) == SQLITE_CONSTRAINT);
    sqlite3_close(db);
}

TEST_CASE("a new-file image holds the kind, the root and the preimages") {
    const bytes key = {0xaa, 0xbb};
    const Hash256 h = keccak256(key);
    const Preimage pre[] = {{h, key}};
    Hash256 root{};
    root[0] = 7;
    auto image = new_file_image("acct", TrieKind::state, root, pre);
    REQUIRE(image.ok());
    REQUIRE_FALSE(new_file_image("bad\nname", TrieKind::plain, root).ok());
    const uint32_t pages = static_cast<uint32_t>(image->pages.size() / image->page_size);
    finish_image_header(image->pages, pages);
    TempFile f;
    {
        std::ofstream out(f.path, std::ios::binary);
        out.write(reinterpret_cast<const char*>(image->pages.data()),
                  static_cast<std::streamsize>(image->pages.size()));
    }
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::read_only);
    REQUIRE(s.ok());
    auto t = (*s)->find_trie("acct");
    REQUIRE(t.ok());
    REQUIRE(t->has_value());
    CHECK((*t)->kind == TrieKind::state);
    CHECK((*t)->root == root);
    CHECK((*t)->id == image->trie);
    auto got = (*s)->get_preimage(h);
    REQUIRE(got.ok());
    REQUIRE(got->has_value());
    CHECK(**got == key);
}

TEST_CASE("check verifies the kind from the structure: hashed keys end at 64 nibbles") {
    MemoryNodeStore s;
    auto input = parse_kv(R"({"do": "verb", "dog": "puppy", "doge": "coin", "horse": "stallion"})");
    REQUIRE(input.ok());
    BuildOptions o;
    REQUIRE(build_trie(s, *input, o).ok());
    auto t = s.find_trie("main");
    REQUIRE(t.ok());
    REQUIRE(t->has_value());
    TrieInfo info = **t;
    auto plain = check_trie(s, info);
    REQUIRE(plain.ok());
    CHECK(plain->problems.empty());
    // The same rows said to be a secure or state trie: short leaves, and a branch value.
    for (const TrieKind k : {TrieKind::secure, TrieKind::state}) {
        info.kind = k;
        auto r = check_trie(s, info);
        REQUIRE(r.ok());
        REQUIRE_FALSE(r->problems.empty());
        bool leaf = false, branch_value = false;
        for (const std::string& p : r->problems) {
            leaf |= p.starts_with("leaf ending at ");
            branch_value |= p.starts_with("branch value ");
        }
        CHECK(leaf);
        CHECK(branch_value);
    }
    // A secure build of the same input checks clean as what it is.
    MemoryNodeStore h;
    o.secure = true;
    REQUIRE(build_trie(h, *input, o).ok());
    auto ht = h.find_trie("main");
    REQUIRE(ht.ok());
    CHECK((*ht)->kind == TrieKind::secure);
    auto hr = check_trie(h, **ht);
    REQUIRE(hr.ok());
    CHECK(hr->problems.empty());
}
