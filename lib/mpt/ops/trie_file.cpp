#include <mpt/core/hex.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace mpt {
namespace {

// Writes each node the streaming builder hashes; keeps the first error. Rows are written in
// batches (store.put_rows writes several per statement). When the store's file does not
// depend on the order of writes (row_order_free), each batch is sorted by path first: it is
// one key range but for the few ancestors of rows written before, so SQLite's inserts mostly
// append. Otherwise rows keep the builder's order, and the file stays what it was. Above a
// size threshold the batches go to a writer thread, so that SQLite's inserts run on one core
// while hashing (and sorting) goes on on the other; the store is then used by the writer
// thread alone until finish() returns.
class StoreSink : public NodeSink {
public:
    static constexpr size_t kBatchRows = 8192;
    static constexpr size_t kMaxQueued = 4;  // batches in flight: bounds the memory

    StoreSink(NodeStore& store, TrieId trie, bool threaded)
        : store_(store), trie_(trie), threaded_(threaded), sorted_(store.row_order_free()) {
        if (threaded_) writer_ = std::thread([this] { write_loop(); });
    }
    ~StoreSink() override { static_cast<void>(finish()); }

    void put(bytes_view path, bytes_view rlp) override {
        ++rows_;
        current_.rows.push_back(path, rlp);
        if (current_.rows.size() >= kBatchRows) hand_over();
    }

    // True once a write failed; the builder may stop early.
    bool failed() {
        if (!threaded_) return !status_.ok();
        std::lock_guard<std::mutex> lock(mutex_);
        return !status_.ok();
    }

    // Writes what is left and waits for the writer. Returns the first error.
    Status finish() {
        hand_over();
        if (threaded_ && writer_.joinable()) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                done_ = true;
            }
            ready_.notify_one();
            writer_.join();
        }
        return status_;
    }

    size_t rows() const noexcept { return rows_; }

private:
    struct Batch {
        RowList rows;
        std::vector<RowList::Row> order;  // views into rows, in the order to write them
    };

    void hand_over() {
        if (current_.rows.empty()) return;
        Batch& b = current_;
        b.order.reserve(b.rows.size());
        for (const RowList::Row r : b.rows) b.order.push_back(r);
        if (sorted_) {
            std::stable_sort(b.order.begin(), b.order.end(),
                             [](const RowList::Row& x, const RowList::Row& y) {
                                 return bytes_less(x.path, y.path);
                             });
        }
        if (!threaded_) {
            if (status_.ok()) status_ = store_.put_rows(trie_, b.order);
            current_ = Batch();
            return;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        room_.wait(lock, [&] { return queue_.size() < kMaxQueued; });
        queue_.push_back(std::move(current_));
        current_ = Batch();
        lock.unlock();
        ready_.notify_one();
    }

    void write_loop() {
        while (true) {
            Batch batch;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                ready_.wait(lock, [&] { return !queue_.empty() || done_; });
                if (queue_.empty()) return;
                batch = std::move(queue_.front());
                queue_.pop_front();
            }
            room_.notify_one();
            const Status s = store_.put_rows(trie_, batch.order);
            if (!s.ok()) {
                std::lock_guard<std::mutex> lock(mutex_);
                if (status_.ok()) status_ = s;
            }
        }
    }

    NodeStore& store_;
    TrieId trie_;
    bool threaded_;
    bool sorted_;  // write each batch in path order
    Status status_;
    size_t rows_ = 0;
    Batch current_;
    std::mutex mutex_;
    std::condition_variable ready_, room_;
    std::deque<Batch> queue_;
    bool done_ = false;
    std::thread writer_;
};

// Below this many pairs a build stays on one thread: starting a writer costs more than it
// saves.
constexpr size_t kThreadedBuildPairs = 20000;

constexpr std::string_view kKeyValueRefusal =
    "key/value input does not write it (mpt build --state does)";

// The trie a build applies its input to as changes: the existing one of o.trie, unless
// there is none or o.replace. Errors: trie_kind_mismatch for --secure on a plain trie.
Result<std::optional<TrieInfo>> trie_to_update(NodeStore& store, const BuildOptions& o) {
    MPT_TRY(std::optional<TrieInfo> existing, store.find_trie(o.trie));
    if (!existing || o.replace) return std::optional<TrieInfo>();
    if (o.secure && !existing->hashed_keys()) {
        return {Errc::trie_kind_mismatch,
                "trie " + o.trie + " is plain; --secure would hash its keys differently"};
    }
    return existing;
}

// The trie a build creates: a new one of o.trie, or the existing one emptied (o.replace).
// Errors: trie_kind_mismatch when --replace would change the trie's kind.
Result<TrieId> trie_to_create(NodeStore& store, const BuildOptions& o, BuildResult& result) {
    MPT_TRY(std::optional<TrieInfo> existing, store.find_trie(o.trie));
    result.created = true;
    if (!existing) {
        return store.create_trie(o.trie, o.secure ? TrieKind::secure : TrieKind::plain);
    }
    if (existing->hashed_keys() != o.secure) {
        return {Errc::trie_kind_mismatch, "--replace keeps the trie's kind: trie " + o.trie +
                                              " is " + std::string(trie_kind_name(existing->kind))};
    }
    MPT_TRY(result.rows_deleted, store.erase_subtree(existing->id, {}));
    return existing->id;
}

// Applies input to the existing trie as changes and commits them; root is the trie's root
// before, and after.
Status apply_changes(NodeStore& store, const TrieInfo& trie, const KvInput& input,
                     const BuildOptions& o, Hash256& root, BuildResult& result) {
    const bool secure = trie.hashed_keys();
    TrieReader reader(store, trie);
    Trie t = Trie::open(&reader, root);
    std::vector<Hash256> hashes;
    for (size_t i = 0; i < input.size(); ++i) {
        const KvPair p = input[i];
        const Hash256 hashed = secure ? keccak256(p.key) : Hash256{};
        const bytes_view key = secure ? bytes_view(hashed) : p.key;
        MPT_RETURN_IF_ERROR(t.put(key, p.value));
        if (secure && o.preimages && !p.value.empty()) hashes.push_back(hashed);
        if (o.progress && (i + 1) % 65536 == 0) o.progress(i + 1, input.size());
    }
    if (!hashes.empty()) {
        std::vector<Preimage> pre;
        pre.reserve(hashes.size());
        for (size_t i = 0, h = 0; i < input.size(); ++i) {
            if (!input[i].value.empty()) pre.emplace_back(hashes[h++], input[i].key);
        }
        MPT_RETURN_IF_ERROR(store.put_preimages(pre));
    }
    MPT_TRY(CommitBatch batch, t.commit());
    MPT_RETURN_IF_ERROR(apply_commit(store, trie.id, batch));
    root = batch.root;
    result.rows_written += batch.puts.size();
    result.rows_deleted += batch.deletes.size();
    return {};
}

Result<BuildResult> build_in_write(NodeStore& store, const KvInput& input, const BuildOptions& o) {
    MPT_RETURN_IF_ERROR(refuse_state_trie(store, o.trie, kKeyValueRefusal));
    BuildResult result;
    MPT_TRY(std::optional<TrieInfo> existing, trie_to_update(store, o));
    if (existing) {
        result.root = existing->root;
        MPT_RETURN_IF_ERROR(apply_changes(store, *existing, input, o, result.root, result));
        return result;
    }
    MPT_TRY(const TrieId id, trie_to_create(store, o, result));
    const SortedPairs sorted = sorted_final_pairs(input, o.secure);
    StoreSink sink(store, id, sorted.pairs.size() >= kThreadedBuildPairs);
    StackTrie st(&sink);
    for (size_t i = 0; i < sorted.pairs.size(); ++i) {
        MPT_RETURN_IF_ERROR(st.add(sorted.pairs[i].key, sorted.pairs[i].value));
        if ((i + 1) % 4096 == 0 && sink.failed()) break;
        if (o.progress && (i + 1) % 65536 == 0) o.progress(i + 1, sorted.pairs.size());
    }
    result.root = st.finish();
    MPT_RETURN_IF_ERROR(sink.finish());
    MPT_RETURN_IF_ERROR(store.set_root(id, result.root));
    if (o.secure && o.preimages) {
        MPT_RETURN_IF_ERROR(store.put_preimages(secure_preimages(input, sorted)));
    }
    result.rows_written = sink.rows();
    return result;
}

Result<BuildResult> build_streamed_in_write(NodeStore& store, KvStreamReader& stream,
                                            SpillingPairSorter& sorter, const BuildOptions& o,
                                            const std::function<Status(const KvInput&)>& check) {
    MPT_RETURN_IF_ERROR(refuse_state_trie(store, o.trie, kKeyValueRefusal));
    BuildResult result;
    MPT_TRY(std::optional<TrieInfo> existing, trie_to_update(store, o));
    if (existing) {
        result.root = existing->root;
        KvInput piece;
        while (true) {
            MPT_TRY(const bool more, stream.next(piece));
            if (!more) return result;
            if (check) MPT_RETURN_IF_ERROR(check(piece));
            MPT_RETURN_IF_ERROR(apply_changes(store, *existing, piece, o, result.root, result));
            piece = KvInput();  // its text and arena go before the next is read
        }
    }
    MPT_TRY(const TrieId id, trie_to_create(store, o, result));
    const bool preimages = o.secure && o.preimages;
    MPT_RETURN_IF_ERROR(sort_kv_stream(stream, o.secure, preimages, sorter, check));
    StoreSink sink(store, id, true);
    StackTrie st(&sink);
    std::vector<Preimage> pre;
    while (true) {
        MPT_TRY(const std::span<const KvPair> run, sorter.next());
        if (run.empty()) break;
        MPT_RETURN_IF_ERROR(add_spilled_batch(st, run));
        if (sink.failed()) break;
        if (!preimages) continue;
        pre.clear();
        for (size_t i = 0; i < run.size(); ++i) {
            Hash256 h;
            std::copy(run[i].key.begin(), run[i].key.end(), h.begin());
            pre.emplace_back(h, sorter.extras()[i]);
        }
        MPT_RETURN_IF_ERROR(store.put_preimages(pre));
    }
    result.root = st.finish();
    MPT_RETURN_IF_ERROR(sink.finish());
    MPT_RETURN_IF_ERROR(store.set_root(id, result.root));
    result.rows_written = sink.rows();
    return result;
}

}  // namespace

Status refuse_state_trie(NodeStore& store, std::string_view name, std::string_view refusal) {
    MPT_TRY(std::optional<TrieInfo> target, store.find_trie(name));
    if (target && target->kind == TrieKind::state) {
        return {Errc::bad_input,
                "trie " + target->name + " holds accounts: " + std::string(refusal)};
    }
    MPT_TRY(std::optional<TrieInfo> main, store.find_trie("main"));
    if (!main || main->kind != TrieKind::state) return {};
    const std::string canonical = canonical_trie_name(name);
    if (!is_storage_trie_name(canonical)) return {};
    return {Errc::bad_input,
            "trie " + canonical + (target ? " is" : " would be") +
                " a storage trie of the state in this file: " + std::string(refusal)};
}

Result<BuildResult> build_trie(NodeStore& store, const KvInput& input, const BuildOptions& o) {
    return in_one_write(store, [&](NodeStore& s) { return build_in_write(s, input, o); });
}

Result<BuildResult> build_trie_streamed(NodeStore& store, KvStreamReader& stream,
                                        SpillingPairSorter& sorter, const BuildOptions& o,
                                        const std::function<Status(const KvInput&)>& check) {
    return in_one_write(
        store, [&](NodeStore& s) { return build_streamed_in_write(s, stream, sorter, o, check); });
}

std::vector<Preimage> secure_preimages(const KvInput& input, const SortedPairs& sorted) {
    std::vector<Preimage> out;
    if (sorted.hashed_keys.empty()) return out;
    out.reserve(sorted.pairs.size());
    const Hash256* first = sorted.hashed_keys.data();
    for (const KvPair& p : sorted.pairs) {
        // A secure cursor's keys view its hashed_keys, entry i's hash at index i.
        const auto i = static_cast<size_t>(reinterpret_cast<const Hash256*>(p.key.data()) - first);
        out.emplace_back(sorted.hashed_keys[i], input[i].key);
    }
    return out;
}

Result<TrieInfo> require_trie(NodeStore& store, std::string_view name) {
    MPT_TRY(std::optional<TrieInfo> t, store.find_trie(name));
    if (!t) return no_such_trie_error(store, name);
    return std::move(*t);
}

Result<uint64_t> drop_trie(NodeStore& store, std::string_view name) {
    return in_one_write(store, [&](NodeStore& s) -> Result<uint64_t> {
        MPT_TRY(const TrieInfo t, require_trie(s, name));
        // An account trie goes whole; a storage trie only with its account.
        if (t.kind != TrieKind::state) {
            MPT_RETURN_IF_ERROR(refuse_state_trie(s, name, "mpt drop does not drop it"));
        }
        MPT_TRY(const uint64_t rows, s.count_rows(t.id));
        MPT_RETURN_IF_ERROR(s.delete_trie(t.id));
        return rows;
    });
}

Result<CopyResult> copy_trie(NodeStore& store, std::string_view from, std::string_view to,
                             bool replace) {
    MPT_RETURN_IF_ERROR(check_trie_name(to));
    return in_one_write(store, [&](NodeStore& s) -> Result<CopyResult> {
        MPT_TRY(const TrieInfo source, require_trie(s, from));
        MPT_RETURN_IF_ERROR(refuse_state_trie(s, to, "mpt copy does not write it"));
        CopyResult r;
        MPT_TRY(const std::optional<TrieInfo> old, s.find_trie(to));
        if (old) {
            if (old->id == source.id) {
                return Error{Errc::bad_input,
                             "trie " + source.name + " cannot be copied onto itself"};
            }
            if (!replace) {
                return Error{Errc::bad_input,
                             "trie " + old->name + " exists already (--replace drops it first)"};
            }
            MPT_RETURN_IF_ERROR(s.delete_trie(old->id));
            r.replaced = true;
        }
        MPT_TRY(const TrieId id, s.create_trie(to, source.kind));
        MPT_TRY(r.rows, s.copy_rows(source.id, id));
        MPT_RETURN_IF_ERROR(s.set_root(id, source.root));
        MPT_TRY(std::optional<TrieInfo> made, s.find_trie(to));
        if (!made) return Error{Errc::internal, "the copy is not in the store"};
        r.trie = std::move(*made);
        return r;
    });
}

namespace {

class Checker {
public:
    Checker(NodeStore& store, const TrieInfo& trie, CheckReport& report)
        : reader_(store, trie), trie_(trie), report_(report) {}

    // Visits the hashed node (a row) whose parent holds expected for it at path. What
    // load_verified refuses is a problem of the report; read errors end the check.
    Status visit_row(bytes& path, const Hash256& expected) {
        auto v = load_verified(reader_, path, expected);
        const Errc code = v ? Errc::internal : v.error().code;
        if (code != Errc::storage_missing_node) reached_.push_back(path);
        if (v) {
            const bytes rlp(v->rlp.begin(), v->rlp.end());  // the next read invalidates the row
            return visit_node(path, rlp);
        }
        if (code == Errc::storage_missing_node) {
            problem("missing row", path);
        } else if (code == Errc::storage_hash_mismatch) {
            problem("hash mismatch", path);
        } else if (code == Errc::storage_bad_node) {
            problem("undecodable node (" + v.error().detail + ")", path);
        } else {
            return std::move(v).error();
        }
        return {};
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
                for (uint8_t i = 0; i < 16; ++i) {
                    if (v->children[i].empty()) continue;
                    path.push_back(i);
                    MPT_RETURN_IF_ERROR(visit_child(path, v->children[i]));
                    path.pop_back();
                }
                break;
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
