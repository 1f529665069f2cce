// mpt tries: the tries of a trie file, one line each.
#include "commands.hpp"
#include "common.hpp"

#include <mpt/core/hex.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace mpt::cli {
namespace {

struct TriesOptions {
    std::string db;
    bool names = false;
    bool json = false;
};

int run_tries(const TriesOptions& o) {
    auto store = open_trie_file(o.db, SqliteNodeStore::Mode::read_only);
    if (!store) return report(store.error());
    if (auto s = (*store)->begin_read(); !s) return report(s.error());
    struct EndRead {
        SqliteNodeStore& s;
        ~EndRead() { s.end_read(); }
    } end{**store};
    auto tries = (*store)->list_tries();
    if (!tries) return report(tries.error());
    if (o.names) {
        std::string out;
        if (o.json) {
            nlohmann::ordered_json j = nlohmann::ordered_json::array();
            for (const TrieInfo& t : *tries) j.push_back(t.name);
            out = j.dump() + '\n';
        } else {
            for (const TrieInfo& t : *tries) out += t.name + '\n';
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
        return kOk;
    }
    auto usage = (*store)->trie_usage();
    if (!usage) return report(usage.error());
    // Both by id: usage from the table's order, the tries sorted here.
    const auto usage_of = [&](TrieId id) {
        const auto it = std::lower_bound(
            usage->begin(), usage->end(), id,
            [](const SqliteNodeStore::TrieUsage& u, TrieId i) { return u.trie < i; });
        return it != usage->end() && it->trie == id ? *it : SqliteNodeStore::TrieUsage{id, 0, 0};
    };
    if (o.json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const TrieInfo& t : *tries) {
            const auto u = usage_of(t.id);
            j.push_back({{"name", t.name},
                         {"kind", trie_kind_name(t.kind)},
                         {"root", to_hex(t.root)},
                         {"rows", u.rows},
                         {"bytes", u.bytes}});
        }
        fmt::print("{}\n", j.dump());
        return kOk;
    }
    std::string out;
    for (const TrieInfo& t : *tries) {
        const auto u = usage_of(t.id);
        out += fmt::format("{} {} {} {} {}\n", t.name, trie_kind_name(t.kind), to_hex(t.root),
                           u.rows, u.bytes);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kOk;
}

}  // namespace

void register_tries(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<TriesOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_flag("--names", o->names, "Print the names alone, one a line");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->footer(
        "One line per trie, by name: NAME KIND ROOT ROWS BYTES (KIND plain, secure or state;\n"
        "BYTES the path and RLP bytes of its rows). --json: [{\"name\", \"kind\", \"root\",\n"
        "\"rows\", \"bytes\"}].");
    sub->final_callback([o, &runner] { runner = [o] { return run_tries(*o); }; });
}

}  // namespace mpt::cli
