// IndexBtreeWriter (btree_writer.hpp): a table whose b-tree it writes must read back through
// SQLite as exactly the records given, in key order and by key, and pass SQLite's own
// integrity check, for every page size and for records from a few bytes to many pages.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <random>
#include <tuple>

#include "sqlite_check.hpp"
#include "test_util.hpp"

using namespace mpt;

namespace {

struct Row {
    int64_t a;
    bytes b, c;
};

bool key_less(const Row& x, const Row& y) { return x.a != y.a ? x.a < y.a : bytes_less(x.b, y.b); }

struct Db {
    sqlite3* db = nullptr;
    ~Db() { sqlite3_close(db); }
    void exec(const char* sql) const {
        char* err = nullptr;
        const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
        INFO(sql << ": " << (err ? err : ""));
        sqlite3_free(err);
        REQUIRE(rc == SQLITE_OK);
    }
};

// Writes rows (sorted here) as the b-tree of t(a INTEGER, b BLOB, c BLOB, PRIMARY KEY (a, b))
// WITHOUT ROWID, in a database of page_size whose other pages SQLite made, then reads the
// database back through SQLite.
void check_table(uint32_t page_size, std::vector<Row> rows) {
    std::sort(rows.begin(), rows.end(), key_less);
    Db made;
    REQUIRE(sqlite3_open(":memory:", &made.db) == SQLITE_OK);
    made.exec(("PRAGMA page_size=" + std::to_string(page_size)).c_str());
    made.exec(
        "CREATE TABLE t(a INTEGER NOT NULL, b BLOB NOT NULL, c BLOB NOT NULL, "
        "PRIMARY KEY (a, b)) WITHOUT ROWID");
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(made.db, "SELECT rootpage FROM sqlite_master WHERE name='t'", -1,
                               &st, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    const auto root = static_cast<uint32_t>(sqlite3_column_int(st, 0));
    sqlite3_finalize(st);
    sqlite3_int64 size = 0;
    unsigned char* data = sqlite3_serialize(made.db, "main", &size, 0);
    REQUIRE(data != nullptr);
    bytes image(data, data + size);
    sqlite3_free(data);
    const auto made_pages = static_cast<uint32_t>(image.size() / page_size);
    REQUIRE(root <= made_pages);

    // The rows added as records (add), and as their fields (add_record): the same pages.
    const bytes base = image;
    const auto write = [&](bytes& out, bool fields) {
        IndexBtreeWriter w(
            page_size, root, made_pages + 1, [&](uint32_t n, bytes_view page) -> Status {
                CHECK(page.size() == page_size);
                if (out.size() < size_t{n} * page_size) {
                    out.resize(size_t{n} * page_size);
                }
                std::copy(page.begin(), page.end(), out.begin() + (n - 1) * ptrdiff_t{page_size});
                return {};
            });
        bytes record;
        for (const Row& r : rows) {
            record.clear();
            append_record(record, r.a, r.b, r.c);
            REQUIRE((fields ? w.add_record(r.a, r.b, r.c) : w.add(record)).ok());
        }
        auto pages = w.finish();
        REQUIRE(pages.ok());
        REQUIRE(size_t{*pages} * page_size == out.size());
        finish_image_header(out, *pages);
    };
    write(image, false);
    bytes by_fields = base;
    write(by_fields, true);
    CHECK(by_fields == image);

    Db read;
    REQUIRE(sqlite3_open(":memory:", &read.db) == SQLITE_OK);
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(image.size()));
    REQUIRE(copy != nullptr);
    std::copy(image.begin(), image.end(), copy);
    REQUIRE(sqlite3_deserialize(read.db, "main", copy, static_cast<sqlite3_int64>(image.size()),
                                static_cast<sqlite3_int64>(image.size()),
                                SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) ==
            SQLITE_OK);
    CHECK(test::integrity_verdict(read.db) == "ok\n");

    // In key order, a scan of the leaves and interior cells together.
    REQUIRE(sqlite3_prepare_v2(read.db, "SELECT a, b, c FROM t ORDER BY a, b", -1, &st, nullptr) ==
            SQLITE_OK);
    size_t i = 0;
    const auto blob = [&](int col) {
        const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(st, col));
        return bytes(p, p + sqlite3_column_bytes(st, col));
    };
    for (; sqlite3_step(st) == SQLITE_ROW; ++i) {
        REQUIRE(i < rows.size());
        CHECK(sqlite3_column_type(st, 0) == SQLITE_INTEGER);
        CHECK(sqlite3_column_int64(st, 0) == rows[i].a);
        CHECK(blob(1) == rows[i].b);
        CHECK(blob(2) == rows[i].c);
    }
    sqlite3_finalize(st);
    CHECK(i == rows.size());

    // By key: each lookup descends from the root through the dividers.
    REQUIRE(sqlite3_prepare_v2(read.db, "SELECT c FROM t WHERE a=?1 AND b=?2", -1, &st, nullptr) ==
            SQLITE_OK);
    for (size_t k = 0; k < rows.size(); k += 1 + rows.size() / 50) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, rows[k].a);
        sqlite3_bind_blob(st, 2, rows[k].b.data(), static_cast<int>(rows[k].b.size()),
                          SQLITE_STATIC);
        REQUIRE(sqlite3_step(st) == SQLITE_ROW);
        CHECK(blob(0) == rows[k].c);
    }
    sqlite3_finalize(st);
}

// Distinct keys: b is the row's number, big-endian, after a random prefix.
std::vector<Row> random_rows(std::mt19937_64& rng, size_t n, size_t max_c) {
    static const int64_t kInts[] = {0,
                                    1,
                                    -1,
                                    2,
                                    127,
                                    128,
                                    -129,
                                    32767,
                                    32768,
                                    8388607,
                                    8388608,
                                    2147483647,
                                    2147483648,
                                    0x7fffffffffff,
                                    0x800000000000,
                                    INT64_MIN,
                                    INT64_MAX};
    std::vector<Row> rows;
    for (size_t i = 0; i < n; ++i) {
        Row r;
        r.a = kInts[rng() % std::size(kInts)];
        r.b = test::random_bytes(rng, rng() % 6);
        for (int s = 24; s >= 0; s -= 8) r.b.push_back(static_cast<uint8_t>(i >> s));
        // Mostly small, some near a page's local limit, a few over many pages.
        const size_t kind = rng() % 8;
        const size_t len = kind < 5   ? rng() % 40
                           : kind < 7 ? rng() % (max_c / 8 + 1)
                                      : rng() % max_c;
        r.c = test::random_bytes(rng, len);
        rows.push_back(std::move(r));
    }
    return rows;
}

}  // namespace

TEST_CASE("an index b-tree written whole reads back through SQLite") {
    std::mt19937_64 rng(test::seed("btree_writer"));
    for (const uint32_t page_size : {512u, 1024u, 4096u, 8192u, 65536u}) {
        for (const size_t n :
             {size_t{0}, size_t{1}, size_t{2}, size_t{5}, size_t{60}, size_t{700}, size_t{4000}}) {
            INFO("page size " << page_size << ", " << n << " rows");
            check_table(page_size, random_rows(rng, n, 6 * page_size));
        }
    }
}

TEST_CASE("records at the edges of a page's local payload") {
    // For each page size, records whose payload is the most a cell keeps whole, one byte
    // more (the first to overflow), and lengths that end exactly at an overflow page's edge.
    for (const uint32_t page_size : {512u, 8192u, 65536u}) {
        const size_t max_local = (page_size - 12) * 64 / 255 - 23;
        const size_t min_local = (page_size - 12) * 32 / 255 - 23;
        std::vector<Row> rows;
        int64_t a = 0;
        for (const size_t payload :
             {max_local - 1, max_local, max_local + 1, max_local + 2, min_local + page_size - 4,
              min_local + page_size - 3, min_local + 2 * (page_size - 4)}) {
            Row r;
            r.a = 2 + a++;  // a 1-byte integer
            r.b = {static_cast<uint8_t>(a)};
            // The record's header grows with c's serial type, so that a length of c can
            // skip the payload wanted; then b takes the byte.
            bytes record;
            for (size_t len = payload - 10;; ++len) {
                r.c.assign(len, static_cast<uint8_t>(a));
                record.clear();
                append_record(record, r.a, r.b, r.c);
                if (record.size() == payload) break;
                if (record.size() > payload) {
                    r.c.pop_back();
                    r.b.push_back(0);
                    record.clear();
                    append_record(record, r.a, r.b, r.c);
                    break;
                }
            }
            CHECK(record.size() == payload);
            rows.push_back(std::move(r));
        }
        INFO("page size " << page_size);
        check_table(page_size, rows);
    }
}

TEST_CASE("append_record encodes as SQLite does") {
    // (1, x'', x'') is a 4-byte header and no body: serial types 9, 12, 12 (fileformat2 2.1).
    bytes r;
    append_record(r, 1, {}, {});
    CHECK(r == bytes{4, 9, 12, 12});
    r.clear();
    append_record(r, -2, bytes{0xab}, bytes(60, 0));  // 60 bytes: type 132, a 2-byte varint
    CHECK(bytes(r.begin(), r.begin() + 8) == bytes{5, 1, 14, 0x81, 0x04, 0xfe, 0xab, 0});
    CHECK(r.size() == 5 + 1 + 1 + 60);
    r.clear();
    append_record(r, 0x800000000000, {}, {});
    CHECK(r == bytes{4, 6, 12, 12, 0, 0, 0x80, 0, 0, 0, 0, 0});
}

TEST_CASE("b-tree writer: the lock-byte page is never written nor linked to") {
    // SQLite never uses the page holding the byte at 1 GiB; a file that references it is
    // corrupt ("2nd reference to page"). Moved down to 16 pages of 512 bytes here: every page
    // from the first up but that one is written once, in b-tree pages and overflow chains.
    constexpr uint32_t kPage = 512;
    constexpr uint64_t kLock = 16 * kPage;  // page 17
    for (const size_t value_size : {size_t{20}, size_t{700}, size_t{3000}}) {
        std::map<uint32_t, bytes> written;
        IndexBtreeWriter w(
            kPage, 2, 3,
            [&](uint32_t n, bytes_view page) -> Status {
                CHECK(written.count(n) == 0);
                written[n] = bytes(page.begin(), page.end());
                return {};
            },
            kLock);
        bytes record;
        for (int64_t i = 0; i < 400; ++i) {
            record.clear();
            append_record(record, i, bytes(8, static_cast<uint8_t>(i)),
                          bytes(value_size, static_cast<uint8_t>(i)));
            REQUIRE(w.add(record).ok());
        }
        auto last = w.finish();
        REQUIRE(last.ok());
        REQUIRE(*last > 17);
        CHECK(written.count(17) == 0);
        for (uint32_t n = 2; n <= *last; ++n) CHECK((n == 17) != (written.count(n) == 1));
        // No overflow page and no b-tree page names page 17 as its next page or a child.
        for (const auto& [n, page] : written) {
            const uint32_t first_word = uint32_t{page[0]} << 24 | uint32_t{page[1]} << 16 |
                                        uint32_t{page[2]} << 8 | page[3];
            if (page[0] != 0x02 && page[0] != 0x0a) CHECK(first_word != 17);
        }
    }
}

TEST_CASE("b-tree writer: a marked record is where place() says, in a leaf or as a divider") {
    // Small pages and many records make three levels; every fifth record is marked, so that
    // some become dividers, at the moment a page fills up and when the last page is closed.
    std::mt19937_64 rng(test::seed("btree_writer_marks"));
    for (const size_t n : {size_t{1}, size_t{2}, size_t{9}, size_t{3000}}) {
        INFO(n << " records");
        std::map<uint32_t, bytes> pages;
        IndexBtreeWriter tree(512, 1, 2, [&](uint32_t number, bytes_view page) -> Status {
            pages[number].assign(page.begin(), page.end());
            return {};
        });
        std::vector<std::pair<size_t, bytes>> marked;  // (mark, record)
        for (size_t i = 0; i < n; ++i) {
            bytes key(4);
            for (size_t j = 0; j < 4; ++j) key[j] = static_cast<uint8_t>(i >> (8 * (3 - j)));
            bytes record;
            append_record(record, 2, key, test::random_bytes(rng, 1 + rng() % 60));
            if (i % 5 == 4 || i + 1 == n) {
                auto mark = tree.add_marked(record);
                REQUIRE_MESSAGE(mark.ok(), test::why(mark));
                marked.emplace_back(*mark, record);
            } else {
                REQUIRE(tree.add(record).ok());
            }
        }
        REQUIRE(tree.finish().ok());
        size_t in_interior = 0;
        for (const auto& [mark, record] : marked) {
            const IndexBtreeWriter::Place& place = tree.place(mark);
            REQUIRE(pages.count(place.page) == 1);
            const bytes& page = pages[place.page];
            REQUIRE(place.end >= record.size());
            REQUIRE(place.end <= page.size());
            CHECK(bytes(page.begin() + place.end - record.size(), page.begin() + place.end) ==
                  record);
            in_interior += page[0] == 0x02;  // an interior page of an index b-tree
        }
        if (n == 3000) CHECK(in_interior > 0);
    }
    // A record that would overflow its cell cannot be marked.
    IndexBtreeWriter tree(512, 1, 2, [](uint32_t, bytes_view) -> Status { return {}; });
    bytes record;
    append_record(record, 2, bytes{1}, bytes(tree.max_local(), 7));
    CHECK(!tree.add_marked(record).ok());
}
