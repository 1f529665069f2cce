#include "vectors.hpp"
#include "common.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/state/block.hpp>
#include <mpt/state/document.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <unordered_set>
#include <vector>

namespace mpt {

Result<Hash256> root_by_trie(const KvInput& input, bool secure) {
    Trie trie;
    for (size_t i = 0; i < input.size(); ++i) {
        const KvPair p = input[i];
        const Hash256 hashed = secure ? keccak256(p.key) : Hash256{};
        const bytes_view key = secure ? bytes_view(hashed) : p.key;
        MPT_RETURN_IF_ERROR(trie.put(key, p.value));
    }
    return trie.root_hash();
}

Result<Hash256> root_by_stack_trie(const KvInput& input, bool secure) {
    MPT_TRY(const KvRoot root, kv_root(input, secure));
    return root.root;
}

namespace {

// Objects keyed by std::map: nlohmann's ordered_json finds each member by a linear search, so
// an object of n members takes n^2 steps to read (a key/value file of 140,000 pairs given as
// vectors took 30 s). The cases' order comes from top_level_names instead; an "in" object's
// order does not matter, its names being distinct.
using json = nlohmann::json;

// The member names of a document's top-level object, in document order, each once: one
// pass of nlohmann's SAX reader, which builds nothing. Empty when the text is no object.
std::vector<std::string> top_level_names(std::string_view text) {
    struct Names : nlohmann::json_sax<json> {
        std::vector<std::string> names;
        std::unordered_set<std::string> seen;
        int depth = 0;
        bool null() override { return true; }
        bool boolean(bool) override { return true; }
        bool number_integer(number_integer_t) override { return true; }
        bool number_unsigned(number_unsigned_t) override { return true; }
        bool number_float(number_float_t, const string_t&) override { return true; }
        bool string(string_t&) override { return true; }
        bool binary(binary_t&) override { return true; }
        bool start_object(std::size_t) override { return ++depth, true; }
        bool end_object() override { return --depth, true; }
        bool start_array(std::size_t) override { return ++depth, true; }
        bool end_array() override { return --depth, true; }
        bool key(string_t& k) override {
            if (depth == 1 && seen.insert(k).second) names.push_back(k);
            return true;
        }
        bool parse_error(std::size_t, const std::string&,
                         const nlohmann::detail::exception&) override {
            return false;
        }
    } sax;
    json::sax_parse(text, &sax, nlohmann::detail::input_format_t::json, false);
    return std::move(sax.names);
}

std::string base_name(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_secure_file(std::string name) {
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name.find("secure") != std::string::npos;
}

std::string key_text(const std::optional<bytes>& k) {
    return k ? std::string(as_chars(*k)) : std::string();
}

Status run_next_prev(const std::string& file, const std::string& name, const json& c,
                     std::vector<VectorCase>& out) {
    if (!c["in"].is_array() || !c["tests"].is_array()) {
        return {Errc::bad_input, file + ": " + name + ": expected arrays \"in\" and \"tests\""};
    }
    Trie trie;
    for (const json& k : c["in"]) {
        if (!k.is_string()) return {Errc::bad_input, file + ": " + name + ": key is not a string"};
        MPT_TRY(bytes key, decode_kv_string(k.get<std::string>()));
        // A key's value is the key itself; only the order matters here.
        MPT_RETURN_IF_ERROR(trie.put(key, key));
    }
    for (const json& t : c["tests"]) {
        if (!t.is_array() || t.size() != 3 || !t[0].is_string() || !t[1].is_string() ||
            !t[2].is_string()) {
            return {Errc::bad_input, file + ": " + name + ": a test is not [key, prev, next]"};
        }
        const std::string key = t[0].get<std::string>();
        MPT_TRY(std::optional<bytes> prev, trie.prev_key(as_bytes(key)));
        MPT_TRY(std::optional<bytes> next, trie.next_key(as_bytes(key)));
        VectorCase vc{base_name(file) + ":" + name + ":" + key, true, {}};
        if (key_text(prev) != t[1].get<std::string>() ||
            key_text(next) != t[2].get<std::string>()) {
            vc.passed = false;
            vc.detail = "prev \"" + key_text(prev) + "\" next \"" + key_text(next) +
                        "\", expected prev \"" + t[1].get<std::string>() + "\" next \"" +
                        t[2].get<std::string>() + "\"";
        }
        out.push_back(std::move(vc));
    }
    return {};
}

}  // namespace

Result<std::vector<VectorCase>> run_trie_vectors(const std::string& path) {
    MPT_TRY(std::string text, read_file(path));
    return run_trie_vectors(path, text);
}

Result<std::vector<VectorCase>> run_trie_vectors(const std::string& path, std::string_view text) {
    json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
        // Where and why, from mpt's own reader of the same grammar.
        auto tree = JsonTree::parse(text);
        if (!tree) return {Errc::bad_json, path + ": " + tree.error().detail};
        return {Errc::bad_json, path + ": not valid JSON"};
    }
    if (!doc.is_object()) return {Errc::bad_input, path + ": expected an object of test cases"};
    const bool secure = is_secure_file(base_name(path));
    std::vector<VectorCase> out;
    for (const std::string& name : top_level_names(text)) {
        const json& c = doc[name];
        if (!c.is_object() || !c.contains("in")) {
            return {Errc::bad_input, path + ": " + name + ": expected an object with \"in\""};
        }
        if (c.contains("tests")) {
            MPT_RETURN_IF_ERROR(run_next_prev(path, name, c, out));
            continue;
        }
        if (!c.contains("root") || !c["root"].is_string()) {
            return {Errc::bad_input, path + ": " + name + ": missing \"root\""};
        }
        auto expected = hash_from_hex(c["root"].get<std::string>());
        if (!expected)
            return {Errc::bad_input, path + ": " + name + ": root: " + expected.error().message()};
        // The pairs go through the same reader as user input.
        auto input = parse_kv(c["in"].dump());
        if (!input)
            return {input.error().code, path + ": " + name + ": " + input.error().message()};
        MPT_TRY(Hash256 by_trie, root_by_trie(*input, secure));
        MPT_TRY(Hash256 by_stack, root_by_stack_trie(*input, secure));
        VectorCase vc{base_name(path) + ":" + name, true, {}};
        if (by_trie != *expected || by_stack != *expected) {
            vc.passed = false;
            vc.detail = "trie " + to_hex(by_trie) + ", stack trie " + to_hex(by_stack) +
                        ", expected " + to_hex(*expected);
        }
        out.push_back(std::move(vc));
    }
    return out;
}

namespace {

VectorCase state_case(const std::string& name, const StateDoc& doc, const Hash256& expected) {
    VectorCase vc{name, true, {}};
    auto root = state_root(doc);
    if (!root) {
        vc.passed = false;
        vc.detail = root.error().message();
    } else if (*root != expected) {
        vc.passed = false;
        vc.detail = "state root " + to_hex(*root) + ", expected " + to_hex(expected);
    }
    return vc;
}

std::string root_text(const std::optional<Hash256>& h) { return h ? to_hex(*h) : "none"; }

// A block's RLP through block_roots: the header it carries must give the roots the fixture's
// decoded header gives, and its body the same roots.
VectorCase block_case(const std::string& name, const BlockchainBlock& b) {
    VectorCase vc{name, true, {}};
    auto raw = from_hex(b.rlp);
    if (!raw) {
        vc.passed = false;
        vc.detail = "rlp: " + raw.error().message();
        return vc;
    }
    auto r = block_roots(*raw);
    if (!r) {
        vc.passed = false;
        vc.detail = "rlp: " + r.error().message();
        return vc;
    }
    std::string why;
    const auto differ = [&](const std::string& what) { why += (why.empty() ? "" : ", ") + what; };
    if (b.transactions_trie != r->header_transactions_root) {
        differ("header transactionsRoot " + to_hex(r->header_transactions_root) +
               ", the fixture's transactionsTrie " + root_text(b.transactions_trie));
    }
    if (!r->transactions_match()) {
        differ("transactions root " + to_hex(r->transactions_root) + " of " +
               std::to_string(r->transactions) + ", header " + to_hex(r->header_transactions_root));
    }
    if (b.withdrawals_root != r->header_withdrawals_root) {
        differ("header withdrawalsRoot " + root_text(r->header_withdrawals_root) +
               ", the fixture's " + root_text(b.withdrawals_root));
    }
    if (!r->withdrawals_match()) {
        differ("withdrawals root " + root_text(r->withdrawals_root) + " of " +
               std::to_string(r->withdrawals) + ", header " +
               root_text(r->header_withdrawals_root));
    }
    if (!why.empty()) {
        vc.passed = false;
        vc.detail = why;
    }
    return vc;
}

}  // namespace

Result<VectorRun> run_vector_file(const std::string& path) {
    MPT_TRY(const InputText text, load_input(path));
    const cli::SigbusGuard guard(path);  // the file is mapped while it is read
    auto tests = parse_blockchain_tests(text.view());
    if (!tests) {
        Error e = std::move(tests).error();
        e.detail = path + ": " + e.detail;
        return e;
    }
    VectorRun run;
    if (!*tests) {
        MPT_TRY(run.cases, run_trie_vectors(path, text.view()));
        return run;
    }
    const std::string file = base_name(path);
    for (const BlockchainTest& t : **tests) {
        run.cases.push_back(state_case(file + ":" + t.name + ":pre", t.pre, t.genesis_state_root));
        if (t.post) {
            run.cases.push_back(
                state_case(file + ":" + t.name + ":postState", *t.post, t.post_state_root));
        } else {
            ++run.skipped;
        }
        for (const BlockchainBlock& b : t.blocks) {
            run.cases.push_back(
                block_case(file + ":" + t.name + ":block " + std::to_string(b.index), b));
        }
    }
    return run;
}

}  // namespace mpt
