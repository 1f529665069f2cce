// mpt check and mpt stats: integrity and shape of a stored trie.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/ops/trie_file.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct CheckOptions {
    std::string db;
    std::string trie = "main";
    bool json = false;
};

// Appends what belongs to no trie's check, reported by every one: rows that no trie owns, a
// file cut short, preimages and codes that do not hash to their keys (but those of named and
// named_codes, which the trie's check reported already).
Status add_file_problems(SqliteNodeStore& store, std::vector<std::string>& problems,
                         std::span<const Hash256> named = {},
                         std::span<const Hash256> named_codes = {}) {
    MPT_TRY(const std::optional<std::string> cut, store.cut_short());
    if (cut) problems.push_back(*cut);
    // A bad row of a (hash, blob) table, unless the trie's check named it: a problem.
    const auto bad_row = [&](std::span<const Hash256> told, const char* table, const char* blob) {
        return [&problems, told, table, blob](bytes_view hash) {
            const bool named_already = std::any_of(told.begin(), told.end(), [&](const Hash256& h) {
                return std::equal(h.begin(), h.end(), hash.begin(), hash.end());
            });
            if (!named_already && problems.size() < 1000) {
                problems.push_back(std::string(table) + " row " + to_hex(hash) + ": the " + blob +
                                   " does not hash to it");
            }
        };
    };
    // Every preimage and every code, read by the tries' check or not, hashes to its key.
    MPT_RETURN_IF_ERROR(store.check_preimages(bad_row(named, "preimages", "preimage")));
    MPT_RETURN_IF_ERROR(store.check_codes(bad_row(named_codes, "codes", "code")));
    MPT_TRY(const auto stray, store.rows_without_trie());
    for (const auto& [id, rows] : stray) {
        problems.push_back("rows of trie id " + std::to_string(id) +
                           ", which is not in the tries table: " + std::to_string(rows));
    }
    return {};
}

// A check that found problems: the file is damaged, as for any command that meets damage
// (exit 3), the report above saying where.
int report_damage(const std::string& db, size_t problems) {
    std::fflush(stdout);
    return report(file_error(Errc::storage_damaged, db,
                             count_of(problems, "problem") + ", listed in the report"));
}

// check of an account trie: the whole state (check_state).
int run_check_state(const CheckOptions& o, OpenTrie& t) {
    ProgressLine progress("check", o.db);
    progress.count({&t.store->rows_read()}, "rows read");
    auto r = check_state(*t.store, t.info);
    if (!r) return report(r.error(), o.db);
    progress.phase(o.db + ": preimages");
    if (auto s = add_file_problems(*t.store, r->problems, r->bad_preimages, r->bad_codes); !s) {
        return report(s.error());
    }
    progress.stop();
    const bool clean = r->problems.empty();
    if (o.json) {
        const nlohmann::ordered_json j = {{"ok", clean},
                                          {"trie", t.info.name},
                                          {"root", to_hex(t.info.root)},
                                          {"state", true},
                                          {"accounts", r->accounts},
                                          {"storageTries", r->storage_tries},
                                          {"slots", r->slots},
                                          {"rows", r->rows},
                                          {"preimages", r->preimages_read},
                                          {"missingPreimages", r->missing_preimages},
                                          {"storageNotHeld", r->storage_not_held},
                                          {"codes", r->codes_read},
                                          {"codesNotHeld", r->codes_not_held},
                                          {"problems", r->problems}};
        fmt::print("{}\n", j.dump());
    } else {
        for (const std::string& p : r->problems) fmt::print("{}\n", printable(p));
        fmt::print("{}: state, {}, {}, {}, {}, {}\n", clean ? "ok" : "bad",
                   count_of(r->accounts, "account"), count_of(r->storage_tries, "storage trie"),
                   count_of(r->slots, "slot"), count_of(r->rows, "row"),
                   count_of(r->problems.size(), "problem"));
        if (r->missing_preimages != 0 || r->storage_not_held != 0) {
            fmt::print(
                "note: {} without a preimage, {} whose storage trie the file does not "
                "hold\n",
                count_of(r->missing_preimages, "key"), count_of(r->storage_not_held, "account"));
        }
        if (r->codes_not_held != 0) {
            fmt::print("note: {} whose code the file does not hold\n",
                       count_of(r->codes_not_held, "account"));
        }
    }
    return clean ? kOk : report_damage(o.db, r->problems.size());
}

int run_check(const CheckOptions& o) {
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    if (t->info.kind == TrieKind::state) return run_check_state(o, *t);
    ProgressLine progress("check", o.db);
    progress.count({&t->store->rows_read()}, "rows read");
    auto r = check_trie(*t->store, t->info);
    if (!r) return report(r.error(), o.db);
    // A storage trie of a state file is its account's: the account names it with its root.
    auto owner = check_storage_owner(*t->store, t->info);
    if (!owner) return report(owner.error(), o.db);
    if (*owner) r->problems.push_back(**owner);
    progress.phase(o.db + ": preimages");
    if (auto s = add_file_problems(*t->store, r->problems); !s) return report(s.error());
    progress.stop();
    const bool clean = r->problems.empty();
    if (o.json) {
        const nlohmann::ordered_json j = {
            {"ok", clean},     {"trie", t->info.name},      {"root", to_hex(t->info.root)},
            {"rows", r->rows}, {"reachable", r->reachable}, {"problems", r->problems}};
        fmt::print("{}\n", j.dump());
    } else {
        for (const std::string& p : r->problems) fmt::print("{}\n", printable(p));
        fmt::print("{}: {}, {} reachable, {}\n", clean ? "ok" : "bad", count_of(r->rows, "row"),
                   r->reachable, count_of(r->problems.size(), "problem"));
    }
    return clean ? kOk : report_damage(o.db, r->problems.size());
}

nlohmann::ordered_json count_json(const TrieStats::Count& c) {
    return {{"nodes", c.nodes}, {"bytes", c.bytes}};
}

int run_stats(const CheckOptions& o) {
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    ProgressLine progress("stats", o.db);
    progress.count({&t->store->rows_read()}, "rows read");
    auto s = trie_stats(*t->store, t->info);
    if (!s) return report(s.error(), o.db);
    auto size = t->store->file_size();
    if (!size) return report(size.error());
    progress.stop();
    if (o.json) {
        // Rows by depth, as the text prints them: the depth, its rows and their bytes.
        nlohmann::ordered_json depth = nlohmann::ordered_json::array();
        for (size_t d = 0; d < s->by_depth.size(); ++d) {
            depth.push_back(
                {{"depth", d}, {"rows", s->by_depth[d].nodes}, {"bytes", s->by_depth[d].bytes}});
        }
        const nlohmann::ordered_json j = {{"trie", t->info.name},
                                          {"root", to_hex(t->info.root)},
                                          {"kind", trie_kind_name(t->info.kind)},
                                          {"secure", t->info.hashed_keys()},
                                          {"pairs", s->pairs},
                                          {"rows", s->rows},
                                          {"rowBytes", s->row_bytes},
                                          {"fileBytes", *size},
                                          {"leaf", count_json(s->leaf)},
                                          {"extension", count_json(s->extension)},
                                          {"branch", count_json(s->branch)},
                                          {"embedded", count_json(s->embedded)},
                                          {"rowsByDepth", depth}};
        fmt::print("{}\n", j.dump());
        return kOk;
    }
    fmt::print("trie {} ({}), root {}\n", t->info.name, trie_kind_name(t->info.kind),
               to_hex(t->info.root));
    fmt::print("pairs {}, rows {}, row bytes {}, file bytes {}\n", s->pairs, s->rows, s->row_bytes,
               *size);
    fmt::print("{:<10} {:>10} {:>12}\n", "type", "nodes", "bytes");
    fmt::print("{:<10} {:>10} {:>12}\n", "leaf", s->leaf.nodes, s->leaf.bytes);
    fmt::print("{:<10} {:>10} {:>12}\n", "extension", s->extension.nodes, s->extension.bytes);
    fmt::print("{:<10} {:>10} {:>12}\n", "branch", s->branch.nodes, s->branch.bytes);
    fmt::print("{:<10} {:>10} {:>12}\n", "embedded", s->embedded.nodes, s->embedded.bytes);
    fmt::print("{:<10} {:>10} {:>12}\n", "depth", "rows", "bytes");
    for (size_t d = 0; d < s->by_depth.size(); ++d) {
        if (s->by_depth[d].nodes == 0) continue;
        fmt::print("{:<10} {:>10} {:>12}\n", d, s->by_depth[d].nodes, s->by_depth[d].bytes);
    }
    return kOk;
}

void add_common(CLI::App* sub, CheckOptions& o) {
    sub->add_option("db", o.db, "Trie file")->required();
    sub->add_option("--trie", o.trie, "Trie name in the file")->capture_default_str();
    sub->add_flag("--json", o.json, "Print one JSON document");
}

}  // namespace

void register_check(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<CheckOptions>();
    add_common(sub, *o);
    sub->footer(
        "Exit 0 when clean; 1 with one line per problem, naming the path. An account trie (a\n"
        "state file's main) is checked as the whole state: every storage trie, each account's\n"
        "storageRoot against its trie, and the preimages. The file's own problems (a file cut\n"
        "short, rows of no trie, preimages that do not hash to their keys) come with any trie.");
    sub->final_callback([o, &runner] { runner = [o] { return run_check(*o); }; });
}

void register_stats(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<CheckOptions>();
    add_common(sub, *o);
    sub->final_callback([o, &runner] { runner = [o] { return run_stats(*o); }; });
}

}  // namespace mpt::cli
