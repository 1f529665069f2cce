#include <sqlite3.h>

#include <mpt/store/detail/sqlite_stmt.hpp>

#include <cerrno>
#include <cstring>

namespace mpt::sqlite {

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
        case SQLITE_NOMEM:
            return Errc::out_of_memory;
        case SQLITE_TOOBIG:
            return Errc::input_too_large;
        default:
            return Errc::storage_io;
    }
}

namespace {

// The cause of rc in words, or empty where SQLite's own message says it.
std::string cause_of(int rc) {
    switch (rc) {
        case SQLITE_FULL:
            return "no space left on the device, or the file reached its size limit";
        case SQLITE_IOERR_SHMSIZE:
        case SQLITE_IOERR_SHMMAP:
        case SQLITE_IOERR_SHMOPEN:
            return "no space left for the write-ahead log's index (the -shm file)";
        case SQLITE_IOERR_WRITE:
        case SQLITE_IOERR_FSYNC:
            return "a write to the disk failed (is it full?)";
        case SQLITE_IOERR_TRUNCATE:
            return "the file could not be resized (is the disk full?)";
        case SQLITE_NOMEM:
        case SQLITE_IOERR_NOMEM:
            return "out of memory";
        case SQLITE_TOOBIG:
            return "a string or blob exceeds SQLite's length limit";
        case SQLITE_READONLY_ROLLBACK:
        case SQLITE_READONLY_RECOVERY:
            return "an interrupted write must be rolled back, which needs write access";
        case SQLITE_READONLY_DBMOVED:
            return "the file was moved or deleted while open";
        case SQLITE_CANTOPEN_ISDIR:
            return "is a directory";
        default:
            break;
    }
    if ((rc & 0xff) == SQLITE_CORRUPT) return "the file is corrupt";
    if ((rc & 0xff) == SQLITE_NOTADB) return "not an SQLite database";
    return {};
}

}  // namespace

Error last_error(sqlite3* db, const std::string& path, std::string_view what) {
    const int rc = db != nullptr ? sqlite3_extended_errcode(db) : SQLITE_NOMEM;
    std::string cause = cause_of(rc);
    if (cause.empty()) cause = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    // SQLite names the failing system call of an I/O error only through the errno it kept.
    if (((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN) && db != nullptr &&
        rc != SQLITE_IOERR_NOMEM) {
        if (const int e = sqlite3_system_errno(db); e != 0) {
            cause += std::string(" (") + std::strerror(e) + ")";
        }
    }
    Errc code = errc_of(rc);
    // An I/O error whose cause is a full disk is a full disk.
    if ((rc & 0xff) == SQLITE_IOERR && db != nullptr && sqlite3_system_errno(db) == ENOSPC) {
        code = Errc::storage_full;
    }
    return file_error(code, path, std::string(what) + ": " + cause);
}

Error error_of_code(int rc, const std::string& path, std::string_view what) {
    std::string cause = cause_of(rc);
    if (cause.empty()) cause = sqlite3_errstr(rc);
    return file_error(errc_of(rc), path, std::string(what) + ": " + cause);
}

int64_t length_limit(sqlite3* db) noexcept { return sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1); }

int64_t default_length_limit() noexcept {
    static const int64_t limit = [] {
        sqlite3* db = nullptr;
        int64_t n = 1000000000;  // SQLite's default, should no connection open
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
            n = length_limit(db);
        }
        sqlite3_close(db);
        return n;
    }();
    return limit;
}

Statement& Statement::operator=(Statement&& o) noexcept {
    if (this != &o) {
        finalize();
        s_ = o.s_;
        bind_rc_ = o.bind_rc_;
        o.s_ = nullptr;
    }
    return *this;
}

int Statement::prepare(sqlite3* db, std::string_view sql, bool persistent) noexcept {
    finalize();
    return sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &s_, nullptr);
}

void Statement::finalize() noexcept {
    sqlite3_finalize(s_);
    s_ = nullptr;
    bind_rc_ = SQLITE_OK;
}

void Statement::bind(int i, int64_t v) noexcept {
    const int rc = sqlite3_bind_int64(s_, i, v);
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::bind(int i, bytes_view blob) noexcept {
    // SQLite reads a NULL pointer as SQL NULL even with length 0; paths may be empty.
    static const uint8_t kEmpty = 0;
    const int rc = sqlite3_bind_blob64(s_, i, blob.empty() ? &kEmpty : blob.data(), blob.size(),
                                       SQLITE_STATIC);
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

void Statement::bind_text(int i, std::string_view text) noexcept {
    static const char kEmpty = 0;
    const int rc = sqlite3_bind_text64(s_, i, text.empty() ? &kEmpty : text.data(), text.size(),
                                       SQLITE_STATIC, SQLITE_UTF8);
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
}

int Statement::step() noexcept { return bind_rc_ != SQLITE_OK ? bind_rc_ : sqlite3_step(s_); }

void Statement::reset() noexcept {
    sqlite3_reset(s_);
    bind_rc_ = SQLITE_OK;
}

int Statement::column_type(int i) const noexcept { return sqlite3_column_type(s_, i); }

int64_t Statement::column_int64(int i) const noexcept { return sqlite3_column_int64(s_, i); }

bytes_view Statement::column_blob(int i) const noexcept {
    const void* p = sqlite3_column_blob(s_, i);
    const int n = sqlite3_column_bytes(s_, i);
    return bytes_view(static_cast<const uint8_t*>(p), p == nullptr ? 0 : static_cast<size_t>(n));
}

std::string_view Statement::column_text(int i) const noexcept {
    const unsigned char* p = sqlite3_column_text(s_, i);
    const int n = sqlite3_column_bytes(s_, i);
    if (p == nullptr) return {};
    return std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

}  // namespace mpt::sqlite
