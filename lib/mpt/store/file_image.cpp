#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpt/store/detail/sqlite_stmt.hpp>
#include <mpt/store/detail/tries_table.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/node_store.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

namespace mpt {

namespace {

// A scratch database with a new file's page size and schema (those SqliteNodeStore::open()
// gives one, sqlite_store.cpp), its write begun: the one way the images below are made.
class ScratchDb {
public:
    // Opens path (":memory:": one in memory; else an existing empty file), runs pragmas after
    // the page size, and begins the write of the schema. Errors name where.
    static Result<ScratchDb> open(const std::string& path, int flags, std::string where,
                                  const std::string& pragmas = {}) {
        ScratchDb out(std::move(where));
        sqlite3* raw = nullptr;
        const int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
        out.db_.reset(raw);
        if (rc != SQLITE_OK) return sqlite::error_of_code(rc, out.where_, "open");
        sqlite3_extended_result_codes(raw, 1);
        MPT_RETURN_IF_ERROR(out.exec("PRAGMA page_size=8192"));
        if (!pragmas.empty()) MPT_RETURN_IF_ERROR(out.exec(pragmas));
        MPT_RETURN_IF_ERROR(out.exec("BEGIN;" + sqlite::schema_sql()));
        return out;
    }

    sqlite3* get() const noexcept { return db_.get(); }
    const std::string& where() const noexcept { return where_; }

    Status exec(const std::string& sql) const {
        if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
            return sqlite::last_error(db_.get(), where_, "make the file image");
        }
        return {};
    }

    // Closes the database, its pages written.
    Status close() {
        if (sqlite3_close(db_.release()) != SQLITE_OK) {
            return file_error(Errc::storage_io, where_, "cannot close the image database");
        }
        return {};
    }

private:
    explicit ScratchDb(std::string where) : where_(std::move(where)) {}

    std::unique_ptr<sqlite3, int (*)(sqlite3*)> db_{nullptr, sqlite3_close};
    std::string where_;
};

constexpr int kInMemory = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

// The root pages of the nodes, the preimages and the codes tables of db, as its schema holds
// them.
Result<std::array<uint32_t, 3>> table_roots(sqlite3* db, const std::string& where) {
    std::array<uint32_t, 3> roots{};
    const char* tables[3] = {"nodes", "preimages", "codes"};
    for (size_t i = 0; i < roots.size(); ++i) {
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

// The pages of db, an in-memory database made with the schema, as a file image: its page
// size, the header's versions of a file in WAL mode (as open() makes it) and the tables'
// roots; trie is left 0.
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
    image.codes_root = roots[2];
    return image;
}

Result<FileImage> make_image(std::string_view name, TrieKind kind, const Hash256& root,
                             std::span<const Preimage> preimages) {
    MPT_TRY(ScratchDb db, ScratchDb::open(":memory:", kInMemory, "in-memory database"));
    sqlite3* raw = db.get();
    const std::string& where = db.where();
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
    MPT_RETURN_IF_ERROR(db.exec("COMMIT"));
    MPT_TRY(FileImage image, serialize_image(raw, where));
    image.trie = id;
    return image;
}

}  // namespace

Result<FileImage> new_file_image(std::string_view name, TrieKind kind, const Hash256& root,
                                 std::span<const Preimage> preimages) {
    MPT_RETURN_IF_ERROR(check_trie_name(name));
    // The name as every other write stores it (a storage trie's hash in lower case), so that
    // a new file holds the trie the name reads back.
    auto image = make_image(canonical_trie_name(name), kind, root, preimages);
    if (image) return image;
    // The image has no file: its errors name the in-memory database in the detail.
    Error e = std::move(image).error();
    if (!e.file.empty()) {
        e.detail = e.file + ": " + e.detail;
        e.file.clear();
    }
    return e;
}

// The first pages of the file: the schema, one tries row per trie (ids from 1 in the order
// given, so that their rows' keys sort in that order), empty nodes and preimages tables.
Result<StateImage> make_state_image(std::span<const NewTrie> tries) {
    MPT_TRY(ScratchDb db, ScratchDb::open(":memory:", kInMemory, "in-memory database"));
    sqlite::TriesTable table(db.get(), db.where(), sqlite::kSchemaVersion);
    StateImage out;
    MPT_TRY(out.ids, table.insert_all(tries));
    MPT_RETURN_IF_ERROR(db.exec("COMMIT"));
    MPT_TRY(out.image, serialize_image(db.get(), db.where()));
    out.preimages_root = out.image.preimages_root;
    return out;
}

Result<DiskStateImage> make_state_image_on_disk(const std::string& tmp_dir, const NextTries& next) {
    std::string name = tmp_dir + "/mpt-image-XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
        return file_error(errno == ENOSPC ? Errc::storage_full : Errc::storage_io, tmp_dir,
                          std::string("cannot make a temporary file: ") + std::strerror(errno));
    }
    DiskStateImage out;
    out.fd = fd;
    // The name goes once the database is open: it is reached through the descriptors alone,
    // and no journal is kept (journal_mode OFF), so nothing else is made by name.
    auto opened = ScratchDb::open(name, SQLITE_OPEN_READWRITE, name,
                                  "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                                  "PRAGMA cache_size=-8192");
    ::unlink(name.c_str());
    if (!opened) return std::move(opened).error();
    ScratchDb db = std::move(*opened);
    const std::string where = name;
    sqlite3* raw = db.get();
    sqlite::TriesTable table(raw, where, sqlite::kSchemaVersion);
    [[maybe_unused]] TrieId expect = 1;  // read by MPT_ASSERT only
    while (true) {
        MPT_TRY(const std::span<const NewTrie> batch, next());
        if (batch.empty()) break;
        MPT_TRY(const std::vector<TrieId> ids, table.insert_all(batch));
        // One statement per batch: ids from 1 in the order given, as one statement for all.
        MPT_ASSERT(!ids.empty() && ids.front() == expect);
        expect = ids.back() + 1;
    }
    MPT_RETURN_IF_ERROR(db.exec("COMMIT"));
    MPT_TRY(const auto roots, table_roots(raw, where));
    MPT_RETURN_IF_ERROR(db.close());
    struct stat st {};
    if (::fstat(fd, &st) != 0) return file_error(Errc::storage_io, where, std::strerror(errno));
    uint8_t head[100];
    if (::pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) {
        return file_error(Errc::storage_io, where, "cannot read the image database");
    }
    uint32_t page_size = static_cast<uint32_t>(head[16] << 8 | head[17]);
    if (page_size == 1) page_size = 65536;
    const uint32_t pages = static_cast<uint32_t>(static_cast<uint64_t>(st.st_size) / page_size);
    // The pages up to the tables' roots, which the b-tree writers fill in, are held; the
    // tries table's others stay in the file.
    const uint32_t held = std::max({roots[0], roots[1], roots[2]});
    MPT_ASSERT(held >= 1 && held <= pages);
    out.image.image.page_size = page_size;
    out.image.image.pages.resize(static_cast<size_t>(held) * page_size);
    if (::pread(fd, out.image.image.pages.data(), out.image.image.pages.size(), 0) !=
        static_cast<ssize_t>(out.image.image.pages.size())) {
        return file_error(Errc::storage_io, where, "cannot read the image database");
    }
    out.image.image.pages[18] = out.image.image.pages[19] = 2;  // WAL mode, as open() makes it
    out.image.image.nodes_root = roots[0];
    out.image.image.preimages_root = roots[1];
    out.image.image.codes_root = roots[2];
    out.image.preimages_root = roots[1];
    out.tail_first = held + 1;
    out.tail_pages = pages - held;
    return out;
}

DiskStateImage::~DiskStateImage() {
    if (fd >= 0) ::close(fd);
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
