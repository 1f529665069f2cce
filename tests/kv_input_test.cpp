#include "test_util.hpp"

#include <mpt/kv_input.hpp>

#include <doctest/doctest.h>

using namespace mpt;
using mpt::test::b;
using mpt::test::h;

TEST_CASE("object and array forms") {
    auto o = parse_kv(R"({"a": "0x01", "b\u00e9": "x\n", "0xff": null})");
    REQUIRE(o.ok());
    CHECK(!o->ordered());
    REQUIRE(o->size() == 3);
    CHECK(bytes((*o)[0].value.begin(), (*o)[0].value.end()) == h("01"));
    CHECK(bytes((*o)[1].key.begin(), (*o)[1].key.end()) == h("62c3a9"));
    CHECK(bytes((*o)[1].value.begin(), (*o)[1].value.end()) == b("x\n"));
    CHECK((*o)[2].value.empty());
    auto a = parse_kv(R"([["k", "v"], ["k", null], ["0x", ""]])");
    REQUIRE(a.ok());
    CHECK(a->ordered());
    CHECK(a->size() == 3);
    CHECK((*a)[2].key.empty());
}

TEST_CASE("errors name the place") {
    auto err = [](std::string_view text) {
        auto r = parse_kv(text);
        REQUIRE(!r.ok());
        return r.error();
    };
    CHECK(err("").code == Errc::bad_json);
    CHECK(err("{").code == Errc::bad_json);
    CHECK(err(R"({"a": 1})").detail.find("not a string") != std::string::npos);
    const Error odd = err("{\n  \"a\": \"0x123\"}");
    CHECK(odd.code == Errc::bad_hex);
    CHECK(odd.detail.find("line 2") != std::string::npos);
    CHECK(err(R"({"a": "0xzz"})").code == Errc::bad_hex);
    CHECK(err(R"([["a"]])").code == Errc::bad_json);
    CHECK(err(R"([["a", "b", "c"]])").code == Errc::bad_json);
    CHECK(err(R"({"a": "b"} x)").code == Errc::bad_json);
    CHECK(err(R"({"a": "\ud800"})").code == Errc::bad_json);
    CHECK(err("{\"a\": \"b\x01\"}").code == Errc::bad_json);
}

TEST_CASE("final pairs: last write wins, deletes drop, sorted") {
    auto a = parse_kv(R"([["b", "1"], ["a", "2"], ["b", "3"], ["a", null], ["c", "4"]])");
    REQUIRE(a.ok());
    const SortedPairs s = sorted_final_pairs(*a, false);
    REQUIRE(s.pairs.size() == 2);
    CHECK(bytes(s.pairs[0].key.begin(), s.pairs[0].key.end()) == b("b"));
    CHECK(bytes(s.pairs[0].value.begin(), s.pairs[0].value.end()) == b("3"));
    CHECK(bytes(s.pairs[1].key.begin(), s.pairs[1].key.end()) == b("c"));
}
