// mpt root: the root hash of a key/value file, or a run of ethereum/tests trie vectors.
#include "commands.hpp"
#include "common.hpp"

#include <mpt/build/kv_root.hpp>
#include <mpt/core/hex.hpp>
#include <mpt/trie/stack_trie.hpp>
#include "vectors.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace mpt::cli {
namespace {

// True when the file's first byte after white space opens a JSON object or array.
bool looks_like_json(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    int c;
    while ((c = std::fgetc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r') {
    }
    std::fclose(f);
    return c == '{' || c == '[';
}

struct RootOptions {
    std::string input;
    std::string trie = "main";
    std::vector<std::string> vectors;
    bool secure = false;
    bool json = false;
    unsigned threads = 0;  // 0: the CPUs this process may run on
    bool trie_given = false;
};

int run_vectors(const RootOptions& o) {
    size_t passed = 0, failed = 0;
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    for (const std::string& file : o.vectors) {
        auto results = run_trie_vectors(file);
        if (!results) return report(results.error());
        for (const VectorCase& c : *results) {
            (c.passed ? passed : failed) += 1;
            if (o.json) {
                cases.push_back({{"name", c.name}, {"passed", c.passed}, {"detail", c.detail}});
            } else if (c.passed) {
                fmt::print("ok   {}\n", c.name);
            } else {
                fmt::print("FAIL {}: {}\n", c.name, c.detail);
            }
        }
    }
    if (o.json) {
        fmt::print("{}\n",
                   nlohmann::ordered_json{{"cases", cases}, {"passed", passed}, {"failed", failed}}
                       .dump());
    } else {
        fmt::print("{} passed, {} failed\n", passed, failed);
    }
    return failed == 0 ? kOk : kNegative;
}

int run_root(const RootOptions& o) {
    if (!o.vectors.empty()) {
        if (!o.input.empty()) return report_usage("root: give INPUT or --vectors, not both");
        return run_vectors(o);
    }
    if (o.input.empty())
        return report_usage("root: INPUT is required (a key/value JSON file, or - for stdin)");
    if (o.input != "-" && looks_like_sqlite(o.input)) {
        if (o.secure)
            return report_usage("root: --secure applies to key/value input, not to a trie file");
        if (o.threads != 0)
            return report_usage("root: --threads applies to key/value input, not to a trie file");
        auto t = open_trie(o.input, o.trie);
        if (!t) return report(t.error());
        if (auto s = verify_root_row(*t); !s) return report(s.error());
        if (o.json) {
            fmt::print(
                "{}\n",
                nlohmann::ordered_json{{"root", to_hex(t->info.root)}, {"trie", o.trie}}.dump());
        } else {
            fmt::print("{}\n", to_hex(t->info.root));
        }
        return kOk;
    }
    if (o.trie_given) {
        // --trie says the input is meant as a trie file: an empty or damaged one is a storage
        // error about the file, not a usage error about key/value input. JSON input is
        // key/value input, which takes no --trie.
        if (o.input != "-" && !looks_like_json(o.input)) {
            auto t = open_trie(o.input, o.trie);
            if (!t) return report(t.error());
        }
        return report_usage("root: --trie applies to a trie file, not to key/value input");
    }
    auto text = load_input(o.input);
    if (!text) return report(text.error());
    Result<KvInput> input = Errc::internal;
    {
        const SigbusGuard guard(o.input);  // the file is mapped while it is parsed
        input = parse_kv(text->view());
    }
    if (!input) return report(input.error(), o.input);
    *text = InputText();  // the pairs live in the input's own arena
    const unsigned threads = o.threads != 0 ? o.threads : available_cpus();
    auto root = kv_root(*input, o.secure, threads);
    if (!root) return report(root.error(), o.input);
    if (o.json) {
        fmt::print(
            "{}\n",
            nlohmann::ordered_json{{"root", to_hex(root->root)}, {"keys", root->pairs}}.dump());
    } else {
        fmt::print("{}\n", to_hex(root->root));
    }
    return kOk;
}

}  // namespace

void register_root(CLI::App& app, Runner& runner) {
    auto o = std::make_shared<RootOptions>();
    CLI::App* sub = app.add_subcommand(
        "root", "Print the root hash of a key/value file, or run trie test vectors");
    sub->add_option("input", o->input, "Key/value JSON file (- for stdin), or a trie file");
    CLI::Option* trie = sub->add_option("--trie", o->trie, "Trie name, when INPUT is a trie file")
                            ->capture_default_str();
    sub->add_option("--vectors", o->vectors, "ethereum/tests TrieTests files to run")
        ->expected(1, -1);
    sub->add_flag("--secure", o->secure, "Hash every key with keccak256 (a secure trie)");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->add_option("--threads", o->threads,
                    "Threads for hashing a key/value file (default: the CPUs available)")
        ->check(CLI::Range(1u, 1024u));
    sub->footer(
        "Input: a JSON object {\"key\": \"value\"} or an array of pairs [[\"key\", \"value\"], "
        "...]\n"
        "applied in order, where null or \"\" deletes. A 0x string is hex; any other string is\n"
        "its UTF-8 bytes.");
    sub->final_callback([o, trie, &runner] {
        o->trie_given = trie->count() > 0;
        runner = [o] { return run_root(*o); };
    });
}

}  // namespace mpt::cli
