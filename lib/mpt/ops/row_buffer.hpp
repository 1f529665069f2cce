// The rows a StackTrie hands its sink, kept for a trie file written whole (bulk_build.cpp,
// spilled_build.cpp, state_spill.cpp): in memory, or past a budget in runs put in path order on
// disk. Internal to lib/mpt/ops/.
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/ops/path_order.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <array>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

namespace mpt::build_detail {

// The rows of a part of a trie, in the order the builder hands them over, then in path
// order.
struct RowBuffer : NodeSink {
    struct Ref {
        uint64_t at;  // the path, then the rlp, in data
        uint32_t path_size;
        uint32_t rlp_size;
    };
    bytes data;
    std::vector<Ref> refs;        // in the order the builder handed them over
    std::vector<uint32_t> order;  // refs in path order

    void reserve(size_t rows, size_t bytes) {
        reserve_huge(refs, rows);
        reserve_huge(data, bytes);
    }
    // Room for a share of the rows of `pairs` pairs of pair_bytes in all split among `parts`
    // parts: what the rows of 32-byte keys and values take (1.36 rows a pair, 1.93 bytes of
    // path and rlp for each byte of the pairs), and a quarter more for parts of uneven size.
    // A part that needs more grows.
    void reserve_share(size_t pairs, size_t pair_bytes, size_t parts) {
        reserve(pairs * 14 / 10 * 5 / 4 / parts, pair_bytes * 2 * 5 / 4 / parts);
    }

    void put(bytes_view path, bytes_view rlp) override {
        refs.push_back(
            {data.size(), static_cast<uint32_t>(path.size()), static_cast<uint32_t>(rlp.size())});
        data.insert(data.end(), path.begin(), path.end());
        data.insert(data.end(), rlp.begin(), rlp.end());
    }
    bytes_view path(uint32_t i) const noexcept {
        return {data.data() + refs[i].at, refs[i].path_size};
    }
    bytes_view rlp(uint32_t i) const noexcept {
        return {data.data() + refs[i].at + refs[i].path_size, refs[i].rlp_size};
    }

    // Path order from the builder's order, without a sort (path_order.hpp).
    void order_by_path() {
        append_path_order(
            static_cast<uint32_t>(refs.size()), [this](uint32_t i) { return path(i); }, order);
    }

    // Calls f(path, rlp) for every row in path order. The rows lie in the builder's order, so
    // that each is a cache miss unless asked for ahead: its reference 16 rows ahead, its bytes
    // 8 ahead.
    template <typename F>
    Status for_each(F& f) const {
        constexpr size_t kRefAhead = 16;
        constexpr size_t kRowAhead = 8;
        const size_t n = order.size();
        for (size_t k = 0; k < n; ++k) {
            if (k + kRefAhead < n) __builtin_prefetch(&refs[order[k + kRefAhead]]);
            if (k + kRowAhead < n) {
                const Ref& ahead = refs[order[k + kRowAhead]];
                __builtin_prefetch(data.data() + ahead.at);
                __builtin_prefetch(data.data() + ahead.at + ahead.path_size + ahead.rlp_size - 1);
            }
            MPT_RETURN_IF_ERROR(f(path(order[k]), rlp(order[k])));
        }
        return {};
    }

    // No rows, the storage kept for the next ones.
    void clear() noexcept {
        data.clear();
        refs.clear();
        order.clear();
    }

    // Takes other's storage, leaving it empty; this goes with it when destroyed.
    void swap_out(RowBuffer& other) noexcept {
        data.swap(other.data);
        refs.swap(other.refs);
        order.swap(other.order);
    }
};

// The rows of a build from sorted pairs, kept up to a budget, and past it put in path order
// and written to a run file each time it is full (RowBuffer::order_by_path puts any stretch
// of the builder's rows in path order).
class SpillingRows : public NodeSink {
public:
    SpillingRows(SpillFiles& files, size_t budget) : files_(files), budget_(budget) {
        // Room for the budget's rows at once, touched only as they come.
        buffer_.reserve(budget / 40 + 1, budget);
    }

    void put(bytes_view path, bytes_view rlp) override {
        if (!status_.ok()) return;
        buffer_.put(path, rlp);
        ++rows_;
        // Each row also takes 16 bytes of reference and 8 of ordering.
        if (buffer_.data.size() + 24 * buffer_.refs.size() >= budget_) status_ = spill();
    }
    const Status& status() const noexcept { return status_; }
    size_t rows() const noexcept { return rows_; }
    size_t runs() const noexcept { return runs_.size(); }

    // Puts what is held to a run and gives back the memory: every row is on disk. for_each
    // may follow.
    Status close() {
        if (status_.ok() && !buffer_.refs.empty()) status_ = spill();
        RowBuffer().swap_out(buffer_);
        return status_;
    }

    // Calls f(path, rlp) for every row, in path order; again when called again.
    template <typename F>
    Status for_each(F&& f) {
        MPT_RETURN_IF_ERROR(status_);
        if (runs_.empty()) {
            if (buffer_.order.size() != buffer_.refs.size()) buffer_.order_by_path();
            return buffer_.for_each(f);
        }
        if (!buffer_.refs.empty()) MPT_RETURN_IF_ERROR(spill());
        RowBuffer().swap_out(buffer_);
        MPT_TRY(runs_, merge_to_fan_in(files_, std::move(runs_)));
        // Read through views, which leave the runs to be read again.
        std::vector<RunFile> views;
        for (const RunFile& run : runs_) {
            MPT_TRY(RunFile view, run.view(0, 16));
            views.push_back(std::move(view));
        }
        RunMerger merger(std::move(views));
        while (true) {
            MPT_TRY(const std::span<const KvPair> batch, merger.next());
            if (batch.empty()) return {};
            for (const KvPair& row : batch) MPT_RETURN_IF_ERROR(f(row.key, row.value));
        }
    }

private:
    Status spill() {
        buffer_.order_by_path();
        MPT_TRY(RunFile run, RunFile::create(files_));
        for (const uint32_t i : buffer_.order) {
            MPT_RETURN_IF_ERROR(run.add(buffer_.path(i), buffer_.rlp(i)));
        }
        MPT_RETURN_IF_ERROR(run.finish());
        runs_.push_back(std::move(run));
        buffer_.refs.clear();
        buffer_.data.clear();
        std::vector<uint32_t>().swap(buffer_.order);
        return {};
    }

    SpillFiles& files_;
    size_t budget_;
    RowBuffer buffer_;
    std::vector<RunFile> runs_;
    size_t rows_ = 0;
    Status status_;
};

// The progress of a build's pairs as its threads add them: progress(done, pairs) after every
// PartSinks::kProgressPairs pairs a thread added (when set). Safe to call from any thread.
class PairProgress {
public:
    PairProgress(const std::function<void(size_t, size_t)>& progress, size_t pairs)
        : progress_(progress), pairs_(pairs) {}

    size_t pairs() const noexcept { return pairs_; }
    void advanced() {
        if (!progress_) return;
        std::lock_guard<std::mutex> lock(mutex_);
        added_ += PartSinks::kProgressPairs;
        progress_(std::min(added_, pairs_), pairs_);
    }

private:
    const std::function<void(size_t, size_t)>& progress_;
    size_t pairs_;
    std::mutex mutex_;
    size_t added_ = 0;
};

// Keeps the rows the builder hashes, by part (stack_trie_root), and puts each part in path
// order on the thread that built it: the rows of a key/value build (bulk_build.cpp) and of a
// state build's account trie (state_bulk.cpp).
class PartRows : public PartSinks {
public:
    // progress(done, pairs) is called as the parts advance (when set).
    PartRows(const std::function<void(size_t, size_t)>& progress, size_t pairs)
        : progress_(progress, pairs) {}

    // Room for the rows of pairs of pair_bytes in all, split among the 16 parts when split.
    void reserve(size_t pair_bytes, bool split) {
        if (!split) {
            parts_[kTopPart].reserve_share(progress_.pairs(), pair_bytes, 1);
            return;
        }
        for (size_t v = 0; v < kTopPart; ++v) {
            parts_[v].reserve_share(progress_.pairs(), pair_bytes, kTopPart);
        }
    }

    NodeSink* part(size_t v) override {
        // A part begins in the buffers of one already written out, where there is one: memory
        // touched before, rather than fresh memory the kernel clears first.
        std::lock_guard<std::mutex> lock(spare_mutex_);
        if (v < kTopPart && spares_ > 0) {
            RowBuffer& spare = spare_[--spares_];
            spare.clear();
            RowBuffer untouched;  // the part's own reservation, given back on the way out
            untouched.swap_out(parts_[v]);
            parts_[v].swap_out(spare);
        }
        return &parts_[v];
    }
    void done(size_t v) override {
        // A part is done again when a split build falls back to one thread (after an
        // error), with no rows added: its order stands, and may be being read.
        if (parts_[v].order.size() != parts_[v].refs.size()) {
            parts_[v].order_by_path();
            rows_[v] = parts_[v].order.size();
        }
        if (on_done_) on_done_(v);
    }
    // Part v (below the top) is written out and its rows read no more: its buffers go to a
    // part not begun yet. for_each and rows_of then no longer see them (recycled()).
    void recycle(size_t v) {
        MPT_ASSERT(v < kTopPart);
        std::lock_guard<std::mutex> lock(spare_mutex_);
        spare_[spares_++].swap_out(parts_[v]);
        recycled_ = true;
    }
    bool recycled() const noexcept { return recycled_; }
    // A split build's writer of part v: hands f(path, rlp) its rows in path order, then
    // recycles it.
    template <typename F>
    Status write_out(size_t v, F& f) {
        MPT_RETURN_IF_ERROR(parts_[v].for_each(f));
        recycle(v);
        return {};
    }
    // Called on the building thread after done(v) has put part v in path order.
    void on_done(std::function<void(size_t)> f) { on_done_ = std::move(f); }
    const RowBuffer& rows_of(size_t v) const noexcept { return parts_[v]; }
    void advanced() override { progress_.advanced(); }

    size_t rows() const noexcept {
        size_t n = 0;
        for (const size_t r : rows_) n += r;
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
    std::array<size_t, kTopPart + 1> rows_{};  // each part's, counted when it is done
    std::mutex spare_mutex_;
    std::array<RowBuffer, kTopPart> spare_;  // the buffers of parts written out
    size_t spares_ = 0;
    bool recycled_ = false;
    std::function<void(size_t)> on_done_;
    PairProgress progress_;
};

// The rows of a build split two nibbles down (SplitLayout::deep), a part of the 256 to a task
// in key order: each part's rows in buffers of their own, put in path order when the part is
// done, and held until the writer has written them, so that few are held at once.
class ByteParts {
public:
    static constexpr size_t kParts = 256;

    // progress as PartRows's; pair_bytes: the bytes of the pairs, for the parts' room.
    ByteParts(const std::function<void(size_t, size_t)>& progress, size_t pairs, size_t pair_bytes)
        : progress_(progress, pairs), pair_bytes_(pair_bytes) {}

    // The sink of part b's builder, on the thread that builds it. The part begins in the
    // buffers of one written out, where there is one: memory touched before, rather than
    // fresh memory the kernel clears first.
    NodeSink* begin(size_t b) {
        {
            std::lock_guard<std::mutex> lock(spare_mutex_);
            if (!spares_.empty()) {
                parts_[b].swap_out(spares_.back());
                spares_.pop_back();
                parts_[b].clear();
            }
        }
        if (parts_[b].data.capacity() == 0) {
            parts_[b].reserve_share(progress_.pairs(), pair_bytes_, kParts);
        }
        return &parts_[b];
    }
    // Part b is built: its rows are put in path order.
    void done(size_t b) {
        parts_[b].order_by_path();
        rows_[b] = parts_[b].order.size();
    }
    void advanced() { progress_.advanced(); }

    // Part b's writer: hands f(path, rlp) its rows in path order, then lets its buffers go to
    // a part not begun yet.
    template <typename F>
    Status write_out(size_t b, F& f) {
        MPT_RETURN_IF_ERROR(parts_[b].for_each(f));
        std::lock_guard<std::mutex> lock(spare_mutex_);
        spares_.emplace_back().swap_out(parts_[b]);
        return {};
    }

    // The rows the parts' builders handed over.
    size_t rows() const noexcept {
        size_t n = 0;
        for (const size_t r : rows_) n += r;
        return n;
    }

private:
    PairProgress progress_;
    size_t pair_bytes_;
    std::array<RowBuffer, kParts> parts_;
    std::array<size_t, kParts> rows_{};
    std::mutex spare_mutex_;
    std::vector<RowBuffer> spares_;  // the buffers of parts written out
};

}  // namespace mpt::build_detail
