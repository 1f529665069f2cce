#include "test_util.hpp"

#include <mpt/input/kv_format.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/kv_stream.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

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

TEST_CASE("UTF-8 in strings is taken as it is, every length, and equals its escapes") {
    // U+00E9, U+20AC, U+1F600 and U+10FFFF written out, then as escapes.
    const std::string raw = "{\"b\xc3\xa9\": \"\xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"}";
    auto o = parse_kv(raw);
    REQUIRE(o.ok());
    CHECK(bytes((*o)[0].key.begin(), (*o)[0].key.end()) == h("62c3a9"));
    CHECK(bytes((*o)[0].value.begin(), (*o)[0].value.end()) == h("e282ac20f09f988020f48fbfbf"));
    auto escaped = parse_kv(R"({"b\u00e9": "\u20ac \ud83d\ude00 \udbff\udfff"})");
    REQUIRE(escaped.ok());
    CHECK(bytes((*escaped)[0].value.begin(), (*escaped)[0].value.end()) ==
          bytes((*o)[0].value.begin(), (*o)[0].value.end()));
}

TEST_CASE("errors name the place") {
    auto err = [](std::string_view text) {
        auto r = parse_kv(text);
        REQUIRE(!r.ok());
        return r.error();
    };
    CHECK(err("x").code == Errc::bad_json);
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

TEST_CASE("a long hex string: its bytes, and a bad digit at every offset named there") {
    // Past 16 digits the reader decodes 16 at a time; a bad one anywhere in them, in either
    // form, must still be named at its own offset, and an odd count as odd.
    std::string digits;
    for (int i = 0; i < 70; ++i) digits += "0123456789abcdefABCDEF"[(i * 7 + 3) % 22];
    for (const bool text : {false, true}) {
        for (size_t len = 0; len <= digits.size(); ++len) {
            const std::string hex = "0x" + digits.substr(0, len);
            const std::string doc = text ? "0x01 " + hex + "\n" : "{\"0x01\": \"" + hex + "\"}";
            CAPTURE(doc);
            auto got = parse_kv(doc);
            if (len % 2 != 0) {
                REQUIRE_FALSE(got.ok());
                CHECK(got.error().code == Errc::bad_hex);
                continue;
            }
            REQUIRE(got.ok());
            CHECK(bytes((*got)[0].value.begin(), (*got)[0].value.end()) == *from_hex(hex));
        }
        for (size_t at = 0; at < 64; ++at) {
            // A letter past f, a space, the two bytes of a UTF-8 e acute.
            const char* const no_digit[] = {"g", " ", "\xC3\xA9"};
            std::string bad = "0x" + digits.substr(0, 64);
            bad.replace(2 + at, 1, no_digit[at % 3]);
            const std::string doc = text ? "0x01 " + bad + "\n" : "{\"0x01\": \"" + bad + "\"}";
            CAPTURE(at);
            auto got = parse_kv(doc);
            REQUIRE_FALSE(got.ok());
            if (!text) {
                CHECK(got.error().code == Errc::bad_hex);
                CHECK(got.error().message().find("offset " + std::to_string(at) + " ") !=
                      std::string::npos);
            } else if (at % 3 != 1) {
                CHECK(got.error().code == Errc::bad_hex);
                CHECK(got.error().message().find("column " + std::to_string(8 + at) + ":") !=
                      std::string::npos);
            } else {
                // In a line a blank ends the value: its digits before it are odd, or the
                // rest of the line follows it.
                CHECK(got.error().code == (at % 2 != 0 ? Errc::bad_hex : Errc::bad_input));
                CHECK(got.error().message().find(
                          at % 2 != 0 ? "column 6:" : "column " + std::to_string(9 + at) + ":") !=
                      std::string::npos);
            }
        }
    }
}

TEST_CASE("text dump form: `0x<key> 0x<value>` lines, as mpt dump prints them") {
    const auto pairs = [](std::string_view text) {
        auto r = parse_kv(text);
        REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().detail));
        std::vector<std::pair<std::string, std::string>> out;
        for (size_t i = 0; i < r->size(); ++i) {
            out.emplace_back(to_hex((*r)[i].key), to_hex((*r)[i].value));
        }
        CHECK(r->ordered());
        return out;
    };
    using P = std::vector<std::pair<std::string, std::string>>;
    const P want = {{"0x01", "0x02"}, {"0x", "0xaabb"}, {"0x0304", "0x05"}};
    CHECK(pairs("0x01 0x02\n0x 0xaabb\n0x0304 0x05\n") == want);
    // CRLF, blanks around and between, blank lines, no final line end; upper-case digits.
    CHECK(pairs("\n  0x01\t 0x02 \r\n\n0x 0xAAbb\r\n0x0304 0x05") == want);
    // The empty trie's dump is empty.
    CHECK(pairs("").empty());
    CHECK(pairs(" \n\n").empty());
    // The same pairs as the JSON forms give.
    auto text = parse_kv("0x01 0x02\n0x0304 0x05\n");
    auto json = parse_kv(R"({"0x01": "0x02", "0x0304": "0x05"})");
    REQUIRE((text.ok() && json.ok()));
    const SortedPairs st = sorted_final_pairs(*text, true);
    const SortedPairs sj = sorted_final_pairs(*json, true);
    REQUIRE(st.pairs.size() == sj.pairs.size());
    for (size_t i = 0; i < st.pairs.size(); ++i) {
        CHECK(to_hex(st.pairs[i].key) == to_hex(sj.pairs[i].key));
        CHECK(to_hex(st.pairs[i].value) == to_hex(sj.pairs[i].value));
    }
    // A long key and value.
    const std::string long_key = "0x" + std::string(4000, 'a');
    const P long_pairs = pairs(long_key + " 0x" + std::string(2000, '7') + "\n");
    REQUIRE(long_pairs.size() == 1);
    CHECK(long_pairs[0].first == long_key);
}

TEST_CASE("text dump errors name line and column") {
    struct Case {
        const char* text;
        Errc code;
        const char* detail;
    };
    const Case cases[] = {
        {"0x01 0x02\n0x0g 0x01\n", Errc::bad_hex, "line 2, column 4: key: not a hex digit ('g')"},
        {"0x01 0x02\n0x010 0x01\n", Errc::bad_hex,
         "line 2, column 1: key: odd number of hex digits"},
        {"0x01 0x023\n", Errc::bad_hex, "line 1, column 6: value: odd number of hex digits"},
        {"0x01 0x02z\n", Errc::bad_hex, "line 1, column 10: value: not a hex digit ('z')"},
        {"0x01 0x0\x01\n", Errc::bad_hex, "line 1, column 9: value: not a hex digit (byte 0x01)"},
        {"0x01\n0x02 0x03\n", Errc::bad_input,
         "line 1, column 5: expected a blank and 0x<value> after the key"},
        {"0x01", Errc::bad_input, "line 1, column 5: expected a blank and 0x<value> after the key"},
        {"0x01 02\n", Errc::bad_input, "line 1, column 6: expected 0x<value>"},
        {"0x01 \n", Errc::bad_input, "line 1, column 6: expected 0x<value>"},
        {"0x01 0x02 0x03\n", Errc::bad_input,
         "line 1, column 11: expected the end of the line after the value"},
        {"0x01 0x02\r0x03 0x04\n", Errc::bad_input,
         "line 1, column 10: expected the end of the line after the value"},
        {"0x01 0x02\n{\"0x03\": \"0x04\"}\n", Errc::bad_input,
         "line 2, column 1: expected 0x<key>"},
    };
    for (const Case& c : cases) {
        const std::string text = c.text;
        CAPTURE(text);
        auto r = parse_kv(text);
        REQUIRE(!r.ok());
        CHECK(r.error().code == c.code);
        CHECK(r.error().detail == c.detail);
    }
}

TEST_CASE("a UTF-8 byte order mark before the document is skipped") {
    auto o = parse_kv("\xEF\xBB\xBF{\"0x01\": \"0x02\"}");
    REQUIRE(o.ok());
    CHECK(o->size() == 1);
    auto t = parse_kv(
        "\xEF\xBB\xBF"
        "0x01 0x02\n");
    REQUIRE(t.ok());
    CHECK(t->size() == 1);
    auto e = parse_kv("\xEF\xBB\xBF");
    REQUIRE(e.ok());
    CHECK(e->size() == 0);
    // Columns count from after the mark; a mark anywhere else is no white space.
    auto bad = parse_kv("\xEF\xBB\xBF{\"a\" 1}");
    REQUIRE(!bad.ok());
    CHECK(bad.error().detail == "line 1, column 6: expected ':'");
    auto twice = parse_kv("\xEF\xBB\xBF\xEF\xBB\xBF{}");
    REQUIRE(!twice.ok());
    CHECK(twice.error().code == Errc::bad_json);
}

TEST_CASE("sniff_kv_file reads past any white space to the opener") {
    const mpt::test::TempFile file;
    const auto sniff = [&](const std::string& text) {
        { std::ofstream(file.path, std::ios::binary) << text; }
        return sniff_kv_file(file.path);
    };
    // The table's rows, compared as pointers: a sniff that finds none fails, not crashes.
    const KvFormat* const text = sniff_kv_format("0x");
    const KvFormat* const pairs = sniff_kv_format("[]");
    const KvFormat* const object = sniff_kv_format("{}");
    REQUIRE((text != nullptr && text->shape == KvShape::text));
    REQUIRE((pairs != nullptr && pairs->shape == KvShape::pairs));
    REQUIRE((object != nullptr && object->shape == KvShape::object));
    const std::string blocks(10000, ' ');  // white space over several blocks read
    CHECK(sniff("\xEF\xBB\xBF" + blocks + "\n0x01 0x02\n") == text);
    CHECK(sniff(std::string(4095, '\n') + "0x") == text);  // cut between blocks
    CHECK(sniff(blocks + "[]") == pairs);
    CHECK(sniff("{") == object);
    CHECK(sniff(blocks + "0") == nullptr);
    CHECK(sniff(blocks + "0y") == nullptr);
    CHECK(sniff(blocks) == nullptr);
    CHECK(sniff("") == nullptr);
    CHECK(sniff("SQLite format 3") == nullptr);
    CHECK(sniff(" \xEF\xBB\xBF{}") == nullptr);  // a mark after white space is none
    CHECK(sniff_kv_file(file.path + ".absent") == nullptr);
    CHECK(sniff_kv_file("/tmp") == nullptr);
}

TEST_CASE("the format table: what each reader takes a document's shape to be") {
    CHECK(sniff_kv_format("{}")->shape == KvShape::object);
    CHECK(sniff_kv_format(" \n\t[[\"a\", \"b\"]]")->shape == KvShape::pairs);
    CHECK(sniff_kv_format("\xEF\xBB\xBF 0x01 0x02\n")->shape == KvShape::text);
    // An object's pairs are a map; an array's and a dump's apply in order (kv_input.hpp).
    CHECK(!sniff_kv_format("{}")->ordered);
    CHECK(sniff_kv_format("[]")->ordered);
    CHECK(sniff_kv_format("0x")->ordered);
    CHECK(sniff_kv_format("0y") == nullptr);
    CHECK(sniff_kv_format("0") == nullptr);
    CHECK(sniff_kv_format("\"a\"") == nullptr);
    CHECK(sniff_kv_format("") == nullptr);
    CHECK(sniff_kv_format(" \n") == nullptr);
    // Each format's document, read whole, in two halves and in pieces: its table row says
    // whether its pairs apply in order, and every reader agrees.
    const std::string one_pair[] = {R"({"0x01": "0x02"})", R"([["0x01", "0x02"]])", "0x01 0x02\n"};
    for (size_t i = 0; i < std::size(kKvFormats); ++i) {
        const KvFormat& f = kKvFormats[i];
        std::string doc(one_pair[i]);
        CAPTURE(doc);
        REQUIRE(sniff_kv_format(doc) == &f);
        const auto whole = parse_kv(doc);
        REQUIRE(whole.ok());
        CHECK(whole->ordered() == f.ordered);
        CHECK(whole->size() == 1);
        // Many pairs, for a document that the two-half parse cuts.
        std::string many = f.shape == KvShape::object ? "{" : f.shape == KvShape::pairs ? "[" : "";
        for (int k = 0; k < 2000; ++k) {
            const std::string key = "0x" + std::string(1, "0123456789abcdef"[k % 16]) +
                                    std::string(1, "0123456789abcdef"[(k / 16) % 16]) +
                                    std::string(1, "0123456789abcdef"[(k / 256) % 16]) + "0";
            if (f.shape == KvShape::object) {
                many += (k ? ", \"" : "\"") + key + "\": \"0x0102\"";
            } else if (f.shape == KvShape::pairs) {
                many += (k ? ", [\"" : "[\"") + key + "\", \"0x0102\"]";
            } else {
                many += key + " 0x0102\n";
            }
        }
        many += f.shape == KvShape::object ? "}" : f.shape == KvShape::pairs ? "]" : "";
        const auto halves = parse_kv(many, 2, 1024);
        REQUIRE(halves.ok());
        CHECK(halves->ordered() == f.ordered);
        CHECK(halves->size() == 2000);
        const mpt::test::TempFile file;
        { std::ofstream(file.path, std::ios::binary) << many; }
        CHECK(sniff_kv_file(file.path) == &f);
        auto source = open_text_source(file.path, 0, 256, 1 << 20);
        REQUIRE(source.ok());
        REQUIRE(source->stream != nullptr);
        KvStreamReader reader(std::move(source->stream));
        size_t entries = 0;
        KvInput piece;
        for (;;) {
            auto more = reader.next(piece);
            REQUIRE(more.ok());
            if (!*more) break;
            entries += piece.size();
        }
        CHECK(entries == 2000);
        CHECK(reader.ordered() == f.ordered);
        CHECK(reader.bytes_read() == many.size());
    }
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

TEST_CASE("error messages name line, column and entry exactly") {
    // Recorded from the reader before its fast paths were written; each case must keep its
    // message word for word, whichever path (hex, plain, escaped) first meets the string.
    struct Case {
        const char* text;
        Errc code;
        const char* detail;
    };
    const Case cases[] = {
        {"{\"a\": \"0x123\"}", Errc::bad_hex,
         "entry 1 value (line 1, column 7): odd number of hex digits"},
        {"{\"a\": \"0xzz\"}", Errc::bad_hex,
         "entry 1 value (line 1, column 7): not a hex digit at offset 0 ('z')"},
        {"{\"a\": \"0x0g\"}", Errc::bad_hex,
         "entry 1 value (line 1, column 7): not a hex digit at offset 1 ('g')"},
        {"{\"0xabc\": \"1\"}", Errc::bad_hex,
         "entry 1 key (line 1, column 2): odd number of hex digits"},
        {"{\"a\": \"0x12\\u0033\"}", Errc::bad_hex,
         "entry 1 value (line 1, column 7): odd number of hex digits"},
        {"{\"a\": \"0xAbCd\", \"b\": \"0x12 \"}", Errc::bad_hex,
         "entry 2 value (line 1, column 22): not a hex digit at offset 2 (a space)"},
        {"{\"a\": \"b\",", Errc::bad_json, "line 1, column 11: expected a string key"},
        {" \"c\": \"0x1\"}", Errc::bad_json,
         "line 1, column 2: expected an object or an array of [key, value] pairs, or "
         "`0x<key> 0x<value>` lines"},
        {"[[\"a\", \"b\"], [\"0xq1\", \"c\"]]", Errc::bad_hex,
         "entry 2 key (line 1, column 15): not a hex digit at offset 0 ('q')"},
        {"[[\"a\", \"b\"], [\"c\", \"0xq\"]]", Errc::bad_hex,
         "entry 2 value (line 1, column 20): not a hex digit at offset 0 ('q')"},
        {"{\"a\": 1}", Errc::bad_json, "line 1, column 7: value is not a string or null"},
        {"{\"a\" \"b\"}", Errc::bad_json, "line 1, column 6: expected ':'"},
        {"{\"a\": \"b\" \"c\": \"d\"}", Errc::bad_json, "line 1, column 11: expected ',' or '}'"},
        {"{\"a\": \"b\",}", Errc::bad_json, "line 1, column 11: expected a string key"},
        {"{,}", Errc::bad_json, "line 1, column 2: expected a string key"},
        {"{\"a\": \"b\"", Errc::bad_json, "line 1, column 10: expected ',' or '}'"},
        {"[[\"a\"]]", Errc::bad_json, "line 1, column 6: expected ',' between key and value"},
        {"[[\"a\", \"b\", \"c\"]]", Errc::bad_json,
         "line 1, column 11: expected ']' after the value: a pair has two items"},
        {"[[\"a\", \"b\"],]", Errc::bad_json, "line 1, column 13: expected a [key, value] pair"},
        {"[[\"a\", \"b\"] [\"c\", \"d\"]]", Errc::bad_json,
         "line 1, column 13: expected ',' or ']'"},
        {"[\"a\", \"b\"]", Errc::bad_json, "line 1, column 2: expected a [key, value] pair"},
        {"[[1, \"b\"]]", Errc::bad_json, "line 1, column 3: expected a string key"},
        {"{\"a\": \"b\"} x", Errc::bad_json,
         "line 1, column 12: unexpected data after the document"},
        {"{\"a\": \"\\ud800\"}", Errc::bad_json,
         "line 1, column 14: unpaired surrogate in \\u escape"},
        {"{\"a\": \"\\ud800\\u0041\"}", Errc::bad_json,
         "line 1, column 20: unpaired surrogate in \\u escape"},
        {"{\"a\": \"\\udc00\"}", Errc::bad_json,
         "line 1, column 14: unpaired surrogate in \\u escape"},
        {"{\"a\": \"\\x\"}", Errc::bad_json, "line 1, column 9: invalid escape"},
        {"{\"a\": \"\\u12\"}", Errc::bad_json, "line 1, column 10: invalid \\u escape"},
        {"{\"a\": \"\\u12g4\"}", Errc::bad_json, "line 1, column 10: invalid \\u escape"},
        // At the end of the text: a byte held that is no digit first, as if the text went on.
        {"{\"a\": \"\\u\"", Errc::bad_json, "line 1, column 10: invalid \\u escape"},
        {"{\"a\": \"\\u12", Errc::bad_json, "line 1, column 10: truncated \\u escape"},
        {"{\"a\": \"abc", Errc::bad_json, "line 1, column 7: unterminated string"},
        {"{\"a\": \"abc\\", Errc::bad_json, "line 1, column 12: unterminated escape"},
        {"\"abc\"", Errc::bad_json,
         "line 1, column 1: expected an object or an array of [key, value] pairs, or "
         "`0x<key> 0x<value>` lines"},
        {"{\"a\": nul}", Errc::bad_json, "line 1, column 7: value is not a string or null"},
        {"{\"a\": {\"balance\": \"1\"}}", Errc::bad_json,
         "line 1, column 7: value is an object, not a string or null (a state document or a "
         "test file? --state and --vectors read them)"},
        {"{\"a\": null", Errc::bad_json, "line 1, column 11: expected ',' or '}'"},
        {"  x", Errc::bad_json,
         "line 1, column 3: expected an object or an array of [key, value] pairs, or "
         "`0x<key> 0x<value>` lines"},
        {"{\"k\": \"v\", \"k2\": \"0x0102\", \"k3\": \"0x01020\"}", Errc::bad_hex,
         "entry 3 value (line 1, column 34): odd number of hex digits"},
        {"{\"a\": \"0x\\u0030\\u0031\", \"b\": \"0x\\u003g\"}", Errc::bad_json,
         "line 1, column 35: invalid \\u escape"},
        {"{\"a\": \"b\x01"
         "\"}",
         Errc::bad_json, "line 1, column 9: control character in a string"},
        // Strings are UTF-8 (RFC 8259 8.1): a stray continuation byte, an overlong form, a
        // surrogate, past U+10FFFF, a sequence cut by the quote, a lead byte never used.
        {"{\"a\": \"b\x80\"}", Errc::bad_json, "line 1, column 9: invalid UTF-8 in a string"},
        {"{\"\xc0\x80\": \"b\"}", Errc::bad_json, "line 1, column 3: invalid UTF-8 in a string"},
        {"{\"\xe0\x9f\xbf\": \"b\"}", Errc::bad_json,
         "line 1, column 3: invalid UTF-8 in a string"},
        {"{\"a\": \"\xed\xa0\x80\"}", Errc::bad_json,
         "line 1, column 8: invalid UTF-8 in a string"},
        {"{\"a\": \"\xf4\x90\x80\x80\"}", Errc::bad_json,
         "line 1, column 8: invalid UTF-8 in a string"},
        {"{\"a\": \"\xe2\x82\"}", Errc::bad_json, "line 1, column 8: invalid UTF-8 in a string"},
        {"{\"a\": \"\xff\"}", Errc::bad_json, "line 1, column 8: invalid UTF-8 in a string"},
        {"{\n\n  \"a\": \"0x1\"\n}", Errc::bad_hex,
         "entry 1 value (line 3, column 8): odd number of hex digits"},
        {"\n[\n[\"x\",\n \"0x0\"]]", Errc::bad_hex,
         "entry 1 value (line 4, column 2): odd number of hex digits"},
        {"{\"a\": \"0xff\x7f"
         "\"}",
         Errc::bad_hex,
         "entry 1 value (line 1, column 7): not a hex digit at offset 2 (byte 0x7f)"},
    };
    for (const Case& c : cases) {
        auto r = parse_kv(c.text);
        REQUIRE_MESSAGE(!r.ok(), c.text);
        CHECK_MESSAGE(r.error().code == c.code, c.text);
        CHECK_MESSAGE(r.error().detail == c.detail, c.text);
    }
}

TEST_CASE("a trie file given as key/value input is named as one, on either parse") {
    // A file larger than the two-thread parse's split is read again whole for its error.
    std::string file("SQLite format 3\0", 16);
    file.resize(size_t{1} << 20, '\0');
    for (unsigned threads : {1u, 2u}) {
        auto r = parse_kv(file, threads, 4096);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == Errc::bad_json);
        CHECK(r.error().detail == "an SQLite database (a trie file?), not a document");
    }
    CHECK(parse_kv("SQLite format 3").error().detail.starts_with("line 1, column 1: expected an"));
}

namespace {

// A random JSON string and the bytes it must decode to: 0x hex in mixed case, plain text with
// every kind of escape and multi-byte UTF-8, or 0x hex written with \u escapes.
std::pair<std::string, bytes> random_string(std::mt19937_64& rng) {
    std::string json = "\"";
    bytes want;
    const int kind = static_cast<int>(rng() % 4);
    const size_t len = rng() % 4 == 0 ? rng() % 200 : rng() % 40;
    if (kind == 0) {
        json += "0x";
        for (size_t i = 0; i < len; ++i) {
            const uint8_t v = static_cast<uint8_t>(rng());
            want.push_back(v);
            const char* digits = rng() % 2 ? "0123456789abcdef" : "0123456789ABCDEF";
            json += digits[v >> 4];
            json += digits[v & 15];
        }
    } else if (kind == 3) {
        // Hex digits behind escapes: decoded after unescaping.
        json += "0x";
        for (size_t i = 0; i < len % 8; ++i) {
            const uint8_t v = static_cast<uint8_t>(rng());
            want.push_back(v);
            char buf[16];
            std::snprintf(buf, sizeof buf, "\\u%04x%x", "0123456789abcdef"[v >> 4], v & 15);
            json += buf;
        }
    } else {
        for (size_t i = 0; i < len; ++i) {
            switch (rng() % 10) {
                case 0:
                    json += "\\\"";
                    want.push_back('"');
                    break;
                case 1:
                    json += "\\\\";
                    want.push_back('\\');
                    break;
                case 2:
                    json += "\\n";
                    want.push_back('\n');
                    break;
                case 3:
                    json += "\\/";
                    want.push_back('/');
                    break;
                case 4:
                    json += "\\u00e9";
                    want.push_back(0xc3);
                    want.push_back(0xa9);
                    break;
                case 5:  // U+1F600 as a surrogate pair, and raw
                    json += rng() % 2 ? "\\ud83d\\ude00" : "\xf0\x9f\x98\x80";
                    for (uint8_t b : {0xf0, 0x9f, 0x98, 0x80}) want.push_back(b);
                    break;
                default: {
                    const char c = static_cast<char>(' ' + 3 + rng() % 57);  // '#' to '['
                    json += c;
                    want.push_back(static_cast<uint8_t>(c));
                }
            }
        }
        // A plain string must not read as hex.
        if (want.size() >= 2 && want[0] == '0' && want[1] == 'x') {
            json.insert(1, "_");
            want.insert(want.begin(), '_');
        }
    }
    json += '"';
    return {json, want};
}

std::string random_ws(std::mt19937_64& rng) {
    static const char* kWs[] = {"", "", " ", "\n", "\r\n  ", "\t"};
    return kWs[rng() % 6];
}

}  // namespace

TEST_CASE("parse_kv decodes random documents as they were written") {
    std::mt19937_64 rng(mpt::test::seed("kv_random_documents"));
    for (int doc = 0; doc < 300; ++doc) {
        const bool array = rng() % 2;
        const size_t n = rng() % 30;
        std::string text = random_ws(rng) + (array ? "[" : "{");
        std::vector<std::pair<bytes, std::optional<bytes>>> want;
        for (size_t i = 0; i < n; ++i) {
            if (i != 0) text += random_ws(rng) + ",";
            auto [kj, kb] = random_string(rng);
            std::string vj;
            std::optional<bytes> vb;
            if (rng() % 6 == 0) {
                vj = "null";
            } else {
                auto v = random_string(rng);
                vj = v.first;
                vb = v.second;
            }
            text += random_ws(rng) + (array ? "[" + random_ws(rng) : "") + kj + random_ws(rng) +
                    (array ? "," : ":") + random_ws(rng) + vj + random_ws(rng) + (array ? "]" : "");
            want.emplace_back(kb, vb);
        }
        text += random_ws(rng) + (array ? "]" : "}") + random_ws(rng);
        auto r = parse_kv(text);
        REQUIRE_MESSAGE(r.ok(), text << ": " << mpt::test::why(r));
        CHECK(r->ordered() == array);
        REQUIRE(r->size() == n);
        for (size_t i = 0; i < n; ++i) {
            const KvPair p = (*r)[i];
            CHECK_MESSAGE(bytes(p.key.begin(), p.key.end()) == want[i].first, text);
            const bytes v = want[i].second.value_or(bytes{});
            CHECK_MESSAGE(bytes(p.value.begin(), p.value.end()) == v, text);
        }
    }
}

TEST_CASE("a string cut anywhere is an error, never a crash") {
    const std::string text =
        R"({"0xaabbccddeeff00112233": "plain text \u00e9\ud83d\ude00 \" end", "k": null})";
    REQUIRE(parse_kv(text).ok());
    // From 1: the empty text is the empty trie's dump.
    for (size_t cut = 1; cut < text.size(); ++cut) {
        CHECK_MESSAGE(!parse_kv(text.substr(0, cut)).ok(), "cut at " << cut);
    }
}

namespace {

// sorted_final_pairs by the definition: apply the entries in order to a map.
std::vector<std::pair<bytes, bytes>> final_pairs_model(const KvInput& in) {
    std::map<bytes, bytes> m;
    for (size_t i = 0; i < in.size(); ++i) {
        const KvPair p = in[i];
        bytes k(p.key.begin(), p.key.end());
        if (p.value.empty()) {
            m.erase(k);
        } else {
            m[k] = bytes(p.value.begin(), p.value.end());
        }
    }
    return {m.begin(), m.end()};
}

void check_final_pairs(const std::string& text) {
    auto in = parse_kv(text);
    REQUIRE(in.ok());
    const auto model = final_pairs_model(*in);
    const SortedPairs got = sorted_final_pairs(*in, false);
    REQUIRE(got.pairs.size() == model.size());
    for (size_t i = 0; i < model.size(); ++i) {
        REQUIRE(bytes(got.pairs[i].key.begin(), got.pairs[i].key.end()) == model[i].first);
        REQUIRE(bytes(got.pairs[i].value.begin(), got.pairs[i].value.end()) == model[i].second);
    }
}

// n ordered pairs over keys that often repeat, share their first 8 bytes, or are prefixes of
// one another, with deletions.
std::string random_pairs_document(std::mt19937_64& rng, size_t n) {
    std::string text = "[";
    for (size_t i = 0; i < n; ++i) {
        if (i != 0) text += ",";
        bytes key = mpt::test::random_bytes(rng, rng() % 4 == 0 ? rng() % 12 : 8 + rng() % 3);
        if (rng() % 2 && key.size() >= 2) key[0] = key[1] = 0x5a;  // shared leading bytes
        if (rng() % 3 == 0) {
            for (size_t j = 0; j < key.size() && j < 8; ++j) key[j] = 0x11;  // same prefix
        }
        if (rng() % 8 == 0) key.resize(key.size() % 3);  // tiny keys, prefixes of others
        text += "[\"" + to_hex(key) + "\", ";
        if (rng() % 5 == 0) {
            text += "null]";
        } else {
            text += "\"v" + std::to_string(i) + "\"]";
        }
    }
    return text + "]";
}

}  // namespace

TEST_CASE("final pairs agree with applying the entries to a map") {
    std::mt19937_64 rng(mpt::test::seed("kv_final_pairs"));
    for (int round = 0; round < 40; ++round)
        check_final_pairs(random_pairs_document(rng, rng() % 300));
    // Above 65536 entries the sort takes its radix path.
    check_final_pairs(random_pairs_document(rng, 70000));
    check_final_pairs(random_pairs_document(rng, 140000));
}

TEST_CASE("load_input maps a file and reads what it cannot map") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    const std::string path = (dir / ("mpt_load_input_" + std::to_string(getpid()))).string();
    const std::string doc = R"({"0x01": "0x02", "a": "b"})";
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        REQUIRE(f != nullptr);
        REQUIRE(std::fwrite(doc.data(), 1, doc.size(), f) == doc.size());
        std::fclose(f);
    }
    auto text = load_input(path);
    REQUIRE(text.ok());
    CHECK(text->mapped());
    CHECK(text->view() == doc);
    CHECK(text->view() == *read_file(path));
    // A move keeps the mapping; the moved-from object is empty.
    InputText moved = std::move(*text);
    CHECK(moved.view() == doc);
    CHECK(text->view().empty());

    // An empty file cannot be mapped: it is read, and empty.
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fclose(f);
    auto empty = load_input(path);
    REQUIRE(empty.ok());
    CHECK(!empty->mapped());
    CHECK(empty->view().empty());
    std::remove(path.c_str());

    auto missing = load_input(path);
    REQUIRE(!missing.ok());
    CHECK(missing.error().code == Errc::bad_input);
    CHECK(missing.error().detail.find("No such file") != std::string::npos);
    auto dir_input = load_input(dir.string());
    REQUIRE(!dir_input.ok());
    CHECK(dir_input.error().code == Errc::bad_input);
}
