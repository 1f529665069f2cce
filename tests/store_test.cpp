// The differential test of stored tries: every read of a reopened trie goes through the
// store by path, and is compared with an in-memory oracle (a std::map).
#include "test_util.hpp"

#include <mpt/ops/trie_file.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <map>
#include <set>

using namespace mpt;
using mpt::test::TempFile;

namespace {

using Content = std::map<bytes, bytes>;

// Key families, disjoint by first nibble:
//   1: random 32-byte keys;
//   2: 32-byte keys sharing a 20-byte prefix: an extension of 39 nibbles (1..39) forms;
//   3: 32-byte keys sharing a 31-byte prefix: an extension of 61 nibbles forms;
//   4: keys of 1 to 6 bytes, some prefixes of others (values in branches).
struct Families {
    explicit Families(std::mt19937_64& rng) : rng_(rng) {
        prefix20_ = test::random_bytes(rng, 20);
        prefix20_[0] = static_cast<uint8_t>(0x20 | (prefix20_[0] & 0x0f));
        prefix31_ = test::random_bytes(rng, 31);
        prefix31_[0] = static_cast<uint8_t>(0x30 | (prefix31_[0] & 0x0f));
    }

    bytes key(int family) {
        switch (family) {
            case 1: {
                bytes k = test::random_bytes(rng_, 32);
                k[0] = static_cast<uint8_t>(0x10 | (k[0] & 0x0f));
                return k;
            }
            case 2: {
                bytes k = prefix20_;
                const bytes tail = test::random_bytes(rng_, 12);
                k.insert(k.end(), tail.begin(), tail.end());
                return k;
            }
            case 3: {
                bytes k = prefix31_;
                k.push_back(static_cast<uint8_t>(rng_()));
                return k;
            }
            default: {
                if (!short_keys_.empty() && rng_() % 2) {
                    bytes k = short_keys_[rng_() % short_keys_.size()];
                    if (k.size() > 1 && rng_() % 2) {
                        k.resize(1 + rng_() % (k.size() - 1));
                    } else if (k.size() < 6) {
                        k.push_back(static_cast<uint8_t>(rng_() & 0x11));
                    }
                    return k;
                }
                bytes k = test::random_bytes(rng_, 1 + rng_() % 6);
                for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(k[i] & 0x11);
                k[0] = static_cast<uint8_t>(0x40 | (k[0] & 0x01));
                short_keys_.push_back(k);
                return k;
            }
        }
    }

    // Two keys of family 2 (3) that part right after the shared prefix, so the extension
    // ends exactly there.
    std::pair<bytes, bytes> parting_pair(int family) {
        bytes a = key(family), b = key(family);
        const size_t at = family == 2 ? 20 : 31;
        a[at] = static_cast<uint8_t>(0x00 | (a[at] & 0x0f));
        b[at] = static_cast<uint8_t>(0xf0 | (b[at] & 0x0f));
        return {a, b};
    }

    bytes value() {
        // Short values make embedded leaves; 32-byte values make hashed ones.
        return test::random_bytes(rng_, rng_() % 3 == 0 ? 32 : 1 + rng_() % 4);
    }

private:
    std::mt19937_64& rng_;
    bytes prefix20_, prefix31_;
    std::vector<bytes> short_keys_;
};

Hash256 scratch_root(const Content& m) {
    StackTrie st;
    for (const auto& [k, v] : m) REQUIRE(st.add(k, v).ok());
    return st.finish();
}

// The rows a from-scratch build of m writes.
std::map<bytes, bytes> scratch_rows(const Content& m) {
    struct Collect : NodeSink {
        std::map<bytes, bytes> rows;
        void put(bytes_view p, bytes_view r) override {
            rows[bytes(p.begin(), p.end())] = bytes(r.begin(), r.end());
        }
    } sink;
    StackTrie st(&sink);
    for (const auto& [k, v] : m) REQUIRE(st.add(k, v).ok());
    st.finish();
    return sink.rows;
}

std::map<bytes, bytes> stored_rows(NodeStore& s, TrieId id) {
    std::map<bytes, bytes> rows;
    REQUIRE(s.scan(id, {}, [&](bytes_view p, bytes_view r) {
                 rows[bytes(p.begin(), p.end())] = bytes(r.begin(), r.end());
                 return true;
             }).ok());
    return rows;
}

// Extension path lengths found by decoding every stored row (and what it embeds): an oracle
// independent of the trie's traversal.
std::multiset<size_t> extension_lengths(NodeStore& s, TrieId id) {
    std::multiset<size_t> lens;
    std::function<void(bytes_view)> visit = [&](bytes_view rlp) {
        auto v = decode_node(rlp);
        REQUIRE(v.ok());
        if (v->kind == NodeView::Kind::extension) {
            lens.insert(v->path.size());
            if (v->child.size() < 32) visit(v->child);
        } else if (v->kind == NodeView::Kind::branch) {
            for (auto c : v->children) {
                if (!c.empty() && c.size() < 32) visit(c);
            }
        }
    };
    REQUIRE(s.scan(id, {}, [&](bytes_view, bytes_view r) {
                 visit(r);
                 return true;
             }).ok());
    return lens;
}

void expect_reads(NodeStore& store, const TrieInfo& info, const Content& m, Families& fam,
                  std::mt19937_64& rng) {
    TrieReader reader(store, info);
    const Trie t = Trie::open(&reader, info.root);
    bytes v;
    for (const auto& [k, want] : m) {
        auto got = t.get(k, v);
        REQUIRE_MESSAGE(got.ok(), mpt::test::why(got));
        REQUIRE(*got);
        REQUIRE(v == want);
    }
    // Absent keys: fresh ones from each family, and neighbours of present keys.
    for (int i = 0; i < 200; ++i) {
        bytes k = fam.key(1 + static_cast<int>(rng() % 4));
        if (i % 3 == 0 && !m.empty()) {
            auto it = m.begin();
            std::advance(it, static_cast<long>(rng() % m.size()));
            k = it->first;
            if (k.size() > 1 && rng() % 2) {
                k.pop_back();
            } else {
                k.push_back(static_cast<uint8_t>(rng()));
            }
        }
        if (m.count(k)) continue;
        auto got = t.get(k, v);
        REQUIRE(got.ok());
        REQUIRE_FALSE(*got);
    }
    Content seen;
    REQUIRE(t.for_each({}, [&](bytes_view k, bytes_view val) {
                 seen[bytes(k.begin(), k.end())] = bytes(val.begin(), val.end());
                 return true;
             }).ok());
    REQUIRE(seen == m);
}

void differential(NodeStore& store, uint64_t seed) {
    std::mt19937_64 rng(seed);
    Families fam(rng);
    Content m;
    for (int f = 1; f <= 4; ++f) {
        for (int i = 0; i < 40; ++i) m[fam.key(f)] = fam.value();
    }
    for (int f : {2, 3}) {
        auto [a, b] = fam.parting_pair(f);
        m[a] = fam.value();
        m[b] = fam.value();
    }

    // Build in memory, commit into the store.
    Trie t;
    for (const auto& [k, v] : m) REQUIRE(t.put(k, v).ok());
    auto batch = t.commit();
    REQUIRE(batch.ok());
    REQUIRE(batch->root == scratch_root(m));
    REQUIRE(store.begin_write().ok());
    auto id = store.create_trie("main", TrieKind::plain);
    REQUIRE(id.ok());
    REQUIRE(apply_commit(store, *id, *batch).ok());
    REQUIRE(store.commit_write().ok());

    const auto lens = extension_lengths(store, *id);
    REQUIRE_MESSAGE(lens.count(39) >= 1, "no 39-nibble extension formed");
    REQUIRE_MESSAGE(lens.count(61) >= 1, "no 61-nibble extension formed");
    REQUIRE(stored_rows(store, *id) == scratch_rows(m));

    for (int round = 0; round < 12; ++round) {
        auto info = require_trie(store, "main");
        REQUIRE(info.ok());
        expect_reads(store, *info, m, fam, rng);

        // Mutate the reopened trie: overwrites, deletions (some collapse whole families),
        // and new keys.
        TrieReader reader(store, *info);
        Trie r = Trie::open(&reader, info->root);
        const int ops = 1 + static_cast<int>(rng() % 40);
        for (int i = 0; i < ops; ++i) {
            const int what = static_cast<int>(rng() % 3);
            if (what == 0 || m.empty()) {
                const bytes k = fam.key(1 + static_cast<int>(rng() % 4));
                m[k] = fam.value();
                REQUIRE(r.put(k, m[k]).ok());
            } else {
                auto it = m.begin();
                std::advance(it, static_cast<long>(rng() % m.size()));
                if (what == 1) {
                    it->second = fam.value();
                    REQUIRE(r.put(it->first, it->second).ok());
                } else {
                    REQUIRE(r.remove(it->first).ok());
                    m.erase(it);
                }
            }
        }
        auto b = r.commit();
        REQUIRE_MESSAGE(b.ok(), mpt::test::why(b));
        REQUIRE(b->root == scratch_root(m));
        REQUIRE(store.begin_write().ok());
        REQUIRE(apply_commit(store, info->id, *b).ok());
        REQUIRE(store.commit_write().ok());
        // The file holds exactly the rows of a from-scratch build, and check is clean.
        REQUIRE(stored_rows(store, info->id) == scratch_rows(m));
        auto after = require_trie(store, "main");
        REQUIRE(after.ok());
        auto report = check_trie(store, *after);
        REQUIRE(report.ok());
        REQUIRE(report->problems.empty());
    }
    auto info = require_trie(store, "main");
    REQUIRE(info.ok());
    expect_reads(store, *info, m, fam, rng);
}

}  // namespace

TEST_CASE("differential: reopened trie in memory store") {
    const uint64_t seed = test::seed("store_differential_memory");
    for (uint64_t i = 0; i < 6; ++i) {
        MemoryNodeStore store;
        differential(store, seed + i);
    }
}

TEST_CASE("differential: reopened trie in an SQLite file") {
    const uint64_t seed = test::seed("store_differential_sqlite");
    for (uint64_t i = 0; i < 3; ++i) {
        TempFile f;
        auto store = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
        REQUIRE(store.ok());
        differential(**store, seed + i);
    }
}

TEST_CASE("build_trie: create, update, secure kind, replace") {
    TempFile f;
    auto store = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(store.ok());
    auto doc = parse_kv(R"({"doe": "reindeer", "dog": "puppy", "dogglesworth": "cat"})");
    REQUIRE(doc.ok());
    BuildOptions o;
    auto r = build_trie(**store, *doc, o);
    REQUIRE(r.ok());
    CHECK(r->created);
    CHECK(to_hex(r->root) == "0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3");
    // The same content applied again changes nothing.
    auto again = build_trie(**store, *doc, o);
    REQUIRE(again.ok());
    CHECK(!again->created);
    CHECK(again->root == r->root);
    CHECK(again->rows_written == 0);
    // Mixing kinds is refused.
    BuildOptions secure = o;
    secure.secure = true;
    auto mixed = build_trie(**store, *doc, secure);
    REQUIRE(!mixed.ok());
    CHECK(mixed.error().code == Errc::trie_kind_mismatch);
    // A secure trie in the same file hashes keys on update too.
    secure.trie = "s";
    auto half = parse_kv(R"({"doe": "reindeer", "dog": "puppy"})");
    auto rest = parse_kv(R"([["dogglesworth", "cat"]])");
    REQUIRE(build_trie(**store, *half, secure).ok());
    BuildOptions update = o;
    update.trie = "s";  // no --secure: the recorded kind applies
    auto s = build_trie(**store, *rest, update);
    REQUIRE(s.ok());
    CHECK(to_hex(s->root) == "0xd4cd937e4a4368d7931a9cf51686b7e10abb3dce38a39000fd7902a092b64585");
    // Replace drops the old content.
    BuildOptions replace = o;
    replace.replace = true;
    auto one = parse_kv(R"({"dog": "puppy"})");
    auto rep = build_trie(**store, *one, replace);
    REQUIRE(rep.ok());
    auto info = require_trie(**store, "main");
    REQUIRE(info.ok());
    CHECK(stored_rows(**store, info->id).size() == 1);
    auto report = check_trie(**store, *info);
    REQUIRE(report.ok());
    CHECK(report->problems.empty());
}

TEST_CASE("set_cache_kib: a connection's page cache, read back, reads unchanged") {
    TempFile f;
    auto store = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(store.ok());
    auto doc = parse_kv(R"({"doe": "reindeer", "dog": "puppy", "dogglesworth": "cat"})");
    REQUIRE(doc.ok());
    auto built = build_trie(**store, *doc, BuildOptions{});
    REQUIRE(built.ok());
    CHECK((*store)->cache_kib().value() == 64 * 1024);  // as opened
    REQUIRE((*store)->set_cache_kib(16 * 1024).ok());
    CHECK((*store)->cache_kib().value() == 16 * 1024);
    REQUIRE((*store)->set_cache_kib(8).ok());
    CHECK((*store)->cache_kib().value() == 8);
    auto info = (*store)->find_trie("main");
    REQUIRE(info.ok());
    REQUIRE(info->has_value());
    TrieReader reader(**store, **info);
    const Trie trie = Trie::open(&reader, built->root);
    CHECK(trie.get(bytes{'d', 'o', 'g'}).value() ==
          std::optional<bytes>(bytes{'p', 'u', 'p', 'p', 'y'}));
}
