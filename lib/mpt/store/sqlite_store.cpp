#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/store/sqlite_store.hpp>

namespace mpt {
namespace {

using sqlite::Statement;

constexpr uint8_t kPathEnd = 0x10;  // above every nibble: prefix || 0x10 bounds a subtree

// The nodes table, and the staging table a new trie is built in (sqlite_store.hpp): the same
// columns, constraints and key (sqlite::kNodesColumns), which SQLite's bulk copy between
// them requires.
constexpr const char* kNodes = "main.nodes";
constexpr const char* kStagedNodes = "temp.staged_nodes";

// The upper bound of a subtree's key range: prefix || 0x10.
bytes subtree_end(bytes_view prefix) {
    bytes end(prefix.begin(), prefix.end());
    end.push_back(kPathEnd);
    return end;
}

}  // namespace

SqliteNodeStore::~SqliteNodeStore() {
    end_staging();
    nodes_.finalize();
    put_preimage_.finalize();
    get_preimage_.finalize();
    put_code_.finalize();
    get_code_.finalize();
    if (in_txn_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
}

void SqliteNodeStore::RowStatements::finalize() noexcept {
    get.finalize();
    put.finalize();
    erase.finalize();
    put_batch.finalize();
}

Status SqliteNodeStore::prepare_rows(RowStatements& s, const char* table) {
    const std::string t = table;
    MPT_RETURN_IF_ERROR(prepare(s.get, "SELECT rlp FROM " + t + " WHERE trie=?1 AND path=?2"));
    if (!writable_) return {};
    MPT_RETURN_IF_ERROR(
        prepare(s.put, "INSERT OR REPLACE INTO " + t + "(trie, path, rlp) VALUES(?1, ?2, ?3)"));
    return prepare(s.erase, "DELETE FROM " + t + " WHERE trie=?1 AND path=?2");
}

Status SqliteNodeStore::begin_staging() {
    Statement st;
    if (st.prepare(db_, "SELECT EXISTS (SELECT 1 FROM main.nodes)") != SQLITE_OK ||
        st.step() != SQLITE_ROW) {
        return error("count rows");
    }
    if (st.column_int64(0) != 0) return {};  // rows of other tries: write in place
    st.finalize();                           // DROP TABLE fails while a statement is active
    MPT_RETURN_IF_ERROR(exec("PRAGMA temp.cache_size=-65536"));
    // A staging table an earlier write published is still there (publish_staged).
    MPT_RETURN_IF_ERROR(exec("DROP TABLE IF EXISTS temp.staged_nodes"));
    MPT_RETURN_IF_ERROR(
        exec((std::string("CREATE TEMP TABLE staged_nodes") + sqlite::kNodesColumns).c_str()));
    MPT_RETURN_IF_ERROR(prepare_rows(staged_, kStagedNodes));
    rows_ = &staged_;
    table_ = kStagedNodes;
    return {};
}

Status SqliteNodeStore::publish_staged() {
    // A plain INSERT ... SELECT * between tables of one shape into an empty table is SQLite's
    // transfer: pages are filled in key order, as VACUUM fills them.
    MPT_RETURN_IF_ERROR(exec("INSERT INTO main.nodes SELECT * FROM temp.staged_nodes"));
    // The staging table is not dropped here: dropping visits every one of its pages (a third
    // of the copy's time for a large trie) while the writer waits. Closing the connection
    // discards the temporary database whole; a later staging drops it first.
    end_staging();
    return {};
}

void SqliteNodeStore::end_staging() noexcept {
    staged_.finalize();
    rows_ = &nodes_;
    table_ = kNodes;
}

Status SqliteNodeStore::exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return error(sql);
    return {};
}

Status SqliteNodeStore::prepare(Statement& st, const std::string& sql) {
    if (st.prepare(db_, sql, true) != SQLITE_OK) {
        Error e = error("prepare");
        if (e.code != Errc::storage_io) return e;
        // A failure to prepare against a file that passed the schema check means the
        // tables are not what they should be.
        e.code = Errc::storage_not_mpt;
        return e;
    }
    return {};
}

Result<std::optional<TrieInfo>> SqliteNodeStore::find_trie(std::string_view name) {
    const std::string canonical = canonical_trie_name(name);
    MPT_TRY(std::optional<TrieInfo> t, tries_.find(canonical));
    // A file written before names were made canonical may hold the name as it was typed.
    if (!t && canonical != name) return tries_.find(name);
    return t;
}

Result<std::vector<TrieInfo>> SqliteNodeStore::list_tries() { return tries_.list(); }

Result<TrieNames> SqliteNodeStore::trie_names(size_t n) { return tries_.names(n); }

Result<bytes_view> SqliteNodeStore::get(TrieId trie, bytes_view path) {
    Statement& get = rows_->get;
    get.reset();
    get.bind(1, trie);
    get.bind(2, path);
    const int rc = get.step();
    if (rc == SQLITE_DONE) return bytes_view{};
    if (rc != SQLITE_ROW) {
        const Error e = error("read node");
        get.reset();
        return e;
    }
    count_row_read();
    return get.column_blob(0);
}

Status SqliteNodeStore::scan(TrieId trie, bytes_view prefix, const RowVisitor& f) {
    Statement st;
    const std::string sql = std::string("SELECT path, rlp FROM ") + table_ +
                            " WHERE trie=?1 AND path>=?2 AND path<?3 ORDER BY path";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("scan");
    const bytes end = subtree_end(prefix);
    st.bind(1, trie);
    st.bind(2, prefix);
    st.bind(3, end);
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        count_row_read();
        if (!f(st.column_blob(0), st.column_blob(1))) return {};
    }
    if (rc != SQLITE_DONE) return error("scan");
    return {};
}

Result<uint64_t> SqliteNodeStore::count_rows(TrieId trie) {
    Statement st;
    const std::string sql = std::string("SELECT count(*) FROM ") + table_ + " WHERE trie=?1";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("count rows");
    st.bind(1, trie);
    if (st.step() != SQLITE_ROW) return error("count rows");
    return static_cast<uint64_t>(st.column_int64(0));
}

Result<std::vector<std::pair<TrieId, uint64_t>>> SqliteNodeStore::rows_without_trie() {
    Statement st;
    const std::string sql = std::string("SELECT trie, count(*) FROM ") + table_ +
                            " WHERE trie NOT IN (SELECT id FROM tries) GROUP BY trie ORDER BY trie";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("count rows");
    std::vector<std::pair<TrieId, uint64_t>> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        out.emplace_back(st.column_int64(0), static_cast<uint64_t>(st.column_int64(1)));
    }
    if (rc != SQLITE_DONE) return error("count rows");
    return out;
}

Result<PreimageCount> SqliteNodeStore::check_by_hash(
    const char* table, const std::function<void(bytes_view hash)>& bad) {
    PreimageCount n;
    Statement st;
    if (st.prepare(db_, std::string("SELECT * FROM ") + table) != SQLITE_OK) {
        return error(std::string("read ") + table);
    }
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        ++n.rows;
        const bytes_view hash = st.column_blob(0);
        if (hash.size() != 32 ||
            !std::equal(hash.begin(), hash.end(), keccak256(st.column_blob(1)).begin())) {
            ++n.bad;
            bad(hash);
        }
    }
    if (rc != SQLITE_DONE) return error(std::string("read ") + table);
    return n;
}

Result<PreimageCount> SqliteNodeStore::check_preimages(
    const std::function<void(bytes_view hash)>& bad) {
    if (tries_.version() < 2) return PreimageCount{};  // a version-1 file has no such table
    return check_by_hash("preimages", bad);
}

Result<PreimageCount> SqliteNodeStore::check_codes(
    const std::function<void(bytes_view hash)>& bad) {
    if (tries_.version() < 3) return PreimageCount{};  // no codes table before version 3
    return check_by_hash("codes", bad);
}

Status SqliteNodeStore::begin_read() {
    rows_->get.reset();
    MPT_RETURN_IF_ERROR(exec("BEGIN"));
    in_txn_ = true;
    // Take the snapshot now, so that every later read sees the same state. One row at most:
    // count(*) would visit every page of the table.
    Statement st;
    if (st.prepare(db_, "SELECT 1 FROM tries LIMIT 1") != SQLITE_OK) return error("begin read");
    if (const int rc = st.step(); rc != SQLITE_ROW && rc != SQLITE_DONE) return error("begin read");
    return {};
}

void SqliteNodeStore::end_read() noexcept {
    rows_->get.reset();
    if (in_txn_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    in_txn_ = false;
}

Status SqliteNodeStore::begin_write() {
    if (!writable_) return file_error(Errc::storage_readonly, path_, "opened read-only");
    rows_->get.reset();
    MPT_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
    in_txn_ = true;
    return {};
}

Result<TrieId> SqliteNodeStore::create_trie(std::string_view name, TrieKind kind) {
    MPT_RETURN_IF_ERROR(check_trie_name(name));
    MPT_TRY(const TrieId id, tries_.insert(canonical_trie_name(name), kind));
    if (rows_ != &staged_) MPT_RETURN_IF_ERROR(begin_staging());
    return id;
}

Status SqliteNodeStore::put(TrieId trie, bytes_view path, bytes_view rlp) {
    Statement& put = rows_->put;
    put.reset();
    put.bind(1, trie);
    put.bind(2, path);
    put.bind(3, rlp);
    const int rc = put.step();
    put.reset();
    if (rc != SQLITE_DONE) return row_error(rc, trie, path, rlp.size());
    return {};
}

Error SqliteNodeStore::row_error(int rc, TrieId trie, bytes_view path, size_t rlp_bytes) const {
    if ((rc & 0xff) == SQLITE_TOOBIG) {
        // Callers check entries first (ops/limits.hpp); a row that still does not fit says
        // how large it is against the limit.
        return file_error(Errc::input_too_large, path_,
                          "write node: trie id " + std::to_string(trie) +
                              (path.empty() ? "" : ", path " + path_string(path)) + ": a row of " +
                              std::to_string(rlp_bytes) + " bytes exceeds the limit of " +
                              std::to_string(max_blob_bytes()) + " bytes");
    }
    return error("write node");
}

Status SqliteNodeStore::set_length_limit(int64_t n) {
    sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, static_cast<int>(n));
    return {};
}

Status SqliteNodeStore::set_cache_kib(int64_t kib) {
    MPT_ASSERT(kib > 0);
    const std::string sql = "PRAGMA cache_size=-" + std::to_string(kib);
    return exec(sql.c_str());
}

Result<int64_t> SqliteNodeStore::cache_kib() {
    MPT_TRY(const int64_t pages_or_kib, query_int("PRAGMA cache_size"));
    return -pages_or_kib;
}

Status SqliteNodeStore::put_rows(TrieId trie, std::span<const RowList::Row> rows) {
    // One statement inserts kPutRowsBatch rows in order, with the effect of as many puts: a later
    // row of the same path replaces an earlier one. Keeping one cursor across its rows also spares
    // SQLite the descent from the root when rows come in key order.
    if (rows.size() >= kPutRowsBatch && !rows_->put_batch) {
        std::string sql =
            std::string("INSERT OR REPLACE INTO ") + table_ + "(trie, path, rlp) VALUES";
        for (size_t i = 0; i < kPutRowsBatch; ++i) sql += i == 0 ? "(?1, ?, ?)" : ", (?1, ?, ?)";
        MPT_RETURN_IF_ERROR(prepare(rows_->put_batch, sql));
    }
    size_t i = 0;
    for (; rows.size() - i >= kPutRowsBatch; i += kPutRowsBatch) {
        Statement& put = rows_->put_batch;
        put.reset();
        put.bind(1, trie);
        for (size_t j = 0; j < kPutRowsBatch; ++j) {
            const RowList::Row& r = rows[i + j];
            const int at = 2 + 2 * static_cast<int>(j);
            put.bind(at, r.path);
            put.bind(at + 1, r.rlp);
        }
        const int rc = put.step();
        put.reset();
        if (rc != SQLITE_DONE) {
            size_t largest = 0;
            for (size_t j = 0; j < kPutRowsBatch; ++j)
                largest = std::max(largest, rows[i + j].rlp.size());
            return row_error(rc, trie, {}, largest);
        }
    }
    for (; i < rows.size(); ++i) MPT_RETURN_IF_ERROR(put(trie, rows[i].path, rows[i].rlp));
    return {};
}

Status SqliteNodeStore::erase(TrieId trie, bytes_view path) {
    Statement& erase = rows_->erase;
    erase.reset();
    erase.bind(1, trie);
    erase.bind(2, path);
    const int rc = erase.step();
    erase.reset();
    if (rc != SQLITE_DONE) return error("delete node");
    return {};
}

Result<size_t> SqliteNodeStore::erase_subtree(TrieId trie, bytes_view prefix) {
    Statement st;
    const std::string sql =
        std::string("DELETE FROM ") + table_ + " WHERE trie=?1 AND path>=?2 AND path<?3";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("delete subtree");
    const bytes end = subtree_end(prefix);
    st.bind(1, trie);
    st.bind(2, prefix);
    st.bind(3, end);
    if (st.step() != SQLITE_DONE) return error("delete subtree");
    return static_cast<size_t>(sqlite3_changes64(db_));
}

Status SqliteNodeStore::set_root(TrieId trie, const Hash256& root) {
    return tries_.set_root(trie, root);
}

Status SqliteNodeStore::delete_trie(TrieId trie) {
    Statement st;
    const std::string sql = std::string("DELETE FROM ") + table_ + " WHERE trie=?1";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("delete trie");
    st.bind(1, trie);
    if (st.step() != SQLITE_DONE) return error("delete trie");
    return tries_.remove(trie);
}

Result<uint64_t> SqliteNodeStore::copy_rows(TrieId from, TrieId to) {
    Statement st;
    const std::string sql = std::string("INSERT OR REPLACE INTO ") + table_ +
                            "(trie, path, rlp) SELECT ?2, path, rlp FROM " + table_ +
                            " WHERE trie=?1";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("copy trie");
    st.bind(1, from);
    st.bind(2, to);
    if (const int rc = st.step(); rc != SQLITE_DONE) return row_error(rc, to, {}, 0);
    return static_cast<uint64_t>(sqlite3_changes64(db_));
}

Result<std::vector<SqliteNodeStore::TrieUsage>> SqliteNodeStore::trie_usage() {
    Statement st;
    const std::string sql =
        std::string("SELECT trie, count(*), sum(length(path) + length(rlp)) FROM ") + table_ +
        " GROUP BY trie ORDER BY trie";
    if (st.prepare(db_, sql) != SQLITE_OK) return error("count rows");
    std::vector<TrieUsage> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        out.push_back({st.column_int64(0), static_cast<uint64_t>(st.column_int64(1)),
                       static_cast<uint64_t>(st.column_int64(2))});
    }
    if (rc != SQLITE_DONE) return error("count rows");
    return out;
}

Result<bool> SqliteNodeStore::vacuum() {
    if (!writable_) return file_error(Errc::storage_readonly, path_, "opened read-only");
    if (in_txn_) return file_error(Errc::internal, path_, "vacuum inside a transaction");
    rows_->get.reset();
    MPT_RETURN_IF_ERROR(exec("VACUUM"));
    // TRUNCATE waits (the busy handler) for readers of the log, then folds it into the file
    // and empties it; its first column is 1 when a reader kept it from finishing.
    Statement st;
    if (st.prepare(db_, "PRAGMA wal_checkpoint(TRUNCATE)") != SQLITE_OK ||
        st.step() != SQLITE_ROW) {
        return error("checkpoint");
    }
    return st.column_int64(0) == 0;
}

Result<int64_t> SqliteNodeStore::bytes_with_log() {
    MPT_TRY(const int64_t file, file_size());
    struct stat st {};
    const std::string wal = path_ + "-wal";
    if (::stat(wal.c_str(), &st) != 0) return file;
    return file + static_cast<int64_t>(st.st_size);
}

Status SqliteNodeStore::put_by_hash(Statement& st, const char* table,
                                    std::span<const Preimage> items, const char* what) {
    if (!writable_) return file_error(Errc::storage_readonly, path_, "opened read-only");
    if (!st) {
        MPT_RETURN_IF_ERROR(
            prepare(st, std::string("INSERT OR IGNORE INTO ") + table + " VALUES(?1, ?2)"));
    }
    for (const auto& [hash, blob] : items) {
        st.reset();
        st.bind(1, hash);
        st.bind(2, blob);
        const int rc = st.step();
        st.reset();
        if (rc != SQLITE_DONE) return error(std::string("write ") + what);
    }
    return {};
}

Result<std::optional<bytes>> SqliteNodeStore::get_by_hash(Statement& st, const char* table,
                                                          const Hash256& hash, const char* what) {
    if (!st) {
        MPT_RETURN_IF_ERROR(
            prepare(st, std::string("SELECT ") + what + " FROM " + table + " WHERE hash=?1"));
    }
    st.reset();
    st.bind(1, hash);
    const int rc = st.step();
    std::optional<bytes> out;
    if (rc == SQLITE_ROW) {
        const bytes_view p = st.column_blob(0);
        out.emplace(p.begin(), p.end());
    }
    st.reset();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return error(std::string("read ") + what);
    // Checked as a node is: a damaged row is a damaged file, never another address or code.
    if (out && keccak256(*out) != hash) {
        return file_error(
            Errc::storage_hash_mismatch, path_,
            std::string("the ") + what + " recorded for " + to_hex(hash) + " does not hash to it");
    }
    return out;
}

Status SqliteNodeStore::put_preimages(std::span<const Preimage> items) {
    return put_by_hash(put_preimage_, "preimages", items, "preimage");
}

Result<std::optional<bytes>> SqliteNodeStore::get_preimage(const Hash256& hash) {
    // A version-1 file, read as it is, has no preimages.
    if (tries_.version() < 2) return std::optional<bytes>{};
    return get_by_hash(get_preimage_, "preimages", hash, "preimage");
}

Status SqliteNodeStore::put_codes(std::span<const Code> items) {
    return put_by_hash(put_code_, "codes", items, "code");
}

Result<std::optional<bytes>> SqliteNodeStore::get_code(const Hash256& hash) {
    // A file before version 3, read as it is, keeps no code.
    if (tries_.version() < 3) return std::optional<bytes>{};
    return get_by_hash(get_code_, "codes", hash, "code");
}

Status SqliteNodeStore::commit_write() {
    rows_->get.reset();
    if (rows_ == &staged_) {
        if (Status s = publish_staged(); !s) {
            rollback();
            return s;
        }
    }
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
        const Error e = error("commit");
        rollback();
        return e;
    }
    in_txn_ = false;
    return {};
}

void SqliteNodeStore::rollback() noexcept {
    rows_->get.reset();
    // The rollback also undoes the staging table's creation.
    end_staging();
    if (in_txn_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    in_txn_ = false;
}

int64_t SqliteNodeStore::max_blob_bytes() const noexcept { return sqlite::length_limit(db_); }

Result<int64_t> SqliteNodeStore::file_size() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0)
        return file_error(Errc::storage_io, path_, std::strerror(errno));
    return static_cast<int64_t>(st.st_size);
}

Result<std::optional<std::string>> SqliteNodeStore::cut_short() {
    // The header (https://sqlite.org/fileformat.html, 1.3): the page size at offset 16 (1
    // for 65536), and at 28 the pages in the file, valid when the change counter at 24
    // equals the number at 92.
    uint8_t h[100];
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return file_error(Errc::storage_io, path_, std::strerror(errno));
    const ssize_t n = ::pread(fd, h, sizeof h, 0);
    const int err = errno;
    struct stat st {};
    const bool sized = ::fstat(fd, &st) == 0;
    ::close(fd);
    if (n < 0 || !sized) return file_error(Errc::storage_io, path_, std::strerror(err));
    if (n < static_cast<ssize_t>(sizeof h)) {
        return std::optional<std::string>("the file is cut short: " + std::to_string(n) +
                                          " bytes, less than its header");
    }
    const auto be32 = [&](size_t at) {
        return uint32_t{h[at]} << 24 | uint32_t{h[at + 1]} << 16 | uint32_t{h[at + 2]} << 8 |
               uint32_t{h[at + 3]};
    };
    // The log, when it holds something, holds the pages a checkpoint has not yet folded in
    // (a full disk stops one halfway): the file's size says nothing until then.
    struct stat wal {};
    if (::stat((path_ + "-wal").c_str(), &wal) == 0 && wal.st_size > 0) {
        return std::optional<std::string>{};
    }
    const uint32_t page = h[16] == 0 && h[17] == 1 ? 65536u : uint32_t{h[16]} << 8 | h[17];
    const auto size = static_cast<uint64_t>(st.st_size);
    if (page == 0 || size % page != 0) {
        return std::optional<std::string>("the file is cut short: " + std::to_string(size) +
                                          " bytes, not whole pages of " + std::to_string(page));
    }
    const uint64_t pages = be32(28);
    if (be32(24) == be32(92) && size < pages * page) {
        return std::optional<std::string>(
            "the file is cut short: " + std::to_string(size) + " bytes, where its header counts " +
            std::to_string(pages) + " pages of " + std::to_string(page));
    }
    return std::optional<std::string>{};
}

Status SqliteNodeStore::set_max_pages(int64_t n) {
    return exec(("PRAGMA max_page_count=" + std::to_string(n)).c_str());
}

}  // namespace mpt
