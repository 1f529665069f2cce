// mpt_vectors: the ethereum/tests RLP and hex-prefix vectors, run against the library.
//
//   mpt_vectors DIR    (DIR is an ethereum/tests checkout)
//
// RLPTests/rlptest.json: every case's "in" encodes to "out", and "out" decodes (recursively)
// to the structure of "in" and re-encodes to the same bytes. RLPTests/invalidRLPTest.json:
// every "out" is rejected by a full recursive decode that also rejects trailing bytes.
// BasicTests/hexencodetest.json: the compact encoding of "seq" with the "term" flag is "out",
// and decoding "out" gives back "seq" and "term".
//
// Prints one line per failed case, then "N passed, M failed". Exit 0 when all pass, 1 when
// any fails, 2 when the folder or a file is missing or unreadable (nothing is skipped).
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <mpt/core/hex.hpp>
#include <mpt/core/nibbles.hpp>
#include <mpt/core/rlp.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using json = nlohmann::ordered_json;
using namespace mpt;

// A decoded RLP item with its children; the structure both sides of a case are compared on.
struct Tree {
    bool is_list = false;
    bytes data;  // a string's payload
    std::vector<Tree> children;

    friend bool operator==(const Tree&, const Tree&) = default;
};

// Nesting bound for the recursive decoder: each level costs at least one input byte, so a
// hostile file could otherwise exhaust the stack.
constexpr size_t kMaxDepth = 1024;

// Decodes the item at the front of in, and every item inside it when it is a list.
Result<Tree> decode_tree(bytes_view& in, size_t depth) {
    if (depth > kMaxDepth) return {Errc::bad_input, "nesting too deep"};
    MPT_TRY(rlp::Item item, rlp::decode_item(in));
    Tree t;
    t.is_list = item.is_list;
    if (!item.is_list) {
        t.data.assign(item.payload.begin(), item.payload.end());
        return t;
    }
    bytes_view payload = item.payload;
    while (!payload.empty()) {
        MPT_TRY(Tree child, decode_tree(payload, depth + 1));
        t.children.push_back(std::move(child));
    }
    return t;
}

// A whole input as exactly one item; trailing bytes are an error.
Result<Tree> decode_all(bytes_view in) {
    MPT_TRY(Tree t, decode_tree(in, 0));
    if (!in.empty()) return Errc::rlp_trailing_bytes;
    return t;
}

void encode_tree(bytes& out, const Tree& t) {
    if (!t.is_list) {
        rlp::append_string(out, t.data);
        return;
    }
    const size_t mark = rlp::begin_list(out);
    for (const Tree& c : t.children) encode_tree(out, c);
    rlp::end_list(out, mark);
}

// Minimal big-endian bytes of a non-negative decimal number of any size (zero is empty).
Result<bytes> decimal_to_bytes(std::string_view digits) {
    if (digits.empty()) return {Errc::bad_input, "empty decimal number"};
    bytes be;  // big-endian, grows at the front as the value grows
    for (char c : digits) {
        if (c < '0' || c > '9')
            return {Errc::bad_input, fmt::format("'{}' is not a decimal digit", c)};
        unsigned carry = static_cast<unsigned>(c - '0');
        for (size_t i = be.size(); i-- > 0;) {
            const unsigned v = be[i] * 10u + carry;
            be[i] = static_cast<uint8_t>(v);
            carry = v >> 8;
        }
        while (carry != 0) {
            be.insert(be.begin(), static_cast<uint8_t>(carry));
            carry >>= 8;
        }
    }
    size_t zeros = 0;
    while (zeros < be.size() && be[zeros] == 0) ++zeros;
    be.erase(be.begin(), be.begin() + static_cast<ptrdiff_t>(zeros));
    return be;
}

bytes uint_to_bytes(uint64_t v) {
    bytes be;
    for (; v != 0; v >>= 8) be.insert(be.begin(), static_cast<uint8_t>(v));
    return be;
}

// The structure rlptest.json's "in" describes: a string is its UTF-8 bytes, "#digits" a big
// integer, a JSON integer an integer, an array a list.
Result<Tree> tree_from_json(const json& j, size_t depth = 0) {
    if (depth > kMaxDepth) return {Errc::bad_input, "nesting too deep"};
    Tree t;
    if (j.is_string()) {
        const std::string& s = j.get_ref<const std::string&>();
        if (!s.empty() && s[0] == '#') {
            MPT_TRY(t.data, decimal_to_bytes(std::string_view(s).substr(1)));
        } else {
            t.data.assign(s.begin(), s.end());
        }
    } else if (j.is_number_unsigned()) {
        t.data = uint_to_bytes(j.get<uint64_t>());
    } else if (j.is_number_integer()) {
        return {Errc::bad_input, "negative integer"};
    } else if (j.is_array()) {
        t.is_list = true;
        for (const json& e : j) {
            MPT_TRY(Tree c, tree_from_json(e, depth + 1));
            t.children.push_back(std::move(c));
        }
    } else {
        return {Errc::bad_input, fmt::format("unsupported input type {}", j.type_name())};
    }
    return t;
}

struct Tally {
    size_t passed = 0;
    size_t failed = 0;

    void pass() { ++passed; }
    void fail(const std::string& file, const std::string& name, const std::string& why) {
        ++failed;
        fmt::print("FAIL {}:{}: {}\n", file, name, why);
    }
};

[[noreturn]] void die(const std::string& message) {
    fmt::print(stderr, "mpt_vectors: error: {}\n", message);
    std::exit(2);
}

json load(const std::filesystem::path& dir, const std::string& rel) {
    const std::filesystem::path p = dir / rel;
    std::ifstream f(p, std::ios::binary);
    if (!f) die(fmt::format("{}: cannot open (missing file?)", p.string()));
    std::stringstream ss;
    ss << f.rdbuf();
    json doc = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) die(fmt::format("{}: malformed JSON", p.string()));
    if (!doc.is_object() || doc.empty())
        die(fmt::format("{}: expected a non-empty object of cases", p.string()));
    return doc;
}

// "out" of a case as bytes, or an explanation.
Result<bytes> out_bytes(const json& c) {
    if (!c.is_object() || !c.contains("out") || !c["out"].is_string()) {
        return {Errc::bad_input, "case has no string \"out\""};
    }
    return from_hex(c["out"].get_ref<const std::string&>());
}

void run_rlp_valid(const json& doc, const std::string& file, Tally& t) {
    for (const auto& [name, c] : doc.items()) {
        auto out = out_bytes(c);
        if (!out) {
            t.fail(file, name, out.error().message());
            continue;
        }
        if (!c.contains("in")) {
            t.fail(file, name, "case has no \"in\"");
            continue;
        }
        auto expected = tree_from_json(c["in"]);
        if (!expected) {
            t.fail(file, name, "in: " + expected.error().message());
            continue;
        }
        bytes encoded;
        encode_tree(encoded, *expected);
        if (encoded != *out) {
            t.fail(file, name,
                   fmt::format("encode gave {}, want {}", to_hex(encoded), to_hex(*out)));
            continue;
        }
        auto decoded = decode_all(*out);
        if (!decoded) {
            t.fail(file, name, "decode of out failed: " + decoded.error().message());
            continue;
        }
        if (!(*decoded == *expected)) {
            t.fail(file, name, "decode of out differs from in");
            continue;
        }
        bytes reencoded;
        encode_tree(reencoded, *decoded);
        if (reencoded != *out) {
            t.fail(file, name,
                   fmt::format("re-encode gave {}, want {}", to_hex(reencoded), to_hex(*out)));
            continue;
        }
        t.pass();
    }
}

void run_rlp_invalid(const json& doc, const std::string& file, Tally& t) {
    for (const auto& [name, c] : doc.items()) {
        // A case whose bytes cannot be read must not count as rejected.
        auto out = out_bytes(c);
        if (!out) {
            t.fail(file, name, out.error().message());
            continue;
        }
        auto decoded = decode_all(*out);
        if (decoded) {
            t.fail(file, name, fmt::format("accepted {}", to_hex(*out)));
            continue;
        }
        t.pass();
    }
}

void run_hex_prefix(const json& doc, const std::string& file, Tally& t) {
    for (const auto& [name, c] : doc.items()) {
        if (!c.is_object() || !c.contains("seq") || !c["seq"].is_array() || !c.contains("term") ||
            !c["term"].is_boolean() || !c.contains("out") || !c["out"].is_string()) {
            t.fail(file, name, "case needs \"seq\" (array), \"term\" (bool) and \"out\" (hex)");
            continue;
        }
        bytes seq;
        bool bad = false;
        for (const json& n : c["seq"]) {
            if (!n.is_number_unsigned() || n.get<uint64_t>() > 15) {
                bad = true;
                break;
            }
            seq.push_back(static_cast<uint8_t>(n.get<uint64_t>()));
        }
        auto want = from_hex(c["out"].get_ref<const std::string&>());
        if (bad || !want) {
            t.fail(file, name,
                   bad ? "seq holds a value that is not a nibble" : want.error().message());
            continue;
        }
        const bool term = c["term"].get<bool>();
        const Nibbles path(seq);
        bytes encoded;
        append_compact(encoded, path, term);
        if (encoded != *want) {
            t.fail(file, name,
                   fmt::format("encode gave {}, want {}", to_hex(encoded), to_hex(*want)));
            continue;
        }
        auto decoded = decode_compact(*want);
        if (!decoded) {
            t.fail(file, name, "decode failed: " + decoded.error().message());
            continue;
        }
        if (decoded->leaf != term || !nibbles_equal(decoded->path, path)) {
            t.fail(file, name, "decode does not give back seq and term");
            continue;
        }
        t.pass();
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) die("usage: mpt_vectors DIR (an ethereum/tests checkout)");
    const std::filesystem::path dir = argv[1];
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        die(fmt::format("{}: not a directory", dir.string()));

    const std::string rlp_valid = "RLPTests/rlptest.json";
    const std::string rlp_invalid = "RLPTests/invalidRLPTest.json";
    const std::string hex_prefix = "BasicTests/hexencodetest.json";
    // Load all first, so a missing file stops the run before any result is printed.
    const json valid_doc = load(dir, rlp_valid);
    const json invalid_doc = load(dir, rlp_invalid);
    const json hex_doc = load(dir, hex_prefix);

    Tally t;
    run_rlp_valid(valid_doc, rlp_valid, t);
    run_rlp_invalid(invalid_doc, rlp_invalid, t);
    run_hex_prefix(hex_doc, hex_prefix, t);
    fmt::print("{} passed, {} failed\n", t.passed, t.failed);
    return t.failed == 0 ? 0 : 1;
}
