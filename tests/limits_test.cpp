// Limits checked before a write (ops/limits.hpp) and SQLite's length limit behind them.
#include <doctest/doctest.h>

#include <mpt/ops/limits.hpp>
#include <mpt/store/sqlite_store.hpp>

#include "test_util.hpp"

using namespace mpt;

namespace {

KvInput parse(const std::string& text) {
    auto r = parse_kv(text);
    REQUIRE(r.ok());
    return std::move(*r);
}

}  // namespace

TEST_CASE("limits: SQLite's length limit as this build has it") {
    CHECK(sqlite::default_length_limit() == 1000000000);
    test::TempFile f;
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(s.ok());
    CHECK((*s)->max_blob_bytes() == sqlite::default_length_limit());
}

TEST_CASE("limits: an entry past the row limit is named, with its size and the limit") {
    const std::string big(3000, 'v');
    const KvInput input = parse("{\"a\": \"b\", \"k\": \"" + big + "\"}");
    CHECK(check_entry_limits(input, false, 3000 + 3 + kRowOverhead).ok());
    auto r = check_entry_limits(input, false, 3000 + 2 + kRowOverhead);
    REQUIRE_FALSE(r.ok());
    INFO(r.error().detail);
    CHECK(r.error().code == Errc::input_too_large);
    CHECK(r.error().detail ==
          "entry 2: value of 3000 bytes exceeds the limit of 4026 bytes a row of the trie file "
          "can hold with its key");
    CHECK(category(r.error().code) == ErrorCategory::input);
    // A long key counts three times; a hashed one is 32 bytes whatever its length.
    const KvInput keyed = parse("{\"" + big + "\": \"v\"}");
    auto k = check_entry_limits(keyed, false, 6000 + kRowOverhead);
    REQUIRE_FALSE(k.ok());
    CHECK(k.error().detail.starts_with("entry 1: key of 3000 bytes exceeds the limit of "));
    CHECK(check_entry_limits(keyed, true, 200 + kRowOverhead).ok());
}

TEST_CASE("limits: a row past the connection's limit is named with its size and the limit") {
    test::TempFile f;
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(s.ok());
    REQUIRE((*s)->set_length_limit(1000).ok());
    CHECK((*s)->max_blob_bytes() == 1000);
    REQUIRE((*s)->begin_write().ok());
    // In place, not staged: a trie with a row first.
    auto id = (*s)->create_trie("main", TrieKind::plain);
    REQUIRE(id.ok());
    const bytes path = {1, 2};
    auto r = (*s)->put(*id, path, bytes(2000, 0xab));
    REQUIRE_FALSE(r.ok());
    INFO(r.error().detail);
    CHECK(r.error().code == Errc::input_too_large);
    CHECK(r.error().file == f.path);
    CHECK(r.error().detail ==
          "write node: trie id 1, path 12: a row of 2000 bytes "
          "exceeds the limit of 1000 bytes");
    CHECK((*s)->put(*id, path, bytes(100, 0xab)).ok());
    (*s)->rollback();
}
