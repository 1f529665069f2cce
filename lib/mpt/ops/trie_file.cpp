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

}  // namespace mpt
