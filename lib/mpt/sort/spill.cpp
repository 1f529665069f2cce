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

SpillingPairSorter::SpillingPairSorter(SpillFiles& files, Layout layout)
    : files_(&files),
      layout_(layout),
      run_bytes_(layout == Layout::buckets
                     ? std::min(files.options().run_bytes, files.options().spread_run_bytes)
                     : files.options().run_bytes),
      overlap_(files.options().overlap),
      file_per_nibble_(files.options().file_per_nibble),
      direct_(files.options().direct) {
    // Around the page cache a write waits for the disk: as many runs as the two of the
    // options' size hold, one of them being filled. Through it, one being written is enough.
    if (overlap_ && direct_) {
        max_writing_ =
            std::clamp<size_t>(2 * files.options().run_bytes / run_bytes_, 2, kMaxRunsHeld) - 1;
    }
}

SpillingPairSorter::SpillingPairSorter(SpillFiles& files, size_t run_bytes)
    : files_(&files), layout_(Layout::runs), run_bytes_(run_bytes), overlap_(false) {}

SpillingPairSorter::~SpillingPairSorter() {
    // The other threads use the runs and chunks being written: they end before those go (the
    // runs first: they write chunks).
    run_writes_.wait();
    chunk_writes_.wait();
    // A file is not given back (for another sort to fill) while it is being emptied.
    for (const std::future<void>& r : releases_) r.wait();
    for (const BucketFile& f : bucket_files_) files_->give_back(f.fd);
}

Status SpillingPairSorter::add(bytes_view key, bytes_view value, bytes_view extra) {
    MPT_ASSERT(!finished_);
    if (records_.capacity() == 0) reserve_run(arena_, records_);
    const size_t size = key.size() + value.size() + extra.size();
    if (!records_.empty() &&
        arena_.size() + size + (records_.size() + 1) * sizeof(Record) > run_bytes_) {
        MPT_RETURN_IF_ERROR(spill());
    }
    records_.push_back({key_prefix(key), arena_.size(), static_cast<uint32_t>(key.size()),
                        static_cast<uint32_t>(value.size()), static_cast<uint32_t>(extra.size()),
                        static_cast<uint32_t>(records_.size())});
    arena_.insert(arena_.end(), key.begin(), key.end());
    arena_.insert(arena_.end(), value.begin(), value.end());
    arena_.insert(arena_.end(), extra.begin(), extra.end());
    ++entries_;
    return {};
}

// Reserved once, so that growing never holds two copies; only what is used is touched. On
// huge pages: a run's sort and its write read it all over, and with pages of 4 KiB most of
// those reads would miss the TLB too.
void SpillingPairSorter::reserve_run(bytes& arena, std::vector<Record>& records) const {
    arena.reserve(run_bytes_);
    records.reserve(run_bytes_ / sizeof(Record) + 1);
    advise_huge_pages(arena.data(), arena.capacity());
    advise_huge_pages(records.data(), records.capacity() * sizeof(Record));
}

namespace {

// Orders records[begin, end) by the byte of their keys' prefix at bit shift (56: the first
// byte) in place, and returns where each byte's records end (offsets into records): a pass
// that leaves parts small enough for the cache to sort.
template <typename Record>
std::array<size_t, 256> bucket_by_byte(std::vector<Record>& records, size_t begin, size_t end,
                                       int shift) {
    std::array<size_t, 256> ends{};
    for (size_t i = begin; i < end; ++i) ++ends[(records[i].prefix >> shift) & 0xff];
    std::array<size_t, 256> next{};
    size_t at = begin;
    for (size_t b = 0; b < 256; ++b) {
        next[b] = at;
        at += ends[b];
        ends[b] = at;
    }
    for (size_t b = 0; b < 256; ++b) {
        while (next[b] < ends[b]) {
            Record& r = records[next[b]];
            const size_t home = (r.prefix >> shift) & 0xff;
            if (home == b) {
                ++next[b];
            } else {
                std::swap(r, records[next[home]++]);
            }
        }
    }
    return ends;
}

}  // namespace

void SpillingPairSorter::sort_run(const uint8_t* a, std::vector<Record>& records, int shift) {
    const auto less = [a](const Record& x, const Record& y) {
        if (x.prefix != y.prefix) return x.prefix < y.prefix;
        const int c = compare_bytes({a + x.at, x.key_len}, {a + y.at, y.key_len});
        return c != 0 ? c < 0 : x.seq < y.seq;
    };
    // By the key's bytes one at a time from the first, each part of more than kSmall records
    // bucketed by its next byte in place, then compared: hashed keys leave parts of a few
    // records after two bytes in a run of a few million, after three in one of tens of
    // millions.
    constexpr size_t kSmall = 64;
    const auto sort = [&](const auto& self, size_t begin, size_t end, int shift) -> void {
        if (end - begin <= kSmall || shift < 0) {
            std::sort(records.begin() + static_cast<ptrdiff_t>(begin),
                      records.begin() + static_cast<ptrdiff_t>(end), less);
            return;
        }
        const std::array<size_t, 256> ends = bucket_by_byte(records, begin, end, shift);
        for (size_t b = 0, from = begin; b < 256; from = ends[b++]) {
            if (ends[b] - from > 1) self(self, from, ends[b], shift - 8);
        }
    };
    sort(sort, 0, records.size(), shift);
    size_t out = 0;
    for (size_t i = 0; i < records.size(); ++i) {
        const Record& r = records[i];
        const bool last_of_key =
            i + 1 == records.size() || records[i + 1].prefix != r.prefix ||
            !bytes_equal({a + r.at, r.key_len}, {a + records[i + 1].at, records[i + 1].key_len});
        if (last_of_key) records[out++] = r;
    }
    records.resize(out);
}

// Writes the run as it stands, deletions kept (they hide earlier runs' writes). A record's
// value in the file is the pair's value length (4 bytes, little-endian), the value and the
// extra bytes.
Result<RunFile> SpillingPairSorter::write_run(SpillFiles& files, const bytes& arena,
                                              const std::vector<Record>& records) {
    MPT_TRY(RunFile run, RunFile::create(files));
    // The records are read in key order from all over the arena: each is fetched ahead of
    // its turn, or the copies wait on memory.
    constexpr size_t kAhead = 16;
    const uint8_t* a = arena.data();
    for (size_t i = 0; i < records.size(); ++i) {
        if (i + kAhead < records.size()) {
            const Record& ahead = records[i + kAhead];
            const size_t size = size_t{ahead.key_len} + ahead.value_len + ahead.extra_len;
            __builtin_prefetch(a + ahead.at);
            if (size > 1) __builtin_prefetch(a + ahead.at + size - 1);
        }
        const Record& r = records[i];
        uint8_t head[4];
        for (int b = 0; b < 4; ++b) head[b] = static_cast<uint8_t>(r.value_len >> (8 * b));
        MPT_RETURN_IF_ERROR(run.add({a + r.at, r.key_len}, {head, 4},
                                    {a + r.at + r.key_len, r.value_len + r.extra_len}));
    }
    MPT_RETURN_IF_ERROR(run.finish());
    return run;
}

Status SpillingPairSorter::write_out(const bytes& arena, std::vector<Record>& records) {
    if (layout_ == Layout::buckets) return spread(arena, records, false);
    sort_run(arena.data(), records);
    MPT_TRY(RunFile run, write_run(*files_, arena, records));
    runs_.push_back(std::move(run));
    return {};
}

namespace {

// A bucket record's header: the key's, the value's and the extra's lengths, a byte each when
// all three are under 0x80 (most records), else LEB128 numbers. Its size, and the header
// written at p (at most kBucketHeaderMax bytes), returning the bytes it took.
constexpr size_t kBucketHeaderMax = 30;

size_t varint_size(uint64_t v) noexcept {
    size_t n = 1;
    for (; v >= 0x80; v >>= 7) ++n;
    return n;
}

size_t bucket_header_size(uint32_t k, uint32_t v, uint32_t x) noexcept {
    return (k | v | x) < 0x80 ? 3 : varint_size(k) + varint_size(v) + varint_size(x);
}

size_t put_bucket_header(uint8_t* p, uint32_t k, uint32_t v, uint32_t x) noexcept {
    if ((k | v | x) < 0x80) {
        p[0] = static_cast<uint8_t>(k);
        p[1] = static_cast<uint8_t>(v);
        p[2] = static_cast<uint8_t>(x);
        return 3;
    }
    size_t n = put_varint(p, k);
    n += put_varint(p + n, v);
    return n + put_varint(p + n, x);
}

}  // namespace

// Appends each record, in input order, to the bucket of its key's first byte (the empty
// key's: 0); a bucket's buffer goes to the end of the file as a chunk when full. The last
// run (keep) goes to no chunk: each bucket's buffer is grown, once, to hold all of its
// records, so that run is never written and read back, and the first pass ends without
// waiting for its write. Its buffers take no more than the run's arena they replace, which
// is freed after.
Status SpillingPairSorter::spread(const bytes& arena, const std::vector<Record>& records,
                                  bool keep) {
    const size_t chunk = std::max<size_t>(files_->options().chunk_bytes, 1);
    const uint8_t* a = arena.data();
    const auto first_byte = [a](const Record& r) -> size_t { return r.key_len == 0 ? 0 : a[r.at]; };
    if (keep) {
        std::array<size_t, 256> need{};
        for (const Record& r : records) {
            need[first_byte(r)] += bucket_header_size(r.key_len, r.value_len, r.extra_len) +
                                   r.key_len + r.value_len + r.extra_len;
        }
        for (size_t b = 0; b < 256; ++b) {
            if (need[b] != 0) buckets_[b].tail.reserve(buckets_[b].tail.size() + need[b]);
        }
    }
    for (const Record& r : records) {
        const size_t b = first_byte(r);
        Bucket& bucket = buckets_[b];
        const size_t body = size_t{r.key_len} + r.value_len + r.extra_len;
        // A chunk ends before the record that would take it past chunk_bytes, so that the
        // buffer never grows past its first size (a record larger is a chunk of its own).
        // Bucket b's first chunk ends at (b + 1) / 256 of that: buckets that fill at one rate
        // (keys hashed) then send their chunks to the disk one after another, not all at once
        // while the disk waits in between.
        const size_t limit =
            bucket.chunks.empty() ? std::max<size_t>(chunk * (b + 1) / 256, 1) : chunk;
        if (!keep && !bucket.tail.empty() && bucket.tail.size() + kBucketHeaderMax + body > limit) {
            MPT_RETURN_IF_ERROR(flush_bucket(b));
        }
        // Room for the padding of a direct file's chunk, too.
        if (bucket.tail.capacity() == 0) bucket.tail.reserve(chunk + (direct_ ? kDirectAlign : 0));
        const size_t at = bucket.tail.size();
        const size_t head = bucket_header_size(r.key_len, r.value_len, r.extra_len);
        bucket.tail.resize(at + head + body);
        uint8_t* p = bucket.tail.data() + at;
        put_bucket_header(p, r.key_len, r.value_len, r.extra_len);
        std::memcpy(p + head, a + r.at, body);
        bucket.size += head + body;
        ++bucket.entries;
    }
    return {};
}

template <typename Buffer>
std::unique_ptr<Buffer> SpillingPairSorter::Writes<Buffer>::take() {
    if (spare.empty()) return std::make_unique<Buffer>();
    std::unique_ptr<Buffer> b = std::move(spare.back());
    spare.pop_back();
    return b;
}

template <typename Buffer>
Status SpillingPairSorter::Writes<Buffer>::wait_oldest() {
    Write w = std::move(pending.front());
    pending.pop_front();
    Status s = w.done.get();
    spare.push_back(std::move(w.buffer));
    return s;
}

template <typename Buffer>
Status SpillingPairSorter::Writes<Buffer>::wait_all() {
    Status first;
    while (!pending.empty()) {
        Status s = wait_oldest();
        if (first.ok() && !s.ok()) first = std::move(s);
    }
    return first;
}

Status SpillingPairSorter::flush_bucket(size_t b) {
    Bucket& bucket = buckets_[b];
    const size_t size = bucket.tail.size();
    if (held_bytes_ + size <= files_->options().hold_bytes) {
        held_bytes_ += size;
        auto held = std::make_unique<direct_bytes>();
        held->swap(bucket.tail);
        bucket.chunks.push_back({0, size, std::move(held)});
        return {};
    }
    BucketFile& file = file_of(b);
    if (file.fd < 0) {
        const bool first = std::all_of(bucket_files_.begin(), bucket_files_.end(),
                                       [](const BucketFile& f) { return f.fd < 0; });
        MPT_TRY(file.fd, files_->make_file());
        // The first file decides: a file that is then refused goes through the cache, its
        // chunks padded all the same.
        const bool direct = direct_ && SpillFiles::make_direct(file.fd);
        if (first) direct_ = direct;
    }
    if (direct_) {
        // Zeros, never read as records.
        bucket.tail.resize(direct_size(size));
        std::memset(bucket.tail.data() + size, 0, bucket.tail.size() - size);
    }
    const uint64_t at = file.end;
    if (!direct_) {
        MPT_RETURN_IF_ERROR(files_->write(file.fd, {bucket.tail.data(), bucket.tail.size()}, at));
        bucket.chunks.push_back({at, size, nullptr});
        file.end += bucket.tail.size();
        bucket.tail.clear();
        return {};
    }
    // Around the cache a write waits for the disk: it goes on a thread of its own, a few at
    // once, and the bucket fills a buffer written before. Its place in the file is taken now.
    while (chunk_writes_.pending.size() >= kChunkWrites) {
        MPT_RETURN_IF_ERROR(chunk_writes_.wait_oldest());
    }
    std::unique_ptr<direct_bytes> chunk = chunk_writes_.take();
    chunk->swap(bucket.tail);
    bucket.tail.clear();
    bucket.chunks.push_back({at, size, nullptr});
    file.end += chunk->size();
    const direct_bytes* data = chunk.get();
    const int fd = file.fd;
    SpillFiles* files = files_;
    const auto write = [files, fd, data, at] {
        return files->write(fd, {data->data(), data->size()}, at);
    };
    chunk_writes_.pending.push_back(
        {std::move(chunk), std::async(std::launch::async, write).share()});
    return {};
}

bool SpillingPairSorter::direct_file() const noexcept {
    bool any = false;
    for (const BucketFile& f : bucket_files_) {
        if (f.fd < 0) continue;
        const int flags = ::fcntl(f.fd, F_GETFL);
        if (flags < 0 || (flags & O_DIRECT) == 0) return false;
        any = true;
    }
    return any;
}

size_t SpillingPairSorter::bucket_limit() const noexcept {
    const size_t limit = files_->options().bucket_bytes;
    return limit != 0 ? limit : std::max<size_t>(files_->options().run_bytes / 2, 1);
}

Status SpillingPairSorter::spill_here() {
    ++spilled_;
    MPT_RETURN_IF_ERROR(write_out(arena_, records_));
    records_.clear();
    arena_.clear();
    return {};
}

Status SpillingPairSorter::spill() {
    if (!overlap_) return spill_here();
    ++spilled_;
    // Past max_writing_ runs being written the oldest is waited for. The next run fills the
    // buffers of one written; the first times, new ones reserved here, as the add that called
    // this has passed its own reserve.
    while (run_writes_.pending.size() >= max_writing_) {
        MPT_RETURN_IF_ERROR(run_writes_.wait_oldest());
    }
    std::unique_ptr<Run> run = run_writes_.take();
    run->arena.swap(arena_);
    run->records.swap(records_);
    arena_.clear();
    records_.clear();
    if (records_.capacity() == 0) reserve_run(arena_, records_);
    // Written after the run before it, and not at all after its error.
    std::shared_future<Status> before;
    if (!run_writes_.pending.empty()) before = run_writes_.pending.back().done;
    Run* r = run.get();
    const auto write = [this, r, before]() -> Status {
        if (before.valid() && !before.get().ok()) return before.get();
        return write_out(r->arena, r->records);
    };
    run_writes_.pending.push_back({std::move(run), std::async(std::launch::async, write).share()});
    return {};
}

Status SpillingPairSorter::finish() {
    MPT_ASSERT(!finished_);
    finished_ = true;
    if (spilled_ == 0) {
        sort_run(arena_.data(), records_);
        return {};
    }
    MPT_RETURN_IF_ERROR(run_writes_.wait_all());
    // The runs written are given back before the last is spread or written; the chunks are
    // on the disk before a bucket is read.
    run_writes_.spare.clear();
    MPT_RETURN_IF_ERROR(chunk_writes_.wait_all());
    chunk_writes_.spare.clear();
    if (!records_.empty()) {
        if (layout_ == Layout::buckets) {
            ++spilled_;
            MPT_RETURN_IF_ERROR(spread(arena_, records_, true));
        } else {
            MPT_RETURN_IF_ERROR(spill_here());
        }
    }
    // What the runs held in memory is given back before the merge.
    bytes().swap(arena_);
    std::vector<Record>().swap(records_);
    if (layout_ == Layout::runs) {
        MPT_TRY(final_runs_, merge_to_fan_in(*files_, std::move(runs_)));
    }
    MPT_TRY(all_, stream_of_bytes(0, 256));
    return {};
}

unsigned SpillingPairSorter::starts_used(unsigned width) const noexcept {
    unsigned used = 0;
    for (unsigned x = 0; x < 256; x += width) {
        if (layout_ == Layout::buckets) {
            used += std::any_of(buckets_.begin() + x, buckets_.begin() + x + width,
                                [](const Bucket& b) { return b.size != 0; });
        } else {
            used += std::any_of(final_runs_.begin(), final_runs_.end(),
                                [&](const RunFile& r) { return r.has_bytes(x, x + width); });
        }
    }
    return used;
}

void SpillingPairSorter::release_nibble(unsigned v) const {
    MPT_ASSERT(finished_ && v < 16);
    const std::lock_guard lock(release_mu_);
    released_[v].store(true);
    const int fd = fd_of(16 * v);
    if (layout_ != Layout::buckets || fd < 0) return;
    if (!file_per_nibble_ && !std::all_of(released_.begin(), released_.end(),
                                          [](const std::atomic<bool>& r) { return r.load(); })) {
        return;
    }
    // Emptied as give_back empties it, which is then quick.
    releases_.push_back(std::async(std::launch::async, [fd] { (void)::ftruncate(fd, 0); }));
}

unsigned SpillingPairSorter::nibbles_used() const noexcept { return starts_used(16); }

unsigned SpillingPairSorter::bytes_used() const noexcept { return starts_used(1); }

Result<std::unique_ptr<SpilledPairStream>> SpillingPairSorter::nibble_stream(unsigned v) const {
    MPT_ASSERT(finished_ && v < 16);
    return stream_of_bytes(16 * v, 16 * v + 16);
}

Result<std::unique_ptr<SpilledPairStream>> SpillingPairSorter::byte_stream(unsigned b) const {
    MPT_ASSERT(finished_ && b < 256);
    return stream_of_bytes(b, b + 1);
}

}  // namespace mpt
