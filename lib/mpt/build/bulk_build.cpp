#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mpt/build/bulk_build.hpp>
#include <mpt/build/kv_root.hpp>
#include <mpt/build/path_order.hpp>
#include <mpt/build/row_buffer.hpp>
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

    // As write, but the page's bytes are kept in memory and written at finish, after
    // patch_held may have changed them (zeros stand in its place until then).
    Status write_held(uint32_t number, bytes_view page) {
        held_.assign(page.begin(), page.end());
        held_number_ = number;
        return write(number, bytes(page.size(), 0));
    }
    // Overwrites the held page's last bytes. False when no page is held.
    bool patch_held(bytes_view tail) {
        if (held_.size() < tail.size()) return false;
        std::copy(tail.begin(), tail.end(), held_.end() - static_cast<ptrdiff_t>(tail.size()));
        return true;
    }

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
        if (!held_.empty()) {
            MPT_RETURN_IF_ERROR(
                pwrite_all(held_, static_cast<off_t>(held_number_ - 1) * image_.page_size));
        }
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
    bytes held_;
    uint32_t held_number_ = 0;
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

Result<std::optional<BuildResult>> link_unnamed(int fd, const std::filesystem::path& dir,
                                                const std::string& path, const BuildResult& result);

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

// Ends a file after its nodes: finishes the nodes' b-tree, writes the preimages' after it,
// and writes what is left with the image (the trees' roots among its pages).
Status finish_trees(PageFile& out, const FileImage& image, IndexBtreeWriter& nodes,
                    const PreimageRecords& preimages) {
    MPT_TRY(uint32_t pages, nodes.finish());
    if (preimages) {
        IndexBtreeWriter tree(
            image.page_size, image.preimages_root, pages + 1,
            [&](uint32_t number, bytes_view page) { return out.write(number, page); });
        MPT_RETURN_IF_ERROR(preimages([&](bytes_view record) { return tree.add(record); }));
        MPT_TRY(const uint32_t last, tree.finish());
        pages = std::max(pages, last);
    }
    return out.finish(pages);
}

// Writes the file of a trie whose root is known into the unnamed file fd in folder dir:
// the image, then the rows for_each_row hands over in path order, then the preimages; then
// links it at path. nullopt when the name was taken meanwhile. kViewsStay: the views
// for_each_row hands over stay valid to the end (else the last path is copied for the order
// check).
template <bool kViewsStay, typename ForEachRow>
Result<std::optional<BuildResult>> write_trie_file(int fd, const std::filesystem::path& dir,
                                                   const std::string& path, const BuildOptions& o,
                                                   const BuildResult& result,
                                                   const PreimageRecords& preimages,
                                                   ForEachRow&& for_each_row) {
    MPT_TRY(FileImage image,
            new_file_image(o.trie, o.secure ? TrieKind::secure : TrieKind::plain, result.root));
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
    MPT_RETURN_IF_ERROR(finish_trees(out, image, tree, preimages));
    return link_unnamed(fd, dir, path, result);
}

// Names the unnamed file fd, whole and synced, path in its folder dir. nullopt when the name
// was taken meanwhile.
Result<std::optional<BuildResult>> link_unnamed(int fd, const std::filesystem::path& dir,
                                                const std::string& path,
                                                const BuildResult& result) {
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

// The root branch's row when the top branch stands at the root and all 16 of its children
// are hashed, with no value: what a large trie of random keys has, and the one row whose
// size is known before the hashing ends (kMaxBranchWithoutValue bytes).
constexpr size_t kPredictedRootRlp = kMaxBranchWithoutValue;

// The rows written to the b-tree as the parts of a split build are done, on a thread of its
// own, while the others hash: the root branch's row first, as a stand-in of the size it will
// have when predicted right, then part 0, part 1 and so on, each once it is in path order.
// Its page, the first leaf, is held back and patched once the root is known.
// Hands f(path, rlp) every row of part v of a split build, in path order.
using RowVisitor = std::function<Status(bytes_view path, bytes_view rlp)>;
using PartRowsOf = std::function<Status(size_t v, const RowVisitor& f)>;

class RowWriterThread {
public:
    RowWriterThread(PartRowsOf rows, IndexBtreeWriter& tree, TrieId trie)
        : rows_(std::move(rows)), tree_(tree), trie_(trie) {
        thread_ = std::thread([this] { status_ = run(); });
    }
    ~RowWriterThread() {
        // On the way out of an error or an exception: the thread ends before what it uses.
        (void)stop();
    }
    RowWriterThread(const RowWriterThread&) = delete;
    RowWriterThread& operator=(const RowWriterThread&) = delete;

    // Part v is in path order (called on the thread that built it).
    void part_done(size_t v) {
        if (v >= PartSinks::kTopPart) return;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_[v] = true;
        }
        changed_.notify_all();
    }
    // The hashing is over: the thread writes the parts done and ends. Returns whether it
    // wrote all 16.
    Result<bool> stop() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            over_ = true;
        }
        changed_.notify_all();
        if (thread_.joinable()) thread_.join();
        MPT_RETURN_IF_ERROR(status_);
        return written_ == PartSinks::kTopPart;
    }

private:
    Status run() {
        bytes record;
        append_record(record, trie_, bytes_view(), bytes(kPredictedRootRlp, 0));
        MPT_RETURN_IF_ERROR(tree_.add(record));
        bytes previous;  // the last path written (the empty one, so far)
        for (size_t v = 0; v < PartSinks::kTopPart; ++v) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                changed_.wait(lock, [&] { return done_[v] || over_; });
                if (!done_[v]) return {};
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
    IndexBtreeWriter& tree_;
    TrieId trie_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::array<bool, PartSinks::kTopPart> done_{};
    bool over_ = false;
    size_t written_ = 0;
    Status status_;
    std::thread thread_;
};

// A split build that writes its rows while it hashes (RowWriterThread). The file is the one
// the build would write after the hashing, byte for byte. When the root's row turns out
// not to be the one predicted (its top branch stands lower, holds a value or an embedded
// child), or the file's first pages would differ, written is false: the rows are all kept,
// hashed, and the caller writes them anew.
struct Overlapped {
    BuildResult result;
    bool written = false;
    std::optional<BuildResult> file;  // written: the result, or nullopt when the name was taken
};

// What the hashing of a split build gives: its result, and the root's row when that is the
// only row above the parts (the root branch itself, at the empty path).
struct SplitHash {
    BuildResult result;
    std::optional<bytes> root_rlp;
};
// Hashes the parts, calling part_done(v) on the thread that built part v once its rows are
// all there, in path order.
using SplitHasher = std::function<Result<SplitHash>(const std::function<void(size_t)>& part_done)>;

Result<Overlapped> write_while_hashing(int fd, const std::filesystem::path& dir,
                                       const std::string& path, const BuildOptions& o,
                                       const PreimageRecords& preimages,
                                       const PartRowsOf& part_rows, const SplitHasher& hash) {
    const TrieKind kind = o.secure ? TrieKind::secure : TrieKind::plain;
    // The first pages, made with a stand-in root: the root hash is one fixed-size field of
    // the tries row, so the real one gives pages of the same number (checked below).
    MPT_TRY(FileImage image, new_file_image(o.trie, kind, Hash256{}));
    const uint32_t image_pages = static_cast<uint32_t>(image.pages.size() / image.page_size);
    PageFile out(fd, path, image);
    // The first leaf, whose first cell is the root's row, is held back for the real row.
    IndexBtreeWriter* writing = nullptr;
    IndexBtreeWriter tree(image.page_size, image.nodes_root, image_pages + 1,
                          [&](uint32_t number, bytes_view page) {
                              return number == writing->first_leaf() ? out.write_held(number, page)
                                                                     : out.write(number, page);
                          });
    writing = &tree;
    Overlapped r;
    RowWriterThread writer(part_rows, tree, image.trie);
    Result<SplitHash> hashed = hash([&](size_t v) { writer.part_done(v); });
    MPT_TRY(const bool all_parts, writer.stop());
    if (!hashed) return hashed.error();
    r.result = hashed->result;
    const std::optional<bytes>& root_rlp = hashed->root_rlp;
    if (!all_parts || !root_rlp || root_rlp->size() != kPredictedRootRlp) return r;
    MPT_TRY(FileImage real, new_file_image(o.trie, kind, r.result.root));
    if (real.pages.size() != image.pages.size() || real.nodes_root != image.nodes_root ||
        real.preimages_root != image.preimages_root || real.trie != image.trie) {
        return r;
    }
    // The held page has the root's row as its first cell, which ends the page: its last
    // bytes are the row's rlp.
    if (!out.patch_held(*root_rlp)) return r;
    // The pages the tree wrote into the image so far (none but the root, written at
    // finish) are taken over by the real image's.
    image.pages = std::move(real.pages);
    MPT_RETURN_IF_ERROR(finish_trees(out, image, tree, preimages));
    r.written = true;
    MPT_TRY(r.file, link_unnamed(fd, dir, path, r.result));
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

// The build, once the way is open, into the unnamed file fd in folder dir.
Result<std::optional<BuildResult>> write_new_file(int fd, const std::filesystem::path& dir,
                                                  const std::string& path, const KvInput& input,
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
                h.root_rlp = bytes(rlp.begin(), rlp.end());
            }
            return h;
        };
        MPT_TRY(Overlapped written,
                write_while_hashing(fd, dir, path, o, preimages, part_rows, hash));
        if (written.written) return written.file;
        // The rows are hashed: written once more, from the start of the file.
        if (::ftruncate(fd, 0) != 0) return io_error(path, "truncate");
        result = written.result;
    } else {
        MPT_TRY(result.root,
                stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &rows));
        result.created = true;
        result.rows_written = rows.rows();
    }
    return write_trie_file<true>(fd, dir, path, o, result, preimages,
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

    // After finish: hands add each (hash, preimage) record, in order.
    Status records(const std::function<Status(bytes_view)>& add) {
        if (!run_) return {};
        bytes record;
        bytes_view hash, preimage;
        while (true) {
            MPT_TRY(const bool more, run_->next(hash, preimage));
            if (!more) return {};
            record.clear();
            append_blob_record(record, hash, preimage);
            MPT_RETURN_IF_ERROR(add(record));
        }
    }

private:
    std::optional<RunFile> run_;
};

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
            SpillingRows& rows = *rows_[v];
            StackTrie st(&rows, 1);
            part.status = add_nibble_stream(
                pairs, static_cast<unsigned>(v), st, top_value,
                [&](std::span<const KvPair> batch, std::span<const bytes_view> extras) -> Status {
                    if (preimages) MPT_RETURN_IF_ERROR(preimages_[v].add(files, batch, extras));
                    return rows.status();
                });
            part.pairs = st.count();
            part.ref = st.finish_ref();
            if (part.status.ok()) part.status = rows.close();
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

Result<std::optional<BuildResult>> write_new_file_sorted(int fd, const std::filesystem::path& dir,
                                                         const std::string& path,
                                                         SpillingPairSorter& pairs,
                                                         const BuildOptions& o, SpillFiles& files,
                                                         size_t row_bytes) {
    // A secure build's preimages go to a temporary file as the pairs come, in hash order.
    const bool preimages = o.secure && o.preimages;
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
            if (made) h.root_rlp = split.root_rlp();
            return h;
        };
        const PreimageRecords preimage_records = preimages ? split.preimages() : PreimageRecords();
        MPT_TRY(Overlapped written,
                write_while_hashing(fd, dir, path, o, preimage_records, part_rows, hash));
        if (written.written) return written.file;
        if (made) {
            // The root's row is not the one foreseen: the rows, all on disk, are written
            // once more from the start of the file.
            if (::ftruncate(fd, 0) != 0) return io_error(path, "truncate");
            return write_trie_file<false>(fd, dir, path, o, split.result(), preimage_records,
                                          [&](auto&& f) { return split.for_each(f); });
        }
        // The final keys share their first nibble (or only one is left): hashed in one, and
        // what was written goes.
        if (::ftruncate(fd, 0) != 0) return io_error(path, "truncate");
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
    return write_trie_file<false>(fd, dir, path, o, result, preimage_records,
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
