#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <mpt/proof/diff.hpp>

#include "stored_trie.hpp"
#include "test_util.hpp"

using namespace mpt;
using mpt::test::build;
using mpt::test::contents;
using mpt::test::h;
using mpt::test::StoredTrie;
using mpt::test::update;

namespace {

struct Change {
    DiffEntry::Kind kind;
    bytes key, old_value, new_value;
    friend bool operator==(const Change&, const Change&) = default;
};

std::string show(const Change& c) {
    const char* sign = c.kind == DiffEntry::Kind::added     ? "+"
                       : c.kind == DiffEntry::Kind::removed ? "-"
                                                            : "~";
    return std::string(sign) + " " + to_hex(c.key) + " " + to_hex(c.old_value) + " " +
           to_hex(c.new_value);
}

std::string show(const std::vector<Change>& v) {
    std::string s;
    for (const Change& c : v) s += show(c) + "\n";
    return s;
}

// The difference of two key/value maps, as the diff must report it: by a second route,
// the set difference of two full iterations, merged in key order.
std::vector<Change> expected_diff(const std::map<bytes, bytes>& a,
                                  const std::map<bytes, bytes>& b) {
    std::vector<Change> out;
    auto ia = a.begin();
    auto ib = b.begin();
    while (ia != a.end() || ib != b.end()) {
        if (ib == b.end() || (ia != a.end() && ia->first < ib->first)) {
            out.push_back({DiffEntry::Kind::removed, ia->first, ia->second, {}});
            ++ia;
        } else if (ia == a.end() || ib->first < ia->first) {
            out.push_back({DiffEntry::Kind::added, ib->first, {}, ib->second});
            ++ib;
        } else {
            if (ia->second != ib->second) {
                out.push_back({DiffEntry::Kind::changed, ia->first, ia->second, ib->second});
            }
            ++ia;
            ++ib;
        }
    }
    return out;
}

struct DiffRun {
    std::vector<Change> changes;
    DiffStats stats;
};

DiffRun run_diff(StoredTrie& a, StoredTrie& b, DiffReads reads = DiffReads::differing) {
    TrieReader ra = a.reader();
    TrieReader rb = b.reader();
    DiffRun run;
    auto r = diff_tries(
        {&ra, a.root}, {&rb, b.root},
        [&](const DiffEntry& e) {
            run.changes.push_back({e.kind, bytes(e.key.begin(), e.key.end()),
                                   bytes(e.old_value.begin(), e.old_value.end()),
                                   bytes(e.new_value.begin(), e.new_value.end())});
            return true;
        },
        reads);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    run.stats = *r;
    return run;
}

NodeDiff run_nodes(StoredTrie& a, StoredTrie& b, DiffReads reads = DiffReads::differing) {
    TrieReader ra = a.reader();
    TrieReader rb = b.reader();
    auto r = diff_nodes({&ra, a.root}, {&rb, b.root}, reads);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    return std::move(*r);
}

// Checks every property the two tries must satisfy together.
void check_pair(StoredTrie& a, StoredTrie& b) {
    const auto ca = contents(a);
    const auto cb = contents(b);

    // The diff is the set difference of the two iterations, in key order.
    const DiffRun run = run_diff(a, b);
    const auto want = expected_diff(ca, cb);
    CHECK_MESSAGE(run.changes == want, "got:\n" << show(run.changes) << "want:\n" << show(want));
    // Reversed, it is the inverse.
    CHECK(run_diff(b, a).changes == expected_diff(cb, ca));
    // Reading every node gives the same answer, and reads every row of both (a trie built
    // whole has no row its root does not reach).
    const DiffRun all = run_diff(a, b, DiffReads::all);
    CHECK(all.changes == want);
    CHECK(all.stats.nodes_read_a == a.rows().size());
    CHECK(all.stats.nodes_read_b == b.rows().size());
    {
        const NodeDiff some = run_nodes(a, b);
        const NodeDiff every = run_nodes(a, b, DiffReads::all);
        CHECK(every.writes == some.writes);
        CHECK(every.deletes == some.deletes);
    }

    // Applied to A as a change set, it gives B's root.
    {
        TrieReader ra = a.reader();
        Trie t = Trie::open(&ra, a.root);
        for (const Change& c : run.changes) {
            if (c.kind == DiffEntry::Kind::removed) {
                REQUIRE(t.remove(c.key).ok());
            } else {
                REQUIRE(t.put(c.key, c.new_value).ok());
            }
        }
        CHECK(to_hex(t.commit().value().root) == to_hex(b.root));
    }

    // The node lists move A's rows to B's rows exactly.
    const NodeDiff nd = run_nodes(a, b);
    CHECK(std::is_sorted(nd.writes.begin(), nd.writes.end(), bytes_less));
    CHECK(std::is_sorted(nd.deletes.begin(), nd.deletes.end(), bytes_less));
    auto rows = a.rows();
    const auto rows_b = b.rows();
    for (const bytes& p : nd.deletes) {
        CHECK(rows.count(p) == 1);  // only rows that exist are deleted
        CHECK(rows_b.count(p) == 0);
        rows.erase(p);
    }
    for (const bytes& p : nd.writes) {
        REQUIRE(rows_b.count(p) == 1);
        // A write never rewrites a row with its own content.
        CHECK((rows.count(p) == 0 || rows.at(p) != rows_b.at(p)));
        rows[p] = rows_b.at(p);
    }
    CHECK(rows == rows_b);
}

// Random keys of mixed lengths, some prefixes of others, every key masked.
std::map<bytes, bytes> random_content(std::mt19937_64& rng, size_t n, uint8_t mask) {
    return mpt::test::random_mixed_content(rng, n, 5, mask, true);
}

// A mutation of m: some keys changed, removed, added (prefixes and extensions included).
std::map<bytes, bytes> mutate(std::mt19937_64& rng, std::map<bytes, bytes> m, uint8_t mask) {
    std::vector<bytes> keys;
    for (const auto& [k, v] : m) keys.push_back(k);
    const size_t edits = 1 + rng() % 8;
    for (size_t i = 0; i < edits; ++i) {
        switch (rng() % 4) {
            case 0:
                if (!keys.empty()) m.erase(keys[rng() % keys.size()]);
                break;
            case 1:
                if (!keys.empty()) {
                    m[keys[rng() % keys.size()]] =
                        mpt::test::random_bytes(rng, 1 + rng() % (rng() % 2 ? 40 : 3));
                }
                break;
            default: {
                bytes k = keys.empty() ? bytes{} : keys[rng() % keys.size()];
                if (rng() % 2 && !k.empty()) {
                    k.resize(rng() % k.size());
                } else {
                    const bytes tail = mpt::test::random_bytes(rng, rng() % 3);
                    k.insert(k.end(), tail.begin(), tail.end());
                }
                for (auto& x : k) x &= mask;
                m[k] = mpt::test::random_bytes(rng, 1 + rng() % (rng() % 2 ? 40 : 3));
            }
        }
    }
    return m;
}

bytes big(uint8_t fill) { return bytes(40, fill); }

}  // namespace

TEST_CASE("diff: structural mismatches") {
    using K = DiffEntry::Kind;
    struct Case {
        const char* name;
        std::map<bytes, bytes> a, b;
    };
    const bytes s1 = h("01"), s2 = h("02");  // short values: embedded leaves
    const std::vector<Case> cases = {
        // Root extension over 1,2,3,4 in A; in B a key leaves at nibble 2: a branch there.
        {"extension vs branch",
         {{h("1234aa"), big(1)}, {h("1234bb"), big(2)}},
         {{h("1234aa"), big(1)}, {h("1234bb"), big(2)}, {h("1534"), big(3)}}},
        // A single leaf at the root in A; B adds a sibling.
        {"leaf vs branch", {{h("1234"), big(1)}}, {{h("1234"), big(1)}, {h("1235"), big(2)}}},
        {"leaf vs branch, embedded", {{h("1234"), s1}}, {{h("1234"), s1}, {h("1235"), s2}}},
        // Extensions of different lengths over the same branch content.
        {"different extension lengths",
         {{h("123456"), big(1)}, {h("123457"), big(2)}},
         {{h("123456"), big(1)}, {h("123457"), big(2)}, {h("1299"), big(3)}}},
        // Keys that are prefixes of others: values in branches' 17th slot.
        {"prefix keys with branch values",
         {{h("12"), big(1)}, {h("1234"), big(2)}, {h("1235"), big(3)}},
         {{h("12"), big(9)}, {h("1234"), big(2)}, {h("1235"), big(3)}, {h(""), s1}}},
        {"branch value removed",
         {{h("12"), big(1)}, {h("1234"), big(2)}, {h("1235"), big(3)}},
         {{h("1234"), big(2)}, {h("1235"), big(3)}}},
        // The same key moves from an embedded to a hashed leaf.
        {"embedded vs hashed child",
         {{h("1234"), s1}, {h("1235"), s2}},
         {{h("1234"), big(1)}, {h("1235"), s2}}},
        // A's leaf sits where B has a branch whose subtree still holds the same pair.
        {"leaf inside a new extension",
         {{h("aa"), big(1)}, {h("bbccdd"), big(2)}},
         {{h("aa"), big(1)}, {h("bbccdd"), big(2)}, {h("bbccee"), big(3)}}},
        {"empty vs full", {}, {{h("00"), s1}, {h("0011"), big(2)}, {h("ff"), s2}}},
        {"disjoint", {{h("11"), s1}, {h("1111"), s2}}, {{h("22"), s1}, {h("2222"), s2}}},
        {"empty key only", {{h(""), s1}}, {{h(""), s2}}},
    };
    for (const Case& c : cases) {
        CAPTURE(c.name);
        StoredTrie a, b;
        build(a, c.a);
        build(b, c.b);
        check_pair(a, b);
    }

    // Two cases spelled out by hand as well.
    StoredTrie a, b;
    build(a, cases[0].a);
    build(b, cases[0].b);
    const auto run = run_diff(a, b);
    REQUIRE(run.changes.size() == 1);
    CHECK(run.changes[0] == Change{K::added, h("1534"), {}, big(3)});
    StoredTrie c, d;
    build(c, cases[4].a);
    build(d, cases[4].b);
    const std::vector<Change> want = {{K::added, h(""), {}, s1},
                                      {K::changed, h("12"), big(1), big(9)}};
    CHECK(run_diff(c, d).changes == want);
}

TEST_CASE("diff: random pairs agree with the set difference of full iterations") {
    std::mt19937_64 rng(mpt::test::seed("diff_random"));
    for (int round = 0; round < 300; ++round) {
        const uint8_t mask = round % 3 == 0 ? 0xff : round % 3 == 1 ? 0x33 : 0x11;
        const auto ca = random_content(rng, rng() % 50, mask);
        const auto cb =
            round % 5 == 0 ? random_content(rng, rng() % 50, mask) : mutate(rng, ca, mask);
        StoredTrie a, b;
        build(a, ca);
        build(b, cb);
        CAPTURE(round);
        check_pair(a, b);
        // B reached from A by an in-place update of A's rows: the same properties.
        StoredTrie a2;
        build(a2, ca);
        std::map<bytes, bytes> changes;
        for (const auto& [k, v] : ca) {
            if (!cb.count(k)) changes[k] = {};
        }
        for (const auto& [k, v] : cb) changes[k] = v;
        StoredTrie b2;
        b2.store = a2.store;
        b2.info = a2.info;
        b2.root = a2.root;
        update(b2, changes);
        REQUIRE(b2.root == b.root);
        check_pair(a2, b2);
    }
}

TEST_CASE("diff: a trie against itself is empty and reads nothing") {
    std::mt19937_64 rng(mpt::test::seed("diff_self"));
    for (int round = 0; round < 20; ++round) {
        StoredTrie a;
        build(a, random_content(rng, 1 + rng() % 50, 0x33));
        const DiffRun run = run_diff(a, a);
        CHECK(run.changes.empty());
        // Equal roots: not even the root row is read.
        CHECK(run.stats.nodes_read_a == 0);
        CHECK(run.stats.nodes_read_b == 0);
        const NodeDiff nd = run_nodes(a, a);
        CHECK(nd.writes.empty());
        CHECK(nd.deletes.empty());
    }
    StoredTrie e;
    build(e, {});
    CHECK(run_diff(e, e).changes.empty());
}

TEST_CASE("diff: economy on two 100k-key tries differing in 10 keys") {
    std::mt19937_64 rng(mpt::test::seed("diff_economy"));
    std::map<bytes, bytes> ca;
    while (ca.size() < 100000)
        ca[mpt::test::random_bytes(rng, 32)] = mpt::test::random_bytes(rng, 8);
    StoredTrie a;
    build(a, ca);
    // B is A's store updated in place: 4 values changed, 3 keys removed, 3 added.
    std::vector<bytes> keys;
    for (const auto& [k, v] : ca) keys.push_back(k);
    std::shuffle(keys.begin(), keys.end(), rng);
    std::map<bytes, bytes> changes;
    for (size_t i = 0; i < 4; ++i) changes[keys[i]] = mpt::test::random_bytes(rng, 8);
    for (size_t i = 4; i < 7; ++i) changes[keys[i]] = {};
    while (changes.size() < 10)
        changes[mpt::test::random_bytes(rng, 32)] = mpt::test::random_bytes(rng, 8);
    StoredTrie b;
    b.store = a.store;
    b.info = a.info;
    b.root = a.root;
    update(b, changes);

    const DiffRun run = run_diff(a, b);
    REQUIRE(run.changes.size() == 10);
    for (const Change& c : run.changes) {
        REQUIRE(changes.count(c.key) == 1);
        CHECK(c.new_value == changes.at(c.key));
    }
    MESSAGE("nodes read: A " << run.stats.nodes_read_a << ", B " << run.stats.nodes_read_b);
    // The bound. A side reads only hashed nodes on the root-to-leaf paths of the 10 keys:
    // every node off those paths is referenced identically on both sides, and a pair of
    // equal references is never entered. Such a path holds its branches, the leaf, and an
    // extension only where a subtree's keys all agree on a further nibble; with n = 100k
    // uniform keys a position at depth j holds ~n / 16^j keys (>= 24 for j <= 3), so
    // extensions appear only in the last level or two. A key's leaf sits one nibble below
    // its longest common prefix with any other key: log16(n) ~ 4.2 gives depth 4-6, and
    // P(a key shares >= 8 nibbles with another) <= n / 16^8 ~ 2.3e-5. So a path is at most
    // 8 branches + 1 extension + the leaf = 10 nodes, and 10 keys read at most 10 * 10 = 100
    // nodes per side (measured: about 47, as the paths share the root and upper levels).
    CHECK(run.stats.nodes_read_a <= 100);
    CHECK(run.stats.nodes_read_b <= 100);
    CHECK(run.stats.nodes_read_a >= 10);  // each key's leaf or its absence had to be seen
    const NodeDiff nd = run_nodes(a, b);
    CHECK(nd.stats.nodes_read_a <= 100);
    CHECK(nd.stats.nodes_read_b <= 100);
    CHECK(nd.writes.size() <= 100);
}

TEST_CASE("diff: damaged rows are storage errors, stopping early is honoured") {
    StoredTrie a, b;
    build(a, {{h("1234aa"), big(1)}, {h("1234bb"), big(2)}});
    build(b, {{h("1234aa"), big(1)}, {h("1234bb"), big(3)}});
    // B's branch at 1,2,3,4 replaced by A's: a row exists but B's extension holds another hash.
    REQUIRE(b.store.begin_write().ok());
    REQUIRE(b.store.put(b.info.id, bytes{1, 2, 3, 4}, a.rows().at(bytes{1, 2, 3, 4})).ok());
    REQUIRE(b.store.commit_write().ok());
    TrieReader ra = a.reader();
    TrieReader rb = b.reader();
    auto r = diff_tries({&ra, a.root}, {&rb, b.root}, [](const DiffEntry&) { return true; });
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_hash_mismatch);
    CHECK(r.error().trie == "B: trie main");
    REQUIRE(b.store.begin_write().ok());
    REQUIRE(b.store.erase(b.info.id, bytes{1, 2, 3, 4}).ok());
    REQUIRE(b.store.commit_write().ok());
    auto n = diff_nodes({&ra, a.root}, {&rb, b.root});
    REQUIRE(!n.ok());
    CHECK(n.error().code == Errc::storage_missing_node);

    StoredTrie c, d;
    build(c, {});
    build(d, {{h("01"), big(1)}, {h("02"), big(2)}, {h("03"), big(3)}});
    TrieReader rc = c.reader();
    TrieReader rd = d.reader();
    size_t seen = 0;
    REQUIRE(diff_tries({&rc, c.root}, {&rd, d.root}, [&](const DiffEntry&) {
                ++seen;
                return seen < 2;
            }).ok());
    CHECK(seen == 2);
}

TEST_CASE("diff: equal subtrees are trusted, unless every node is read") {
    std::mt19937_64 rng(mpt::test::seed("diff_read_all"));
    StoredTrie a, b;
    const auto content = random_content(rng, 300, 0x44);
    build(a, content);
    build(b, content);
    // Damage one row below B's root: another row's RLP in its place, then no row at all.
    const auto rows = b.rows();
    REQUIRE(rows.size() > 2);
    auto victim = std::next(rows.begin(), static_cast<long>(1 + rng() % (rows.size() - 1)));
    INFO("damaged path " << to_hex(victim->first));
    bytes other;
    for (const auto& [path, rlp] : rows) {
        if (rlp != victim->second) other = rlp;
    }
    REQUIRE(!other.empty());
    REQUIRE(b.store.begin_write().ok());
    REQUIRE(b.store.put(b.info.id, victim->first, other).ok());
    REQUIRE(b.store.commit_write().ok());
    // The roots are equal: the walk reads nothing and finds the tries identical.
    const DiffRun trusted = run_diff(a, b);
    CHECK(trusted.changes.empty());
    CHECK(trusted.stats.nodes_read_b == 0);
    TrieReader ra = a.reader();
    TrieReader rb = b.reader();
    const auto none = [](const DiffEntry&) { return true; };
    auto r = diff_tries({&ra, a.root}, {&rb, b.root}, none, DiffReads::all);
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_hash_mismatch);
    CHECK(r.error().trie == "B: trie main");
    CHECK(r.error().path == path_string(victim->first));
    // On the A side too, and by diff_nodes.
    auto r2 = diff_tries({&rb, b.root}, {&ra, a.root}, none, DiffReads::all);
    REQUIRE(!r2.ok());
    CHECK(r2.error().trie == "A: trie main");
    REQUIRE(b.store.begin_write().ok());
    REQUIRE(b.store.erase(b.info.id, victim->first).ok());
    REQUIRE(b.store.commit_write().ok());
    CHECK(run_nodes(a, b).writes.empty());
    auto n = diff_nodes({&ra, a.root}, {&rb, b.root}, DiffReads::all);
    REQUIRE(!n.ok());
    CHECK(n.error().code == Errc::storage_missing_node);
}
