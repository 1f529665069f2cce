// A new file written whole, the way every bulk build makes its file: without a name in its
// folder (O_TMPFILE), its pages written in one pass (the first pages SQLite makes of the
// schema, from a FileImage, then the b-trees, each numbered after the last), synced, and only
// then linked under its name. The link fails if the name has been taken meanwhile: a crash at
// any moment leaves no file or the whole one, and no existing file is ever written.
//
// Thread safety: an object is used by one thread at a time (a b-tree of tree() may be fed from
// another thread while this one waits).
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/file_image.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace mpt {

// One b-tree of a file written whole: its root page in the image, and its records, handed
// to add in key order.
struct WholeFileTree {
    uint32_t root_page = 0;
    std::function<Status(const std::function<Status(bytes_view record)>& add)> records;
};

// Pages of a file's image kept in another file (fd), from page first on, pages of them:
// they follow image.pages in the new file.
struct ImageTail {
    int fd = -1;
    uint32_t first = 0;
    uint32_t pages = 0;
};

class PageFile;

class WholeFile {
public:
    // The unnamed file that becomes path, or nullopt when this way is closed: path exists, a
    // rollback journal or log of that name is left beside it (SQLite would play it back into
    // the new file), or the file system cannot make unnamed files. Errors: out of
    // descriptors or memory (the process's limit, not the folder's).
    static Result<std::optional<WholeFile>> create(const std::string& path);
    // Whether create may make path (the first half of its answer, without the unnamed file):
    // for a caller that would otherwise do its work only to be told no.
    static bool may_create(const std::string& path);

    WholeFile(WholeFile&& other) noexcept;
    WholeFile& operator=(WholeFile&&) = delete;
    ~WholeFile();

    const std::string& path() const noexcept { return path_; }

    // Begins the pages with image (and tail after it). image must outlive the writing; its
    // pages may be replaced by ones of the same number before finish. REQUIRES: tail.pages
    // is 0 or tail.first is the page after image's.
    Status begin(FileImage& image, const ImageTail& tail = {});

    // A writer of the b-tree whose root is root_page of the image, its other pages numbered
    // after the last page written. Until its finish, no other tree is begun.
    IndexBtreeWriter tree(uint32_t root_page);
    // tree's finish: its pages counted in the file's.
    Status end_tree(IndexBtreeWriter& tree);
    // A whole b-tree of records, between tree and end_tree.
    Status add_tree(const WholeFileTree& t);
    // Puts data in place on page `page`, ending at byte `end` of it, at finish: a record the
    // b-tree writer marked, written as a stand-in.
    void patch(uint32_t page, uint32_t end, bytes_view data);

    // Writes the image last with its header's page count, syncs, and names the file. Returns
    // false when the name was taken meanwhile (the file goes). Errors: storage_full,
    // storage_io.
    Result<bool> finish();

    // Drops what was written, to begin again.
    Status restart();

private:
    WholeFile(int fd, std::string path, std::filesystem::path dir) noexcept;

    int fd_;
    std::string path_;
    std::filesystem::path dir_;
    std::unique_ptr<PageFile> out_;
    uint32_t last_ = 0;  // the highest page number written
};

// Writes a new file at path made of image, tail and the b-trees of trees, in their order.
// Returns false, having made no file, when this way is closed (WholeFile::create) or the name
// was taken meanwhile. Errors: storage_full, storage_io, and those of the records.
Result<bool> write_whole_file(const std::string& path, FileImage& image,
                              std::span<const WholeFileTree> trees, const ImageTail& tail = {});

// Sorts codes by hash and drops those given twice (one code, one hash).
void sort_codes(std::vector<Code>& codes);
// The codes table's b-tree of a new file, from codes as sort_codes leaves them. codes and
// record (scratch) must outlive the tree's writing.
WholeFileTree codes_tree(uint32_t root_page, std::span<const Code> codes, bytes& record);

// Syncs the folder dir, so that a name just given in it is durable. The file named is whole
// either way: a failed sync only leaves the name to the file system's own schedule.
void sync_folder(const std::filesystem::path& dir) noexcept;

}  // namespace mpt
