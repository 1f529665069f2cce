#include "test_util.hpp"

#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>
#include <mpt/core/rlp.hpp>

#include <doctest/doctest.h>

#include <array>

using namespace mpt;

namespace {

// The branch as a list of its items, built with the general RLP writer.
bytes branch_by_items(const std::array<NodeRef, 16>& children, bytes_view value) {
    bytes out;
    const size_t mark = rlp::begin_list(out);
    for (const NodeRef& c : children) c.append_to(out);
    rlp::append_string(out, value);
    rlp::end_list(out, mark);
    return out;
}

}  // namespace

TEST_CASE("encode_branch: every header length, every kind of child, decoded back") {
    std::mt19937_64 rng(mpt::test::seed("encode_branch"));
    const bytes embedded = {0xc2, 0x20, 0x01};  // a leaf of an empty path, value 0x01
    for (size_t value_size : {0, 1, 2, 55, 56, 57, 255, 256, 65535, 65536}) {
        for (int shape = 0; shape < 4; ++shape) {
            std::array<NodeRef, 16> children;
            for (size_t i = 0; i < 16; ++i) {
                const int kind = shape == 3 ? static_cast<int>(rng() % 3) : shape;
                if (kind == 1) children[i] = NodeRef::from_hash(keccak256(bytes{uint8_t(i)}));
                if (kind == 2) children[i] = NodeRef::from_view(embedded);
            }
            bytes value = mpt::test::random_bytes(rng, value_size);
            for (uint8_t first : {uint8_t{0x05}, uint8_t{0x80}}) {
                if (!value.empty()) value[0] = first;  // a single byte below 0x80 is its own RLP
                bytes got = {0xee};                    // encode_branch appends
                encode_branch(got, children.data(), value);
                CHECK(got[0] == 0xee);
                got.erase(got.begin());
                INFO("value of ", value_size, " bytes, shape ", shape);
                CHECK(got == branch_by_items(children, value));
                size_t entries = value.empty() ? 0 : 1;
                for (const NodeRef& c : children) entries += c.empty() ? 0 : 1;
                auto node = decode_node(got);  // canonical headers only
                if (entries < 2) {             // no valid node, yet its RLP is as above
                    CHECK(!node.ok());
                    continue;
                }
                REQUIRE_MESSAGE(node.ok(), mpt::test::why(node));
                CHECK(node->kind == NodeView::Kind::branch);
                CHECK(bytes_equal(node->value, value));
                for (size_t i = 0; i < 16; ++i)
                    CHECK(bytes_equal(node->children[i], children[i].view()));
                if (value_size == 0) CHECK(got.size() <= kMaxBranchWithoutValue);
            }
        }
    }
}

TEST_CASE("key_vs_short_node: the order of keys against every key under a short node") {
    // Against brute force: the node's keys are its path followed by anything (an extension)
    // or nothing (a leaf); the key sorts before all, after all, or among them.
    const std::vector<bytes> paths = {{1}, {1, 2}, {2, 0}, {1, 2, 3}};
    const std::vector<bytes> rests = {{},     {0},    {1},       {2},         {1, 1},
                                      {1, 2}, {1, 3}, {1, 2, 3}, {1, 2, 3, 4}};
    for (const bytes& path : paths) {
        for (const bytes& rest : rests) {
            bytes packed;
            pack_nibbles(packed, rest);
            const NibbleView r(packed.data(), 0, rest.size());
            for (const bool leaf : {true, false}) {
                int want;
                const bool prefix = rest.size() >= path.size() &&
                                    std::equal(path.begin(), path.end(), rest.begin());
                if (prefix && (!leaf || rest.size() == path.size())) {
                    want = 0;
                } else {
                    want = std::lexicographical_compare(rest.begin(), rest.end(), path.begin(),
                                                        path.end())
                               ? -1
                               : 1;
                }
                CHECK_MESSAGE(key_vs_short_node(r, path, leaf) == want,
                              to_hex(path) << " " << to_hex(rest) << " " << leaf);
            }
        }
    }
}

TEST_CASE("descend: value, child or nowhere, and how far the cursor moves") {
    const bytes leaf = mpt::test::h("c58320123405");  // leaf, path 1,2,3,4 (even), value 0x05
    auto v = decode_node(leaf);
    REQUIRE(v.ok());
    const bytes key_at = mpt::test::h("1234");
    PathCursor at(key_at);
    Descent d = descend(*v, at);
    CHECK(d.kind == Descent::Kind::value);
    CHECK(bytes_equal(d.ref, mpt::test::h("05")));
    const bytes key_miss = mpt::test::h("1235");
    PathCursor miss(key_miss);
    CHECK(descend(*v, miss).kind == Descent::Kind::absent);

    std::array<NodeRef, 16> children{};
    children[3] = NodeRef::of(leaf);
    children[7] = NodeRef::of(leaf);
    bytes branch;
    encode_branch(branch, children.data(), mpt::test::h("09"));
    v = decode_node(branch);
    REQUIRE(v.ok());
    const bytes key_in = mpt::test::h("3f");
    PathCursor in(key_in);
    d = descend(*v, in);
    CHECK(d.kind == Descent::Kind::child);
    CHECK(bytes_equal(d.ref, leaf));
    CHECK(in.depth() == 1);
    const bytes key_empty_slot = mpt::test::h("4f");
    PathCursor empty_slot(key_empty_slot);
    CHECK(descend(*v, empty_slot).kind == Descent::Kind::absent);
    PathCursor end(bytes{});
    d = descend(*v, end);
    CHECK(d.kind == Descent::Kind::value);
    CHECK(bytes_equal(d.ref, mpt::test::h("09")));
}

TEST_CASE("decode_node: a leaf or extension of two strings, canonical forms only") {
    const auto list = [](std::initializer_list<bytes> items) { return mpt::test::rlp_list(items); };
    const bytes leaf_path = {0x82, 0x20, 0xab};  // the leaf path ab
    const bytes ext_path = {0x82, 0x00, 0xab};   // the extension path ab
    bytes hash(33, 0x11);
    hash[0] = 0xa0;
    bytes long_value(58, 0x22);  // 56 bytes, long form
    long_value[0] = 0xb8;
    long_value[1] = 56;

    SUBCASE("accepted, the views where the general reader puts them") {
        for (const bytes& value : {bytes{0x05}, bytes{0x81, 0x80}, long_value}) {
            const bytes rlp = list({leaf_path, value});
            const auto v = decode_node(rlp);
            REQUIRE(v.ok());
            CHECK(v->kind == NodeView::Kind::leaf);
            CHECK(v->path.size() == 2);
            CHECK(v->value.data() == rlp.data() + rlp.size() - v->value.size());
            CHECK(v->value.size() ==
                  (value.size() == 1 ? 1 : value.size() - (value[0] > 0xb7 ? 2 : 1)));
        }
        const bytes rlp = list({ext_path, hash});
        const auto v = decode_node(rlp);
        REQUIRE(v.ok());
        CHECK(v->kind == NodeView::Kind::extension);
        CHECK(v->child.size() == 32);
        CHECK(v->child.data() == rlp.data() + rlp.size() - 32);
    }
    SUBCASE("refused") {
        const bytes short_long = {0xb8, 0x03, 1, 2, 3};  // the long form for 3 bytes
        for (const bytes& rlp : {
                 list({leaf_path, {0x81, 0x05}}),  // one byte below 0x80 behind a header
                 list({leaf_path, short_long}),
                 list({{0x81, 0x20}, {0x05}}),                           // the path the same way
                 list({leaf_path, {0x80}}),                              // a leaf without a value
                 list({ext_path, bytes(hash.begin(), hash.end() - 1)}),  // truncated
                 list({ext_path, {0x9f, 1}}),                            // a child of 31 bytes
                 list({{0x81, 0x00}, hash}),  // an extension without a path
                 list({leaf_path, {0x05}, {0x05}}),
             }) {
            CHECK_FALSE(decode_node(rlp).ok());
        }
    }
}
