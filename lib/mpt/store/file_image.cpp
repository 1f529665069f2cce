#include <sqlite3.h>

#include <mpt/store/file_image.hpp>
#include <mpt/store/sqlite_stmt.hpp>
#include <mpt/store/tries_table.hpp>

#include <memory>
#include <string>

namespace mpt {

namespace {

Result<FileImage> make_image(std::string_view name, TrieKind kind, const Hash256& root,
                             std::span<const Preimage> preimages) {
    const std::string where = "in-memory database";
    sqlite3* raw = nullptr;
    const int rc =
        sqlite3_open_v2(":memory:", &raw,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
    if (rc != SQLITE_OK) return sqlite::error_of_code(rc, where, "open");
    sqlite3_extended_result_codes(raw, 1);
    const auto exec = [&](const std::string& sql) -> Status {
        if (sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
            return sqlite::last_error(raw, where, "make the file image");
        }
        return {};
    };
    // The pragmas and schema SqliteNodeStore::open() gives a new file (sqlite_store.cpp).
    MPT_RETURN_IF_ERROR(exec("PRAGMA page_size=8192"));
    MPT_RETURN_IF_ERROR(exec("BEGIN;" + sqlite::schema_sql()));
    sqlite::TriesTable tries(raw, where, sqlite::kSchemaVersion);
    MPT_TRY(const TrieId id, tries.insert(name, kind));
    MPT_RETURN_IF_ERROR(tries.set_root(id, root));
    if (!preimages.empty()) {
        sqlite::Statement put;
        if (put.prepare(raw, "INSERT OR IGNORE INTO preimages(hash, preimage) VALUES(?1, ?2)") !=
            SQLITE_OK) {
            return sqlite::last_error(raw, where, "write preimages");
        }
        for (const auto& [hash, preimage] : preimages) {
            put.reset();
            put.bind(1, hash);
            put.bind(2, preimage);
            if (put.step() != SQLITE_DONE) return sqlite::last_error(raw, where, "write preimages");
        }
    }
    MPT_RETURN_IF_ERROR(exec("COMMIT"));
    MPT_TRY(FileImage image, serialize_image(raw, where));
    image.trie = id;
    return image;
}

}  // namespace

Result<std::array<uint32_t, 2>> table_roots(sqlite3* db, const std::string& where) {
    std::array<uint32_t, 2> roots{};
    const char* tables[2] = {"nodes", "preimages"};
    for (int i = 0; i < 2; ++i) {
        sqlite::Statement q;
        if (q.prepare(db, std::string("SELECT rootpage FROM sqlite_master WHERE name='") +
                              tables[i] + "'") != SQLITE_OK ||
            q.step() != SQLITE_ROW) {
            return sqlite::last_error(db, where, "make the file image");
        }
        roots[i] = static_cast<uint32_t>(q.column_int64(0));
    }
    return roots;
}

Result<FileImage> serialize_image(sqlite3* db, const std::string& where) {
    MPT_TRY(const auto roots, table_roots(db, where));
    sqlite3_int64 size = 0;
    unsigned char* data = sqlite3_serialize(db, "main", &size, 0);
    if (data == nullptr) return {Errc::out_of_memory, where + ": cannot serialize"};
    FileImage image;
    image.pages.assign(data, data + size);
    sqlite3_free(data);
    uint8_t* header = image.pages.data();  // fileformat2 1.3
    image.page_size = static_cast<uint32_t>(header[16] << 8 | header[17]);
    if (image.page_size == 1) image.page_size = 65536;
    header[18] = header[19] = 2;  // the write and read versions of a file in WAL mode
    image.nodes_root = roots[0];
    image.preimages_root = roots[1];
    return image;
}

Result<FileImage> new_file_image(std::string_view name, TrieKind kind, const Hash256& root,
                                 std::span<const Preimage> preimages) {
    MPT_RETURN_IF_ERROR(check_trie_name(name));
    auto image = make_image(name, kind, root, preimages);
    if (image) return image;
    // The image has no file: its errors name the in-memory database in the detail.
    Error e = std::move(image).error();
    if (!e.file.empty()) {
        e.detail = e.file + ": " + e.detail;
        e.file.clear();
    }
    return e;
}

void finish_image_header(bytes& page1, uint32_t pages) noexcept {
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

}  // namespace mpt
