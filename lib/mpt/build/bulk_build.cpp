#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mpt/build/bulk_build.hpp>
#include <mpt/build/path_order.hpp>
#include <mpt/build/row_buffer.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mutex>
#include <new>

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
    void done(size_t v) override { parts_[v].order_by_path(); }
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
    const BuildOptions& o_;
    size_t pairs_;
    std::mutex progress_mutex_;
    size_t added_ = 0;
};

class Fd {
public:
    explicit Fd(int fd) noexcept : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const noexcept { return fd_; }

private:
    int fd_;
};

Error io_error(const std::string& path, const char* what) {
    const int e = errno;
    const Errc code = e == ENOSPC || e == EDQUOT ? Errc::storage_full : Errc::storage_io;
    return file_error(code, path, std::string(what) + ": " + std::strerror(e));
}

// Writes the pages of a new file: the b-tree's pages, numbered from just after the image's
// and handed over in that order, go out in large sequential writes; the image's pages,
// the nodes table's root among them, are written last, with the header counting them all.
class PageFile {
public:
    static constexpr size_t kFlushBytes = size_t{4} << 20;

    // tail_pages: pages of the image that follow image.pages in the file, written apart.
    PageFile(int fd, const std::string& path, FileImage& image, uint32_t tail_pages = 0)
        : fd_(fd),
          path_(path),
          image_(image),
          image_pages_(static_cast<uint32_t>(image.pages.size() / image.page_size)),
          next_(image_pages_ + tail_pages + 1),
          buffer_first_(next_) {}

    Status write(uint32_t number, bytes_view page) {
        if (number <= image_pages_) {
            std::copy(page.begin(), page.end(),
                      image_.pages.begin() + static_cast<ptrdiff_t>(number - 1) * page.size());
            return {};
        }
        if (number == next_ + 1 && next_ == IndexBtreeWriter::kLockByte / page.size() + 1) {
            // The lock-byte page, which the writer skips: zeros in the file, as SQLite
            // leaves it.
            buffer_.resize(buffer_.size() + page.size(), 0);
            ++next_;
        }
        if (number != next_) return file_error(Errc::internal, path_, "b-tree pages out of order");
        ++next_;
        buffer_.insert(buffer_.end(), page.begin(), page.end());
        if (buffer_.size() >= kFlushBytes) return flush();
        return {};
    }

    // Writes what is left and the image with its header's page count; then syncs.
    Status finish(uint32_t pages) {
        MPT_RETURN_IF_ERROR(flush());
        finish_image_header(image_.pages, pages);
        MPT_RETURN_IF_ERROR(pwrite_all(image_.pages, 0));
        if (::fsync(fd_) != 0) return io_error(path_, "sync");
        return {};
    }

private:
    Status flush() {
        MPT_RETURN_IF_ERROR(
            pwrite_all(buffer_, static_cast<off_t>(buffer_first_ - 1) * image_.page_size));
        buffer_first_ = next_;
        buffer_.clear();
        return {};
    }

    Status pwrite_all(bytes_view data, off_t offset) {
        while (!data.empty()) {
            const ssize_t n = ::pwrite(fd_, data.data(), data.size(), offset);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return io_error(path_, "write");
            data = data.subspan(static_cast<size_t>(n));
            offset += n;
        }
        return {};
    }

    int fd_;
    const std::string& path_;
    FileImage& image_;
    uint32_t image_pages_;
    uint32_t next_;          // the page expected next
    uint32_t buffer_first_;  // the page buffer_ begins with
    bytes buffer_;
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

// Writes the file of a trie whose root is known into the unnamed file fd in folder dir:
// the image (with preimages), then the rows for_each_row hands over in path order; then links
// it at path. nullopt when the name was taken meanwhile. kViewsStay: the views for_each_row
// hands over stay valid to the end (else the last path is copied for the order check).
template <bool kViewsStay, typename ForEachRow>
Result<std::optional<BuildResult>> write_trie_file(int fd, const std::filesystem::path& dir,
                                                   const std::string& path, const BuildOptions& o,
                                                   const BuildResult& result,
                                                   std::span<const Preimage> preimages,
                                                   ForEachRow&& for_each_row) {
    MPT_TRY(FileImage image, new_file_image(o.trie, o.secure ? TrieKind::secure : TrieKind::plain,
                                            result.root, preimages));
    const uint32_t image_pages = static_cast<uint32_t>(image.pages.size() / image.page_size);
    PageFile out(fd, path, image);
    IndexBtreeWriter tree(
        image.page_size, image.nodes_root, image_pages + 1,
        [&](uint32_t number, bytes_view page) { return out.write(number, page); });
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
    MPT_TRY(const uint32_t pages, tree.finish());
    MPT_RETURN_IF_ERROR(out.finish(pages));

    // The file gets its name only now, whole and synced; the name is not taken from a file
    // made meanwhile (the link fails instead, and the caller builds into that file).
    const std::string self = "/proc/self/fd/" + std::to_string(fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        return kNotThisWay;
    }
    // The name is durable once the folder is synced. The file is whole either way; a failed
    // sync of the folder only leaves the name to the file system's own schedule.
    const Fd folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (folder.get() >= 0) ::fsync(folder.get());
    return std::optional<BuildResult>(result);
}

// The build, once the way is open, into the unnamed file fd in folder dir.
Result<std::optional<BuildResult>> write_new_file(int fd, const std::filesystem::path& dir,
                                                  const std::string& path, const KvInput& input,
                                                  const BuildOptions& o) {
    const SortedPairs sorted = sorted_final_pairs(input, o.secure);
    size_t pair_bytes = 0;
    for (const KvPair& p : sorted.pairs) pair_bytes += p.key.size() + p.value.size();
    if (row_memory(sorted.pairs.size(), pair_bytes) > memory_limit(o)) return kNotThisWay;
    PartRows rows(o, sorted.pairs.size(), pair_bytes,
                  o.threads > 1 && sorted.pairs.size() >= kParallelRootMinPairs);
    BuildResult result;
    MPT_TRY(result.root, stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &rows));
    result.created = true;
    result.rows_written = rows.rows();

    const std::vector<Preimage> preimages =
        o.secure && o.preimages ? secure_preimages(input, sorted) : std::vector<Preimage>();
    return write_trie_file<true>(fd, dir, path, o, result, preimages,
                                 [&](auto&& f) { return rows.for_each(f); });
}

Result<std::optional<BuildResult>> write_new_file_sorted(int fd, const std::filesystem::path& dir,
                                                         const std::string& path,
                                                         SpillingPairSorter& pairs,
                                                         const BuildOptions& o, SpillFiles& files,
                                                         size_t row_bytes) {
    SpillingRows rows(files, row_bytes);
    StackTrie st(&rows);
    // A secure build's preimages go into the file's first pages, made in memory.
    const bool preimages = o.secure && o.preimages;
    std::vector<Hash256> hashes;
    bytes keys;
    std::vector<std::pair<size_t, size_t>> key_spans;
    while (true) {
        MPT_TRY(const std::span<const KvPair> run, pairs.next());
        if (run.empty()) break;
        // The builder keeps a view of the last pair until the next: the batch's views end
        // with the next batch, so that pair is copied.
        MPT_RETURN_IF_ERROR(add_fetching_ahead(st, run.first(run.size() - 1)));
        MPT_RETURN_IF_ERROR(st.add(run.back().key, run.back().value));
        MPT_RETURN_IF_ERROR(rows.status());
        if (!preimages) continue;
        for (size_t i = 0; i < run.size(); ++i) {
            Hash256 h;
            std::copy(run[i].key.begin(), run[i].key.end(), h.begin());
            hashes.push_back(h);
            key_spans.emplace_back(keys.size(), pairs.extras()[i].size());
            keys.insert(keys.end(), pairs.extras()[i].begin(), pairs.extras()[i].end());
        }
    }
    BuildResult result;
    result.root = st.finish();
    MPT_RETURN_IF_ERROR(rows.status());
    result.created = true;
    result.rows_written = rows.rows();
    std::vector<Preimage> items;
    items.reserve(hashes.size());
    for (size_t i = 0; i < hashes.size(); ++i) {
        items.emplace_back(hashes[i],
                           bytes_view(keys.data() + key_spans[i].first, key_spans[i].second));
    }
    return write_trie_file<false>(fd, dir, path, o, result, items,
                                  [&](auto&& f) { return rows.for_each(f); });
}

}  // namespace

namespace {

// Whether a new file may be made at path whole (see build_new_trie_file); the unnamed file
// in its folder when it may.
std::optional<int> open_unnamed(const std::string& path, std::filesystem::path& dir) {
    struct stat st {};
    if (path.empty() || ::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return std::nullopt;
    for (const char* side : {"-journal", "-wal"}) {
        if (::lstat((path + side).c_str(), &st) == 0) return std::nullopt;
    }
    dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) return std::nullopt;
    return fd;
}

}  // namespace

Result<bool> write_whole_file(const std::string& path, FileImage& image,
                              std::span<const WholeFileTree> trees, const ImageTail& tail) {
    std::filesystem::path dir;
    const std::optional<int> fd = open_unnamed(path, dir);
    if (!fd) return false;
    const Fd file(*fd);
    const uint32_t held = static_cast<uint32_t>(image.pages.size() / image.page_size);
    MPT_ASSERT(tail.pages == 0 || tail.first == held + 1);
    const uint32_t image_pages = held + tail.pages;
    if (tail.pages != 0) {
        // The image's pages from a file, where they stand in it.
        bytes buf(size_t{1} << 20);
        uint64_t at = static_cast<uint64_t>(held) * image.page_size;
        const uint64_t end = static_cast<uint64_t>(image_pages) * image.page_size;
        while (at < end) {
            const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), end - at));
            const ssize_t n = ::pread(tail.fd, buf.data(), want, static_cast<off_t>(at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return io_error(path, "read the image");
            for (size_t done = 0; done < static_cast<size_t>(n);) {
                const ssize_t w =
                    ::pwrite(file.get(), buf.data() + done, static_cast<size_t>(n) - done,
                             static_cast<off_t>(at + done));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) return io_error(path, "write");
                done += static_cast<size_t>(w);
            }
            at += static_cast<uint64_t>(n);
        }
    }
    PageFile out(file.get(), path, image, tail.pages);
    uint32_t last = image_pages;
    for (const WholeFileTree& t : trees) {
        IndexBtreeWriter tree(
            image.page_size, t.root_page, last + 1,
            [&](uint32_t number, bytes_view page) { return out.write(number, page); });
        MPT_RETURN_IF_ERROR(t.records([&](bytes_view record) { return tree.add(record); }));
        MPT_TRY(const uint32_t pages, tree.finish());
        last = std::max(last, pages);
    }
    MPT_RETURN_IF_ERROR(out.finish(last));
    const std::string self = "/proc/self/fd/" + std::to_string(file.get());
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        return false;
    }
    const Fd folder(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (folder.get() >= 0) ::fsync(folder.get());
    return true;
}

Result<std::optional<BuildResult>> build_new_trie_file(const std::string& path,
                                                       const KvInput& input,
                                                       const BuildOptions& o) {
    struct stat st {};
    if (path.empty() || ::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return kNotThisWay;
    // SQLite plays back a rollback journal or a log it finds beside a database into it: one
    // left from an earlier file of this name would be read into this one. A new file made
    // through SQLite starts with no pages, and SQLite deletes them then.
    for (const char* side : {"-journal", "-wal"}) {
        if (::lstat((path + side).c_str(), &st) == 0) return kNotThisWay;
    }
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    const Fd file(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644));
    if (file.get() < 0) return kNotThisWay;
    try {
        return write_new_file(file.get(), dir, path, input, o);
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
    std::filesystem::path dir;
    const std::optional<int> fd = open_unnamed(path, dir);
    if (!fd) return kNotThisWay;
    const Fd file(*fd);
    return write_new_file_sorted(file.get(), dir, path, pairs, o, files, row_bytes);
}

}  // namespace mpt
