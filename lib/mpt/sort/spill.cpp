#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mpt/input/kv_input.hpp>
#include <mpt/sort/spill.hpp>
#include <utility>

namespace mpt {
namespace {

// A record in a run file: the key's length and the value's as LEB128 numbers, then the bytes.
// Writes v at p (at most 10 bytes) and returns the bytes it took.
size_t put_varint(uint8_t* p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    p[n++] = static_cast<uint8_t>(v);
    return n;
}

// Reads a number at p, at most end - p bytes; the bytes it took, 0 when incomplete.
size_t get_varint(const uint8_t* p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (size_t i = 0; p + i < end && i < 10; ++i) {
        v |= uint64_t{p[i] & 0x7fu} << (7 * i);
        if ((p[i] & 0x80) == 0) return i + 1;
    }
    return 0;
}

}  // namespace

using kv_detail::key_prefix;

SpillOptions SpillOptions::for_memory(size_t memory, std::string tmp_dir) {
    MPT_ASSERT(memory > 0);
    SpillOptions o;
    o.run_bytes = std::max<size_t>(memory / 2, 1);
    o.buffer_bytes = std::clamp<size_t>(memory / 256, 4096, size_t{1} << 20);
    // The buffers of a merge take at most a quarter of the budget.
    o.fan_in = std::clamp<size_t>(memory / 4 / o.buffer_bytes, 2, 256);
    o.chunk_bytes = std::clamp<size_t>(memory / 4096, 256, size_t{1} << 20);
    o.direct = o.chunk_bytes >= size_t{64} << 10;
    o.tmp_dir = std::move(tmp_dir);
    return o;
}

SpillFiles::SpillFiles(const SpillOptions& o) : o_(o) {
    if (o_.keep_free) {
        keep_free_ = *o_.keep_free;
        return;
    }
    struct statvfs fs {};
    const std::string& dir = o_.tmp_dir.empty() ? std::string("/tmp") : o_.tmp_dir;
    if (::statvfs(dir.c_str(), &fs) != 0) return;  // make_file will say why
    // Half of what is free now at most, so that a disk nearly full already still takes a
    // small spill.
    keep_free_ = std::min({kKeepFreeMax, uint64_t{fs.f_blocks} * fs.f_frsize / 20,
                           uint64_t{fs.f_bavail} * fs.f_frsize / 2});
}

Status SpillFiles::check_room(int fd, size_t n) const {
    if (keep_free_ == 0) return {};
    struct statvfs fs {};
    if (::fstatvfs(fd, &fs) != 0) return {};  // the write will tell
    const uint64_t free = uint64_t{fs.f_bavail} * fs.f_frsize;
    if (free >= keep_free_ && free - keep_free_ >= n) return {};
    const auto kib = [](uint64_t b) { return std::to_string(b >> 10) + " KiB"; };
    return file_error(Errc::storage_full, o_.tmp_dir.empty() ? "/tmp" : o_.tmp_dir,
                      "temporary files stopped with " + kib(free) + " free: " + kib(keep_free_) +
                          " are kept free on this file system (TMPDIR or --tmp names another "
                          "folder)");
}

Error SpillFiles::error(const char* what, int err) const {
    const Errc code = err == ENOSPC || err == EDQUOT ? Errc::storage_full : Errc::storage_io;
    return file_error(code, o_.tmp_dir,
                      std::string(what) + " a temporary file: " + std::strerror(err));
}

namespace {

// The most files a SpillFiles keeps for reuse; past it, a file given back is closed. A merge
// gives back at most its fan-in (256 at most) at once.
constexpr size_t kFreeFilesMax = 256;

// Whether fd now goes through the page cache, made so if it went around it: after a transfer
// failed with EINVAL, perhaps as a direct one (another thread may have made it so), so that
// the transfer may be made again, once; and for a file given back.
bool make_buffered(int fd) noexcept {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ((flags & O_DIRECT) == 0 || ::fcntl(fd, F_SETFL, flags & ~O_DIRECT) == 0);
}

size_t direct_size(size_t n) noexcept {
    return (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
}

}  // namespace

SpillFiles::~SpillFiles() {
    for (const int fd : free_) ::close(fd);
}

void SpillFiles::give_back(int fd) noexcept {
    if (fd < 0) return;
    // Emptied (its blocks freed now, as closing would) and read and written through the
    // cache, as a new file is.
    if (::ftruncate(fd, 0) == 0 && make_buffered(fd)) {
        const std::lock_guard lock(free_mu_);
        if (free_.size() < kFreeFilesMax) {
            free_.push_back(fd);
            return;
        }
    }
    ::close(fd);
}

Result<int> SpillFiles::make_file() {
    {
        const std::lock_guard lock(free_mu_);
        if (!free_.empty()) {
            const int fd = free_.back();
            free_.pop_back();
            return fd;
        }
    }
    const std::string& dir = o_.tmp_dir.empty() ? std::string("/tmp") : o_.tmp_dir;
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        // No unnamed files here: a named one, unlinked before anything is written to it.
        std::string name = dir + "/mpt-spill-XXXXXX";
        fd = ::mkostemp(name.data(), O_CLOEXEC);
        if (fd >= 0) ::unlink(name.c_str());
    }
    if (fd < 0) return error("cannot make", errno);
    ++files_;
    return fd;
}

bool SpillFiles::make_direct(int fd) noexcept {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_DIRECT) == 0;
}

Status SpillFiles::write(int fd, bytes_view data, uint64_t offset) {
    if (o_.fail_write != 0 && writes_.fetch_add(1) + 1 == o_.fail_write)
        return error("cannot write", ENOSPC);
    MPT_RETURN_IF_ERROR(check_room(fd, data.size()));
    for (bool again = true; !data.empty();) {
        const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL && std::exchange(again, false) && make_buffered(fd)) continue;
        if (n <= 0) return error("cannot write", n < 0 ? errno : ENOSPC);
        data = data.subspan(static_cast<size_t>(n));
        offset += static_cast<uint64_t>(n);
        bytes_written_ += static_cast<uint64_t>(n);
    }
    return {};
}

Status SpillFiles::read(int fd, uint8_t* p, size_t n, uint64_t offset) const {
    for (bool again = true; n > 0;) {
        const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && errno == EINVAL && std::exchange(again, false) && make_buffered(fd))
            continue;
        if (got <= 0) {
            return file_error(Errc::storage_io, o_.tmp_dir,
                              std::string("cannot read a temporary file: ") +
                                  std::strerror(got < 0 ? errno : EIO));
        }
        p += got;
        n -= static_cast<size_t>(got);
        offset += static_cast<uint64_t>(got);
    }
    return {};
}

Result<RunFile> RunFile::create(SpillFiles& files) {
    MPT_TRY(const int fd, files.make_file());
    RunFile run(files, fd);
    run.buf_.reserve(files.options().buffer_bytes);
    return run;
}

RunFile::RunFile(RunFile&& other) noexcept
    : files_(other.files_),
      fd_(std::exchange(other.fd_, -1)),
      view_(other.view_),
      buf_(std::move(other.buf_)),
      at_(other.at_),
      offset_(other.offset_),
      size_(other.size_),
      records_(other.records_),
      starts_(other.starts_),
      bytes_started_(other.bytes_started_) {}

RunFile& RunFile::operator=(RunFile&& other) noexcept {
    if (this != &other) {
        release();
        files_ = other.files_;
        fd_ = std::exchange(other.fd_, -1);
        view_ = other.view_;
        buf_ = std::move(other.buf_);
        at_ = other.at_;
        offset_ = other.offset_;
        size_ = other.size_;
        records_ = other.records_;
        starts_ = other.starts_;
        bytes_started_ = other.bytes_started_;
    }
    return *this;
}

RunFile::~RunFile() { release(); }

void RunFile::release() noexcept {
    if (fd_ < 0) return;
    // A view's descriptor shares the file with the run's, whose data emptying it would take
    // from under the run and its other views.
    if (view_) {
        ::close(fd_);
    } else {
        files_->give_back(fd_);
    }
    fd_ = -1;
}

Status RunFile::flush() {
    MPT_RETURN_IF_ERROR(files_->write(fd_, buf_, offset_));
    offset_ += buf_.size();
    buf_.clear();
    return {};
}

Status RunFile::add(bytes_view key, bytes_view value) { return add(key, {}, value); }

Status RunFile::add(bytes_view key, bytes_view value_head, bytes_view value_tail) {
    const int first = key.empty() ? 0 : key[0];
    while (bytes_started_ <= first) starts_[bytes_started_++] = offset_ + buf_.size();
    const size_t value_len = value_head.size() + value_tail.size();
    // Sized once and filled by copies: a record is written where it goes, in one pass.
    const size_t at = buf_.size();
    buf_.resize(at + 20 + key.size() + value_len);
    uint8_t* p = buf_.data() + at;
    p += put_varint(p, key.size());
    p += put_varint(p, value_len);
    std::memcpy(p, key.data(), key.size());
    p += key.size();
    if (!value_head.empty()) std::memcpy(p, value_head.data(), value_head.size());
    p += value_head.size();
    if (!value_tail.empty()) std::memcpy(p, value_tail.data(), value_tail.size());
    p += value_tail.size();
    buf_.resize(static_cast<size_t>(p - buf_.data()));
    ++records_;
    if (buf_.size() >= files_->options().buffer_bytes) return flush();
    return {};
}

Status RunFile::finish() {
    MPT_RETURN_IF_ERROR(flush());
    while (bytes_started_ <= 256) starts_[bytes_started_++] = offset_;
    size_ = offset_;
    offset_ = 0;
    at_ = 0;
    buf_.shrink_to_fit();
    return {};
}

// Keeps buf_[at_, at_ + need) in memory, reading on from offset_.
Status RunFile::fill(size_t need) {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(at_));
    at_ = 0;
    const size_t want = std::max(need, files_->options().buffer_bytes);
    if (buf_.size() < want && offset_ < size_) {
        const size_t have = buf_.size();
        const size_t n = static_cast<size_t>(std::min<uint64_t>(want - have, size_ - offset_));
        buf_.resize(have + n);
        Status read = files_->read(fd_, buf_.data() + have, n, offset_);
        if (!read.ok()) {
            buf_.resize(have);
            return read;
        }
        offset_ += n;
    }
    return {};
}

Result<bool> RunFile::next(bytes_view& key, bytes_view& value) {
    for (int attempt = 0;; ++attempt) {
        const uint8_t* p = buf_.data() + at_;
        const uint8_t* end = buf_.data() + buf_.size();
        uint64_t klen = 0, vlen = 0;
        const size_t a = get_varint(p, end, klen);
        const size_t b = a == 0 ? 0 : get_varint(p + a, end, vlen);
        if (b != 0 && static_cast<uint64_t>(end - p) - a - b >= klen + vlen) {
            key = {p + a + b, static_cast<size_t>(klen)};
            value = {p + a + b + klen, static_cast<size_t>(vlen)};
            at_ += a + b + static_cast<size_t>(klen + vlen);
            return true;
        }
        if (at_ == buf_.size() && offset_ == size_) return false;
        if (attempt == 2) {
            return file_error(Errc::storage_io, files_->options().tmp_dir,
                              "a temporary file ends inside a record");
        }
        // The first pass reads the numbers in; the second, the whole record.
        MPT_RETURN_IF_ERROR(fill(b == 0 ? 20 : a + b + static_cast<size_t>(klen + vlen)));
    }
}

Result<RunFile> RunFile::view_bytes(unsigned first, unsigned last) const {
    MPT_ASSERT(first <= last && last <= 256);
    const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        return file_error(
            Errc::storage_io, files_->options().tmp_dir,
            std::string("cannot open a temporary file again: ") + std::strerror(errno));
    }
    RunFile v(*files_, fd);
    v.view_ = true;
    v.offset_ = starts_[first];
    v.size_ = starts_[last];
    v.records_ = 0;
    v.starts_ = starts_;
    v.bytes_started_ = 257;
    return v;
}

RunMerger::RunMerger(std::vector<RunFile> runs) : runs_(std::move(runs)), heads_(runs_.size()) {}

bool RunMerger::before(size_t a, size_t b) const noexcept {
    const Head& x = heads_[a];
    const Head& y = heads_[b];
    if (x.done || y.done) return !x.done && y.done;
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    const int c = compare_bytes(x.key, y.key);
    return c != 0 ? c < 0 : a > b;  // equal keys: the later run first
}

Result<std::span<const KvPair>> RunMerger::next() {
    const size_t k = runs_.size();
    if (k == 0) return std::span<const KvPair>();
    if (!started_) {
        started_ = true;
        for (size_t r = 0; r < k; ++r) {
            MPT_TRY(const bool has, runs_[r].next(heads_[r].key, heads_[r].value));
            heads_[r].prefix = key_prefix(heads_[r].key);
            heads_[r].done = !has;
        }
        // The matches played from the leaves up: winner[i] won at node i.
        std::vector<size_t> winner(2 * k);
        tree_.assign(k, 0);
        for (size_t r = 0; r < k; ++r) winner[k + r] = r;
        for (size_t i = k; i-- > 1;) {
            const size_t l = winner[2 * i], r = winner[2 * i + 1];
            const bool left = before(l, r);
            winner[i] = left ? l : r;
            tree_[i] = left ? r : l;
        }
        tree_[0] = k == 1 ? 0 : winner[1];
    }
    batch_.clear();
    batch_bytes_.clear();
    // Offsets first: batch_bytes_ may move as it grows.
    spans_.clear();
    constexpr size_t kBatch = 1024;
    while (!heads_[tree_[0]].done && spans_.size() < kBatch) {
        const Head h = heads_[tree_[0]];
        const size_t key_at = batch_bytes_.size();
        batch_bytes_.insert(batch_bytes_.end(), h.key.begin(), h.key.end());
        batch_bytes_.insert(batch_bytes_.end(), h.value.begin(), h.value.end());
        spans_.push_back({key_at, h.key.size(), h.value.size()});
        // The same key in earlier runs: older writes, dropped. The run's buffer is read on,
        // so the key is compared in its copy.
        MPT_RETURN_IF_ERROR(advance());
        while (!heads_[tree_[0]].done &&
               bytes_equal(heads_[tree_[0]].key,
                           bytes_view(batch_bytes_.data() + key_at, h.key.size()))) {
            MPT_RETURN_IF_ERROR(advance());
        }
    }
    for (const Span& s : spans_) {
        const uint8_t* k = batch_bytes_.data() + s.at;
        batch_.push_back({{k, s.key_len}, {k + s.key_len, s.value_len}});
    }
    return std::span<const KvPair>(batch_);
}

Status RunMerger::advance() {
    const size_t k = runs_.size();
    size_t run = tree_[0];
    Head& h = heads_[run];
    MPT_TRY(const bool has, runs_[run].next(h.key, h.value));
    h.prefix = key_prefix(h.key);
    h.done = !has;
    for (size_t node = (k + run) / 2; node >= 1; node /= 2) {
        if (before(tree_[node], run)) std::swap(tree_[node], run);
    }
    tree_[0] = run;
    return {};
}

Result<std::vector<RunFile>> merge_to_fan_in(SpillFiles& files, std::vector<RunFile> runs) {
    const size_t fan_in = std::max<size_t>(files.options().fan_in, 2);
    while (runs.size() > fan_in) {
        std::vector<RunFile> merged;
        for (size_t first = 0; first < runs.size(); first += fan_in) {
            const size_t last = std::min(runs.size(), first + fan_in);
            if (last - first == 1) {
                merged.push_back(std::move(runs[first]));
                continue;
            }
            std::vector<RunFile> group;
            for (size_t r = first; r < last; ++r) group.push_back(std::move(runs[r]));
            RunMerger m(std::move(group));
            MPT_TRY(RunFile out, RunFile::create(files));
            while (true) {
                MPT_TRY(const std::span<const KvPair> batch, m.next());
                if (batch.empty()) break;
                for (const KvPair& p : batch) MPT_RETURN_IF_ERROR(out.add(p.key, p.value));
            }
            MPT_RETURN_IF_ERROR(out.finish());
            merged.push_back(std::move(out));
        }
        runs = std::move(merged);
    }
    return runs;
}

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

SpillingPairSorter::SpillingPairSorter(SpillFiles& files, Layout layout)
    : files_(&files),
      layout_(layout),
      run_bytes_(files.options().run_bytes),
      overlap_(files.options().overlap),
      direct_(files.options().direct) {}

SpillingPairSorter::SpillingPairSorter(SpillFiles& files, size_t run_bytes)
    : files_(&files), layout_(Layout::runs), run_bytes_(run_bytes), overlap_(false) {}

SpillingPairSorter::~SpillingPairSorter() {
    // The other thread uses the back run: it ends before they go.
    if (back_.valid()) back_.wait();
    if (bucket_fd_ >= 0) files_->give_back(bucket_fd_);
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
        Bucket& bucket = buckets_[first_byte(r)];
        const size_t body = size_t{r.key_len} + r.value_len + r.extra_len;
        // A chunk ends before the record that would take it past chunk_bytes, so that the
        // buffer never grows past its first size (a record larger is a chunk of its own).
        if (!keep && !bucket.tail.empty() && bucket.tail.size() + kBucketHeaderMax + body > chunk) {
            MPT_RETURN_IF_ERROR(flush_bucket(bucket));
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

Status SpillingPairSorter::flush_bucket(Bucket& bucket) {
    if (bucket_fd_ < 0) {
        MPT_TRY(bucket_fd_, files_->make_file());
        direct_ = direct_ && SpillFiles::make_direct(bucket_fd_);
    }
    const size_t size = bucket.tail.size();
    if (direct_) bucket.tail.resize(direct_size(size));  // zeros, never read as records
    MPT_RETURN_IF_ERROR(
        files_->write(bucket_fd_, {bucket.tail.data(), bucket.tail.size()}, bucket_end_));
    bucket.chunks.push_back({bucket_end_, size});
    bucket_end_ += bucket.tail.size();
    bucket.tail.clear();
    return {};
}

bool SpillingPairSorter::direct_file() const noexcept {
    if (bucket_fd_ < 0) return false;
    const int flags = ::fcntl(bucket_fd_, F_GETFL);
    return flags >= 0 && (flags & O_DIRECT) != 0;
}

size_t SpillingPairSorter::bucket_limit() const noexcept {
    const size_t limit = files_->options().bucket_bytes;
    return limit != 0 ? limit : std::max<size_t>(run_bytes_ / 2, 1);
}

Status SpillingPairSorter::collect() {
    if (!back_.valid()) return {};
    return back_.get();
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
    // The run before this one is written by now, or is waited for: two at most in memory.
    // The next run fills the buffers that run had; the first time, reserved here, as the add
    // that called this has passed its own reserve.
    MPT_RETURN_IF_ERROR(collect());
    back_arena_.swap(arena_);
    back_records_.swap(records_);
    arena_.clear();
    records_.clear();
    if (records_.capacity() == 0) reserve_run(arena_, records_);
    back_ = std::async(std::launch::async,
                       [this]() -> Status { return write_out(back_arena_, back_records_); });
    return {};
}

Status SpillingPairSorter::finish() {
    MPT_ASSERT(!finished_);
    finished_ = true;
    if (spilled_ == 0) {
        sort_run(arena_.data(), records_);
        return {};
    }
    MPT_RETURN_IF_ERROR(collect());
    // The run written last is given back before the last is spread or written.
    bytes().swap(back_arena_);
    std::vector<Record>().swap(back_records_);
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
    // Reads bucket's chunks, then its tail, into raw_ a chunk at a time, and calls each with
    // every record.
    template <typename Each>
    Status read_chunks(const Bucket& bucket, Each&& each);
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
Status SpillingPairSorter::BucketStream::read_chunks(const Bucket& bucket, Each&& each) {
    for (const Bucket::Chunk& c : bucket.chunks) {
        raw_.resize(sorter_.direct_ ? direct_size(c.size) : c.size);
        MPT_RETURN_IF_ERROR(
            sorter_.files_->read(sorter_.bucket_fd_, raw_.data(), raw_.size(), c.offset));
        MPT_RETURN_IF_ERROR(parse(raw_, 0, c.size, each));
    }
    raw_.assign(bucket.tail.begin(), bucket.tail.end());
    return parse(raw_, 0, raw_.size(), each);
}

Status SpillingPairSorter::BucketStream::read_whole(unsigned b) {
    const Bucket& bucket = sorter_.buckets_[b];
    const bool direct = sorter_.direct_;
    size_t size = bucket.tail.size();
    for (const Bucket::Chunk& c : bucket.chunks) size += direct ? direct_size(c.size) : c.size;
    raw_.resize(size);
    ranges_.clear();
    size_t at = 0;
    for (const Bucket::Chunk& c : bucket.chunks) {
        const size_t n = direct ? direct_size(c.size) : c.size;
        MPT_RETURN_IF_ERROR(
            sorter_.files_->read(sorter_.bucket_fd_, raw_.data() + at, n, c.offset));
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
    if (ahead_.valid()) {
        // Read ahead: this is the next bucket with records, and nothing else touches raw_.
        MPT_ASSERT(ahead_bucket_ == b);
        MPT_RETURN_IF_ERROR(ahead_.get());
    } else if (!fits(bucket)) {
        ++sorter_.buckets_merged_;
        merged_.reset(new SpillingPairSorter(*sorter_.files_, sorter_.bucket_limit()));
        Status added;
        MPT_RETURN_IF_ERROR(
            read_chunks(bucket, [&](size_t, size_t at, uint32_t k, uint32_t v, uint32_t x) {
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
