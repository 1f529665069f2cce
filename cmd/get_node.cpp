// mpt get-node: trie nodes by path, as a snap server answers GetTrieNodes.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/proof/node_path.hpp>
#include <mpt/store/node_store.hpp>
#include <nlohmann/json.hpp>

#include <mpt/store/sqlite_store.hpp>

#include "commands.hpp"
#include "common.hpp"

namespace mpt::cli {
namespace {

// Ends a read transaction on every return path.
struct ReadScope {
    NodeStore& store;
    ~ReadScope() { store.end_read(); }
};

}  // namespace

void add_get_node_options(CLI::App& sub, GetNodeOptions& o) {
    sub.add_option("db", o.db, "Trie file")->required();
    sub.add_option("pathsets", o.path_sets,
                   "Path sets: comma-separated 0x hex; one element is a compact path in the trie, "
                   "more name a storage trie by account hash, then compact paths in it")
        ->required();
    sub.add_option("--trie", o.trie, "Trie of one-element path sets (default main)");
    sub.add_option("--max-bytes", o.max_bytes,
                   "Stop once the returned nodes exceed this many bytes (the node that crosses "
                   "the limit is still returned)")
        ->check(kCount);
    sub.add_flag("--json", o.json, "Print one JSON document");
    sub.footer(
        "Per path one line: the stored node's RLP; `embedded 0x<rlp>` for a node embedded in\n"
        "its parent (a snap server answers it empty); an empty line when no node is at that\n"
        "position (inside a short node's key, an empty slot, past a leaf). A leaf's full key\n"
        "path also names the leaf; the compact leaf flag is ignored. A storage trie the file\n"
        "does not hold answers empty lines. --json: [{\"account\" (null for a one-element\n"
        "path set), \"path\", \"status\": found|absent|embedded, \"node\"}].");
}

int run_get_node_on(NodeStore& store, const GetNodeOptions& o) {
    // Every path set is checked before anything is read or printed.
    std::vector<PathSet> sets;
    for (size_t i = 0; i < o.path_sets.size(); ++i) {
        auto set = parse_path_set(o.path_sets[i]);
        if (!set) return report(set.error(), "path set " + std::to_string(i + 1));
        sets.push_back(std::move(*set));
    }
    if (auto s = store.begin_read(); !s) return report(s.error(), o.db);
    ReadScope scope{store};

    // The --trie trie is needed only by one-element path sets.
    std::optional<TrieInfo> main_trie;
    for (const PathSet& set : sets) {
        if (set.account) continue;
        auto found = store.find_trie(o.trie);
        if (!found) return report(found.error(), o.db);
        if (!*found) return report(no_such_trie_error(store, o.trie), o.db);
        main_trie = std::move(*found);
        break;
    }

    ResponseLimit limit(o.max_bytes);
    std::string text;
    nlohmann::ordered_json json = nlohmann::ordered_json::array();
    for (const PathSet& set : sets) {
        if (!limit.open()) break;
        TrieInfo info = set.account ? TrieInfo{} : *main_trie;
        if (set.account) {
            auto found = store.find_trie(to_hex(*set.account));
            if (!found) return report(found.error(), o.db);
            if (*found) {
                info = **found;
            } else {
                info = TrieInfo{};  // no such storage trie: the empty trie
            }
        }
        TrieReader reader(store, info);
        for (const bytes& path : set.paths) {
            if (!limit.open()) break;
            auto node = lookup_node(reader, info.root, path);
            if (!node) return report(node.error(), o.db);
            if (node->status == NodeLookup::Status::found) limit.add(node->rlp.size());
            if (o.json) {
                nlohmann::ordered_json entry = {{"account", nullptr},
                                                {"path", to_hex(path)},
                                                {"status", status_name(node->status)},
                                                {"node", nullptr}};
                if (set.account) entry["account"] = to_hex(*set.account);
                if (node->status != NodeLookup::Status::absent) entry["node"] = to_hex(node->rlp);
                json.push_back(std::move(entry));
            } else {
                // Empty when absent, as a snap server answers; an embedded node says so.
                if (node->status == NodeLookup::Status::embedded) text += "embedded ";
                if (node->status != NodeLookup::Status::absent) text += to_hex(node->rlp);
                text += '\n';
            }
        }
    }
    if (o.json) {
        fmt::print("{}\n", json.dump());
    } else {
        fmt::print("{}", text);
    }
    return kOk;
}

}  // namespace mpt::cli

namespace mpt::cli {

void register_get_node(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<GetNodeOptions>();
    add_get_node_options(*sub, *o);
    sub->final_callback([o, &runner] {
        runner = [o] {
            auto store = open_trie_file(o->db, SqliteNodeStore::Mode::read_only);
            if (!store) return report(store.error());
            return run_get_node_on(**store, *o);
        };
    });
}

}  // namespace mpt::cli
