// Execution witnesses: the shapes read, the header chain, and the check of nodes and keys on a
// state made here, with every node left out in turn.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/state/account.hpp>
#include <mpt/state/block_json.hpp>
#include <mpt/witness/apply.hpp>
#include <mpt/witness/check.hpp>

#include "stored_trie.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

using namespace mpt;
using mpt::test::StoredTrie;
using mpt::test::to_bytes;
using mpt::test::word;

namespace {

bytes list_of(const std::vector<bytes>& items, bool as_strings) {
    bytes payload;
    for (const bytes& i : items) {
        if (as_strings) {
            rlp::append_string(payload, i);
        } else {
            payload.insert(payload.end(), i.begin(), i.end());
        }
    }
    bytes out;
    rlp::append_list_header(out, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

// A header of 15 fields: parentHash, stateRoot and number as given, the rest zero.
bytes header(const Hash256& parent, const Hash256& state_root, uint64_t number) {
    std::vector<bytes> f(15);
    f[0] = to_bytes(parent);
    f[1] = bytes(32, 0);
    f[2] = bytes(20, 0);
    f[3] = to_bytes(state_root);
    f[4] = to_bytes(kEmptyRoot);
    f[5] = to_bytes(kEmptyRoot);
    f[6] = bytes(256, 0);
    for (uint64_t n = number; n != 0; n >>= 8) f[8].insert(f[8].begin(), static_cast<uint8_t>(n));
    f[13] = bytes(32, 0);
    f[14] = bytes(8, 0);
    return list_of(f, true);
}

// Forty accounts, the first with twenty slots.
struct State {
    StoredTrie storage;
    StoredTrie accounts;
    std::vector<Address> addresses;

    State() {
        std::map<bytes, bytes> slots;
        for (uint64_t s = 1; s <= 20; ++s) {
            bytes v;
            encode_storage_value(v, word(0x100 + s));
            slots[to_bytes(keccak256(word(s)))] = v;
        }
        mpt::test::build(storage, slots);
        std::map<bytes, bytes> accts;
        for (uint8_t i = 1; i <= 40; ++i) {
            Address a{};
            a[0] = i;
            a[19] = i;
            addresses.push_back(a);
            Account acc;
            acc.nonce = i;
            if (i == 1) {
                acc.storage_root = storage.root;
                acc.code_hash = keccak256(mpt::test::b("code"));
            }
            bytes v;
            encode_account(v, acc);
            accts[to_bytes(keccak256(a))] = v;
        }
        mpt::test::build(accounts, accts);
    }

    // The witness of the first three accounts, slots 1 to 4 and 99 of the first, and an
    // absent account, in reth's order.
    Witness witness() {
        Witness w;
        std::set<bytes> nodes;
        Address absent{};
        absent[0] = 0xee;
        for (const Address& a : {addresses[0], addresses[1], addresses[2], absent}) {
            TrieReader r = accounts.reader();
            const std::vector<bytes> proof = prove(r, accounts.root, keccak256(a)).value();
            nodes.insert(proof.begin(), proof.end());
            w.keys.push_back(to_bytes(a));
            if (a != addresses[0]) continue;
            for (uint64_t s : {1, 2, 3, 4, 99}) {
                TrieReader sr = storage.reader();
                const std::vector<bytes> proof =
                    prove(sr, storage.root, keccak256(word(s))).value();
                nodes.insert(proof.begin(), proof.end());
                w.keys.push_back(to_bytes(word(s)));
            }
        }
        w.state.assign(nodes.begin(), nodes.end());
        w.codes.push_back(mpt::test::b("code"));
        return w;
    }
};

}  // namespace

TEST_CASE("witness check: every key resolves, with its value") {
    State s;
    const Witness w = s.witness();
    const WitnessCheck c = check_witness(w, s.accounts.root);
    CHECK(c.unresolved() == 0);
    CHECK(c.superfluous.empty());
    CHECK(c.undecodable.empty());
    CHECK(c.reached == w.state.size());
    CHECK(c.storage_tries == 1);
    CHECK(c.codes_matched == 1);
    CHECK_FALSE(c.keys_sorted);
    REQUIRE(c.keys.size() == 9);
    CHECK(c.keys[0].status == WitnessKey::Status::present);
    CHECK(decode_account(c.keys[0].value).value().storage_root == s.storage.root);
    for (size_t i = 1; i <= 4; ++i) {
        CHECK(c.keys[i].status == WitnessKey::Status::present);
        CHECK(bytes_equal(c.keys[i].address, to_bytes(s.addresses[0])));
        CHECK(decode_storage_value(c.keys[i].value).value() == word(0x100 + i));
    }
    CHECK(c.keys[5].status == WitnessKey::Status::absent);  // slot 99
    CHECK(decode_account(c.keys[7].value).value().nonce == 3);
    CHECK(c.keys[8].status == WitnessKey::Status::absent);  // the absent account
}

TEST_CASE("witness check: each node left out leaves a key unresolved that names it") {
    State s;
    const Witness whole = s.witness();
    for (size_t i = 0; i < whole.state.size(); ++i) {
        Witness w = whole;
        w.state.erase(w.state.begin() + static_cast<std::ptrdiff_t>(i));
        const Hash256 gone = keccak256(whole.state[i]);
        const WitnessCheck c = check_witness(w, s.accounts.root);
        const bool named = std::any_of(c.keys.begin(), c.keys.end(), [&](const WitnessKey& k) {
            return k.status == WitnessKey::Status::unresolved && k.stop->missing == gone &&
                   k.stop->reason == "missing";
        });
        CHECK_MESSAGE(named, "node " << i << " " << to_hex(gone));
    }
}

TEST_CASE("witness check: keys sorted resolve their slots in any listed account") {
    State s;
    Witness w = s.witness();
    std::sort(w.keys.begin(), w.keys.end());
    const WitnessCheck c = check_witness(w, s.accounts.root);
    CHECK(c.keys_sorted);
    CHECK(c.unresolved() == 0);
    size_t present_slots = 0;
    for (const WitnessKey& k : c.keys) {
        if (k.kind == WitnessKey::Kind::slot && k.status == WitnessKey::Status::present) {
            ++present_slots;
            CHECK(bytes_equal(k.address, to_bytes(s.addresses[0])));
        }
    }
    CHECK(present_slots == 4);
}

TEST_CASE("witness check: branches that all point at one node cost no more than the nodes") {
    // Sixty levels of branches, each of whose sixteen children is the level below.
    std::vector<bytes> state;
    Hash256 below{};
    const bytes leaf = list_of({bytes{0x20}, bytes(33, 0x42)}, true);
    state.push_back(leaf);
    below = keccak256(leaf);
    for (int level = 0; level < 60; ++level) {
        std::vector<bytes> items(16, to_bytes(below));
        items.push_back({});
        const bytes branch = list_of(items, true);
        state.push_back(branch);
        below = keccak256(branch);
    }
    Witness w;
    w.state = state;
    const WitnessCheck c = check_witness(w, below);
    CHECK(c.reached == state.size());
    CHECK(c.accounts == 1);  // one node, however many paths lead to it
}

TEST_CASE("witness check: a node that is no node, and one from elsewhere") {
    State s;
    Witness w = s.witness();
    w.state.push_back(bytes(40, 0x01));
    w.state.push_back(w.state.front());
    w.state.push_back(list_of({bytes{0x20}, bytes(40, 0x55)}, true));  // a leaf of no trie here
    w.codes.push_back(mpt::test::b("other code"));
    const WitnessCheck c = check_witness(w, s.accounts.root);
    CHECK(c.unresolved() == 0);
    REQUIRE(c.undecodable.size() == 1);
    CHECK(c.undecodable[0].index == w.state.size() - 3);
    CHECK(c.superfluous == std::vector<Hash256>{keccak256(w.state.back())});
    CHECK(c.duplicated == 1);
    CHECK(c.codes_unmatched.size() == 1);
}

TEST_CASE("witness headers: the chain gives the highest header's stateRoot") {
    const Hash256 r0 = keccak256(mpt::test::b("state 0"));
    const Hash256 r1 = keccak256(mpt::test::b("state 1"));
    const bytes h0 = header(Hash256{}, r0, 9);
    const bytes h1 = header(keccak256(h0), r1, 10);
    Witness w;
    w.headers = {h1, h0};  // in any order
    auto facts = witness_headers(w);
    REQUIRE(facts.ok());
    CHECK((*facts)[0].number == 10);
    CHECK((*facts)[1].hash == keccak256(h0));
    auto root = witness_pre_state_root(*facts);
    REQUIRE(root.ok());
    CHECK(*root == r1);

    SUBCASE("a parent hash that is not the parent's") {
        w.headers = {h0, header(keccak256(h1), r1, 10)};
        auto e = witness_pre_state_root(witness_headers(w).value());
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().detail.find("do not form a chain") != std::string::npos);
    }
    SUBCASE("a gap") {
        w.headers = {h0, header(keccak256(h0), r1, 11)};
        auto e = witness_pre_state_root(witness_headers(w).value());
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().detail.find("not consecutive") != std::string::npos);
    }
    SUBCASE("two headers of one number") {
        w.headers = {h0, header(Hash256{}, r1, 9)};
        auto e = witness_pre_state_root(witness_headers(w).value());
        REQUIRE_FALSE(e.ok());
        CHECK(e.error().detail.find("two headers of block 9") != std::string::npos);
    }
    SUBCASE("none") { CHECK_FALSE(witness_pre_state_root({}).value().has_value()); }
}

TEST_CASE("read_witness: RLP of three and four items, binary and 0x hex, and JSON") {
    State s;
    const Witness w = s.witness();
    const bytes h0 = header(Hash256{}, s.accounts.root, 1);
    const bytes headers = list_of({h0}, false);
    const bytes four = list_of(
        {headers, list_of(w.codes, true), list_of(w.state, true), list_of(w.keys, true)}, false);
    const std::string four_text(four.begin(), four.end());
    auto r = read_witness(four_text);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(r->state == w.state);
    CHECK(r->keys == w.keys);
    CHECK(r->headers == std::vector<bytes>{h0});
    CHECK(r->shape == "RLP [headers, codes, state, keys]");

    const bytes three = list_of({headers, list_of(w.codes, true), list_of(w.state, true)}, false);
    r = read_witness(" " + to_hex(three) + "\n");
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(r->keys.empty());
    CHECK(r->shape == "RLP [headers, codes, state], as 0x hex");

    std::string json = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"state\":[";
    for (size_t i = 0; i < w.state.size(); ++i)
        json += (i ? ",\"" : "\"") + to_hex(w.state[i]) + "\"";
    json += "],\"codes\":null,\"headers\":[\"" + to_hex(h0) + "\"],\"extra\":{}}}";
    r = read_witness(json);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(r->state == w.state);
    CHECK(r->codes.empty());
    CHECK(r->shape == "JSON (JSON-RPC result)");

    const bytes five = list_of(
        {headers, list_of({}, true), list_of({}, true), list_of({}, true), list_of({}, true)},
        false);
    CHECK(read_witness(std::string(five.begin(), five.end())).error().detail.find("has 5 items") !=
          std::string::npos);
    CHECK(read_witness("{\"state\":[],\"keys\":[\"0x1234\"]}")
              .error()
              .detail.find("a key of 2 bytes") != std::string::npos);
    CHECK(read_witness("{\"codes\":[]}").error().detail.find("no \"state\" member") !=
          std::string::npos);
    CHECK_FALSE(read_witness("").ok());
}

TEST_CASE("encode_header_json: the fields a fork adds, in order, and the hash") {
    const std::string base =
        "\"parentHash\":\"0x" + std::string(64, '0') + "\",\"sha3Uncles\":\"0x" +
        std::string(64, '1') + "\",\"miner\":\"0x" + std::string(40, '2') +
        "\",\"stateRoot\":\"0x" + std::string(64, '3') + "\",\"transactionsRoot\":\"0x" +
        std::string(64, '4') + "\",\"receiptsRoot\":\"0x" + std::string(64, '5') +
        "\",\"logsBloom\":\"0x" + std::string(512, '0') +
        "\",\"difficulty\":\"0x0\",\"number\":\"0x10\",\"gasLimit\":\"0x1c9c380\",\"gasUsed\":"
        "\"0x0\",\"timestamp\":\"0x65\",\"extraData\":\"0x\",\"mixHash\":\"0x" +
        std::string(64, '6') + "\",\"nonce\":\"0x0000000000000000\"";
    std::deque<std::string> texts;  // each tree's text, which it views
    auto parse = [&texts](std::string text) {
        auto tree = JsonTree::parse(texts.emplace_back(std::move(text)));
        REQUIRE(tree.ok());
        return tree;
    };
    auto t = parse("{" + base + ",\"baseFeePerGas\":\"0x7\"}");
    auto rlp = encode_header_json(t->root(), "h");
    REQUIRE_MESSAGE(rlp.ok(), mpt::test::why(rlp));
    auto facts = header_facts(*rlp);
    REQUIRE(facts.ok());
    CHECK(facts->number == 16);
    CHECK(rlp::count_items(rlp::decode_single(*rlp).value().payload).value() == 16);

    t = parse("{" + base + ",\"baseFeePerGas\":\"0x7\",\"hash\":\"" + to_hex(keccak256(*rlp)) +
              "\"}");
    CHECK(encode_header_json(t->root(), "h").ok());
    t = parse("{" + base + ",\"baseFeePerGas\":\"0x8\",\"hash\":\"" + to_hex(keccak256(*rlp)) +
              "\"}");
    CHECK(encode_header_json(t->root(), "h").error().detail.find("the header's fields hash to") !=
          std::string::npos);
    t = parse("{" + base + ",\"withdrawalsRoot\":\"0x" + std::string(64, '7') + "\"}");
    CHECK(
        encode_header_json(t->root(), "h").error().detail.find("given, but baseFeePerGas is not") !=
        std::string::npos);
}

TEST_CASE("witness apply: the root of the changes from the witness alone, or the node it lacks") {
    State s;
    // Every row of both tries: whatever the changes reach is there.
    Witness whole;
    for (const auto& [path, rlp] : s.accounts.rows()) whole.state.push_back(rlp);
    for (const auto& [path, rlp] : s.storage.rows()) whole.state.push_back(rlp);
    ChangesDoc doc;
    AccountUpdate gone;
    gone.address = s.addresses[1];
    gone.deleted = true;
    AccountUpdate changed;
    changed.address = s.addresses[0];
    changed.nonce = 99;
    changed.storage.push_back({word(1), U256{}});    // cleared
    changed.storage.push_back({word(77), word(5)});  // made
    doc.accounts = {changed, gone};

    // The same changes through tries holding everything, as mpt update applies them.
    Trie storage;
    for (uint64_t slot = 2; slot <= 20; ++slot) {
        bytes v;
        encode_storage_value(v, word(0x100 + slot));
        REQUIRE(storage.put(keccak256(word(slot)), v).ok());
    }
    bytes v77;
    encode_storage_value(v77, word(5));
    REQUIRE(storage.put(keccak256(word(77)), v77).ok());
    Trie accounts;
    for (uint8_t i = 1; i <= 40; ++i) {
        if (i == 2) continue;
        Account acc;
        acc.nonce = i == 1 ? 99 : i;
        if (i == 1) {
            acc.storage_root = storage.root_hash().value();
            acc.code_hash = keccak256(mpt::test::b("code"));
        }
        bytes v;
        encode_account(v, acc);
        REQUIRE(accounts.put(keccak256(s.addresses[i - 1]), v).ok());
    }
    const Hash256 want = accounts.root_hash().value();

    WitnessTries tries(whole);
    auto r = apply_changes(tries, s.accounts.root, doc);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(r->root == want);
    CHECK(r->deleted == 1);
    CHECK(r->slots == 2);
}

TEST_CASE("witness apply: a deletion that collapses the root needs the surviving sibling") {
    // Two accounts: deleting one leaves the other's leaf, which the new root is made from.
    StoredTrie two;
    std::map<bytes, bytes> accts;
    Address a{}, b{};
    a[19] = 1;
    b[19] = 2;
    for (const Address& x : {a, b}) {
        Account acc;
        acc.nonce = x[19];
        bytes v;
        encode_account(v, acc);
        accts[to_bytes(keccak256(x))] = v;
    }
    mpt::test::build(two, accts);
    ChangesDoc doc;
    AccountUpdate gone;
    gone.address = a;
    gone.deleted = true;
    doc.accounts = {gone};

    Witness reads;
    TrieReader r = two.reader();
    reads.state = prove(r, two.root, keccak256(a)).value();
    WitnessTries partial(reads);
    auto e = apply_changes(partial, two.root, doc);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().code == Errc::storage_missing_node);
    TrieReader rb = two.reader();
    const std::vector<bytes> proof_b = prove(rb, two.root, keccak256(b)).value();
    REQUIRE(partial.missing().has_value());
    CHECK(*partial.missing() == keccak256(proof_b.back()));  // b's leaf

    Witness both = reads;
    both.state.push_back(proof_b.back());
    WitnessTries whole(both);
    auto ok = apply_changes(whole, two.root, doc);
    REQUIRE_MESSAGE(ok.ok(), mpt::test::why(ok));
    Trie only_b;
    REQUIRE(only_b.put(keccak256(b), accts[to_bytes(keccak256(b))]).ok());
    CHECK(ok->root == only_b.root_hash().value());
}
