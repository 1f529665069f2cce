// mpt vacuum: compact a trie file.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct VacuumOptions {
    std::string db;
    bool json = false;
};

int run_vacuum(const VacuumOptions& o) {
    auto store = open_trie_file(o.db, SqliteNodeStore::Mode::read_write);
    if (!store) return report(store.error());
    auto before = (*store)->bytes_with_log();
    if (!before) return report(before.error());
    ProgressLine progress("vacuum", o.db + ": compacting");
    auto folded = (*store)->vacuum();
    progress.stop();
    if (!folded) return report(folded.error());
    auto after = (*store)->bytes_with_log();
    if (!after) return report(after.error());
    if (o.json) {
        const nlohmann::ordered_json j = {
            {"bytesBefore", *before}, {"bytesAfter", *after}, {"logFolded", *folded}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("{} bytes before, {} after\n", *before, *after);
        if (!*folded) {
            fmt::print("a reader still holds the log: it is folded into the file later\n");
        }
    }
    return kOk;
}

}  // namespace

void register_vacuum(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<VacuumOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->footer(
        "Rewrites the file without its free pages in one transaction through the write-ahead\n"
        "log: a crash leaves it as it was or compacted, never between. Bytes count the file\n"
        "and its log. --json: {\"bytesBefore\", \"bytesAfter\", \"logFolded\"}.");
    sub->final_callback([o, &runner] { runner = [o] { return run_vacuum(*o); }; });
}

}  // namespace mpt::cli
