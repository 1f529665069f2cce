// Internal to the store: one owned SQLite statement, and SQLite's result codes as Errors.
//
// Thread safety: a Statement belongs to its connection and is used by one thread at a time.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace mpt::sqlite {

// The error code for an SQLite result code (primary or extended).
Errc errc_of(int rc) noexcept;

// The error for the last failed call on db, "<path>: <what>: <cause>", where the cause names
// what went wrong in words (no space left, the length limit, no memory, ...) rather than
// SQLite's generic message where that would mislead.
Error last_error(sqlite3* db, const std::string& path, std::string_view what);

// The error for result code rc of a call that made no connection (or whose connection
// cannot say more), "<path>: <what>: <cause>".
Error error_of_code(int rc, const std::string& path, std::string_view what);

// The largest string, BLOB or row, in bytes, the connection db stores (SQLITE_LIMIT_LENGTH).
int64_t length_limit(sqlite3* db) noexcept;
// The same for a new connection: SQLITE_MAX_LENGTH as this SQLite was built, 10^9 by default.
int64_t default_length_limit() noexcept;

// An owned prepared statement: finalized when it goes. Views returned by column_* are valid
// until the next step(), reset() or finalization.
class Statement {
public:
    Statement() = default;
    ~Statement() { finalize(); }
    Statement(Statement&& o) noexcept : s_(o.s_), bind_rc_(o.bind_rc_) { o.s_ = nullptr; }
    Statement& operator=(Statement&& o) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Prepares sql on db, finalizing any earlier statement; persistent for statements kept
    // for the connection's life. Returns SQLite's result code.
    int prepare(sqlite3* db, std::string_view sql, bool persistent = false) noexcept;
    void finalize() noexcept;
    explicit operator bool() const noexcept { return s_ != nullptr; }

    // Bind parameter i (from 1). A blob or text is not copied: it must stay valid until the
    // statement is reset or bound again. A failed bind (SQLITE_TOOBIG past the length limit)
    // is kept, and the next step() returns it without running the statement: SQLite would
    // otherwise run it with NULL in that place.
    void bind(int i, int64_t v) noexcept;
    void bind(int i, bytes_view blob) noexcept;
    void bind_text(int i, std::string_view text) noexcept;

    // SQLITE_ROW, SQLITE_DONE or an error code (that of a failed bind first).
    int step() noexcept;
    void reset() noexcept;

    int column_type(int i) const noexcept;
    int64_t column_int64(int i) const noexcept;
    bytes_view column_blob(int i) const noexcept;
    std::string_view column_text(int i) const noexcept;

private:
    sqlite3_stmt* s_ = nullptr;
    int bind_rc_ = 0;  // SQLITE_OK, or the first failed bind since the last reset
};

}  // namespace mpt::sqlite
