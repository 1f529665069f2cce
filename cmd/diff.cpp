// mpt diff: keys added, removed and changed from A to B; or the rows that move A's store
// to B's.
#include <fmt/core.h>

#include <memory>
#include <mpt/core/hex.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/proof/diff.hpp>
#include <mpt/store/node_store.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "diff_state.hpp"

namespace mpt::cli {
namespace {

struct DiffOptions {
    std::string a, b;
    std::string trie_a = "main", trie_b = "main";
    bool secure = false;
    bool json = false;
    bool stats = false;
    bool nodes = false;
    bool state = false;
};

// One side of the diff: a store holding its trie. A k/v file is built into memory.
struct Side {
    std::unique_ptr<NodeStore> store;
    TrieInfo info;
};

Result<Side> load_kv(const std::string& path, bool secure) {
    MPT_TRY(std::string text, read_file(path));
    auto input = parse_kv(text);
    if (!input) return Error{input.error().code, path + ": " + input.error().detail};
    const SortedPairs pairs = sorted_final_pairs(*input, secure);
    Trie trie;
    for (const KvPair& p : pairs.pairs) MPT_RETURN_IF_ERROR(trie.put(p.key, p.value));
    MPT_TRY(CommitBatch batch, trie.commit());
    Side side;
    side.store = std::make_unique<MemoryNodeStore>();
    MPT_RETURN_IF_ERROR(side.store->begin_write());
    MPT_TRY(TrieId id,
            side.store->create_trie("main", secure ? TrieKind::secure : TrieKind::plain));
    MPT_RETURN_IF_ERROR(apply_commit(*side.store, id, batch));
    MPT_RETURN_IF_ERROR(side.store->commit_write());
    MPT_TRY(std::optional<TrieInfo> info, side.store->find_trie("main"));
    if (!info) return Error{Errc::internal, "built trie not found"};
    side.info = *info;
    return side;
}

// A trie file opens as its store; anything else is read as key/value input.
Result<Side> load_side(const std::string& path, const std::string& trie, const DiffOptions& o) {
    if (path == "-" || !looks_like_sqlite(path)) return load_kv(path, o.secure);
    Side side;
    MPT_TRY(auto store, SqliteNodeStore::open(path, SqliteNodeStore::Mode::read_only));
    auto info = store->find_trie(trie);
    if (!info) return info.error();
    if (!*info) return Error{Errc::no_such_trie, path + ": no trie named " + trie};
    side.info = **info;
    side.store = std::move(store);
    return side;
}

// A row path (one nibble per byte) as its compact encoding, the form get-node takes.
std::string compact_hex(const bytes& path) {
    bytes c;
    append_compact(c, path, false);
    return to_hex(c);
}

int print_nodes(const DiffSide& a, const DiffSide& b, const DiffOptions& o) {
    auto nd = diff_nodes(a, b);
    if (!nd) return report(nd.error());
    if (o.json) {
        nlohmann::ordered_json j = {{"write", nlohmann::ordered_json::array()},
                                    {"delete", nlohmann::ordered_json::array()}};
        for (const bytes& p : nd->writes) j["write"].push_back(compact_hex(p));
        for (const bytes& p : nd->deletes) j["delete"].push_back(compact_hex(p));
        fmt::print("{}\n", j.dump());
    } else {
        for (const bytes& p : nd->writes) fmt::print("write {}\n", compact_hex(p));
        for (const bytes& p : nd->deletes) fmt::print("delete {}\n", compact_hex(p));
    }
    if (o.stats) {
        eprint("nodes read: A {}, B {}\n", nd->stats.nodes_read_a, nd->stats.nodes_read_b);
    }
    return nd->writes.empty() && nd->deletes.empty() ? kOk : kNegative;
}

int print_keys(const DiffSide& a, const DiffSide& b, const DiffOptions& o) {
    nlohmann::ordered_json j = {{"added", nlohmann::ordered_json::object()},
                                {"removed", nlohmann::ordered_json::object()},
                                {"changed", nlohmann::ordered_json::object()}};
    size_t count = 0;
    std::string line;
    auto r = diff_tries(a, b, [&](const DiffEntry& e) {
        ++count;
        const std::string key = to_hex(e.key);
        if (o.json) {
            switch (e.kind) {
                case DiffEntry::Kind::added:
                    j["added"][key] = to_hex(e.new_value);
                    break;
                case DiffEntry::Kind::removed:
                    j["removed"][key] = to_hex(e.old_value);
                    break;
                case DiffEntry::Kind::changed:
                    j["changed"][key] = {to_hex(e.old_value), to_hex(e.new_value)};
                    break;
            }
            return true;
        }
        switch (e.kind) {
            case DiffEntry::Kind::added:
                line = "+ " + key + " " + to_hex(e.new_value);
                break;
            case DiffEntry::Kind::removed:
                line = "- " + key + " " + to_hex(e.old_value);
                break;
            case DiffEntry::Kind::changed:
                line = "~ " + key + " " + to_hex(e.old_value) + " " + to_hex(e.new_value);
                break;
        }
        fmt::print("{}\n", line);
        return true;
    });
    if (!r) return report(r.error());
    if (o.json) fmt::print("{}\n", j.dump());
    if (o.stats) eprint("nodes read: A {}, B {}\n", r->nodes_read_a, r->nodes_read_b);
    return count == 0 ? kOk : kNegative;
}

int run_diff(const DiffOptions& o) {
    if (o.a == "-" && o.b == "-") return report_usage("diff: A and B cannot both be stdin");
    if (o.state || is_state_file(o.a) || is_state_file(o.b)) {
        if (o.nodes || o.secure)
            return report_usage("diff: --nodes and --secure are for tries, not states");
        if (o.trie_a != "main" || o.trie_b != "main") {
            return report_usage("diff: states are compared from their account trie main");
        }
        return run_state_diff({o.a, o.b, o.json, o.stats});
    }
    auto a = load_side(o.a, o.trie_a, o);
    if (!a) return report(a.error());
    auto b = load_side(o.b, o.trie_b, o);
    if (!b) return report(b.error());
    if (a->info.hashed_keys() != b->info.hashed_keys()) {
        return report(Error{Errc::trie_kind_mismatch, o.a + " and " + o.b});
    }
    if (auto s = a->store->begin_read(); !s) return report(s.error(), o.a);
    if (auto s = b->store->begin_read(); !s) {
        a->store->end_read();
        return report(s.error(), o.b);
    }
    TrieReader ra(*a->store, a->info);
    TrieReader rb(*b->store, b->info);
    const DiffSide sa{&ra, a->info.root};
    const DiffSide sb{&rb, b->info.root};
    const int rc = o.nodes ? print_nodes(sa, sb, o) : print_keys(sa, sb, o);
    b->store->end_read();
    a->store->end_read();
    return rc;
}

}  // namespace

void register_diff(CLI::App& app, Runner& runner) {
    auto o = std::make_shared<DiffOptions>();
    CLI::App* sub = app.add_subcommand("diff", "Keys added, removed and changed from A to B");
    sub->add_option("a", o->a, "The old side: a trie file, or a key/value JSON file (- for stdin)")
        ->required();
    sub->add_option("b", o->b, "The new side: a trie file, or a key/value JSON file (- for stdin)")
        ->required();
    sub->add_option("--trie", o->trie_a, "Trie of A when A is a trie file")->capture_default_str();
    sub->add_option("--trie-b", o->trie_b, "Trie of B when B is a trie file")
        ->capture_default_str();
    sub->add_flag("--secure", o->secure, "Hash every key of key/value input with keccak256");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->add_flag("--stats", o->stats, "Print the nodes read on each side to stderr");
    sub->add_flag("--state", o->state,
                  "A and B are states: state documents (genesis, alloc, geth or reth dump) or "
                  "state files; implied when either is a state file");
    sub->add_flag("--nodes", o->nodes,
                  "List the row paths to write and to delete to move A's store to B's");
    sub->footer(
        "Output, in key order: `+ KEY VALUE` added, `- KEY VALUE` removed, `~ KEY OLD NEW`\n"
        "changed (keys are trie keys, hashed with --secure). --json: {\"added\": {k: v},\n"
        "\"removed\": {k: v}, \"changed\": {k: [old, new]}}. --nodes: `write PATH` and\n"
        "`delete PATH` lines, PATH compact (hex-prefix) encoded as get-node takes it; --json\n"
        "{\"write\": [...], \"delete\": [...]}. Equal subtrees are never entered.\n"
        "States (--state, or a state file on either side): accounts `+ ADDR nonce N, balance\n"
        "B, storageRoot R, codeHash C`, `- ADDR ...`, `~ ADDR FIELD OLD -> NEW, ...`, then the\n"
        "account's slots `+ ADDR slot SLOT VALUE`, `- ...`, `~ ADDR slot SLOT OLD -> NEW`, in\n"
        "trie order; --json: one object a line. A side that gives an account's storage root\n"
        "without its slots (a dump without storage): `? ADDR slots not compared: ...` instead\n"
        "of its slots. --stats counts the nodes read on each side.\n"
        "Exit 0 identical, 1 different, 2 bad input, 3 storage error.");
    sub->final_callback([o, &runner] { runner = [o] { return run_diff(*o); }; });
}

}  // namespace mpt::cli
