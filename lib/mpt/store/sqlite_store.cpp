#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mpt/core/hex.hpp>
#include <mpt/store/sqlite_store.hpp>

namespace mpt {
namespace {

constexpr uint8_t kPathEnd = 0x10;  // above every nibble: prefix || 0x10 bounds a subtree

// The nodes table, and the staging table a new trie is built in (sqlite_store.hpp): the same
// columns, constraints and key, which SQLite's bulk copy between them requires.
constexpr const char* kNodesColumns =
    "(trie INTEGER NOT NULL, path BLOB NOT NULL, rlp BLOB NOT NULL, "
    "PRIMARY KEY (trie, path)) WITHOUT ROWID";
constexpr const char* kNodes = "main.nodes";
constexpr const char* kStagedNodes = "temp.staged_nodes";

Errc errc_of(int rc) noexcept {
    switch (rc & 0xff) {
        case SQLITE_FULL:
            return Errc::storage_full;
        case SQLITE_READONLY:
            return Errc::storage_readonly;
        case SQLITE_NOTADB:
            return Errc::storage_not_mpt;
        case SQLITE_CANTOPEN:
            return Errc::storage_open;
        default:
            return Errc::storage_io;
    }
}

// The upper bound of a subtree's key range: prefix || 0x10.
bytes subtree_end(bytes_view prefix) {
    bytes end(prefix.begin(), prefix.end());
    end.push_back(kPathEnd);
    return end;
}

// An owned statement for one-off queries.
struct Stmt {
    sqlite3_stmt* s = nullptr;
    ~Stmt() { sqlite3_finalize(s); }
};

const void* blob_ptr(bytes_view b) noexcept {
    // SQLite reads a NULL pointer as SQL NULL even with length 0; paths may be empty.
    static const uint8_t kEmpty = 0;
    return b.empty() ? &kEmpty : b.data();
}

// file:PATH?immutable=1, with PATH percent-encoded (RFC 3986 unreserved characters and '/'
// stay as they are).
std::string immutable_uri(const std::string& path) {
    std::string uri = path.starts_with('/') ? "file://" : "file:";
    for (const unsigned char c : path) {
        if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
            uri += static_cast<char>(c);
        } else {
            uri += '%';
            uri += "0123456789ABCDEF"[c >> 4];
            uri += "0123456789ABCDEF"[c & 0xf];
        }
    }
    return uri + "?immutable=1";
}

// REQUIRES: path is a regular file (opening a pipe to look would consume it).
bool has_sqlite_header(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return false;
    char header[16] = {};
    const size_t n = std::fread(header, 1, sizeof header, f);
    std::fclose(f);
    return n == 16 && std::memcmp(header, "SQLite format 3", 16) == 0;
}

}  // namespace

bool looks_like_sqlite(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && has_sqlite_header(path);
}

Result<std::unique_ptr<SqliteNodeStore>> SqliteNodeStore::open(const std::string& path, Mode mode) {
    // SQLite's memory statistics, which nothing here reads, take a global mutex on every
    // allocation it makes (2% of a large build's instructions). Only possible before SQLite
    // initializes, on the first open; later calls are refused and change nothing.
    static const bool memstatus_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
    static_cast<void>(memstatus_off);
    if (path.empty()) return {Errc::storage_open, "the trie file name is empty"};
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (!exists && mode != Mode::create) {
        return {Errc::storage_open, path + ": " + std::strerror(errno)};
    }
    if (exists && S_ISDIR(st.st_mode)) return {Errc::storage_open, path + ": is a directory"};
    if (exists && !S_ISREG(st.st_mode)) {
        return {Errc::storage_open, path + ": not a regular file"};
    }
    const bool fresh = !exists || st.st_size == 0;
    if (exists && mode != Mode::read_only && ::access(path.c_str(), W_OK) != 0) {
        return {Errc::storage_readonly, path + ": " + std::strerror(errno)};
    }
    if (exists && !fresh && !has_sqlite_header(path)) {
        return {Errc::storage_not_mpt, path + ": not an SQLite database"};
    }
    // A reader opens a writable file read-write, with writes refused (query_only below): a
    // read-only connection cannot roll back the journal a killed writer left, and would
    // refuse the file instead of reading the state before that write.
    const bool reader_can_recover = mode == Mode::read_only && ::access(path.c_str(), W_OK) == 0;
    int flags = mode == Mode::read_only && !reader_can_recover ? SQLITE_OPEN_READONLY
                                                               : SQLITE_OPEN_READWRITE;
    if (mode == Mode::create) flags |= SQLITE_OPEN_CREATE;
    flags |= SQLITE_OPEN_NOMUTEX;
    // A reader that can write neither the file nor its folder cannot create the -shm file a
    // WAL reader needs, and SQLite would refuse the file. With no log content there is
    // nothing the log could add, so it reads the file as immutable (no locks, no log); the
    // hash check on every read still catches a file changed underneath by its owner.
    // SQLite reads a name that starts with "file:" as a URI and ":memory:" as no file at
    // all; a relative name given as ./NAME is always the file of that name.
    std::string open_name = path.starts_with('/') ? path : "./" + path;
    if (mode == Mode::read_only && !reader_can_recover) {
        struct stat wal {};
        const bool wal_has_content = ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
        std::filesystem::path dir = std::filesystem::path(path).parent_path();
        if (dir.empty()) dir = ".";
        if (!wal_has_content && ::access(dir.c_str(), W_OK) != 0) {
            open_name = immutable_uri(path);
            flags |= SQLITE_OPEN_URI;
        }
    }
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(open_name.c_str(), &db, flags, nullptr);
    std::unique_ptr<SqliteNodeStore> store(new SqliteNodeStore(db, path));
    if (rc != SQLITE_OK) {
        return {errc_of(rc), path + ": " + (db ? sqlite3_errmsg(db) : "cannot open")};
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 10000);
    if (reader_can_recover) MPT_RETURN_IF_ERROR(store->exec("PRAGMA query_only=1"));
    bool empty = fresh;
    if (!empty) {
        // A database with nothing in it, as a first build killed before its schema commit
        // can leave behind, holds nothing to keep: it is created over like an empty file.
        MPT_TRY(empty, store->is_empty_database());
    }
    if (empty && mode != Mode::create) {
        return {Errc::storage_not_mpt, path + ": an empty file, not a trie file"};
    }
    if (empty) {
        MPT_RETURN_IF_ERROR(store->create_schema());
    } else {
        MPT_RETURN_IF_ERROR(store->check_schema(mode != Mode::read_only));
    }
    // WAL with synchronous=NORMAL survives a crash of the process at any point: a
    // transaction is either in the log whole or not at all.
    MPT_RETURN_IF_ERROR(store->exec("PRAGMA synchronous=NORMAL"));
    MPT_RETURN_IF_ERROR(store->exec("PRAGMA cache_size=-65536"));
    store->writable_ = mode != Mode::read_only;
    MPT_RETURN_IF_ERROR(store->prepare_rows(store->nodes_, kNodes));
    return store;
}

SqliteNodeStore::~SqliteNodeStore() {
    end_staging();
    nodes_.finalize();
    if (in_txn_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db_);
}

void SqliteNodeStore::RowStatements::finalize() noexcept {
    sqlite3_finalize(get);
    sqlite3_finalize(put);
    sqlite3_finalize(erase);
    sqlite3_finalize(put_batch);
    get = put = erase = put_batch = nullptr;
}

Status SqliteNodeStore::prepare_rows(RowStatements& s, const char* table) {
    const std::string t = table;
    MPT_RETURN_IF_ERROR(
        prepare(&s.get, ("SELECT rlp FROM " + t + " WHERE trie=?1 AND path=?2").c_str()));
    if (!writable_) return {};
    MPT_RETURN_IF_ERROR(prepare(
        &s.put, ("INSERT OR REPLACE INTO " + t + "(trie, path, rlp) VALUES(?1, ?2, ?3)").c_str()));
    return prepare(&s.erase, ("DELETE FROM " + t + " WHERE trie=?1 AND path=?2").c_str());
}

Status SqliteNodeStore::begin_staging() {
    Stmt st;
    if (sqlite3_prepare_v2(db_, "SELECT EXISTS (SELECT 1 FROM main.nodes)", -1, &st.s, nullptr) !=
            SQLITE_OK ||
        sqlite3_step(st.s) != SQLITE_ROW) {
        return error("count rows");
    }
    if (sqlite3_column_int(st.s, 0) != 0) return {};  // rows of other tries: write in place
    sqlite3_reset(st.s);  // DROP TABLE fails while a statement is active
    MPT_RETURN_IF_ERROR(exec("PRAGMA temp.cache_size=-65536"));
    // A staging table an earlier write published is still there (publish_staged).
    MPT_RETURN_IF_ERROR(exec("DROP TABLE IF EXISTS temp.staged_nodes"));
    MPT_RETURN_IF_ERROR(
        exec((std::string("CREATE TEMP TABLE staged_nodes") + kNodesColumns).c_str()));
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

Error SqliteNodeStore::error(const char* what) const {
    const int rc = sqlite3_extended_errcode(db_);
    std::string detail = path_ + ": " + what + ": " + sqlite3_errmsg(db_);
    if ((rc & 0xff) == SQLITE_CORRUPT) detail = path_ + ": " + what + ": the file is corrupt";
    if (rc == SQLITE_READONLY_ROLLBACK || rc == SQLITE_READONLY_RECOVERY) {
        detail = path_ + ": " + what +
                 ": an interrupted write must be rolled back, which needs write access";
    }
    return {errc_of(rc), std::move(detail)};
}

Status SqliteNodeStore::exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return error(sql);
    return {};
}

Status SqliteNodeStore::prepare(sqlite3_stmt** stmt, const char* sql) {
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr) != SQLITE_OK) {
        const Error e = error("prepare");
        // A failure to prepare against a file that passed the schema check means the
        // tables are not what they should be.
        return {Errc::storage_not_mpt, e.detail};
    }
    return {};
}

Status SqliteNodeStore::create_schema() {
    // Rows average ~90 bytes and branch rows ~530: 8 KiB pages hold more of them per page
    // and need half the interior cells (which carry whole rows in a WITHOUT ROWID table).
    // Takes effect only on a file with no pages yet.
    MPT_RETURN_IF_ERROR(exec("PRAGMA page_size=8192"));
    MPT_RETURN_IF_ERROR(exec("PRAGMA journal_mode=WAL"));
    // Tables and header fields are one transaction: a crash leaves an empty database, which
    // open() creates over, or the whole schema.
    MPT_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
    const std::string sql =
        "CREATE TABLE tries(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
        "root BLOB NOT NULL, secure INTEGER NOT NULL);"
        "CREATE TABLE nodes" +
        std::string(kNodesColumns) +
        ";"
        "PRAGMA application_id=" +
        std::to_string(kApplicationId) +
        ";"
        "PRAGMA user_version=" +
        std::to_string(kSchemaVersion) + ";";
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
        const Error e = error("create schema");
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        return e;
    }
    return exec("COMMIT");
}

Result<int64_t> SqliteNodeStore::query_int(const char* sql) {
    Stmt st;
    if (sqlite3_prepare_v2(db_, sql, -1, &st.s, nullptr) != SQLITE_OK) return error("read header");
    if (sqlite3_step(st.s) != SQLITE_ROW) return error("read header");
    return sqlite3_column_int64(st.s, 0);
}

Result<bool> SqliteNodeStore::is_empty_database() {
    // A trie file says so in its header: the common case needs no further query.
    auto app = query_int("PRAGMA application_id");
    if (app && *app == kApplicationId) return false;
    Stmt st;
    if (sqlite3_prepare_v2(db_,
                           "SELECT (SELECT count(*) FROM sqlite_master) = 0 AND "
                           "(SELECT application_id FROM pragma_application_id) = 0 AND "
                           "(SELECT user_version FROM pragma_user_version) = 0",
                           -1, &st.s, nullptr) != SQLITE_OK ||
        sqlite3_step(st.s) != SQLITE_ROW) {
        const Error e = error("read header");
        if (e.code == Errc::storage_not_mpt || e.code == Errc::storage_io) {
            return {Errc::storage_not_mpt, path_ + ": not an SQLite database, or corrupt"};
        }
        return e;
    }
    return sqlite3_column_int(st.s, 0) != 0;
}

Status SqliteNodeStore::check_schema(bool writable) {
    auto app = query_int("PRAGMA application_id");
    if (!app) {
        if (app.error().code == Errc::storage_not_mpt || app.error().code == Errc::storage_io) {
            return {Errc::storage_not_mpt, path_ + ": not an SQLite database, or corrupt"};
        }
        return app.error();
    }
    if (*app != kApplicationId) {
        return {Errc::storage_not_mpt, path_ + ": an SQLite database not made by mpt"};
    }
    MPT_TRY(int64_t version, query_int("PRAGMA user_version"));
    if (version != kSchemaVersion) {
        return {Errc::storage_version, path_ + ": schema version " + std::to_string(version) +
                                           ", this mpt reads version " +
                                           std::to_string(kSchemaVersion)};
    }
    MPT_TRY(int64_t tables, query_int("SELECT count(*) FROM sqlite_master WHERE type='table' AND "
                                      "name IN ('tries', 'nodes')"));
    if (tables != 2) return {Errc::storage_not_mpt, path_ + ": tables missing"};
    if (writable) {
        // Files are created in WAL mode; make sure an old or copied file is too.
        Stmt st;
        if (sqlite3_prepare_v2(db_, "PRAGMA journal_mode", -1, &st.s, nullptr) == SQLITE_OK &&
            sqlite3_step(st.s) == SQLITE_ROW) {
            const char* mode = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
            if (mode == nullptr || std::strcmp(mode, "wal") != 0) {
                sqlite3_finalize(st.s);
                st.s = nullptr;
                MPT_RETURN_IF_ERROR(exec("PRAGMA journal_mode=WAL"));
            }
        }
    }
    return {};
}

Result<std::optional<TrieInfo>> SqliteNodeStore::find_trie(std::string_view name) {
    Stmt st;
    if (sqlite3_prepare_v2(db_, "SELECT id, name, root, secure FROM tries WHERE name=?1", -1, &st.s,
                           nullptr) != SQLITE_OK) {
        return error("find trie");
    }
    sqlite3_bind_text(st.s, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(st.s);
    if (rc == SQLITE_DONE) return std::optional<TrieInfo>{};
    if (rc != SQLITE_ROW) return error("find trie");
    TrieInfo t;
    t.id = sqlite3_column_int64(st.s, 0);
    t.name = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 1));
    if (sqlite3_column_bytes(st.s, 2) != 32) {
        return {Errc::storage_io, path_ + ": trie " + t.name + ": stored root is not 32 bytes"};
    }
    std::memcpy(t.root.data(), sqlite3_column_blob(st.s, 2), 32);
    t.secure = sqlite3_column_int(st.s, 3) != 0;
    return std::optional<TrieInfo>(std::move(t));
}

Result<std::vector<TrieInfo>> SqliteNodeStore::list_tries() {
    Stmt st;
    if (sqlite3_prepare_v2(db_, "SELECT name FROM tries ORDER BY name", -1, &st.s, nullptr) !=
        SQLITE_OK) {
        return error("list tries");
    }
    std::vector<std::string> names;
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0)));
    }
    if (rc != SQLITE_DONE) return error("list tries");
    std::vector<TrieInfo> out;
    for (const std::string& n : names) {
        MPT_TRY(std::optional<TrieInfo> t, find_trie(n));
        if (t) out.push_back(std::move(*t));
    }
    return out;
}

Result<bytes_view> SqliteNodeStore::get(TrieId trie, bytes_view path) {
    sqlite3_stmt* get = rows_->get;
    sqlite3_reset(get);
    sqlite3_bind_int64(get, 1, trie);
    sqlite3_bind_blob(get, 2, blob_ptr(path), static_cast<int>(path.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(get);
    if (rc == SQLITE_DONE) return bytes_view{};
    if (rc != SQLITE_ROW) {
        const Error e = error("read node");
        sqlite3_reset(get);
        return e;
    }
    const void* p = sqlite3_column_blob(get, 0);
    const int n = sqlite3_column_bytes(get, 0);
    return bytes_view(static_cast<const uint8_t*>(p), static_cast<size_t>(n));
}

Status SqliteNodeStore::scan(TrieId trie, bytes_view prefix, const RowVisitor& f) {
    Stmt st;
    const std::string sql = std::string("SELECT path, rlp FROM ") + table_ +
                            " WHERE trie=?1 AND path>=?2 AND path<?3 ORDER BY path";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) {
        return error("scan");
    }
    const bytes end = subtree_end(prefix);
    sqlite3_bind_int64(st.s, 1, trie);
    sqlite3_bind_blob(st.s, 2, blob_ptr(prefix), static_cast<int>(prefix.size()), SQLITE_STATIC);
    sqlite3_bind_blob(st.s, 3, end.data(), static_cast<int>(end.size()), SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
        const bytes_view path(static_cast<const uint8_t*>(sqlite3_column_blob(st.s, 0)),
                              static_cast<size_t>(sqlite3_column_bytes(st.s, 0)));
        const bytes_view rlp(static_cast<const uint8_t*>(sqlite3_column_blob(st.s, 1)),
                             static_cast<size_t>(sqlite3_column_bytes(st.s, 1)));
        if (!f(path, rlp)) return {};
    }
    if (rc != SQLITE_DONE) return error("scan");
    return {};
}

Result<uint64_t> SqliteNodeStore::count_rows(TrieId trie) {
    Stmt st;
    const std::string sql = std::string("SELECT count(*) FROM ") + table_ + " WHERE trie=?1";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) {
        return error("count rows");
    }
    sqlite3_bind_int64(st.s, 1, trie);
    if (sqlite3_step(st.s) != SQLITE_ROW) return error("count rows");
    return static_cast<uint64_t>(sqlite3_column_int64(st.s, 0));
}

Status SqliteNodeStore::begin_read() {
    sqlite3_reset(rows_->get);
    MPT_RETURN_IF_ERROR(exec("BEGIN"));
    in_txn_ = true;
    // Take the snapshot now, so that every later read sees the same state.
    Stmt st;
    if (sqlite3_prepare_v2(db_, "SELECT count(*) FROM tries", -1, &st.s, nullptr) != SQLITE_OK ||
        sqlite3_step(st.s) != SQLITE_ROW) {
        return error("begin read");
    }
    return {};
}

void SqliteNodeStore::end_read() noexcept {
    sqlite3_reset(rows_->get);
    if (in_txn_) sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr);
    in_txn_ = false;
}

Status SqliteNodeStore::begin_write() {
    if (!writable_) return {Errc::storage_readonly, path_ + ": opened read-only"};
    sqlite3_reset(rows_->get);
    MPT_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
    in_txn_ = true;
    return {};
}

Result<TrieId> SqliteNodeStore::create_trie(std::string_view name, bool secure) {
    MPT_TRY(const TrieId id, insert_trie(name, secure));
    if (rows_ != &staged_) MPT_RETURN_IF_ERROR(begin_staging());
    return id;
}

Result<TrieId> SqliteNodeStore::insert_trie(std::string_view name, bool secure) {
    Stmt st;
    if (sqlite3_prepare_v2(db_, "INSERT INTO tries(name, root, secure) VALUES(?1, ?2, ?3)", -1,
                           &st.s, nullptr) != SQLITE_OK) {
        return error("create trie");
    }
    sqlite3_bind_text(st.s, 1, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
    sqlite3_bind_blob(st.s, 2, kEmptyRoot.data(), 32, SQLITE_STATIC);
    sqlite3_bind_int(st.s, 3, secure ? 1 : 0);
    if (sqlite3_step(st.s) != SQLITE_DONE) return error("create trie");
    return static_cast<TrieId>(sqlite3_last_insert_rowid(db_));
}

Result<SqliteNodeStore::FileImage> SqliteNodeStore::new_file_image(std::string_view name,
                                                                   bool secure,
                                                                   const Hash256& root) {
    // The pages SQLite itself makes of this schema and row, in memory: the file is then
    // exactly what open() and a build would have begun it with.
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(
        ":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    SqliteNodeStore store(db, ":memory:");
    if (rc != SQLITE_OK) return {errc_of(rc), "in-memory database: cannot open"};
    MPT_RETURN_IF_ERROR(store.create_schema());
    MPT_TRY(const TrieId id, store.insert_trie(name, secure));
    MPT_RETURN_IF_ERROR(store.set_root(id, root));
    MPT_TRY(const int64_t nodes_root,
            store.query_int("SELECT rootpage FROM sqlite_master WHERE name='nodes'"));
    sqlite3_int64 size = 0;
    unsigned char* data = sqlite3_serialize(db, "main", &size, 0);
    if (data == nullptr) return {Errc::storage_io, "in-memory database: cannot serialize"};
    FileImage image;
    image.pages.assign(data, data + size);
    sqlite3_free(data);
    uint8_t* header = image.pages.data();  // fileformat2 1.3
    image.page_size = static_cast<uint32_t>(header[16] << 8 | header[17]);
    if (image.page_size == 1) image.page_size = 65536;
    header[18] = header[19] = 2;  // the write and read versions of a file in WAL mode
    image.nodes_root = static_cast<uint32_t>(nodes_root);
    image.trie = id;
    return image;
}

void SqliteNodeStore::finish_image_header(bytes& page1, uint32_t pages) noexcept {
    // fileformat2 1.3. The page count (offset 28) holds while the version-valid-for number
    // (92) equals the change counter (24); SQLite otherwise counts pages from the file's
    // size. An in-memory database leaves the counter and the library version (96) at 0.
    const auto put_u32 = [&](size_t at, uint32_t v) {
        for (int i = 3; i >= 0; --i, v >>= 8) page1[at + i] = static_cast<uint8_t>(v);
    };
    put_u32(24, 1);
    put_u32(28, pages);
    put_u32(92, 1);
    put_u32(96, static_cast<uint32_t>(sqlite3_libversion_number()));
}

Status SqliteNodeStore::put(TrieId trie, bytes_view path, bytes_view rlp) {
    sqlite3_stmt* put = rows_->put;
    sqlite3_reset(put);
    sqlite3_bind_int64(put, 1, trie);
    sqlite3_bind_blob(put, 2, blob_ptr(path), static_cast<int>(path.size()), SQLITE_STATIC);
    sqlite3_bind_blob(put, 3, rlp.data(), static_cast<int>(rlp.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(put);
    sqlite3_reset(put);
    if (rc != SQLITE_DONE) return error("write node");
    return {};
}

Status SqliteNodeStore::put_rows(TrieId trie, std::span<const RowList::Row> rows) {
    // One statement inserts kPutRowsBatch rows in order, with the effect of as many puts: a later
    // row of the same path replaces an earlier one. Keeping one cursor across its rows also spares
    // SQLite the descent from the root when rows come in key order.
    if (rows.size() >= kPutRowsBatch && rows_->put_batch == nullptr) {
        std::string sql =
            std::string("INSERT OR REPLACE INTO ") + table_ + "(trie, path, rlp) VALUES";
        for (size_t i = 0; i < kPutRowsBatch; ++i) sql += i == 0 ? "(?1, ?, ?)" : ", (?1, ?, ?)";
        MPT_RETURN_IF_ERROR(prepare(&rows_->put_batch, sql.c_str()));
    }
    size_t i = 0;
    for (; rows.size() - i >= kPutRowsBatch; i += kPutRowsBatch) {
        sqlite3_stmt* put = rows_->put_batch;
        sqlite3_reset(put);
        sqlite3_bind_int64(put, 1, trie);
        for (size_t j = 0; j < kPutRowsBatch; ++j) {
            const RowList::Row& r = rows[i + j];
            const int at = 2 + 2 * static_cast<int>(j);
            sqlite3_bind_blob(put, at, blob_ptr(r.path), static_cast<int>(r.path.size()),
                              SQLITE_STATIC);
            sqlite3_bind_blob(put, at + 1, r.rlp.data(), static_cast<int>(r.rlp.size()),
                              SQLITE_STATIC);
        }
        const int rc = sqlite3_step(put);
        sqlite3_reset(put);
        if (rc != SQLITE_DONE) return error("write node");
    }
    for (; i < rows.size(); ++i) MPT_RETURN_IF_ERROR(put(trie, rows[i].path, rows[i].rlp));
    return {};
}

Status SqliteNodeStore::erase(TrieId trie, bytes_view path) {
    sqlite3_stmt* erase = rows_->erase;
    sqlite3_reset(erase);
    sqlite3_bind_int64(erase, 1, trie);
    sqlite3_bind_blob(erase, 2, blob_ptr(path), static_cast<int>(path.size()), SQLITE_STATIC);
    const int rc = sqlite3_step(erase);
    sqlite3_reset(erase);
    if (rc != SQLITE_DONE) return error("delete node");
    return {};
}

Result<size_t> SqliteNodeStore::erase_subtree(TrieId trie, bytes_view prefix) {
    Stmt st;
    const std::string sql =
        std::string("DELETE FROM ") + table_ + " WHERE trie=?1 AND path>=?2 AND path<?3";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st.s, nullptr) != SQLITE_OK) {
        return error("delete subtree");
    }
    const bytes end = subtree_end(prefix);
    sqlite3_bind_int64(st.s, 1, trie);
    sqlite3_bind_blob(st.s, 2, blob_ptr(prefix), static_cast<int>(prefix.size()), SQLITE_STATIC);
    sqlite3_bind_blob(st.s, 3, end.data(), static_cast<int>(end.size()), SQLITE_STATIC);
    if (sqlite3_step(st.s) != SQLITE_DONE) return error("delete subtree");
    return static_cast<size_t>(sqlite3_changes64(db_));
}

Status SqliteNodeStore::set_root(TrieId trie, const Hash256& root) {
    Stmt st;
    if (sqlite3_prepare_v2(db_, "UPDATE tries SET root=?2 WHERE id=?1", -1, &st.s, nullptr) !=
        SQLITE_OK) {
        return error("set root");
    }
    sqlite3_bind_int64(st.s, 1, trie);
    sqlite3_bind_blob(st.s, 2, root.data(), 32, SQLITE_STATIC);
    if (sqlite3_step(st.s) != SQLITE_DONE) return error("set root");
    if (sqlite3_changes(db_) != 1)
        return {Errc::no_such_trie, path_ + ": trie id " + std::to_string(trie)};
    return {};
}

Status SqliteNodeStore::commit_write() {
    sqlite3_reset(rows_->get);
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
    sqlite3_reset(rows_->get);
    // The rollback also undoes the staging table's creation.
    end_staging();
    if (in_txn_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    in_txn_ = false;
}

Result<int64_t> SqliteNodeStore::file_size() {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0)
        return {Errc::storage_io, path_ + ": " + std::strerror(errno)};
    return static_cast<int64_t>(st.st_size);
}

Status SqliteNodeStore::set_max_pages(int64_t n) {
    return exec(("PRAGMA max_page_count=" + std::to_string(n)).c_str());
}

}  // namespace mpt
