#include <sqlite3.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>
#include <mpt/store/detail/tries_table.hpp>

#include <cstring>

namespace mpt::sqlite {

namespace {
// Added in version 3.
constexpr const char* kCodesTable =
    "CREATE TABLE codes(hash BLOB PRIMARY KEY, code BLOB NOT NULL) WITHOUT ROWID;";
}  // namespace

std::string schema_sql() {
    return std::string(
               "CREATE TABLE tries(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
               "root BLOB NOT NULL CHECK (typeof(root) = 'blob' AND length(root) = 32), "
               "kind TEXT NOT NULL CHECK (kind IN ('plain', 'secure', 'state')), "
               "checksum BLOB NOT NULL);"
               "CREATE TABLE nodes") +
           kNodesColumns +
           ";"
           "CREATE TABLE preimages(hash BLOB PRIMARY KEY, preimage BLOB NOT NULL) WITHOUT ROWID;" +
           kCodesTable + "PRAGMA application_id=" + std::to_string(kApplicationId) +
           ";PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";";
}

Hash256 tries_row_checksum(TrieId id, std::string_view name, TrieKind kind, const Hash256& root) {
    Keccak256 k;
    const auto put_be = [&](uint64_t v, int n) {
        uint8_t b[8];
        for (int i = n - 1; i >= 0; --i, v >>= 8) b[i] = static_cast<uint8_t>(v);
        k.update(bytes_view(b, static_cast<size_t>(n)));
    };
    const auto text = [](std::string_view s) {
        return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    const std::string_view kind_name = trie_kind_name(kind);
    put_be(static_cast<uint64_t>(id), 8);
    put_be(name.size(), 4);
    k.update(text(name));
    put_be(kind_name.size(), 4);
    k.update(text(kind_name));
    k.update(root);
    return k.finish();
}

std::string TriesTable::select_sql() const {
    // Column 3 is the kind (version 2) or the secure flag (version 1), column 4 the checksum
    // (or NULL), column 5 the kind column quoted, for messages.
    return version_ >= 2 ? "SELECT id, name, root, kind, checksum, quote(kind) FROM tries"
                         : "SELECT id, name, root, secure, NULL, quote(secure) FROM tries";
}

Result<TrieInfo> TriesTable::read_row(const Statement& st) const {
    TrieInfo t;
    t.id = st.column_int64(0);
    const std::string where = "trie ";
    if (st.column_type(1) != SQLITE_TEXT) {
        return file_error(Errc::storage_bad_record, path_,
                          where + "id " + std::to_string(t.id) + ": the name is not text");
    }
    t.name = std::string(st.column_text(1));
    const std::string named = where + t.name + ": ";
    if (st.column_type(2) != SQLITE_BLOB || st.column_blob(2).size() != 32) {
        return file_error(Errc::storage_bad_record, path_,
                          named + "the stored root is not 32 bytes");
    }
    std::memcpy(t.root.data(), st.column_blob(2).data(), 32);
    const std::string quoted(st.column_text(5));
    if (version_ < 2) {
        // Version 1 wrote 0 or 1; any other value (2, -1, 0.5, 'x', x'01') is damage, not a
        // kind to guess at.
        const int64_t v = st.column_int64(3);
        if (st.column_type(3) != SQLITE_INTEGER || (v != 0 && v != 1)) {
            return file_error(Errc::storage_bad_record, path_,
                              named + "the secure column holds " + quoted + ", not 0 or 1");
        }
        t.kind = v == 1 ? TrieKind::secure : TrieKind::plain;
        return t;
    }
    const std::optional<TrieKind> kind =
        st.column_type(3) == SQLITE_TEXT ? parse_trie_kind(st.column_text(3)) : std::nullopt;
    if (!kind) {
        return file_error(Errc::storage_bad_record, path_,
                          named + "the kind is " + quoted + ", none of 'plain', 'secure', 'state'");
    }
    t.kind = *kind;
    const Hash256 want = tries_row_checksum(t.id, t.name, t.kind, t.root);
    const bytes_view got = st.column_blob(4);
    if (st.column_type(4) != SQLITE_BLOB || got.size() != 32 ||
        std::memcmp(got.data(), want.data(), 32) != 0) {
        return file_error(Errc::storage_bad_record, path_,
                          named + "the row's checksum does not match its id, name, kind and root");
    }
    return t;
}

Result<std::optional<TrieInfo>> TriesTable::find_one(Statement& st, std::string_view what) {
    const int rc = st.step();
    if (rc == SQLITE_DONE) return std::optional<TrieInfo>{};
    if (rc != SQLITE_ROW) return error(what);
    MPT_TRY(TrieInfo t, read_row(st));
    return std::optional<TrieInfo>(std::move(t));
}

Result<std::optional<TrieInfo>> TriesTable::find(std::string_view name) {
    Statement st;
    if (st.prepare(db_, select_sql() + " WHERE name=?1") != SQLITE_OK) return error("find trie");
    st.bind_text(1, name);
    return find_one(st, "find trie");
}

Result<std::optional<TrieInfo>> TriesTable::find(TrieId id) {
    Statement st;
    if (st.prepare(db_, select_sql() + " WHERE id=?1") != SQLITE_OK) return error("find trie");
    st.bind(1, id);
    return find_one(st, "find trie");
}

Result<std::vector<TrieInfo>> TriesTable::list() {
    Statement st;
    if (st.prepare(db_, select_sql() + " ORDER BY name") != SQLITE_OK) return error("list tries");
    std::vector<TrieInfo> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        MPT_TRY(TrieInfo t, read_row(st));
        out.push_back(std::move(t));
    }
    if (rc != SQLITE_DONE) return error("list tries");
    return out;
}

Result<TrieNames> TriesTable::names(size_t n) {
    TrieNames out;
    Statement count;
    if (count.prepare(db_, "SELECT count(*) FROM tries") != SQLITE_OK ||
        count.step() != SQLITE_ROW) {
        return error("list tries");
    }
    out.total = static_cast<uint64_t>(count.column_int64(0));
    Statement st;
    if (st.prepare(db_,
                   "SELECT name FROM tries WHERE typeof(name) = 'text' ORDER BY name LIMIT ?1") !=
        SQLITE_OK) {
        return error("list tries");
    }
    st.bind(1, static_cast<int64_t>(n));
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) out.first.emplace_back(st.column_text(0));
    if (rc != SQLITE_DONE) return error("list tries");
    return out;
}

Result<TrieId> TriesTable::insert(std::string_view name, TrieKind kind) {
    if (version_ < 2) return file_error(Errc::internal, path_, "insert into a version-1 table");
    // The id is chosen here, not by SQLite, because the checksum covers it.
    Statement next;
    if (next.prepare(db_, "SELECT coalesce(max(id), 0) + 1 FROM tries") != SQLITE_OK ||
        next.step() != SQLITE_ROW) {
        return error("create trie");
    }
    const TrieId id = next.column_int64(0);
    const Hash256 sum = tries_row_checksum(id, name, kind, kEmptyRoot);
    Statement st;
    if (st.prepare(db_,
                   "INSERT INTO tries(id, name, root, kind, checksum) "
                   "VALUES(?1, ?2, ?3, ?4, ?5)") != SQLITE_OK) {
        return error("create trie");
    }
    st.bind(1, id);
    st.bind_text(2, name);
    st.bind(3, kEmptyRoot);
    st.bind_text(4, trie_kind_name(kind));
    st.bind(5, sum);
    if (st.step() != SQLITE_DONE) {
        if ((sqlite3_extended_errcode(db_)) == SQLITE_CONSTRAINT_UNIQUE) {
            return file_error(Errc::bad_input, path_,
                              "trie " + std::string(name) + " exists already");
        }
        return error("create trie");
    }
    return id;
}

Result<std::vector<TrieId>> TriesTable::insert_all(std::span<const NewTrie> tries) {
    if (version_ < 2) return file_error(Errc::internal, path_, "insert into a version-1 table");
    Statement next;
    if (next.prepare(db_, "SELECT coalesce(max(id), 0) + 1 FROM tries") != SQLITE_OK ||
        next.step() != SQLITE_ROW) {
        return error("create trie");
    }
    TrieId id = next.column_int64(0);
    Statement st;
    if (st.prepare(db_,
                   "INSERT INTO tries(id, name, root, kind, checksum) "
                   "VALUES(?1, ?2, ?3, ?4, ?5)") != SQLITE_OK) {
        return error("create trie");
    }
    std::vector<TrieId> ids;
    ids.reserve(tries.size());
    for (const NewTrie& t : tries) {
        const Hash256 sum = tries_row_checksum(id, t.name, t.kind, t.root);
        st.reset();
        st.bind(1, id);
        st.bind_text(2, t.name);
        st.bind(3, t.root);
        st.bind_text(4, trie_kind_name(t.kind));
        st.bind(5, sum);
        if (st.step() != SQLITE_DONE) {
            if ((sqlite3_extended_errcode(db_)) == SQLITE_CONSTRAINT_UNIQUE) {
                return file_error(Errc::bad_input, path_,
                                  "trie " + std::string(t.name) + " exists already");
            }
            return error("create trie");
        }
        ids.push_back(id++);
    }
    return ids;
}

Status TriesTable::set_root(TrieId id, const Hash256& root) {
    if (version_ < 2) return file_error(Errc::internal, path_, "write to a version-1 table");
    MPT_TRY(std::optional<TrieInfo> t, find(id));
    if (!t) return file_error(Errc::no_such_trie, path_, "trie id " + std::to_string(id));
    const Hash256 sum = tries_row_checksum(id, t->name, t->kind, root);
    Statement st;
    if (st.prepare(db_, "UPDATE tries SET root=?2, checksum=?3 WHERE id=?1") != SQLITE_OK) {
        return error("set root");
    }
    st.bind(1, id);
    st.bind(2, root);
    st.bind(3, sum);
    if (st.step() != SQLITE_DONE) return error("set root");
    return {};
}

Status TriesTable::remove(TrieId id) {
    Statement st;
    if (st.prepare(db_, "DELETE FROM tries WHERE id=?1") != SQLITE_OK) return error("delete trie");
    st.bind(1, id);
    if (st.step() != SQLITE_DONE) return error("delete trie");
    if (sqlite3_changes64(db_) != 1) {
        return file_error(Errc::no_such_trie, path_, "trie id " + std::to_string(id));
    }
    return {};
}

namespace {

// Why the nodes of a node, rlp at a depth of `depth` nibbles, could not be a secure trie's,
// whose keys are 32-byte hashes: a key that ends short of 64 nibbles or past them. Empty
// when they could. Rows that do not decode are left to check.
std::string not_secure(bytes_view rlp, size_t depth) {
    auto v = decode_node(rlp);
    if (!v) return {};
    const auto short_key = [](size_t at) {
        return "a key ends at " + std::to_string(at) + " nibbles, where a secure trie's are 64";
    };
    switch (v->kind) {
        case NodeView::Kind::leaf: {
            const size_t end = depth + v->path.size();
            return end == 64 ? std::string() : short_key(end);
        }
        case NodeView::Kind::extension:
            return v->child.size() < 32 ? not_secure(v->child, depth + v->path.size())
                                        : std::string();
        case NodeView::Kind::branch:
            if (!v->value.empty()) return short_key(depth);
            for (const bytes_view ch : v->children) {
                if (ch.empty() || ch.size() >= 32) continue;
                if (std::string why = not_secure(ch, depth + 1); !why.empty()) return why;
            }
            return {};
    }
    return {};
}

}  // namespace

Status TriesTable::check_secure_flag(const TrieInfo& t) {
    // The row of each hashed node is under its path, one nibble a byte: its depth.
    Statement st;
    if (st.prepare(db_, "SELECT path, rlp FROM nodes WHERE trie=?1") != SQLITE_OK) {
        return error("upgrade to schema version 3");
    }
    st.bind(1, t.id);
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
        const std::string why = not_secure(st.column_blob(1), st.column_blob(0).size());
        if (!why.empty()) {
            return file_error(Errc::storage_bad_record, path_,
                              "trie " + t.name + ": marked secure in a version-1 file, but " + why +
                                  "; the file is not upgraded (and so not written)");
        }
    }
    if (rc != SQLITE_DONE) return error("upgrade to schema version 3");
    return {};
}

Status TriesTable::upgrade() {
    if (version_ >= kSchemaVersion) {
        return file_error(Errc::internal, path_, "upgrade of a version-3 file");
    }
    const std::string what = "upgrade to schema version " + std::to_string(kSchemaVersion);
    const auto exec = [&](const std::string& sql) -> Status {
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
            return error(what);
        }
        return {};
    };
    const int from = version_;
    MPT_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
    const auto body = [&]() -> Status {
        // Another writer may have upgraded the file while this one waited for the lock.
        Statement v;
        if (v.prepare(db_, "PRAGMA user_version") != SQLITE_OK || v.step() != SQLITE_ROW) {
            return error(what);
        }
        const int64_t now = v.column_int64(0);
        v.finalize();
        if (now == kSchemaVersion) {
            version_ = kSchemaVersion;
            MPT_RETURN_IF_ERROR(list());
            return exec("COMMIT");
        }
        if (now == 1) MPT_RETURN_IF_ERROR(rebuild_version_1());
        version_ = kSchemaVersion;
        MPT_RETURN_IF_ERROR(exec(std::string(kCodesTable) +
                                 "PRAGMA user_version=" + std::to_string(kSchemaVersion)));
        return exec("COMMIT");
    };
    Status s = body();
    if (!s) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        version_ = from;
    }
    return s;
}

Status TriesTable::rebuild_version_1() {
    const std::string what = "upgrade to schema version " + std::to_string(kSchemaVersion);
    const auto exec = [&](const std::string& sql) -> Status {
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
            return error(what);
        }
        return {};
    };
    version_ = 1;
    MPT_TRY(const std::vector<TrieInfo> tries, list());
    // Version 1 has no checksum: a flipped byte makes a plain trie "secure". The kind the
    // new checksum vouches for is checked against the trie's structure first.
    for (const TrieInfo& t : tries) {
        if (t.kind == TrieKind::secure) MPT_RETURN_IF_ERROR(check_secure_flag(t));
    }
    std::string create = schema_sql();
    // Only the tries table's definition, under a new name.
    create = create.substr(0, create.find(";CREATE TABLE nodes"));
    create.replace(create.find("tries("), 6, "tries_v2(");
    MPT_RETURN_IF_ERROR(exec(create));
    version_ = 2;
    for (const TrieInfo& t : tries) {
        Statement st;
        if (st.prepare(db_,
                       "INSERT INTO tries_v2(id, name, root, kind, checksum) "
                       "VALUES(?1, ?2, ?3, ?4, ?5)") != SQLITE_OK) {
            return error(what);
        }
        const Hash256 sum = tries_row_checksum(t.id, t.name, t.kind, t.root);
        st.bind(1, t.id);
        st.bind_text(2, t.name);
        st.bind(3, t.root);
        st.bind_text(4, trie_kind_name(t.kind));
        st.bind(5, sum);
        if (st.step() != SQLITE_DONE) return error(what);
    }
    return exec(
        "DROP TABLE tries; ALTER TABLE tries_v2 RENAME TO tries;"
        "CREATE TABLE preimages(hash BLOB PRIMARY KEY, preimage BLOB NOT NULL) WITHOUT ROWID;");
}

}  // namespace mpt::sqlite
