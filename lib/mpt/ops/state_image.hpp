// The parts of a state file written whole that its two builders share (state_bulk.cpp for a
// document in memory, state_spill.cpp for one sorted on disk): the first pages, with the tries
// table, and the preimages table's records. Internal to lib/mpt/ops/.
//
// Thread safety: pure functions.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/tries_table.hpp>

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace mpt::build_detail {

struct StateImage {
    FileImage image;
    uint32_t preimages_root = 0;
    std::vector<TrieId> ids;  // of tries, in order
};

// The first pages of the file: the schema, one tries row per trie (ids from 1 in the order
// given, so that their rows' keys sort in that order), empty nodes and preimages tables.
Result<StateImage> make_state_image(std::span<const sqlite::TriesTable::NewTrie> tries);

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
using NextTries = std::function<Result<std::span<const sqlite::TriesTable::NewTrie>>()>;
Result<DiskStateImage> make_state_image_on_disk(const std::string& tmp_dir, const NextTries& next);

}  // namespace mpt::build_detail
