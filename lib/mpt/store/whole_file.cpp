#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mpt/core/bytes.hpp>
#include <mpt/store/whole_file.hpp>
#include <new>
#include <utility>

namespace mpt {
namespace {

Error io_error(const std::string& path, const char* what) {
    const int e = errno;
    const Errc code = e == ENOSPC || e == EDQUOT ? Errc::storage_full : Errc::storage_io;
    return file_error(code, path, std::string(what) + ": " + std::strerror(e));
}

}  // namespace

// Writes the pages of a new file: the b-trees' pages, numbered from just after the image's
// and handed over in that order, go out in large sequential writes; the image's pages, the
// b-trees' roots among them, are written last, with the header counting them all.
//
// The large writes go past the page cache where the file system allows it (O_DIRECT): the
// file is most of a build's output, and the kernel's copy of it into the cache was a seventh
// of a 10M-pair build's CPU time. Where it does not (a file system that refuses O_DIRECT, a
// page size that is no multiple of the block, MPT_DIRECT_WRITES=off), they are written
// through the cache and their writeback started.
class PageFile {
public:
    static constexpr size_t kFlushBytes = size_t{4} << 20;
    static constexpr size_t kDirectAlign = 4096;

    // tail_pages: pages of the image that follow image.pages in the file, written apart.
    PageFile(int fd, const std::string& path, FileImage& image, uint32_t tail_pages)
        : fd_(fd),
          path_(path),
          image_(image),
          image_pages_(static_cast<uint32_t>(image.pages.size() / image.page_size)),
          next_(image_pages_ + tail_pages + 1),
          buffer_first_(next_),
          // Room for a flush's pages and the lock-byte page beside them, in whole blocks
          // (aligned_alloc takes a multiple of the alignment).
          capacity_((kFlushBytes + 2 * size_t{image.page_size} + kDirectAlign - 1) / kDirectAlign *
                    kDirectAlign),
          buffer_(static_cast<uint8_t*>(std::aligned_alloc(kDirectAlign, capacity_))) {
        if (buffer_ == nullptr) throw std::bad_alloc();
        if (image.page_size % kDirectAlign == 0 && env_switch_on("MPT_DIRECT_WRITES")) {
            // The same file, opened again for writes past the cache.
            const std::string self = "/proc/self/fd/" + std::to_string(fd);
            direct_fd_ = ::open(self.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
        }
    }
    ~PageFile() { close_direct(); }
    PageFile(const PageFile&) = delete;
    PageFile& operator=(const PageFile&) = delete;

    uint32_t page_size() const noexcept { return image_.page_size; }

    void patch(uint32_t page, uint32_t end, bytes_view data) {
        patches_.push_back({page, end, bytes(data.begin(), data.end())});
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
            std::memset(buffer_.get() + size_, 0, page.size());
            size_ += page.size();
            ++next_;
        }
        if (number != next_) return file_error(Errc::internal, path_, "b-tree pages out of order");
        if (page.size() != image_.page_size) {
            return file_error(Errc::internal, path_, "a b-tree page of another size");
        }
        ++next_;
        std::memcpy(buffer_.get() + size_, page.data(), page.size());
        size_ += page.size();
        if (size_ >= kFlushBytes) return flush();
        return {};
    }

    // Writes what is left and the image with its header's page count; then syncs.
    Status finish(uint32_t pages) {
        MPT_RETURN_IF_ERROR(flush());
        for (const Patch& p : patches_) {
            const uint64_t at = uint64_t{p.page - 1} * image_.page_size + p.end - p.data.size();
            if (p.page <= image_pages_) {
                std::copy(p.data.begin(), p.data.end(),
                          image_.pages.begin() + static_cast<ptrdiff_t>(at));
            } else {
                MPT_RETURN_IF_ERROR(pwrite_all(p.data, static_cast<off_t>(at)));
            }
        }
        finish_image_header(image_.pages, pages);
        MPT_RETURN_IF_ERROR(pwrite_all(image_.pages, 0));
        if (::fsync(fd_) != 0) return io_error(path_, "sync");
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

private:
    Status flush() {
        const off_t at = static_cast<off_t>(buffer_first_ - 1) * image_.page_size;
        const bytes_view pages(buffer_.get(), size_);
        if (direct_fd_ < 0 || !write_direct(pages, at)) {
            MPT_RETURN_IF_ERROR(pwrite_all(pages, at));
            // Their writeback starts now, while the build goes on, rather than all in the
            // sync at the end (a hint: the sync reports what fails).
            ::sync_file_range(fd_, at, static_cast<off_t>(size_), SYNC_FILE_RANGE_WRITE);
        }
        buffer_first_ = next_;
        size_ = 0;
        return {};
    }

    // Writes pages at at past the page cache. False where it did not write them all: the
    // caller then writes them all through the cache, which reports what fails. Where the
    // file system refuses O_DIRECT, no write tries it again.
    bool write_direct(bytes_view pages, off_t at) {
        while (!pages.empty()) {
            const ssize_t n = ::pwrite(direct_fd_, pages.data(), pages.size(), at);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                if (n < 0 && errno == EINVAL) close_direct();
                return false;
            }
            pages = pages.subspan(static_cast<size_t>(n));
            at += n;
        }
        return true;
    }

    void close_direct() noexcept {
        if (direct_fd_ >= 0) ::close(direct_fd_);
        direct_fd_ = -1;
    }

    int fd_;
    const std::string& path_;
    FileImage& image_;
    uint32_t image_pages_;
    uint32_t next_;          // the page expected next
    uint32_t buffer_first_;  // the page buffer_ begins with
    struct Free {
        void operator()(uint8_t* p) const noexcept { std::free(p); }
    };
    size_t capacity_;
    std::unique_ptr<uint8_t, Free> buffer_;  // capacity_ bytes, aligned for O_DIRECT
    size_t size_ = 0;
    int direct_fd_ = -1;  // the file opened with O_DIRECT, where it can be
    struct Patch {
        uint32_t page;
        uint32_t end;
        bytes data;
    };
    std::vector<Patch> patches_;
};

bool WholeFile::may_create(const std::string& path) {
    struct stat st {};
    if (path.empty() || ::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return false;
    for (const char* side : {"-journal", "-wal"}) {
        if (::lstat((path + side).c_str(), &st) == 0) return false;
    }
    return true;
}

Result<std::optional<WholeFile>> WholeFile::create(const std::string& path) {
    if (!may_create(path)) return std::optional<WholeFile>();
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) {
            return input_error(dir.string(), errno);
        }
        return std::optional<WholeFile>();
    }
    return std::optional<WholeFile>(WholeFile(fd, path, std::move(dir)));
}

WholeFile::WholeFile(int fd, std::string path, std::filesystem::path dir) noexcept
    : fd_(fd), path_(std::move(path)), dir_(std::move(dir)) {}

WholeFile::WholeFile(WholeFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      dir_(std::move(other.dir_)),
      out_(std::move(other.out_)),
      last_(other.last_) {}

WholeFile::~WholeFile() {
    if (fd_ >= 0) ::close(fd_);
}

Status WholeFile::begin(FileImage& image, const ImageTail& tail) {
    const uint32_t held = static_cast<uint32_t>(image.pages.size() / image.page_size);
    MPT_ASSERT(tail.pages == 0 || tail.first == held + 1);
    out_ = std::make_unique<PageFile>(fd_, path_, image, tail.pages);
    last_ = held + tail.pages;
    // The tail's pages, where they stand in the file.
    bytes buf(tail.pages != 0 ? size_t{1} << 20 : 0);
    uint64_t at = static_cast<uint64_t>(held) * image.page_size;
    const uint64_t end = static_cast<uint64_t>(last_) * image.page_size;
    while (at < end) {
        const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), end - at));
        const ssize_t n = ::pread(tail.fd, buf.data(), want, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return io_error(path_, "read the image");
        MPT_RETURN_IF_ERROR(out_->pwrite_all(bytes_view(buf.data(), static_cast<size_t>(n)),
                                             static_cast<off_t>(at)));
        at += static_cast<uint64_t>(n);
    }
    return {};
}

IndexBtreeWriter WholeFile::tree(uint32_t root_page) {
    PageFile* out = out_.get();
    return IndexBtreeWriter(
        out->page_size(), root_page, last_ + 1,
        [out](uint32_t number, bytes_view page) { return out->write(number, page); });
}

Status WholeFile::end_tree(IndexBtreeWriter& tree) {
    MPT_TRY(const uint32_t pages, tree.finish());
    last_ = std::max(last_, pages);
    return {};
}

Status WholeFile::add_tree(const WholeFileTree& t) {
    IndexBtreeWriter tree = this->tree(t.root_page);
    MPT_RETURN_IF_ERROR(t.records([&](bytes_view record) { return tree.add(record); }));
    return end_tree(tree);
}

void WholeFile::patch(uint32_t page, uint32_t end, bytes_view data) {
    out_->patch(page, end, data);
}

Result<bool> WholeFile::finish() {
    MPT_RETURN_IF_ERROR(out_->finish(last_));
    // The file gets its name only now, whole and synced; the name is not taken from a file
    // made meanwhile (the link fails instead, and the caller builds into that file).
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
        return false;
    }
    sync_folder(dir_);
    return true;
}

Status WholeFile::restart() {
    out_.reset();
    last_ = 0;
    if (::ftruncate(fd_, 0) != 0) return io_error(path_, "truncate");
    return {};
}

Result<bool> write_whole_file(const std::string& path, FileImage& image,
                              std::span<const WholeFileTree> trees, const ImageTail& tail) {
    MPT_TRY(std::optional<WholeFile> file, WholeFile::create(path));
    if (!file) return false;
    MPT_RETURN_IF_ERROR(file->begin(image, tail));
    for (const WholeFileTree& t : trees) MPT_RETURN_IF_ERROR(file->add_tree(t));
    return file->finish();
}

void sort_codes(std::vector<Code>& codes) {
    const auto by_hash = [](const Code& x, const Code& y) { return x.first < y.first; };
    std::sort(codes.begin(), codes.end(), by_hash);
    codes.erase(std::unique(codes.begin(), codes.end(),
                            [](const Code& x, const Code& y) { return x.first == y.first; }),
                codes.end());
}

WholeFileTree codes_tree(uint32_t root_page, std::span<const Code> codes, bytes& record) {
    WholeFileTree tree;
    tree.root_page = root_page;
    tree.records = [codes, &record](const std::function<Status(bytes_view)>& add) -> Status {
        for (const auto& [hash, code] : codes) {
            record.clear();
            append_blob_record(record, hash, code);
            MPT_RETURN_IF_ERROR(add(record));
        }
        return {};
    };
    return tree;
}

void sync_folder(const std::filesystem::path& dir) noexcept {
    const int folder = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (folder < 0) return;
    ::fsync(folder);
    ::close(folder);
}

}  // namespace mpt
