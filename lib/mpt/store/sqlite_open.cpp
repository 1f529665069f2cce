// SqliteNodeStore: opening a file, and making or checking its schema (sqlite_store.hpp).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mpt/core/bytes.hpp>
#include <mpt/core/hex.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <span>
#include <string_view>

namespace mpt {
namespace {

using sqlite::Statement;

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

// The first bytes of a file, as many as it has up to the buffer's size.
// REQUIRES: path is a regular file (opening a pipe to look would consume it).
std::string_view read_head(const std::string& path, std::span<char> buffer) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return {};
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), f);
    std::fclose(f);
    return {buffer.data(), n};
}

bool has_sqlite_header(const std::string& path) {
    char buffer[kSqliteHeader.size()];
    return read_head(path, buffer) == kSqliteHeader;
}

// Why a file with no SQLite header is no trie file, with a guess at what it is where its
// first bytes tell: a JSON document (after a byte order mark and white space, an object or an
// array), the input the commands that compute a root read.
const char* not_sqlite_reason(const std::string& path) {
    char buffer[512];
    std::string_view head = read_head(path, buffer);
    if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
    const size_t first = head.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && (head[first] == '{' || head[first] == '[')) {
        return "not an SQLite database (a JSON document?)";
    }
    return "not an SQLite database";
}

// Removes the log (-wal, when empty) and its index (-shm) that a failed open made, when they
// were not there before and no other connection uses them: SQLite's connections hold a shared
// lock on the index's byte 128 (the "DMS" lock of os_unix.c) while they live, so an exclusive
// lock on it proves the files are no one's.
void remove_new_log(const std::string& wal, bool had_wal, const std::string& shm, bool had_shm) {
    if (had_wal && had_shm) return;
    int fd = -1;
    if (!had_shm) {
        fd = ::open(shm.c_str(), O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            struct flock lk {};
            lk.l_type = F_WRLCK;
            lk.l_whence = SEEK_SET;
            lk.l_start = 128;
            lk.l_len = 1;
            if (::fcntl(fd, F_SETLK, &lk) != 0) {
                ::close(fd);
                return;  // in use
            }
        }
    }
    struct stat s {};
    if (!had_wal && ::stat(wal.c_str(), &s) == 0 && s.st_size == 0) ::unlink(wal.c_str());
    if (fd >= 0) {
        ::unlink(shm.c_str());
        ::close(fd);
    }
}

// What open finds at path before SQLite opens it.
struct FileState {
    bool exists = false;
    bool fresh = false;  // no file, or an empty one
};

// Whether path may be opened in mode, said before SQLite is asked, and in the terms a user
// can act on: no file, a directory or another kind of file, no permission to write or read,
// a folder that takes no new file, or a file that is no SQLite database.
Result<FileState> file_state(const std::string& path, SqliteNodeStore::Mode mode) {
    using Mode = SqliteNodeStore::Mode;
    if (path.empty()) return {Errc::storage_open, "the trie file name is empty"};
    struct stat st {};
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (!exists && mode != Mode::create) {
        return file_error(Errc::storage_open, path, std::strerror(errno));
    }
    if (exists && S_ISDIR(st.st_mode))
        return file_error(Errc::storage_open, path, "is a directory");
    if (exists && !S_ISREG(st.st_mode)) {
        return file_error(Errc::storage_open, path, "not a regular file");
    }
    const bool fresh = !exists || st.st_size == 0;
    if (exists && mode != Mode::read_only && ::access(path.c_str(), W_OK) != 0) {
        return file_error(Errc::storage_readonly, path, std::strerror(errno));
    }
    // A new file in a folder that takes none (a read-only file system, no write permission)
    // gets the answer an existing file there gets, not SQLite's "unable to open" with
    // whatever errno its probing left.
    if (!exists && mode == Mode::create) {
        const size_t slash = path.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
        if (::access(dir.c_str(), W_OK) != 0 && (errno == EROFS || errno == EACCES)) {
            return file_error(Errc::storage_readonly, path, std::strerror(errno));
        }
    }
    // A file this process may not read is no proof of a foreign file: say why, so that no one
    // deletes a sound file as "not an SQLite database".
    if (exists && !fresh && ::access(path.c_str(), R_OK) != 0) {
        return file_error(Errc::storage_open, path, std::strerror(errno));
    }
    if (exists && !fresh && !has_sqlite_header(path)) {
        return file_error(Errc::storage_not_mpt, path, not_sqlite_reason(path));
    }
    return FileState{exists, fresh};
}

}  // namespace

bool looks_like_sqlite(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && has_sqlite_header(path);
}

Result<std::unique_ptr<SqliteNodeStore>> SqliteNodeStore::open(const std::string& path, Mode mode) {
    // The log and its index, when an open fails, are left only if they were there before or
    // hold something: an open that fails for want of space leaves no empty -wal and -shm.
    struct stat st {};
    const std::string wal = path + "-wal";
    const std::string shm = path + "-shm";
    const bool had_wal = ::stat(wal.c_str(), &st) == 0;
    const bool wal_has_content = had_wal && st.st_size > 0;
    const bool had_shm = ::stat(shm.c_str(), &st) == 0;
    const bool hot_journal = ::stat((path + "-journal").c_str(), &st) == 0 && st.st_size > 0;
    auto r = open_once(path, mode, false);
    if (r.ok()) return r;
    const auto cleanup = [&] { remove_new_log(wal, had_wal, shm, had_shm); };
    cleanup();
    // A reader on a full disk cannot make the -shm file a WAL reader needs. With no log
    // content there is nothing the log could add: the file alone is the state, read as
    // immutable (no log, no locks), as for a reader that may not write the folder.
    if (r.error().code == Errc::storage_full && mode == Mode::read_only && !wal_has_content &&
        !hot_journal) {
        auto again = open_once(path, mode, true);
        if (again.ok()) return again;
        cleanup();
    }
    return r;
}

Result<std::unique_ptr<SqliteNodeStore>> SqliteNodeStore::open_once(const std::string& path,
                                                                    Mode mode, bool immutable) {
    // SQLite's memory statistics, which nothing here reads, take a global mutex on every
    // allocation it makes (2% of a large build's instructions). Only possible before SQLite
    // initializes, on the first open; later calls are refused and change nothing.
    static const bool memstatus_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
    static_cast<void>(memstatus_off);
    MPT_TRY(const FileState file, file_state(path, mode));
    const bool fresh = file.fresh;
    // A reader opens a writable file read-write, with writes refused (query_only below): a
    // read-only connection cannot roll back the journal a killed writer left, and would
    // refuse the file instead of reading the state before that write.
    const bool reader_can_recover =
        mode == Mode::read_only && !immutable && ::access(path.c_str(), W_OK) == 0;
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
        if (immutable || (!wal_has_content && ::access(dir.c_str(), W_OK) != 0)) {
            open_name = immutable_uri(path);
            flags |= SQLITE_OPEN_URI;
        }
    }
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(open_name.c_str(), &db, flags, nullptr);
    std::unique_ptr<SqliteNodeStore> store(new SqliteNodeStore(db, path));
    if (rc != SQLITE_OK) {
        return db != nullptr ? sqlite::last_error(db, path, "open")
                             : sqlite::error_of_code(rc, path, "open");
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
        return file_error(Errc::storage_not_mpt, path, "an empty file, not a trie file");
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
    MPT_RETURN_IF_ERROR(store->prepare_rows(store->nodes_, "main.nodes"));
    return store;
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
    if (sqlite3_exec(db_, sqlite::schema_sql().c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
        const Error e = error("create schema");
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        return e;
    }
    return exec("COMMIT");
}

Result<int64_t> SqliteNodeStore::query_int(const char* sql) {
    Statement st;
    if (st.prepare(db_, sql) != SQLITE_OK || st.step() != SQLITE_ROW) return error("read header");
    return st.column_int64(0);
}

namespace {

// A read of the header that failed as a damaged file would: said so, whatever SQLite called
// it. Other causes (no memory, no space for the log's index, ...) are kept.
Error header_error(Error e, const std::string& path) {
    if (e.code == Errc::storage_not_mpt ||
        (e.code == Errc::storage_io && e.detail.find("corrupt") != std::string::npos)) {
        return file_error(Errc::storage_not_mpt, path, "not an SQLite database, or corrupt");
    }
    return e;
}

}  // namespace

Result<bool> SqliteNodeStore::is_empty_database() {
    // A trie file says so in its header: the common case needs no further query.
    auto app = query_int("PRAGMA application_id");
    if (app && *app == kApplicationId) return false;
    Statement st;
    if (st.prepare(db_,
                   "SELECT (SELECT count(*) FROM sqlite_master) = 0 AND "
                   "(SELECT application_id FROM pragma_application_id) = 0 AND "
                   "(SELECT user_version FROM pragma_user_version) = 0") != SQLITE_OK ||
        st.step() != SQLITE_ROW) {
        return header_error(error("read header"), path_);
    }
    return st.column_int64(0) != 0;
}

Status SqliteNodeStore::check_schema(bool writable) {
    auto app = query_int("PRAGMA application_id");
    if (!app) return header_error(app.error(), path_);
    if (*app != kApplicationId) {
        return file_error(Errc::storage_not_mpt, path_, "an SQLite database not made by mpt");
    }
    MPT_TRY(int64_t version, query_int("PRAGMA user_version"));
    if (version < sqlite::kOldestSchemaVersion || version > kSchemaVersion) {
        return file_error(Errc::storage_version, path_,
                          "schema version " + std::to_string(version) +
                              ", this mpt reads versions " +
                              std::to_string(sqlite::kOldestSchemaVersion) + " to " +
                              std::to_string(kSchemaVersion));
    }
    const std::string names = version >= 3   ? "('tries', 'nodes', 'preimages', 'codes')"
                              : version >= 2 ? "('tries', 'nodes', 'preimages')"
                                             : "('tries', 'nodes')";
    const int64_t want = version + 1;
    MPT_TRY(int64_t tables,
            query_int(("SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN " + names)
                          .c_str()));
    if (tables != want) return file_error(Errc::storage_not_mpt, path_, "tables missing");
    tries_.set_version(static_cast<int>(version));
    // The rows of the tries table are validated where they are read (tries_table.hpp), not
    // here: a file of a million storage tries would spend seconds on rows a get never reads.
    // mpt check reads, and so validates, all of them.
    if (writable) {
        // Files are created in WAL mode; make sure an old or copied file is too.
        Statement st;
        if (st.prepare(db_, "PRAGMA journal_mode") == SQLITE_OK && st.step() == SQLITE_ROW &&
            st.column_text(0) != "wal") {
            st.finalize();
            MPT_RETURN_IF_ERROR(exec("PRAGMA journal_mode=WAL"));
        }
        st.finalize();  // a DROP TABLE fails while a statement is active
        if (version < kSchemaVersion) MPT_RETURN_IF_ERROR(tries_.upgrade());
    }
    return {};
}

}  // namespace mpt
