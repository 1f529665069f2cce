#include <doctest/doctest.h>

#include <map>
#include <mpt/proof/node_path.hpp>
#include <mpt/store/node_store.hpp>

#include "stored_trie.hpp"
#include "test_util.hpp"

using namespace mpt;
using mpt::test::b;
using mpt::test::build;
using mpt::test::h;
using mpt::test::StoredTrie;
using LStatus = NodeLookup::Status;

namespace {

// --- An independent reading of the trie, straight from the RLP (not decode_node) ---------

struct Expected {
    LStatus status;
    bytes rlp;
};

// The items of an RLP list, each as its whole encoding (header included).
std::vector<bytes_view> list_items(bytes_view rlp) {
    auto outer = rlp::decode_single(rlp);
    REQUIRE(outer.ok());
    REQUIRE(outer->is_list);
    std::vector<bytes_view> items;
    bytes_view in = outer->payload;
    while (!in.empty()) {
        const uint8_t* start = in.data();
        REQUIRE(rlp::decode_item(in).ok());
        items.emplace_back(start, static_cast<size_t>(in.data() - start));
    }
    return items;
}

bytes string_payload(bytes_view item) {
    auto s = rlp::decode_string(item);
    REQUIRE(s.ok());
    return bytes(s->begin(), s->end());
}

// Hex-prefix decoding written out here: flag nibble (bit 1 leaf, bit 0 odd), pad when even.
std::pair<bytes, bool> hp_decode(const bytes& enc) {
    const uint8_t flag = enc[0] >> 4;
    bytes n;
    if (flag & 1) n.push_back(enc[0] & 0x0f);
    for (size_t i = 1; i < enc.size(); ++i) {
        n.push_back(enc[i] >> 4);
        n.push_back(enc[i] & 0x0f);
    }
    return {n, (flag & 2) != 0};
}

bytes hp_encode(const bytes& nibbles, bool leaf) {
    bytes out;
    const bool odd = nibbles.size() % 2;
    const uint8_t flag = static_cast<uint8_t>((leaf ? 2 : 0) | (odd ? 1 : 0));
    size_t i = 0;
    if (odd) {
        out.push_back(static_cast<uint8_t>(flag << 4 | nibbles[0]));
        i = 1;
    } else {
        out.push_back(static_cast<uint8_t>(flag << 4));
    }
    for (; i < nibbles.size(); i += 2)
        out.push_back(static_cast<uint8_t>(nibbles[i] << 4 | nibbles[i + 1]));
    return out;
}

// Every position that holds a node, with the answer a lookup must give there: the rows
// are taken from the store's raw map, children found by reading each node's RLP. A leaf
// is also registered at its full key path (position + its partial key).
void collect(const MemoryNodeStore::State& rows, TrieId id, const bytes& pos, bytes_view rlp,
             bool hashed, std::map<bytes, Expected>& out) {
    const LStatus st = hashed ? LStatus::found : LStatus::embedded;
    out[pos] = {st, bytes(rlp.begin(), rlp.end())};
    auto child_at = [&](const bytes& cpos, bytes_view item) {
        if (item.size() == 1 && item[0] == 0x80) return;  // empty slot
        if (item[0] >= 0xc0) {                            // embedded: the list itself
            collect(rows, id, cpos, item, false, out);
            return;
        }
        const bytes hash = string_payload(item);
        REQUIRE(hash.size() == 32);
        const auto it = rows.rows.find({id, cpos});
        REQUIRE(it != rows.rows.end());
        collect(rows, id, cpos, it->second, true, out);
    };
    const auto items = list_items(rlp);
    if (items.size() == 17) {
        for (uint8_t i = 0; i < 16; ++i) {
            bytes cpos = pos;
            cpos.push_back(i);
            child_at(cpos, items[i]);
        }
        return;
    }
    REQUIRE(items.size() == 2);
    const auto [path, leaf] = hp_decode(string_payload(items[0]));
    bytes end = pos;
    end.insert(end.end(), path.begin(), path.end());
    if (leaf) {
        out[end] = {st, bytes(rlp.begin(), rlp.end())};
    } else {
        child_at(end, items[1]);
    }
}

std::map<bytes, Expected> all_positions(const StoredTrie& st) {
    std::map<bytes, Expected> out;
    if (st.root == kEmptyRoot) return out;
    const auto& rows = st.store.state();
    const auto it = rows.rows.find({st.info.id, bytes{}});
    REQUIRE(it != rows.rows.end());
    collect(rows, st.info.id, {}, it->second, true, out);
    return out;
}

Expected expected_at(const std::map<bytes, Expected>& positions, const bytes& nibbles) {
    const auto it = positions.find(nibbles);
    if (it == positions.end()) return {LStatus::absent, {}};
    return it->second;
}

NodeLookup lookup(StoredTrie& st, const bytes& compact) {
    TrieReader reader(st.store, st.info);
    auto r = lookup_node(reader, st.root, compact);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    return std::move(*r);
}

void check_at(StoredTrie& st, const std::map<bytes, Expected>& positions, const bytes& nibbles,
              bool leaf_flag) {
    const Expected want = expected_at(positions, nibbles);
    const NodeLookup got = lookup(st, hp_encode(nibbles, leaf_flag));
    CAPTURE(to_hex(hp_encode(nibbles, leaf_flag)));
    CHECK(got.status == want.status);
    CHECK(to_hex(got.rlp) == to_hex(want.rlp));
}

bytes nibbles_of(bytes_view key) {
    bytes n;
    for (const uint8_t x : key) {
        n.push_back(x >> 4);
        n.push_back(x & 0x0f);
    }
    return n;
}

bytes big(uint8_t fill) { return bytes(40, fill); }  // a value that keeps its leaf hashed

}  // namespace

TEST_CASE("get-node: a path crossing an extension reaches its hashed child") {
    // Two keys under the common prefix 0x1234: the root is an extension over 1,2,3,4 whose
    // child branch is hashed (two 40-byte leaves).
    StoredTrie st;
    build(st, {{h("1234aa"), big(1)}, {h("1234bb"), big(2)}});
    const auto pos = all_positions(st);
    REQUIRE(pos.count({1, 2, 3, 4}) == 1);
    REQUIRE(pos.at({1, 2, 3, 4}).status == LStatus::found);
    const NodeLookup child = lookup(st, h("001234"));
    CHECK(child.status == LStatus::found);
    CHECK(child.rlp == pos.at({1, 2, 3, 4}).rlp);
    // Inside the extension's partial key: odd and even lengths.
    CHECK(lookup(st, h("11")).status == LStatus::absent);
    CHECK(lookup(st, h("0012")).status == LStatus::absent);
    CHECK(lookup(st, h("1123")).status == LStatus::absent);
    // Leaving the extension's key.
    CHECK(lookup(st, h("001235")).status == LStatus::absent);
    // The root, by compact 0x00 and by the empty path.
    const NodeLookup root = lookup(st, h("00"));
    CHECK(root.status == LStatus::found);
    CHECK(keccak256(root.rlp) == st.root);
    CHECK(lookup(st, {}).rlp == root.rlp);
    // A branch child at odd length (1,2,3,4,a) is a hashed leaf.
    const NodeLookup leaf = lookup(st, h("11234a"));
    CHECK(leaf.status == LStatus::found);
    CHECK(leaf.rlp == pos.at({1, 2, 3, 4, 0xa}).rlp);
    for (const auto& [p, e] : pos) {
        check_at(st, pos, p, false);
        check_at(st, pos, p, true);
    }
}

TEST_CASE("get-node: a leaf's full key path names the leaf, with and without the leaf flag") {
    std::mt19937_64 rng(mpt::test::seed("node_path_leaf"));
    std::map<bytes, bytes> m;
    for (int i = 0; i < 40; ++i) m[mpt::test::random_bytes(rng, 32)] = big(static_cast<uint8_t>(i));
    StoredTrie st;
    build(st, m);
    const auto pos = all_positions(st);
    for (const auto& [k, v] : m) {
        const bytes full = nibbles_of(k);
        REQUIRE(full.size() == 64);
        const NodeLookup plain = lookup(st, hp_encode(full, false));
        const NodeLookup flagged = lookup(st, hp_encode(full, true));
        CHECK(plain.status == LStatus::found);
        CHECK(flagged.status == LStatus::found);
        CHECK(plain.rlp == pos.at(full).rlp);
        CHECK(flagged.rlp == plain.rlp);
        // The leaf's own position gives the same node: find it as the shortest registered
        // prefix of the key whose node is this leaf.
        const bytes& leaf_rlp = pos.at(full).rlp;
        size_t at = 0;
        while (at < 64 && !(pos.count(bytes(full.begin(), full.begin() + at)) &&
                            pos.at(bytes(full.begin(), full.begin() + at)).rlp == leaf_rlp)) {
            ++at;
        }
        REQUIRE(at < 64);
        CHECK(lookup(st, hp_encode(bytes(full.begin(), full.begin() + at), false)).rlp ==
              plain.rlp);
        // Inside the leaf's partial key, and past its end: nothing starts there.
        CHECK(lookup(st, hp_encode(bytes(full.begin(), full.begin() + 63), false)).status ==
              LStatus::absent);
        CHECK(lookup(st, hp_encode(bytes(full.begin(), full.begin() + at + 1), true)).status ==
              LStatus::absent);
        bytes longer = full;
        longer.push_back(0);
        CHECK(lookup(st, hp_encode(longer, false)).status == LStatus::absent);
    }
}

TEST_CASE("get-node: a branch holding a value, embedded nodes, the empty trie") {
    // 0xab is a prefix of 0xabcd and 0xabce: the branch at nibbles a,b holds 0xab's value.
    StoredTrie st;
    build(st, {{h("ab"), big(1)}, {h("abcd"), big(2)}, {h("abce"), big(3)}, {h("01"), b("x")}});
    const auto pos = all_positions(st);
    REQUIRE(pos.count({0xa, 0xb}) == 1);
    const NodeLookup br = lookup(st, h("00ab"));
    CHECK(br.status == LStatus::found);
    CHECK(br.rlp == pos.at({0xa, 0xb}).rlp);
    auto items = list_items(br.rlp);
    REQUIRE(items.size() == 17);
    CHECK(string_payload(items[16]) == big(1));
    // Key 0x01 with a one-byte value: its leaf is embedded in the root branch.
    const NodeLookup emb = lookup(st, h("10"));
    CHECK(emb.status == LStatus::embedded);
    CHECK(emb.rlp == pos.at({0}).rlp);
    CHECK(emb.rlp.size() < 32);
    CHECK(lookup(st, h("0001")).status == LStatus::embedded);  // its full key path
    CHECK(lookup(st, h("2001")).status == LStatus::embedded);  // the same, leaf flag set
    CHECK(lookup(st, h("000100")).status == LStatus::absent);  // past the leaf
    CHECK(lookup(st, h("15")).status == LStatus::absent);      // an empty slot
    for (const auto& [p, e] : pos) check_at(st, pos, p, false);

    StoredTrie empty;
    build(empty, {});
    CHECK(lookup(empty, h("00")).status == LStatus::absent);
    CHECK(lookup(empty, h("1a")).status == LStatus::absent);
}

TEST_CASE("get-node: random tries agree with an independent walk at every position") {
    std::mt19937_64 rng(mpt::test::seed("node_path_random"));
    for (int round = 0; round < 60; ++round) {
        std::map<bytes, bytes> m;
        const size_t n = 1 + rng() % 80;
        for (size_t i = 0; i < n; ++i) {
            bytes k = mpt::test::random_bytes(rng, rng() % 4);
            for (auto& x : k) x &= 0x31;  // narrow alphabet: shared prefixes, extensions
            m[k] = mpt::test::random_bytes(rng, 1 + rng() % (rng() % 2 ? 40 : 3));
        }
        StoredTrie st;
        build(st, m);
        const auto pos = all_positions(st);
        for (const auto& [p, e] : pos) {
            check_at(st, pos, p, rng() % 2);
            // Every prefix and one-nibble extension of a node position: inside short keys,
            // empty slots, past leaves.
            for (size_t cut = 0; cut < p.size(); ++cut) {
                check_at(st, pos, bytes(p.begin(), p.begin() + cut), rng() % 2);
            }
            bytes more = p;
            more.push_back(static_cast<uint8_t>(rng() % 16));
            check_at(st, pos, more, false);
        }
    }
}

TEST_CASE("get-node: a stored row is trusted only when its parent's hash matches") {
    StoredTrie st;
    build(st, {{h("1234aa"), big(1)}, {h("1234bb"), big(2)}});
    const auto pos = all_positions(st);
    // Replace the branch at 1,2,3,4 by a different valid node: a row exists at the path,
    // but its hash is not what the extension holds.
    REQUIRE(st.store.begin_write().ok());
    REQUIRE(st.store.put(st.info.id, bytes{1, 2, 3, 4}, pos.at({1, 2, 3, 4, 0xa}).rlp).ok());
    REQUIRE(st.store.commit_write().ok());
    TrieReader reader(st.store, st.info);
    auto r = lookup_node(reader, st.root, h("001234"));
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_hash_mismatch);
    // Through the corrupted row to a child below it: refused as well.
    r = lookup_node(reader, st.root, h("11234a"));
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_hash_mismatch);
    // A missing row.
    REQUIRE(st.store.begin_write().ok());
    REQUIRE(st.store.erase(st.info.id, bytes{1, 2, 3, 4}).ok());
    REQUIRE(st.store.commit_write().ok());
    r = lookup_node(reader, st.root, h("001234"));
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_missing_node);
    // Paths that end above the damage still answer.
    CHECK(lookup_node(reader, st.root, h("00")).ok());
    CHECK(lookup_node(reader, st.root, h("0012")).value().status == LStatus::absent);
}

TEST_CASE("path sets") {
    auto one = parse_path_set("0x00");
    REQUIRE(one.ok());
    CHECK(!one->account);
    REQUIRE(one->paths.size() == 1);
    CHECK(one->paths[0] == h("00"));
    CHECK(parse_path_set("0x").value().paths[0].empty());  // the root, as geth reads it

    const std::string acct = "0x" + std::string(64, 'a');
    auto storage = parse_path_set(acct + ",0x00,0x1a,0x3f");
    REQUIRE(storage.ok());
    REQUIRE(storage->account.has_value());
    CHECK(to_hex(*storage->account) == acct);
    CHECK(storage->paths.size() == 3);

    auto err = [](std::string_view s) {
        auto r = parse_path_set(s);
        REQUIRE(!r.ok());
        return r.error();
    };
    CHECK(err("").code == Errc::bad_input);
    CHECK(err("0x00,").code == Errc::bad_input);
    CHECK(err("0x0").code == Errc::bad_hex);
    CHECK(err("0xzz").code == Errc::bad_hex);
    CHECK(err("0x40").code == Errc::bad_compact_path);  // flag nibble above 3
    CHECK(err("0x01").code == Errc::bad_compact_path);  // nonzero pad nibble
    CHECK(err("0x1234,0x00").code == Errc::bad_input);  // account hash not 32 bytes
    CHECK(err(acct + ",0x05").detail.find("element 2") != std::string::npos);
}

TEST_CASE("response byte limit: the response that crosses the limit is the last") {
    ResponseLimit unlimited(std::nullopt);
    for (int i = 0; i < 100; ++i) unlimited.add(1000);
    CHECK(unlimited.open());

    const std::vector<uint64_t> sizes = {40, 0, 50, 30, 20};
    auto taken = [&](uint64_t max) {
        ResponseLimit l(max);
        size_t n = 0;
        for (const uint64_t s : sizes) {
            if (!l.open()) break;
            l.add(s);
            ++n;
        }
        return n;
    };
    CHECK(taken(0) == 1);   // 40 > 0 after the first
    CHECK(taken(40) == 3);  // 40 is not above 40; the absent one adds nothing; 90 crosses
    CHECK(taken(89) == 3);
    CHECK(taken(90) == 4);  // 90 does not exceed 90; 120 does
    CHECK(taken(1000) == 5);
}
