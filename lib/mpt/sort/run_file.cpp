// The spilling sorter's files: the temporary files and their budget of free space (SpillFiles),
// sorted runs (RunFile) and their merge (RunMerger).
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

SpillOptions SpillOptions::for_memory(size_t memory, std::string tmp_dir) {
    MPT_ASSERT(memory > 0);
    SpillOptions o;
    o.run_bytes = std::max<size_t>(memory / 2, 1);
    o.buffer_bytes = std::clamp<size_t>(memory / 256, 4096, size_t{1} << 20);
    // The buffers of a merge take at most a quarter of the budget.
    o.fan_in = std::clamp<size_t>(memory / 4 / o.buffer_bytes, 2, 256);
    o.chunk_bytes = std::clamp<size_t>(memory / 2048, 256, size_t{2} << 20);
    o.direct = o.chunk_bytes >= size_t{128} << 10;
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

}  // namespace mpt
