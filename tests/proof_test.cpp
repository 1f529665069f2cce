#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mpt/proof/proof.hpp>
#include <mpt/store/node_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::b;
using mpt::test::h;

namespace {

using Entries = std::vector<std::pair<bytes, bytes>>;

// A trie committed into a memory store and read back by path, as the trie file will be.
struct Stored {
    MemoryNodeStore store;
    std::optional<TrieReader> reader;
    Hash256 root{};
    Entries entries;  // sorted
};

std::unique_ptr<Stored> store_trie(const std::map<bytes, bytes>& m) {
    auto s = std::make_unique<Stored>();
    REQUIRE(s->store.begin_write().ok());
    const TrieId id = s->store.create_trie("main", TrieKind::plain).value();
    Trie t;
    for (const auto& [k, v] : m) REQUIRE(t.put(k, v).ok());
    const CommitBatch batch = t.commit().value();
    REQUIRE(apply_commit(s->store, id, batch).ok());
    REQUIRE(s->store.commit_write().ok());
    s->reader.emplace(s->store, s->store.find_trie("main").value().value());
    s->root = batch.root;
    s->entries.assign(m.begin(), m.end());
    return s;
}

std::vector<bytes> prove_ok(Stored& s, bytes_view key) {
    auto p = prove(*s.reader, s.root, key);
    REQUIRE_MESSAGE(p.ok(), mpt::test::why(p));
    return std::move(p).value();
}

// The edge proofs of first and last, deduplicated.
std::vector<bytes> edge_proof(Stored& s, bytes_view first, bytes_view last) {
    std::vector<bytes> proof = prove_ok(s, first);
    std::set<Hash256> have;
    for (const bytes& n : proof) have.insert(keccak256(n));
    for (bytes& n : prove_ok(s, last)) {
        if (have.insert(keccak256(n)).second) proof.push_back(std::move(n));
    }
    return proof;
}

// geth's increaseKey / decreaseKey: the next and previous key of the same length.
bytes increased(bytes k) {
    for (size_t i = k.size(); i-- > 0;) {
        if (++k[i] != 0) break;
    }
    return k;
}
bytes decreased(bytes k) {
    for (size_t i = k.size(); i-- > 0;) {
        if (k[i]-- != 0) break;
    }
    return k;
}

bool present(const Stored& s, const bytes& k) {
    return std::any_of(s.entries.begin(), s.entries.end(),
                       [&](const auto& e) { return e.first == k; });
}

bool any_right_of(const Stored& s, const bytes& k) {
    return std::any_of(s.entries.begin(), s.entries.end(),
                       [&](const auto& e) { return bytes_less(k, e.first); });
}

void flip(bytes& node, size_t at, uint8_t mask) { node[at] ^= mask == 0 ? 1 : mask; }

// 32-byte keys, after geth's randomTrie: 30 left-padded small keys (0, 2, ..., 58, so that
// the key before each is absent) with one-byte values give embedded leaves deep in the trie;
// random keys with 20-byte values give hashed nodes.
std::map<bytes, bytes> trie32(std::mt19937_64& rng, size_t random_keys) {
    std::map<bytes, bytes> m;
    for (uint8_t i = 0; i < 30; ++i) {
        bytes k(32, 0);
        k[31] = static_cast<uint8_t>(2 * i);
        m[k] = bytes{static_cast<uint8_t>(i + 1)};
    }
    for (size_t i = 0; i < random_keys; ++i) {
        m[mpt::test::random_bytes(rng, 32)] = mpt::test::random_bytes(rng, 20);
    }
    return m;
}

// 2-byte keys with one-byte values: every leaf and several branches are embedded.
std::map<bytes, bytes> trie2() {
    std::map<bytes, bytes> m;
    const uint16_t keys[] = {0x0010, 0x0020, 0x0030, 0x1100, 0x1150, 0x2000, 0x2005, 0x2010,
                             0x2011, 0x3333, 0x7000, 0x7002, 0x7010, 0xa0a0, 0xa0b0, 0xf000};
    uint8_t v = 1;
    for (const uint16_t k : keys) {
        m[bytes{static_cast<uint8_t>(k >> 8), static_cast<uint8_t>(k & 0xff)}] = bytes{v++};
    }
    return m;
}

struct RangeInput {
    Hash256 root{};
    bytes first;
    std::vector<bytes> keys;
    std::vector<bytes> values;
    std::optional<std::vector<bytes>> proof;
};

RangeInput pairs(const Stored& s, bytes first, size_t from, size_t to) {
    RangeInput in;
    in.root = s.root;
    in.first = std::move(first);
    for (size_t i = from; i < to; ++i) {
        in.keys.push_back(s.entries[i].first);
        in.values.push_back(s.entries[i].second);
    }
    return in;
}

// Pairs [from, to) of the entries with the edge proofs of first and of the last pair.
RangeInput range(Stored& s, bytes first, size_t from, size_t to) {
    RangeInput in = pairs(s, first, from, to);
    in.proof = edge_proof(s, first, in.keys.empty() ? first : in.keys.back());
    return in;
}

Result<RangeResult> run(const RangeInput& in) {
    return verify_range(in.root, in.first, in.keys, in.values, in.proof ? &*in.proof : nullptr);
}

struct RangeCase {
    const char* name;
    std::function<RangeInput(Stored&)> make;
    bool valid;
    bool more;           // when valid
    const char* reason;  // when invalid: a part of the reason, or nullptr
};

// The cases, built from the sorted entries E of a trie of n >= 12 equal-length keys. The
// indices used as "absent first" are chosen where decreased(E[i]) is absent (checked).
std::vector<RangeCase> range_cases(size_t mid, size_t a, size_t z) {
    // a < mid < z, with room on both sides.
    return {
        {"whole trie, no proof", [](Stored& s) { return pairs(s, {}, 0, s.entries.size()); }, true,
         false, nullptr},
        {"whole trie minus one pair, no proof",
         [mid](Stored& s) {
             RangeInput in = pairs(s, {}, 0, s.entries.size());
             in.keys.erase(in.keys.begin() + mid);
             in.values.erase(in.values.begin() + mid);
             return in;
         },
         false, false, "not the whole trie"},
        {"whole trie plus one pair, no proof",
         [](Stored& s) {
             RangeInput in = pairs(s, {}, 0, s.entries.size());
             in.keys.push_back(increased(in.keys.back()));
             in.values.push_back(b("x"));
             return in;
         },
         false, false, "not the whole trie"},
        {"no pairs and no proof against a nonempty root",
         [](Stored& s) { return pairs(s, {}, 0, 0); }, false, false, "not the whole trie"},
        {"whole trie from the zero key with proof",
         [](Stored& s) {
             return range(s, bytes(s.entries[0].first.size(), 0), 0, s.entries.size());
         },
         true, false, nullptr},
        {"whole trie from the first key with proof",
         [](Stored& s) { return range(s, s.entries[0].first, 0, s.entries.size()); }, true, false,
         nullptr},
        {"no pairs, first right of every key",
         [](Stored& s) { return range(s, increased(s.entries.back().first), 0, 0); }, true, false,
         nullptr},
        {"no pairs, entries right of first",
         [mid](Stored& s) { return range(s, decreased(s.entries[mid].first), 0, 0); }, false, false,
         "entries exist right of first"},
        {"no pairs, first present",
         [](Stored& s) { return range(s, s.entries.back().first, 0, 0); }, false, false,
         "first is present"},
        {"one pair at first, entries right",
         [mid](Stored& s) { return range(s, s.entries[mid].first, mid, mid + 1); }, true, true,
         nullptr},
        {"one pair at first, the last key",
         [](Stored& s) {
             const size_t n = s.entries.size();
             return range(s, s.entries[n - 1].first, n - 1, n);
         },
         true, false, nullptr},
        {"one pair at first, wrong value",
         [mid](Stored& s) {
             RangeInput in = range(s, s.entries[mid].first, mid, mid + 1);
             in.values[0].push_back(0x01);
             return in;
         },
         false, false, "value mismatch"},
        {"one pair at first, key absent",
         [mid](Stored& s) {
             RangeInput in = range(s, decreased(s.entries[mid].first), 0, 0);
             in.keys = {in.first};
             in.values = {b("x")};
             return in;
         },
         false, false, "absent"},
        {"one pair, absent first before it",
         [mid](Stored& s) { return range(s, decreased(s.entries[mid].first), mid, mid + 1); }, true,
         true, nullptr},
        {"one pair, absent first, the last key",
         [](Stored& s) {
             const size_t n = s.entries.size();
             return range(s, decreased(s.entries[n - 1].first), n - 1, n);
         },
         true, false, nullptr},
        {"existent edges, entries right",
         [a, z](Stored& s) { return range(s, s.entries[a].first, a, z); }, true, true, nullptr},
        {"existent edges up to the last key",
         [a](Stored& s) { return range(s, s.entries[a].first, a, s.entries.size()); }, true, false,
         nullptr},
        {"absent first edge",
         [a, z](Stored& s) { return range(s, decreased(s.entries[a].first), a, z); }, true, true,
         nullptr},
        {"absent first edge up to the last key",
         [a](Stored& s) { return range(s, decreased(s.entries[a].first), a, s.entries.size()); },
         true, false, nullptr},
        {"gap in the middle",
         [a, mid, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.keys.erase(in.keys.begin() + (mid - a));
             in.values.erase(in.values.begin() + (mid - a));
             return in;
         },
         false, false, "root mismatch"},
        {"gap right after an absent first",
         [a, z](Stored& s) {
             RangeInput in = range(s, decreased(s.entries[a].first), a, z);
             in.keys.erase(in.keys.begin());
             in.values.erase(in.values.begin());
             return in;
         },
         false, false, "root mismatch"},
        {"gap after the first pair",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.keys.erase(in.keys.begin() + 1);
             in.values.erase(in.values.begin() + 1);
             return in;
         },
         false, false, "root mismatch"},
        {"gap before the last pair",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.keys.erase(in.keys.end() - 2);
             in.values.erase(in.values.end() - 2);
             return in;
         },
         false, false, "root mismatch"},
        {"wrong value in the middle",
         [a, mid, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.values[mid - a] = b("changed");
             return in;
         },
         false, false, "root mismatch"},
        {"wrong value of the last pair",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.values.back() = b("changed");
             return in;
         },
         false, false, "root mismatch"},
        {"a pair not in the trie added inside the range",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             // Between the last two pairs when there is room, else replacing the next-to-last.
             const bytes k = increased(in.keys[in.keys.size() - 2]);
             if (k != in.keys.back()) {
                 in.keys.insert(in.keys.end() - 1, k);
                 in.values.insert(in.values.end() - 1, b("extra"));
             } else {
                 in.values[in.values.size() - 2] = b("changed");
             }
             return in;
         },
         false, false, "root mismatch"},
        {"keys out of order",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             std::swap(in.keys[1], in.keys[2]);
             std::swap(in.values[1], in.values[2]);
             return in;
         },
         false, false, "not strictly increasing"},
        {"duplicate key",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.keys[2] = in.keys[1];
             return in;
         },
         false, false, "not strictly increasing"},
        {"a key of another length",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.keys[1].push_back(0x00);  // still between its neighbours
             return in;
         },
         false, false, "equal length"},
        {"a key that is a prefix of the next",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.keys[1] = bytes(in.keys[2].begin(), in.keys[2].end() - 1);
             if (!bytes_less(in.keys[0], in.keys[1])) in.keys[0] = bytes{};
             return in;
         },
         false, false, nullptr},
        {"first of another length",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.first.pop_back();
             return in;
         },
         false, false, "equal length"},
        {"empty value",
         [a, mid, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.values[mid - a].clear();
             return in;
         },
         false, false, "empty"},
        {"more values than keys",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.values.push_back(b("x"));
             return in;
         },
         false, false, "differ in number"},
        {"a pair precedes first",
         [a, z](Stored& s) { return range(s, increased(s.entries[a].first), a, z); }, false, false,
         "precedes first"},
        {"edges on the same side: pair outside the proven edges",
         [mid](Stored& s) {
             // geth's TestSameSideProofs: proofs of E[0] and E[1], one pair far right of both.
             RangeInput in = pairs(s, s.entries[0].first, mid, mid + 1);
             in.proof = edge_proof(s, s.entries[0].first, s.entries[1].first);
             return in;
         },
         false, false, nullptr},
        {"bloated proof: every key's proof, one pair",
         [mid](Stored& s) {
             RangeInput in = pairs(s, s.entries[mid].first, mid, mid + 1);
             in.proof.emplace();
             for (const auto& e : s.entries) {
                 for (bytes& n : prove_ok(s, e.first)) in.proof->push_back(std::move(n));
             }
             return in;
         },
         true, true, nullptr},
        {"bloated proof: every key's proof, a range",
         [a, z](Stored& s) {
             RangeInput in = pairs(s, s.entries[a].first, a, z);
             in.proof.emplace();
             for (const auto& e : s.entries) {
                 for (bytes& n : prove_ok(s, e.first)) in.proof->push_back(std::move(n));
             }
             std::reverse(in.proof->begin(), in.proof->end());
             return in;
         },
         true, true, nullptr},
        {"wrong root",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.root[5] ^= 1;
             return in;
         },
         false, false, "root node missing"},
        {"flipped byte in the proof's root node",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             flip(in.proof->front(), in.proof->front().size() - 3, 0x40);
             return in;
         },
         false, false, "root node missing"},
        {"proof with zero nodes",
         [a, z](Stored& s) {
             RangeInput in = range(s, s.entries[a].first, a, z);
             in.proof->clear();
             return in;
         },
         false, false, "root node missing"},
    };
}

void run_cases(Stored& s, size_t mid, size_t a, size_t z) {
    REQUIRE(a + 3 < mid);
    REQUIRE(mid + 3 < z);
    REQUIRE(z < s.entries.size());
    // The absent-first cases need decreased(E[i]) to be absent for these i.
    for (const size_t i : {a, mid, s.entries.size() - 1}) {
        REQUIRE(!present(s, decreased(s.entries[i].first)));
    }
    REQUIRE(!present(s, increased(s.entries[a].first)));
    for (const RangeCase& c : range_cases(mid, a, z)) {
        CAPTURE(c.name);
        const RangeInput in = c.make(s);
        const auto r = run(in);
        CHECK_MESSAGE(r.ok() == c.valid, (r.ok() ? std::string("valid") : r.error().message()));
        if (r.ok() && c.valid) CHECK(r->more == c.more);
        if (!r.ok()) {
            CHECK(r.error().code == Errc::invalid_proof);
            if (c.reason != nullptr) {
                CHECK_MESSAGE(r.error().detail.find(c.reason) != std::string::npos,
                              r.error().detail);
            }
        }
    }
}

// A random trie with keys of mixed lengths (some prefixes of others) and short values, so
// that many nodes are embedded.
std::map<bytes, bytes> random_mixed(std::mt19937_64& rng, size_t n) {
    return mpt::test::random_mixed_content(rng, n, 6, 0x33, false);
}

// Equal-length keys for range proofs; the alphabet mask makes shared prefixes.
std::map<bytes, bytes> random_equal(std::mt19937_64& rng, size_t n, size_t len, uint8_t mask) {
    std::map<bytes, bytes> m;
    for (size_t i = 0; i < n; ++i) {
        bytes k = mpt::test::random_bytes(rng, len);
        for (auto& x : k) x &= mask;
        m[k] = mpt::test::random_bytes(rng, 1 + rng() % (rng() % 3 == 0 ? 40 : 3));
    }
    return m;
}

}  // namespace

TEST_CASE("proof: the empty trie") {
    auto s = store_trie({});
    CHECK(s->root == kEmptyRoot);
    CHECK(prove_ok(*s, b("dog")).empty());
    CHECK(verify_proof(kEmptyRoot, b("dog"), {}).value() == std::nullopt);
    CHECK(check_proof_claim(kEmptyRoot, b("dog"), std::nullopt, {}).ok());
    CHECK(!check_proof_claim(kEmptyRoot, b("dog"), b("x"), {}).ok());
    const std::vector<bytes> none;
    const auto r = verify_range(kEmptyRoot, bytes(32, 0), {}, {}, &none);
    REQUIRE(r.ok());
    CHECK(!r->more);
    CHECK(verify_range(kEmptyRoot, {}, {}, {}, nullptr).ok());
    CHECK(!verify_range(kEmptyRoot, b("a"), {b("a")}, {b("x")}, &none).ok());
    const auto pr = prove_range(*s->reader, s->root, {}, nullptr, 10, SIZE_MAX);
    REQUIRE(pr.ok());
    CHECK(pr->keys.empty());
    CHECK(pr->proof.empty());
}

TEST_CASE("proof: the dogs trie in EIP-1186 form") {
    // ethereum/tests trietest.json "dogs" (a known root).
    auto s = store_trie(
        {{b("doe"), b("reindeer")}, {b("dog"), b("puppy")}, {b("dogglesworth"), b("cat")}});
    CHECK(to_hex(s->root) == "0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3");
    for (const char* k : {"doe", "dog", "dogglesworth", "do", "dogs", "cat", ""}) {
        CAPTURE(k);
        const std::vector<bytes> proof = prove_ok(*s, b(k));
        REQUIRE(!proof.empty());
        CHECK(keccak256(proof[0]) == s->root);  // the root first
        for (size_t i = 1; i < proof.size(); ++i) CHECK(proof[i].size() >= 32);
        const auto got = verify_proof(s->root, b(k), proof);
        REQUIRE(got.ok());
        const Trie t = Trie::open(&*s->reader, s->root);
        CHECK(*got == t.get(b(k)).value());
    }
    const std::vector<bytes> proof = prove_ok(*s, b("dog"));
    CHECK(check_proof_claim(s->root, b("dog"), b("puppy"), proof).ok());
    const auto e1 = check_proof_claim(s->root, b("dog"), b("kitten"), proof);
    REQUIRE(!e1.ok());
    CHECK(e1.error().detail == "value mismatch");
    const auto e2 = check_proof_claim(s->root, b("dog"), std::nullopt, proof);
    REQUIRE(!e2.ok());
    CHECK(e2.error().detail == "key is present but the document claims absence");
    const std::vector<bytes> absent = prove_ok(*s, b("dogs"));
    const auto e3 = check_proof_claim(s->root, b("dogs"), b("x"), absent);
    REQUIRE(!e3.ok());
    CHECK(e3.error().detail == "the path diverges yet a value is claimed");
    CHECK(check_proof_claim(s->root, b("dogs"), std::nullopt, absent).ok());
    CHECK(check_proof_claim(s->root, b("dogs"), bytes{}, absent).ok());  // empty = absent
}

TEST_CASE("proof: order, extra nodes and separately listed embedded nodes are accepted") {
    auto s = store_trie(trie2());
    for (const auto& [k, v] : s->entries) {
        std::vector<bytes> proof = prove_ok(*s, k);
        // List every embedded node found inside the proof's nodes on its own as well.
        std::vector<bytes> extra;
        for (const bytes& n : proof) {
            const NodeView nv = decode_node(n).value();
            for (const bytes_view c : nv.children) {
                if (!c.empty() && c.size() < 32) extra.emplace_back(c.begin(), c.end());
            }
        }
        proof.insert(proof.end(), extra.begin(), extra.end());
        proof.push_back(b("junk"));
        std::reverse(proof.begin(), proof.end());
        CHECK(check_proof_claim(s->root, k, v, proof).ok());
    }
}

TEST_CASE("proof: reasons name the depth") {
    auto s = store_trie(trie32(*std::make_unique<std::mt19937_64>(7), 50));
    const bytes& key = s->entries[60].first;
    std::vector<bytes> proof = prove_ok(*s, key);
    REQUIRE(proof.size() >= 3);
    auto r = verify_proof(s->root, key, {proof.begin() + 1, proof.end()});
    REQUIRE(!r.ok());
    CHECK(r.error().detail == "root node missing");
    std::vector<bytes> cut(proof.begin(), proof.end() - 1);
    r = verify_proof(s->root, key, cut);
    REQUIRE(!r.ok());
    CHECK(r.error().detail.find("node for hash 0x") == 0);
    CHECK(r.error().detail.find(" missing at depth ") != std::string::npos);
    // A root that does not decode.
    const bytes junk = b("not a node");
    r = verify_proof(keccak256(junk), key, {junk});
    REQUIRE(!r.ok());
    CHECK(r.error().detail.find("node RLP does not decode at depth 0: ") == 0);
}

TEST_CASE("proof: storage errors name the path") {
    auto s = store_trie(trie32(*std::make_unique<std::mt19937_64>(9), 50));
    const bytes& key = s->entries[70].first;
    const std::vector<bytes> proof = prove_ok(*s, key);
    REQUIRE(proof.size() >= 2);
    // The path of the second node: find its row.
    bytes path;
    for (const auto& [pk, rlp] : s->store.state().rows) {
        if (rlp == proof[1]) path = pk.second;
    }
    REQUIRE(!path.empty());
    REQUIRE(s->store.begin_write().ok());
    bytes corrupt = proof[1];
    corrupt[corrupt.size() / 2] ^= 0x10;
    REQUIRE(s->store.put(s->reader->info().id, path, corrupt).ok());
    REQUIRE(s->store.commit_write().ok());
    auto r = prove(*s->reader, s->root, key);
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_hash_mismatch);
    CHECK(r.error().context() == "trie main, path " + path_string(path));
    CHECK(r.error().path == path_string(path));

    REQUIRE(s->store.begin_write().ok());
    REQUIRE(s->store.erase(s->reader->info().id, path).ok());
    REQUIRE(s->store.commit_write().ok());
    r = prove(*s->reader, s->root, key);
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_missing_node);
    CHECK(r.error().context() == "trie main, path " + path_string(path));
    CHECK(r.error().path == path_string(path));
}

TEST_CASE("proof: random tries, every proof verifies and every flipped byte breaks it") {
    std::mt19937_64 rng(mpt::test::seed("proof_random"));
    size_t flips = 0;
    for (int round = 0; round < 30; ++round) {
        auto s = store_trie(random_mixed(rng, 1 + rng() % 120));
        const Trie t = Trie::open(&*s->reader, s->root);
        std::vector<bytes> keys;
        for (const auto& e : s->entries) keys.push_back(e.first);
        for (int i = 0; i < 20; ++i) keys.push_back(mpt::test::random_bytes(rng, rng() % 6));
        for (const bytes& k : keys) {
            CAPTURE(to_hex(k));
            const std::vector<bytes> proof = prove_ok(*s, k);
            const std::optional<bytes> want = t.get(k).value();
            const auto got = verify_proof(s->root, k, proof);
            REQUIRE_MESSAGE(got.ok(), mpt::test::why(got));
            REQUIRE(*got == want);
            REQUIRE(check_proof_claim(s->root, k, want, proof).ok());
            REQUIRE(keccak256(proof.at(0)) == s->root);
            // The value read on the proof's own walk.
            std::optional<bytes> walked{bytes{0xee}};
            REQUIRE(prove(*s->reader, s->root, k, &walked).value() == proof);
            REQUIRE(walked == want);
            // Every byte of every node of a round's first keys' proofs, a sample of the others.
            const bool exhaustive = &k - keys.data() < 3;
            for (size_t n = 0; n < proof.size(); ++n) {
                const bool all = exhaustive || proof[n].size() <= 8;
                const size_t tries = all ? proof[n].size() : 4;
                for (size_t j = 0; j < tries; ++j) {
                    std::vector<bytes> bad = proof;
                    const size_t at = all ? j : rng() % bad[n].size();
                    flip(bad[n], at, static_cast<uint8_t>(rng()));
                    ++flips;
                    const Status c = check_proof_claim(s->root, k, want, bad);
                    REQUIRE_MESSAGE(!c.ok(), "node ", n, " byte ", at);
                    REQUIRE(c.error().code == Errc::invalid_proof);
                }
            }
        }
    }
    MESSAGE(flips << " flipped proofs rejected");
}

TEST_CASE("verify_range: table of cases, 32-byte keys with hashed and embedded nodes") {
    std::mt19937_64 rng(0x72616e6765);  // fixed: the case indices below depend on the trie
    auto s = store_trie(trie32(rng, 200));
    // Entries 0..29 are the left-padded small keys (embedded leaves), then random keys.
    run_cases(*s, 120, 30, 200);
    // Entirely inside the embedded region.
    run_cases(*s, 20, 12, 28);
}

TEST_CASE("verify_range: table of cases, 2-byte keys, everything embedded") {
    auto s = store_trie(trie2());
    REQUIRE(s->entries.size() == 16);
    run_cases(*s, 7, 2, 13);
}

TEST_CASE("verify_range: root is a short node") {
    // geth's TestRangeProofKeysWithSharedPrefix: the root is an extension over "aa"; the
    // zero key diverges from it on the left.
    bytes k1(32, 0), k2(32, 0);
    k1[0] = 0xaa, k1[1] = 0x10;
    k2[0] = 0xaa, k2[1] = 0x20;
    auto s = store_trie({{k1, h("0x02")}, {k2, h("0x03")}});
    const RangeInput in = range(*s, bytes(32, 0), 0, 2);
    const auto r = run(in);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(!r->more);
    // Only the second key, from the zero key: the first is a gap.
    RangeInput gap = in;
    gap.keys.erase(gap.keys.begin());
    gap.values.erase(gap.values.begin());
    CHECK(!run(gap).ok());
    // Both edges left of the extension, a pair claimed inside it.
    bytes lo(32, 0), hi(32, 0);
    hi[0] = 0x10;
    RangeInput side;
    side.root = s->root;
    side.first = lo;
    side.keys = {hi};
    side.values = {b("x")};
    side.proof = edge_proof(*s, lo, hi);
    const auto rs = run(side);
    REQUIRE(!rs.ok());
    CHECK_MESSAGE(rs.error().detail.find("same side") != std::string::npos, rs.error().detail);
    // A single-leaf trie: the root is a leaf.
    auto one = store_trie({{k1, h("0x02")}});
    const auto r1 = run(range(*one, bytes(32, 0), 0, 1));
    REQUIRE_MESSAGE(r1.ok(), mpt::test::why(r1));
    CHECK(!r1->more);
    CHECK(!run(range(*one, increased(k1), 0, 0)).value().more);
    CHECK(!run(range(*one, decreased(k1), 0, 0)).ok());
}

TEST_CASE("verify_range: a shorter key inside the range is an entry the pairs miss") {
    // Range proofs need equal-length pairs, but the trie may hold other keys. 0x20 is the
    // value of the branch at path 20 and lies between 0x1000 and 0x2010: a range of 2-byte
    // pairs over it cannot be complete. 0x05 lies left of it and does not matter.
    auto s = store_trie({{h("0x05"), b("a")},
                         {h("0x1000"), b("b")},
                         {h("0x20"), b("c")},
                         {h("0x2000"), b("d")},
                         {h("0x2010"), b("e")},
                         {h("0x3000"), b("f")}});
    RangeInput in;
    in.root = s->root;
    in.first = h("0x1000");
    in.keys = {h("0x1000"), h("0x2000"), h("0x2010")};
    in.values = {b("b"), b("d"), b("e")};
    in.proof = edge_proof(*s, in.first, in.keys.back());
    const auto r = run(in);
    REQUIRE(!r.ok());
    CHECK_MESSAGE(r.error().detail.find("root mismatch") != std::string::npos, r.error().detail);
    // From 0x0600 to 0x1000 the range is complete: 0x05 lies left of it.
    RangeInput left;
    left.root = s->root;
    left.first = h("0x0600");
    left.keys = {h("0x1000")};
    left.values = {b("b")};
    left.proof = edge_proof(*s, left.first, left.keys.back());
    const auto rl = run(left);
    REQUIRE_MESSAGE(rl.ok(), mpt::test::why(rl));
    CHECK(rl->more);
    // The pairs after 0x20: complete.
    RangeInput right;
    right.root = s->root;
    right.first = h("0x2000");
    right.keys = {h("0x2000"), h("0x2010"), h("0x3000")};
    right.values = {b("d"), b("e"), b("f")};
    right.proof = edge_proof(*s, right.first, right.keys.back());
    const auto rr = run(right);
    REQUIRE_MESSAGE(rr.ok(), mpt::test::why(rr));
    CHECK(!rr->more);
}

TEST_CASE("prove_range: snap semantics for limit, to and max_bytes") {
    auto s = store_trie(trie2());
    const Entries& e = s->entries;
    auto check_valid = [&](const RangeProof& p, const bytes& from) {
        const auto r = verify_range(s->root, from, p.keys, p.values, &p.proof);
        REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
        CHECK(r->more == (!p.keys.empty() && any_right_of(*s, p.keys.back())));
    };
    // limit
    auto p = prove_range(*s->reader, s->root, e[3].first, nullptr, 4, SIZE_MAX).value();
    REQUIRE(p.keys.size() == 4);
    CHECK(p.keys[0] == e[3].first);
    CHECK(p.keys[3] == e[6].first);
    check_valid(p, e[3].first);
    // to: the first key at or beyond it is the last one.
    const bytes to = decreased(e[9].first);
    p = prove_range(*s->reader, s->root, e[3].first, &to, 100, SIZE_MAX).value();
    REQUIRE(p.keys.size() == 7);
    CHECK(p.keys.back() == e[9].first);
    check_valid(p, e[3].first);
    p = prove_range(*s->reader, s->root, e[3].first, &e[9].first, 100, SIZE_MAX).value();
    CHECK(p.keys.back() == e[9].first);
    // max_bytes: 3 bytes per pair; stop once reached, at least one pair.
    p = prove_range(*s->reader, s->root, e[3].first, nullptr, 100, 7).value();
    CHECK(p.keys.size() == 3);
    p = prove_range(*s->reader, s->root, e[3].first, nullptr, 100, 0).value();
    CHECK(p.keys.size() == 1);
    check_valid(p, e[3].first);
    // From an absent key, to the end, from beyond the end.
    const bytes absent = decreased(e[5].first);
    p = prove_range(*s->reader, s->root, absent, nullptr, 1000, SIZE_MAX).value();
    CHECK(p.keys.size() == e.size() - 5);
    check_valid(p, absent);
    const bytes beyond = increased(e.back().first);
    p = prove_range(*s->reader, s->root, beyond, nullptr, 1000, SIZE_MAX).value();
    CHECK(p.keys.empty());
    CHECK(!p.proof.empty());
    check_valid(p, beyond);
    // The whole trie from the zero key still carries a proof.
    p = prove_range(*s->reader, s->root, bytes(2, 0), nullptr, 1000, SIZE_MAX).value();
    CHECK(p.keys.size() == e.size());
    CHECK(!p.proof.empty());
    check_valid(p, bytes(2, 0));
    // The proof: from's proof, then the last key's new nodes.
    auto big = store_trie(trie32(*std::make_unique<std::mt19937_64>(3), 300));
    const bytes& lo = big->entries[50].first;
    p = prove_range(*big->reader, big->root, lo, nullptr, 100, SIZE_MAX).value();
    CHECK(p.proof == edge_proof(*big, lo, p.keys.back()));
    CHECK(!prove_range(*s->reader, s->root, {}, nullptr, 0, SIZE_MAX).ok());
}

TEST_CASE("verify_range: random tries and ranges verify, and tampering fails") {
    std::mt19937_64 rng(mpt::test::seed("range_random"));
    size_t ranges = 0, tampered = 0;
    for (int round = 0; round < 60; ++round) {
        const size_t len = std::vector<size_t>{1, 2, 3, 8, 32}[rng() % 5];
        const uint8_t mask = rng() % 2 ? 0xff : 0x31;
        auto s = store_trie(random_equal(rng, 1 + rng() % 150, len, mask));
        const Entries& e = s->entries;
        for (int q = 0; q < 15; ++q) {
            bytes from;
            switch (rng() % 4) {
                case 0:
                    from = e[rng() % e.size()].first;
                    break;
                case 1:
                    from = mpt::test::random_bytes(rng, len);
                    break;
                case 2:
                    from = bytes(len, 0);
                    break;
                default:
                    from = increased(e[rng() % e.size()].first);
                    break;
            }
            const bytes to_key = mpt::test::random_bytes(rng, len);
            const bytes* to = rng() % 3 == 0 ? &to_key : nullptr;
            const size_t limit = 1 + rng() % (e.size() + 2);
            const size_t max_bytes = rng() % 3 == 0 ? rng() % 200 : SIZE_MAX;
            const RangeProof p =
                prove_range(*s->reader, s->root, from, to, limit, max_bytes).value();
            CAPTURE(to_hex(from));
            CAPTURE(p.keys.size());
            // The pairs are the entries from `from` on, cut as asked.
            auto it = std::lower_bound(e.begin(), e.end(), from, [](const auto& x, const bytes& k) {
                return bytes_less(x.first, k);
            });
            REQUIRE(static_cast<size_t>(e.end() - it) >= p.keys.size());
            size_t total = 0;
            bool stopped = false;  // the last pair met a stop condition
            for (size_t i = 0; i < p.keys.size(); ++i, ++it) {
                REQUIRE(p.keys[i] == it->first);
                REQUIRE(p.values[i] == it->second);
                total += it->first.size() + it->second.size();
                const bool stop =
                    i + 1 == limit || (to && !bytes_less(it->first, *to)) || total >= max_bytes;
                if (i + 1 < p.keys.size()) REQUIRE(!stop);
                stopped = stop;
            }
            if (!stopped) REQUIRE(it == e.end());  // else it may only stop at the end
            const auto r = verify_range(s->root, from, p.keys, p.values, &p.proof);
            REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
            REQUIRE(r->more == (!p.keys.empty() && any_right_of(*s, p.keys.back())));
            ++ranges;

            // Tampering.
            if (p.keys.size() >= 3) {
                RangeProof t = p;
                const size_t i = 1 + rng() % (t.keys.size() - 2);
                t.keys.erase(t.keys.begin() + static_cast<ptrdiff_t>(i));
                t.values.erase(t.values.begin() + static_cast<ptrdiff_t>(i));
                REQUIRE(!verify_range(s->root, from, t.keys, t.values, &t.proof).ok());
                ++tampered;
            }
            if (!p.keys.empty()) {
                RangeProof t = p;
                bytes& v = t.values[rng() % t.values.size()];
                v.push_back(static_cast<uint8_t>(rng()));
                REQUIRE(!verify_range(s->root, from, t.keys, t.values, &t.proof).ok());
                ++tampered;
            }
            if (!p.proof.empty()) {
                RangeProof t = p;
                bytes& n = t.proof[rng() % t.proof.size()];
                flip(n, rng() % n.size(), static_cast<uint8_t>(rng()));
                const auto bad = verify_range(s->root, from, t.keys, t.values, &t.proof);
                REQUIRE(!bad.ok());
                REQUIRE(bad.error().code == Errc::invalid_proof);
                ++tampered;
            }
        }
        // The whole trie without a proof.
        std::vector<bytes> keys, values;
        for (const auto& [k, v] : e) keys.push_back(k), values.push_back(v);
        const auto whole = verify_range(s->root, {}, keys, values, nullptr);
        REQUIRE(whole.ok());
        CHECK(!whole->more);
    }
    MESSAGE(ranges << " ranges verified, " << tampered << " tampered ranges rejected");
}

TEST_CASE("bad input: 10,000 junk nodes") {
    std::mt19937_64 rng(mpt::test::seed("proof_junk"));
    auto s = store_trie(trie32(rng, 100));
    const bytes& key = s->entries[77].first;
    std::vector<bytes> junk;
    for (int i = 0; i < 10000; ++i) {
        bytes n = mpt::test::random_bytes(rng, 1 + rng() % 80);
        if (i % 2 == 0) {  // some look like RLP lists
            n[0] = static_cast<uint8_t>(0xc0 + (n.size() - 1 < 56 ? n.size() - 1 : 0));
        }
        junk.push_back(std::move(n));
    }
    auto r = verify_proof(s->root, key, junk);
    REQUIRE(!r.ok());
    CHECK(r.error().detail == "root node missing");
    std::vector<bytes> mixed = junk;
    for (bytes& n : prove_ok(*s, key)) mixed.push_back(std::move(n));
    std::shuffle(mixed.begin(), mixed.end(), rng);
    r = verify_proof(s->root, key, mixed);
    REQUIRE(r.ok());
    CHECK(*r == s->entries[77].second);
    // A range with the same junk around its edge proofs.
    RangeInput in = range(*s, s->entries[40].first, 40, 90);
    in.proof->insert(in.proof->end(), junk.begin(), junk.end());
    const auto rr = run(in);
    REQUIRE(rr.ok());
    CHECK(rr->more);
    CHECK(!verify_range(s->root, in.first, in.keys, in.values, &junk).ok());
}

TEST_CASE("bad input: a 10,000-node path ends with the key's nibbles") {
    // No proof can make a node its own descendant (that would take a keccak fixed point), so
    // the worst a proof can do is a path as long as the key. Build a chain of 10,000
    // branches along a key of 5,000 bytes 0x11; at each level a sibling at nibble 0 is an
    // opaque hash, and at the bottom two embedded leaves sit at nibbles 0 and 1.
    const size_t depth = 10000;
    std::mt19937_64 rng(mpt::test::seed("proof_deep"));
    std::vector<bytes> chain(depth);  // chain[d]: the branch at depth d
    NodeRef below;
    for (size_t d = depth; d-- > 0;) {
        std::array<NodeRef, 16> children{};
        if (d + 1 == depth) {
            bytes leaf_w, leaf_v;
            encode_leaf(leaf_w, Nibbles(), b("w"));
            encode_leaf(leaf_v, Nibbles(), b("v"));
            children[0] = NodeRef::of(leaf_w);
            children[1] = NodeRef::of(leaf_v);
        } else {
            Hash256 sibling;
            const bytes r = mpt::test::random_bytes(rng, 32);
            std::copy(r.begin(), r.end(), sibling.begin());
            children[0] = NodeRef::from_hash(sibling);
            children[1] = below;
        }
        encode_branch(chain[d], children.data(), {});
        below = NodeRef::of(chain[d]);
    }
    const Hash256 root = keccak256(chain[0]);
    const bytes key(depth / 2, 0x11);
    bytes key_w = key;
    key_w.back() = 0x10;
    const auto got = verify_proof(root, key, chain);
    REQUIRE_MESSAGE(got.ok(), mpt::test::why(got));
    CHECK(*got == b("v"));
    CHECK(verify_proof(root, key_w, chain).value() == b("w"));
    // A longer key runs out of nodes: the bottom leaves have empty paths.
    bytes longer = key;
    longer.push_back(0x11);
    CHECK(verify_proof(root, longer, chain).value() == std::nullopt);
    // Ranges over the chain: the rebuilt trie is 10,000 levels deep.
    const auto r = verify_range(root, key_w, {key_w, key}, {b("w"), b("v")}, &chain);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(!r->more);
    CHECK(!verify_range(root, key_w, {key_w, key}, {b("w"), b("x")}, &chain).ok());
    const auto one = verify_range(root, key_w, {key_w}, {b("w")}, &chain);
    REQUIRE(one.ok());
    CHECK(one->more);
    CHECK(!verify_range(root, key_w, {}, {}, &chain).ok());
    // The zero key goes to the opaque sibling at depth 0.
    const bytes zero(depth / 2, 0);
    const auto z = verify_proof(root, zero, chain);
    REQUIRE(!z.ok());
    CHECK(z.error().detail.find("missing at depth 1") != std::string::npos);
}

TEST_CASE("proof fixtures: the documents under fixtures/ are the proofs of their trie") {
    // fixtures/proof_trie.json is a three-key trie; the proof documents beside it were
    // written from these proofs (see fixtures/README-proofs.md). This checks they still are.
    auto read = [](const std::string& name) {
        std::ifstream f(std::string(MPT_FIXTURES) + "/" + name);
        REQUIRE(f.good());
        std::stringstream ss;
        ss << f.rdbuf();
        return nlohmann::json::parse(ss.str());
    };
    std::map<bytes, bytes> m;
    const nlohmann::json content = read("proof_trie.json");
    for (const auto& [k, v] : content.items()) {
        m[from_hex(k).value()] = from_hex(v.get<std::string>()).value();
    }
    auto s = store_trie(m);
    for (const char* name : {"proof_present.json", "proof_absent.json"}) {
        CAPTURE(name);
        const auto doc = read(name);
        CHECK(doc["root"] == to_hex(s->root));
        const bytes key = from_hex(doc["key"].get<std::string>()).value();
        std::vector<std::string> proof;
        for (const bytes& n : prove_ok(*s, key)) proof.push_back(to_hex(n));
        CHECK(doc["proof"] == proof);
        const Trie t = Trie::open(&*s->reader, s->root);
        const auto v = t.get(key).value();
        CHECK(doc["value"] == (v ? nlohmann::json(to_hex(*v)) : nlohmann::json(nullptr)));
    }
    // Range documents: pairs as stored, proofs as the edge proofs of first and the last key.
    for (const char* name : {"range_valid.json", "range_tail.json", "range_gap.json"}) {
        CAPTURE(name);
        const auto doc = read(name);
        CHECK(doc["root"] == to_hex(s->root));
        const bytes first = from_hex(doc["first"].get<std::string>()).value();
        const bytes last = from_hex(doc["keys"].back().get<std::string>()).value();
        for (size_t i = 0; i < doc["keys"].size(); ++i) {
            const bytes k = from_hex(doc["keys"][i].get<std::string>()).value();
            CHECK(doc["values"][i] == to_hex(m.at(k)));
        }
        std::vector<std::string> proof;
        for (const bytes& n : edge_proof(*s, first, last)) proof.push_back(to_hex(n));
        CHECK(doc["proof"] == proof);
    }
    const auto whole = read("range_whole.json");
    CHECK(whole["keys"].size() == m.size());
    CHECK(!whole.contains("proof"));
}
