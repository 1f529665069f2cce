// The trie file: a NodeStore in one SQLite database.
//
// Schema (version 1, PRAGMA user_version; PRAGMA application_id 0x6d707431, "mpt1"):
//   tries(id INTEGER PRIMARY KEY, name TEXT UNIQUE, root BLOB(32), secure INTEGER)
//   nodes(trie INTEGER, path BLOB, rlp BLOB, PRIMARY KEY (trie, path)) WITHOUT ROWID
// A path is one byte per nibble, so BLOB order (memcmp, shorter first) is depth-first order
// and the rows of a subtree with path prefix P are exactly P <= path < P || 0x10.
// The file is in WAL mode: readers keep a consistent snapshot while a writer commits. New
// files get 8 KiB pages.
//
// Thread safety: one object per thread; several objects (or processes) may open one file.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/node_store.hpp>

struct sqlite3;
struct sqlite3_stmt;

namespace mpt {

inline constexpr int kSchemaVersion = 1;
inline constexpr int kApplicationId = 0x6d707431;

class SqliteNodeStore : public NodeStore {
public:
    enum class Mode { read_only, read_write, create };

    // Opens a trie file. create makes the file when it does not exist or is empty (no bytes,
    // or an SQLite database with no schema and zero header fields) and otherwise opens it
    // for writing; the other modes refuse an empty file. A file that is not an mpt trie file, or of
    // an unknown schema version, is refused without being written.
    static Result<std::unique_ptr<SqliteNodeStore>> open(const std::string& path, Mode mode);

    ~SqliteNodeStore() override;
    SqliteNodeStore(const SqliteNodeStore&) = delete;
    SqliteNodeStore& operator=(const SqliteNodeStore&) = delete;

    Result<std::optional<TrieInfo>> find_trie(std::string_view name) override;
    Result<std::vector<TrieInfo>> list_tries() override;
    // The view points into SQLite's column memory: valid until the next call on this store.
    Result<bytes_view> get(TrieId trie, bytes_view path) override;
    Status scan(TrieId trie, bytes_view prefix, const RowVisitor& f) override;
    Result<uint64_t> count_rows(TrieId trie) override;
    Status begin_read() override;
    void end_read() noexcept override;
    Status begin_write() override;
    Result<TrieId> create_trie(std::string_view name, bool secure) override;
    Status put(TrieId trie, bytes_view path, bytes_view rlp) override;
    static constexpr size_t kPutRowsBatch = 64;
    // Writes kPutRowsBatch rows per statement, which amortises SQLite's per-statement work.
    Status put_rows(TrieId trie, std::span<const RowList::Row> rows) override;
    // While a new trie is staged: the copy at commit writes its rows in key order.
    bool row_order_free() const noexcept override { return rows_ == &staged_; }
    Status erase(TrieId trie, bytes_view path) override;
    Result<size_t> erase_subtree(TrieId trie, bytes_view prefix) override;
    Status set_root(TrieId trie, const Hash256& root) override;
    Status commit_write() override;
    void rollback() noexcept override;

    // The first pages of a new trie file that holds one trie, named name, of the given kind
    // and root, for the nodes table's b-tree to be added to (IndexBtreeWriter): the schema,
    // the trie's row, and the nodes table's root page, an empty leaf. The header says WAL
    // mode, as open() makes a file; finish_image_header completes it.
    struct FileImage {
        bytes pages;
        uint32_t page_size = 0;
        uint32_t nodes_root = 0;  // the nodes table's root page
        TrieId trie = 0;          // the trie's id, the first column of its rows
    };
    static Result<FileImage> new_file_image(std::string_view name, bool secure,
                                            const Hash256& root);
    // Completes the header of a file image whose first page is page1, pages long.
    static void finish_image_header(bytes& page1, uint32_t pages) noexcept;

    const std::string& path() const noexcept { return path_; }
    // Rows and page statistics for `mpt stats`.
    Result<int64_t> file_size();
    // Caps the file at n pages (PRAGMA max_page_count), to test a full disk.
    Status set_max_pages(int64_t n);

private:
    SqliteNodeStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
    Status exec(const char* sql);
    Status prepare(sqlite3_stmt** stmt, const char* sql);
    Error error(const char* what) const;
    Status check_schema(bool writable);
    Status create_schema();
    // Adds a trie's row to the tries table, with the empty root. Returns its id.
    Result<TrieId> insert_trie(std::string_view name, bool secure);
    // True for a database with no schema objects and zero header fields.
    Result<bool> is_empty_database();
    // The first column of the first row of sql, an integer.
    Result<int64_t> query_int(const char* sql);

    struct RowStatements {
        sqlite3_stmt* get = nullptr;
        sqlite3_stmt* put = nullptr;        // null when read-only
        sqlite3_stmt* erase = nullptr;      // null when read-only
        sqlite3_stmt* put_batch = nullptr;  // put of kPutRowsBatch rows; made on first use
        void finalize() noexcept;
    };
    Status prepare_rows(RowStatements& s, const char* table);
    // Staging: a trie created while the file has no rows at all (a new file, or one whose
    // tries are all empty) is written to a temporary table of the same shape and copied into
    // the nodes table at commit. SQLite copies between such tables in key order, filling
    // pages whole; rows inserted one by one in the builder's order (children before parents)
    // leave pages about 10% empty. Every row operation goes to the staging table meanwhile:
    // the nodes table is empty, so it holds all rows. After the copy the staging table stays
    // (unused) until the connection closes or stages again.
    Status begin_staging();
    Status publish_staged();
    void end_staging() noexcept;

    sqlite3* db_;
    std::string path_;
    bool writable_ = false;
    RowStatements nodes_;               // on the nodes table
    RowStatements staged_;              // on the staging table, while staging
    RowStatements* rows_ = &nodes_;     // where row operations go now
    const char* table_ = "main.nodes";  // its name, for statements made on the fly
    bool in_txn_ = false;
};

// True when path is a regular file that starts with the SQLite header (so it is a trie file,
// not JSON). A pipe is never opened to look.
bool looks_like_sqlite(const std::string& path);

}  // namespace mpt
