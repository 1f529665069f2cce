// Building a new trie file whole: the way `mpt build` creates a file that does not exist yet.
//
// Rows inserted through SQLite cost SQLite's insert path each, and leave the file's pages
// partly empty unless a copy packs them afterwards (sqlite_store.hpp, staging). A new file
// holding one trie needs neither: its rows are hashed and kept in memory, put in path order,
// and the nodes table's b-tree is written page by page (IndexBtreeWriter) after the pages
// SQLite makes of the schema and the trie's row (new_file_image in store/file_image.hpp). The
// result is an ordinary trie file, the same rows in the same schema as a build through the
// store would give, with its pages full.
//
// The file is made without a name in its folder (O_TMPFILE), synced, and only then linked
// under its name, which fails if the name has been taken meanwhile: a crash at any moment
// leaves no file or the whole one, and no existing file is ever written.
//
// Thread safety: a call uses its own threads and no shared state.
#pragma once

#include <mpt/build/trie_file.hpp>
#include <mpt/core/error.hpp>
#include <mpt/store/file_image.hpp>

#include <functional>
#include <span>

#include <optional>
#include <string>

namespace mpt {

// Builds the trie of input as the only trie of a new trie file at path. Returns
// std::nullopt, having made no file, when this way is closed: path exists (or is taken
// before the file is linked), a rollback journal or log of that name is left beside it, the
// file system cannot make unnamed files, or the rows would take more memory than
// o.bulk_memory (or do: out of memory); the caller then builds through SqliteNodeStore,
// which keeps them on disk. Errors:
// storage_full, storage_io, and those of StackTrie::add.
Result<std::optional<BuildResult>> build_new_trie_file(const std::string& path,
                                                       const KvInput& input, const BuildOptions& o);

// One b-tree of a file written whole: its root page in the image, and its records, handed
// to add in key order.
struct WholeFileTree {
    uint32_t root_page = 0;
    std::function<Status(const std::function<Status(bytes_view record)>& add)> records;
};

// Writes a new file at path made of image and the b-trees of trees (in their order, pages
// numbered after the image's), the way build_new_trie_file writes its file: unnamed until
// whole and synced. Returns false, having made no file, when this way is closed (as for
// build_new_trie_file). Errors: storage_full, storage_io, and those of the records.
Result<bool> write_whole_file(const std::string& path, FileImage& image,
                              std::span<const WholeFileTree> trees);

}  // namespace mpt
