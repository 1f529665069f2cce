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
