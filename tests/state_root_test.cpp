// State roots against a second route: the in-memory Trie over accounts and storage values
// RLP-encoded here by hand (Yellow Paper appendix B), not by state/account.cpp.
#include "test_util.hpp"

#include <mpt/core/keccak.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/state/document.hpp>
#include <mpt/trie/trie.hpp>

#include <doctest/doctest.h>

#include <map>
#include <random>

using namespace mpt;
using mpt::test::h;
using mpt::test::why;

namespace {

bytes rlp_string(bytes s) {
    if (s.size() == 1 && s[0] < 0x80) return s;
    bytes out;
    if (s.size() < 56) {
        out.push_back(static_cast<uint8_t>(0x80 + s.size()));
    } else {
        out.push_back(static_cast<uint8_t>(0xb7 + 1));
        out.push_back(static_cast<uint8_t>(s.size()));  // the tests' strings are under 256
    }
    out.insert(out.end(), s.begin(), s.end());
    return out;
}

bytes rlp_list(const std::vector<bytes>& items) {
    bytes payload;
    for (const bytes& i : items) payload.insert(payload.end(), i.begin(), i.end());
    bytes out;
    if (payload.size() < 56) {
        out.push_back(static_cast<uint8_t>(0xc0 + payload.size()));
    } else {
        out.push_back(0xf8);
        out.push_back(static_cast<uint8_t>(payload.size()));
    }
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

bytes trimmed(bytes v) {
    size_t i = 0;
    while (i < v.size() && v[i] == 0) ++i;
    return bytes(v.begin() + static_cast<long>(i), v.end());
}

bytes be(uint64_t v) {
    bytes out;
    for (int i = 7; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return trimmed(out);
}

bytes padded32(const bytes& v) {
    bytes out(32 - v.size(), 0);
    out.insert(out.end(), v.begin(), v.end());
    return out;
}

// An account as a test writes it: big-endian bytes, slots to values.
struct Acc {
    std::string address;  // 40 hex digits
    uint64_t nonce = 0;
    bytes balance;
    bytes code;
    std::map<bytes, bytes> storage;  // slot -> value, both short big-endian
};

Hash256 by_trie(const std::vector<Acc>& accounts) {
    Trie state;
    for (const Acc& a : accounts) {
        Trie storage;
        for (const auto& [slot, value] : a.storage) {
            if (trimmed(value).empty()) continue;
            REQUIRE(storage.put(keccak256(padded32(slot)), rlp_string(trimmed(value))).ok());
        }
        const Hash256 sroot = storage.root_hash().value();
        const Hash256 chash = keccak256(a.code);
        const bytes rlp = rlp_list({rlp_string(be(a.nonce)), rlp_string(trimmed(a.balance)),
                                    rlp_string(bytes(sroot.begin(), sroot.end())),
                                    rlp_string(bytes(chash.begin(), chash.end()))});
        REQUIRE(state.put(keccak256(h(a.address)), rlp).ok());
    }
    return state.root_hash().value();
}

std::string hex_of(const bytes& b) { return to_hex(b); }

// The accounts as an alloc object, hex everywhere.
std::string alloc_json(const std::vector<Acc>& accounts) {
    std::string s = "{";
    for (const Acc& a : accounts) {
        if (s.size() > 1) s += ",\n";
        s += "\"0x" + a.address + "\": {\"balance\": \"" +
             hex_of(a.balance.empty() ? bytes{0} : a.balance) + "\", \"nonce\": \"" +
             std::to_string(a.nonce) + "\", \"code\": \"" + hex_of(a.code) + "\", \"storage\": {";
        bool first = true;
        for (const auto& [slot, value] : a.storage) {
            if (!first) s += ", ";
            first = false;
            s += "\"" + hex_of(slot) + "\": \"" + hex_of(value) + "\"";
        }
        s += "}}";
    }
    return s + "}";
}

std::vector<Acc> sample_accounts() {
    std::vector<Acc> v;
    v.push_back({"a94f5374fce5edbc8e2a8697c15331677e6ebf0b", 0, h("016345785d8a0000"), {}, {}});
    v.push_back(
        {"000f3df6d732807ef1319fb7b8bb8522d0beac02",
         1,
         {},
         h("3373fffffffe14604d57"),
         {{h("03b6"), h("03b6")},
          {h("01"), h("00")},
          {h("02"), h("ff00000000000000000000000000000000000000000000000000000000000001")}}});
    v.push_back({"00000000000000000000000000000000000000aa",
                 0xffffffffffffffff,
                 h("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
                 h("00"),
                 {{h("00"), h("01")}}});
    return v;
}

Hash256 root_of(const std::string& text, StateShape shape, unsigned threads = 1) {
    auto d = parse_state_document(text, threads);
    REQUIRE_MESSAGE(d.ok(), why(d));
    CHECK(d->shape == shape);
    auto r = state_root(*d, threads);
    REQUIRE_MESSAGE(r.ok(), why(r));
    return *r;
}

}  // namespace

TEST_CASE("state root of an alloc against the Trie over hand-encoded accounts") {
    const std::vector<Acc> accounts = sample_accounts();
    const Hash256 expected = by_trie(accounts);
    CHECK(root_of(alloc_json(accounts), StateShape::alloc) == expected);
    // The same accounts as a genesis, and one at a time to an empty one.
    CHECK(root_of("{\"config\": {}, \"alloc\": " + alloc_json(accounts) + "}",
                  StateShape::genesis) == expected);
    CHECK(root_of("{}", StateShape::alloc) == kEmptyRoot);
    CHECK(root_of(alloc_json({accounts[0]}), StateShape::alloc) == by_trie({accounts[0]}));
    // A value changed changes the root (the check can fail).
    std::vector<Acc> changed = accounts;
    changed[1].storage[h("03b6")] = h("03b7");
    CHECK(root_of(alloc_json(changed), StateShape::alloc) != expected);
}

TEST_CASE("dumps: the root of their accounts, a storage root given without slots is kept") {
    const std::vector<Acc> accounts = sample_accounts();
    const Hash256 expected = by_trie(accounts);
    auto alloc = parse_state_document(alloc_json(accounts));
    REQUIRE(alloc.ok());
    // geth's dump of the same state: decimal balances, numbers for nonces, storage values
    // without 0x, the storage roots and code hashes of each account.
    std::string dump = "{\"root\": \"" + to_hex(expected).substr(2) + "\", \"accounts\": {";
    std::string lines = "{\"root\":\"" + to_hex(expected) + "\"}\n";
    std::string reth = lines;
    for (size_t i = 0; i < accounts.size(); ++i) {
        const Acc& a = accounts[i];
        const StateAccount* sa = nullptr;
        for (const StateAccount& x : alloc->accounts) {
            if (x.address_hash == keccak256(h(a.address))) sa = &x;
        }
        REQUIRE(sa);
        const Hash256 sroot = storage_root(*sa).value();
        std::string storage;
        for (const auto& [slot, value] : a.storage) {
            if (trimmed(value).empty()) continue;  // a dump lists no zero slot
            if (!storage.empty()) storage += ",";
            storage +=
                "\"" + to_hex(padded32(slot)) + "\":\"" + to_hex(trimmed(value)).substr(2) + "\"";
        }
        // Decimal of a balance by a route of its own: only balances that fit 64 bits here.
        std::string balance_dec = a.balance.size() <= 8 ? std::to_string([&] {
            uint64_t v = 0;
            for (uint8_t b : a.balance) v = v << 8 | b;
            return v;
        }())
                                                        : "0x" + to_hex(a.balance).substr(2);
        const std::string common =
            "\"balance\":\"" + balance_dec + "\",\"nonce\":" + std::to_string(a.nonce) +
            ",\"root\":\"" + to_hex(sroot) + "\",\"codeHash\":\"" + to_hex(keccak256(a.code)) +
            "\"" + (a.code.empty() ? "" : ",\"code\":\"" + to_hex(a.code) + "\"");
        // The second account by hash only, and without its storage: its root is taken.
        if (i == 1) {
            dump += "\"pre(" + to_hex(keccak256(h(a.address))) + ")\": {" + common + "},";
            lines += "{" + common + ",\"key\":\"" + to_hex(keccak256(h(a.address))) + "\"}\n";
        } else {
            dump += "\"0x" + a.address + "\": {" + common +
                    (storage.empty() ? "" : ",\"storage\":{" + storage + "}") + "},";
            lines += "{" + common + (storage.empty() ? "" : ",\"storage\":{" + storage + "}") +
                     ",\"address\":\"0x" + a.address + "\",\"key\":\"" +
                     to_hex(keccak256(h(a.address))) + "\"}\n";
        }
        reth += "{\"address\":\"0x" + a.address + "\",\"balance\":\"" +
                to_hex(a.balance.empty() ? bytes{0} : a.balance) + "\",\"nonce\":\"0x" +
                std::to_string(a.nonce == 1 ? 1 : 0) + "\"" +
                (a.code.empty() ? "" : ",\"code\":\"" + to_hex(a.code) + "\"") +
                (storage.empty() ? "" : ",\"storage\":{" + storage + "}") + "}\n";
    }
    // Object members may come in any order: the by-hash account is last but one here.
    if (dump.back() == ',') dump.pop_back();
    dump += "}}";
    auto d = parse_state_document(dump);
    REQUIRE_MESSAGE(d.ok(), why(d));
    CHECK(d->shape == StateShape::geth_dump);
    CHECK(*d->claimed_root == expected);
    CHECK(state_root(*d).value() == expected);
    CHECK(root_of(lines, StateShape::geth_dump_lines) == expected);
    // reth's lines carry no storage roots; the third account's nonce differs from the state.
    std::vector<Acc> reth_accounts = accounts;
    reth_accounts[2].nonce = 0;
    CHECK(root_of(reth, StateShape::reth_dump) == by_trie(reth_accounts));
}

TEST_CASE("generated states: threads and one thread agree with the Trie") {
    std::mt19937_64 rng(mpt::test::seed("state root generated"));
    for (size_t n : {1u, 17u, 300u, 2500u}) {
        std::vector<Acc> accounts;
        for (size_t i = 0; i < n; ++i) {
            Acc a;
            const bytes ad = mpt::test::random_bytes(rng, 20);
            a.address = to_hex(ad).substr(2);
            a.nonce = rng() % 3 == 0 ? rng() : rng() % 10;
            a.balance = trimmed(mpt::test::random_bytes(rng, rng() % 33));
            a.code = mpt::test::random_bytes(rng, rng() % 3 == 0 ? 0 : rng() % 80);
            const size_t slots = rng() % 4 == 0 ? rng() % 12 : 0;
            for (size_t s = 0; s < slots; ++s) {
                a.storage[trimmed(mpt::test::random_bytes(rng, 1 + rng() % 32))] =
                    rng() % 5 == 0 ? bytes{}
                                   : trimmed(mpt::test::random_bytes(rng, 1 + rng() % 32));
            }
            for (auto it = a.storage.begin(); it != a.storage.end();) {
                // An empty slot name stands for slot zero; keep the map's keys distinct slots.
                it = it->first.empty() ? a.storage.erase(it) : std::next(it);
            }
            accounts.push_back(std::move(a));
        }
        const std::string text = alloc_json(accounts);
        const Hash256 expected = by_trie(accounts);
        CHECK(root_of(text, StateShape::alloc, 1) == expected);
        CHECK(root_of(text, StateShape::alloc, 3) == expected);
    }
}

TEST_CASE("state_root refuses two accounts with one address hash and a slot given twice") {
    StateDoc d;
    d.accounts.resize(2);
    CHECK(!state_root(d).ok());
    StateDoc s;
    s.accounts.resize(1);
    s.accounts[0].storage.resize(2);
    s.accounts[0].storage[0].value[31] = 1;
    s.accounts[0].storage[1].value[31] = 2;
    auto r = state_root(s);
    REQUIRE(!r.ok());
    CHECK(r.error().message().find("given twice") != std::string::npos);
}

TEST_CASE("fixtures/state_*: every shape gives the root of the Trie over the same accounts") {
    // fixtures/state_alloc.json written out here: slot "0x" is slot zero, "0x01" holds zero.
    const std::vector<Acc> accounts = {
        {"a94f5374fce5edbc8e2a8697c15331677e6ebf0b", 0, h("016345785d8a0000"), {}, {}},
        {"000f3df6d732807ef1319fb7b8bb8522d0beac02",
         1,
         {},
         h("3373fffffffffffffffffffffffffffffffffffffffe14604d57"),
         {{h("03b6"), h("03b6")},
          {h("01"), h("00")},
          {h("02"), h("ff00000000000000000000000000000000000000000000000000000000000001")}}},
        {"00000000000000000000000000000000000000aa",
         UINT64_MAX,
         h("3635c9adc5dea00000"),
         h("00"),
         {{h("00"), h("01")}}},
    };
    const Hash256 expected = by_trie(accounts);
    const std::pair<const char*, StateShape> files[] = {
        {"state_alloc.json", StateShape::alloc},
        {"state_genesis.json", StateShape::genesis},
        {"state_geth_dump.json", StateShape::geth_dump},
        {"state_geth_dump_lines.jsonl", StateShape::geth_dump_lines},
        {"state_reth_dump.jsonl", StateShape::reth_dump},
    };
    for (const auto& file : files) {
        // Named, not bound: doctest's messages are lambdas, which clang 14 does not let
        // capture a structured binding.
        const char* name = file.first;
        const StateShape shape = file.second;
        auto d = read_state_document(std::string(MPT_FIXTURES) + "/" + name);
        REQUIRE_MESSAGE(d.ok(), name << ": " << why(d));
        CHECK_MESSAGE(d->shape == shape, name);
        CHECK_MESSAGE(state_root(*d).value() == expected, name);
        if (shape != StateShape::alloc && shape != StateShape::genesis) {
            REQUIRE(d->claimed_root);
            CHECK_MESSAGE(*d->claimed_root == expected, name);
        }
    }
}
