// The first pages of a new trie file, made whole in memory, for a bulk build to write the
// nodes table's b-tree after (IndexBtreeWriter).
//
// Thread safety: the functions are pure; distinct images may be made on different threads.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/node_store.hpp>

#include <array>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpt {

// The schema, the one trie's row, the preimages given, and the nodes table's root page, an
// empty leaf. The header says WAL mode, as SqliteNodeStore::open() makes a file;
// finish_image_header completes it once the page count is known.
struct FileImage {
    bytes pages;
    uint32_t page_size = 0;
    uint32_t nodes_root = 0;      // the nodes table's root page
    uint32_t preimages_root = 0;  // the preimages table's
    uint32_t codes_root = 0;      // the codes table's
    TrieId trie = 0;              // the trie's id, the first column of its rows
};

// A file image holding one trie, named name, of the given kind and root. The pages are those
// SQLite itself makes of this schema and these rows, so the file is exactly what open() and
// a build would have begun it with. A name check_trie_name refuses is Errc::bad_input.
Result<FileImage> new_file_image(std::string_view name, TrieKind kind, const Hash256& root,
                                 std::span<const Preimage> preimages = {});

// Completes the header of a file image whose first page is page1, pages long.
void finish_image_header(bytes& page1, uint32_t pages) noexcept;

// The first pages of a state file, which holds many tries: the images of state_bulk.cpp (a
// document in memory) and state_spill.cpp (one sorted on disk) in lib/mpt/ops/.
struct StateImage {
    FileImage image;
    uint32_t preimages_root = 0;
    std::vector<TrieId> ids;  // of tries, in order
};

// The first pages of the file: the schema, one tries row per trie (ids from 1 in the order
// given, so that their rows' keys sort in that order), empty nodes and preimages tables.
Result<StateImage> make_state_image(std::span<const NewTrie> tries);

// The same pages made in a database in an unnamed temporary file of tmp_dir, for states with
// more storage tries than memory should hold rows of: only the pages up to the nodes and
// preimages tables' roots are held in image; the others, from page tail_first on, stay in
// the file fd (owned), to be copied into the new file (write_whole_file's tail).
struct DiskStateImage {
    StateImage image;
    int fd = -1;
    uint32_t tail_first = 0;
    uint32_t tail_pages = 0;
    DiskStateImage() = default;
    DiskStateImage(DiskStateImage&& o) noexcept
        : image(std::move(o.image)),
          fd(std::exchange(o.fd, -1)),
          tail_first(o.tail_first),
          tail_pages(o.tail_pages) {}
    DiskStateImage& operator=(DiskStateImage&&) = delete;
    ~DiskStateImage();
};
// next: the tries in id order, a batch at a time (valid until the next call), empty at the
// end. Errors: storage_full, storage_io, next's.
using NextTries = std::function<Result<std::span<const NewTrie>>()>;
Result<DiskStateImage> make_state_image_on_disk(const std::string& tmp_dir, const NextTries& next);

}  // namespace mpt
