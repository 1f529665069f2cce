#include "test_util.hpp"

#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/trie.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace mpt;
using mpt::test::b;
using mpt::test::h;

namespace {

Hash256 hash_of(std::string_view hex) { return hash_from_hex(hex).value(); }

Hash256 stack_root(const std::map<bytes, bytes>& m) {
    StackTrie st;
    for (const auto& [k, v] : m) REQUIRE(st.add(k, v).ok());
    return st.finish();
}

Hash256 trie_root(const std::map<bytes, bytes>& m) {
    Trie t;
    for (const auto& [k, v] : m) REQUIRE(t.put(k, v).ok());
    return t.root_hash().value();
}

// Random keys of mixed lengths, some prefixes of others, values short enough that many
// nodes are embedded.
std::map<bytes, bytes> random_content(std::mt19937_64& rng, size_t n) {
    return mpt::test::random_mixed_content(rng, n, 5, 0x33, false);
}

}  // namespace

TEST_CASE("known roots") {
    CHECK(Trie().root_hash().value() == kEmptyRoot);
    CHECK(StackTrie().finish() == kEmptyRoot);
    // From ethereum/tests TrieTests trietest.json, "dogs" (facts: a known root).
    std::map<bytes, bytes> m = {
        {b("doe"), b("reindeer")}, {b("dog"), b("puppy")}, {b("dogglesworth"), b("cat")}};
    const Hash256 expected =
        hash_of("0x8aad789dff2f538bca5d8ea56e8abe10f4c7ba3a5dea95fea4cd6e7c3a1168d3");
    CHECK(stack_root(m) == expected);
    CHECK(trie_root(m) == expected);
}

TEST_CASE("root does not depend on insertion order, and deleting all gives the empty root") {
    std::mt19937_64 rng(mpt::test::seed("trie_order"));
    for (int round = 0; round < 200; ++round) {
        const auto m = random_content(rng, 1 + rng() % 60);
        std::vector<std::pair<bytes, bytes>> pairs(m.begin(), m.end());
        std::shuffle(pairs.begin(), pairs.end(), rng);
        Trie t;
        for (const auto& [k, v] : pairs) REQUIRE(t.put(k, v).ok());
        const Hash256 r = t.root_hash().value();
        REQUIRE(r == trie_root(m));
        REQUIRE(r == stack_root(m));
        for (const auto& [k, v] : m) {
            auto got = t.get(k);
            REQUIRE(got.ok());
            REQUIRE(got->has_value());
            REQUIRE(**got == v);
        }
        std::shuffle(pairs.begin(), pairs.end(), rng);
        for (size_t i = 0; i < pairs.size(); ++i) {
            REQUIRE(t.remove(pairs[i].first).ok());
            if (i % 7 == 0) {
                std::map<bytes, bytes> rest(pairs.begin() + static_cast<ptrdiff_t>(i) + 1,
                                            pairs.end());
                REQUIRE(t.root_hash().value() == stack_root(rest));
            }
        }
        REQUIRE(t.root_hash().value() == kEmptyRoot);
        REQUIRE(t.empty());
    }
}

TEST_CASE("ordered iteration from a bound") {
    std::mt19937_64 rng(mpt::test::seed("trie_iteration"));
    for (int round = 0; round < 100; ++round) {
        const auto m = random_content(rng, 1 + rng() % 40);
        Trie t;
        for (const auto& [k, v] : m) REQUIRE(t.put(k, v).ok());
        bytes from = mpt::test::random_bytes(rng, rng() % 4);
        for (size_t j = 0; j < from.size(); ++j) from[j] = static_cast<uint8_t>(from[j] & 0x33);
        std::vector<std::pair<bytes, bytes>> got;
        REQUIRE(t.for_each(from, [&](bytes_view k, bytes_view v) {
                     got.emplace_back(bytes(k.begin(), k.end()), bytes(v.begin(), v.end()));
                     return true;
                 }).ok());
        std::vector<std::pair<bytes, bytes>> expected(m.lower_bound(from), m.end());
        REQUIRE(got == expected);
    }
}

TEST_CASE("stack trie refuses unordered keys and empty values") {
    StackTrie st;
    CHECK(st.add(b("b"), b("1")).ok());
    CHECK(!st.add(b("a"), b("1")).ok());
    CHECK(!st.add(b("b"), b("1")).ok());
    CHECK(!st.add(b("c"), {}).ok());
}

TEST_CASE("long keys and values: the streaming and the in-memory builders agree") {
    // Leaves whose compact path or value needs a two- or three-byte RLP header, and
    // single-byte values below 0x80: the two builders encode leaves by separate code.
    std::mt19937_64 rng(mpt::test::seed("long_keys_values"));
    for (int round = 0; round < 60; ++round) {
        std::map<bytes, bytes> m;
        const size_t n = 1 + rng() % 40;
        for (size_t i = 0; i < n; ++i) {
            const size_t key_size = rng() % 2 ? 50 + rng() % 80 : 1 + rng() % 4;
            bytes key = mpt::test::random_bytes(rng, key_size);
            key[0] &= 0x11;  // shared first nibbles put leaves at odd and even depths
            const size_t sizes[] = {1, 1, 31, 55, 56, 200, 70000};
            bytes value = mpt::test::random_bytes(rng, sizes[rng() % 7]);
            if (value.size() == 1 && rng() % 2) value[0] &= 0x7f;
            m[key] = value;
        }
        CHECK_MESSAGE(stack_root(m) == trie_root(m), "round " << round);
    }
}
