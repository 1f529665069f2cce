#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/store/check.hpp>
#include <mpt/trie/node_source.hpp>

#include <algorithm>
#include <deque>
#include <functional>

namespace mpt {

namespace {

class Checker {
public:
    Checker(NodeStore& store, const TrieInfo& trie, CheckReport& report)
        : reader_(store, trie), trie_(trie), report_(report) {}

    // Visits the hashed node (a row) whose parent holds expected for it at path: judge_row
    // on the row read there. Read errors end the check.
    Status visit_row(bytes& path, const Hash256& expected) {
        MPT_TRY(const bytes_view read, reader_.read(path));
        const bytes row(read.begin(), read.end());  // the next read invalidates the view
        return judge_row(path, {expected.data(), expected.size()}, row, keccak256(row));
    }

    // The row at path of a child its parent references by the hash expected, got being the
    // row's keccak256: what load_verified refuses is a problem of the report (a missing row,
    // a hash mismatch, or through visit_node an undecodable node); a row that matches is
    // visited.
    Status judge_row(bytes& path, bytes_view expected, bytes_view row, const Hash256& got) {
        if (row.empty()) {
            problem("missing row", path);
            return {};
        }
        reached_.push_back(path);
        if (!std::equal(expected.begin(), expected.end(), got.begin())) {
            problem("hash mismatch", path);
            return {};
        }
        return visit_node(path, row);
    }

    Status visit_node(bytes& path, bytes_view rlp) {
        auto v = decode_stored(reader_, path, rlp);
        if (!v) {
            problem("undecodable node (" + v.error().detail + ")", path);
            return {};
        }
        const size_t len = path.size();
        switch (v->kind) {
            case NodeView::Kind::leaf:
                // The kind, checked from the structure: keys of a secure or state trie are
                // 32-byte hashes, so every leaf ends at 64 nibbles.
                if (trie_.hashed_keys() && len + v->path.size() != 64) {
                    problem("leaf ending at " + std::to_string(len + v->path.size()) +
                                " nibbles in a " + std::string(trie_kind_name(trie_.kind)) +
                                " trie (keys are 64)",
                            path);
                }
                break;
            case NodeView::Kind::extension:
                append_unpacked(path, v->path);
                MPT_RETURN_IF_ERROR(visit_child(path, v->child));
                path.resize(len);
                break;
            case NodeView::Kind::branch:
                if (trie_.hashed_keys() && !v->value.empty()) {
                    problem("branch value (a key of " + std::to_string(len) + " nibbles) in a " +
                                std::string(trie_kind_name(trie_.kind)) + " trie",
                            path);
                }
                MPT_RETURN_IF_ERROR(visit_children(path, *v));
                break;
        }
        return {};
    }

    // Visits a branch's children in order, the rows of the hashed ones read first and hashed
    // together (keccak256_batch), then each judged (judge_row) as visit_child would.
    Status visit_children(bytes& path, const NodeView& v) {
        const size_t depth = path.size();
        while (rows_.size() <= depth) rows_.emplace_back();
        bytes& rows = rows_[depth];  // deeper branches use the next ones
        rows.clear();
        size_t begin[16] = {};
        size_t length[16] = {};
        for (uint8_t i = 0; i < 16; ++i) {
            if (v.children[i].size() != 32) continue;
            path.push_back(i);
            auto row = reader_.read(path);
            path.pop_back();
            if (!row) return std::move(row).error();
            begin[i] = rows.size();
            length[i] = row->size();
            rows.insert(rows.end(), row->begin(), row->end());
        }
        bytes_view held[16];  // the hashed children's rows, in order
        size_t n = 0;
        for (size_t i = 0; i < 16; ++i) {
            if (v.children[i].size() == 32) held[n++] = {rows.data() + begin[i], length[i]};
        }
        Hash256 digests[16];
        keccak256_batch({held, n}, {digests, n});
        for (uint8_t i = 0, k = 0; i < 16; ++i) {
            const bytes_view ref = v.children[i];
            if (ref.empty()) continue;
            path.push_back(i);
            if (ref.size() != 32) {
                MPT_RETURN_IF_ERROR(visit_node(path, ref));  // embedded: see visit_child
            } else {
                MPT_RETURN_IF_ERROR(judge_row(path, ref, held[k], digests[k]));
                ++k;
            }
            path.pop_back();
        }
        return {};
    }

    Status visit_child(bytes& path, bytes_view ref) {
        if (ref.size() == 32) {
            Hash256 h;
            std::copy(ref.begin(), ref.end(), h.begin());
            return visit_row(path, h);
        }
        // Embedded: it has no row of its own; a row at its path is an orphan.
        return visit_node(path, ref);
    }

    void problem(const std::string& what, bytes_view path) {
        if (report_.problems.size() < 1000) {
            report_.problems.push_back(what + " at path " + path_string(path));
        }
    }

    std::vector<bytes>& reached() { return reached_; }

private:
    TrieReader reader_;
    const TrieInfo& trie_;
    CheckReport& report_;
    std::vector<bytes> reached_;  // in depth-first pre-order, which is path order
    std::deque<bytes> rows_;      // a branch's children's rows, by the branch's depth
};

}  // namespace

Result<CheckReport> check_trie(NodeStore& store, const TrieInfo& trie) {
    // Opening a file validates no row of the tries table, and a reader only the rows it
    // reads: the check reads, and so validates, every one.
    MPT_RETURN_IF_ERROR(store.list_tries());
    return check_trie_rows(store, trie);
}

Result<CheckReport> check_trie_rows(NodeStore& store, const TrieInfo& trie) {
    CheckReport report;
    Checker c(store, trie, report);
    if (trie.root != kEmptyRoot) {
        bytes path;
        MPT_RETURN_IF_ERROR(c.visit_row(path, trie.root));
    }
    std::vector<bytes>& reached = c.reached();
    report.reachable = reached.size();
    // Pre-order visits children in nibble order after their parent: already path order.
    size_t i = 0;
    MPT_RETURN_IF_ERROR(store.scan(trie.id, {}, [&](bytes_view path, bytes_view) {
        ++report.rows;
        const bool nibbles =
            std::all_of(path.begin(), path.end(), [](uint8_t b) { return b < 16; });
        while (nibbles && i < reached.size() && bytes_less(reached[i], path)) ++i;
        if (nibbles && i < reached.size() && bytes_equal(reached[i], path)) {
            ++i;
        } else if (report.problems.size() < 1000) {
            report.problems.push_back(nibbles ? "orphan row at path " + path_string(path)
                                              : "row at a path that is no nibble path: " +
                                                    to_hex(path));
        }
        return true;
    }));
    // Rows the scan cannot reach: paths of another type than BLOB, or past the nibbles.
    MPT_TRY(const uint64_t all_rows, store.count_rows(trie.id));
    if (all_rows > report.rows) {
        report.problems.push_back("rows at paths that are no nibble paths: " +
                                  std::to_string(all_rows - report.rows));
        report.rows = static_cast<size_t>(all_rows);
    }
    return report;
}

Result<TrieStats> trie_stats(NodeStore& store, const TrieInfo& trie) {
    TrieStats s;
    Status bad;
    const TrieReader reader(store, trie);  // names the trie in errors
    bytes_view row_path;                   // of the row being counted, for the error
    std::function<void(bytes_view, bool)> count = [&](bytes_view rlp, bool embedded) {
        auto v = decode_stored(reader, row_path, rlp);
        if (!v) {
            if (bad.ok()) bad = std::move(v).error();
            return;
        }
        TrieStats::Count& c = embedded                               ? s.embedded
                              : v->kind == NodeView::Kind::leaf      ? s.leaf
                              : v->kind == NodeView::Kind::extension ? s.extension
                                                                     : s.branch;
        c.nodes += 1;
        c.bytes += rlp.size();
        if (v->kind == NodeView::Kind::leaf) ++s.pairs;
        if (v->kind == NodeView::Kind::branch && !v->value.empty()) ++s.pairs;
        if (v->kind == NodeView::Kind::extension && v->child.size() < 32) count(v->child, true);
        if (v->kind == NodeView::Kind::branch) {
            for (const bytes_view ch : v->children) {
                if (!ch.empty() && ch.size() < 32) count(ch, true);
            }
        }
    };
    MPT_RETURN_IF_ERROR(store.scan(trie.id, {}, [&](bytes_view path, bytes_view rlp) {
        ++s.rows;
        s.row_bytes += path.size() + rlp.size();
        if (s.by_depth.size() <= path.size()) s.by_depth.resize(path.size() + 1);
        s.by_depth[path.size()].nodes += 1;
        s.by_depth[path.size()].bytes += rlp.size();
        row_path = path;
        count(rlp, false);
        return bad.ok();
    }));
    if (!bad.ok()) return bad.error();
    return s;
}

}  // namespace mpt
