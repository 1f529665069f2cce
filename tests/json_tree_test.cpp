#include <doctest/doctest.h>

#include <mpt/input/json_lexer.hpp>
#include <mpt/input/json_tree.hpp>

#include <string>

using namespace mpt;

TEST_CASE("json_tree: nested values, views and places") {
    const std::string text =
        "{\"a\": [1, \"x\", null, true],\n \"b\": {\"c\": \"\\u0041\"}, \"a\": []}";
    auto t = JsonTree::parse(text);
    REQUIRE(t.ok());
    const JsonValue root = t->root();
    REQUIRE(root.is_object());
    CHECK(root.size() == 3);
    CHECK(root.name(0) == "a");
    const JsonValue first_a = root[0];
    REQUIRE(first_a.is_array());
    REQUIRE(first_a.size() == 4);
    CHECK(first_a[0].kind() == JsonKind::number);
    CHECK(first_a[0].text() == "1");
    CHECK(first_a[1].text() == "x");
    CHECK(first_a[2].is_null());
    CHECK(first_a[3].kind() == JsonKind::boolean);
    // A repeated member: find takes the last.
    auto a = root.find("a");
    REQUIRE(a);
    CHECK(a->is_array());
    CHECK(a->size() == 0);
    auto c = root.find("b")->find("c");
    REQUIRE(c);
    CHECK(c->text() == "A");  // decoded escape
    CHECK(c->where() == "line 2, column 13");
    CHECK_FALSE(root.find("zz"));
    CHECK_FALSE(first_a.find("a"));  // not an object
}

TEST_CASE("json_tree: any value is a document") {
    auto t = JsonTree::parse(" [\"0x01\", [\"0x02\"]] ");
    REQUIRE(t.ok());
    CHECK(t->root()[1][0].text() == "0x02");
    CHECK(JsonTree::parse("\"s\"")->root().text() == "s");
    CHECK(JsonTree::parse("-1.5e3")->root().text() == "-1.5e3");
}

TEST_CASE("json_tree: malformed documents name the place") {
    for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "[01]", "nul", "[1] 2", "{\"a\":1,}",
                            "\"\\x\"", "[\"\x01\"]"}) {
        auto t = JsonTree::parse(bad);
        CHECK_MESSAGE(!t.ok(), bad);
        if (!t.ok()) CHECK(t.error().code == Errc::bad_json);
    }
    CHECK(JsonTree::parse("[1,]").error().detail.find("line 1, column 4") != std::string::npos);
}

TEST_CASE("json_tree: an SQLite database is named as one, only at the document's start") {
    const std::string header("SQLite format 3\0\x10\x00\x02\x02", 20);
    for (auto parse : {&JsonTree::parse, &JsonTree::parse_sequence}) {
        auto t = parse(header);
        REQUIRE_FALSE(t.ok());
        CHECK(t.error().code == Errc::bad_json);
        CHECK(t.error().detail == "an SQLite database (a trie file?), not a document");
    }
    // Without its NUL, or after a first byte, it is text like any other.
    CHECK(JsonTree::parse("SQLite format 3").error().detail ==
          "line 1, column 1: expected a value");
    CHECK(JsonTree::parse(" " + header).error().detail == "line 1, column 2: expected a value");
}

TEST_CASE("json_tree: nesting is bounded, not followed into the stack") {
    const std::string ok_depth(JsonTree::kMaxDepth, '[');
    CHECK(JsonTree::parse(ok_depth + std::string(JsonTree::kMaxDepth, ']')).ok());
    const std::string deep(100000, '[');
    auto t = JsonTree::parse(deep);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().detail.find("nesting deeper than") != std::string::npos);
}

TEST_CASE("json_tree: member names that differ only in case are refused, at every depth") {
    // Go's encoding/json matches names in any case and takes the last match: such a document
    // reads one way there and another here.
    for (const std::string text : {
             R"({"balance": "0x0", "Balance": "0x9"})",
             R"({"result": {"nonce": "0x1", "NONCE": "0x2"}})",
             R"([{"a": 1}, {"storageProof": [], "STORAGEPROOF": []}])",
             "{\"key\": 1, \"\xE2\x84\xAA"
             "ey\": 2}",                                             // KELVIN SIGN folds to k
             "{\"storageProof\": [], \"\xC5\xBFtorageProof\": []}",  // LONG S folds to s
         }) {
        CAPTURE(text);
        auto t = JsonTree::parse(text);
        REQUIRE_FALSE(t.ok());
        CHECK(t.error().code == Errc::bad_input);
        CHECK(t.error().detail.find("differ only in case") != std::string::npos);
    }
    auto t = JsonTree::parse(R"({"result": {"nonce": "0x1", "NONCE": "0x2"}})");
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().detail ==
          R"(the object at line 1, column 12: members "NONCE" and "nonce" differ only in case )"
          R"((a reader that ignores case would take either))");
    // The same spelling twice is one reading for every decoder (the last); other names pass.
    CHECK(JsonTree::parse(R"({"a": 1, "a": 2, "b": 3, "ab": 4, "\u00c4": 5, "\u00e4": 6})").ok());
    // A text that is no JSON is a syntax error whatever it holds: the twins, seen first where
    // their object ends, do not hide what follows.
    for (const std::string text : {R"({"5y": [], "5Y": []}u)", R"({"x": {"a": 1, "A": 2}, "y": })",
                                   R"([{"a": 1, "A": 2}, tru])"}) {
        CAPTURE(text);
        auto bad = JsonTree::parse(text);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().code == Errc::bad_json);
    }
    auto sequence = JsonTree::parse_sequence(R"({"a": 1, "A": 2} {"b": )");
    REQUIRE_FALSE(sequence.ok());
    CHECK(sequence.error().code == Errc::bad_json);
    sequence = JsonTree::parse_sequence(R"([1] {"a": 1, "A": 2} [2])");
    REQUIRE_FALSE(sequence.ok());
    CHECK(sequence.error().code == Errc::bad_input);
}

TEST_CASE("json_tree: a sequence of values is an array of them, each with its source") {
    auto t = JsonTree::parse_sequence("{\"a\": [1, 2]}\n{\"b\": \"x\"} [3]\"s\"7");
    REQUIRE(t.ok());
    const JsonValue r = t->root();
    REQUIRE(r.is_array());
    REQUIRE(r.size() == 5);
    CHECK(r[0].source() == "{\"a\": [1, 2]}");
    CHECK(r[0].find("a")->source() == "[1, 2]");
    CHECK(r[1].where() == "line 2, column 1");
    CHECK(r[1].source() == "{\"b\": \"x\"}");
    CHECK(r[2].source() == "[3]");
    CHECK(r[3].source() == "\"s\"");  // a string, then a number with nothing between
    CHECK(r[4].text() == "7");
    // One value is an array of one; nothing, or a bad value anywhere, is an error.
    CHECK(JsonTree::parse_sequence(" 5 ")->root().size() == 1);
    CHECK(JsonTree::parse_sequence("  ").error().detail.find("empty document") !=
          std::string::npos);
    CHECK(JsonTree::parse_sequence("{} {").error().detail.find("line 1, column 5") !=
          std::string::npos);
}

TEST_CASE("json lexer: a plain run ends at the first special byte, wherever it stands") {
    // Each kind of byte that ends a plain run, at each place of texts long enough for the
    // sixteen-byte and eight-byte steps and the tail, in a text that holds a later one too.
    const char specials[] = {'"', '\\', '\0', '\x1f', '\n', '\x80', '\xff'};
    for (size_t len = 1; len <= 40; ++len) {
        for (size_t at = 0; at < len; ++at) {
            for (const char c : specials) {
                std::string text(len, 'a');
                text[at] = c;
                if (at + 1 < len) text[len - 1] = '"';
                const char* begin = text.data();
                CHECK(json_detail::scan_plain(begin, begin + len) == begin + at);
            }
        }
        std::string mixed(len, ' ');  // the bytes 0x20, 0x7f, '!' and '~' pass
        for (size_t i = 0; i < len; ++i) mixed[i] = "\x20\x7f!~"[i % 4];
        CHECK(json_detail::scan_plain(mixed.data(), mixed.data() + len) == mixed.data() + len);
    }
}
