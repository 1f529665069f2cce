// Ordered-list roots and block roots: rlp(index) keys, the order they go into the stack trie,
// and a block's body against its header, checked by a second route (the in-memory Trie) and
// on blocks built here.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/state/block.hpp>
#include <mpt/trie/trie.hpp>

#include "test_util.hpp"

#include <random>

using namespace mpt;
using mpt::test::h;
using mpt::test::rlp_list;

namespace {

Hash256 trie_root_of(const std::vector<bytes>& items) {
    Trie t;
    for (size_t i = 0; i < items.size(); ++i) REQUIRE(t.put(index_key(i), items[i]).ok());
    return t.root_hash().value();
}

Hash256 ordered_root(const std::vector<bytes>& items) {
    std::vector<bytes_view> views(items.begin(), items.end());
    auto r = ordered_trie_root(views);
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    return *r;
}

bytes str(bytes_view b) {
    bytes out;
    rlp::append_string(out, b);
    return out;
}

// A block: a header of `fields` fields (field 4 the transactions root, field 16 the
// withdrawals root when there are 17 or more), the transactions as the body holds them, no
// ommers, and the withdrawals list when given.
bytes make_block(size_t fields, const Hash256& tx_root, const Hash256& w_root,
                 const std::vector<bytes>& body_txs, const std::vector<bytes>* withdrawals) {
    std::vector<bytes> header;
    for (size_t i = 0; i < fields; ++i) {
        if (i == 4) {
            header.push_back(str(tx_root));
        } else if (i == 16) {
            header.push_back(str(w_root));
        } else {
            header.push_back(str(bytes{static_cast<uint8_t>(i + 1)}));
        }
    }
    std::vector<bytes> parts = {rlp_list(header), rlp_list(body_txs), rlp_list({})};
    if (withdrawals) parts.push_back(rlp_list(*withdrawals));
    return rlp_list(parts);
}

}  // namespace

TEST_CASE("block: index keys are rlp(i)") {
    CHECK(index_key(0) == h("80"));
    CHECK(index_key(1) == h("01"));
    CHECK(index_key(0x7f) == h("7f"));
    CHECK(index_key(0x80) == h("8180"));
    CHECK(index_key(0xff) == h("81ff"));
    CHECK(index_key(0x100) == h("820100"));
    CHECK(index_key(0x10000) == h("83010000"));
}

TEST_CASE("block: ordered_trie_root against the Trie, across the key-length steps") {
    std::mt19937_64 rng(mpt::test::seed("ordered_trie_root"));
    CHECK(ordered_root({}) == kEmptyRoot);
    for (size_t n : {1, 2, 3, 16, 17, 127, 128, 129, 200, 255, 256, 257, 300}) {
        std::vector<bytes> items;
        for (size_t i = 0; i < n; ++i)
            items.push_back(mpt::test::random_bytes(rng, 1 + rng() % 120));
        CHECK_MESSAGE(ordered_root(items) == trie_root_of(items), n);
    }
    const std::vector<bytes> with_empty = {h("01"), bytes{}};
    std::vector<bytes_view> views(with_empty.begin(), with_empty.end());
    auto r = ordered_trie_root(views);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail == "item 2 is empty");
}

TEST_CASE("block: roots of a body with legacy and typed transactions and withdrawals") {
    // A legacy transaction is its list; a typed one (0x02 || rlp(...)) travels as a string.
    const bytes legacy = rlp_list({str(h("01")), str(h("aabbcc"))});
    const bytes typed = [] {
        bytes t = {0x02};
        const bytes inner = rlp_list({str(h("0102")), str(h("03"))});
        t.insert(t.end(), inner.begin(), inner.end());
        return t;
    }();
    const bytes withdrawal =
        rlp_list({str(h("01")), str(h("02")), str(bytes(20, 0x11)), str(h("64"))});
    const Hash256 tx_root = ordered_root({legacy, typed});
    const Hash256 w_root = ordered_root({withdrawal});
    const std::vector<bytes> body = {legacy, str(typed)};
    const std::vector<bytes> ws = {withdrawal};

    auto r = block_roots(make_block(20, tx_root, w_root, body, &ws));
    REQUIRE_MESSAGE(r.ok(), mpt::test::why(r));
    CHECK(r->transactions == 2);
    CHECK(r->withdrawals == 1);
    CHECK(r->transactions_root == tx_root);
    CHECK(r->withdrawals_root == w_root);
    CHECK(r->match());

    // Another header root: a mismatch, not an error.
    Hash256 other = tx_root;
    other[31] ^= 1;
    r = block_roots(make_block(20, other, w_root, body, &ws));
    REQUIRE(r.ok());
    CHECK_FALSE(r->transactions_match());
    CHECK(r->withdrawals_match());
    // The typed transaction hashed as its string encoding would give another root.
    CHECK(ordered_root({legacy, str(typed)}) != tx_root);

    // Before Shanghai: 15 or 16 header fields, no withdrawals.
    r = block_roots(make_block(16, tx_root, w_root, body, nullptr));
    REQUIRE(r.ok());
    CHECK_FALSE(r->header_withdrawals_root);
    CHECK_FALSE(r->withdrawals_root);
    CHECK(r->match());
    // A withdrawals list the header does not commit to, and the other way round.
    r = block_roots(make_block(16, tx_root, w_root, body, &ws));
    REQUIRE(r.ok());
    CHECK_FALSE(r->withdrawals_match());
    r = block_roots(make_block(17, tx_root, w_root, body, nullptr));
    REQUIRE(r.ok());
    CHECK_FALSE(r->withdrawals_match());
    // No transactions: the empty root.
    const std::vector<bytes> none;
    r = block_roots(make_block(17, kEmptyRoot, kEmptyRoot, {}, &none));
    REQUIRE(r.ok());
    CHECK(r->match());
}

TEST_CASE("block: malformed blocks are errors naming the part") {
    const Hash256 root = kEmptyRoot;
    const auto error_of = [](const bytes& block) {
        auto r = block_roots(block);
        REQUIRE_FALSE(r.ok());
        return r.error().detail;
    };
    CHECK(error_of(h("80")) == "the block is not a list (byte 0)");
    CHECK(error_of(rlp_list({rlp_list({}), rlp_list({})})).starts_with("the block has 2 items"));
    CHECK(error_of(make_block(14, root, root, {}, nullptr)) ==
          "the header has 14 fields, fewer than 15 (byte 1)");
    bytes trailing = make_block(17, root, root, {}, nullptr);
    trailing.push_back(0x00);
    CHECK(error_of(trailing).ends_with("1 bytes after the block (byte " +
                                       std::to_string(trailing.size() - 1) + ")"));
    CHECK(error_of(make_block(17, root, root, {str(h("8001"))}, nullptr))
              .starts_with("transaction 1 is a string but no typed transaction"));
    const std::vector<bytes> not_lists = {str(h("01"))};
    CHECK(error_of(make_block(17, root, root, {}, &not_lists))
              .starts_with("withdrawal 1 is not a list"));
    // A truncated item inside the transactions.
    bytes cut = make_block(17, root, root, {rlp_list({str(h("0102"))})}, nullptr);
    cut.resize(cut.size() - 1);
    CHECK(!block_roots(cut).ok());
}
