#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/row_buffer.hpp>
#include <mpt/ops/trie_file_writer.hpp>
#include <mpt/trie/task_pool.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>

namespace mpt {
namespace {

using build_detail::kNotThisWay;
using build_detail::Overlapped;
using build_detail::PartRowsOf;
using build_detail::PreimageRecords;
using build_detail::RowVisitor;
using build_detail::SpillingRows;
using build_detail::SplitHash;
using build_detail::SplitHasher;
using build_detail::write_trie_file;
using build_detail::write_while_hashing;

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

// Hashes a part of a split build at depth (hash_part): the pairs add gives, its rows into
// rows and, with preimages, its pairs' preimages there.
void hash_rows_part(NibblePart& part, size_t depth, SpillingRows& rows, SpillFiles& files,
                    PreimageRun* preimages, const AddPartStream& add) {
    hash_part(part, depth, &rows, [&](StackTrie& st) {
        return add(
            st, [&](std::span<const KvPair> batch, std::span<const bytes_view> extras) -> Status {
                if (preimages != nullptr) {
                    MPT_RETURN_IF_ERROR(preimages->add(files, batch, extras));
                }
                return rows.status();
            });
    });
    // The rows the builder's last nodes made.
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
        bytes top_value;  // the empty key's value, which the root branch holds
        const size_t part_bytes = std::max<size_t>(row_bytes / threads, 1);
        const auto hash = [&](size_t v, NibblePart& part) {
            rows_[v] = std::make_unique<SpillingRows>(files, part_bytes);
            hash_rows_part(part, 1, *rows_[v], files, preimages ? &preimages_[v] : nullptr,
                           [&](StackTrie& st, const BatchHook& each) {
                               return add_nibble_stream(pairs, static_cast<unsigned>(v), st,
                                                        top_value, each);
                           });
            if (part.status.ok()) part.status = rows_[v]->close();
            if (part.status.ok()) part.status = preimages_[v].finish();
            if (part_done) part_done(v);
        };
        size_t count = 0;
        MPT_TRY(std::optional<bytes> enc, split_root(threads, hash, top_value, count));
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
        std::array<size_t, kParts> part_rows{};
        bytes top_value;  // the empty key's value, which the root branch would hold
        const auto hash_byte = [&](size_t b, NibblePart& part, unsigned) {
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
                hash_rows_part(part, 2, *rows_[b], files, preimages ? &preimages_[b] : nullptr,
                               [&](StackTrie& st, const BatchHook& each) {
                                   return add_byte_stream(pairs, static_cast<unsigned>(b), st,
                                                          top_value, each);
                               });
                part_rows[b] = rows_[b]->rows();
                if (part.status.ok()) part.status = preimages_[b].finish();
            } catch (...) {
                // Out of memory: no part waits for this one, which never comes.
                stop();
                throw;
            }
            part_done(b);
        };
        size_t count = 0;
        MPT_TRY(const bool branches,
                split_root_deep(threads, hash_byte, top_value, top_rlps_, count));
        if (!branches) return false;
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
                write_while_hashing(
                    file, o, preimage_records,
                    {part_rows, {DeepSplitBuild::kParts, true}, [&] { deep.stop(); }}, hash));
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
                write_while_hashing(file, o, preimage_records, {part_rows}, hash));
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

Result<std::optional<BuildResult>> build_new_trie_file_sorted(const std::string& path,
                                                              SpillingPairSorter& pairs,
                                                              const BuildOptions& o,
                                                              SpillFiles& files, size_t row_bytes) {
    MPT_TRY(std::optional<WholeFile> file, WholeFile::create(path));
    if (!file) return kNotThisWay;
    return write_new_file_sorted(*file, pairs, o, files, row_bytes);
}

}  // namespace mpt
