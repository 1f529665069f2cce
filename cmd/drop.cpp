// mpt drop: remove one trie from a trie file.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

#include <mpt/ops/trie_file.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct DropOptions {
    std::string db;
    std::string trie;
    bool json = false;
};

int run_drop(const DropOptions& o) {
    auto store = open_trie_file(o.db, SqliteNodeStore::Mode::read_write);
    if (!store) return report(store.error());
    ProgressLine progress("drop", o.db + ": removing " + o.trie);
    auto rows = drop_trie(**store, o.trie);
    progress.stop();
    if (!rows) return report(rows.error(), o.db);
    const std::string name = canonical_trie_name(o.trie);
    if (o.json) {
        const nlohmann::ordered_json j = {{"dropped", name}, {"rows", *rows}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("dropped {}: {} rows\n", name, *rows);
    }
    return kOk;
}

}  // namespace

void register_drop(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<DropOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("--trie", o->trie, "The trie to remove")->required();
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->footer(
        "One write: the trie's row and all its rows go, or nothing does. The file keeps its\n"
        "size; mpt vacuum gives the space back. --json: {\"dropped\", \"rows\"}.");
    sub->final_callback([o, &runner] { runner = [o] { return run_drop(*o); }; });
}

}  // namespace mpt::cli
