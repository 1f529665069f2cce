#include "test_util.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>

using namespace mpt;
using mpt::test::h;

namespace {

using Pairs = std::map<bytes, bytes>;

std::vector<KvPair> views(const Pairs& m) {
    std::vector<KvPair> out;
    for (const auto& [k, v] : m) out.push_back({k, v});
    return out;
}

// The sequential root, by the streaming builder alone.
Hash256 sequential(const Pairs& m) {
    StackTrie st;
    for (const auto& [k, v] : m) REQUIRE(st.add(k, v).ok());
    return st.finish();
}

using Rows = std::vector<std::pair<bytes, bytes>>;

struct RowSink : NodeSink {
    Rows rows;
    void put(bytes_view path, bytes_view rlp) override {
        rows.emplace_back(bytes(path.begin(), path.end()), bytes(rlp.begin(), rlp.end()));
    }
};

// The nodes of each part, and whether each part was done after its last node.
struct Parts : PartSinks {
    struct Part : NodeSink {
        Rows rows;
        int done = 0;
        bool put_after_done = false;
        void put(bytes_view path, bytes_view rlp) override {
            put_after_done = put_after_done || done != 0;
            rows.emplace_back(bytes(path.begin(), path.end()), bytes(rlp.begin(), rlp.end()));
        }
    };
    std::array<Part, kTopPart + 1> parts;
    NodeSink* part(size_t v) override { return &parts[v]; }
    void done(size_t v) override { ++parts[v].done; }
};

// The nodes stack_trie_root hands its sinks are those of one StackTrie, and the parts, each
// in path order, follow one another in path order, the top part first.
void check_parts(const Pairs& m, const Parts& got, unsigned threads) {
    RowSink want;
    StackTrie st(&want);
    for (const auto& [k, v] : m) REQUIRE(st.add(k, v).ok());
    st.finish();
    Rows all;
    for (size_t v : {size_t{PartSinks::kTopPart}, size_t{0}, size_t{1}, size_t{2}, size_t{3},
                     size_t{4}, size_t{5}, size_t{6}, size_t{7}, size_t{8}, size_t{9}, size_t{10},
                     size_t{11}, size_t{12}, size_t{13}, size_t{14}, size_t{15}}) {
        const Parts::Part& p = got.parts[v];
        CHECK_MESSAGE((p.done == 1 && !p.put_after_done), "part " << v << ", " << threads);
        Rows sorted = p.rows;
        std::sort(sorted.begin(), sorted.end());
        all.insert(all.end(), sorted.begin(), sorted.end());
    }
    for (size_t i = 1; i < all.size(); ++i) {
        CHECK_MESSAGE(bytes_less(all[i - 1].first, all[i].first),
                      "parts out of path order at row " << i << ", threads " << threads);
    }
    std::sort(all.begin(), all.end());
    std::sort(want.rows.begin(), want.rows.end());
    CHECK_MESSAGE(all == want.rows, "threads " << threads << ", " << m.size() << " pairs");
}

void check_parallel_matches(const Pairs& m) {
    const std::vector<KvPair> pairs = views(m);
    const Hash256 want = sequential(m);
    for (unsigned threads : {1u, 2u, 3u, 16u}) {
        // min_pairs 0: the parallel split even for the tiniest tries.
        auto got = stack_trie_root(pairs, threads, 0);
        REQUIRE(got.ok());
        CHECK_MESSAGE(*got == want, "threads " << threads << ", " << m.size() << " pairs");
        Parts parts;
        auto with_sinks = stack_trie_root(pairs, threads, 0, &parts);
        REQUIRE(with_sinks.ok());
        CHECK(*with_sinks == want);
        check_parts(m, parts, threads);
    }
    auto by_default = stack_trie_root(pairs, 2);
    REQUIRE(by_default.ok());
    CHECK(*by_default == want);
}

bytes value_of(std::mt19937_64& rng) {
    // Short values keep small subtries under 32 bytes, so that they are embedded.
    return mpt::test::random_bytes(rng, rng() % 3 == 0 ? 1 + rng() % 2 : 1 + rng() % 40);
}

}  // namespace

TEST_CASE("StackTrie::add_run hands over the rows, in order, and the root of adding one by one") {
    // Keys of a narrow alphabet and many lengths: keys that are prefixes of the next (values
    // in branches), short pairs (embedded leaves), long shared paths; runs of every size up
    // to a few of add_run's chunks, now and then a pair added alone between them.
    std::mt19937_64 rng(mpt::test::seed("stack_trie_add_run"));
    for (int trial = 0; trial < 300; ++trial) {
        Pairs m;
        const size_t n = rng() % 400;
        const uint8_t first = static_cast<uint8_t>(rng() % 4);
        const bool under = trial % 3 == 0;  // every key under one first byte: a subtrie at 2
        for (size_t i = 0; i < n; ++i) {
            bytes key = mpt::test::random_bytes(rng, 1 + rng() % 6);
            for (auto& x : key) x &= 0x13;
            if (under) key[0] = first;
            if (rng() % 5 == 0) key.insert(key.end(), 4, 0x11);
            m[key] = value_of(rng);
        }
        const size_t depth = under ? 2 : 0;
        const std::vector<KvPair> pairs = views(m);
        RowSink want_rows;
        StackTrie one(&want_rows, depth);
        for (const KvPair& p : pairs) REQUIRE(one.add(p.key, p.value).ok());
        const NodeRef want = one.finish_ref();
        RowSink got_rows;
        StackTrie st(&got_rows, depth);
        for (size_t k = 0; k < pairs.size();) {
            if (rng() % 8 == 0) {
                REQUIRE(st.add_view(pairs[k].key, pairs[k].value).ok());
                ++k;
                continue;
            }
            const size_t run = std::min<size_t>(1 + rng() % 150, pairs.size() - k);
            REQUIRE(st.add_run(std::span(pairs).subspan(k, run)).ok());
            k += run;
        }
        CHECK(st.count() == pairs.size());
        CHECK(st.finish_ref() == want);
        CHECK_MESSAGE(got_rows.rows == want_rows.rows, "trial " << trial << ", " << n << " pairs");
    }
}

TEST_CASE("StackTrie::add_run refuses where add_view does, after the pairs before") {
    std::mt19937_64 rng(mpt::test::seed("stack_trie_add_run_errors"));
    for (int trial = 0; trial < 100; ++trial) {
        Pairs m;
        for (int i = 0; i < 200; ++i) m[mpt::test::random_bytes(rng, 1 + rng() % 3)] = {1};
        std::vector<KvPair> pairs = views(m);
        const size_t bad = rng() % pairs.size();
        if (trial % 2 == 0) {
            pairs[bad].value = {};  // an empty value
        } else {
            pairs[bad].key = pairs[bad > 0 ? bad - 1 : bad + 1].key;  // a key given twice
        }
        StackTrie one;
        Status want;
        for (const KvPair& p : pairs) {
            want = one.add_view(p.key, p.value);
            if (!want.ok()) break;
        }
        StackTrie st;
        const Status got = st.add_run(pairs);
        REQUIRE(!want.ok());
        REQUIRE(!got.ok());
        CHECK(got.error().message() == want.error().message());
        CHECK(st.count() == one.count());
    }
}

TEST_CASE("parallel stack_trie_root equals the sequential builder") {
    std::mt19937_64 rng(mpt::test::seed("parallel_root"));
    SUBCASE("empty and single pairs") {
        check_parallel_matches({});
        check_parallel_matches({{h("12"), h("01")}});
        check_parallel_matches({{{}, h("01")}});
        check_parallel_matches({{{}, h("01")}, {h("00"), h("02")}});
    }
    SUBCASE("random keys of random lengths, prefixes of one another") {
        for (int round = 0; round < 300; ++round) {
            Pairs m;
            const size_t n = rng() % 40;
            for (size_t i = 0; i < n; ++i) {
                bytes key = mpt::test::random_bytes(rng, rng() % 4);
                if (!m.empty() && rng() % 3 == 0) {
                    // Extend or cut an existing key: prefix keys.
                    auto it = std::next(m.begin(), static_cast<long>(rng() % m.size()));
                    key = it->first;
                    if (rng() % 2 && !key.empty()) {
                        key.pop_back();
                    } else {
                        key.push_back(static_cast<uint8_t>(rng()));
                    }
                }
                m[key] = value_of(rng);
            }
            check_parallel_matches(m);
        }
    }
    SUBCASE("keys sharing their first nibbles: the top branch is deeper, under an extension") {
        for (int round = 0; round < 200; ++round) {
            Pairs m;
            const bytes shared = mpt::test::random_bytes(rng, 3);
            const size_t shared_nibbles = rng() % 6;  // 0..5 nibbles in common
            const size_t n = 1 + rng() % 30;
            for (size_t i = 0; i < n; ++i) {
                bytes key = mpt::test::random_bytes(rng, 3 + rng() % 3);
                for (size_t j = 0; j < shared_nibbles; ++j) {
                    const uint8_t nib = j % 2 ? shared[j / 2] & 0x0f : shared[j / 2] >> 4;
                    key[j / 2] = j % 2 ? static_cast<uint8_t>((key[j / 2] & 0xf0) | nib)
                                       : static_cast<uint8_t>((key[j / 2] & 0x0f) | nib << 4);
                }
                m[key] = value_of(rng);
            }
            // Sometimes the shared whole bytes themselves are a key: a value at the top branch.
            if (rng() % 2) m[bytes(shared.begin(), shared.begin() + shared_nibbles / 2)] = h("aa");
            check_parallel_matches(m);
        }
    }
    SUBCASE("hashed keys above the threshold") {
        Pairs m;
        for (uint64_t i = 0; i < 3 * kParallelRootMinPairs; ++i) {
            const Hash256 k = keccak256(bytes_view(reinterpret_cast<const uint8_t*>(&i), 8));
            m[bytes(k.begin(), k.end())] = value_of(rng);
        }
        check_parallel_matches(m);
        // All under one first nibble, and one lone tiny pair under another (an embedded child).
        Pairs one;
        for (const auto& [k, v] : m) {
            if (k[0] >> 4 == 0x7) one[k] = v;
        }
        check_parallel_matches(one);
        one[h("a0")] = h("01");
        check_parallel_matches(one);
    }
}

TEST_CASE("stack_trie_root refuses what StackTrie::add refuses") {
    const bytes a = h("01"), b = h("02"), v = h("05");
    const std::vector<KvPair> unsorted = {{b, v}, {a, v}};
    const std::vector<KvPair> duplicate = {{a, v}, {a, v}};
    const std::vector<KvPair> empty_value = {{a, v}, {b, {}}};
    for (unsigned threads : {1u, 2u}) {
        CHECK(stack_trie_root(unsorted, threads, 0).error().code == Errc::bad_input);
        CHECK(stack_trie_root(duplicate, threads, 0).error().code == Errc::bad_input);
        CHECK(stack_trie_root(empty_value, threads, 0).error().code == Errc::bad_input);
    }
}

namespace {

// An array document of n writes over keys that often repeat or share their first bytes,
// with deletions, and the final content it leaves.
std::string kv_document(std::mt19937_64& rng, size_t n, Pairs& final_content) {
    std::string text = "[";
    for (size_t i = 0; i < n; ++i) {
        bytes key = mpt::test::random_bytes(rng, 1 + rng() % 5);
        for (auto& x : key) x &= 0x3f;                             // a narrow alphabet: keys repeat
        if (rng() % 4 == 0) key.insert(key.end(), 8, 0x11);        // long shared paths
        if (rng() % 64 == 0) key.resize(60 + rng() % 20, 0x22);    // paths of 56+ bytes
        if (rng() % 256 == 0) key.resize(250 + rng() % 10, 0x33);  // keys of 255+ bytes too
        text += i == 0 ? "[\"" : ",[\"";
        text += to_hex(key) + "\",";
        if (rng() % 6 == 0) {
            text += "null]";
            final_content.erase(key);
        } else {
            // Now and then a value of 56+ bytes (a two-byte header), some of 256+.
            const bytes value =
                rng() % 32 == 0 ? mpt::test::random_bytes(rng, 56 + rng() % 260) : value_of(rng);
            text += "\"" + to_hex(value) + "\"]";
            final_content[key] = value;
        }
    }
    return text + "]";
}

// kv_root of a document whose final content is content against the root of that content,
// plain and secure, on one thread and on more.
void check_kv_root_of(const std::string& text, const Pairs& content, const std::string& what) {
    auto input = parse_kv(text);
    REQUIRE_MESSAGE(input.ok(), mpt::test::why(input));
    Pairs hashed;
    for (const auto& [k, v] : content) {
        const Hash256 hk = keccak256(k);
        hashed[bytes(hk.begin(), hk.end())] = v;
    }
    for (bool secure : {false, true}) {
        const Hash256 want = sequential(secure ? hashed : content);
        for (unsigned threads : {1u, 2u, 3u}) {
            auto got = kv_root(*input, secure, threads);
            REQUIRE_MESSAGE(got.ok(), mpt::test::why(got));
            CHECK_MESSAGE(got->root == want,
                          what << ", secure " << secure << ", threads " << threads);
            CHECK_MESSAGE(got->pairs == content.size(), what << ", threads " << threads);
        }
    }
}

// All the pairs of a cursor's runs, in order (the views kept past the runs that gave them),
// and in runs the number of runs; cursor.rest() where the runs are not counted.
std::vector<KvPair> all_runs(SortedPairCursor& cursor, size_t& runs) {
    std::vector<KvPair> all;
    for (std::span<const KvPair> run; !(run = cursor.next()).empty(); ++runs)
        all.insert(all.end(), run.begin(), run.end());
    return all;
}

// Checks that pairs are content, in key order.
void check_pairs_are(const std::vector<KvPair>& pairs, const Pairs& content) {
    REQUIRE(pairs.size() == content.size());
    size_t i = 0;
    for (const auto& [k, v] : content) {
        CHECK(bytes(pairs[i].key.begin(), pairs[i].key.end()) == k);
        CHECK(bytes(pairs[i].value.begin(), pairs[i].value.end()) == v);
        ++i;
    }
}

}  // namespace

TEST_CASE("kv_root equals the root of the final content, on any number of threads") {
    std::mt19937_64 rng(mpt::test::seed("kv_root"));
    // 70000 and more entries: the sort's buckets, and runs of many buckets.
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{300}, size_t{5000}, size_t{70000},
                     size_t{150000}}) {
        Pairs content;
        const std::string text = kv_document(rng, n, content);
        check_kv_root_of(text, content, std::to_string(n) + " entries");
    }
}

TEST_CASE("SortedPairCursor's runs are the final content in key order, their views all valid") {
    std::mt19937_64 rng(mpt::test::seed("sorted_pair_cursor"));
    // 90000 entries: the cursor made in slices of the input on more than one thread; parsed
    // in two halves (two arenas), with keys written in both. The writes of a key compare by
    // their place in the input whether the cursor keeps the pair's address (keys under 255
    // bytes, values under 256) or its entry's position (the rest), or one of each.
    struct Case {
        size_t n;
        unsigned threads;
        bool halves;
    };
    for (const Case c : {Case{0, 1, false}, Case{40, 1, false}, Case{90000, 1, false},
                         Case{90000, 2, false}, Case{90000, 3, false}, Case{90000, 2, true}}) {
        const size_t n = c.n;
        const unsigned threads = c.threads;
        CAPTURE(threads);
        CAPTURE(c.halves);
        Pairs content;
        const std::string text = kv_document(rng, n, content);
        auto input = c.halves ? parse_kv(text, 2, 4096) : parse_kv(text);
        REQUIRE(input.ok());
        SortedPairCursor cursor(*input, false, threads);
        size_t runs = 0;
        const std::vector<KvPair> all = all_runs(cursor, runs);
        CHECK(cursor.next().empty());
        CHECK(runs <= std::max<size_t>(1, content.size() / 1024 + 1));
        check_pairs_are(all, content);
    }
}

TEST_CASE("SortedPairCursor: buckets of many random keys, rewritten and deleted, in order") {
    // Random 32-byte keys as hashed keys are: 8,000 to 60,000 entries make 256 buckets of 31
    // to 234 records, sorted by their next nibble (under 64 records) or byte before an
    // insertion sort; a fifth of the writes go to an earlier key again (a new value or a
    // deletion), so that writes of one key meet in a bucket. Their values, short or past 255
    // bytes, keep some pairs in place and the others by their entries.
    std::mt19937_64 rng(mpt::test::seed("cursor_random_buckets"));
    for (size_t n : {size_t{8000}, size_t{60000}}) {
        std::vector<bytes> keys;
        Pairs content;
        std::string text = "[";
        for (size_t i = 0; i < n; ++i) {
            const bool again = !keys.empty() && rng() % 5 == 0;
            const bytes key = again ? keys[rng() % keys.size()] : mpt::test::random_bytes(rng, 32);
            if (!again) keys.push_back(key);
            text += i == 0 ? "[\"" : ",[\"";
            text += to_hex(key) + "\",";
            if (again && rng() % 2 == 0) {
                text += "null]";
                content.erase(key);
                continue;
            }
            const bytes value = mpt::test::random_bytes(rng, rng() % 8 == 0 ? 300 : 32);
            text += "\"" + to_hex(value) + "\"]";
            content[key] = value;
        }
        text += "]";
        auto input = parse_kv(text);
        REQUIRE(input.ok());
        SortedPairCursor cursor(*input, false);
        check_pairs_are(cursor.rest(), content);
    }
}

TEST_CASE("SortedPairCursor: writes of the empty key, some with an empty value, keep their order") {
    // An empty key with an empty value takes no bytes of the arena: the next pair's key begins
    // at the same address, so that the address alone cannot order two writes of the empty key.
    // Keys of first nibble 0 between them share its bucket and leave it far from sorted, so
    // that the sort moves records around.
    std::mt19937_64 rng(mpt::test::seed("cursor_empty_key"));
    for (int round = 0; round < 20; ++round) {
        std::string text = "[";
        bytes last;
        for (int i = 0; i < 400; ++i) {
            bytes other = mpt::test::random_bytes(rng, 1 + rng() % 3);
            other[0] &= 0x0f;
            text += "[\"" + to_hex(other) + "\", \"01\"],";
            if (rng() % 2 == 0) {
                text += rng() % 2 == 0 ? R"(["", null],)" : R"(["", ""],)";
            }
            const bytes v = mpt::test::random_bytes(rng, 1 + rng() % 3);
            text += "[\"\", \"" + to_hex(v) + "\"],";
            last = v;
        }
        text.back() = ']';
        auto input = parse_kv(text);
        REQUIRE(input.ok());
        SortedPairCursor cursor(*input, false);
        const std::vector<KvPair> all = cursor.rest();
        CAPTURE(round);
        REQUIRE(!all.empty());
        REQUIRE(all[0].key.empty());
        CHECK(bytes(all[0].value.begin(), all[0].value.end()) == last);
    }
}

namespace {

// kv_root of an array document of writes (a missing value: a deletion) against the root of
// its final content, as check_kv_root_of.
void check_kv_root(const std::vector<std::pair<bytes, std::optional<bytes>>>& writes,
                   const std::string& what) {
    std::string text = "[";
    Pairs content;
    for (const auto& [key, value] : writes) {
        text += text.size() == 1 ? "[\"" : ",[\"";
        text += to_hex(key) + "\"," + (value ? "\"" + to_hex(*value) + "\"]" : "null]");
        if (value) {
            content[key] = *value;
        } else {
            content.erase(key);
        }
    }
    check_kv_root_of(text + "]", content, what);
}

}  // namespace

TEST_CASE("kv_root on threads: keys under one nibble, the empty key, deletions") {
    std::mt19937_64 rng(mpt::test::seed("kv_root_split"));
    // n keys that start with the nibble high_nibble.
    auto keys = [&](size_t n, uint8_t high_nibble) {
        std::vector<std::pair<bytes, std::optional<bytes>>> w;
        for (size_t i = 0; i < n; ++i) {
            bytes key = mpt::test::random_bytes(rng, 4 + rng() % 4);
            key[0] = static_cast<uint8_t>(high_nibble << 4 | (key[0] & 0x0f));
            w.emplace_back(key, value_of(rng));
        }
        return w;
    };
    const bytes empty_key;
    const bytes empty_value = {0x42};
    // More than kParallelRootMinPairs entries, so that two threads split.
    const size_t n = kParallelRootMinPairs + 100;

    check_kv_root(keys(n, 0x5), "one nibble");
    check_kv_root(keys(n, 0x0), "nibble 0 only");
    auto w = keys(n, 0x0);
    w.emplace_back(empty_key, empty_value);
    check_kv_root(w, "nibble 0 and the empty key");
    w = keys(n, 0x7);
    w.emplace_back(empty_key, empty_value);
    check_kv_root(w, "one nibble and the empty key");
    w = keys(n / 2, 0x1);
    auto more = keys(n / 2, 0x2);
    w.insert(w.end(), more.begin(), more.end());
    w.emplace_back(empty_key, empty_value);
    check_kv_root(w, "two nibbles and the empty key");
    for (const auto& [key, value] : more) w.emplace_back(key, std::nullopt);
    check_kv_root(w, "two nibbles, one deleted, and the empty key");
    w.emplace_back(empty_key, std::nullopt);
    check_kv_root(w, "two nibbles, one deleted");
    auto only = keys(n, 0x3);
    for (size_t i = 0, size = only.size(); i < size; ++i)
        only.emplace_back(only[i].first, std::nullopt);
    only.emplace_back(empty_key, empty_value);
    check_kv_root(only, "everything deleted but the empty key");
    only.emplace_back(empty_key, std::nullopt);
    check_kv_root(only, "everything deleted");

    // Exactly the thresholds: 4096 entries split, 65536 take 65536 buckets. One-byte keys,
    // keys that are prefixes of others, and the empty key among them.
    for (size_t size : {kParallelRootMinPairs, size_t{65536}}) {
        std::vector<std::pair<bytes, std::optional<bytes>>> mixed;
        mixed.emplace_back(empty_key, empty_value);
        for (size_t i = 0; mixed.size() < size; ++i) {
            bytes key = mpt::test::random_bytes(rng, rng() % 3 == 0 ? 1 : 2 + rng() % 5);
            mixed.emplace_back(key, value_of(rng));
            if (key.size() > 1 && mixed.size() < size) {
                key.resize(1 + rng() % (key.size() - 1));  // a prefix of the key before
                mixed.emplace_back(key,
                                   rng() % 4 == 0 ? std::nullopt : std::optional(value_of(rng)));
            }
        }
        check_kv_root(mixed, std::to_string(size) + " mixed entries");
    }
}
