// The state document reader: each shape detected, geth's field rules (core/types/account.go,
// common/math, common/hexutil), and bad input named by line, column, account and field.
#include "test_util.hpp"

#include <mpt/core/keccak.hpp>
#include <mpt/state/document.hpp>

#include <doctest/doctest.h>

using namespace mpt;
using mpt::test::h;
using mpt::test::why;

namespace {

const char* kA = "0x00000000000000000000000000000000000000aa";
const char* kB = "00000000000000000000000000000000000000BB";  // unprefixed, upper case

U256 word(std::string_view hex) {
    const bytes v = h(hex);
    U256 out{};
    std::copy(v.begin(), v.end(), out.end() - v.size());
    return out;
}

Address addr(std::string_view hex) {
    Address a{};
    const bytes v = h(hex);
    std::copy(v.begin(), v.end(), a.begin());
    return a;
}

// The error line of a document that must fail.
std::string error_of(std::string_view text) {
    auto d = parse_state_document(text);
    REQUIRE_MESSAGE(!d.ok(), "accepted: " << text);
    return d.error().message();
}

}  // namespace

TEST_CASE("alloc: addresses with and without 0x, quantities hex and decimal, short slots") {
    const std::string text = std::string("{\"") + kA +
                             R"(": {"balance": "1000000000000000000", "nonce": "0x00",
        "code": "0x6001", "storage": {"0x01": "0x02", "02": "0x0300", "0x03": "0x00"}},
     ")" + kB + R"(": {"balance": "0x00000000ff", "nonce": 7, "code": "0x"},
     "0x00000000000000000000000000000000000000cc": {"balance": 12345, "nonce": "12",
        "secretKey": "0x01", "unknown": [1, {"a": null}]},
     "0x00000000000000000000000000000000000000dd": {"balance": "", "nonce": null,
        "code": null, "storage": {"0x01": null}},
     "0x00000000000000000000000000000000000000ee": {"balance": "0", "code": ""}})";
    auto d = parse_state_document(text);
    REQUIRE_MESSAGE(d.ok(), why(d));
    CHECK(d->shape == StateShape::alloc);
    CHECK(!d->claimed_root);
    REQUIRE(d->accounts.size() == 5);

    const StateAccount& a = d->accounts[0];
    REQUIRE(a.address);
    CHECK(*a.address == addr("00000000000000000000000000000000000000aa"));
    CHECK(a.address_hash == keccak256(*a.address));
    CHECK(a.account.balance == word("0de0b6b3a7640000"));
    CHECK(a.account.nonce == 0);
    CHECK(a.code == h("6001"));
    CHECK(a.account.code_hash == keccak256(h("6001")));
    CHECK(a.line == 1);
    // Three slots (the zero one kept; the builders skip it), sorted by hashed key.
    REQUIRE(a.storage.size() == 3);
    for (size_t i = 0; i + 1 < a.storage.size(); ++i)
        CHECK(a.storage[i].key < a.storage[i + 1].key);
    for (const StorageEntry& e : a.storage) {
        REQUIRE(e.slot);
        CHECK(e.key == keccak256(*e.slot));
        if (*e.slot == word("02")) CHECK(e.value == word("0300"));
        if (*e.slot == word("01")) CHECK(e.value == word("02"));
        if (*e.slot == word("03")) CHECK(e.value == U256{});
    }

    const StateAccount& b = d->accounts[1];
    CHECK(*b.address == addr("00000000000000000000000000000000000000bb"));
    CHECK(b.account.balance == word("ff"));
    CHECK(b.account.nonce == 7);
    CHECK(b.code.empty());
    CHECK(b.account.code_hash == kEmptyCodeHash);
    CHECK(b.line == 3);

    const StateAccount& c = d->accounts[2];
    CHECK(c.account.balance == word("3039"));
    CHECK(c.account.nonce == 12);
    CHECK(c.storage.empty());

    // "" is zero; null leaves a field unset, and a slot at zero.
    const StateAccount& e = d->accounts[3];
    CHECK(e.account.balance == U256{});
    CHECK(e.account.nonce == 0);
    CHECK(e.code.empty());
    REQUIRE(e.storage.size() == 1);
    CHECK(e.storage[0].value == U256{});
    CHECK(d->accounts[4].code.empty());
    CHECK(d->accounts[4].account.code_hash == kEmptyCodeHash);
}

TEST_CASE("genesis: alloc read, everything else ignored, in any order") {
    auto d = parse_state_document(R"({"config": {"chainId": 1}, "nonce": "0x42",
        "Alloc": {"0x00000000000000000000000000000000000000aa": {"BALANCE": "0x1"}},
        "gasLimit": "0x1388", "extraData": "0x11bbe8db4e347b4e8c937c1c8370e4b5ed33adb3db69cbdb7a38e1e50b1b82fa"})");
    REQUIRE_MESSAGE(d.ok(), why(d));
    CHECK(d->shape == StateShape::genesis);
    REQUIRE(d->accounts.size() == 1);
    CHECK(d->accounts[0].account.balance == word("01"));
    CHECK(d->accounts[0].line == 2);
}

TEST_CASE("the largest quantities are taken, one more is refused") {
    const std::string max256 =
        "115792089237316195423570985008687907853269984665640564039457584007913129639935";
    auto d = parse_state_document(std::string("{\"") + kA + "\": {\"balance\": \"" + max256 +
                                  "\", \"nonce\": \"18446744073709551615\"}}");
    REQUIRE_MESSAGE(d.ok(), why(d));
    U256 ones;
    ones.fill(0xff);
    CHECK(d->accounts[0].account.balance == ones);
    CHECK(d->accounts[0].account.nonce == UINT64_MAX);
    auto hex =
        parse_state_document(std::string("{\"") + kA + "\": {\"balance\": \"0x0000" +
                             std::string(64, 'f') + "\", \"nonce\": \"0x00ffffffffffffffff\"}}");
    REQUIRE_MESSAGE(hex.ok(), why(hex));
    CHECK(hex->accounts[0].account.balance == ones);
    CHECK(hex->accounts[0].account.nonce == UINT64_MAX);

    const std::string over =
        "115792089237316195423570985008687907853269984665640564039457584007913129639936";
    CHECK(error_of(std::string("{\"") + kA + "\": {\"balance\": \"" + over + "\"}}")
              .find("field \"balance\": more than 256 bits") != std::string::npos);
    CHECK(error_of(std::string("{\"") + kA + "\": {\"balance\": \"0x1" + std::string(64, '0') +
                   "\"}}")
              .find("more than 256 bits") != std::string::npos);
    CHECK(error_of(std::string("{\"") + kA +
                   "\": {\"balance\": \"0\", \"nonce\": \"18446744073709551616\"}}")
              .find("field \"nonce\": more than 64 bits") != std::string::npos);
    CHECK(error_of(std::string("{\"") + kA +
                   "\": {\"balance\": \"0\", \"nonce\": \"0x10000000000000000\"}}")
              .find("field \"nonce\": more than 64 bits") != std::string::npos);
}

TEST_CASE("a repeated address or slot keeps its last value") {
    auto d = parse_state_document(std::string("{\"") + kA + R"(": {"balance": "1",
        "storage": {"0x01": "0x05", "0x0001": "0x06"}},
        "00000000000000000000000000000000000000AA": {"balance": "2",
        "storage": {"0x01": "0x07", "0x000001": "0x08"}}})");
    REQUIRE_MESSAGE(d.ok(), why(d));
    REQUIRE(d->accounts.size() == 1);
    CHECK(d->accounts[0].account.balance == word("02"));
    CHECK(d->accounts[0].line == 1);
    REQUIRE(d->accounts[0].storage.size() == 1);
    CHECK(d->accounts[0].storage[0].value == word("08"));
}

TEST_CASE("bad fields: each error names the line, column, account and field") {
    struct Case {
        std::string account;  // the account object's members
        std::string expect;   // part of the message
    };
    const Case cases[] = {
        {R"("balance": "0x")", "field \"balance\": no hex digits after 0x"},
        {R"("balance": "-1")", "field \"balance\": a quantity takes no sign"},
        {R"("balance": "+1")", "field \"balance\": a quantity takes no sign"},
        {R"("balance": "12a")", "field \"balance\": not a decimal"},
        {R"("balance": "0xfg")", "field \"balance\": not a hex digit"},
        {R"("balance": 1.5)", "field \"balance\": not a decimal"},
        {R"("balance": true)", "field \"balance\": not a string or a number"},
        {R"("nonce": "1")", "field \"balance\": missing"},
        {R"("balance": null)", "field \"balance\": missing"},
        {R"("balance": "1", "code": "6000")", "field \"code\": hex without the 0x prefix"},
        {R"("balance": "1", "code": "0x600")", "field \"code\": odd number of hex digits"},
        {R"("balance": "1", "code": "0x60zz")", "field \"code\": not a hex digit"},
        {R"("balance": "1", "code": 5)", "field \"code\": not a string"},
        {R"("balance": "1", "storage": {"0x1": "0x01"})", "field \"storage\": key 0x1: odd"},
        {R"("balance": "1", "storage": {"0X01": "0x01"})",
         "field \"storage\": key 0X01: not a hex"},
        {R"("balance": "1", "storage": {"0x01": "0x1"})", "value 0x1: odd number"},
        {R"("balance": "1", "storage": {"0x01": 1})", "value is not a string"},
        {R"("balance": "1", "storage": [])", "field \"storage\": not an object"},
        {"\"balance\": \"1\", \"storage\": {\"0x" + std::string(66, '1') + "\": \"0x01\"}",
         "more than 64 hex digits"},
    };
    for (const Case& c : cases) {
        const std::string text = std::string("{\n  \"") + kA + "\": {" + c.account + "}}";
        const std::string e = error_of(text);
        CHECK_MESSAGE(e.find(c.expect) != std::string::npos, e << " for " << c.account);
        CHECK_MESSAGE(e.find("line 2, column ") != std::string::npos, e);
        CHECK_MESSAGE(e.find(std::string("account ") + kA) != std::string::npos, e);
    }
}

TEST_CASE("bad documents") {
    CHECK(error_of("").find("line 1, column 1") != std::string::npos);
    CHECK(error_of("[1]").find("a state document is a JSON object") != std::string::npos);
    CHECK(error_of(R"({"0x00000000000000000000000000000000000000a": {"balance": "1"}})")
              .find("is not an address") != std::string::npos);
    CHECK(error_of(R"({"alloc": {"0x0000000000000000000000000000000000000g00": {"balance": "1"}}})")
              .find("not a hex digit") != std::string::npos);
    CHECK(error_of(std::string("{\"") + kA + "\": 5}").find("not an object") != std::string::npos);
    CHECK(error_of(std::string("{\"") + kA + "\": {\"balance\": \"1\"}").find("line 1") !=
          std::string::npos);
    CHECK(
        error_of(std::string("{\"") + kA + "\": {\"balance\": \"1\"}} x").find("unexpected data") !=
        std::string::npos);
}

TEST_CASE("geth dump: named by address or by hash, codeHash and key checked") {
    const Address a = addr("00000000000000000000000000000000000000aa");
    const Hash256 ha = keccak256(a);
    const Hash256 code_hash = keccak256(h("6001"));
    const std::string root(64, '1');
    const std::string text = R"({"root": ")" + root + R"(", "accounts": {
        "0x00000000000000000000000000000000000000AA": {"balance": "255", "nonce": 3,
            "root": "0x)" + std::string(64, '2') +
                             R"(", "codeHash": ")" + to_hex(code_hash) +
                             R"(", "code": "0x6001", "storage": {"0x)" + std::string(64, '0') +
                             R"(": "0102"}, "address": "0x00000000000000000000000000000000000000aa",
            "key": ")" + to_hex(ha) +
                             R"("},
        "pre()" + to_hex(ha).replace(2, 1, "f") +
                             ")\": {\"balance\": \"0\", \"nonce\": 0, \"root\": \"0x" +
                             std::string(64, '3') + "\", \"codeHash\": \"" +
                             to_hex(kEmptyCodeHash) + "\"}}}";
    auto d = parse_state_document(text);
    REQUIRE_MESSAGE(d.ok(), why(d));
    CHECK(d->shape == StateShape::geth_dump);
    REQUIRE(d->claimed_root);
    CHECK(to_hex(*d->claimed_root) == "0x" + root);
    REQUIRE(d->accounts.size() == 2);
    const StateAccount& x = d->accounts[0];
    CHECK(x.address_hash == ha);
    CHECK(x.account.balance == word("ff"));
    CHECK(x.account.nonce == 3);
    CHECK(x.account.code_hash == code_hash);
    REQUIRE(x.claimed_storage_root);
    CHECK(*x.claimed_storage_root == hash_from_hex(std::string(64, '2')).value());
    REQUIRE(x.storage.size() == 1);
    CHECK(x.storage[0].value == word("0102"));
    const StateAccount& y = d->accounts[1];
    CHECK(!y.address);
    CHECK(to_hex(y.address_hash) == to_hex(ha).replace(2, 1, "f"));

    // A codeHash that is not the code's, a key that is not the address's.
    std::string bad_code = text;
    bad_code.replace(bad_code.find("\"0x6001\""), 8, "\"0x6002\"");
    CHECK(error_of(bad_code).find("field \"codeHash\": not keccak256 of the code") !=
          std::string::npos);
    std::string bad_key = text;
    bad_key.replace(bad_key.find(to_hex(ha)), 66, to_hex(code_hash));
    CHECK(error_of(bad_key).find("field \"key\": not keccak256 of the address") !=
          std::string::npos);
    std::string short_hash = text;
    short_hash.replace(short_hash.find(to_hex(code_hash)), 66, "0x1234");
    CHECK(error_of(short_hash).find("field \"codeHash\": a hash is 64 hex digits") !=
          std::string::npos);
    std::string bad_address = text;
    bad_address.replace(bad_address.find("\"0x00000000000000000000000000000000000000aa\""), 44,
                        "\"0x00000000000000000000000000000000000000ab\"");
    CHECK(error_of(bad_address).find("field \"address\": differs") != std::string::npos);
}

TEST_CASE("dumps by lines: geth's iterative form and reth's") {
    const std::string geth =
        "{\"root\":\"0x" + std::string(64, 'a') +
        "\"}\n"
        "{\"balance\":\"1\",\"nonce\":0,\"root\":\"0x" +
        to_hex(kEmptyRoot).substr(2) + "\",\"codeHash\":\"" + to_hex(kEmptyCodeHash) +
        "\",\"address\":\"0x00000000000000000000000000000000000000aa\",\"key\":\"" +
        to_hex(keccak256(addr("00000000000000000000000000000000000000aa"))) +
        "\"}\n"
        "{\"balance\":\"2\",\"nonce\":0,\"root\":\"" +
        to_hex(kEmptyRoot) + "\",\"codeHash\":\"" + to_hex(kEmptyCodeHash) + "\",\"key\":\"0x" +
        std::string(64, 'b') + "\"}\n";
    auto g = parse_state_document(geth);
    REQUIRE_MESSAGE(g.ok(), why(g));
    CHECK(g->shape == StateShape::geth_dump_lines);
    REQUIRE(g->accounts.size() == 2);
    CHECK(g->accounts[0].line == 2);
    CHECK(g->accounts[1].line == 3);
    CHECK(!g->accounts[1].address);
    CHECK(to_hex(g->accounts[1].address_hash) == "0x" + std::string(64, 'b'));

    const std::string reth = "{\"root\":\"0x" + std::string(64, 'c') +
                             "\"}\n"
                             "{\"balance\":\"0x10\",\"nonce\":\"0x2\",\"code\":\"0x60\","
                             "\"storage\":{\"0x01\":\"0x0000000000000000000000000000000000000000"
                             "000000000000000000000009\"},\"address\":\"" +
                             std::string(kA) + "\"}\n";
    auto r = parse_state_document(reth);
    REQUIRE_MESSAGE(r.ok(), why(r));
    CHECK(r->shape == StateShape::reth_dump);
    REQUIRE(r->accounts.size() == 1);
    CHECK(r->accounts[0].account.nonce == 2);
    CHECK(r->accounts[0].storage[0].value == word("09"));
    CHECK(to_hex(*r->claimed_root) == "0x" + std::string(64, 'c'));

    CHECK(error_of("{\"root\":\"0x" + std::string(64, 'c') + "\"}\n{\"balance\":\"1\"}\n")
              .find("neither \"address\" nor \"key\"") != std::string::npos);
    CHECK(error_of("{\"root\":\"0x" + std::string(64, 'c') + "\", \"x\": 1}\n{\"balance\":\"1\"," +
                   "\"address\":\"" + std::string(kA) + "\"}\n5\n")
              .find("line 3, column 1: expected an account object") != std::string::npos);
}

TEST_CASE("BlockchainTests: pre, the genesis root, the last block header's root") {
    const std::string text =
        std::string(R"({"t1": {"_info": {"x": [1, 2]},
        "blocks": [{"blockHeader": {"stateRoot": "0x)") +
        std::string(64, '1') + R"("}},
                   {"rlp": "0xf9"}, {"blockHeader": {"stateRoot": "0x)" +
        std::string(64, '2') +
        R"("}, "rlp": "0x00"}, {"expectException": "x"}],
        "genesisBlockHeader": {"number": "0x00", "stateRoot": "0x)" +
        std::string(64, '3') + R"("},
        "pre": {")" +
        kA + R"(": {"balance": "0x01", "code": "0x", "nonce": "0x00", "storage": {}}},
        "postState": {")" +
        kA + R"(": {"balance": "0x02", "code": "0x", "nonce": "0x01", "storage": {}}}},
      "t2": {"blocks": [], "genesisBlockHeader": {"stateRoot": "0x)" +
        std::string(64, '4') + R"("}, "pre": {}, "postStateHash": "0x00"}})";
    auto t = parse_blockchain_tests(text);
    REQUIRE_MESSAGE(t.ok(), why(t));
    REQUIRE(*t);
    REQUIRE((*t)->size() == 2);
    const BlockchainTest& a = (**t)[0];
    CHECK(a.name == "t1");
    CHECK(a.genesis_state_root == hash_from_hex(std::string(64, '3')).value());
    CHECK(a.post_state_root == hash_from_hex(std::string(64, '2')).value());
    REQUIRE(a.pre.accounts.size() == 1);
    REQUIRE(a.post);
    CHECK(a.post->accounts[0].account.nonce == 1);
    const BlockchainTest& b = (**t)[1];
    CHECK(!b.post);
    CHECK(b.post_state_root == b.genesis_state_root);

    // Not of this shape: a TrieTests file.
    auto trie = parse_blockchain_tests(R"({"emptyValues": {"in": [["a", "b"]], "root": "0x00"}})");
    REQUIRE(trie.ok());
    CHECK(!*trie);
    // A bad account names the test.
    std::string bad = text;
    bad.replace(bad.find("\"0x02\""), 6, "\"0xzz\"");
    auto e = parse_blockchain_tests(bad);
    REQUIRE(!e.ok());
    CHECK_MESSAGE(e.error().message().find("test t1: postState: account") != std::string::npos,
                  e.error().message());
}

TEST_CASE("a UTF-8 byte order mark before the document is skipped") {
    auto d = parse_state_document(
        "\xEF\xBB\xBF{\"0x00000000000000000000000000000000000000aa\": {\"balance\": \"0x1\"}}");
    REQUIRE_MESSAGE(d.ok(), why(d));
    CHECK(d->shape == StateShape::alloc);
    REQUIRE(d->accounts.size() == 1);
    CHECK(d->accounts[0].account.balance == word("01"));
}

TEST_CASE("state document: told from key/value input by its shape") {
    // State documents: an alloc, a genesis (config or alloc), a dump, a dump by lines.
    CHECK(looks_like_state_document(
        R"({"0x1000000000000000000000000000000000000001": {"balance": "0x1"}})"));
    CHECK(looks_like_state_document(
        "\xEF\xBB\xBF {\"1000000000000000000000000000000000000001\":{\"balance\":\"1\"}}"));
    CHECK(looks_like_state_document(R"({"nonce": "0x0", "config": {"chainId": 1}, "alloc": {}})"));
    CHECK(looks_like_state_document(R"({"nonce": "0x0", "alloc": {}})"));
    CHECK(looks_like_state_document(R"({"root": "0xabc", "accounts": {}})"));
    CHECK(looks_like_state_document("{\"root\": \"0xabc\"}\n{\"balance\": \"0\"}\n"));
    // Cut short after the object opens: the head decides.
    CHECK(looks_like_state_document(R"({"alloc": {"0x10)"));
    // Key/value input: strings and null, arrays of pairs, a text dump, a key/value file alone.
    CHECK_FALSE(looks_like_state_document(R"({"dog": "puppy", "0x01": null})"));
    CHECK_FALSE(looks_like_state_document(R"({"root": "0xabc"})"));
    CHECK_FALSE(looks_like_state_document(R"([["0x01", "0x02"]])"));
    CHECK_FALSE(looks_like_state_document("0x01 0x02\n"));
    CHECK_FALSE(looks_like_state_document(R"({"a\"{": "x", "b": "y"})"));
    CHECK_FALSE(looks_like_state_document(""));
    // Test files: tests under their names.
    CHECK_FALSE(looks_like_state_document(R"({"emptyValues": {"in": [], "root": "0x"}})"));
    CHECK_FALSE(looks_like_state_document(R"({"BlockGasLimit2p63m1_Cancun": {"pre": {}}})"));
    // An object under a name that is not quite an address.
    CHECK_FALSE(looks_like_state_document(
        R"({"0x10000000000000000000000000000000000000": {"balance": "0x1"}})"));
    // Cut short before any object: no guess of state.
    CHECK_FALSE(looks_like_state_document(R"({"nonce": "0x0", "times)"));
}
