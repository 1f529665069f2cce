// The first pages of a new trie file, made whole in memory, for a bulk build to write the
// nodes table's b-tree after (IndexBtreeWriter).
//
// Thread safety: the functions are pure; distinct images may be made on different threads.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/node_store.hpp>

#include <array>
#include <span>
#include <string>
#include <string_view>

struct sqlite3;

namespace mpt {

// The schema, the one trie's row, the preimages given, and the nodes table's root page, an
// empty leaf. The header says WAL mode, as SqliteNodeStore::open() makes a file;
// finish_image_header completes it once the page count is known.
struct FileImage {
    bytes pages;
    uint32_t page_size = 0;
    uint32_t nodes_root = 0;      // the nodes table's root page
    uint32_t preimages_root = 0;  // the preimages table's
    TrieId trie = 0;              // the trie's id, the first column of its rows
};

// A file image holding one trie, named name, of the given kind and root. The pages are those
// SQLite itself makes of this schema and these rows, so the file is exactly what open() and
// a build would have begun it with. A name check_trie_name refuses is Errc::bad_input.
Result<FileImage> new_file_image(std::string_view name, TrieKind kind, const Hash256& root,
                                 std::span<const Preimage> preimages = {});

// The root pages of the nodes and the preimages tables of db, as its schema holds them.
// Errors: those of the query, naming where.
Result<std::array<uint32_t, 2>> table_roots(sqlite3* db, const std::string& where);

// The pages of db, an in-memory database made with the schema, as a file image: its page
// size, the header's versions of a file in WAL mode (as open() makes it) and the tables'
// roots; trie is left 0. Errors: out_of_memory, and table_roots'.
Result<FileImage> serialize_image(sqlite3* db, const std::string& where);

// Completes the header of a file image whose first page is page1, pages long.
void finish_image_header(bytes& page1, uint32_t pages) noexcept;

}  // namespace mpt
