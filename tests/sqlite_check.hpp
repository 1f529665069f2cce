// SQLite's own verdict on a database, for the tests of files mpt writes page by page.
#pragma once

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <string>

namespace mpt::test {

// The lines PRAGMA integrity_check gives on db, each ending in a newline: "ok\n" for a sound
// database.
inline std::string integrity_verdict(sqlite3* db) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK);
    std::string verdict;
    while (sqlite3_step(st) == SQLITE_ROW) {
        verdict += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        verdict += "\n";
    }
    sqlite3_finalize(st);
    return verdict;
}

}  // namespace mpt::test
