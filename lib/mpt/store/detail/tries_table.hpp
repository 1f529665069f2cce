// Internal to the store: the trie file's schema and its tries table, the one place that
// knows the table's versions, its row checksum and how a row is validated.
//
// Every row read is validated before it is returned: the name is text, the root a 32-byte
// BLOB, and from version 2 the kind one of its three values and the checksum that of the row.
// A row that fails is Errc::storage_bad_record naming the trie, never a TrieInfo.
//
// Thread safety: like the connection it works on, one thread at a time.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/store/detail/sqlite_stmt.hpp>
#include <mpt/store/node_store.hpp>

#include <span>
#include <string>
#include <vector>

namespace mpt::sqlite {

inline constexpr int kSchemaVersion = 3;
inline constexpr int kOldestSchemaVersion = 1;     // still read; upgraded when opened for writing
inline constexpr int kApplicationId = 0x6d707431;  // "mpt1"

// The nodes table's columns, constraints and key (shared with the staging table).
inline constexpr const char* kNodesColumns =
    "(trie INTEGER NOT NULL, path BLOB NOT NULL, rlp BLOB NOT NULL, "
    "PRIMARY KEY (trie, path)) WITHOUT ROWID";

// The statements that make a new (version-3) file's tables and header fields, to run inside
// one transaction.
std::string schema_sql();

// keccak256 over the row's fields: be64(id) || be32(|name|) || name || be32(|kind|) || kind
// || root, kind as its name (mpt-file.5).
Hash256 tries_row_checksum(TrieId id, std::string_view name, TrieKind kind, const Hash256& root);

class TriesTable {
public:
    // REQUIRES: db outlives this object; version is the file's schema version (1 to 3).
    TriesTable(sqlite3* db, const std::string& path, int version) noexcept
        : db_(db), path_(path), version_(version) {}

    int version() const noexcept { return version_; }
    void set_version(int version) noexcept { version_ = version; }

    Result<std::optional<TrieInfo>> find(std::string_view name);
    Result<std::optional<TrieInfo>> find(TrieId id);
    // Every row, by name.
    Result<std::vector<TrieInfo>> list();
    // The first n names by name and the count of rows, none of them validated (the names
    // that are not text are left out).
    Result<TrieNames> names(size_t n);

    // REQUIRES: inside a write; version 2. Adds a row with the empty root; returns its id.
    Result<TrieId> insert(std::string_view name, TrieKind kind);
    // REQUIRES: inside a write; version 2. Adds a row for each of tries with its root, ids
    // one after another from the next free one, in the order given, through one statement
    // (a state's thousands of storage tries); the same rows as insert and set_root give.
    using NewTrie = mpt::NewTrie;
    Result<std::vector<TrieId>> insert_all(std::span<const NewTrie> tries);
    // REQUIRES: inside a write; version 2. Sets a row's root and its checksum; the row as it
    // was is validated first, so that a damaged kind is not sealed by a new checksum.
    Status set_root(TrieId id, const Hash256& root);
    // REQUIRES: inside a write. Removes the row of id.
    Status remove(TrieId id);

    // REQUIRES: version 1 or 2, no transaction open. Rewrites the file as version 3 in one
    // transaction. From version 1: every row validated as version 1 reads it, a trie marked
    // secure checked against its nodes (every key 64 nibbles; Errc::storage_bad_record, and
    // no upgrade, when not), then copied with its kind and checksum; the preimages table
    // added. From either: the codes table added.
    Status upgrade();

private:
    // Inside the upgrade's transaction: version 1's tries table rebuilt as version 2's, and
    // the preimages table added.
    Status rebuild_version_1();
    Status check_secure_flag(const TrieInfo& t);
    Error error(std::string_view what) const { return last_error(db_, path_, what); }
    std::string select_sql() const;
    Result<TrieInfo> read_row(const Statement& st) const;
    Result<std::optional<TrieInfo>> find_one(Statement& st, std::string_view what);

    sqlite3* db_;
    const std::string& path_;
    int version_;
};

}  // namespace mpt::sqlite
