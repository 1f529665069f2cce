// mpt get and mpt dump: read values from a trie file.
#include "commands.hpp"
#include "common.hpp"

#include <mpt/core/hex.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct GetOptions {
    std::string db;
    std::string key;
    std::string trie = "main";
    bool json = false;
};

int run_get(const GetOptions& o) {
    auto key = parse_key(o.key);
    if (!key) return report(key.error());
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    const bytes trie_key = t->trie_key(*key);
    const Trie trie = Trie::open(t->reader.get(), t->info.root);
    bytes value;
    auto found = trie.get(trie_key, value);
    if (!found) return report(found.error(), o.db);
    if (o.json) {
        nlohmann::ordered_json j = {{"key", to_hex(trie_key)}, {"value", nullptr}};
        if (*found) j["value"] = to_hex(value);
        fmt::print("{}\n", j.dump());
    } else if (*found) {
        fmt::print("{}\n", to_hex(value));
    }
    return *found ? kOk : kNegative;
}

struct DumpOptions {
    std::string db;
    std::string from;
    std::string trie = "main";
    size_t limit = 0;
    bool json = false;
};

int run_dump(const DumpOptions& o) {
    bytes from;
    if (!o.from.empty()) {
        auto k = parse_key(o.from);
        if (!k) return report(k.error());
        from = std::move(*k);
    }
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    const Trie trie = Trie::open(t->reader.get(), t->info.root);
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    size_t n = 0;
    std::string line;
    auto s = trie.for_each(from, [&](bytes_view k, bytes_view v) {
        if (o.json) {
            j[to_hex(k)] = to_hex(v);
        } else {
            line = to_hex(k);
            line += ' ';
            line += to_hex(v);
            line += '\n';
            std::fwrite(line.data(), 1, line.size(), stdout);
        }
        return o.limit == 0 || ++n < o.limit;
    });
    if (!s) return report(s.error(), o.db);
    if (o.json) fmt::print("{}\n", j.dump());
    return kOk;
}

}  // namespace

void register_get(CLI::App& app, Runner& runner) {
    auto o = std::make_shared<GetOptions>();
    CLI::App* sub = app.add_subcommand("get", "Print the value of one key (exit 1 when absent)");
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("key", o->key, "Key: 0x hex, or text (hashed first in a secure trie)")
        ->required();
    sub->add_option("--trie", o->trie, "Trie name in the file")->capture_default_str();
    sub->add_flag("--json", o->json, "Print {\"key\", \"value\"}; value null when absent");
    sub->final_callback([o, &runner] { runner = [o] { return run_get(*o); }; });
}

void register_dump(CLI::App& app, Runner& runner) {
    auto o = std::make_shared<DumpOptions>();
    CLI::App* sub = app.add_subcommand("dump", "Print the pairs of a trie in key order");
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("--from", o->from, "Start at this trie key (0x hex or text)");
    sub->add_option("--limit", o->limit, "Print at most N pairs (0: all)")->check(kCount);
    sub->add_option("--trie", o->trie, "Trie name in the file")->capture_default_str();
    sub->add_flag("--json", o->json, "Print one JSON object {key: value}");
    sub->footer("Lines are `0x<key> 0x<value>`; keys are trie keys (hashed in a secure trie).");
    sub->final_callback([o, &runner] { runner = [o] { return run_dump(*o); }; });
}

}  // namespace mpt::cli
