// mpt copy: a trie of a trie file copied under a new name, in the same file.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/ops/trie_file.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct CopyOptions {
    std::string db;
    std::string from = "main";
    std::string to;
    bool replace = false;
    bool json = false;
};

int run_copy(const CopyOptions& o) {
    auto store = open_trie_file(o.db, SqliteNodeStore::Mode::read_write);
    if (!store) return report(store.error());
    ProgressLine progress("copy", o.db + ": copying " + o.from);
    auto r = copy_trie(**store, o.from, o.to, o.replace);
    progress.stop();
    if (!r) return report(r.error(), o.db);
    if (o.json) {
        const nlohmann::ordered_json j = {{"from", canonical_trie_name(o.from)},
                                          {"to", r->trie.name},
                                          {"kind", trie_kind_name(r->trie.kind)},
                                          {"root", to_hex(r->trie.root)},
                                          {"rows", r->rows},
                                          {"replaced", r->replaced}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("{}\n", to_hex(r->trie.root));
    }
    return kOk;
}

}  // namespace

void register_copy(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<CopyOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("--trie", o->from, "The trie to copy")->capture_default_str();
    sub->add_option("--to", o->to, "Name of the copy")->required();
    sub->add_flag("--replace", o->replace, "Drop a trie of that name first instead of refusing");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->footer(
        "The copy has the kind, root and rows of the trie, and is independent of it: an\n"
        "update of one leaves the other as it was. One write. Prints the copy's root.\n"
        "--json: {\"from\", \"to\", \"kind\", \"root\", \"rows\", \"replaced\"}.");
    sub->final_callback([o, &runner] { runner = [o] { return run_copy(*o); }; });
}

}  // namespace mpt::cli
