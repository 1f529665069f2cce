// The spilling sort (sort/spill.hpp), the stream reader (input/kv_stream.hpp) and the builds
// through them (kv_root_sorted, build_new_trie_file_sorted): with budgets of a few pairs, so
// that runs of a few keys spill and merge in several passes, they must give what the
// in-memory path gives for the same document: the same final pairs, the same roots, the same
// file byte for byte, and the same errors.
#include <dirent.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mpt/core/hex.hpp>
#include <mpt/input/kv_stream.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <random>
#include <sstream>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::TempFile;

namespace {

// A run or row budget that no document here reaches: nothing spills. Kept small, as the sorter
// and the row buffer reserve it whole up front: under AddressSanitizer each reservation of
// 1 GiB (and its release) poisoned 128 MiB of shadow memory, and the spilled build cases took
// minutes.
constexpr size_t kNoSpill = size_t{16} << 20;

// A folder of its own for temporary files, removed at scope exit; empty() says whether
// anything was left in it.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/mpt-spill-test-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                if (name != "." && name != "..") ::unlink((path + "/" + name).c_str());
            }
            ::closedir(d);
        }
        ::rmdir(path.c_str());
    }
    size_t entries() const {
        size_t n = 0;
        if (DIR* d = ::opendir(path.c_str())) {
            while (const dirent* e = ::readdir(d)) {
                const std::string name = e->d_name;
                n += name != "." && name != "..";
            }
            ::closedir(d);
        }
        return n;
    }
};

// A document of n writes over about n / 3 keys (so most keys are written several times, in
// different runs), values null or "" one time in five when ordered (deletions), keys of 0 to
// 5 bytes from a narrow alphabet (shared paths, keys that are prefixes of others).
std::string random_document(std::mt19937_64& rng, size_t n, bool ordered) {
    std::string s = ordered ? "[" : "{";
    const size_t keys = std::max<size_t>(n / 3, 1);
    for (size_t i = 0; i < n; ++i) {
        if (i != 0) s += i % 7 == 0 ? ",\n  " : ",";
        const size_t k = rng() % keys;
        bytes key(k % 6, 0);
        for (size_t j = 0; j < key.size(); ++j) key[j] = static_cast<uint8_t>((k >> (2 * j)) & 3);
        std::string value;
        const size_t kind = rng() % 10;
        if (ordered && kind == 0) {
            value = "null";
        } else if (ordered && kind == 1) {
            value = "\"\"";
        } else {
            value = "\"" + to_hex(test::random_bytes(rng, 1 + rng() % 40)) + "\"";
        }
        // Some keys as text, with an escape: the stream's cuts must skip what strings hold,
        // and a place to cut guessed inside one must fail to parse ("\"," and "],").
        std::string key_text = to_hex(key);
        if (kind == 2 && !key.empty()) key_text = "ab\\\"c,]" + std::to_string(k);
        if (kind == 3 && !key.empty()) key_text = "x\\\", y], " + std::to_string(k);
        if (ordered) {
            s += "[\"" + key_text + "\", " + value + "]";
        } else {
            s += "\"" + key_text + "\": " + value;
        }
    }
    return s + (ordered ? "]" : "}");
}

// A text dump (`0x<key> 0x<value>` lines) of n random pairs, some lines with blanks or CRLF.
std::string random_text_dump(std::mt19937_64& rng, size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
        s += to_hex(test::random_bytes(rng, 1 + rng() % 8)) + (i % 5 == 0 ? " \t " : " ");
        s += to_hex(test::random_bytes(rng, 1 + rng() % 40)) + (i % 3 == 0 ? "\r\n" : "\n");
    }
    return s;
}

std::string write_temp(const std::string& text, const std::string& path) {
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

// Runs of run_bytes; with overlap, each sorted and written on a thread of its own.
SpillOptions tiny(const std::string& dir, size_t run_bytes, size_t fan_in, bool overlap = false) {
    SpillOptions o;
    o.overlap = overlap;
    o.run_bytes = run_bytes;
    o.buffer_bytes = 64;
    o.chunk_bytes = 200;
    o.fan_in = fan_in;
    o.tmp_dir = dir;
    return o;
}

// The final pairs of a finished sorter, copied.
std::vector<std::pair<bytes, bytes>> drain(SpillingPairSorter& sorter) {
    std::vector<std::pair<bytes, bytes>> out;
    while (true) {
        auto run = sorter.next();
        REQUIRE_MESSAGE(run.ok(), test::why(run));
        if (run->empty()) return out;
        for (const KvPair& p : *run) {
            out.emplace_back(bytes(p.key.begin(), p.key.end()),
                             bytes(p.value.begin(), p.value.end()));
        }
    }
}

bytes copy(bytes_view v) { return bytes(v.begin(), v.end()); }

// The spilled build of doc: its pairs sorted from a stream of pieces of piece_bytes with
// spill options so (files in dir), then built by build_new_trie_file_sorted with o and
// row_bytes. It must be want's file (the whole-file build of doc, at want_path), byte for
// byte, and leave nothing in dir. check, when given, looks at the sorter first.
void check_spilled_build(const std::string& doc, const SpillOptions& so, size_t piece_bytes,
                         const BuildOptions& o, size_t row_bytes, const std::string& want_path,
                         const BuildResult& want, const TempDir& dir,
                         const std::function<void(const SpillingPairSorter&)>& check = {}) {
    TempFile doc_file, got_file;
    write_temp(doc, doc_file.path);
    SpillFiles files(so);
    SpillingPairSorter sorter(files);
    KvStreamReader stream(mpt::test::text_stream(doc_file.path, piece_bytes, 1 << 20));
    REQUIRE(sort_kv_stream(stream, o.secure, o.secure, sorter).ok());
    if (check) check(sorter);
    auto got = build_new_trie_file_sorted(got_file.path, sorter, o, files, row_bytes);
    REQUIRE_MESSAGE(got.ok(), test::why(got));
    REQUIRE(got->has_value());
    CHECK((*got)->root == want.root);
    CHECK((*got)->rows_written == want.rows_written);
    CHECK(test::file_bytes(got_file.path) == test::file_bytes(want_path));
    CHECK(dir.entries() == 0);
}

}  // namespace

TEST_CASE("spill: a sort of runs of a few keys gives the in-memory path's final pairs") {
    std::mt19937_64 rng(test::seed("spill_sort"));
    for (const bool ordered : {false, true}) {
        for (const bool secure : {false, true}) {
            for (const size_t n : {0, 1, 5, 300, 1000}) {
                // Layouts: runs merged; buckets each read into memory (as a larger budget
                // leaves them); buckets of more than half a run (the default limit, which
                // keys of 4 first bytes here pass) sorted in runs, merged; 3 and 4: 1 and 2
                // in a direct file, its chunks padded, each bucket read ahead of its turn.
                for (const int layout : {0, 1, 2, 3, 4}) {
                    for (const size_t fan_in : {2, 3, 64}) {
                        // Fan-in 3: runs sorted and written while the next is filled.
                        INFO(std::string(ordered ? "ordered" : "object")
                             << std::string(secure ? ", secure" : "") << ", " << n
                             << " entries, fan-in " << fan_in << ", layout " << layout);
                        const std::string doc = random_document(rng, n, ordered);
                        auto input = parse_kv(doc);
                        REQUIRE_MESSAGE(input.ok(), test::why(input));
                        const SortedPairs want = sorted_final_pairs(*input, secure);

                        TempDir dir;
                        TempFile file;
                        write_temp(doc, file.path);
                        SpillOptions so = tiny(dir.path, 300, fan_in, fan_in == 3);
                        if (layout == 1 || layout == 3) so.bucket_bytes = size_t{1} << 20;
                        so.direct = layout >= 3;
                        // Runs of a fourth of run_bytes, seven written at once, in a direct file.
                        if (layout >= 3 && fan_in == 3) so.spread_run_bytes = 75;
                        const auto kind = layout == 0 ? SpillingPairSorter::Layout::runs
                                                      : SpillingPairSorter::Layout::buckets;
                        SpillFiles files(so);
                        SpillingPairSorter sorter(files, kind);
                        KvStreamReader stream(mpt::test::text_stream(file.path, 100, 1 << 20));
                        REQUIRE(sort_kv_stream(stream, secure, false, sorter).ok());
                        if (n >= 300) CHECK(sorter.runs_spilled() > 3);
                        const auto got = drain(sorter);
                        // Every chunk padded and read whole: nothing went through the cache.
                        if (n >= 300) CHECK(sorter.direct_file() == (layout >= 3));
                        // Secure keys spread over all first bytes: buckets of a few entries.
                        if (n >= 1000 && !secure)
                            CHECK((sorter.buckets_merged() > 0) == (layout == 2 || layout == 4));
                        REQUIRE(got.size() == want.pairs.size());
                        for (size_t i = 0; i < got.size(); ++i) {
                            CHECK(got[i].first == copy(want.pairs[i].key));
                            CHECK(got[i].second == copy(want.pairs[i].value));
                        }
                        // The root, hashed from a second sort, as kv_root gives it.
                        const size_t made = files.files_made();
                        SpillingPairSorter again(files, kind);
                        KvStreamReader stream2(mpt::test::text_stream(file.path, 100, 1 << 20));
                        REQUIRE(sort_kv_stream(stream2, secure, false, again).ok());
                        auto root = kv_root_sorted(again, fan_in == 3 ? 2 : 1);
                        REQUIRE_MESSAGE(root.ok(), test::why(root));
                        auto expected = kv_root(*input, secure, 2);
                        REQUIRE(expected.ok());
                        CHECK(root->root == expected->root);
                        CHECK(root->pairs == expected->pairs);
                        CHECK(dir.entries() == 0);
                        // The second sort's runs are written into the files the first one merged
                        // and gave back.
                        if (again.runs_spilled() > fan_in)
                            CHECK(files.files_made() - made < again.runs_spilled());
                    }
                }
            }
        }
    }
}

TEST_CASE("spill: the buckets' first chunks held in memory are not written, and sort the same") {
    std::mt19937_64 rng(test::seed("spill_hold"));
    for (const bool ordered : {false, true}) {
        const std::string doc = random_document(rng, 2000, ordered);
        auto input = parse_kv(doc);
        REQUIRE_MESSAGE(input.ok(), test::why(input));
        const SortedPairs want = sorted_final_pairs(*input, false);
        auto expected = kv_root(*input, false, 1);
        REQUIRE(expected.ok());
        TempFile file;
        write_temp(doc, file.path);
        // Buckets sorted in runs, merged (larger than half of a run of 300 bytes), or read
        // whole, direct files or through the cache.
        for (const int layout : {0, 1, 2, 3}) {
            const bool direct = layout >= 2;
            const bool whole = layout % 2 == 1;
            uint64_t written_before = UINT64_MAX;
            // None held; some (3000 bytes: about fifteen of the chunks of 200 bytes tiny() makes);
            // all.
            for (const size_t hold : {size_t{0}, size_t{3000}, size_t{1} << 30}) {
                INFO((ordered ? "ordered" : "object")
                     << ", layout " << layout << ", hold " << hold);
                TempDir dir;
                SpillOptions so = tiny(dir.path, 300, 64);
                so.direct = direct;
                if (whole) so.bucket_bytes = size_t{1} << 20;
                so.hold_bytes = hold;
                SpillFiles files(so);
                SpillingPairSorter sorter(files);
                KvStreamReader stream(mpt::test::text_stream(file.path, 100, 1 << 20));
                REQUIRE(sort_kv_stream(stream, false, false, sorter).ok());
                CHECK(sorter.runs_spilled() > 3);
                // Less written with more held; nothing when all is.
                CHECK(files.bytes_written() < written_before);
                if (hold == size_t{1} << 30) CHECK(files.bytes_written() == 0);
                if (hold != size_t{1} << 30) CHECK(files.bytes_written() > 0);
                written_before = files.bytes_written();
                const auto got = drain(sorter);
                REQUIRE(got.size() == want.pairs.size());
                for (size_t i = 0; i < got.size(); ++i) {
                    CHECK(got[i].first == copy(want.pairs[i].key));
                    CHECK(got[i].second == copy(want.pairs[i].value));
                }
                CHECK((sorter.buckets_merged() > 0) == !whole);
                SpillingPairSorter again(files);
                KvStreamReader stream2(mpt::test::text_stream(file.path, 100, 1 << 20));
                REQUIRE(sort_kv_stream(stream2, false, false, again).ok());
                auto root = kv_root_sorted(again, 2);
                REQUIRE_MESSAGE(root.ok(), test::why(root));
                CHECK(root->root == expected->root);
                CHECK(dir.entries() == 0);
            }
        }
    }
}

TEST_CASE("spill: a direct file takes what the file system refuses around the cache through it") {
    TempDir dir;
    SpillFiles files(tiny(dir.path, 100, 2));
    auto fd = files.make_file();
    REQUIRE_MESSAGE(fd.ok(), test::why(fd));
    // The file systems the tests run on read and write around the cache; the sorts' direct
    // cases mean nothing otherwise.
    REQUIRE(SpillFiles::make_direct(*fd));
    direct_bytes data(2 * kDirectAlign);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
    // Aligned as direct transfers must be: the file stays direct.
    REQUIRE(files.write(*fd, {data.data(), kDirectAlign}, kDirectAlign).ok());
    CHECK((::fcntl(*fd, F_GETFL) & O_DIRECT) != 0);
    // 100 bytes from an odd address to an odd offset: refused as such (EINVAL), made again
    // through the cache, as is all that follows.
    REQUIRE(files.write(*fd, {data.data() + 1, 100}, 3).ok());
    CHECK((::fcntl(*fd, F_GETFL) & O_DIRECT) == 0);
    uint8_t back[100];
    REQUIRE(files.read(*fd, back, 100, 3).ok());
    CHECK(std::equal(back, back + 100, data.data() + 1));
    direct_bytes page(kDirectAlign);
    REQUIRE(files.read(*fd, page.data(), page.size(), kDirectAlign).ok());
    CHECK(std::equal(page.begin(), page.end(), data.begin()));
    CHECK(files.bytes_written() == kDirectAlign + 100);
    ::close(*fd);
}

TEST_CASE("spill: temporary files keep a floor free on their file system") {
    TempDir dir;
    SpillOptions o = tiny(dir.path, 100, 2);
    struct statvfs fs {};
    REQUIRE(::statvfs(dir.path.c_str(), &fs) == 0);
    const uint64_t free = uint64_t{fs.f_bavail} * fs.f_frsize;
    const uint8_t data[100] = {};
    // By default the least of 1 GiB, a twentieth of the file system and half of what is free
    // (which other processes move: within a MiB).
    const uint64_t floor = SpillFiles(o).keep_free();
    CHECK(floor <= kKeepFreeMax);
    CHECK(floor <= uint64_t{fs.f_blocks} * fs.f_frsize / 20);
    CHECK(floor <= free / 2 + (uint64_t{1} << 20));
    CHECK((floor == kKeepFreeMax || floor == uint64_t{fs.f_blocks} * fs.f_frsize / 20 ||
           floor + (uint64_t{1} << 20) >= free / 2));
    // A floor above what is free: the first write is refused, as a full disk.
    o.keep_free = free + (uint64_t{1} << 30);
    SpillFiles tight(o);
    auto fd = tight.make_file();
    REQUIRE_MESSAGE(fd.ok(), test::why(fd));
    const Status s = tight.write(*fd, {data, sizeof data}, 0);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Errc::storage_full);
    CHECK(s.error().detail.find("KiB are kept free on this file system") != std::string::npos);
    CHECK(tight.bytes_written() == 0);
    ::close(*fd);
    // A floor of 0 keeps nothing back.
    o.keep_free = 0;
    SpillFiles loose(o);
    fd = loose.make_file();
    REQUIRE_MESSAGE(fd.ok(), test::why(fd));
    CHECK(loose.write(*fd, {data, sizeof data}, 0).ok());
    ::close(*fd);
}

TEST_CASE("spill: the last write of a key wins across runs, a deletion too") {
    TempDir dir;
    SpillFiles files(tiny(dir.path, 100, 2));
    SpillingPairSorter sorter(files);
    // Runs of about two entries: "a" is written in the first run, deleted in the second and
    // written again in the fourth; "b" is written, then deleted in a later run.
    const std::pair<const char*, const char*> writes[] = {
        {"a", "1"}, {"b", "2"}, {"a", ""}, {"c", "3"}, {"c", "4"},
        {"d", "5"}, {"a", "6"}, {"b", ""}, {"e", "7"}, {"e", "8"}};
    for (const auto& [k, v] : writes) REQUIRE(sorter.add(test::b(k), test::b(v)).ok());
    REQUIRE(sorter.finish().ok());
    CHECK(sorter.runs_spilled() >= 4);
    CHECK(sorter.nibbles_used() == 1);  // 'a' to 'e': 0x61 to 0x65
    const auto got = drain(sorter);
    const std::vector<std::pair<bytes, bytes>> want = {{test::b("a"), test::b("6")},
                                                       {test::b("c"), test::b("4")},
                                                       {test::b("d"), test::b("5")},
                                                       {test::b("e"), test::b("8")}};
    CHECK(got == want);
}

TEST_CASE("spill: runs with thousands of keys of one first byte sort as std::map does") {
    // Enough keys under one first byte that a run's sort orders them by their second byte
    // before comparing: keys of 1 to 9 bytes (the short ones padded in the prefix the sort
    // compares first), many written twice, some deleted.
    std::mt19937_64 rng(test::seed("spill_one_byte"));
    std::vector<std::pair<bytes, bytes>> writes;
    std::map<bytes, bytes> want;
    for (size_t i = 0; i < 6000; ++i) {
        bytes key(1 + rng() % 9);
        key[0] = rng() % 8 == 0 ? 0x7f : 0x42;
        for (size_t j = 1; j < key.size(); ++j) key[j] = static_cast<uint8_t>(rng() % 5 * 60);
        bytes value = i % 11 == 0 ? bytes() : test::random_bytes(rng, 1 + rng() % 8);
        if (value.empty()) {
            want.erase(key);
        } else {
            want[key] = value;
        }
        writes.emplace_back(std::move(key), std::move(value));
    }
    // Spilled, the buckets of 0x42 and 0x7f are sorted in memory by their second byte, then
    // on (bucket_bytes of 1 MiB), or (0x42's at least) in runs, merged (the default: half of
    // run_bytes).
    for (const size_t run_bytes : {kNoSpill, size_t{40000}}) {
        for (const size_t bucket_bytes : {size_t{0}, size_t{1} << 20}) {
            for (const bool overlap : {false, true}) {
                CAPTURE(run_bytes);
                CAPTURE(bucket_bytes);
                CAPTURE(overlap);
                TempDir dir;
                SpillOptions so = tiny(dir.path, run_bytes, 4, overlap);
                so.bucket_bytes = bucket_bytes;
                SpillFiles files(so);
                SpillingPairSorter sorter(files);
                for (const auto& [k, v] : writes) REQUIRE(sorter.add(k, v).ok());
                REQUIRE(sorter.finish().ok());
                const bool spilled = run_bytes != kNoSpill;
                CHECK((sorter.runs_spilled() != 0) == spilled);
                const auto got = drain(sorter);
                CHECK(got == std::vector<std::pair<bytes, bytes>>(want.begin(), want.end()));
                CHECK((sorter.buckets_merged() > 0) == (spilled && bucket_bytes == 0));
            }
        }
    }
}

TEST_CASE("spill: the runs tell how many first nibbles their keys start with") {
    TempDir dir;
    SpillFiles files(tiny(dir.path, 100, 2));
    SpillingPairSorter sorter(files);
    // The empty key counts as nibble 0, a deletion as a key; 0x1a and 0x1b share nibble 1.
    for (const char* key : {"", "1a", "1b", "f0", "1c"}) {
        REQUIRE(sorter.add(test::h(key), test::b(std::string(key) == "f0" ? "" : "v")).ok());
    }
    REQUIRE(sorter.finish().ok());
    REQUIRE(sorter.runs_spilled() >= 2);
    CHECK(sorter.nibbles_used() == 3);
    CHECK(sorter.bytes_used() == 5);  // the empty key as byte 0
}

TEST_CASE("spill: a root on threads releases each nibble's records, but none a fallback reads") {
    // Keys of 4 bytes under first bytes 0x10 to 0x7f (nibbles 1 to 7), several runs' worth;
    // with last_nibble_only, every key but those of nibble 7 is deleted at the end, so that
    // the root is no branch of the parts and is hashed again, from all the buckets, on one.
    std::mt19937_64 rng(test::seed("spill_release"));
    for (const bool last_nibble_only : {false, true}) {
        for (const int layout : {0, 1, 2}) {  // one file, one for each nibble, both direct
            const bool direct = layout == 2;
            CAPTURE(last_nibble_only);
            CAPTURE(layout);
            std::vector<std::pair<bytes, bytes>> writes;
            for (size_t i = 0; i < 600; ++i) {
                bytes key = test::random_bytes(rng, 4);
                key[0] = static_cast<uint8_t>(0x10 + rng() % 0x70);
                writes.emplace_back(key, test::random_bytes(rng, 1 + rng() % 20));
            }
            if (last_nibble_only) {
                for (size_t i = 0, n = writes.size(); i < n; ++i) {
                    if (writes[i].first[0] < 0x70) writes.emplace_back(writes[i].first, bytes());
                }
            }
            std::string doc = "[";
            for (const auto& [k, v] : writes) {
                doc += (doc.size() == 1 ? "[\"" : ",[\"") + to_hex(k) + "\",\"" + to_hex(v) + "\"]";
            }
            auto input = parse_kv(doc + "]");
            REQUIRE(input.ok());
            auto want = kv_root(*input, false, 1);
            REQUIRE(want.ok());

            TempDir dir;
            SpillOptions so = tiny(dir.path, 2000, 4, true);
            so.direct = direct;
            so.file_per_nibble = layout != 0;
            SpillFiles files(so);
            SpillingPairSorter sorter(files);
            for (const auto& [k, v] : writes) REQUIRE(sorter.add(k, v).ok());
            REQUIRE(sorter.finish().ok());
            REQUIRE(sorter.runs_spilled() > 3);
            auto got = kv_root_sorted(sorter, 2);
            REQUIRE_MESSAGE(got.ok(), test::why(got));
            CHECK(got->root == want->root);
            CHECK(got->pairs == want->pairs);
            // Released after the split: a nibble's records read again fail. After the
            // fallback, nothing was released: they read again as before.
            for (unsigned v = 1; v < 8; ++v) {
                auto stream = sorter.nibble_stream(v);
                REQUIRE(stream.ok());
                auto pairs = (*stream)->next();
                if (last_nibble_only) {
                    REQUIRE_MESSAGE(pairs.ok(), test::why(pairs));
                    CHECK(pairs->empty() == (v < 7));
                } else {
                    REQUIRE_FALSE(pairs.ok());
                    CHECK(pairs.error().code == Errc::internal);
                }
            }
            CHECK(dir.entries() == 0);
        }
    }
}

TEST_CASE("spill: a document read in pieces gives parse_kv's entries and errors") {
    // Read on this thread, and with each next piece read ahead on another; each piece parsed
    // whole, or in halves on two threads.
    for (const int mode : {0, 1, 2, 3}) {
        const bool ahead = (mode & 1) != 0;
        const bool halves = (mode & 2) != 0;
        CAPTURE(ahead);
        CAPTURE(halves);
        std::mt19937_64 rng(test::seed("kv_stream"));
        // An object, an array of pairs, a text dump.
        for (const int shape : {0, 1, 2}) {
            const bool ordered = shape != 0;
            const std::string doc =
                shape == 2 ? random_text_dump(rng, 500) : random_document(rng, 500, ordered);
            auto whole = parse_kv(doc);
            REQUIRE_MESSAGE(whole.ok(), test::why(whole));
            TempFile file;
            write_temp(doc, file.path);
            for (const size_t piece : {64, 100, 1000, 1 << 20}) {
                INFO(shape << ", " << piece << "-byte pieces");
                KvStreamReader stream(mpt::test::text_stream(file.path, piece, 1 << 20));
                stream.read_ahead(ahead);
                stream.parse_halves(halves, 1);
                std::vector<std::pair<bytes, bytes>> got;
                KvInput p;
                size_t pieces = 0;
                while (true) {
                    auto more = stream.next(p);
                    REQUIRE_MESSAGE(more.ok(), test::why(more));
                    if (!*more) break;
                    ++pieces;
                    CHECK(p.ordered() == ordered);
                    // About a piece of text each: an entry takes 12 bytes or more, one may
                    // straddle the end of what was read, and a text dump's has 6.
                    CHECK(p.size() * (shape == 2 ? 6 : 12) <= piece + 240);
                    for (size_t i = 0; i < p.size(); ++i) {
                        got.emplace_back(bytes(p[i].key.begin(), p[i].key.end()),
                                         bytes(p[i].value.begin(), p[i].value.end()));
                    }
                }
                // The end again, however often asked.
                auto again = stream.next(p);
                REQUIRE(again.ok());
                CHECK_FALSE(*again);
                if (piece < 1000) CHECK(pieces > 10);
                // A reader dropped after its first piece, the others being read ahead: it ends
                // its other thread, without waiting for the rest.
                {
                    KvStreamReader dropped(mpt::test::text_stream(file.path, piece, 1 << 20));
                    dropped.read_ahead(ahead);
                    dropped.parse_halves(halves, 1);
                    auto first = dropped.next(p);
                    REQUIRE(first.ok());
                    CHECK(*first);
                }
                // JSON pieces after the first are cut where the reader guesses (some guesses
                // fall inside the keys that hold "\"," or "],"); a text dump's are scanned.
                if (piece < 1000) CHECK((stream.pieces_guessed() > 0) == (shape != 2));
                REQUIRE(got.size() == whole->size());
                for (size_t i = 0; i < got.size(); ++i) {
                    CHECK(got[i].first == copy((*whole)[i].key));
                    CHECK(got[i].second == copy((*whole)[i].value));
                }
            }
        }
        // Errors far into the document, in a late piece, name the same line, column and entry.
        std::string good = random_document(rng, 400, false);
        good.pop_back();
        const std::string bad[] = {
            good + ",\n  \"0x12\": \"0x1\"}",     good + ",\n  \"0x12\": 7}",
            good + ",\n  \"0x12\" \"0x01\"}",     good + ",\n  \"0x12\": \"0x01\"",
            good + ",\n  \"0x12\": \"0x01\"} []", good + ",\n \"0x12\": \"0x01\",}",
            good + ",\n  \"\\q\": \"0x01\"}"};
        // And on a line that pieces before began: its column counts from a line feed that an
        // earlier piece held (in the head or the tail of one parsed in halves).
        std::vector<std::string> docs(std::begin(bad), std::end(bad));
        for (size_t n = 402; n < 412; ++n) {
            std::string doc = random_document(rng, n, false);
            doc.pop_back();
            docs.push_back(doc + ", \"0x12\": \"0x1\"}");
        }
        // On the first line, past the first piece.
        std::string first_line = "{";
        for (int i = 0; i < 20; ++i)
            first_line += "\"0x" + std::to_string(10 + i) + "\": \"0x01\", ";
        docs.push_back(first_line + "\"0x12\": \"0x1\"}");
        // And after a byte order mark, which a whole parse counts no column for.
        for (size_t i = 0, n = docs.size(); i < n; ++i) docs.push_back("\xEF\xBB\xBF" + docs[i]);
        // Two marks: the second is the document's first byte, and its error.
        docs.push_back("\xEF\xBB\xBF" + docs.back());
        for (const std::string& doc : docs) {
            auto want = parse_kv(doc);
            REQUIRE_FALSE(want.ok());
            TempFile file;
            write_temp(doc, file.path);
            KvStreamReader stream(mpt::test::text_stream(file.path, 100, 1 << 20));
            stream.read_ahead(ahead);
            stream.parse_halves(halves, 1);
            Status got;
            KvInput p;
            while (true) {
                auto more = stream.next(p);
                if (!more) {
                    got = more.error();
                    break;
                }
                if (!*more) break;
            }
            REQUIRE_FALSE(got.ok());
            CHECK(got.error().code == want.error().code);
            CHECK(got.error().message() == want.error().message());
        }
    }
}

TEST_CASE("spill: a document parsed in two halves on two threads gives parse_kv's entries") {
    std::mt19937_64 rng(test::seed("kv_halves"));
    const auto same = [](const KvInput& got, const KvInput& want) {
        REQUIRE(got.size() == want.size());
        CHECK(got.ordered() == want.ordered());
        for (size_t i = 0; i < got.size(); ++i) {
            CHECK(copy(got[i].key) == copy(want[i].key));
            CHECK(copy(got[i].value) == copy(want[i].value));
        }
    };
    std::vector<std::string> docs;
    for (const bool ordered : {false, true}) {
        for (const size_t n : {0, 1, 2, 3, 50, 400})
            docs.push_back(random_document(rng, n, ordered));
    }
    // A text dump, a byte order mark, a cut that would fall inside a string of commas.
    std::string dump;
    for (int i = 0; i < 300; ++i) dump += to_hex(test::random_bytes(rng, 1 + i % 7)) + " 0x01\n";
    docs.push_back(dump);
    docs.push_back("\xEF\xBB\xBF" + docs[4]);
    docs.push_back("{\"0x01\": \"a,b\", \"long\": \"" + std::string(500, ',') +
                   "\", \"0x02\": \"c\"}");
    // Strings that hold what stands between two entries, where the cut is first guessed: a
    // comma between an escaped quote and the closing one (an object), "], [" (an array of
    // pairs). Documents of a few sizes, for the middle to fall before such a string's comma.
    for (int n = 40; n < 44; ++n) {
        std::string object = "{", pairs = "[";
        for (int i = 0; i < n; ++i) {
            const std::string key =
                "\"0x" + to_hex(bytes{static_cast<uint8_t>(i)}).substr(2) + "\"";
            object += (i == 0 ? "" : ", ") + key + ": \"a\\\", \"";
            pairs += std::string(i == 0 ? "" : ", ") + "[" + key + ", \"a], [b\"]";
        }
        docs.push_back(object + "}");
        docs.push_back(pairs + "]");
    }
    for (const std::string& doc : docs) {
        CAPTURE(doc.size());
        auto want = parse_kv(doc);
        REQUIRE_MESSAGE(want.ok(), test::why(want));
        auto got = parse_kv(doc, 2, 0);
        REQUIRE_MESSAGE(got.ok(), test::why(got));
        same(*got, *want);
    }
    // Errors in the first half, in the second, and at the cut give parse_kv's own.
    std::string good = random_document(rng, 400, false);
    good.pop_back();
    const size_t mid = good.size() / 2;
    const std::string bad[] = {"{\"0x1\": \"0x01\", " + good.substr(1) + "}",
                               good + ",\n  \"0x12\": 7}",
                               good.substr(0, mid) + "\x01" + good.substr(mid) + "}",
                               good + ", }",
                               good,
                               "[" + good.substr(1) + "]",
                               "x" + good + "}"};
    for (const std::string& doc : bad) {
        auto want = parse_kv(doc);
        REQUIRE_FALSE(want.ok());
        auto got = parse_kv(doc, 2, 0);
        REQUIRE_FALSE(got.ok());
        CHECK(got.error().code == want.error().code);
        CHECK(got.error().message() == want.error().message());
    }
}

TEST_CASE("spill: an entry larger than the most a piece may grow to is refused") {
    TempFile file;
    write_temp("{\"0x01\": \"" + std::string(5000, 'a') + "\"}", file.path);
    KvStreamReader stream(mpt::test::text_stream(file.path, 100, 1000));
    KvInput p;
    auto more = stream.next(p);
    REQUIRE_FALSE(more.ok());
    CHECK(more.error().code == Errc::input_too_large);
}

// A bracket too many leaves an entry open to the end of the text, past the most a piece may
// grow to: what is wrong before that point is the error parse_kv reports, whether the text
// held ends inside a string or not; where nothing is wrong in it (white space or a string runs
// on past it, or a text dump's line), the limit is.
TEST_CASE("spill: an entry left open past the limit: the first error of what it holds") {
    std::string entries;
    for (int i = 0; i < 300; ++i) {
        char entry[96];
        std::snprintf(entry, sizeof entry, ", [\"0x%06x\", \"0x%064x\"]", i, i);
        entries += entry;
    }
    std::string fields;
    for (int i = 0; i < 300; ++i) {
        char field[96];
        std::snprintf(field, sizeof field, ", \"0x%06x\": \"0x%064x\"", i, i);
        fields += field;
    }
    const auto outcome = [](const std::string& doc, size_t limit) {
        TempFile file;
        write_temp(doc, file.path);
        KvStreamReader stream(mpt::test::text_stream(file.path, 100, limit));
        KvInput p;
        Status s;
        while (s.ok()) {
            auto more = stream.next(p);
            if (!more) s = more.error();
            if (more && !*more) break;
        }
        return s;
    };
    const std::string spaces(3000, ' ');
    const std::string bad[] = {
        "[[\"0x01\", \"0x02\"], [\"0x02\", \"0x0\", [" + entries.substr(2) + "]]",
        "{\"0x01\": \"0x02\", \"0x02\": {\"a\": \"0x0\"" + fields + "}",
        "[[\"0x01\", \"0x02\"], [\"0x0g\", " + spaces + "\"0x02\"]]",
    };
    // Each limit ends the text held inside a string, or outside one.
    for (const std::string& doc : bad) {
        auto want = parse_kv(doc);
        REQUIRE_FALSE(want.ok());
        for (size_t limit = 1000; limit < 1100; limit += 7) {
            CAPTURE(doc.substr(0, 40));
            CAPTURE(limit);
            const Status got = outcome(doc, limit);
            REQUIRE_FALSE(got.ok());
            CHECK(got.error().message() == want.error().message());
        }
    }
    // Nothing wrong in what is held: the limit, where parse_kv takes the document.
    for (const std::string& doc :
         {"[[\"0x01\", " + spaces + "\"0x02\"]]",
          "[[\"0x01\", \"0x" + std::string(3000, 'a') + "\"]]",
          "{" + spaces + "\"0x01\": \"0x02\"}", "0x01 0x" + std::string(3000, 'a') + "\n"}) {
        REQUIRE(parse_kv(doc).ok());
        for (size_t limit = 1000; limit < 1100; limit += 7) {
            const Status got = outcome(doc, limit);
            REQUIRE_FALSE(got.ok());
            CHECK(got.error().code == Errc::input_too_large);
        }
    }
}

TEST_CASE(
    "spill: a new trie file built from spilled runs is the in-memory build's, byte for byte") {
    std::mt19937_64 rng(test::seed("spill_build"));
    for (const bool ordered : {false, true}) {
        for (const bool secure : {false, true}) {
            for (const size_t n : {0, 1, 40, 3000}) {
                for (const size_t row_bytes : {size_t{200}, size_t{3000}, kNoSpill}) {
                    for (const unsigned threads : {1u, 2u}) {
                        INFO(std::string(ordered ? "ordered" : "object")
                             << std::string(secure ? ", secure" : "") << ", " << n
                             << " entries, rows of " << row_bytes << " bytes, " << threads
                             << " threads");
                        const std::string doc = random_document(rng, n, ordered);
                        auto input = parse_kv(doc);
                        REQUIRE(input.ok());
                        BuildOptions o;
                        o.secure = secure;
                        o.threads = threads;
                        TempFile want_file;
                        auto want = build_new_trie_file(want_file.path, *input, o);
                        REQUIRE_MESSAGE(want.ok(), test::why(want));
                        REQUIRE(want->has_value());

                        TempDir dir;
                        SpillOptions so = tiny(dir.path, 400, 3, threads == 2);
                        so.direct = row_bytes == 3000;
                        check_spilled_build(doc, so, 100, o, row_bytes, want_file.path, **want,
                                            dir);
                    }
                }
            }
        }
    }
}

namespace {

// n writes of 32-byte keys whose first bytes go round all 256 (the rest random), so that a
// spilled build splits at depth 2; values of value_bytes. With delete_byte >= 0, every key of
// that first byte is deleted at the end (the runs still hold it).
std::string every_first_byte(std::mt19937_64& rng, size_t n, size_t value_bytes,
                             int delete_byte = -1) {
    std::string s = "[";
    std::vector<bytes> deleted;
    for (size_t i = 0; i < n; ++i) {
        bytes key = test::random_bytes(rng, 32);
        key[0] = static_cast<uint8_t>(i % 256);
        if (key[0] == delete_byte) deleted.push_back(key);
        s += (i == 0 ? "[\"" : ",[\"") + to_hex(key) + "\",\"" +
             to_hex(test::random_bytes(rng, value_bytes)) + "\"]";
    }
    for (const bytes& key : deleted) s += ",[\"" + to_hex(key) + "\",null]";
    return s + "]";
}

}  // namespace

TEST_CASE("spill: a build split at depth 2 is the in-memory build's, byte for byte") {
    // Keys of every first byte make the 17 branches above the parts full branches of hashed
    // children, as the build foresees; deleting one first byte's keys, keys of one byte
    // (children embedded), 1-byte values and the empty key break the foresight, and the build
    // is made otherwise. The file is the same either way.
    std::mt19937_64 rng(test::seed("spill_deep_build"));
    struct Case {
        const char* name;
        std::string doc;
    };
    std::vector<Case> cases = {
        {"every first byte", every_first_byte(rng, 3000, 32)},
        {"every first byte, short values", every_first_byte(rng, 1000, 1)},
        {"one first byte deleted", every_first_byte(rng, 3000, 32, 0x7f)},
        {"the empty key too", every_first_byte(rng, 2000, 32).insert(1, "[\"0x\",\"0x01\"],")},
    };
    std::string one_byte_keys = "{";
    for (int b = 0; b < 256; ++b) {
        one_byte_keys += (b == 0 ? "\"" : ",\"") + to_hex(bytes{static_cast<uint8_t>(b)}) +
                         "\":\"0x0" + std::to_string(b % 10) + "\"";
    }
    cases.push_back({"keys of one byte", one_byte_keys + "}"});
    for (const Case& c : cases) {
        for (const bool secure : {false, true}) {
            for (const size_t row_bytes : {size_t{2000}, kNoSpill}) {
                for (const unsigned threads : {2u, 3u}) {
                    INFO(c.name << (secure ? ", secure" : "") << ", rows of " << row_bytes
                                << " bytes, " << threads << " threads");
                    auto input = parse_kv(c.doc);
                    REQUIRE_MESSAGE(input.ok(), test::why(input));
                    BuildOptions o;
                    o.secure = secure;
                    o.threads = 1;
                    TempFile want_file;
                    auto want = build_new_trie_file(want_file.path, *input, o);
                    REQUIRE_MESSAGE(want.ok(), test::why(want));
                    REQUIRE(want->has_value());

                    TempDir dir;
                    o.threads = threads;
                    SpillOptions so = tiny(dir.path, 4000, 4, true);
                    so.direct = threads == 3;
                    check_spilled_build(c.doc, so, 1000, o, row_bytes, want_file.path, **want, dir,
                                        [&](const SpillingPairSorter& sorter) {
                                            REQUIRE(sorter.runs_spilled() > 1);
                                            if (!secure) CHECK(sorter.bytes_used() == 256);
                                        });
                }
            }
        }
    }
}

TEST_CASE("spill: the temporary files of a document that the page cache holds go through it") {
    // Around the cache only where the document's size is not known or too large to cache.
    CHECK(spill_around_cache(0));
    CHECK(!spill_around_cache(uint64_t{1} << 20));
    CHECK(spill_around_cache(uint64_t{1} << 60));
    // A 512M budget has chunks large enough to go around the cache; a small document's stay.
    CHECK(plan_kv_memory(size_t{512} << 20, 1.6, 0.5, "/tmp", 2).spill.direct);
    CHECK(!plan_kv_memory(size_t{512} << 20, 1.6, 0.5, "/tmp", 2, uint64_t{1} << 20).spill.direct);
    CHECK(plan_kv_memory(size_t{512} << 20, 1.6, 0.5, "/tmp", 2, uint64_t{1} << 60).spill.direct);
}
