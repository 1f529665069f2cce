// Blocks, transactions and receipts as JSON: each type's encoding against the RLP of its
// fields written out here, the spellings that mean the same, and the errors, each naming the
// field. Real blocks and receipts go through scripts/jsonblocks-check.sh.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/block_json.hpp>

#include "test_util.hpp"

#include <string>

using namespace mpt;
using mpt::test::h;

namespace {

// An RLP item in the shape `mpt rlp encode` reads: a 0x hex string, or a list of items.
struct R {
    bool is_list = false;
    std::string hex;
    std::vector<R> items;
    R(const char* s) : hex(s) {}  // NOLINT(google-explicit-constructor)
    R(std::initializer_list<R> l) : is_list(true), items(l) {}
};

void encode(bytes& out, const R& r) {
    if (!r.is_list) {
        rlp::append_string(out, h(r.hex));
        return;
    }
    bytes payload;
    for (const R& i : r.items) encode(payload, i);
    rlp::append_list_header(out, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
}

bytes typed(uint8_t type, const R& fields) {
    bytes out{type};
    encode(out, fields);
    return out;
}

// The tree views text, which must outlive it: a temporary does not compile.
JsonTree parse(std::string&& text) = delete;
JsonTree parse(const std::string& text) {
    auto t = JsonTree::parse(text);
    REQUIRE_MESSAGE(t.ok(), mpt::test::why(t));
    return std::move(*t);
}

// The tree views the text: json outlives it.
bytes tx(const std::string& json) {
    const JsonTree t = parse(json);
    auto e = encode_transaction_json(t.root(), "tx");
    REQUIRE_MESSAGE(e.ok(), mpt::test::why(e));
    return *e;
}

std::string tx_error(const std::string& json) {
    const JsonTree t = parse(json);
    auto e = encode_transaction_json(t.root(), "tx");
    REQUIRE_FALSE(e.ok());
    return e.error().detail;
}

constexpr const char* kTo = "0x1111111111111111111111111111111111111111";
constexpr const char* kKey = "0x00000000000000000000000000000000000000000000000000000000000000aa";

}  // namespace

TEST_CASE("block json: each transaction type is its fields' RLP, in the EIP's order") {
    const std::string common = std::string(R"("nonce":"0x7","gas":"0x5208","to":")") + kTo +
                               R"(","value":"0x0","input":"0xabcd","r":"0x1","s":"0x2")";
    const std::string al = std::string(R"("accessList":[{"address":")") + kTo +
                           R"(","storageKeys":[")" + kKey + R"("]}])";
    const R access = {{kTo, {kKey}}};
    SUBCASE("legacy") {
        CHECK(tx("{" + common + R"(,"gasPrice":"0x3","v":"0x25"})") == [] {
            bytes out;
            encode(out, {"0x07", "0x03", "0x5208", kTo, "0x", "0xabcd", "0x25", "0x01", "0x02"});
            return out;
        }());
    }
    SUBCASE("EIP-2930") {
        CHECK(tx("{" + common + R"(,"type":"0x1","chainId":"0x1","gasPrice":"0x3",)" + al +
                 R"(,"yParity":"0x1"})") == typed(1, {"0x01", "0x07", "0x03", "0x5208", kTo, "0x",
                                                      "0xabcd", access, "0x01", "0x01", "0x02"}));
    }
    SUBCASE("EIP-1559") {
        CHECK(
            tx("{" + common +
               R"(,"type":"0x2","chainId":"0x1","maxPriorityFeePerGas":"0x4","maxFeePerGas":"0x5",)" +
               al + R"(,"yParity":"0x0"})") ==
            typed(2, {"0x01", "0x07", "0x04", "0x05", "0x5208", kTo, "0x", "0xabcd", access, "0x",
                      "0x01", "0x02"}));
    }
    SUBCASE("EIP-4844") {
        CHECK(
            tx("{" + common +
               R"(,"type":"0x3","chainId":"0x1","maxPriorityFeePerGas":"0x4","maxFeePerGas":"0x5",)" +
               al + R"(,"maxFeePerBlobGas":"0x6","blobVersionedHashes":[")" + kKey +
               R"("],"yParity":"0x1"})") == typed(3, {"0x01",
                                                      "0x07",
                                                      "0x04",
                                                      "0x05",
                                                      "0x5208",
                                                      kTo,
                                                      "0x",
                                                      "0xabcd",
                                                      access,
                                                      "0x06",
                                                      {kKey},
                                                      "0x01",
                                                      "0x01",
                                                      "0x02"}));
    }
    SUBCASE("EIP-7702") {
        const std::string auth =
            std::string(R"("authorizationList":[{"chainId":"0x0","address":")") + kTo +
            R"(","nonce":"0x9","yParity":"0x1","r":"0x3","s":"0x4"}])";
        CHECK(
            tx("{" + common +
               R"(,"type":"0x4","chainId":"0x1","maxPriorityFeePerGas":"0x4","maxFeePerGas":"0x5",)" +
               al + "," + auth + R"(,"yParity":"0x1"})") ==
            typed(4, {"0x01",
                      "0x07",
                      "0x04",
                      "0x05",
                      "0x5208",
                      kTo,
                      "0x",
                      "0xabcd",
                      access,
                      {{"0x", kTo, "0x09", "0x01", "0x03", "0x04"}},
                      "0x01",
                      "0x01",
                      "0x02"}));
    }
}

TEST_CASE("block json: spellings that mean the same encoding") {
    const std::string base =
        R"({"type":"0x2","chainId":"0x1","nonce":"0x0","maxPriorityFeePerGas":"0x1","maxFeePerGas":"0x2","value":"0x0","r":"0x1","s":"0x2",)";
    const bytes rpc = tx(base + R"("gas":"0x5208","input":"0x","to":null,"yParity":"0x1"})");
    // BlockchainTests: gasLimit and data, "" for a creation, v for the parity, leading zeros.
    CHECK(tx(base + R"("gasLimit":"0x005208","data":"0x","to":"","v":"0x01"})") == rpc);
    // A creation without "to" at all; a missing access list is the empty one.
    CHECK(tx(base + R"("gas":"0x5208","input":"0x","yParity":"0x1","accessList":null})") == rpc);
    // JSON-RPC gives both yParity and v, equal; different, they are refused.
    CHECK(tx(base + R"("gas":"0x5208","input":"0x","yParity":"0x1","v":"0x1"})") == rpc);
    CHECK(tx_error(base + R"("gas":"0x5208","input":"0x","yParity":"0x1","v":"0x0"})")
              .ends_with("): differs from yParity"));
    CHECK(tx_error(base + R"("gas":"0x5208","input":"0x","yParity":"0x2"})")
              .ends_with("not 0x0 or 0x1"));
}

TEST_CASE("block json: a payload past 65535 bytes (a large creation) encodes whole") {
    const std::string input = "0x" + std::string(2 * 70000, 'a');
    const bytes e = tx(R"({"nonce":"0x0","gasPrice":"0x1","gas":"0x1","value":"0x0","input":")" +
                       input + R"(","v":"0x1b","r":"0x1","s":"0x2"})");
    auto item = rlp::decode_single(e);
    REQUIRE(item.ok());
    CHECK(item->is_list);
    auto n = rlp::count_items(item->payload);
    REQUIRE(n.ok());
    CHECK(*n == 9);
}

TEST_CASE("block json: errors name the field and where it is") {
    CHECK(tx_error(R"({"type":"0x2","nonce":"0x0"})") ==
          "missing field \"tx.chainId\" (object at line 1, column 1)");
    CHECK(tx_error(R"({"type":"0x5"})") ==
          "field \"tx.type\" (line 1, column 9): transaction type 5 is none of legacy, "
          "EIP-2930, EIP-1559, EIP-4844 and EIP-7702");
    CHECK(tx_error(R"({"nonce":"0x1ffffffffffffffff"})") ==
          "field \"tx.nonce\" (line 1, column 10): larger than 64 bits: \"0x1ffffffffffffffff\"");
    // A blob transaction creates no contract.
    const std::string blob =
        R"({"type":"0x3","chainId":"0x1","nonce":"0x0","maxPriorityFeePerGas":"0x1","maxFeePerGas":"0x2","gas":"0x1"})";
    CHECK(tx_error(blob) == "missing field \"tx.to\" (object at line 1, column 1)");
    // The list's items: neither hex nor an object.
    const std::string list = R"(["0x01", 7])";  // the tree views it
    const JsonTree t = parse(list);
    auto items = list_item_encodings(t.root(), "");
    REQUIRE_FALSE(items.ok());
    CHECK(items.error().detail == "item 2 (line 1, column 10): not a 0x hex string or an object");
}

TEST_CASE("block json: receipts, with a status or a post-state root") {
    const std::string bloom = "0x" + std::string(512, '0');
    const std::string log =
        std::string(R"({"address":")") + kTo + R"(","topics":[")" + kKey + R"("],"data":"0x01"})";
    const auto receipt = [&](const std::string& fields) {
        const std::string text = R"({"cumulativeGasUsed":"0x5208","logsBloom":")" + bloom +
                                 R"(","logs":[)" + log + "]," + fields + "}";
        const JsonTree t = parse(text);
        auto e = encode_receipt_json(t.root(), "r");
        REQUIRE_MESSAGE(e.ok(), mpt::test::why(e));
        return *e;
    };
    const R logs = {{kTo, {kKey}, "0x01"}};
    const R tail_bloom = R(bloom.c_str());
    bytes legacy_ok;
    encode(legacy_ok, {"0x01", "0x5208", tail_bloom, logs});
    CHECK(receipt(R"("status":"0x1")") == legacy_ok);
    CHECK(receipt(R"("type":"0x2","status":"0x0")") ==
          typed(2, {"0x", "0x5208", tail_bloom, logs}));
    CHECK(receipt(std::string(R"("root":")") + kKey + R"(")") == [&] {
        bytes out;
        encode(out, {kKey, "0x5208", tail_bloom, logs});
        return out;
    }());
}

TEST_CASE("block json: a block's roots, transactions given as hashes refused") {
    const std::string empty = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
    const std::string text = R"({"transactionsRoot":")" + empty + R"(","transactions":[]})";
    const JsonTree t = parse(text);
    auto r = json_block_roots(t.root(), "");
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(r->roots.match());
    CHECK_FALSE(r->roots.header_receipts_root);
    CHECK_FALSE(r->roots.withdrawals_root);

    const std::string hashes =
        R"({"transactionsRoot":")" + empty + R"(","transactions":[")" + empty + R"("]})";
    const JsonTree th = parse(hashes);
    auto rh = json_block_roots(th.root(), "result");
    REQUIRE_FALSE(rh.ok());
    CHECK(rh.error().detail.starts_with(
        "result.transactions[0] (line 1, column 106): the block lists its transactions by hash "
        "only"));
}
