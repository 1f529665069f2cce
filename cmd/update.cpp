// mpt update: a block's changes applied to a state file, in one write.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/ops/state_update.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct UpdateOptions {
    std::string db;
    std::string changes;
    std::optional<std::string> expect_root;
    bool no_preimages = false;
    bool json = false;
};

int run_update(const UpdateOptions& o) {
    StateUpdateOptions u;
    u.preimages = !o.no_preimages;
    if (o.expect_root) {
        u.expect_root = parse_root_flag(*o.expect_root);
        if (!u.expect_root) {
            return report_usage("update: --expect-root: not a 32-byte 0x hex root: " +
                                *o.expect_root);
        }
    }
    auto text = read_file(o.changes);
    if (!text) return report(text.error());
    auto doc = parse_changes_document(*text);
    if (!doc) return report(doc.error(), o.changes);
    auto store = open_trie_file(o.db, SqliteNodeStore::Mode::read_write);
    if (!store) return report(store.error());
    ProgressLine progress("update", o.db);
    auto r = update_state(**store, *doc, u);
    progress.stop();
    if (!r) return report(r.error(), o.db);
    if (!r->refused.empty()) {
        eprint("mpt: update refused: {}; {} is unchanged\n", printable(r->refused),
               printable(o.db));
        return kNegative;
    }
    if (o.json) {
        const nlohmann::ordered_json j = {{"root", to_hex(r->root)},
                                          {"shape", changes_shape_name(doc->shape)},
                                          {"accounts", r->accounts},
                                          {"deleted", r->deleted},
                                          {"slots", r->slots},
                                          {"codes", r->codes},
                                          {"rowsWritten", r->rows_written},
                                          {"rowsDeleted", r->rows_deleted}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("{}\n", to_hex(r->root));
    }
    return kOk;
}

}  // namespace

void register_update(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<UpdateOptions>();
    sub->add_option("db", o->db, "State file (built with mpt build --state)")->required();
    sub->add_option("--changes", o->changes,
                    "Changes document: {address: account or null}, or geth's prestateTracer "
                    "diff (one, or a block's list of them) (- for stdin)")
        ->required();
    sub->add_option("--expect-root", o->expect_root,
                    "Refuse (exit 1, the file unchanged) when the new state root is not this");
    sub->add_flag("--no-preimages", o->no_preimages,
                  "Do not record the preimages of the addresses and slots written");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->footer(
        "Applies the accounts a block changed to the state in DB, the account trie, the\n"
        "storage tries, the preimages and the codes in one write, and prints the new state\n"
        "root. A tracer diff's pre must be what the file holds (else exit 1, unchanged).\n"
        "--json: {\"root\", \"shape\", \"accounts\", \"deleted\", \"slots\", \"codes\",\n"
        "\"rowsWritten\", \"rowsDeleted\"}.");
    sub->final_callback([o, &runner] { runner = [o] { return run_update(*o); }; });
}

}  // namespace mpt::cli
