#include <doctest/doctest.h>

#include <mpt/input/json_doc.hpp>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::h;

namespace {

Error parse_error(std::string_view text) {
    auto r = JsonDoc::parse(text);
    REQUIRE(!r.ok());
    return r.error();
}

}  // namespace

TEST_CASE("json_doc: fields as hex, null and arrays") {
    const std::string text = R"({
        "root": "0x00000000000000000000000000000000000000000000000000000000000000ff",
        "key": "0xAbCd", "value": null, "empty": "0x",
        "proof": ["0x01", "0x0203"], "none": [],
        "other": {"nested": [1, -2.5e+3, true, false, null, {"a": "\u00e9"}]}, "n": 0
    })";
    auto doc = JsonDoc::parse(text);
    REQUIRE_MESSAGE(doc.ok(), mpt::test::why(doc));
    CHECK(doc->hash("root").value()[31] == 0xff);
    CHECK(doc->hex("key").value() == h("abcd"));
    CHECK(doc->hex("empty").value().empty());
    CHECK(!doc->nullable_hex("value").value().has_value());
    CHECK(doc->nullable_hex("key").value() == h("abcd"));
    CHECK(doc->hex_array("proof").value() == std::vector<bytes>{h("01"), h("0203")});
    CHECK(doc->hex_array("none").value().empty());
    CHECK(!doc->optional_hex_array("missing").value().has_value());
    CHECK(!doc->optional_hex_array("value").value().has_value());
    CHECK(doc->optional_hex_array("proof").value()->size() == 2);
}

TEST_CASE("json_doc: escapes are decoded, and a repeated member takes its last value") {
    auto doc = JsonDoc::parse(R"({"k\u0065y": "\u0030x\u0041\u0062", "key2": "0x01",
                                  "key2": "0x02", "p": ["0\u0078ff", "0x\/"]})");
    REQUIRE(doc.ok());
    CHECK(doc->hex("key").value() == h("ab"));
    CHECK(doc->hex("key2").value() == h("02"));
    auto p = doc->hex_array("p");
    REQUIRE(!p.ok());
    CHECK(p.error().detail == "field \"p\" item 2: not a hex digit at offset 0 ('/')");
}

TEST_CASE("json_doc: field errors name the field") {
    auto doc = JsonDoc::parse(
        R"({"s": "0x1", "X": "0XAB", "t": "12", "u": "0xzz", "v": 5, "w": "0x00", "a": ["0x00", 7], "o": {}})");
    REQUIRE(doc.ok());
    const auto detail = [](const auto& r) {
        REQUIRE(!r.ok());
        return r.error().message();
    };
    CHECK(detail(doc->hex("s")) == "bad hex: field \"s\": odd number of hex digits");
    CHECK(detail(doc->hex("t")) == "bad hex: field \"t\": missing 0x prefix");
    // The manual says 0x; 0X is refused, by name.
    CHECK(detail(doc->hex("X")) ==
          "bad hex: field \"X\": 0X prefix: hex strings start with a lowercase 0x");
    CHECK(detail(doc->hex("u")) == "bad hex: field \"u\": not a hex digit at offset 0 ('z')");
    CHECK(detail(doc->hex("v")) == "bad input: field \"v\": not a hex string");
    CHECK(detail(doc->hex("x")) == "bad input: missing field \"x\"");
    CHECK(detail(doc->hash("w")) == "bad hex: field \"w\": expected 32 bytes, got 1");
    CHECK(detail(doc->nullable_hex("v")) == "bad input: field \"v\": not a hex string");
    CHECK(detail(doc->hex_array("a")) == "bad input: field \"a\" item 2: not a hex string");
    CHECK(detail(doc->hex_array("o")) == "bad input: field \"o\": not an array");
    CHECK(detail(doc->optional_hex_array("s")) == "bad input: field \"s\": not an array");
}

TEST_CASE("json_doc: syntax errors name the line and column") {
    struct Case {
        const char* text;
        const char* detail;
    };
    const Case cases[] = {
        {"", "line 1, column 1: empty document; expected an object"},
        {"{", "line 1, column 2: expected a string key"},
        {"{\"a\": \"0x00\",\n \"b\" 1}", "line 2, column 6: expected ':'"},
        {"{\"a\": [\"0x00\" \"0x01\"]}", "line 1, column 15: expected ',' or ']'"},
        {"{\"a\": 01}", "line 1, column 8: expected ',' or '}'"},
        {"{\"a\": 1.}", "line 1, column 9: expected a digit"},
        {"{\"a\": -}", "line 1, column 8: expected a value"},
        {"{\"a\": tru}", "line 1, column 7: invalid literal"},
        {"{\"a\": \"x\ty\"}", "line 1, column 9: control character in a string"},
        {"{\"a\": \"\\x\"}", "line 1, column 9: invalid escape"},
        {"{\"a\": \"\\ud800\"}", "line 1, column 14: unpaired surrogate in \\u escape"},
        {"{\"a\": \"x\xc3\"}", "line 1, column 9: invalid UTF-8 in a string"},
        {"{\"\xed\xbf\xbf\": 1}", "line 1, column 3: invalid UTF-8 in a string"},
        {"{\"a\": \"0x00", "line 1, column 7: unterminated string"},
        {"{} {}", "line 1, column 4: unexpected data after the document"},
        {"{\"a\": [}", "line 1, column 8: expected a value"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.text);
        const Error e = parse_error(c.text);
        CHECK(e.code == Errc::bad_json);
        CHECK(e.detail == c.detail);
    }
}

TEST_CASE("json_doc: valid JSON that is not an object is bad input") {
    for (const char* text : {"[]", "\"0x00\"", "null", " 12 ", "[{\"a\": 1}]"}) {
        CAPTURE(text);
        const Error e = parse_error(text);
        CHECK(e.code == Errc::bad_input);
        CHECK(e.detail == "the document is not a JSON object");
    }
}

TEST_CASE("json_doc: nesting is bounded, not followed into a stack overflow") {
    const std::string deep = "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    const Error e = parse_error(deep);
    CHECK(e.code == Errc::bad_json);
    CHECK(e.detail.find("nesting deeper than 256") != std::string::npos);
    const std::string ok = "{\"a\": " + std::string(200, '[') + std::string(200, ']') + "}";
    CHECK(JsonDoc::parse(ok).ok());
}

// A second route: nlohmann/json's parser accepts exactly the texts this reader parses, and
// both read the same strings. The texts are mutations of a document built from the
// characters JSON gives meaning to. Non-ASCII bytes are left out (this reader passes them
// through, nlohmann checks UTF-8), as is nesting past the bound above.
TEST_CASE("json_doc: agrees with nlohmann/json on mutated documents") {
    std::mt19937_64 rng(mpt::test::seed("json_doc_mutations"));
    const std::string base =
        R"({"root": "0x0a0b", "key": "0x\u0041b", "value": null, "proof": ["0x01", "0xf0"],)"
        R"( "x": {"y": [1, -0.5e-2, true, false, null, "s\n\"q"]}, "n": 12.5E+3})";
    const std::string alphabet = "{}[]\":,.0123456789-+eEtrufalsn \\/bx\nAa";
    size_t accepted = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string text = base;
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; ++e) {
            const size_t at = rng() % (text.size() + 1);
            const char c = alphabet[rng() % alphabet.size()];
            switch (rng() % 3) {
                case 0:
                    text.insert(at, 1, c);
                    break;
                case 1:
                    if (at < text.size()) text.erase(at, 1);
                    break;
                default:
                    if (at < text.size()) text[at] = c;
                    break;
            }
        }
        CAPTURE(text);
        auto doc = JsonDoc::parse(text);
        const bool ours = doc.ok() || doc.error().code == Errc::bad_input;
        CHECK(ours == nlohmann::json::accept(text));
        if (!doc.ok()) continue;
        ++accepted;
        const auto j = nlohmann::json::parse(text);
        for (const auto& [name, v] : j.items()) {
            const auto ours_hex = doc->hex(name);
            if (!v.is_string()) {
                CHECK(!ours_hex.ok());
                continue;
            }
            const std::string& s = v.get_ref<const std::string&>();
            const bool prefixed = s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
            const auto want = from_hex(s);
            CHECK(ours_hex.ok() == (prefixed && want.ok()));
            if (ours_hex.ok()) CHECK(*ours_hex == *want);
        }
    }
    // Most mutations break the text; enough survive for the comparison to mean something.
    CHECK(accepted > 1000);
}

TEST_CASE("json_doc: a UTF-8 byte order mark before the document is skipped") {
    auto doc = JsonDoc::parse("\xEF\xBB\xBF{\"key\": \"0x01\"}");
    REQUIRE(doc.ok());
    CHECK(to_hex(doc->hex("key").value()) == "0x01");
    // Columns count from after it.
    CHECK(parse_error("\xEF\xBB\xBF{\"key\" 1}").detail == "line 1, column 8: expected ':'");
}

TEST_CASE("json_doc: member names that differ only in case are refused") {
    auto doc = JsonDoc::parse(R"({"root": "0x01", "key": "0x02", "Root": "0x03"})");
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.error().code == Errc::bad_input);
    CHECK(doc.error().detail == R"(the object at line 1, column 1: members "Root" and "root" )"
                                R"(differ only in case (a reader that ignores case would take )"
                                R"(either))");
    // Nested objects are never read, and hold what they like.
    CHECK(JsonDoc::parse(R"({"root": "0x01", "x": {"a": 1, "A": 2}})").ok());
}
