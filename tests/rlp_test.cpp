#include "test_util.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/rlp.hpp>

#include <doctest/doctest.h>

#include <random>

using namespace mpt;
using mpt::test::h;

TEST_CASE("rlp strings") {
    bytes out;
    rlp::append_string(out, {});
    CHECK(out == h("80"));
    out.clear();
    rlp::append_string(out, h("7f"));
    CHECK(out == h("7f"));
    out.clear();
    rlp::append_string(out, h("80"));
    CHECK(out == h("8180"));
    out.clear();
    rlp::append_string(out, mpt::test::b("dog"));
    CHECK(out == h("83646f67"));
    out.clear();
    const bytes long_string(56, 'a');
    rlp::append_string(out, long_string);
    CHECK(out.size() == 58);
    CHECK(out[0] == 0xb8);
    CHECK(out[1] == 56);
}

TEST_CASE("rlp list header fixed up in place") {
    for (size_t n : {0, 1, 55, 56, 255, 256, 1000, 65535, 65536, 70000}) {
        bytes out = {0xaa};  // something before the list
        const size_t mark = rlp::begin_list(out);
        out.insert(out.end(), n, 0x01);
        rlp::end_list(out, mark);
        bytes expected = {0xaa};
        rlp::append_list_header(expected, n);
        expected.insert(expected.end(), n, 0x01);
        REQUIRE_MESSAGE(out == expected, "payload " << n);
        bytes_view in = bytes_view(out).subspan(1);
        auto item = rlp::decode_single(in);
        REQUIRE(item.ok());
        CHECK(item->is_list);
        CHECK(item->payload.size() == n);
    }
}

TEST_CASE("rlp decode rejects non-canonical and truncated input") {
    auto err = [](std::string_view hex) {
        auto r = rlp::decode_single(h(hex));
        return r.ok() ? Errc::internal : r.error().code;
    };
    CHECK(err("") == Errc::rlp_truncated);
    CHECK(err("8100") == Errc::rlp_non_canonical);    // single byte < 0x80 with header
    CHECK(err("b800") == Errc::rlp_non_canonical);    // leading zero length
    CHECK(err("b80100") == Errc::rlp_non_canonical);  // long form for short payload
    CHECK(err("83646f") == Errc::rlp_truncated);
    CHECK(err("c3646f") == Errc::rlp_truncated);
    CHECK(err("0000") == Errc::rlp_trailing_bytes);
    CHECK(err("bf0f000000000000021111") == Errc::rlp_truncated);  // 8-byte length overflows
    CHECK(rlp::decode_single(h("8181")).ok());
}

// next_item, the error-free reader of the node decoding loops, must take exactly what
// decode_item takes and leave the same rest: every input of up to two bytes, and three-byte
// and longer inputs around each header boundary (the long forms with their lengths).
TEST_CASE("next_item agrees with decode_item on every short input and every header form") {
    auto same = [](const bytes& input) {
        bytes_view a = input;
        bytes_view b = input;
        rlp::Item fast;
        const bool took = rlp::next_item(a, fast);
        const auto slow = rlp::decode_item(b);
        INFO("input " << mpt::to_hex(input));
        REQUIRE(took == slow.ok());
        if (!took) {
            CHECK(a.size() == input.size());
            return;
        }
        CHECK(fast.is_list == slow->is_list);
        CHECK(fast.payload.data() == slow->payload.data());
        CHECK(fast.payload.size() == slow->payload.size());
        CHECK(a.data() == b.data());
    };
    same({});
    for (unsigned x = 0; x < 256; ++x) {
        same({static_cast<uint8_t>(x)});
        for (unsigned y = 0; y < 256; ++y) same({static_cast<uint8_t>(x), static_cast<uint8_t>(y)});
    }
    // Each header byte with one to eight length bytes, lengths below and above 56 and the
    // input's size, with and without a leading zero.
    std::mt19937_64 rng(7);
    for (unsigned head = 0; head < 256; ++head) {
        for (size_t tail = 0; tail < 80; ++tail) {
            bytes in{static_cast<uint8_t>(head)};
            for (size_t i = 0; i < tail; ++i) in.push_back(static_cast<uint8_t>(rng()));
            same(in);
            if (tail > 0) {
                in[1] = static_cast<uint8_t>(tail < 4 ? 0 : tail - 4);
                same(in);
            }
        }
    }
}
