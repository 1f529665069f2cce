#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/path_order.hpp>
#include <mpt/ops/row_buffer.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>
#include <mutex>
#include <new>
#include <thread>

namespace mpt {
namespace {

using build_detail::RowBuffer;
using build_detail::SpillingRows;

// Keeps the rows the builder hashes, by part (stack_trie_root), and puts each part in path
// order on the thread that built it.
class PartRows : public PartSinks {
public:
    // For pairs of pair_bytes in all, split among the 16 parts when split.
    PartRows(const BuildOptions& o, size_t pairs, size_t pair_bytes, bool split)
        : o_(o), pairs_(pairs) {
        // Room for what the rows of 32-byte keys and values take (1.36 rows a pair, 1.93
        // bytes of path and rlp for each byte of the pairs), and a quarter more for parts of
        // uneven size. A part that needs more grows.
        const size_t parts = split ? kTopPart : 1;
        const size_t rows = pairs * 14 / 10 * 5 / 4 / parts;
        const size_t bytes = pair_bytes * 2 * 5 / 4 / parts;
        if (!split) {
            parts_[kTopPart].reserve(rows, bytes);
            return;
        }
        for (size_t v = 0; v < kTopPart; ++v) parts_[v].reserve(rows, bytes);
    }

    NodeSink* part(size_t v) override { return &parts_[v]; }
    void done(size_t v) override {
        // A part is done again when a split build falls back to one thread (after an
        // error), with no rows added: its order stands, and may be being read.
        if (parts_[v].order.size() != parts_[v].refs.size()) parts_[v].order_by_path();
        if (on_done_) on_done_(v);
    }
    // Called on the building thread after done(v) has put part v in path order.
    void on_done(std::function<void(size_t)> f) { on_done_ = std::move(f); }
    const RowBuffer& rows_of(size_t v) const noexcept { return parts_[v]; }
    void advanced() override {
        if (!o_.progress) return;
        std::lock_guard<std::mutex> lock(progress_mutex_);
        added_ += kProgressPairs;
        o_.progress(std::min(added_, pairs_), pairs_);
    }

    size_t rows() const noexcept {
        size_t n = 0;
        for (const RowBuffer& p : parts_) n += p.order.size();
        return n;
    }

    // Calls f(path, rlp) for every row in path order: the top part's rows come before the
    // rest, whose paths they begin, and part v's before part v + 1's.
    template <typename F>
    Status for_each(F&& f) const {
        MPT_RETURN_IF_ERROR(parts_[kTopPart].for_each(f));
        for (size_t v = 0; v < kTopPart; ++v) MPT_RETURN_IF_ERROR(parts_[v].for_each(f));
        return {};
    }

private:
    std::array<RowBuffer, kTopPart + 1> parts_;
    std::function<void(size_t)> on_done_;
    const BuildOptions& o_;
    size_t pairs_;
    std::mutex progress_mutex_;
    size_t added_ = 0;
};

const std::optional<BuildResult> kNotThisWay;

// More than what the rows of a trie of pairs take in memory: for 1M pairs of 32-byte keys and
// values, 1.36M rows of 124 MB with a 16-byte reference and 8 bytes for their order each,
// ~157 bytes a pair; here the pair's bytes twice and 160 bytes (288).
size_t row_memory(size_t pairs, size_t pair_bytes) noexcept { return 2 * pair_bytes + 160 * pairs; }

// The limit of a cgroup (v2) the process is in, if one is set: a container's memory.
std::optional<size_t> cgroup_memory_max() {
    std::ifstream self("/proc/self/cgroup");
    std::string line;
    while (std::getline(self, line)) {
        if (!line.starts_with("0::")) continue;
        std::ifstream max("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
        unsigned long long bytes = 0;
        if (max >> bytes) return static_cast<size_t>(bytes);  // "max" reads as no number
    }
    return std::nullopt;
}

// Half of the least of the physical memory, the address space the process may take
// (ulimit -v) and its cgroup's memory.
size_t memory_limit(const BuildOptions& o) {
    if (o.bulk_memory != 0) return o.bulk_memory;
    size_t limit = SIZE_MAX;
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0)
        limit = static_cast<size_t>(pages) * static_cast<size_t>(page_size);
    struct rlimit as {};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        limit = std::min<size_t>(limit, as.rlim_cur);
    }
    if (const std::optional<size_t> cgroup = cgroup_memory_max()) limit = std::min(limit, *cgroup);
    return limit / 2;
}

// A secure build's preimages for the preimages table's b-tree: hands add each (hash,
// preimage) record once, in hash order. Empty when the build records none.
using PreimageRecords = decltype(WholeFileTree::records);

// The preimages of a build held in memory, in hash order.
PreimageRecords records_of(std::span<const Preimage> items) {
    return [items](const std::function<Status(bytes_view)>& add) -> Status {
        bytes record;
        for (const auto& [hash, preimage] : items) {
            record.clear();
            append_blob_record(record, hash, preimage);
            MPT_RETURN_IF_ERROR(add(record));
        }
        return {};
    };
}

// A row the nodes' b-tree was given as a stand-in (IndexBtreeWriter::add_marked): its mark,
// and the rlp that takes the stand-in's place, of the same size.
struct StandIn {
    size_t mark;
    bytes_view rlp;
};

// Ends a file after its nodes: finishes the nodes' b-tree, puts the stand-ins' rlp in place,
// writes the preimages' b-tree after it, and the image last; then names the file. nullopt
// when the name was taken meanwhile.
Result<std::optional<BuildResult>> finish_file(WholeFile& file, const FileImage& image,
                                               IndexBtreeWriter& nodes,
                                               const PreimageRecords& preimages,
                                               const BuildResult& result,
                                               std::span<const StandIn> stand_ins = {}) {
    MPT_RETURN_IF_ERROR(file.end_tree(nodes));
    for (const StandIn& s : stand_ins) {
        // A record ends with its rlp.
        const IndexBtreeWriter::Place& place = nodes.place(s.mark);
        if (place.page == 0) return {Errc::internal, "a stand-in row was not written"};
        file.patch(place.page, place.end, s.rlp);
    }
    if (preimages) MPT_RETURN_IF_ERROR(file.add_tree({image.preimages_root, preimages}));
    MPT_TRY(const bool named, file.finish());
    if (!named) return kNotThisWay;
    return std::optional<BuildResult>(result);
}

// Writes the file of a trie whose root is known: the image, then the rows for_each_row
// hands over in path order, then the preimages; then names it. nullopt when the name was
// taken meanwhile. kViewsStay: the views for_each_row hands over stay valid to the end (else
// the last path is copied for the order check).
template <bool kViewsStay, typename ForEachRow>
Result<std::optional<BuildResult>> write_trie_file(WholeFile& file, const BuildOptions& o,
                                                   const BuildResult& result,
                                                   const PreimageRecords& preimages,
                                                   ForEachRow&& for_each_row) {
    MPT_TRY(FileImage image,
            new_file_image(o.trie, o.secure ? TrieKind::secure : TrieKind::plain, result.root));
    MPT_RETURN_IF_ERROR(file.begin(image));
    IndexBtreeWriter tree = file.tree(image.nodes_root);
    bytes record;
    bytes_view previous;
    bytes previous_copy;
    bool first = true;
    MPT_RETURN_IF_ERROR(for_each_row([&](bytes_view path, bytes_view rlp) -> Status {
        // The b-tree is corrupt unless its keys increase: checked, not assumed.
        if (!first && !bytes_less(previous, path)) {
            return {Errc::internal, "rows out of path order at " + path_string(path)};
        }
        first = false;
        if constexpr (kViewsStay) {
            previous = path;
        } else {
            previous_copy.assign(path.begin(), path.end());
            previous = previous_copy;
        }
        record.clear();
        append_record(record, image.trie, path, rlp);
        return tree.add(record);
    }));
    return finish_file(file, image, tree, preimages, result);
}

// The row of a branch whose 16 children are hashed, with no value: what the root of a large
// trie of random keys is, and each of the 16 branches below it, and the one size of such a
// row known before the hashing ends (kMaxBranchWithoutValue bytes).
constexpr size_t kPredictedBranchRlp = kMaxBranchWithoutValue;

// Hands f(path, rlp) every row of part v of a split build, in path order.
using RowVisitor = std::function<Status(bytes_view path, bytes_view rlp)>;
using PartRowsOf = std::function<Status(size_t v, const RowVisitor& f)>;

// How a split build's rows come: `parts` parts in path order, each once it is done. Below the
// root (a split at depth 1) those are the 16 subtries of its children; a split at depth 2
// (deep) has 256, those of the children of the 16 branches below the root, whose rows come
// before the parts below them.
struct SplitLayout {
    size_t parts = PartSinks::kTopPart;
    bool deep = false;
};

// The rows written to the b-tree as the parts of a split build are done, on a thread of its
// own, while the others hash: the root branch's row first, and in a deep layout each branch's
// below it, as stand-ins of the size they have when predicted right, then part 0, part 1 and
// so on, each once it is in path order. The stand-ins are marked in the b-tree, to be put
// right once the hashing ends.
class RowWriterThread {
public:
    // ended, when given, is called on the writer's thread as it ends, for any reason.
    RowWriterThread(PartRowsOf rows, SplitLayout layout, IndexBtreeWriter& tree, TrieId trie,
                    std::function<void()> ended = {})
        : rows_(std::move(rows)),
          layout_(layout),
          tree_(tree),
          trie_(trie),
          ended_(std::move(ended)),
          done_(layout.parts, 0) {
        thread_ = std::thread([this] {
            try {
                status_ = run();
            } catch (const std::bad_alloc&) {
                // An exception would end the process from this thread: the error instead.
                status_ = Error{Errc::out_of_memory, "an allocation failed writing rows"};
            }
            if (ended_) ended_();
        });
    }
    ~RowWriterThread() {
        // On the way out of an error or an exception: the thread ends before what it uses.
        (void)stop();
    }
    RowWriterThread(const RowWriterThread&) = delete;
    RowWriterThread& operator=(const RowWriterThread&) = delete;

    // Part v is in path order (called on the thread that built it).
    void part_done(size_t v) {
        if (v >= layout_.parts) return;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_[v] = 1;
        }
        changed_.notify_all();
    }
    // The hashing is over: the thread writes the parts done and ends. Returns whether it
    // wrote them all.
    Result<bool> stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            over_ = true;
        }
        changed_.notify_all();
        if (thread_.joinable()) thread_.join();
        MPT_RETURN_IF_ERROR(status_);
        return written_ == layout_.parts;
    }
    // After stop(): the stand-ins' marks, the root's first, then the branches' below it.
    const std::vector<size_t>& stand_ins() const noexcept { return stand_ins_; }

private:
    Status stand_in(bytes_view path, bytes& record) {
        record.clear();
        append_record(record, trie_, path, bytes(kPredictedBranchRlp, 0));
        MPT_TRY(const size_t mark, tree_.add_marked(record));
        stand_ins_.push_back(mark);
        return {};
    }

    Status run() {
        bytes record;
        MPT_RETURN_IF_ERROR(stand_in(bytes_view(), record));
        bytes previous;  // the last path written (the empty one, so far)
        for (size_t v = 0; v < layout_.parts; ++v) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                changed_.wait(lock, [&] { return done_[v] != 0 || over_; });
                if (done_[v] == 0) return {};
            }
            if (layout_.deep && v % 16 == 0) {
                const uint8_t nibble = static_cast<uint8_t>(v / 16);
                MPT_RETURN_IF_ERROR(stand_in(bytes_view(&nibble, 1), record));
                previous.assign(1, nibble);
            }
            MPT_RETURN_IF_ERROR(rows_(v, [&](bytes_view path, bytes_view rlp) -> Status {
                // The b-tree is corrupt unless its keys increase: checked, not assumed.
                if (!bytes_less(previous, path)) {
                    return {Errc::internal, "rows out of path order at " + path_string(path)};
                }
                previous.assign(path.begin(), path.end());
                record.clear();
                append_record(record, trie_, path, rlp);
                return tree_.add(record);
            }));
            written_ = v + 1;
        }
        return {};
    }

    PartRowsOf rows_;
    SplitLayout layout_;
    IndexBtreeWriter& tree_;
    TrieId trie_;
    std::function<void()> ended_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<char> done_;
    bool over_ = false;
    size_t written_ = 0;
    std::vector<size_t> stand_ins_;
    Status status_;
    std::thread thread_;
};

// A split build that writes its rows while it hashes (RowWriterThread). The file is the one
// the build would write after the hashing, byte for byte. When a row above the parts turns
// out not to be the one predicted (the top branch stands lower, holds a value or an embedded
// child), or the file's first pages would differ, written is false: the caller writes the
// rows anew.
struct Overlapped {
    BuildResult result;
    bool written = false;
    std::optional<BuildResult> file;  // written: the result, or nullopt when the name was taken
};

// What the hashing of a split build gives: its result, and the rows above the parts when
// they are branches as the layout foresees: the root's (at the empty path), then in a deep
// layout the 16 below it; empty otherwise.
struct SplitHash {
    BuildResult result;
    std::vector<bytes> top_rlps;
};
// Hashes the parts, calling part_done(v) on the thread that built part v once its rows are
// all there, in path order.
using SplitHasher = std::function<Result<SplitHash>(const std::function<void(size_t)>& part_done)>;

Result<Overlapped> write_while_hashing(WholeFile& file, const BuildOptions& o,
                                       const PreimageRecords& preimages,
                                       const PartRowsOf& part_rows, const SplitHasher& hash,
                                       SplitLayout layout = {},
                                       const std::function<void()>& writer_ended = {}) {
    const TrieKind kind = o.secure ? TrieKind::secure : TrieKind::plain;
    // The first pages, made with a stand-in root: the root hash is one fixed-size field of
    // the tries row, so the real one gives pages of the same number (checked below).
    MPT_TRY(FileImage image, new_file_image(o.trie, kind, Hash256{}));
    MPT_RETURN_IF_ERROR(file.begin(image));
    IndexBtreeWriter tree = file.tree(image.nodes_root);
    Overlapped r;
    RowWriterThread writer(part_rows, layout, tree, image.trie, writer_ended);
    Result<SplitHash> hashed = hash([&](size_t v) { writer.part_done(v); });
    MPT_TRY(const bool all_parts, writer.stop());
    if (!hashed) return hashed.error();
    r.result = hashed->result;
    const std::vector<bytes>& top = hashed->top_rlps;
    if (!all_parts || top.size() != writer.stand_ins().size()) return r;
    std::vector<StandIn> stand_ins;
    for (size_t i = 0; i < top.size(); ++i) {
        if (top[i].size() != kPredictedBranchRlp) return r;
        stand_ins.push_back({writer.stand_ins()[i], top[i]});
    }
    MPT_TRY(FileImage real, new_file_image(o.trie, kind, r.result.root));
    if (real.pages.size() != image.pages.size() || real.nodes_root != image.nodes_root ||
        real.preimages_root != image.preimages_root || real.trie != image.trie) {
        return r;
    }
    // The pages the tree wrote into the image so far (none but the root, written at
    // finish) are taken over by the real image's.
    image.pages = std::move(real.pages);
    MPT_TRY(r.file, finish_file(file, image, tree, preimages, r.result, stand_ins));
    r.written = true;
    return r;
}

// sorted_final_pairs on threads, split by first nibble as kv_root splits: each task puts
// the final pairs of one nibble's range where that range's entries would begin, and the
// ranges are then moved together. Below kParallelRootMinPairs or on one thread,
// sorted_final_pairs itself.
SortedPairs sorted_final_pairs_on(const KvInput& input, bool secure, unsigned threads) {
    if (threads <= 1 || input.size() < kParallelRootMinPairs) {
        return sorted_final_pairs(input, secure);
    }
    SortedPairCursor cursor(input, secure);
    SortedPairs out;
    if (!cursor.splits_by_nibble()) {
        out.pairs = cursor.rest();
        out.hashed_keys = std::move(cursor).take_hashed_keys();
        return out;
    }
    std::array<size_t, 17> start{};
    for (unsigned v = 0; v < 16; ++v) {
        start[v + 1] = start[v] + cursor.entries(cursor.nibble_range(v));
    }
    out.pairs.resize(start[16]);
    std::array<size_t, 16> got{};
    run_tasks(threads, 16, [&](size_t v, unsigned) {
        SortedPairCursor::Range range = cursor.nibble_range(static_cast<unsigned>(v));
        size_t at = start[v];
        for (std::span<const KvPair> run; !(run = cursor.next(range)).empty(); at += run.size()) {
            std::copy(run.begin(), run.end(), out.pairs.begin() + static_cast<ptrdiff_t>(at));
        }
        got[v] = at - start[v];
    });
    size_t n = got[0];
    for (size_t v = 1; v < 16; ++v) {
        const auto from = out.pairs.begin() + static_cast<ptrdiff_t>(start[v]);
        std::copy(from, from + static_cast<ptrdiff_t>(got[v]),
                  out.pairs.begin() + static_cast<ptrdiff_t>(n));
        n += got[v];
    }
    out.pairs.resize(n);
    out.hashed_keys = std::move(cursor).take_hashed_keys();
    return out;
}

// The build, once the way is open, into file.
Result<std::optional<BuildResult>> write_new_file(WholeFile& file, const KvInput& input,
                                                  const BuildOptions& o) {
    const SortedPairs sorted = sorted_final_pairs_on(input, o.secure, o.threads);
    size_t pair_bytes = 0;
    for (const KvPair& p : sorted.pairs) pair_bytes += p.key.size() + p.value.size();
    if (row_memory(sorted.pairs.size(), pair_bytes) > memory_limit(o)) return kNotThisWay;
    const bool split = o.threads > 1 && sorted.pairs.size() >= kParallelRootMinPairs;
    PartRows rows(o, sorted.pairs.size(), pair_bytes, split);
    const std::vector<Preimage> preimage_items =
        o.secure && o.preimages ? secure_preimages(input, sorted) : std::vector<Preimage>();
    const PreimageRecords preimages =
        o.secure && o.preimages ? records_of(preimage_items) : PreimageRecords();
    BuildResult result;
    if (split) {
        const PartRowsOf part_rows = [&](size_t v, const RowVisitor& f) -> Status {
            const RowBuffer& part = rows.rows_of(v);
            for (const uint32_t i : part.order) MPT_RETURN_IF_ERROR(f(part.path(i), part.rlp(i)));
            return {};
        };
        const SplitHasher hash =
            [&](const std::function<void(size_t)>& part_done) -> Result<SplitHash> {
            rows.on_done(part_done);
            Result<Hash256> root =
                stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &rows);
            rows.on_done({});
            if (!root) return root.error();
            SplitHash h;
            h.result.root = *root;
            h.result.created = true;
            h.result.rows_written = rows.rows();
            const RowBuffer& top = rows.rows_of(PartSinks::kTopPart);
            if (top.order.size() == 1 && top.path(top.order[0]).empty()) {
                const bytes_view rlp = top.rlp(top.order[0]);
                h.top_rlps.emplace_back(rlp.begin(), rlp.end());
            }
            return h;
        };
        MPT_TRY(Overlapped written, write_while_hashing(file, o, preimages, part_rows, hash));
        if (written.written) return written.file;
        // The rows are hashed: written once more, from the start of the file.
        MPT_RETURN_IF_ERROR(file.restart());
        result = written.result;
    } else {
        MPT_TRY(result.root,
                stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &rows));
        result.created = true;
        result.rows_written = rows.rows();
    }
    return write_trie_file<true>(file, o, result, preimages,
                                 [&](auto&& f) { return rows.for_each(f); });
}

// A secure spilled build's preimages as the sorted pairs go by, in a temporary file: each
// hashed key with the key it hashes (the pair's extra), in hash order.
class PreimageRun {
public:
    Status add(SpillFiles& files, std::span<const KvPair> pairs,
               std::span<const bytes_view> extras) {
        if (!run_) {
            MPT_TRY(RunFile run, RunFile::create(files));
            run_.emplace(std::move(run));
        }
        for (size_t i = 0; i < pairs.size(); ++i) {
            MPT_RETURN_IF_ERROR(run_->add(pairs[i].key, extras[i]));
        }
        return {};
    }
    Status finish() { return run_ ? run_->finish() : Status(); }

    // After finish: hands add each (hash, preimage) record, in order, once; the file goes
    // with the last.
    Status records(const std::function<Status(bytes_view)>& add) {
        if (!run_) return {};
        bytes record;
        bytes_view hash, preimage;
        while (true) {
            MPT_TRY(const bool more, run_->next(hash, preimage));
            if (!more) {
                run_.reset();
                return {};
            }
            record.clear();
            append_blob_record(record, hash, preimage);
            MPT_RETURN_IF_ERROR(add(record));
        }
    }

private:
    std::optional<RunFile> run_;
};

// How a part of a split build takes its pairs: add_nibble_stream or add_byte_stream of the
// sorter, into a builder at the part's depth, each batch handed to the hook too.
using BatchHook = std::function<Status(std::span<const KvPair>, std::span<const bytes_view>)>;
using AddPartStream = std::function<Status(StackTrie& st, const BatchHook& each)>;

// Hashes a part of a split build at depth: the pairs it holds and the reference it makes in
// part, its rows into rows and, with preimages, its pairs' preimages there; its errors in
// part.status.
void hash_part(NibblePart& part, size_t depth, SpillingRows& rows, SpillFiles& files,
               PreimageRun* preimages, const AddPartStream& add) {
    StackTrie st(&rows, depth);
    part.status =
        add(st, [&](std::span<const KvPair> batch, std::span<const bytes_view> extras) -> Status {
            if (preimages != nullptr) MPT_RETURN_IF_ERROR(preimages->add(files, batch, extras));
            return rows.status();
        });
    part.pairs = st.count();
    part.ref = st.finish_ref();
    if (part.status.ok()) part.status = rows.status();
}

// The spilled build on threads, split at the root as kv_root_sorted splits: the subtrie under
// each child of the root branch is hashed from the sorter's runs of that nibble, a part to a
// task, and its rows go to runs of their own with a share of the row budget. A finished part
// is all on disk, so what is held at once is the rows of the parts being built.
class SplitBuild {
public:
    // Builds the parts; false when the final keys make no branch at the root (the caller
    // then hashes on one thread, and what the parts wrote goes).
    // part_done(v), when given, is called on the thread that built part v once its rows
    // are all on disk.
    Result<bool> run(const SpillingPairSorter& pairs, SpillFiles& files, size_t row_bytes,
                     unsigned threads, bool preimages,
                     const std::function<void(size_t)>& part_done = {}) {
        std::array<NibblePart, 16> parts;
        bytes top_value;  // the empty key's value, which the root branch holds
        const size_t part_bytes = std::max<size_t>(row_bytes / threads, 1);
        run_tasks(threads, parts.size(), [&](size_t v, unsigned) {
            NibblePart& part = parts[v];
            rows_[v] = std::make_unique<SpillingRows>(files, part_bytes);
            hash_part(part, 1, *rows_[v], files, preimages ? &preimages_[v] : nullptr,
                      [&](StackTrie& st, const BatchHook& each) {
                          return add_nibble_stream(pairs, static_cast<unsigned>(v), st, top_value,
                                                   each);
                      });
            if (part.status.ok()) part.status = rows_[v]->close();
            if (part.status.ok()) part.status = preimages_[v].finish();
            if (part_done) part_done(v);
        });
        size_t count = 0;
        MPT_TRY(std::optional<bytes> enc, root_branch_of_parts(parts, top_value, count));
        if (!enc) return false;
        root_rlp_ = std::move(*enc);
        result_.root = keccak256(root_rlp_);
        result_.created = true;
        result_.rows_written = 1;
        for (const std::unique_ptr<SpillingRows>& r : rows_) result_.rows_written += r->rows();
        return true;
    }

    const BuildResult& result() const noexcept { return result_; }
    const bytes& root_rlp() const noexcept { return root_rlp_; }

    // Calls f(path, rlp) for every row of part v, in path order. After run().
    Status part_rows(size_t v, const RowVisitor& f) {
        return rows_[v] ? rows_[v]->for_each(f) : Status();
    }

    // The parts' preimages, part 0's first: in hash order.
    PreimageRecords preimages() {
        return [this](const std::function<Status(bytes_view)>& add) -> Status {
            for (PreimageRun& p : preimages_) MPT_RETURN_IF_ERROR(p.records(add));
            return {};
        };
    }

    // Calls f(path, rlp) for every row in path order: the root branch's (the empty path),
    // then part 0's, part 1's and so on.
    template <typename F>
    Status for_each(F&& f) {
        MPT_RETURN_IF_ERROR(f(bytes_view(), root_rlp_));
        for (std::unique_ptr<SpillingRows>& r : rows_) MPT_RETURN_IF_ERROR(r->for_each(f));
        return {};
    }

private:
    std::array<std::unique_ptr<SpillingRows>, 16> rows_;
    std::array<PreimageRun, 16> preimages_;
    bytes root_rlp_;
    BuildResult result_;
};

// The spilled build split at depth 2 (SplitLayout::deep): the subtrie under each of the 256
// children of the 16 branches below the root is hashed from the sorter's runs of that first
// byte, a part to a task in key order, and its rows are held (in memory up to a share of the
// row budget, past it in runs) only until the parts before it are written. A part is a 256th
// of the pairs, so at any size up to 256 times a share no row goes to disk but the file's.
// The 17 branches above the parts are known only at the end; they stand in at the size of a
// branch of 16 hashed children, which they have when every first byte has final keys of more
// than a byte or so. When they do not, the build is made as SplitBuild makes it.
class DeepSplitBuild {
public:
    static constexpr size_t kParts = 256;

    // Builds the parts, at most `window` of them held at once, each with row_bytes / window;
    // false when the branches above them are not all there (the caller then builds
    // otherwise). part_done(b) is called on the thread that built part b.
    Result<bool> run(const SpillingPairSorter& pairs, SpillFiles& files, size_t row_bytes,
                     unsigned threads, bool preimages,
                     const std::function<void(size_t)>& part_done) {
        const size_t window = size_t{threads} + 2;
        const size_t part_bytes = std::max<size_t>(row_bytes / window, 1);
        std::array<NibblePart, kParts> parts;
        std::array<size_t, kParts> part_rows{};
        bytes top_value;  // the empty key's value, which the root branch would hold
        run_tasks(threads, kParts, [&](size_t b, unsigned) {
            NibblePart& part = parts[b];
            {
                std::unique_lock<std::mutex> lock(mutex_);
                freed_.wait(lock, [&] { return b < written_ + window || stopped_; });
                if (stopped_) {
                    // The writer's error, or the exception of another part, is the answer.
                    part.status = Error{Errc::internal, "a part not built: the build stopped"};
                    return;
                }
            }
            try {
                rows_[b] = std::make_unique<SpillingRows>(files, part_bytes);
                hash_part(part, 2, *rows_[b], files, preimages ? &preimages_[b] : nullptr,
                          [&](StackTrie& st, const BatchHook& each) {
                              return add_byte_stream(pairs, static_cast<unsigned>(b), st, top_value,
                                                     each);
                          });
                part_rows[b] = rows_[b]->rows();
                if (part.status.ok()) part.status = preimages_[b].finish();
            } catch (...) {
                // Out of memory: no part waits for this one, which never comes.
                stop();
                throw;
            }
            part_done(b);
        });
        std::array<NibblePart, 16> branches;
        for (size_t v = 0; v < 16; ++v) {
            std::array<NibblePart, 16> below;
            std::copy_n(parts.begin() + static_cast<ptrdiff_t>(16 * v), 16, below.begin());
            MPT_TRY(std::optional<bytes> enc,
                    root_branch_of_parts(below, bytes_view(), branches[v].pairs));
            if (!enc) return false;
            branches[v].ref = NodeRef::of(*enc);
            top_rlps_[v + 1] = std::move(*enc);
        }
        size_t count = 0;
        MPT_TRY(std::optional<bytes> enc, root_branch_of_parts(branches, top_value, count));
        if (!enc) return false;
        top_rlps_[0] = std::move(*enc);
        result_.root = keccak256(top_rlps_[0]);
        result_.created = true;
        result_.rows_written = 17;
        for (const size_t n : part_rows) result_.rows_written += n;
        return true;
    }

    const BuildResult& result() const noexcept { return result_; }
    // After run(): the root's rlp, then the 16 branches' below it.
    std::vector<bytes> top_rlps() const { return {top_rlps_.begin(), top_rlps_.end()}; }

    // Calls f(path, rlp) for every row of part b, in path order, and lets the rows go: once,
    // after part_done(b), on the writer's thread.
    Status part_rows(size_t b, const RowVisitor& f) {
        Status s = rows_[b]->for_each(f);
        rows_[b].reset();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            written_ = b + 1;
        }
        freed_.notify_all();
        return s;
    }
    // The writer has ended, or a part will never be done: no part waits for the writer any
    // more, and those not begun are not built.
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopped_ = true;
        }
        freed_.notify_all();
    }

    // The parts' preimages, part 0's first: in hash order.
    PreimageRecords preimages() {
        return [this](const std::function<Status(bytes_view)>& add) -> Status {
            for (PreimageRun& p : preimages_) MPT_RETURN_IF_ERROR(p.records(add));
            return {};
        };
    }

private:
    std::array<std::unique_ptr<SpillingRows>, kParts> rows_;
    std::array<PreimageRun, kParts> preimages_;
    std::array<bytes, 17> top_rlps_;
    BuildResult result_;
    std::mutex mutex_;
    std::condition_variable freed_;
    size_t written_ = 0;  // the parts written (and let go), from part 0
    bool stopped_ = false;
};

Result<std::optional<BuildResult>> write_new_file_sorted(WholeFile& file, SpillingPairSorter& pairs,
                                                         const BuildOptions& o, SpillFiles& files,
                                                         size_t row_bytes) {
    // A secure build's preimages go to a temporary file as the pairs come, in hash order.
    const bool preimages = o.secure && o.preimages;
    if (o.threads > 1 && pairs.runs_spilled() > 0 && pairs.bytes_used() == 256) {
        // Split two nibbles down, each part's rows written as soon as the parts before it.
        DeepSplitBuild deep;
        const PartRowsOf part_rows = [&](size_t b, const RowVisitor& f) {
            return deep.part_rows(b, f);
        };
        const SplitHasher hash =
            [&](const std::function<void(size_t)>& part_done) -> Result<SplitHash> {
            MPT_TRY(const bool made,
                    deep.run(pairs, files, row_bytes, o.threads, preimages, part_done));
            SplitHash h;
            h.result = deep.result();
            if (made) h.top_rlps = deep.top_rlps();
            return h;
        };
        const PreimageRecords preimage_records = preimages ? deep.preimages() : PreimageRecords();
        MPT_TRY(Overlapped written,
                write_while_hashing(file, o, preimage_records, part_rows, hash,
                                    {DeepSplitBuild::kParts, true}, [&] { deep.stop(); }));
        if (written.written) return written.file;
        // The branches above the parts are not the ones foreseen: built again, as follows.
        MPT_RETURN_IF_ERROR(file.restart());
    }
    if (o.threads > 1 && pairs.runs_spilled() > 0 && pairs.nibbles_used() > 1) {
        // Each part's rows go to the file as soon as it is done, while the others hash.
        SplitBuild split;
        bool made = false;
        const PartRowsOf part_rows = [&](size_t v, const RowVisitor& f) {
            return split.part_rows(v, f);
        };
        const SplitHasher hash =
            [&](const std::function<void(size_t)>& part_done) -> Result<SplitHash> {
            MPT_TRY(made, split.run(pairs, files, row_bytes, o.threads, preimages, part_done));
            SplitHash h;
            h.result = split.result();
            if (made) h.top_rlps.push_back(split.root_rlp());
            return h;
        };
        const PreimageRecords preimage_records = preimages ? split.preimages() : PreimageRecords();
        MPT_TRY(Overlapped written,
                write_while_hashing(file, o, preimage_records, part_rows, hash));
        if (written.written) return written.file;
        if (made) {
            // The root's row is not the one foreseen: the rows, all on disk, are written
            // once more from the start of the file.
            MPT_RETURN_IF_ERROR(file.restart());
            return write_trie_file<false>(file, o, split.result(), preimage_records,
                                          [&](auto&& f) { return split.for_each(f); });
        }
        // The final keys share their first nibble (or only one is left): hashed in one, and
        // what was written goes.
        MPT_RETURN_IF_ERROR(file.restart());
    }
    SpillingRows rows(files, row_bytes);
    StackTrie st(&rows);
    PreimageRun preimage_run;
    while (true) {
        MPT_TRY(const std::span<const KvPair> run, pairs.next());
        if (run.empty()) break;
        MPT_RETURN_IF_ERROR(add_spilled_batch(st, run));
        MPT_RETURN_IF_ERROR(rows.status());
        if (preimages) MPT_RETURN_IF_ERROR(preimage_run.add(files, run, pairs.extras()));
    }
    MPT_RETURN_IF_ERROR(preimage_run.finish());
    BuildResult result;
    result.root = st.finish();
    MPT_RETURN_IF_ERROR(rows.status());
    result.created = true;
    result.rows_written = rows.rows();
    const PreimageRecords preimage_records =
        preimages ? PreimageRecords([&](const std::function<Status(bytes_view)>& add) {
            return preimage_run.records(add);
        })
                  : PreimageRecords();
    return write_trie_file<false>(file, o, result, preimage_records,
                                  [&](auto&& f) { return rows.for_each(f); });
}

}  // namespace

Result<std::optional<BuildResult>> build_new_trie_file(const std::string& path,
                                                       const KvInput& input,
                                                       const BuildOptions& o) {
    MPT_TRY(std::optional<WholeFile> file, WholeFile::create(path));
    if (!file) return kNotThisWay;
    try {
        return write_new_file(*file, input, o);
    } catch (const std::bad_alloc&) {
        // More memory than the estimate foresaw: what was taken is given back on the way
        // here, and the store keeps the rows on disk.
        return kNotThisWay;
    }
}

Result<std::optional<BuildResult>> build_new_trie_file_sorted(const std::string& path,
                                                              SpillingPairSorter& pairs,
                                                              const BuildOptions& o,
                                                              SpillFiles& files, size_t row_bytes) {
    MPT_TRY(std::optional<WholeFile> file, WholeFile::create(path));
    if (!file) return kNotThisWay;
    return write_new_file_sorted(*file, pairs, o, files, row_bytes);
}

}  // namespace mpt
