// The changes document (state/changes.hpp): mpt's own shape, geth's prestateTracer diff and
// its per-transaction list merged in order, the JSON-RPC envelope, and the errors.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/state/changes.hpp>

#include "test_util.hpp"

#include <string>

using namespace mpt;
using mpt::test::word;

namespace {

const std::string kA = "0x1000000000000000000000000000000000000001";
const std::string kB = "0x2000000000000000000000000000000000000002";

ChangesDoc parse_ok(const std::string& text) {
    auto d = parse_changes_document(text);
    REQUIRE_MESSAGE(d.ok(), (d.ok() ? std::string() : d.error().message()));
    return std::move(*d);
}

const AccountUpdate& account(const ChangesDoc& d, const std::string& address) {
    for (const AccountUpdate& a : d.accounts) {
        if (to_hex(a.address) == address) return a;
    }
    FAIL("no account " << address);
    return d.accounts.front();
}

std::string error_of(const std::string& text) {
    auto d = parse_changes_document(text);
    REQUIRE_FALSE(d.ok());
    return d.error().message();
}

}  // namespace

TEST_CASE("changes: fields given are the new values, absent ones unchanged, null deletes") {
    const ChangesDoc d =
        parse_ok("{\"" + kA + "\": {\"nonce\": \"0x2\", \"balance\": \"0x10\", " +
                 "\"storage\": {\"0x01\": \"0x05\", \"0x02\": \"0x0\"}}, \"" + kB + "\": null}");
    CHECK(d.shape == ChangesShape::changes);
    REQUIRE(d.accounts.size() == 2);
    const AccountUpdate& a = account(d, kA);
    CHECK_FALSE(a.deleted);
    CHECK(a.nonce == 2u);
    CHECK(a.balance == word(16));
    CHECK_FALSE(a.code.has_value());
    REQUIRE(a.storage.size() == 2);
    CHECK(a.storage[0] == SlotValue{word(1), word(5)});
    CHECK(a.storage[1] == SlotValue{word(2), U256{}});  // zero: the slot cleared
    CHECK_FALSE(a.before.has_value());
    const AccountUpdate& b = account(d, kB);
    CHECK(b.deleted);
    CHECK(b.clear_storage);
    // By address.
    CHECK(to_hex(d.accounts[0].address) == kA);
}

TEST_CASE("changes: a nonce as geth writes one: hex, decimal, a JSON number") {
    for (const char* n : {"\"0x1f\"", "\"31\"", "31"}) {
        CAPTURE(n);
        const ChangesDoc d = parse_ok("{\"" + kA + "\": {\"nonce\": " + n + "}}");
        CHECK(account(d, kA).nonce == 31u);
    }
    CHECK(error_of("{\"" + kA + "\": {\"nonce\": \"18446744073709551616\"}}").find("2^64") !=
          std::string::npos);
}

TEST_CASE("changes: a prestateTracer diff, as geth's diff mode writes it") {
    // A's balance and one slot changed, another slot cleared (in pre, not in post); B was
    // deleted (in pre, not in post); code absent from post is unchanged.
    const ChangesDoc d =
        parse_ok("{\"pre\": {\"" + kA +
                 "\": {\"balance\": \"0x10\", \"nonce\": 1, \"code\": \"0x6000\", \"storage\": {" +
                 "\"0x0000000000000000000000000000000000000000000000000000000000000001\": " +
                 "\"0x0000000000000000000000000000000000000000000000000000000000000007\", " +
                 "\"0x0000000000000000000000000000000000000000000000000000000000000002\": " +
                 "\"0x0000000000000000000000000000000000000000000000000000000000000008\"}}, \"" +
                 kB + "\": {\"balance\": \"0x1\"}}, \"post\": {\"" + kA +
                 "\": {\"balance\": \"0x20\", \"storage\": {" +
                 "\"0x0000000000000000000000000000000000000000000000000000000000000001\": " +
                 "\"0x0000000000000000000000000000000000000000000000000000000000000009\"}}}}");
    CHECK(d.shape == ChangesShape::prestate_diff);
    const AccountUpdate& a = account(d, kA);
    CHECK_FALSE(a.deleted);
    CHECK(a.balance == word(0x20));
    CHECK_FALSE(a.nonce.has_value());
    CHECK_FALSE(a.code.has_value());
    REQUIRE(a.storage.size() == 2);
    CHECK(a.storage[0] == SlotValue{word(1), word(9)});
    CHECK(a.storage[1] == SlotValue{word(2), U256{}});
    REQUIRE(a.before.has_value());
    CHECK(a.before->balance == word(0x10));
    CHECK(a.before->nonce == 1u);
    CHECK(a.before->code == bytes{0x60, 0x00});
    CHECK(a.before->storage.size() == 2);
    CHECK(account(d, kB).deleted);
}

TEST_CASE("changes: the per-transaction list of debug_traceBlockByNumber, merged in order") {
    // tx 0: A's slot 1 set to 5, B deleted; tx 1: slot 1 to 6, B made again with balance 3.
    const std::string slot1 =
        "\"0x0000000000000000000000000000000000000000000000000000000000000001\"";
    const std::string text =
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": [" +
        std::string("{\"txHash\": \"0x01\", \"result\": {\"pre\": {\"" + kA +
                    "\": {\"balance\": \"0x0\"}, \"" + kB +
                    "\": {\"balance\": \"0x9\", \"storage\": {" + slot1 + ": \"0x04\"}}}, " +
                    "\"post\": {\"" + kA + "\": {\"storage\": {" + slot1 + ": \"0x05\"}}}}}, ") +
        "{\"txHash\": \"0x02\", \"result\": {\"pre\": {\"" + kA + "\": {\"balance\": \"0x0\", " +
        "\"storage\": {" + slot1 + ": \"0x05\"}}, \"" + kB + "\": {\"balance\": \"0x0\"}}, " +
        "\"post\": {\"" + kA + "\": {\"storage\": {" + slot1 + ": \"0x06\"}}, \"" + kB +
        "\": {\"balance\": \"0x3\"}}}}]}";
    const ChangesDoc d = parse_ok(text);
    CHECK(d.shape == ChangesShape::prestate_list);
    const AccountUpdate& a = account(d, kA);
    REQUIRE(a.storage.size() == 1);
    CHECK(a.storage[0] == SlotValue{word(1), word(6)});
    // The first transaction's pre is what the account was before the block.
    REQUIRE(a.before.has_value());
    CHECK(a.before->storage.empty());
    const AccountUpdate& b = account(d, kB);
    CHECK_FALSE(b.deleted);
    CHECK(b.clear_storage);  // its old storage is gone, though it lives again
    CHECK(b.balance == word(3));
    CHECK(b.nonce == 0u);
    CHECK(b.storage.empty());
    REQUIRE(b.before.has_value());
    CHECK(b.before->balance == word(9));
}

TEST_CASE("changes: an account made by a transaction has no pre: it did not exist before") {
    const ChangesDoc d =
        parse_ok("{\"pre\": {}, \"post\": {\"" + kA + "\": {\"nonce\": 1, \"code\": \"0x6000\"}}}");
    const AccountUpdate& a = account(d, kA);
    REQUIRE(a.before.has_value());
    CHECK(a.before->absent);
    CHECK(a.nonce == 1u);
    CHECK(a.code == bytes{0x60, 0x00});
}

TEST_CASE("changes: errors name the field and the place") {
    CHECK(error_of("{\"0x1234\": {}}").find("an address is 20 bytes, not 2") != std::string::npos);
    CHECK(
        error_of("{\"" + kA + "\": {\"storage\": {\"0x" + std::string(66, '1') + "\": \"0x01\"}}}")
            .find("more than 32 bytes") != std::string::npos);
    CHECK(error_of("{\"" + kA + "\": {\"balance\": 5}}").find("field \"" + kA + ".balance\"") !=
          std::string::npos);
    CHECK(error_of("{\"" + kA + "\": {\"code\": \"0x6\"}}").find(".code") != std::string::npos);
    CHECK(error_of("{\"" + kA + "\": ").find("line 1") != std::string::npos);
    CHECK(error_of("[5]").find("not a prestateTracer diff") != std::string::npos);
    CHECK(error_of("\"x\"").find("a changes document is a JSON object or array") !=
          std::string::npos);
    CHECK(error_of("{\"pre\": 5}").find("not an object of accounts") != std::string::npos);
}
