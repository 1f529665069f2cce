// Building a new trie file whole: the way `mpt build` creates a file that does not exist yet.
//
// Rows inserted through SQLite cost SQLite's insert path each, and leave the file's pages
// partly empty unless a copy packs them afterwards (sqlite_store.hpp, staging). A new file
// holding one trie needs neither: its rows are hashed and kept in memory, put in path order,
// and the nodes table's b-tree is written page by page (IndexBtreeWriter) after the pages
// SQLite makes of the schema and the trie's row (new_file_image in store/file_image.hpp),
// then a secure build's preimages as the preimages table's b-tree. The result is an ordinary
// trie file, the same rows in the same schema as a build through the store would give, with
// its pages full.
//
// Hashed on more than one thread, a large trie splits at its root branch, a subtrie per first
// nibble, and the rows of each subtrie go to the b-tree on a thread of their own as soon as
// it is hashed, while the others are. The root branch's row, first in path order, is known
// last: it stands in at the size a branch of 16 hashed children has (what a large trie of
// hashed keys has), in the first leaf, which is held back and patched at the end. A root row
// of another size has the rows written again after the hashing.
//
// The file is written whole (store/whole_file.hpp): a crash at any moment leaves no file or
// the whole one, and no existing file is ever written.
//
// Thread safety: a call uses its own threads and no shared state.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/whole_file.hpp>

#include <filesystem>
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

// As build_new_trie_file, for the final pairs of a finished SpillingPairSorter (with the
// input's keys as extras when o.secure and o.preimages). With more than one thread and runs
// spilled, when the runs' keys start with every one of the 256 bytes, the subtries two
// nibbles down are hashed one per first byte on o.threads threads, each from the sorter's
// byte_stream, in order, and each part's rows go to the b-tree as soon as the parts before
// it have, while the others hash: a part's rows are held only until then (a few parts at
// once, each kept up to its share of row_bytes, past that put in path order in temporary
// files of files). The 17 branches above the parts stand in at the size of full branches of
// hashed children and are put right at the end; when they are not such branches (the final
// keys miss a first byte, or are short) the build is made again from the runs as follows.
// Otherwise, with more than one thread, the subtries under the root branch are hashed one
// per first nibble, each from the sorter's nibble_stream, each part's rows kept up to its
// share of row_bytes and spilled the same way, and each part's rows go to the b-tree as
// soon as the part is done, while the others hash; otherwise the
// trie is hashed on this thread, its rows kept and spilled the same way and merged into the
// b-tree after. A secure build's preimages go to temporary files too, in hash order. The
// file is the one build_new_trie_file makes of the same input, byte for byte. Returns
// nullopt, having made no file, as build_new_trie_file does when path exists or the file
// system cannot make unnamed files; never for memory. Errors: storage_full, storage_io (of
// the file or of files), and those of the sorter.
Result<std::optional<BuildResult>> build_new_trie_file_sorted(const std::string& path,
                                                              SpillingPairSorter& pairs,
                                                              const BuildOptions& o,
                                                              SpillFiles& files, size_t row_bytes);

}  // namespace mpt
