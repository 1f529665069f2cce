// State documents past the memory budget (ops/state_spill.hpp): the streamed reader and the
// sorted path against the whole-document path, with budgets of a few entries a run so that
// every run spills and the merges take several passes.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/ops/state_spill.hpp>
#include <mpt/state/document.hpp>
#include <mpt/state/document_stream.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::why;

namespace {

namespace fs = std::filesystem;

struct TempFolder {
    fs::path dir;
    TempFolder() {
        char name[] = "/tmp/mpt_statespill_XXXXXX";
        dir = ::mkdtemp(name);
    }
    ~TempFolder() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
    std::string write(const std::string& name, const std::string& text) const {
        const std::string p = (dir / name).string();
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
};

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// Budgets of a few records: runs of a few entries, merged two at a time.
SpillOptions tiny_spill(const fs::path& dir, size_t run_bytes) {
    SpillOptions o;
    o.run_bytes = run_bytes;
    o.buffer_bytes = 4096;
    o.fan_in = 2;
    o.tmp_dir = dir.string();
    return o;
}

// The stream of path, however small it is (piece_bytes: how much is read at a time).
std::unique_ptr<TextStream> stream_of(const std::string& path, size_t piece_bytes = 64) {
    auto s = open_text_source(path, 0, piece_bytes, size_t{1} << 20);
    REQUIRE_MESSAGE(s.ok(), why(s));
    REQUIRE(s->stream != nullptr);
    return std::move(s->stream);
}

// The outcome of a read as a line: the root (and what the JSON output counts), or the error.
std::string whole_outcome(const std::string& text) {
    auto doc = parse_state_document(text);
    if (!doc) return std::string(errc_name(doc.error().code)) + ": " + doc.error().detail;
    auto info = state_root_info(*doc);
    if (!info) return std::string(errc_name(info.error().code)) + ": " + info.error().detail;
    std::string out = to_hex(info->root) + " " + std::string(state_shape_name(doc->shape)) + " " +
                      std::to_string(info->accounts) + " " + std::to_string(info->storage_slots) +
                      " " + std::to_string(info->storage_tries);
    if (doc->claimed_root) out += " claimed " + to_hex(*doc->claimed_root);
    return out;
}

std::string streamed_outcome_on(const TempFolder& t, const std::string& text, size_t run_bytes,
                                size_t piece_bytes, unsigned threads) {
    const std::string path = t.write("doc.json", text);
    auto stream = stream_of(path, piece_bytes);
    SpillOptions spill = tiny_spill(t.dir, run_bytes);
    spill.overlap = threads > 1;
    auto r = streamed_state_root(*stream, spill, threads);
    if (!r) {
        CHECK(r.error().file == path);
        return std::string(errc_name(r.error().code)) + ": " + r.error().detail;
    }
    std::string out = to_hex(r->info.root) + " " + std::string(state_shape_name(r->doc.shape)) +
                      " " + std::to_string(r->info.accounts) + " " +
                      std::to_string(r->info.storage_slots) + " " +
                      std::to_string(r->info.storage_tries);
    if (r->doc.claimed_root) out += " claimed " + to_hex(*r->doc.claimed_root);
    return out;
}

// The streamed outcome on one thread, checked against three (the account trie split by first
// nibble, runs written while the next is filled).
std::string streamed_outcome(const TempFolder& t, const std::string& text, size_t run_bytes,
                             size_t piece_bytes = 64) {
    const std::string one = streamed_outcome_on(t, text, run_bytes, piece_bytes, 1);
    CHECK(streamed_outcome_on(t, text, run_bytes, piece_bytes, 3) == one);
    return one;
}

// Builds both ways into new files; true when both are made and equal byte for byte.
void check_same_file(const TempFolder& t, const std::string& text, size_t run_bytes,
                     size_t row_bytes, bool preimages = true) {
    auto doc = parse_state_document(text);
    REQUIRE_MESSAGE(doc.ok(), why(doc));
    StateBuildOptions o;
    o.preimages = preimages;
    const std::string whole = (t.dir / "whole.mpt").string();
    const std::string spilled = (t.dir / "spilled.mpt").string();
    fs::remove(whole);
    fs::remove(spilled);
    auto a = build_new_state_file(whole, *doc, o);
    REQUIRE_MESSAGE(a.ok(), why(a));
    REQUIRE(a->has_value());
    const std::string path = t.write("doc.json", text);
    auto stream = stream_of(path);
    auto b =
        build_new_state_file_streamed(spilled, *stream, o, tiny_spill(t.dir, run_bytes), row_bytes);
    REQUIRE_MESSAGE(b.ok(), why(b));
    REQUIRE(b->has_value());
    CHECK(to_hex((*b)->result.root) == to_hex((*a)->root));
    CHECK((*b)->result.accounts == (*a)->accounts);
    CHECK((*b)->result.storage_tries == (*a)->storage_tries);
    CHECK((*b)->result.slots == (*a)->slots);
    CHECK((*b)->result.preimages == (*a)->preimages);
    CHECK((*b)->result.codes == (*a)->codes);
    CHECK((*b)->result.rows_written == (*a)->rows_written);
    CHECK((*b)->doc.temp_files > 0);
    const std::string x = file_bytes(whole), y = file_bytes(spilled);
    CHECK(x.size() == y.size());
    CHECK_MESSAGE(x == y, "the files differ");
}

// Random documents of every shape, with what a document may repeat: an address given twice
// (in one run and across runs), a slot twice in one account, zero and null slots, a dump's
// own storage root with and without slots, codeHash with and without code.
struct DocGen {
    std::mt19937_64 rng;
    std::vector<std::string> addresses;

    explicit DocGen(uint64_t seed, size_t pool) : rng(seed) {
        for (size_t i = 0; i < pool; ++i) {
            bytes a = mpt::test::random_bytes(rng, 20);
            std::string s = to_hex(a);
            if (i % 3 == 0) {
                s = s.substr(2);  // no 0x
            } else if (i % 4 == 1) {
                for (char& c : s) c = static_cast<char>(std::toupper(c));
                s[1] = i % 8 == 1 ? 'x' : 'X';
            }
            addresses.push_back(s);
        }
    }
    size_t pick(size_t n) { return static_cast<size_t>(rng() % n); }

    std::string quantity(size_t max_bytes) {
        switch (pick(5)) {
            case 0:
                return "\"0x" + std::to_string(pick(9)) + "\"";
            case 1:
                return std::to_string(rng() % 100000);
            case 2:
                return "\"" + std::to_string(rng() % 1000000) + "\"";
            case 3:
                return "\"\"";
            default: {
                std::string h = to_hex(mpt::test::random_bytes(rng, 1 + pick(max_bytes)));
                return "\"" + h + "\"";
            }
        }
    }
    std::string word(size_t bytes_max) {
        // Storage words: hex of even length, 0x optional, at most 32 bytes.
        std::string h = to_hex(mpt::test::random_bytes(rng, pick(bytes_max + 1)));
        if (pick(2) == 0) h = h.substr(2);
        return h;
    }
    std::string storage(std::string* root_given) {
        std::string s = "{";
        const size_t n = pick(4) == 0 ? 0 : pick(12);
        for (size_t i = 0; i < n; ++i) {
            if (i) s += pick(3) == 0 ? ",\n  " : ", ";
            // Slots from a small pool, so that they repeat within and across accounts.
            s += "\"0x" + std::string(62, '0') +
                 to_hex(bytes{static_cast<uint8_t>(pick(20))}).substr(2) + "\": ";
            const size_t kind = pick(10);
            if (kind == 0) {
                s += "null";
            } else if (kind == 1) {
                s += "\"0x00\"";
            } else {
                s += "\"" + word(32) + "\"";
            }
        }
        s += "}";
        if (root_given) *root_given = n == 0 ? "" : "x";
        return s;
    }
    std::string account_fields(bool dump, bool lines) {
        std::string s;
        const auto field = [&](const std::string& f) {
            if (!s.empty()) s += pick(3) == 0 ? ",\n    " : ", ";
            s += f;
        };
        field("\"balance\": " + quantity(32));
        if (pick(2)) field("\"nonce\": " + quantity(8));
        std::string code;
        if (pick(3) == 0) {
            code = to_hex(mpt::test::random_bytes(rng, pick(40)));
            field("\"code\": \"" + code + "\"");
        }
        if (pick(2)) field("\"storage\": " + storage(nullptr));
        if (dump) {
            if (pick(2)) {
                field("\"root\": \"" + to_hex(mpt::test::random_bytes(rng, 32)) + "\"");
            }
            if (pick(3) == 0) {
                const bytes c = from_hex(code.empty() ? "0x" : code).value();
                const Hash256 h = code.empty() && pick(2)
                                      ? keccak256(mpt::test::random_bytes(rng, 5))
                                      : keccak256(c);
                field("\"codeHash\": \"" + to_hex(h) + "\"");
            }
        }
        if (pick(8) == 0) field("\"secretKey\": {\"x\": [1, 2, {\"y\": \"}\"}]}");
        if (lines) return s;
        return "{" + s + "}";
    }
    std::string alloc_members(size_t n, bool dump) {
        std::string s;
        for (size_t i = 0; i < n; ++i) {
            if (i) s += ",\n";
            const std::string& a = addresses[pick(addresses.size())];
            if (dump && pick(6) == 0) {
                const bytes ab =
                    from_hex(a.starts_with("0") && (a[1] == 'x' || a[1] == 'X') ? "0x" + a.substr(2)
                                                                                : "0x" + a)
                        .value();
                s += "\"pre(" + to_hex(keccak256(ab)) + ")\": " + account_fields(true, false);
            } else {
                s += "\"" + a + "\": " + account_fields(dump, false);
            }
        }
        return s;
    }
    std::string line_account(bool geth) {
        const std::string& a = addresses[pick(addresses.size())];
        std::string s = account_fields(geth, true);
        s += ", \"address\": \"0x" + (a.size() == 42 ? a.substr(2) : a) + "\"";
        if (geth) {
            std::string full = a.size() == 42 ? "0x" + a.substr(2) : "0x" + a;
            s += ", \"key\": \"" + to_hex(keccak256(from_hex(full).value())) + "\"";
            if (s.find("\"root\"") == std::string::npos) {
                s += ", \"root\": \"" + to_hex(kEmptyRoot) + "\"";
            }
        }
        return "{" + s + "}";
    }

    std::string document(int shape, size_t n) {
        const std::string root = "\"" + to_hex(mpt::test::random_bytes(rng, 32)).substr(2) + "\"";
        switch (shape) {
            case 0:
                return "{" + alloc_members(n, false) + "}\n";
            case 1: {
                // A genesis; sometimes with an "alloc" given twice (the last one counts).
                std::string first =
                    pick(3) == 0 ? "\"alloc\": {" + alloc_members(n / 2, false) + "},\n" : "";
                return "{\"config\": {\"chainId\": 1, \"x\": [\"{\"]}, " + first + "\"alloc\": {" +
                       alloc_members(n, false) + "}, \"gasLimit\": \"0x1\"}";
            }
            case 2:
                return "{\"root\": " + root + ",\n\"accounts\": {" + alloc_members(n, true) + "}}";
            case 3: {
                std::string s = "{\"root\": " + root + "}\n";
                for (size_t i = 0; i < n; ++i) s += line_account(true) + "\n";
                return s;
            }
            default: {
                std::string s = "{\"root\": " + root + "}\n";
                for (size_t i = 0; i < n; ++i) s += line_account(false) + "\n";
                return s;
            }
        }
    }
};

}  // namespace

TEST_CASE("statespill: streamed roots of every shape equal the whole document's") {
    TempFolder t;
    const uint64_t s = mpt::test::seed("statespill roots");
    for (int shape = 0; shape < 5; ++shape) {
        for (int round = 0; round < 12; ++round) {
            DocGen g(s + static_cast<uint64_t>(shape * 100 + round), 8 + round * 3);
            const std::string text = g.document(shape, 5 + static_cast<size_t>(round) * 7);
            const std::string whole = whole_outcome(text);
            CAPTURE(shape);
            CAPTURE(round);
            CAPTURE(text);
            REQUIRE_MESSAGE(whole.starts_with("0x"), whole);
            CHECK(streamed_outcome(t, text, 300) == whole);
            CHECK(streamed_outcome(t, text, 1 << 20, 4096) == whole);
        }
    }
}

TEST_CASE("statespill: a repeated address keeps its last account, with its own storage only") {
    TempFolder t;
    const std::string a = "0x1000000000000000000000000000000000000001";
    const std::string b = "0x2000000000000000000000000000000000000002";
    // a's first object has slots 1 and 2; its last has slot 2 only (and 3 as zero): slot 1
    // must not survive from the first. b's last object lists no storage.
    std::string text = "{\"" + a +
                       "\": {\"balance\": \"1\", \"storage\": {\"0x01\": \"0x05\", \"0x02\": "
                       "\"0x06\"}},\n";
    for (int i = 0; i < 40; ++i) {
        text += "\"0x30000000000000000000000000000000000000" + std::string(i < 10 ? "0" : "") +
                std::to_string(i) + "\": {\"balance\": \"" + std::to_string(i) +
                "\", \"storage\": {\"0x01\": \"0x01\"}},\n";
    }
    text += "\"" + b + "\": {\"balance\": \"7\", \"storage\": {\"0x09\": \"0x09\"}},\n";
    text += "\"" + a +
            "\": {\"balance\": \"2\", \"storage\": {\"0x02\": \"0x07\", \"0x03\": \"0x00\"}},\n";
    text += "\"" + b + "\": {\"balance\": \"8\"}}";
    const std::string whole = whole_outcome(text);
    REQUIRE(whole.starts_with("0x"));
    CHECK(streamed_outcome(t, text, 200) == whole);
    check_same_file(t, text, 200, 256);
}

TEST_CASE("statespill: generated states build the same file byte for byte") {
    TempFolder t;
    const uint64_t s = mpt::test::seed("statespill files");
    for (int shape = 0; shape < 5; ++shape) {
        for (int round = 0; round < 4; ++round) {
            DocGen g(s + 7 + static_cast<uint64_t>(shape * 10 + round), 30);
            const std::string text = g.document(shape, 40 + static_cast<size_t>(round) * 20);
            CAPTURE(shape);
            CAPTURE(round);
            check_same_file(t, text, 400, 512 << round, round % 2 == 0);
        }
    }
}

TEST_CASE("statespill: errors are those of the whole document, at the same place") {
    TempFolder t;
    const uint64_t s = mpt::test::seed("statespill errors");
    std::mt19937_64 rng(s);
    const std::string noise = "{}[]\",:0x 1fn\n\\";
    size_t errors = 0;
    for (int round = 0; round < 400; ++round) {
        DocGen g(s + static_cast<uint64_t>(round), 6);
        std::string text = g.document(round % 5, 6);
        // A few bytes changed, dropped or added at random places.
        const size_t edits = 1 + rng() % 3;
        for (size_t e = 0; e < edits && !text.empty(); ++e) {
            const size_t at = rng() % text.size();
            switch (rng() % 3) {
                case 0:
                    text[at] = noise[rng() % noise.size()];
                    break;
                case 1:
                    text.erase(at, 1 + rng() % 3);
                    break;
                default:
                    text.insert(at, 1, noise[rng() % noise.size()]);
            }
        }
        const std::string whole = whole_outcome(text);
        errors += !whole.starts_with("0x");
        CAPTURE(text);
        CHECK(streamed_outcome(t, text, 300) == whole);
    }
    // Most of the changed documents are wrong somewhere.
    CHECK(errors > 200);
    // And the shapes of a whole document, each with its own line.
    for (const std::string& text : {
             std::string("  \n "),
             std::string("[1, 2]"),
             std::string("[1, 2] x"),
             std::string("{} {}"),
             std::string("{}x"),
             std::string("{\"root\": \"00\"}\n{\"balance\": \"1\"}\n"),
             std::string("{\"root\": 5}"),
             std::string("{\"root\": \"0x12\"}"),
             std::string("{\"alloc\": 5}"),
             std::string("{\"accounts\": [1]}"),
             std::string("{\"config\": {}}"),
             std::string("{\"0x1000000000000000000000000000000000000001\": {\"balance\": 1}, "
                         "\"alloc\": {}}"),
             std::string("{\"0x1000000000000000000000000000000000000001\": {\"balance\": 1}, "
                         "\"root\": \"" +
                         std::string(64, '0') + "\"}"),
             std::string("{\"alloc\": {}, \"accounts\": {}}"),
             std::string("{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1, \"code\": \"0x01\"}}}\n{\"a\": 1}"),
             std::string("{\"root\": \"" + std::string(64, '0') +
                         "\", \"accounts\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1, \"code\": \"0x01\", \"codeHash\": \"0x" +
                         std::string(64, '1') + "\"}}}"),
             // A codeHash that does not match, then a parse error: the parse error comes first.
             std::string("{\"root\": \"" + std::string(64, '0') +
                         "\", \"accounts\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1, \"code\": \"0x01\", \"codeHash\": \"0x" +
                         std::string(64, '1') + "\"}, \"0x12\": {}}}"),
             // A codeHash that does not match in an "accounts" a later one replaces.
             std::string("{\"root\": \"" + std::string(64, '0') +
                         "\", \"accounts\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1, \"code\": \"0x01\", \"codeHash\": \"0x" +
                         std::string(64, '1') + "\"}}, \"accounts\": {}}"),
             std::string("{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1, \"storage\": {\"0x01\": 5}}}}"),
             std::string("{\"root\": \"00\"}\n{\"root\": \"0x" + std::string(64, '0') +
                         "\", \"balance\": \"1\"}\n"),
             std::string("{\"\\u0061lloc\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": \"\\u0031\"}}}"),
             std::string("\xEF\xBB\xBF{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1}}, \"x\": \"\xC3\x28\"}"),
             std::string("{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": 1}}"),
             // A \u escape whose digits run past what a scan takes for the closing quote.
             std::string("{\"root\":\"]32545a\\\\\\u9\"0c\xff"
                         "0000000fce5e00000d"),
             std::string("{\"0x1000000000000000000000000000000000000001\": {\"balance\": "
                         "\"\\u12\"}}"),
             std::string("{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
                         "{\"balance\": \"1"),
         }) {
        CAPTURE(text);
        const std::string whole = whole_outcome(text);
        CHECK(streamed_outcome(t, text, 300) == whole);
        CHECK(streamed_outcome(t, text, 300, 4096) == whole);
    }
}

TEST_CASE("statespill: an account object past the most one may take") {
    TempFolder t;
    std::string text =
        "{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
        "{\"balance\": 1, \"code\": \"0x" +
        std::string(20000, 'a') + "\"}}}";
    const std::string path = t.write("big.json", text);
    auto s = open_text_source(path, 0, 64, 4096);
    REQUIRE(s.ok());
    auto r = streamed_state_root(*s->stream, tiny_spill(t.dir, 300));
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::input_too_large);
    CHECK(r.error().detail.starts_with("line 1, column 12: no account ends within "));
    // Below the limit, whole in memory: the same as before.
    auto w = open_text_source(path, text.size(), 64, 4096);
    REQUIRE(w.ok());
    CHECK(w->stream == nullptr);
    CHECK(w->whole.view() == text);
}

// A brace too many in an account leaves it open to the end of the text, past the most one
// account may take: what is wrong before that point is the error, as the whole document's
// parse reports it, and only where nothing is wrong in the held bytes is the budget the error.
TEST_CASE("statespill: an account left open past the budget: the first error of what it holds") {
    TempFolder t;
    // The storage of the first account gets a value cut short and a brace too many: every
    // account after it is read as its storage, to the end of the text.
    std::string text =
        "{\"alloc\": {\"0x1000000000000000000000000000000000000001\": "
        "{\"balance\": \"0x1\", \"storage\": {\"0x01\": \"0x028\", \"0x02\": {";
    for (int i = 0; i < 200; ++i) {
        char account[96];
        std::snprintf(account, sizeof account, "%s\"0x%040x\": {\"balance\": \"0x%x\"}",
                      i == 0 ? "" : ", ", 0x100 + i, i + 1);
        text += account;
    }
    text += "}}";
    const std::string path = t.write("open.json", text);
    auto s = open_text_source(path, 0, 64, 4096);
    REQUIRE(s.ok());
    REQUIRE(s->stream != nullptr);
    REQUIRE(text.size() > 3 * 4096);
    auto r = streamed_state_root(*s->stream, tiny_spill(t.dir, 300));
    REQUIRE(!r.ok());
    const std::string whole = whole_outcome(text);
    CHECK(whole.starts_with("bad input: line 1, column 97: account "));
    CHECK(whole.ends_with("value 0x028: odd number of hex digits"));
    CHECK(std::string(errc_name(r.error().code)) + ": " + r.error().detail == whole);
}

#ifdef MPT_ETHEREUM_TESTS
// Every pre and postState allocation of the BlockchainTests fixtures, as the fixture writes it,
// through the streamed root and build with budgets of a few entries.
TEST_CASE("statespill: BlockchainTests allocations") {
    TempFolder t;
    const fs::path root = fs::path(MPT_ETHEREUM_TESTS) / "BlockchainTests";
    REQUIRE(fs::is_directory(root));
    size_t allocs = 0, built = 0;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
        const auto j =
            nlohmann::ordered_json::parse(file_bytes(entry.path().string()), nullptr, false);
        if (j.is_discarded() || !j.is_object()) continue;
        for (const auto& item : j.items()) {
            const std::string name = item.key();
            const auto& test = item.value();
            if (!test.is_object()) continue;
            for (const char* member : {"pre", "postState"}) {
                if (!test.contains(member)) continue;
                const std::string text = test[member].dump(1);
                CAPTURE(entry.path().string());
                CAPTURE(name);
                CAPTURE(member);
                const std::string whole = whole_outcome(text);
                REQUIRE_MESSAGE(whole.starts_with("0x"), whole);
                CHECK(streamed_outcome(t, text, 2048) == whole);
                ++allocs;
                // The files of some: all of them would take minutes.
                if (allocs % 16 == 0) {
                    check_same_file(t, text, 2048, 4096);
                    ++built;
                }
            }
        }
    }
    MESSAGE(allocs << " allocations, " << built << " files");
    CHECK(allocs > 300);
}
#endif
