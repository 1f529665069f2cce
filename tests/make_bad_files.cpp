// mpt_make_bad_files GOOD_DB OUTDIR: writes damaged and foreign files for bad_files_test.sh.
// mpt_make_bad_files --keccak HEX: prints keccak256 of the bytes.
//
// GOOD_DB is a trie file made by `mpt build` (plain trie `main`, closed cleanly, so the file
// alone holds it). Each output is a copy of it damaged in one way, or a file mpt never made.
// The damaged row is the first row, in path order, whose path has two nibbles; it must be a
// branch under a branch under a branch root (true for a few thousand random 32-byte keys).
// Prints one line per row-damaged file, "NAME PATH" (the path's nibbles as hex digits), so
// that the caller can pick a key whose lookup passes through that row.
//
// Uses the SQLite C API directly, never the store under test, to write the damage.
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mpt/core/hex.hpp>
#include <mpt/core/node.hpp>
#include <mpt/store/detail/tries_table.hpp>
#include <optional>
#include <string>

namespace {

namespace fs = std::filesystem;
using mpt::bytes;
using mpt::bytes_view;

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "mpt_make_bad_files: %s\n", what.c_str());
    std::exit(2);
}

class Db {
public:
    explicit Db(const fs::path& p) {
        if (sqlite3_open_v2(p.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
            SQLITE_OK) {
            fail(p.string() + ": " + sqlite3_errmsg(db_));
        }
    }
    ~Db() {
        if (sqlite3_close(db_) != SQLITE_OK) fail("close: " + std::string(sqlite3_errmsg(db_)));
    }
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    void exec(const std::string& sql) {
        char* err = nullptr;
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            fail(sql + ": " + (err ? err : "?"));
        }
    }

    // The rlp of the row at path in trie `main`, if any.
    std::optional<bytes> row(bytes_view path) {
        sqlite3_stmt* st = prepare(
            "SELECT rlp FROM nodes WHERE trie=(SELECT id FROM tries WHERE name='main') AND "
            "path=?1");
        bind_path(st, 1, path);
        std::optional<bytes> out;
        if (sqlite3_step(st) == SQLITE_ROW) {
            const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, 0));
            out = bytes(p, p + sqlite3_column_bytes(st, 0));
        }
        sqlite3_finalize(st);
        return out;
    }

    // The first column of the first row of sql, an integer.
    int64_t integer(const char* sql) {
        sqlite3_stmt* st = prepare(sql);
        if (sqlite3_step(st) != SQLITE_ROW) fail(std::string(sql) + ": no row");
        const int64_t v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return v;
    }

    // The first column of the first row of sql, a BLOB.
    bytes blob(const char* sql) {
        sqlite3_stmt* st = prepare(sql);
        if (sqlite3_step(st) != SQLITE_ROW) fail(std::string(sql) + ": no row");
        const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, 0));
        bytes out(p, p + sqlite3_column_bytes(st, 0));
        sqlite3_finalize(st);
        return out;
    }

    // The first path (in path order) of the given length.
    bytes first_path(int len) {
        sqlite3_stmt* st = prepare("SELECT path FROM nodes WHERE length(path)=?1 ORDER BY path");
        sqlite3_bind_int(st, 1, len);
        if (sqlite3_step(st) != SQLITE_ROW) fail("no row with a path of length 2");
        const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, 0));
        bytes out(p, p + sqlite3_column_bytes(st, 0));
        sqlite3_finalize(st);
        return out;
    }

    // Runs sql with ?1 = path and ?2 = blob (when given); exactly one row must change.
    void write(const char* sql, bytes_view path, const bytes* blob = nullptr) {
        sqlite3_stmt* st = prepare(sql);
        bind_path(st, 1, path);
        if (blob) sqlite3_bind_blob(st, 2, blob->data(), static_cast<int>(blob->size()), nullptr);
        if (sqlite3_step(st) != SQLITE_DONE) fail(std::string(sql) + ": " + sqlite3_errmsg(db_));
        if (sqlite3_changes(db_) != 1) fail(std::string(sql) + ": no row changed");
        sqlite3_finalize(st);
    }

private:
    sqlite3_stmt* prepare(const char* sql) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) {
            fail(std::string(sql) + ": " + sqlite3_errmsg(db_));
        }
        return st;
    }
    static void bind_path(sqlite3_stmt* st, int i, bytes_view path) {
        static const uint8_t kEmpty = 0;  // a NULL pointer would bind SQL NULL
        sqlite3_bind_blob(st, i, path.empty() ? &kEmpty : path.data(),
                          static_cast<int>(path.size()), SQLITE_TRANSIENT);
    }
    sqlite3* db_ = nullptr;
};

fs::path copy_of(const fs::path& good, const fs::path& out, const char* name) {
    const fs::path p = out / name;
    fs::remove(p);
    fs::copy_file(good, p);
    return p;
}

void write_file(const fs::path& p, const std::string& content) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << content;
    if (!f) fail(p.string() + ": cannot write");
}

std::string hex_path(bytes_view path) {
    std::string s;
    for (uint8_t n : path) s += "0123456789abcdef"[n & 0xf];
    return s;
}

// Replaces the branch's child at nibble with a reference to child_rlp.
bytes rewrite_branch(bytes_view branch_rlp, uint8_t nibble, bytes_view child_rlp) {
    auto v = mpt::decode_node(branch_rlp);
    if (!v || v->kind != mpt::NodeView::Kind::branch)
        fail("an ancestor of the row is not a branch");
    std::array<mpt::NodeRef, 16> children;
    for (int i = 0; i < 16; ++i) children[i] = mpt::NodeRef::from_view(v->children[i]);
    children[nibble] = mpt::NodeRef::of(child_rlp);
    bytes out;
    mpt::encode_branch(out, children.data(), v->value);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    // mpt_make_bad_files --keccak HEX: prints keccak256 of the bytes, for documents whose
    // hashes must check (torture.sh).
    if (argc == 3 && std::string(argv[1]) == "--keccak") {
        auto b = mpt::from_hex(argv[2]);
        if (!b) fail("--keccak: " + b.error().message());
        std::printf("%s\n", mpt::to_hex(mpt::keccak256(*b)).c_str());
        return 0;
    }
    if (argc != 3) {
        std::fprintf(stderr, "usage: mpt_make_bad_files GOOD_DB OUTDIR\n");
        return 2;
    }
    const fs::path good = argv[1];
    const fs::path out = argv[2];
    if (fs::exists(fs::path(good.string() + "-wal")) &&
        fs::file_size(fs::path(good.string() + "-wal")) != 0) {
        fail(good.string() + "-wal is not empty: the file alone is not the trie");
    }

    // Files that are not SQLite at all.
    write_file(out / "text.db", "this is a text file, not a trie file\n");
    std::string noise(8192, '\0');
    uint64_t x = 0x9e3779b97f4a7c15;
    for (char& c : noise) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        c = static_cast<char>(x >> 56);
    }
    write_file(out / "random.db", noise);
    write_file(out / "empty.db", "");

    // An SQLite database that some other program made.
    fs::remove(out / "foreign.db");
    {
        Db db(out / "foreign.db");
        db.exec(
            "CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT);"
            "INSERT INTO accounts(name) VALUES('alice'), ('bob');");
    }

    // mpt files with a bad header or schema.
    {
        Db db(copy_of(good, out, "version99.db"));
        db.exec("PRAGMA user_version=99");
    }
    {
        Db db(copy_of(good, out, "notables.db"));
        db.exec("DROP TABLE nodes");
    }
    {
        // The table's CHECK refuses this; a file edited by other tools need not have one.
        Db db(copy_of(good, out, "shortroot.db"));
        db.exec("PRAGMA ignore_check_constraints=1");
        db.exec("UPDATE tries SET root=substr(root, 1, 31) WHERE name='main'");
    }
    {
        // A kind none of the three, past the CHECK.
        Db db(copy_of(good, out, "badkind.db"));
        db.exec("PRAGMA ignore_check_constraints=1");
        db.exec("UPDATE tries SET kind='secret' WHERE name='main'");
    }
    {
        // A kind changed to another valid one: only the checksum tells.
        Db db(copy_of(good, out, "swappedkind.db"));
        db.exec("UPDATE tries SET kind='secure' WHERE name='main'");
    }
    {
        // One bit of the stored root flipped: the checksum, and the root node, disagree.
        Db db(copy_of(good, out, "rootbit.db"));
        bytes root = db.blob("SELECT root FROM tries WHERE name='main'");
        root[31] ^= 0x01;
        db.write("UPDATE tries SET root=?2 WHERE name='main' AND length(?1)=0", bytes{}, &root);
    }
    {
        // The root row changed: it no longer hashes to the stored root.
        Db db(copy_of(good, out, "rootrow.db"));
        bytes rlp = *db.row(bytes{});
        rlp[rlp.size() / 2] ^= 0x01;
        db.write("UPDATE nodes SET rlp=?2 WHERE path=?1", bytes{}, &rlp);
    }
    {
        // A row of a trie id the tries table does not have.
        Db db(copy_of(good, out, "strayid.db"));
        db.exec("INSERT INTO nodes(trie, path, rlp) SELECT 7, path, rlp FROM nodes LIMIT 2");
    }
    // Version-1 files, as mpt wrote them before: a secure column, no kind, no checksum, no
    // preimages. secure must be the integer 0 or 1.
    const auto v1 = [&](const char* name, const char* secure) {
        Db db(copy_of(good, out, name));
        db.exec(
            "CREATE TABLE tries_v1(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, root BLOB "
            "NOT NULL, secure INTEGER NOT NULL);"
            "INSERT INTO tries_v1 SELECT id, name, root, " +
            std::string(secure) +
            " FROM tries; DROP TABLE tries; ALTER TABLE tries_v1 RENAME TO tries;"
            "DROP TABLE preimages; DROP TABLE codes; PRAGMA user_version=1");
    };
    v1("v1.db", "0");
    v1("v1secure.db", "1");
    v1("v1two.db", "2");
    v1("v1minus.db", "-1");
    v1("v1half.db", "0.5");
    v1("v1text.db", "'x'");
    v1("v1blob.db", "x'01'");

    // Row damage, at the first two-nibble path.
    bytes target;
    {
        Db db(copy_of(good, out, "flipped.db"));
        target = db.first_path(2);
        bytes rlp = *db.row(target);
        // A byte inside the first child hash: the row still decodes, its hash is wrong.
        auto v = mpt::decode_node(rlp);
        if (!v || v->kind != mpt::NodeView::Kind::branch) fail("the row is not a branch");
        size_t at = 0;
        for (const bytes_view c : v->children) {
            if (c.size() == 32) {
                at = static_cast<size_t>(c.data() - rlp.data()) + 16;
                break;
            }
        }
        if (at == 0) fail("the row has no hashed child");
        rlp[at] ^= 0x01;
        db.write("UPDATE nodes SET rlp=?2 WHERE path=?1", target, &rlp);
        std::printf("flipped %s\n", hex_path(target).c_str());
    }
    {
        Db db(copy_of(good, out, "deleted.db"));
        db.write("DELETE FROM nodes WHERE path=?1", target);
        std::printf("deleted %s\n", hex_path(target).c_str());
    }
    {
        // A row that is no node (a list of three hashes), with every ancestor and the
        // stored root re-hashed over it: every hash checks, only decoding can object.
        Db db(copy_of(good, out, "garbled.db"));
        bytes bad = {0xf8, 0x63};
        for (int i = 0; i < 3; ++i) {
            bad.push_back(0xa0);
            bad.insert(bad.end(), 32, static_cast<uint8_t>(0x11 * (i + 1)));
        }
        db.write("UPDATE nodes SET rlp=?2 WHERE path=?1", target, &bad);
        const bytes p1(target.begin(), target.begin() + 1);
        const bytes mid = rewrite_branch(*db.row(p1), target[1], bad);
        db.write("UPDATE nodes SET rlp=?2 WHERE path=?1", p1, &mid);
        const bytes root = rewrite_branch(*db.row(bytes{}), target[0], mid);
        db.write("UPDATE nodes SET rlp=?2 WHERE path=?1", bytes{}, &root);
        const mpt::Hash256 h = mpt::keccak256(root);
        const bytes hb(h.begin(), h.end());
        db.write("UPDATE tries SET root=?2 WHERE name='main' AND length(?1)=0", bytes{}, &hb);
        // The row's checksum over the new root, as mpt would have written it.
        const int64_t id = db.integer("SELECT id FROM tries WHERE name='main'");
        const mpt::Hash256 sum =
            mpt::sqlite::tries_row_checksum(id, "main", mpt::TrieKind::plain, h);
        const bytes sb(sum.begin(), sum.end());
        db.write("UPDATE tries SET checksum=?2 WHERE name='main' AND length(?1)=0", bytes{}, &sb);
        std::printf("garbled %s\n", hex_path(target).c_str());
    }
    {
        // A well-formed row (a copy of the damaged row) that no lookup reaches, deeper than
        // any 32-byte key: only check sees it.
        Db db(copy_of(good, out, "orphan.db"));
        const bytes deep(70, 0x0f);
        const bytes rlp = *db.row(target);
        db.write(
            "INSERT INTO nodes(trie, path, rlp) VALUES((SELECT id FROM tries WHERE "
            "name='main'), ?1, ?2)",
            deep, &rlp);
        std::printf("orphan %s\n", hex_path(deep).c_str());
    }
    {
        // Rows at paths no nibble path can be: a byte above 0x0f (past every subtree's key
        // range), text and an integer (which SQLite orders before any BLOB).
        Db db(copy_of(good, out, "stray.db"));
        const bytes rlp = *db.row(target);
        const std::string insert =
            "INSERT INTO nodes(trie, path, rlp) VALUES((SELECT id FROM tries WHERE "
            "name='main'), ";
        db.write((insert + "?1, ?2)").c_str(), bytes{0x10}, &rlp);
        db.write((insert + "CAST(?1 AS TEXT), ?2)").c_str(), bytes{0x01}, &rlp);
        db.write((insert + "5 + length(?1), ?2)").c_str(), bytes{}, &rlp);
    }

    // Cut in half: the file alone (checkpointed when GOOD_DB was closed) loses its tail.
    {
        const fs::path p = copy_of(good, out, "truncated.db");
        fs::resize_file(p, fs::file_size(p) / 2);
    }
    return 0;
}
