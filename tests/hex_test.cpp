#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace mpt;

namespace {

// The digits one byte at a time, as printf gives them: the reference for the wide loop.
std::string printf_hex(bytes_view b) {
    std::string s;
    char two[3];
    for (const uint8_t x : b) {
        std::snprintf(two, sizeof two, "%02x", x);
        s += two;
    }
    return s;
}

}  // namespace

TEST_CASE("append_hex_digits gives every byte value at every length and start") {
    bytes all(300);
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i * 7 + i / 256);
    for (size_t start = 0; start < 17; ++start) {
        for (size_t len = 0; start + len <= all.size(); len += (len < 70 ? 1 : 37)) {
            const bytes_view b(all.data() + start, len);
            std::string out = "ab";  // appended to what is there
            append_hex_digits(out, b);
            CAPTURE(start);
            CAPTURE(len);
            REQUIRE(out == "ab" + printf_hex(b));
            REQUIRE(to_hex(b) == "0x" + printf_hex(b));
        }
    }
    bytes every(256);
    for (size_t i = 0; i < 256; ++i) every[i] = static_cast<uint8_t>(i);
    std::string out;
    append_hex_digits(out, every);
    CHECK(out == printf_hex(every));
    CHECK(out.substr(0, 8) == "00010203");
    CHECK(out.substr(2 * 0x9a, 4) == "9a9b");
    CHECK(out.substr(510) == "ff");
}

TEST_CASE("decode_hex16 decodes 16 digits of either case, and refuses any other byte anywhere") {
    const char digits[] = "0123456789abcdefABCDEF";
    uint64_t x = 0x9e3779b97f4a7c15;
    for (int round = 0; round < 2000; ++round) {
        char in[16];
        for (char& c : in) {
            x = x * 6364136223846793005 + 1442695040888963407;
            c = digits[(x >> 33) % 22];
        }
        const std::string text(in, 16);
        const auto want = from_hex(text);
        REQUIRE(want.ok());
        uint8_t out[9] = {};
        out[8] = 0x5a;
        REQUIRE(decode_hex16(in, out));
        CHECK(bytes(out, out + 8) == *want);
        CHECK(out[8] == 0x5a);  // 8 bytes written, no more
        // Each byte value at each place: refused unless it is a hex digit.
        if (round < 16) {
            for (int at = 0; at < 16; ++at) {
                for (int v = 0; v < 256; ++v) {
                    char bad[16];
                    std::memcpy(bad, in, 16);
                    bad[at] = static_cast<char>(v);
                    uint8_t got[8] = {1, 2, 3, 4, 5, 6, 7, 8};
                    const bool hex = kHexDigitValue[static_cast<uint8_t>(v)] <= 0x0f;
                    CAPTURE(at);
                    CAPTURE(v);
                    REQUIRE(decode_hex16(bad, got) == hex);
                    if (hex) {
                        CHECK(bytes(got, got + 8) == *from_hex(std::string(bad, 16)));
                    } else {
                        CHECK(bytes(got, got + 8) == bytes{1, 2, 3, 4, 5, 6, 7, 8});
                    }
                }
            }
        }
    }
}

TEST_CASE("decode_hex_pairs: every even length to 80, and a non-digit at each place refused") {
    std::mt19937_64 rng(16);
    const std::string digits = "0123456789abcdefABCDEF";
    for (size_t n = 0; n <= 80; n += 2) {
        std::string s;
        for (size_t i = 0; i < n; ++i) s += digits[rng() % digits.size()];
        std::vector<uint8_t> out(n / 2 + 1, 0xee);
        REQUIRE(decode_hex_pairs(s, out.data()));
        for (size_t i = 0; i < n / 2; ++i) {
            const auto v = [](char c) {
                return static_cast<unsigned>(kHexDigitValue[static_cast<uint8_t>(c)]);
            };
            CHECK(out[i] == (v(s[2 * i]) << 4 | v(s[2 * i + 1])));
        }
        CHECK(out[n / 2] == 0xee);  // nothing written past the end
        for (size_t at = 0; at < n; ++at) {
            for (const char bad : {'g', 'G', ' ', 'x', '/', ':', '@', '`', '\0', '\x80', '\xff'}) {
                std::string t = s;
                t[at] = bad;
                INFO("length " << n << ", " << static_cast<int>(bad) << " at " << at);
                CHECK_FALSE(decode_hex_pairs(t, out.data()));
            }
        }
    }
}
