// eth_getProof answers built from tries made here: each part verified, and each changed
// part refused with the part named.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/state_proof.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/state/getproof.hpp>

#include "stored_trie.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <map>
#include <string>

using namespace mpt;
using mpt::test::StoredTrie;
using mpt::test::to_bytes;
using mpt::test::word;

namespace {

// A JSON-RPC quantity: no leading zeros, "0x0" for zero.
std::string quantity(const U256& v) {
    std::string digits;
    append_hex_digits(digits, v);
    const size_t first = digits.find_first_not_of('0');
    return "0x" + (first == std::string::npos ? "0" : digits.substr(first));
}

std::string hex_array(const std::vector<bytes>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\"" : "\"") + to_hex(items[i]) + "\"";
    return out + "]";
}

// A state of three accounts; the first has storage slots 1..10 holding 0x38 + slot.
struct State {
    StoredTrie storage;
    StoredTrie accounts;
    Address present{};
    Account account;

    State() {
        std::map<bytes, bytes> slots;
        for (uint64_t s = 1; s <= 10; ++s) {
            bytes v;
            encode_storage_value(v, word(0x38 + s));
            slots[to_bytes(keccak256(word(s)))] = v;
        }
        mpt::test::build(storage, slots);
        account.nonce = 7;
        account.balance = word(0x76);
        account.storage_root = storage.root;
        account.code_hash = keccak256(mpt::test::b("code"));
        std::map<bytes, bytes> accts;
        for (uint8_t i = 1; i <= 3; ++i) {
            Address a{};
            a[19] = i;
            Account acc;
            acc.nonce = i;
            if (i == 1) {
                present = a;
                acc = account;
            }
            bytes v;
            encode_account(v, acc);
            accts[to_bytes(keccak256(a))] = v;
        }
        mpt::test::build(accounts, accts);
    }

    std::vector<bytes> prove_in(StoredTrie& t, bytes_view key) {
        TrieReader r = t.reader();
        return prove(r, t.root, key).value();
    }

    // The eth_getProof answer for address and slots, as go-ethereum writes it (keys as asked).
    std::string answer(const Address& address, const std::vector<std::string>& keys,
                       bool zero_hashes_when_absent = false) {
        std::optional<bytes> value;
        TrieReader r = accounts.reader();
        const auto account_proof = prove(r, accounts.root, keccak256(address), &value).value();
        Account a;
        if (value) {
            a = decode_account(*value).value();
        } else if (zero_hashes_when_absent) {
            a.code_hash = {};
            a.storage_root = {};
        }
        std::string s = "{\"address\":\"" + to_hex(address) +
                        "\",\"accountProof\":" + hex_array(account_proof) + ",\"balance\":\"" +
                        quantity(a.balance) + "\",\"codeHash\":\"" + to_hex(a.code_hash) +
                        "\",\"nonce\":\"" + quantity(word(a.nonce)) + "\",\"storageHash\":\"" +
                        to_hex(a.storage_root) + "\",\"storageProof\":[";
        for (size_t i = 0; i < keys.size(); ++i) {
            const U256 slot = parse_storage_key(keys[i]).value();
            std::optional<bytes> v;
            std::vector<bytes> proof;
            if (value) {
                TrieReader sr = storage.reader();
                proof = prove(sr, storage.root, keccak256(slot), &v).value();
            }
            const std::string vs = v ? quantity(decode_storage_value(*v).value()) : "0x0";
            s += (i ? ",{" : "{") + std::string("\"key\":\"") + keys[i] + "\",\"value\":\"" + vs +
                 "\",\"proof\":" + hex_array(proof) + "}";
        }
        return s + "]}";
    }
};

Result<GetProofVerdict> check(const std::string& text, const Hash256& root) {
    auto tree = JsonTree::parse(text);
    REQUIRE_MESSAGE(tree.ok(), mpt::test::why(tree));
    REQUIRE(looks_like_get_proof(tree->root()));
    auto doc = read_get_proof(tree->root());
    REQUIRE_MESSAGE(doc.ok(), mpt::test::why(doc));
    return verify_get_proof(*doc, root);
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("getproof: an account with storage, present and absent slots") {
    State st;
    const std::string doc = st.answer(st.present, {"0x1", "0x0a", "0x0", "0x63"});
    auto v = check(doc, st.accounts.root);
    REQUIRE_MESSAGE(v.ok(), mpt::test::why(v));
    CHECK(v->account_exists);
    // The same inside a JSON-RPC response.
    auto r = check("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":" + doc + "}", st.accounts.root);
    CHECK_MESSAGE(r.ok(), mpt::test::why(r));
    // Against itself: the hash of the first node is the root.
    auto tree = JsonTree::parse(doc);
    CHECK(self_root(read_get_proof(tree->root()).value()) == st.accounts.root);
}

TEST_CASE("getproof: each changed part is refused and named") {
    State st;
    const std::string doc = st.answer(st.present, {"0x1", "0x5"});
    const Hash256& root = st.accounts.root;
    struct Case {
        std::string from, to, reason;
    };
    const Case cases[] = {
        {"\"balance\":\"0x76\"", "\"balance\":\"0x77\"",
         "account proof: the proven account differs in balance (proven 0x76, claimed 0x77)"},
        {"\"nonce\":\"0x7\"", "\"nonce\":\"0x8\"",
         "account proof: the proven account differs in nonce"},
        {"\"codeHash\":\"0x", "\"codeHash\":\"0x00", ""},  // too long: an input error, below
        {"\"value\":\"0x39\"", "\"value\":\"0x3a\"", "storage proof 1 (key 0x1): value mismatch"},
        {"\"value\":\"0x39\"", "\"value\":\"0x0\"",
         "storage proof 1 (key 0x1): key is present but the document claims absence"},
        {"\"key\":\"0x5\"", "\"key\":\"0x6\"", "storage proof 2 (key 0x6): "},
    };
    for (const Case& c : cases) {
        if (c.reason.empty()) continue;
        auto v = check(replaced(doc, c.from, c.to), root);
        REQUIRE_MESSAGE(!v.ok(), c.to);
        CHECK(v.error().code == Errc::invalid_proof);
        CHECK_MESSAGE(v.error().detail.starts_with(c.reason), v.error().detail);
    }
    // Another state root; a changed byte of the account proof's root node.
    Hash256 other = root;
    other[0] ^= 1;
    auto v = check(doc, other);
    REQUIRE_FALSE(v.ok());
    // None of the proof's nodes is the other root's: named as such, with the root it is of.
    CHECK(v.error().detail == "account proof: the first node hashes to " + to_hex(root) +
                                  ", not to the trusted root " + to_hex(other) +
                                  " (another block?)");
    const size_t node = doc.find("\"accountProof\":[\"0x") + 20;
    std::string changed = doc;
    changed[node + 10] = changed[node + 10] == '0' ? '1' : '0';
    CHECK_FALSE(check(changed, root).ok());
    // A storage value for a slot that is empty.
    auto absent_slot = check(
        replaced(st.answer(st.present, {"0x63"}), "\"value\":\"0x0\"", "\"value\":\"0x1\""), root);
    REQUIRE_FALSE(absent_slot.ok());
    CHECK(absent_slot.error().detail.starts_with("storage proof 1 (key 0x63): "));
}

TEST_CASE("getproof: an absent account, as older and newer clients answer") {
    State st;
    Address absent{};
    absent[0] = 0xaa;
    for (const bool zero : {false, true}) {
        const std::string doc = st.answer(absent, {"0x1"}, zero);
        auto v = check(doc, st.accounts.root);
        REQUIRE_MESSAGE(v.ok(), mpt::test::why(v));
        CHECK_FALSE(v->account_exists);
        // A nonzero field or storage value is refused.
        auto b =
            check(replaced(doc, "\"balance\":\"0x0\"", "\"balance\":\"0x1\""), st.accounts.root);
        REQUIRE_FALSE(b.ok());
        CHECK(b.error().detail.starts_with("account proof: proves the account absent, yet"));
        auto s = check(replaced(doc, "\"value\":\"0x0\"", "\"value\":\"0x2\""), st.accounts.root);
        REQUIRE_FALSE(s.ok());
        CHECK(s.error().detail ==
              "storage proof 1 (key 0x1): the account is absent, yet the value 0x2 is claimed");
    }
    // A present account claimed absent.
    Address a2{};
    a2[19] = 2;
    const std::string doc = st.answer(a2, {});
    auto v = check(replaced(doc, "\"nonce\":\"0x2\"", "\"nonce\":\"0x0\""), st.accounts.root);
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().detail.starts_with("account proof: the proven account differs in nonce"));
}

TEST_CASE("getproof: quantities and storage keys") {
    CHECK(parse_quantity("0x0").value() == word(0));
    CHECK(parse_quantity("0x76").value() == word(0x76));
    CHECK(parse_quantity("0X00ff").value() == word(0xff));  // leading zeros accepted
    CHECK(parse_quantity("0xffffffffffffffff", 8).value() == word(~0ull));
    CHECK_FALSE(parse_quantity("0x10000000000000000", 8).ok());
    CHECK(parse_quantity("0x" + std::string(64, 'f')).ok());
    CHECK_FALSE(parse_quantity("0x1" + std::string(64, '0')).ok());
    CHECK(parse_quantity("0x" + std::string(70, '0') + "1").value() == word(1));
    for (const char* bad : {"", "0x", "76", "0xg", "0x 1", "-0x1", "0x1.0"}) {
        auto q = parse_quantity(bad);
        CHECK_MESSAGE(!q.ok(), bad);
        if (!q.ok()) CHECK(q.error().code == Errc::bad_hex);
    }
    CHECK(parse_storage_key("0x0").value() == word(0));
    CHECK(parse_storage_key("0x00").value() == word(0));
    CHECK(parse_storage_key("5").value() == word(5));  // go-ethereum takes it without 0x
    CHECK(parse_storage_key("0x" + std::string(63, '0') + "7").value() == word(7));
    CHECK_FALSE(parse_storage_key("0x" + std::string(64, '0') + "7").ok());  // 33 bytes
    CHECK_FALSE(parse_storage_key("0x").ok());
    CHECK_FALSE(parse_storage_key("0xzz").ok());
}

TEST_CASE("getproof: malformed answers name the field") {
    State st;
    const std::string doc = st.answer(st.present, {"0x1"});
    const auto read = [](const std::string& text) {
        auto tree = JsonTree::parse(text);
        REQUIRE(tree.ok());
        return read_get_proof(tree->root());
    };
    auto r = read(replaced(doc, "\"nonce\":\"0x7\"", "\"nonce\":7"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.starts_with("field \"nonce\" (line 1, column "));
    r = read("{\"result\":" + replaced(doc, "\"value\":\"0x39\"", "\"value\":\"0xq\"") + "}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::bad_hex);
    CHECK(r.error().detail.starts_with("field \"result.storageProof[0].value\""));
    r = read(replaced(doc, "\"address\":\"0x", "\"address\":\"0x00"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.find("expected 20 bytes, got 21") != std::string::npos);
    r = read(replaced(doc, ",\"storageProof\":[", ",\"storageProofs\":["));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.starts_with("missing field \"storageProof\""));
    r = read(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"missing trie "
        "node\"}}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.find("\"missing trie node\"") != std::string::npos);
    r = read("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::bad_input);
}

namespace {

// The State above as a state document, for build_state: the same accounts and slots.
StateDoc state_doc(const State& st) {
    StateDoc doc;
    for (uint8_t i = 1; i <= 3; ++i) {
        StateAccount acc;
        Address a{};
        a[19] = i;
        acc.address = a;
        acc.address_hash = keccak256(a);
        acc.account.nonce = i;
        if (a == st.present) {
            acc.account = st.account;
            acc.account.storage_root = kEmptyRoot;  // the builder computes it
            acc.code = mpt::test::b("code");
            for (uint64_t s = 1; s <= 10; ++s) {
                StorageEntry e;
                e.slot = word(s);
                e.key = keccak256(*e.slot);
                e.value = word(0x38 + s);
                acc.storage.push_back(e);
            }
        }
        doc.accounts.push_back(std::move(acc));
    }
    return doc;
}

std::vector<StorageKeyArg> key_args(const std::vector<std::string>& keys) {
    std::vector<StorageKeyArg> out;
    for (const std::string& k : keys) out.push_back(parse_get_proof_key(k).value());
    return out;
}

std::string written(const GetProofDoc& doc) {
    std::string out;
    append_get_proof_json(out, doc);
    return out;
}

}  // namespace

TEST_CASE("getproof: storage keys echoed as go-ethereum echoes them") {
    const auto echo = [](std::string_view text) { return parse_get_proof_key(text).value().echo; };
    CHECK(echo("0x0dEadbeef") == "0xdeadbeef");
    CHECK(echo("0x000deadbeef") == "0xdeadbeef");
    CHECK(echo("0x0") == "0x0");
    CHECK(echo("0x00") == "0x0");
    CHECK(echo("0x") == "0x0");
    CHECK(echo("") == "0x0");
    CHECK(echo("1") == "0x1");
    CHECK(echo("0X0a") == "0xa");
    const std::string full = "0x00000000000000000000000000000000000000000000000000000000deadbeef";
    CHECK(echo(full) == full);
    CHECK(echo("0X00000000000000000000000000000000000000000000000000000000DEADBEEF") == full);
    // 63 digits are 32 bytes once a 0 leads them: echoed whole.
    CHECK(echo(full.substr(0, 2) + full.substr(3)) == full);
    CHECK(parse_get_proof_key("0x0dEadbeef").value().slot == word(0xdeadbeef));
    CHECK(parse_get_proof_key("0x" + std::string(65, '0')).error().code == Errc::bad_hex);
    CHECK(parse_get_proof_key("0x" + std::string(66, '0')).error().code == Errc::bad_hex);
    CHECK(parse_get_proof_key("0xzz").error().code == Errc::bad_hex);
    CHECK(parse_get_proof_key("0x1g").error().code == Errc::bad_hex);
}

TEST_CASE("getproof: prove_account answers as go-ethereum, and the answer verifies") {
    State st;
    MemoryNodeStore store;
    auto built = build_state(store, state_doc(st), {});
    REQUIRE_MESSAGE(built.ok(), mpt::test::why(built));
    REQUIRE(built->root == st.accounts.root);
    auto view = StateView::open(store);
    REQUIRE_MESSAGE(view.ok(), mpt::test::why(view));

    // Present, with present and absent slots: the hand-written answer, byte for byte.
    const std::vector<std::string> keys = {"0x1", "0xa", "0x0", "0x63"};
    auto doc = prove_account(*view, st.present, key_args(keys));
    REQUIRE_MESSAGE(doc.ok(), mpt::test::why(doc));
    CHECK(written(*doc) == st.answer(st.present, keys));
    auto v = check(written(*doc), st.accounts.root);
    REQUIRE_MESSAGE(v.ok(), mpt::test::why(v));
    CHECK(v->account_exists);
    CHECK(doc->storage[0].value == word(0x39));
    CHECK(doc->storage[2].value == U256{});
    CHECK_FALSE(doc->storage[2].proof.empty());  // absence in a storage trie is proven

    // Keys echoed as asked for, proven as their slots.
    auto echoed = prove_account(*view, st.present, key_args({"0x0001", "0X0A"}));
    REQUIRE(echoed.ok());
    CHECK(written(*echoed) == st.answer(st.present, {"0x1", "0xa"}));

    // Absent: nonce and balance 0, zero hashes, slots 0 with no nodes; the account proof
    // proves absence.
    Address absent{};
    absent.fill(0xff);
    auto none = prove_account(*view, absent, key_args({"0x1"}));
    REQUIRE(none.ok());
    CHECK(written(*none) == st.answer(absent, {"0x1"}, true));
    CHECK(none->storage[0].proof.empty());
    auto va = check(written(*none), st.accounts.root);
    REQUIRE_MESSAGE(va.ok(), mpt::test::why(va));
    CHECK_FALSE(va->account_exists);

    // Present without storage: slots 0 with no nodes, the empty root as storageHash.
    Address plain{};
    plain[19] = 2;
    auto p = prove_account(*view, plain, key_args({"0x1"}));
    REQUIRE(p.ok());
    CHECK(p->account.storage_root == kEmptyRoot);
    CHECK(p->storage[0].proof.empty());
    // (The helper proves every present account's slots in the one storage trie it has.)
    const std::string head = st.answer(plain, {});
    CHECK(written(*p) ==
          head.substr(0, head.size() - 2) + "{\"key\":\"0x1\",\"value\":\"0x0\",\"proof\":[]}]}");
}

TEST_CASE("getproof: the absent account of an empty state, written exactly") {
    MemoryNodeStore store;
    REQUIRE(build_state(store, StateDoc{}, {}).ok());
    auto view = StateView::open(store);
    REQUIRE(view.ok());
    Address a{};
    a[19] = 1;
    auto doc = prove_account(*view, a, key_args({"0x00", "0x" + std::string(64, '0')}));
    REQUIRE(doc.ok());
    const std::string zero = "0x" + std::string(64, '0');
    CHECK(written(*doc) ==
          "{\"address\":\"0x0000000000000000000000000000000000000001\",\"accountProof\":[],"
          "\"balance\":\"0x0\",\"codeHash\":\"" +
              zero + "\",\"nonce\":\"0x0\",\"storageHash\":\"" + zero +
              "\",\"storageProof\":[{\"key\":\"0x0\",\"value\":\"0x0\",\"proof\":[]},{\"key\":\"" +
              zero + "\",\"value\":\"0x0\",\"proof\":[]}]}");
    // No storage key: an empty list, not null.
    auto bare = prove_account(*view, a, {});
    REQUIRE(bare.ok());
    CHECK(written(*bare).ends_with(",\"storageProof\":[]}"));
}

namespace {

// Counts the reads of each path, then reads as the trie's reader does.
class CountingReader : public NodeReader {
public:
    explicit CountingReader(NodeReader& inner) : inner_(inner) {}
    Result<bytes_view> read(bytes_view path) override {
        ++reads[bytes(path.begin(), path.end())];
        return inner_.read(path);
    }
    std::map<bytes, int> reads;

private:
    NodeReader& inner_;
};

}  // namespace

TEST_CASE("getproof: VerifiedRows: the nodes near the root read once, the proofs unchanged") {
    StoredTrie st;
    std::map<bytes, bytes> content;
    for (uint64_t i = 0; i < 2000; ++i) content[to_bytes(keccak256(word(i)))] = to_bytes(word(i));
    mpt::test::build(st, content);
    TrieReader plain = st.reader();
    CountingReader counted(plain);
    VerifiedRows near_root;
    counted.set_verified_rows(&near_root);
    for (uint64_t i = 0; i < 300; ++i) {
        const Hash256 key = keccak256(word(i * 7));  // present below 2000, else absent
        std::optional<bytes> v1, v2;
        TrieReader fresh = st.reader();
        const auto want = prove(fresh, st.root, key, &v1).value();
        const auto got = prove(counted, st.root, key, &v2).value();
        REQUIRE(got == want);
        REQUIRE(v1 == v2);
    }
    CHECK(counted.reads.at(bytes{}) == 1);  // the root row
    for (const auto& [path, n] : counted.reads) {
        if (path.size() <= VerifiedRows::kMaxPath) CHECK(n == 1);
    }
    // The trie changes under the cache: a kept row is not taken for another hash.
    mpt::test::update(st, {{to_bytes(keccak256(word(1))), to_bytes(word(99))}});
    TrieReader after = st.reader();
    after.set_verified_rows(&near_root);
    std::optional<bytes> v;
    const auto proof = prove(after, st.root, keccak256(word(1)), &v).value();
    CHECK(keccak256(proof.front()) == st.root);
    CHECK(v == to_bytes(word(99)));
}
