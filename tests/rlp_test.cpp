#include "test_util.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/rlp.hpp>

#include <doctest/doctest.h>

#include <optional>
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

// The item at the front of in by the RLP rules as the Yellow Paper (appendix B) states them,
// band by band, with the canonical-form rules: written apart from rlp.hpp so that
// next_item is checked against something it does not share. Nothing when in holds no
// canonical item at its front; else whether it is a list, where its payload starts and its
// length.
namespace {

struct RefItem {
    bool is_list;
    size_t at;
    size_t len;
};

std::optional<RefItem> reference_item(const bytes& in) {
    if (in.empty()) return std::nullopt;
    const unsigned b = in[0];
    if (b <= 0x7f) return RefItem{false, 0, 1};
    const bool is_list = b >= 0xc0;
    const unsigned band = is_list ? b - 0xc0 : b - 0x80;  // 0..63
    size_t at = 1;
    size_t len = band;
    if (band > 55) {
        const size_t n = band - 55;  // bytes of the length
        if (n > 8 || in.size() < 1 + n || in[1] == 0) return std::nullopt;
        len = 0;
        for (size_t i = 0; i < n; ++i) len = len << 8 | in[1 + i];
        if (len <= 55) return std::nullopt;
        at = 1 + n;
    }
    if (in.size() - at < len) return std::nullopt;
    if (!is_list && len == 1 && in[at] <= 0x7f) return std::nullopt;
    return RefItem{is_list, at, len};
}

}  // namespace

// next_item, the rules of every node decoding, takes exactly the canonical items and leaves
// the rest after them; decode_item takes the same ones and names an RLP error for the others.
// Every input of up to two bytes, and longer inputs around each header boundary (the long
// forms with their lengths).
TEST_CASE("next_item and decode_item take exactly the canonical items, on every short input") {
    auto same = [](const bytes& input) {
        const std::optional<RefItem> want = reference_item(input);
        bytes_view a = input;
        bytes_view b = input;
        rlp::Item got;
        const bool took = rlp::next_item(a, got);
        const auto decoded = rlp::decode_item(b);
        INFO("input " << mpt::to_hex(input));
        REQUIRE(took == want.has_value());
        REQUIRE(decoded.ok() == want.has_value());
        if (!want) {
            CHECK(a.size() == input.size());
            const Errc e = decoded.error().code;
            CHECK((e == Errc::rlp_truncated || e == Errc::rlp_non_canonical));
            return;
        }
        CHECK(got.is_list == want->is_list);
        CHECK(got.payload.data() == input.data() + want->at);
        CHECK(got.payload.size() == want->len);
        CHECK(a.data() == input.data() + want->at + want->len);
        CHECK(decoded->payload.data() == got.payload.data());
        CHECK(decoded->payload.size() == got.payload.size());
        CHECK(b.data() == a.data());
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
