// The trie file: a NodeStore in one SQLite database.
//
// Schema (version 2, PRAGMA user_version; PRAGMA application_id 0x6d707431, "mpt1"; the
// statements are in tries_table.cpp, the format in man/mpt-file.5):
//   tries(id INTEGER PRIMARY KEY, name TEXT UNIQUE, root BLOB(32), kind TEXT, checksum BLOB)
//   nodes(trie INTEGER, path BLOB, rlp BLOB, PRIMARY KEY (trie, path)) WITHOUT ROWID
//   preimages(hash BLOB PRIMARY KEY, preimage BLOB) WITHOUT ROWID
// A path is one byte per nibble, so BLOB order (memcmp, shorter first) is depth-first order
// and the rows of a subtree with path prefix P are exactly P <= path < P || 0x10.
// The file is in WAL mode: readers keep a consistent snapshot while a writer commits. New
// files get 8 KiB pages. A version-1 file (tries.secure INTEGER instead of kind and
// checksum, no preimages) is read as it is, and upgraded in place when opened for writing.
//
// Thread safety: one object per thread; several objects (or processes) may open one file.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/detail/sqlite_stmt.hpp>
#include <mpt/store/detail/tries_table.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/node_store.hpp>

#include <functional>

struct sqlite3;

namespace mpt {

using sqlite::kApplicationId;
using sqlite::kSchemaVersion;

// What SqliteNodeStore::check_preimages read.
struct PreimageCount {
    uint64_t rows = 0;
    uint64_t bad = 0;
};

class SqliteNodeStore : public NodeStore {
public:
    enum class Mode { read_only, read_write, create };

    // Opens a trie file. create makes the file when it does not exist or is empty (no bytes,
    // or an SQLite database with no schema and zero header fields) and otherwise opens it
    // for writing; the other modes refuse an empty file. A file that is not an mpt trie file,
    // or of an unknown schema version, is refused without being written. The rows of the
    // tries table are validated when they are read (find_trie, list_tries; tries_table.hpp),
    // not here: a damaged one is Errc::storage_bad_record where it is read.
    static Result<std::unique_ptr<SqliteNodeStore>> open(const std::string& path, Mode mode);

    ~SqliteNodeStore() override;
    SqliteNodeStore(const SqliteNodeStore&) = delete;
    SqliteNodeStore& operator=(const SqliteNodeStore&) = delete;

    Result<std::optional<TrieInfo>> find_trie(std::string_view name) override;
    Result<std::vector<TrieInfo>> list_tries() override;
    Result<TrieNames> trie_names(size_t n) override;
    // The view points into SQLite's column memory: valid until the next call on this store.
    Result<bytes_view> get(TrieId trie, bytes_view path) override;
    Status scan(TrieId trie, bytes_view prefix, const RowVisitor& f) override;
    Result<uint64_t> count_rows(TrieId trie) override;
    Status begin_read() override;
    void end_read() noexcept override;
    Status begin_write() override;
    Result<TrieId> create_trie(std::string_view name, TrieKind kind) override;
    Status put(TrieId trie, bytes_view path, bytes_view rlp) override;
    static constexpr size_t kPutRowsBatch = 64;
    // Writes kPutRowsBatch rows per statement, which amortises SQLite's per-statement work.
    Status put_rows(TrieId trie, std::span<const RowList::Row> rows) override;
    // While a new trie is staged: the copy at commit writes its rows in key order.
    bool row_order_free() const noexcept override { return rows_ == &staged_; }
    Status erase(TrieId trie, bytes_view path) override;
    Result<size_t> erase_subtree(TrieId trie, bytes_view prefix) override;
    Status set_root(TrieId trie, const Hash256& root) override;
    Status delete_trie(TrieId trie) override;
    // One INSERT ... SELECT within the file.
    Result<uint64_t> copy_rows(TrieId from, TrieId to) override;
    Status put_preimages(std::span<const Preimage> items) override;
    Result<std::optional<bytes>> get_preimage(const Hash256& hash) override;
    Status put_codes(std::span<const Code> items) override;
    Result<std::optional<bytes>> get_code(const Hash256& hash) override;
    Status commit_write() override;
    void rollback() noexcept override;

    const std::string& path() const noexcept { return path_; }
    // The file's schema version: 1 for a version-1 file opened read-only, else 2.
    int schema_version() const noexcept { return tries_.version(); }
    // The largest key, value or row, in bytes, this store can hold (SQLite's length limit).
    int64_t max_blob_bytes() const noexcept;
    // Rows whose trie id has no row in the tries table: (id, rows), by id.
    Result<std::vector<std::pair<TrieId, uint64_t>>> rows_without_trie();
    // For `mpt check`: reads every row of the preimages table and calls bad(hash) for each
    // whose preimage does not hash to it (or whose hash is not 32 bytes).
    Result<PreimageCount> check_preimages(const std::function<void(bytes_view hash)>& bad);
    // The same for the codes table (none before version 3).
    Result<PreimageCount> check_codes(const std::function<void(bytes_view hash)>& bad);
    // Each trie's rows and their bytes (path and RLP), by trie id: one pass over the nodes.
    struct TrieUsage {
        TrieId trie = 0;
        uint64_t rows = 0;
        uint64_t bytes = 0;
    };
    Result<std::vector<TrieUsage>> trie_usage();
    // REQUIRES: opened for writing, outside a transaction. Rewrites the file compactly
    // (SQLite's VACUUM, one transaction through the write-ahead log, so that a crash leaves
    // the file as it was before or after) and then checkpoints the log into the file and
    // truncates it. False when the checkpoint could not finish (a reader held the log): the
    // file is compacted, its log not yet folded in.
    Result<bool> vacuum();
    // The bytes of the file and of its write-ahead log.
    Result<int64_t> bytes_with_log();
    // Rows and page statistics for `mpt stats`.
    Result<int64_t> file_size();
    // For `mpt check`: what says the file is cut short (not whole pages, or fewer than its
    // header counts), or nullopt; nullopt too while the log holds pages not folded in.
    Result<std::optional<std::string>> cut_short();
    // Caps the file at n pages (PRAGMA max_page_count), to test a full disk.
    Status set_max_pages(int64_t n);
    // Lowers this connection's length limit to n bytes (SQLITE_LIMIT_LENGTH), to test rows past it.
    Status set_length_limit(int64_t n);
    // Sets this connection's page cache to about kib KiB (PRAGMA cache_size=-kib; opened with
    // 64 MiB). Every page read into the cache is fresh memory, first touched through a page
    // fault: a batch of point reads spread over the file spends less with a smaller cache,
    // which reuses the memory of the pages read least recently.
    // REQUIRES: kib > 0.
    Status set_cache_kib(int64_t kib);
    // The page cache's size in KiB as set (PRAGMA cache_size, given in KiB).
    Result<int64_t> cache_kib();

private:
    // One attempt of open(); immutable reads the file alone (no log, no locks).
    static Result<std::unique_ptr<SqliteNodeStore>> open_once(const std::string& path, Mode mode,
                                                              bool immutable);
    SqliteNodeStore(sqlite3* db, std::string path)
        : db_(db), path_(std::move(path)), tries_(db, path_, kSchemaVersion) {}
    Status exec(const char* sql);
    // The error of a failed row write: a row past the length limit is named with its size.
    Error row_error(int rc, TrieId trie, bytes_view path, size_t rlp_bytes) const;
    Status prepare(sqlite::Statement& st, const std::string& sql);
    Error error(std::string_view what) const { return sqlite::last_error(db_, path_, what); }
    // Reads the header and the schema's version and checks the tables are there.
    Status check_schema(bool writable);
    Status create_schema();
    // True for a database with no schema objects and zero header fields.
    Result<bool> is_empty_database();
    // The first column of the first row of sql, an integer.
    Result<int64_t> query_int(const char* sql);

    struct RowStatements {
        sqlite::Statement get;
        sqlite::Statement put;        // empty when read-only
        sqlite::Statement erase;      // empty when read-only
        sqlite::Statement put_batch;  // put of kPutRowsBatch rows; made on first use
        void finalize() noexcept;
    };
    Status prepare_rows(RowStatements& s, const char* table);
    // The preimages and codes tables: (hash, blob) rows, each blob keccak256 of its hash.
    // what names the blob in errors ("preimage", "code").
    Status put_by_hash(sqlite::Statement& st, const char* table, std::span<const Preimage> items,
                       const char* what);
    Result<std::optional<bytes>> get_by_hash(sqlite::Statement& st, const char* table,
                                             const Hash256& hash, const char* what);
    Result<PreimageCount> check_by_hash(const char* table,
                                        const std::function<void(bytes_view hash)>& bad);
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
    sqlite::TriesTable tries_;
    bool writable_ = false;
    RowStatements nodes_;               // on the nodes table
    RowStatements staged_;              // on the staging table, while staging
    RowStatements* rows_ = &nodes_;     // where row operations go now
    const char* table_ = "main.nodes";  // its name, for statements made on the fly
    sqlite::Statement put_preimage_;    // made on first use
    sqlite::Statement get_preimage_;
    sqlite::Statement put_code_;
    sqlite::Statement get_code_;
    bool in_txn_ = false;
};

// True when path is a regular file that starts with the SQLite header (so it is a trie file,
// not JSON). A pipe is never opened to look.
bool looks_like_sqlite(const std::string& path);

}  // namespace mpt
