#include <doctest/doctest.h>

#include <mpt/core/nibbles.hpp>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::h;

TEST_CASE("compact encoding round trip") {
    // Yellow Paper appendix C examples.
    struct Case {
        bytes nibbles;
        bool leaf;
        const char* hex;
    };
    const Case cases[] = {
        {{1, 2, 3, 4, 5}, false, "112345"},
        {{0, 1, 2, 3, 4, 5}, false, "00012345"},
        {{0, 15, 1, 12, 11, 8}, true, "200f1cb8"},
        {{15, 1, 12, 11, 8}, true, "3f1cb8"},
        {{}, true, "20"},
        {{}, false, "00"},
    };
    for (const Case& c : cases) {
        const Nibbles n(c.nibbles);
        bytes out;
        append_compact(out, n, c.leaf);
        CHECK(out == h(c.hex));
        auto d = decode_compact(out);
        REQUIRE(d.ok());
        CHECK(d->leaf == c.leaf);
        CHECK(nibbles_equal(d->path, n));
    }
}

TEST_CASE("compact decoding rejects bad flags") {
    CHECK(!decode_compact({}).ok());
    CHECK(!decode_compact(h("40")).ok());  // flag 4
    CHECK(!decode_compact(h("01")).ok());  // even with a nonzero pad nibble
    CHECK(!decode_compact(h("2f12")).ok());
    CHECK(decode_compact(h("3f")).ok());
}

TEST_CASE("path cursor") {
    const bytes key = h("abcd");
    PathCursor c(key);
    CHECK(c.remaining()[0] == 0xa);
    c.advance(3);
    CHECK(c.depth() == 3);
    CHECK(c.consumed().size() == 3);
    CHECK(c.consumed()[2] == 0xc);
    CHECK(c.remaining().size() == 1);
    CHECK(c.remaining()[0] == 0xd);
    c.advance(1);
    CHECK(c.at_end());
}

TEST_CASE("unpack_to writes every sub-view, odd and even ends alike") {
    const bytes packed = {0x12, 0x34, 0x56, 0x78, 0x9a};
    const NibbleView all(packed);
    for (size_t begin = 0; begin <= all.size(); ++begin) {
        for (size_t end = begin; end <= all.size(); ++end) {
            const NibbleView v = all.sub(begin, end - begin);
            bytes out(v.size() + 1, 0xee);  // one guard byte
            v.unpack_to(out.data());
            bytes want;
            for (size_t i = begin; i < end; ++i) want.push_back(static_cast<uint8_t>(i + 1));
            want.push_back(0xee);
            CHECK(out == want);
        }
    }
}

TEST_CASE("common_prefix of two views: every start, length and first difference") {
    // Two 40-byte keys alike but for one nibble (or none), compared from every start: the
    // eight-byte steps where the starts share a half of a byte, nibble by nibble elsewhere.
    bytes a(40);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 37 + 11);
    for (size_t diff = 0; diff <= 2 * a.size(); ++diff) {
        bytes b = a;
        if (diff < 2 * a.size()) b[diff / 2] ^= diff % 2 == 0 ? 0x50 : 0x05;
        const NibbleView va(a);
        const NibbleView vb(b);
        for (size_t sa = 0; sa < 4; ++sa) {
            for (size_t sb = 0; sb < 4; ++sb) {
                for (size_t len = 0; len + std::max(sa, sb) <= va.size(); len += 3) {
                    const NibbleView x = va.sub(sa, len);
                    const NibbleView y = vb.sub(sb, len);
                    size_t want = 0;
                    while (want < len && x[want] == y[want]) ++want;
                    CHECK(common_prefix(x, y) == want);
                }
            }
        }
    }
}
