// mpt diff: keys added, removed and changed from A to B; or the rows that move A's store
// to B's.
#include <fmt/core.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mpt/core/hex.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/stream_limit.hpp>
#include <mpt/proof/diff.hpp>
#include <mpt/store/node_store.hpp>
#include <mpt/store/sqlite_store.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "diff_state.hpp"
#include "progress.hpp"

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
    bool trie_a_given = false;  // --trie appeared
    bool trie_b_given = false;  // --trie-b appeared
    bool verify = false;
};

// One side of the diff: a store holding its trie. A k/v file is built into memory.
struct Side {
    std::unique_ptr<NodeStore> store;
    TrieInfo info;
};

// What building a key/value side in memory takes for each byte of its text: the pairs, the
// trie's nodes, their rows (measured: 7.0 for 1M pairs of 32-byte keys and values, 140 MB of
// text, 987 MB resident).
constexpr uint64_t kKvSideBytesPerTextByte = 8;

// The most text a key/value side may have, when kv_sides of them are built in memory: their
// share of the memory this process can still take (0: no limit known).
uint64_t kv_side_limit(unsigned kv_sides) {
    const size_t available = available_memory();
    if (available == SIZE_MAX) return 0;
    return std::max<uint64_t>(available / (kKvSideBytesPerTextByte * kv_sides), 1);
}

Error kv_side_too_large(const std::string& path, uint64_t limit) {
    return file_error(Errc::input_too_large, path,
                      "more than " + std::to_string(limit) +
                          " bytes of key/value input, which diff cannot build into a trie in "
                          "the memory available; build it into a trie file (mpt build) and "
                          "diff that");
}

Result<Side> load_kv(const std::string& path, bool secure, uint64_t limit) {
    // load_input refuses a regular file past limit by its size, before reading it, and a
    // stream as soon as it passes the limit.
    auto loaded = load_input(path, limit);
    if (!loaded) {
        if (loaded.error().code == Errc::input_too_large && limit != 0) {
            return kv_side_too_large(path, limit);
        }
        return std::move(loaded).error();
    }
    const InputText text = std::move(*loaded);
    auto input = parse_kv(text.view());
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
Result<Side> load_side(const std::string& path, const std::string& trie, const DiffOptions& o,
                       uint64_t kv_limit) {
    if (path == "-" || !looks_like_sqlite(path)) return load_kv(path, o.secure, kv_limit);
    Side side;
    MPT_TRY(auto store, open_trie_file(path, SqliteNodeStore::Mode::read_only));
    auto info = store->find_trie(trie);
    if (!info) return info.error();
    if (!*info) {
        Error e = no_such_trie_error(*store, trie);
        e.file = path;
        return e;
    }
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

// Output in blocks through fmt::print, which throws on a failed write (main reports it and
// exits 3): the first bytes go out long before a large diff ends, and memory stays one block.
class Output {
public:
    std::string& text() { return text_; }
    void flush_if_full() {
        if (text_.size() >= kBlock) flush();
    }
    void flush() {
        fmt::print("{}", text_);
        text_.clear();
    }

private:
    static constexpr size_t kBlock = size_t{1} << 16;
    std::string text_;
};

// A storage error of the walk names its side ("A: trie main"); the line names that side's file
// too, as the other commands' storage errors do.
int report_walk_error(const Error& e, const DiffOptions& o) {
    if (e.trie.starts_with("A: ")) return report(e, o.a);
    if (e.trie.starts_with("B: ")) return report(e, o.b);
    return report(e);
}

DiffReads reads_of(const DiffOptions& o) {
    return o.verify ? DiffReads::all : DiffReads::differing;
}

int print_nodes(const DiffSide& a, const DiffSide& b, const DiffOptions& o) {
    auto nd = diff_nodes(a, b, reads_of(o));
    if (!nd) return report_walk_error(nd.error(), o);
    Output out;
    std::string& t = out.text();
    if (o.json) {
        // {"write":[...],"delete":[...]}, as nlohmann::json::dump() wrote it.
        const auto list = [&](const char* name, const std::vector<bytes>& paths) {
            t += '"';
            t += name;
            t += "\":[";
            for (size_t i = 0; i < paths.size(); ++i) {
                if (i > 0) t += ',';
                t += '"' + compact_hex(paths[i]) + '"';
                out.flush_if_full();
            }
            t += ']';
        };
        t += '{';
        list("write", nd->writes);
        t += ',';
        list("delete", nd->deletes);
        t += "}\n";
    } else {
        for (const bytes& p : nd->writes) {
            t += "write " + compact_hex(p) + '\n';
            out.flush_if_full();
        }
        for (const bytes& p : nd->deletes) {
            t += "delete " + compact_hex(p) + '\n';
            out.flush_if_full();
        }
    }
    out.flush();
    if (o.stats) print_nodes_read(nd->stats.nodes_read_a, nd->stats.nodes_read_b);
    return nd->writes.empty() && nd->deletes.empty() ? kOk : kNegative;
}

// --json: {"added":{k:v,...},"removed":{k:v,...},"changed":{k:[old,new],...}}, the bytes
// nlohmann::json::dump() wrote. The walk gives keys in key order, the kinds mixed; rather
// than hold the differences, each group is a walk of its own (written as found), and a group
// the first walk saw nothing of takes none. Only the first walk reads with --verify: the
// others read the same snapshot again.
Result<size_t> print_keys_json(const DiffSide& a, const DiffSide& b, const DiffOptions& o,
                               DiffStats& stats) {
    using Kind = DiffEntry::Kind;
    static constexpr std::pair<Kind, const char*> kGroups[] = {
        {Kind::added, "added"}, {Kind::removed, "removed"}, {Kind::changed, "changed"}};
    static_assert(static_cast<size_t>(Kind::added) == 0 && static_cast<size_t>(Kind::changed) == 2);
    size_t counts[3] = {0, 0, 0};
    Output out;
    std::string& t = out.text();
    t += '{';
    for (size_t g = 0; g < 3; ++g) {
        const Kind kind = kGroups[g].first;
        if (g > 0) t += ',';
        t += '"';
        t += kGroups[g].second;
        t += "\":{";
        if (g == 0 || counts[g] > 0) {
            bool first = true;
            const auto write = [&](const DiffEntry& e) {
                if (g == 0) ++counts[static_cast<size_t>(e.kind)];
                if (e.kind != kind) return true;
                if (!first) t += ',';
                first = false;
                t += '"' + to_hex(e.key) + "\":";
                switch (kind) {
                    case Kind::added:
                        t += '"' + to_hex(e.new_value) + '"';
                        break;
                    case Kind::removed:
                        t += '"' + to_hex(e.old_value) + '"';
                        break;
                    case Kind::changed:
                        t += "[\"" + to_hex(e.old_value) + "\",\"" + to_hex(e.new_value) + "\"]";
                        break;
                }
                out.flush_if_full();
                return true;
            };
            auto r = diff_tries(a, b, write, g == 0 ? reads_of(o) : DiffReads::differing);
            if (!r) {
                out.flush();  // what was found before the error; the error line says why
                return r.error();
            }
            if (g == 0) stats = *r;
        }
        t += '}';
    }
    t += "}\n";
    out.flush();
    return counts[0] + counts[1] + counts[2];
}

int print_keys(const DiffSide& a, const DiffSide& b, const DiffOptions& o) {
    DiffStats stats;
    size_t count = 0;
    if (o.json) {
        auto n = print_keys_json(a, b, o, stats);
        if (!n) return report_walk_error(n.error(), o);
        count = *n;
    } else {
        Output out;
        std::string& t = out.text();
        auto r = diff_tries(
            a, b,
            [&](const DiffEntry& e) {
                ++count;
                switch (e.kind) {
                    case DiffEntry::Kind::added:
                        t += "+ " + to_hex(e.key) + " " + to_hex(e.new_value);
                        break;
                    case DiffEntry::Kind::removed:
                        t += "- " + to_hex(e.key) + " " + to_hex(e.old_value);
                        break;
                    case DiffEntry::Kind::changed:
                        t += "~ " + to_hex(e.key) + " " + to_hex(e.old_value) + " " +
                             to_hex(e.new_value);
                        break;
                }
                t += '\n';
                out.flush_if_full();
                return true;
            },
            reads_of(o));
        out.flush();
        if (!r) return report_walk_error(r.error(), o);
        stats = *r;
    }
    if (o.stats) print_nodes_read(stats.nodes_read_a, stats.nodes_read_b);
    return count == 0 ? kOk : kNegative;
}

int run_diff(const DiffOptions& o) {
    if (o.a == "-" && o.b == "-") return report_usage("diff: A and B cannot both be stdin");
    if (o.state || is_state_file(o.a) || is_state_file(o.b) || file_looks_like_state(o.a) ||
        file_looks_like_state(o.b)) {
        if (o.nodes || o.secure)
            return report_usage("diff: --nodes and --secure are for tries, not states");
        if (o.trie_a != "main" || o.trie_b != "main") {
            return report_usage("diff: states are compared from their account trie main");
        }
        return run_state_diff({o.a, o.b, o.json, o.stats, o.verify});
    }
    // A trie name belongs to a trie file: on key/value input it is a mistake, not a no-op.
    const auto kv = [](const std::string& path) {
        struct stat st {};
        return path == "-" || (::stat(path.c_str(), &st) == 0 && !looks_like_sqlite(path));
    };
    if (o.trie_a_given && kv(o.a)) {
        return report_usage("diff: --trie applies to a trie file A, not to key/value input");
    }
    if (o.trie_b_given && kv(o.b)) {
        return report_usage("diff: --trie-b applies to a trie file B, not to key/value input");
    }
    const unsigned kv_sides = (kv(o.a) ? 1 : 0) + (kv(o.b) ? 1 : 0);
    const uint64_t kv_limit = kv_side_limit(std::max(kv_sides, 1U));
    ProgressLine progress("diff", o.a + ": reading", /*streamed=*/true);
    auto a = load_side(o.a, o.trie_a, o, kv_limit);
    if (!a) return report(a.error());
    progress.phase(o.b + ": reading");
    auto b = load_side(o.b, o.trie_b, o, kv_limit);
    if (!b) return report(b.error());
    progress.phase(o.a + " and " + o.b);
    progress.count({&a->store->rows_read(), &b->store->rows_read()}, "rows read");
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
    progress.stop();
    b->store->end_read();
    a->store->end_read();
    return rc;
}

}  // namespace

void register_diff(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<DiffOptions>();
    sub->add_option("a", o->a,
                    "The old side: a trie file, or a key/value file, JSON or a text dump (- for "
                    "stdin)")
        ->required();
    sub->add_option("b", o->b,
                    "The new side: a trie file, or a key/value file, JSON or a text dump (- for "
                    "stdin)")
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
    sub->add_flag("--verify", o->verify,
                  "Read and check every node of both tries, equal subtrees too, so that damage "
                  "anywhere is a storage error (exit 3)");
    sub->footer(
        "Output, in key order: `+ KEY VALUE` added, `- KEY VALUE` removed, `~ KEY OLD NEW`\n"
        "changed (keys are trie keys, hashed with --secure). --json: {\"added\": {k: v},\n"
        "\"removed\": {k: v}, \"changed\": {k: [old, new]}}. --nodes: `write PATH` and\n"
        "`delete PATH` lines, PATH compact (hex-prefix) encoded as get-node takes it; --json\n"
        "{\"write\": [...], \"delete\": [...]}. Equal subtrees are never entered: a hash both\n"
        "sides hold is trusted, so a damaged node under it goes unseen (a file against its own\n"
        "copy is identical, however damaged); --verify reads and checks every node of both\n"
        "(of states: the account trie and every storage trie, first).\n"
        "States (--state, or a state file on either side): accounts `+ ADDR nonce N, balance\n"
        "B, storageRoot R, codeHash C`, `- ADDR ...`, `~ ADDR FIELD OLD -> NEW, ...`, then the\n"
        "account's slots `+ ADDR slot SLOT VALUE`, `- ...`, `~ ADDR slot SLOT OLD -> NEW`, in\n"
        "trie order; --json: one object a line. A side that gives an account's storage root\n"
        "without its slots (a dump without storage): `? ADDR slots not compared: ...` instead\n"
        "of its slots. --stats counts the nodes read on each side.\n"
        "Exit 0 identical, 1 different, 2 bad input, 3 storage error.");
    sub->final_callback([o, sub, &runner] {
        o->trie_a_given = sub->get_option("--trie")->count() > 0;
        o->trie_b_given = sub->get_option("--trie-b")->count() > 0;
        runner = [o] { return run_diff(*o); };
    });
}

}  // namespace mpt::cli
