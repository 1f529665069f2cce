#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>

#include <cstdio>
#include <string>

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
