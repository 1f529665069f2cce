// Managing the tries of a store (canonical names, the names an unknown one lists, copy, drop)
// and walking a trie's node structure (walk_tree).
#include "stored_trie.hpp"
#include "test_util.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/store/faulty_store.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/node_tree.hpp>

#include <doctest/doctest.h>

#include <map>

using namespace mpt;
using mpt::test::TempFile;

namespace {

bytes text(std::string_view s) { return bytes(s.begin(), s.end()); }

// Puts content into trie name of store (created when missing) through a trie reopened at its
// root; returns the root.
Hash256 put_all(NodeStore& store, std::string_view name, const std::map<bytes, bytes>& content) {
    REQUIRE(store.begin_write().ok());
    auto found = store.find_trie(name);
    REQUIRE(found.ok());
    TrieInfo info;
    if (*found) {
        info = **found;
    } else {
        auto id = store.create_trie(name, TrieKind::plain);
        REQUIRE(id.ok());
        info.id = *id;
        info.name = std::string(name);
    }
    TrieReader reader(store, info);
    Trie t = Trie::open(&reader, info.root);
    for (const auto& [k, v] : content) REQUIRE(t.put(k, v).ok());
    auto batch = t.commit();
    REQUIRE(batch.ok());
    REQUIRE(apply_commit(store, info.id, *batch).ok());
    REQUIRE(store.commit_write().ok());
    return batch->root;
}

std::optional<bytes> get(NodeStore& store, std::string_view name, const bytes& key) {
    auto info = require_trie(store, name);
    REQUIRE(info.ok());
    TrieReader reader(store, *info);
    const Trie t = Trie::open(&reader, info->root);
    auto v = t.get(key);
    REQUIRE(v.ok());
    return *v;
}

void check_clean(NodeStore& store, std::string_view name) {
    auto info = require_trie(store, name);
    REQUIRE(info.ok());
    auto r = check_trie(store, *info);
    REQUIRE(r.ok());
    CHECK(r->problems.empty());
    CHECK(r->rows == r->reachable);
}

const std::string kUpper = "0x" + std::string(64, 'A');
const std::string kLower = "0x" + std::string(64, 'a');

}  // namespace

TEST_CASE("a 0x<64 hex> trie name is lowercased, other names are kept") {
    CHECK(canonical_trie_name(kUpper) == kLower);
    CHECK(canonical_trie_name("0X" + std::string(64, 'B')) == "0x" + std::string(64, 'b'));
    CHECK(canonical_trie_name("Main") == "Main");
    CHECK(canonical_trie_name("0x" + std::string(63, 'A')) == "0x" + std::string(63, 'A'));
    CHECK(canonical_trie_name("0x" + std::string(65, 'A')) == "0x" + std::string(65, 'A'));
    CHECK(canonical_trie_name("0x" + std::string(63, 'A') + "G") ==
          "0x" + std::string(63, 'A') + "G");
}

TEST_CASE("a trie created as 0xABAB... is found by either case, and listed lowercase") {
    TempFile f;
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(s.ok());
    NodeStore& store = **s;
    put_all(store, kUpper, {{text("k"), text("v")}});
    for (const std::string& name : {kUpper, kLower}) {
        auto t = store.find_trie(name);
        REQUIRE(t.ok());
        REQUIRE(t->has_value());
        CHECK((*t)->name == kLower);
    }
    auto all = store.list_tries();
    REQUIRE(all.ok());
    REQUIRE(all->size() == 1);
    CHECK((*all)[0].name == kLower);
    // A second create by the other case is the same trie: refused as existing.
    REQUIRE(store.begin_write().ok());
    auto again = store.create_trie(kLower, TrieKind::plain);
    CHECK_FALSE(again.ok());
    store.rollback();
}

TEST_CASE("no such trie: the message lists the first names and the count") {
    MemoryNodeStore store;
    CHECK(no_such_trie_error(store, "x").detail == "no trie named x; the file holds none");
    CHECK(no_such_trie_error(store, "").code == Errc::bad_input);
    CHECK(no_such_trie_error(store, "").detail == "a trie name cannot be empty");
    for (const char* n : {"g", "b", "a", "f", "c", "e", "d"}) put_all(store, n, {});
    const Error e = no_such_trie_error(store, "x");
    CHECK(e.code == Errc::no_such_trie);
    CHECK(e.detail == "no trie named x; the file holds 7: a, b, c, d, e, ...");
    TempFile f;
    auto s = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(s.ok());
    put_all(**s, "main", {});
    put_all(**s, "b", {});
    CHECK(require_trie(**s, "mian").error().detail ==
          "no trie named mian; the file holds 2: b, main");
}

TEST_CASE("copy: a new trie, independent of the one it copies") {
    const std::map<bytes, bytes> content = {{text("doe"), text("reindeer")},
                                            {text("dog"), text("puppy")},
                                            {text("dogglesworth"), text("cat")}};
    TempFile f;
    auto sqlite = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(sqlite.ok());
    MemoryNodeStore memory;
    for (NodeStore* store :
         {static_cast<NodeStore*>(sqlite->get()), static_cast<NodeStore*>(&memory)}) {
        const Hash256 root = put_all(*store, "main", content);
        auto c = copy_trie(*store, "main", "backup", false);
        REQUIRE_MESSAGE(c.ok(), test::why(c));
        CHECK(c->trie.name == "backup");
        CHECK(c->trie.root == root);
        CHECK(c->rows == store->count_rows(require_trie(*store, "main")->id).value());
        CHECK_FALSE(c->replaced);
        check_clean(*store, "backup");

        // An update of the copy leaves the original as it was, and the other way round.
        put_all(*store, "backup", {{text("dog"), text("wolf")}, {text("doge"), text("coin")}});
        CHECK(require_trie(*store, "main")->root == root);
        CHECK(get(*store, "main", text("dog")) == text("puppy"));
        CHECK(get(*store, "backup", text("dog")) == text("wolf"));
        put_all(*store, "main", {{text("doe"), bytes{}}});
        CHECK(get(*store, "backup", text("doe")) == text("reindeer"));
        check_clean(*store, "main");
        check_clean(*store, "backup");

        // An existing name is refused, unless replace.
        auto exists = copy_trie(*store, "main", "backup", false);
        REQUIRE_FALSE(exists.ok());
        CHECK(exists.error().code == Errc::bad_input);
        CHECK(get(*store, "backup", text("dog")) == text("wolf"));
        auto replaced = copy_trie(*store, "main", "backup", true);
        REQUIRE(replaced.ok());
        CHECK(replaced->replaced);
        CHECK(get(*store, "backup", text("dog")) == text("puppy"));
        CHECK(get(*store, "backup", text("doe")) == std::nullopt);
        check_clean(*store, "backup");

        auto self = copy_trie(*store, "main", "main", true);
        REQUIRE_FALSE(self.ok());
        CHECK(self.error().code == Errc::bad_input);
        auto missing = copy_trie(*store, "nope", "x", false);
        REQUIRE_FALSE(missing.ok());
        CHECK(missing.error().code == Errc::no_such_trie);
        CHECK_FALSE(store->find_trie("x").value().has_value());
    }
}

TEST_CASE("drop: the trie and its rows go, the others stay") {
    TempFile f;
    auto sqlite = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(sqlite.ok());
    MemoryNodeStore memory;
    for (NodeStore* store :
         {static_cast<NodeStore*>(sqlite->get()), static_cast<NodeStore*>(&memory)}) {
        std::mt19937_64 rng(7);
        put_all(*store, "a", test::random_mixed_content(rng, 200, 6, 0xff, false));
        put_all(*store, "b", test::random_mixed_content(rng, 200, 6, 0xff, false));
        const TrieId a = require_trie(*store, "a")->id;
        const uint64_t rows = store->count_rows(a).value();
        REQUIRE(rows > 0);
        auto d = drop_trie(*store, "a");
        REQUIRE(d.ok());
        CHECK(*d == rows);
        CHECK_FALSE(store->find_trie("a").value().has_value());
        CHECK(store->count_rows(a).value() == 0);
        check_clean(*store, "b");
        auto again = drop_trie(*store, "a");
        REQUIRE_FALSE(again.ok());
        CHECK(again.error().code == Errc::no_such_trie);
        // A trie made after the drop starts empty.
        put_all(*store, "c", {});
        CHECK(store->count_rows(require_trie(*store, "c")->id).value() == 0);
    }
}

namespace {

// Every key and value the walk shows: a leaf at its position and key, a branch's value at its
// position; checks each node's reference against its RLP on the way.
std::map<bytes, bytes> shown_pairs(NodeReader& reader, const Hash256& root, const TreeOptions& o,
                                   TreeSummary* summary = nullptr) {
    std::map<bytes, bytes> out;
    auto s = walk_tree(reader, root, o, [&](const TreeNode& n) {
        if (n.embedded) {
            CHECK(n.rlp.size() < 32);
        } else {
            CHECK(keccak256(n.rlp) == n.hash);
        }
        CHECK(n.depth <= o.max_depth);
        bytes at = n.position;
        if (n.kind == NodeView::Kind::leaf) append_unpacked(at, n.key);
        if (!n.value.empty()) out[at] = bytes(n.value.begin(), n.value.end());
    });
    REQUIRE_MESSAGE(s.ok(), test::why(s));
    if (summary != nullptr) *summary = *s;
    return out;
}

bytes nibbles_of(const bytes& key) {
    bytes out;
    append_unpacked(out, NibbleView(key));
    return out;
}

}  // namespace

TEST_CASE("walk_tree shows every pair, each node's hash or embedding, in key order") {
    std::mt19937_64 rng(11);
    for (int round = 0; round < 20; ++round) {
        test::StoredTrie st;
        const auto content = test::random_mixed_content(rng, 1 + rng() % 300, 5, 0x33, true);
        test::build(st, content);
        TrieReader reader = st.reader();
        TreeOptions all;
        all.max_depth = SIZE_MAX;
        all.max_nodes = SIZE_MAX;
        TreeSummary s;
        const auto shown = shown_pairs(reader, st.root, all, &s);
        std::map<bytes, bytes> want;
        for (const auto& [k, v] : content) want[nibbles_of(k)] = v;
        CHECK(shown == want);
        CHECK(s.cut_subtrees == 0);
        CHECK_FALSE(s.depth_cut);

        // From a prefix of a key: exactly the pairs under it.
        const bytes some = nibbles_of(
            std::next(content.begin(), static_cast<long>(rng() % content.size()))->first);
        const bytes from(some.begin(), some.begin() + static_cast<long>(rng() % (some.size() + 1)));
        all.from = from;
        std::map<bytes, bytes> under;
        for (const auto& [k, v] : want) {
            if (k.size() >= from.size() && std::equal(from.begin(), from.end(), k.begin())) {
                under[k] = v;
            }
        }
        CHECK(shown_pairs(reader, st.root, all) == under);
    }
}

TEST_CASE("walk_tree: limits, a path no key has, a damaged row") {
    test::StoredTrie st;
    std::map<bytes, bytes> content;
    for (int i = 0; i < 64; ++i) content[text("key" + std::to_string(i * 7919))] = bytes(40, 1);
    test::build(st, content);
    TrieReader reader = st.reader();

    TreeOptions o;
    o.max_depth = 1;
    size_t deepest = 0;
    size_t cut = 0;
    auto s = walk_tree(reader, st.root, o, [&](const TreeNode& n) {
        deepest = std::max(deepest, n.depth);
        cut += n.cut;
    });
    REQUIRE(s.ok());
    CHECK(deepest == 1);
    CHECK(s->depth_cut);
    CHECK(s->cut_subtrees == cut);
    CHECK(cut > 0);

    o.max_depth = SIZE_MAX;
    o.max_nodes = 5;
    size_t visited = 0;
    s = walk_tree(reader, st.root, o, [&](const TreeNode&) { ++visited; });
    REQUIRE(s.ok());
    CHECK(visited == 5);
    CHECK(s->nodes == 5);
    CHECK(s->nodes_cut);
    CHECK(s->cut_subtrees > 0);

    o.max_nodes = SIZE_MAX;
    o.from = nibbles_of(text("x"));
    s = walk_tree(reader, st.root, o, [](const TreeNode&) { FAIL("visited"); });
    REQUIRE(s.ok());
    CHECK_FALSE(s->found);

    // A row changed behind the store's back is refused where it is read, as every reader
    // refuses it.
    auto rows = st.rows();
    REQUIRE(rows.size() > 1);
    const auto victim = std::next(rows.begin());
    bytes damaged = victim->second;
    damaged.back() ^= 1;
    REQUIRE(st.store.begin_write().ok());
    REQUIRE(st.store.put(st.info.id, victim->first, damaged).ok());
    REQUIRE(st.store.commit_write().ok());
    o.from = {};
    s = walk_tree(reader, st.root, o, [](const TreeNode&) {});
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Errc::storage_hash_mismatch);
    CHECK(s.error().path == path_string(victim->first));
}

TEST_CASE("copy and drop are one write: a fault at any step leaves the file as it was") {
    TempFile f;
    auto opened = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(opened.ok());
    SqliteNodeStore& inner = **opened;
    std::mt19937_64 rng(5);
    const auto content = test::random_mixed_content(rng, 300, 6, 0xff, false);
    const Hash256 root = put_all(inner, "main", content);
    put_all(inner, "old", {{text("k"), text("v")}});
    const uint64_t main_rows = inner.count_rows(require_trie(inner, "main")->id).value();
    FaultyNodeStore faulty(inner);
    for (const bool drop : {false, true}) {
        CAPTURE(drop);
        for (const auto op : {FaultyNodeStore::Op::read, FaultyNodeStore::Op::write}) {
            uint64_t failures = 0;
            for (uint64_t n = 1;; ++n) {
                CAPTURE(n);
                faulty.fail_at(op, n, FaultyNodeStore::Mode::once);
                const bool ok = drop ? drop_trie(faulty, "old").ok()
                                     : copy_trie(faulty, "main", "old", true).ok();
                const uint64_t faults = faulty.faults();
                faulty.disarm();
                // As it was: "old" with its one pair, main untouched.
                auto old = inner.find_trie("old");
                REQUIRE(old.ok());
                if (faults == 0) {
                    REQUIRE(ok);
                    if (drop) {
                        CHECK_FALSE(old->has_value());
                    } else {
                        CHECK((*old)->root == root);
                        check_clean(inner, "old");
                    }
                    break;
                }
                REQUIRE_FALSE(ok);
                ++failures;
                REQUIRE(old->has_value());
                CHECK(get(inner, "old", text("k")) == text("v"));
                CHECK(inner.count_rows((*old)->id).value() == 1);
                CHECK(require_trie(inner, "main")->root == root);
                CHECK(inner.count_rows(require_trie(inner, "main")->id).value() == main_rows);
            }
            CHECK(failures > 0);
            // The one-pair trie back for the next round.
            if (!drop) REQUIRE(drop_trie(inner, "old").ok());
            put_all(inner, "old", {{text("k"), text("v")}});
        }
    }
}
