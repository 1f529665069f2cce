// mpt tree: a stored trie's node structure as an indented text tree, or as Graphviz.
#include "commands.hpp"
#include "common.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/trie/node_tree.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace mpt::cli {
namespace {

struct TreeCmdOptions {
    std::string db;
    std::string trie = "main";
    std::string from;
    size_t depth = 4;
    size_t limit = 1000;
    bool dot = false;
    bool json = false;
};

constexpr size_t kValueShown = 32;  // value bytes printed; longer ones are cut

std::string_view kind_word(NodeView::Kind k) {
    switch (k) {
        case NodeView::Kind::leaf:
            return "leaf";
        case NodeView::Kind::extension:
            return "extension";
        case NodeView::Kind::branch:
            return "branch";
    }
    return "node";
}

std::string nibble_string(NibbleView v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += kDigits[v[i]];
    return s;
}

std::string value_string(bytes_view v) {
    if (v.size() <= kValueShown) return to_hex(v);
    return to_hex(v.subspan(0, kValueShown)) + "... (" + std::to_string(v.size()) + " bytes)";
}

// The words that describe n, for a line of text (sep " ") or a Graphviz label (sep "\n").
std::string describe(const TreeNode& n, const char* sep) {
    std::string s(kind_word(n.kind));
    s += sep;
    s += "path " + path_string(n.position);
    if (n.kind != NodeView::Kind::branch) {
        s += std::string(sep) + "key " + (n.key.empty() ? "(none)" : nibble_string(n.key));
    }
    s += sep;
    s += n.embedded ? std::string("embedded") : "hash " + to_hex(n.hash);
    s += std::string(sep) + "rlp " + std::to_string(n.rlp.size());
    if (!n.value.empty()) s += std::string(sep) + "value " + value_string(n.value);
    return s;
}

// One node for --json: its place, its kind and its fields, the value whole.
nlohmann::ordered_json node_json(const TreeNode& n) {
    nlohmann::ordered_json j = {
        {"depth", n.depth},
        {"slot", n.slot >= 0 ? nlohmann::ordered_json(n.slot) : nlohmann::ordered_json()},
        {"kind", kind_word(n.kind)},
        {"path", n.position.empty() ? std::string() : path_string(n.position)},
        {"key", n.kind == NodeView::Kind::branch ? nlohmann::ordered_json()
                                                 : nlohmann::ordered_json(nibble_string(n.key))},
        {"hash", n.embedded ? nlohmann::ordered_json() : nlohmann::ordered_json(to_hex(n.hash))},
        {"rlpBytes", n.rlp.size()},
        {"value",
         n.value.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(to_hex(n.value))},
        {"children", n.children},
        {"cut", n.cut}};
    return j;
}

// The note of what was left out, or empty.
std::string cut_note(const TreeSummary& s, const TreeCmdOptions& o) {
    if (s.cut_subtrees == 0) return {};
    std::string why;
    if (s.depth_cut) why = "below --depth " + std::to_string(o.depth);
    if (s.nodes_cut) {
        why += (why.empty() ? "" : " and ");
        why += "past --limit " + std::to_string(o.limit) + " nodes";
    }
    return std::to_string(s.cut_subtrees) + " subtrees not shown: " + why;
}

Result<bytes> parse_nibble_path(const std::string& text) {
    bytes out;
    for (const char c : text) {
        const int v = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (v < 0) {
            return Error{Errc::bad_input,
                         "--from " + text + ": a nibble path is hex digits, one per nibble"};
        }
        out.push_back(static_cast<uint8_t>(v));
    }
    return out;
}

int run_tree(const TreeCmdOptions& o) {
    if (o.json && o.dot) return report_usage("tree: give --json or --dot, not both");
    auto from = parse_nibble_path(o.from);
    if (!from) return report_usage("tree: " + from.error().detail);
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    TreeOptions options;
    options.from = std::move(*from);
    options.max_depth = o.depth;
    options.max_nodes = o.limit;

    std::string out;
    // Graphviz: node ids in visit order; the parent of a node at depth d is the last node
    // visited at depth d - 1.
    std::vector<size_t> last_at_depth;
    size_t next_id = 0;
    if (o.dot) {
        out = fmt::format("digraph trie {{\n  label=\"trie {} root {}\";\n", t->info.name,
                          to_hex(t->info.root));
        out += "  node [shape=box, fontname=\"monospace\"];\n";
    }
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    const auto visit = [&](const TreeNode& n) {
        if (o.json) {
            nodes.push_back(node_json(n));
            return;
        }
        if (!o.dot) {
            out.append(2 * n.depth, ' ');
            if (n.slot >= 0) out += fmt::format("[{:x}] ", n.slot);
            out += describe(n, " ");
            if (n.cut != 0) out += fmt::format(" ({} children not shown)", n.cut);
            out += '\n';
            return;
        }
        const size_t id = next_id++;
        out += fmt::format("  n{} [label=\"{}\"];\n", id, describe(n, "\\n"));
        if (n.depth > 0 && n.depth <= last_at_depth.size()) {
            const std::string label = n.slot >= 0 ? fmt::format(" [label=\"{:x}\"]", n.slot) : "";
            out += fmt::format("  n{} -> n{}{};\n", last_at_depth[n.depth - 1], id, label);
        }
        if (n.cut != 0) {
            out += fmt::format(
                "  c{} [label=\"{} not shown\", shape=plaintext];\n  n{} -> c{} [style=dashed];\n",
                id, n.cut, id, id);
        }
        last_at_depth.resize(n.depth + 1);
        last_at_depth[n.depth] = id;
    };
    auto s = walk_tree(*t->reader, t->info.root, options, visit);
    if (!s) return report(s.error(), o.db);
    if (!s->found) {
        // A negative answer, as for an absent key.
        eprint("mpt: {}: no node lies on path {}\n", printable(o.db + ": trie " + t->info.name),
               path_string(options.from));
        return kNegative;
    }
    const std::string note = cut_note(*s, o);
    if (o.json) {
        const nlohmann::ordered_json j = {{"trie", t->info.name},
                                          {"root", to_hex(t->info.root)},
                                          {"nodes", std::move(nodes)},
                                          {"cutSubtrees", s->cut_subtrees}};
        out = j.dump() + "\n";
    } else if (o.dot) {
        if (!note.empty()) out += fmt::format("  cut [label=\"{}\", shape=plaintext];\n", note);
        out += "}\n";
    } else if (t->info.root == kEmptyRoot) {
        out += "empty trie\n";
    } else if (!note.empty()) {
        out += "... " + note + "\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kOk;
}

}  // namespace

void register_tree(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<TreeCmdOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("--trie", o->trie, "Trie name in the file")->capture_default_str();
    sub->add_option("--from", o->from,
                    "Start at the node on this nibble path (hex digits, one per nibble)");
    sub->add_option("--depth", o->depth, "Levels shown below the start node")
        ->capture_default_str()
        ->check(kCount);
    sub->add_option("--limit", o->limit, "Nodes shown at most")
        ->capture_default_str()
        ->check(kCount);
    sub->add_flag("--dot", o->dot, "Write Graphviz (dot) instead of text");
    sub->add_flag(
        "--json", o->json,
        "Print {\"trie\", \"root\", \"nodes\": [{\"depth\", \"slot\", \"kind\", \"path\", "
        "\"key\", \"hash\", \"rlpBytes\", \"value\", \"children\", \"cut\"}], "
        "\"cutSubtrees\"}");
    sub->footer(
        "One line per node, children indented under their parent in key order:\n"
        "  [SLOT] KIND path POSITION [key NIBBLES] (hash 0x...|embedded) rlp BYTES [value 0x...]\n"
        "SLOT is the nibble of the parent branch; POSITION the nibbles from the root, (root)\n"
        "for none; key a leaf's or extension's own nibbles. A node whose RLP is under 32 bytes\n"
        "is embedded in its parent. What the limits leave out is said on a last line.");
    sub->final_callback([o, &runner] { runner = [o] { return run_tree(*o); }; });
}

}  // namespace mpt::cli
