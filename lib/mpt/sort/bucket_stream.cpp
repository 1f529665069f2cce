// SpillingPairSorter's streams of final pairs read from its buckets (spill.hpp).
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mpt/input/kv_input.hpp>
#include <mpt/sort/detail/spill_format.hpp>
#include <mpt/sort/spill.hpp>
#include <utility>

namespace mpt {

using spill_detail::direct_size;
using spill_detail::get_varint;
using spill_detail::put_varint;

using kv_detail::key_prefix;

namespace {

// The final pairs of sorted runs, merged.
class MergedPairStream final : public SpilledPairStream {
public:
    explicit MergedPairStream(std::vector<RunFile> runs) : merger_(std::move(runs)) {}
    Result<std::span<const KvPair>> next() override;

private:
    RunMerger merger_;
};

// A record's value in a run file: the pair's value length (4 bytes, little-endian), the
// value, the extra bytes (SpillingPairSorter::write_run).
Result<std::span<const KvPair>> MergedPairStream::next() {
    out_.clear();
    extras_.clear();
    while (out_.empty()) {
        MPT_TRY(const std::span<const KvPair> batch, merger_.next());
        if (batch.empty()) break;
        for (const KvPair& p : batch) {
            uint32_t value_len = 0;
            for (int i = 0; i < 4; ++i) value_len |= uint32_t{p.value[i]} << (8 * i);
            if (value_len == 0) continue;
            out_.push_back({p.key, p.value.subspan(4, value_len)});
            extras_.push_back(p.value.subspan(4 + value_len));
        }
    }
    return std::span<const KvPair>(out_);
}

}  // namespace

// The final pairs of buckets [first, last), one bucket at a time: read into memory, or, when
// larger than bucket_limit(), added to a sorter of runs. A bucket read into memory is split
// by its keys' second byte (its records copied into groups_, each group in input order), and
// each group is sorted as it is reached: a group (about a 65,536th of the input for hashed
// keys) is sorted and hashed while its records are in cache, where a sort of the bucket whole
// would move records all over it and leave the hashing to fetch them from all over it again.
class SpillingPairSorter::BucketStream final : public SpilledPairStream {
public:
    BucketStream(const SpillingPairSorter& sorter, unsigned first, unsigned last)
        : sorter_(sorter), next_bucket_(first), last_(last) {}
    ~BucketStream() override {
        // The other thread reads into raw_: it ends first.
        if (ahead_.valid()) ahead_.wait();
    }
    Result<std::span<const KvPair>> next() override;

private:
    // Where the records of a bucket read into raw_ lie: a direct file's chunks are padded.
    struct Range {
        size_t from, to;
    };
    // Whether a bucket is read into memory whole (or else sorted in runs, merged): it is
    // held twice (read, then grouped), with a group's records, which may be all of the
    // bucket's when its keys share a second byte; a group's sequence numbers are 32 bits.
    bool fits(const Bucket& bucket) const noexcept {
        return 2 * bucket.size + bucket.entries * sizeof(Record) <= sorter_.bucket_limit() &&
               bucket.entries <= UINT32_MAX;
    }
    Status load(unsigned b);
    // Reads all of bucket b, its chunks then its tail, into raw_ and ranges_.
    Status read_whole(unsigned b);
    // Reads bucket b's chunks, then its tail, into raw_ a chunk at a time, and calls each with
    // every record.
    template <typename Each>
    Status read_chunks(unsigned b, Each&& each);
    // Parses the records of buf[from, to), calling each with every one: where its header
    // begins, where its key begins, and the three lengths.
    template <typename Each>
    Status parse(const direct_bytes& buf, size_t from, size_t to, Each&& each) const;
    // The same for every record of ranges_ in raw_.
    template <typename Each>
    Status parse_raw(Each&& each) const {
        for (const Range& r : ranges_) MPT_RETURN_IF_ERROR(parse(raw_, r.from, r.to, each));
        return {};
    }
    // The records of the next group with any into records_, sorted; false when none is left.
    Result<bool> next_group();

    const SpillingPairSorter& sorter_;
    unsigned next_bucket_, last_;
    direct_bytes raw_;  // the bucket read, in input order
    std::vector<Range> ranges_;
    // A direct file's next bucket is read into raw_ on a thread of its own while this one's
    // groups are sorted and handed out (the cache reads nothing ahead for such a file).
    std::future<Status> ahead_;
    unsigned ahead_bucket_ = 256;
    direct_bytes groups_;  // its records by their key's second byte (keys shorter than 2 bytes: 0)
    std::array<size_t, 257> group_starts_{};
    unsigned group_ = 256;  // the group that records_ holds
    std::vector<Record> records_;
    size_t at_ = 0;
    std::unique_ptr<SpillingPairSorter> merged_;
};

template <typename Each>
Status SpillingPairSorter::BucketStream::parse(const direct_bytes& buf, size_t from, size_t to,
                                               Each&& each) const {
    const uint8_t* end = buf.data() + to;
    for (const uint8_t* p = buf.data() + from; p != end;) {
        uint64_t len[3] = {};
        size_t took = 0;
        if (end - p >= 3 && ((p[0] | p[1] | p[2]) & 0x80) == 0) {  // a byte each
            len[0] = p[0];
            len[1] = p[1];
            len[2] = p[2];
            took = 3;
        } else {
            for (uint64_t& n : len) {
                const size_t t = get_varint(p + took, end, n);
                took = t == 0 ? 0 : took + t;
                if (t == 0 || n > UINT32_MAX) break;
            }
        }
        if (took == 0 || len[0] > UINT32_MAX || len[1] > UINT32_MAX || len[2] > UINT32_MAX ||
            static_cast<uint64_t>(end - p) - took < len[0] + len[1] + len[2]) {
            return file_error(Errc::storage_io, sorter_.files_->options().tmp_dir,
                              "a temporary file ends inside a record");
        }
        const uint8_t* key = p + took;
        each(static_cast<size_t>(p - buf.data()), static_cast<size_t>(key - buf.data()),
             static_cast<uint32_t>(len[0]), static_cast<uint32_t>(len[1]),
             static_cast<uint32_t>(len[2]));
        p = key + len[0] + len[1] + len[2];
    }
    return {};
}

template <typename Each>
Status SpillingPairSorter::BucketStream::read_chunks(unsigned b, Each&& each) {
    const Bucket& bucket = sorter_.buckets_[b];
    for (const Bucket::Chunk& c : bucket.chunks) {
        if (c.held) {
            raw_.assign(c.held->begin(), c.held->begin() + static_cast<ptrdiff_t>(c.size));
        } else {
            raw_.resize(sorter_.direct_ ? direct_size(c.size) : c.size);
            MPT_RETURN_IF_ERROR(
                sorter_.files_->read(sorter_.fd_of(b), raw_.data(), raw_.size(), c.offset));
        }
        MPT_RETURN_IF_ERROR(parse(raw_, 0, c.size, each));
    }
    raw_.assign(bucket.tail.begin(), bucket.tail.end());
    return parse(raw_, 0, raw_.size(), each);
}

Status SpillingPairSorter::BucketStream::read_whole(unsigned b) {
    const Bucket& bucket = sorter_.buckets_[b];
    // A direct file's chunks are read whole, padding and all.
    const auto room = [direct = sorter_.direct_](const Bucket::Chunk& c) {
        return direct && !c.held ? direct_size(c.size) : c.size;
    };
    size_t size = bucket.tail.size();
    for (const Bucket::Chunk& c : bucket.chunks) size += room(c);
    raw_.resize(size);
    ranges_.clear();
    size_t at = 0;
    for (const Bucket::Chunk& c : bucket.chunks) {
        const size_t n = room(c);
        if (c.held) {
            std::memcpy(raw_.data() + at, c.held->data(), n);
        } else {
            MPT_RETURN_IF_ERROR(
                sorter_.files_->read(sorter_.fd_of(b), raw_.data() + at, n, c.offset));
        }
        if (!ranges_.empty() && ranges_.back().to == at) {
            ranges_.back().to = at + c.size;
        } else {
            ranges_.push_back({at, at + c.size});
        }
        at += n;
    }
    std::memcpy(raw_.data() + at, bucket.tail.data(), bucket.tail.size());
    ranges_.push_back({at, at + bucket.tail.size()});
    return {};
}

Status SpillingPairSorter::BucketStream::load(unsigned b) {
    const Bucket& bucket = sorter_.buckets_[b];
    records_.clear();
    at_ = 0;
    group_ = 256;
    if (bucket.size == 0) return {};
    if (sorter_.released_[b / 16].load()) {
        return Error{Errc::internal, "a spilled sort's records read after they were released"};
    }
    if (ahead_.valid()) {
        // Read ahead: this is the next bucket with records, and nothing else touches raw_.
        MPT_ASSERT(ahead_bucket_ == b);
        MPT_RETURN_IF_ERROR(ahead_.get());
    } else if (!fits(bucket)) {
        ++sorter_.buckets_merged_;
        merged_.reset(new SpillingPairSorter(*sorter_.files_, sorter_.bucket_limit()));
        Status added;
        MPT_RETURN_IF_ERROR(
            read_chunks(b, [&](size_t, size_t at, uint32_t k, uint32_t v, uint32_t x) {
                if (!added.ok()) return;
                const uint8_t* p = raw_.data() + at;
                added = merged_->add({p, k}, {p + k, v}, {p + k + v, x});
            }));
        MPT_RETURN_IF_ERROR(added);
        return merged_->finish();
    } else {
        MPT_RETURN_IF_ERROR(read_whole(b));
    }
    // Counted by second byte, then copied to their group's place, in order.
    const auto group_of = [&](size_t key_at, uint32_t k) -> unsigned {
        return k < 2 ? 0 : raw_[key_at + 1];
    };
    std::array<size_t, 257> next{};
    MPT_RETURN_IF_ERROR(
        parse_raw([&](size_t head, size_t key_at, uint32_t k, uint32_t v, uint32_t x) {
            next[group_of(key_at, k) + 1] += key_at - head + k + v + x;
        }));
    for (size_t g = 1; g <= 256; ++g) next[g] += next[g - 1];
    group_starts_ = next;
    groups_.resize(next[256]);
    MPT_RETURN_IF_ERROR(
        parse_raw([&](size_t head, size_t key_at, uint32_t k, uint32_t v, uint32_t x) {
            const size_t size = key_at - head + k + v + x;
            size_t& to = next[group_of(key_at, k)];
            std::memcpy(groups_.data() + to, raw_.data() + head, size);
            to += size;
        }));
    // raw_ is free again: the next bucket with records goes into it while these are sorted.
    if (sorter_.direct_) {
        unsigned a = next_bucket_;
        while (a < last_ && sorter_.buckets_[a].size == 0) ++a;
        if (a < last_ && fits(sorter_.buckets_[a])) {
            ahead_bucket_ = a;
            ahead_ = std::async(std::launch::async, [this, a] { return read_whole(a); });
        }
    }
    group_ = 0;
    return {};
}

Result<bool> SpillingPairSorter::BucketStream::next_group() {
    while (group_ < 256) {
        const unsigned g = group_++;
        if (group_starts_[g + 1] == group_starts_[g]) continue;
        records_.clear();
        at_ = 0;
        MPT_RETURN_IF_ERROR(parse(groups_, group_starts_[g], group_starts_[g + 1],
                                  [&](size_t, size_t key_at, uint32_t k, uint32_t v, uint32_t x) {
                                      records_.push_back({key_prefix({groups_.data() + key_at, k}),
                                                          key_at, k, v, x,
                                                          static_cast<uint32_t>(records_.size())});
                                  }));
        // The keys share their first two bytes (keys shorter, padded with zeros, too): sorted
        // from the third.
        sort_run(groups_.data(), records_, 40);
        return true;
    }
    return false;
}

Result<std::span<const KvPair>> SpillingPairSorter::BucketStream::next() {
    out_.clear();
    extras_.clear();
    while (out_.empty()) {
        if (merged_) {
            MPT_TRY(const std::span<const KvPair> run, merged_->next());
            if (!run.empty()) {
                out_.assign(run.begin(), run.end());
                extras_.assign(merged_->extras().begin(), merged_->extras().end());
                break;
            }
            merged_.reset();
        }
        emit(groups_.data(), records_, at_, out_, extras_);
        if (!out_.empty() || at_ < records_.size()) continue;
        MPT_TRY(const bool more, next_group());
        if (more) continue;
        if (next_bucket_ == last_) break;
        MPT_RETURN_IF_ERROR(load(next_bucket_++));
    }
    return std::span<const KvPair>(out_);
}

Result<std::unique_ptr<SpilledPairStream>> SpillingPairSorter::stream_of_bytes(
    unsigned first, unsigned last) const {
    using Stream = std::unique_ptr<SpilledPairStream>;
    if (layout_ == Layout::buckets)
        return Stream(std::make_unique<BucketStream>(*this, first, last));
    std::vector<RunFile> views;
    for (const RunFile& r : final_runs_) {
        MPT_TRY(RunFile view, r.view_bytes(first, last));
        views.push_back(std::move(view));
    }
    return Stream(std::make_unique<MergedPairStream>(std::move(views)));
}

Result<std::span<const KvPair>> SpillingPairSorter::next() {
    MPT_ASSERT(finished_);
    if (all_) {
        MPT_TRY(const std::span<const KvPair> run, all_->next());
        extras_.assign(all_->extras().begin(), all_->extras().end());
        return run;
    }
    out_.clear();
    extras_.clear();
    emit(arena_.data(), records_, next_record_, out_, extras_);
    return std::span<const KvPair>(out_);
}

void SpillingPairSorter::emit(const uint8_t* a, const std::vector<Record>& records, size_t& at,
                              std::vector<KvPair>& out, std::vector<bytes_view>& extras) {
    constexpr size_t kBatch = 1024;
    for (; at < records.size() && out.size() < kBatch; ++at) {
        const Record& r = records[at];
        if (r.value_len == 0) continue;
        out.push_back({{a + r.at, r.key_len}, {a + r.at + r.key_len, r.value_len}});
        extras.push_back({a + r.at + r.key_len + r.value_len, r.extra_len});
    }
}

}  // namespace mpt
