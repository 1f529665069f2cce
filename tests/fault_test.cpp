// Fault injection over a real trie file: fail read or write 1, then 2, then 3, ... of a build
// and of an update until the operation completes without reaching the fault. After every
// failure the previous state must be intact: the trie's old root (or no trie), a clean check,
// and every key of the old content readable through a fresh connection. Also a full disk.
#include <doctest/doctest.h>
#include <unistd.h>

#include <dirent.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <mpt/input/kv_stream.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/store/faulty_store.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>

#include "stored_trie.hpp"
#include "test_util.hpp"

using namespace mpt;
using mpt::test::TempFile;

namespace {

using Content = std::map<bytes, bytes>;
using Changes = std::vector<std::pair<bytes, bytes>>;  // applied in order; empty value deletes

// The array form of a k/v document, so that deletes (null) and order are kept.
KvInput to_input(const Changes& changes) {
    std::string text = "[";
    for (const auto& [k, v] : changes) {
        if (text.size() > 1) text += ",";
        text += "[\"" + to_hex(k) + "\"," + (v.empty() ? "null" : "\"" + to_hex(v) + "\"") + "]";
    }
    text += "]";
    auto input = parse_kv(text);
    REQUIRE(input.ok());
    return std::move(input).value();
}

Content applied(Content c, const Changes& changes) {
    for (const auto& [k, v] : changes) {
        if (v.empty()) {
            c.erase(k);
        } else {
            c[k] = v;
        }
    }
    return c;
}

Hash256 root_of(const Content& c) {
    StackTrie st;
    for (const auto& [k, v] : c) REQUIRE(st.add(k, v).ok());
    return st.finish();
}

// Keys of two kinds: random 32-byte keys (hashed nodes, rows) and short keys over a narrow
// alphabet, some prefixes of others (embedded nodes, values in branches).
bytes random_key(std::mt19937_64& rng) {
    if (rng() % 2) return test::random_bytes(rng, 32);
    bytes k = test::random_bytes(rng, 1 + rng() % 4);
    for (uint8_t& x : k) x &= 0x13;
    return k;
}

bytes random_value(std::mt19937_64& rng) { return test::random_bytes(rng, 1 + rng() % 40); }

Changes initial_pairs(std::mt19937_64& rng, size_t n) {
    Changes c;
    for (size_t i = 0; i < n; ++i) c.emplace_back(random_key(rng), random_value(rng));
    return c;
}

// Overwrites, deletes (some collapsing branches into extensions), new keys, and a delete of
// an absent key.
Changes change_set(std::mt19937_64& rng, const Content& before) {
    Changes c;
    size_t i = 0;
    for (const auto& [k, v] : before) {
        switch (i++ % 4) {
            case 0:
                c.emplace_back(k, random_value(rng));
                break;
            case 1:
                c.emplace_back(k, bytes{});
                break;
            default:
                break;
        }
    }
    for (int j = 0; j < 30; ++j) c.emplace_back(random_key(rng), random_value(rng));
    c.emplace_back(bytes(33, 0xee), bytes{});
    return c;
}

// The file's trie, read through a new connection: its root, every key, a clean check.
void expect_file_content(const std::string& path, const Hash256& root, const Content& content) {
    auto store = SqliteNodeStore::open(path, SqliteNodeStore::Mode::read_only);
    REQUIRE(store.ok());
    auto info = require_trie(**store, "main");
    REQUIRE(info.ok());
    REQUIRE(info->root == root);
    TrieReader reader(**store, *info);
    const Trie trie = Trie::open(&reader, info->root);
    for (const auto& [k, v] : content) {
        auto got = trie.get(k);
        REQUIRE(got.ok());
        REQUIRE(got->has_value());
        REQUIRE(**got == v);
    }
    size_t n = 0;
    REQUIRE(trie.for_each({}, [&](bytes_view, bytes_view) { return ++n, true; }).ok());
    REQUIRE(n == content.size());
    auto report = check_trie(**store, *info);
    REQUIRE(report.ok());
    REQUIRE(report->problems.empty());
    REQUIRE(report->rows == report->reachable);
}

const char* op_name(FaultyNodeStore::Op op) {
    return op == FaultyNodeStore::Op::read ? "read" : "write";
}
const char* mode_name(FaultyNodeStore::Mode m) {
    return m == FaultyNodeStore::Mode::once ? "once" : "persistent";
}

struct LoopResult {
    uint64_t failures = 0;  // runs that reached the fault
    uint64_t ops = 0;       // operations of the kind in the run that completed
};

// Runs build_trie(changes) with a fault at operation 1, 2, 3, ... of kind op until a run
// completes without reaching it. `before` is the committed content (none: no trie yet).
LoopResult fault_loop(FaultyNodeStore::Op op, FaultyNodeStore::Mode mode, bool update,
                      uint64_t seed) {
    const std::string op_s = op_name(op), mode_s = mode_name(mode);
    CAPTURE(op_s);
    CAPTURE(mode_s);
    CAPTURE(update);
    std::mt19937_64 rng(seed);
    TempFile f;
    auto opened = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(opened.ok());
    SqliteNodeStore& inner = **opened;

    Content before;
    Hash256 before_root = kEmptyRoot;
    Changes changes = initial_pairs(rng, 120);
    if (update) {
        auto first = build_trie(inner, to_input(changes), BuildOptions{});
        REQUIRE(first.ok());
        before = applied({}, changes);
        before_root = first->root;
        REQUIRE(before_root == root_of(before));
        changes = change_set(rng, before);
    }
    const KvInput input = to_input(changes);
    const Content after = applied(before, changes);

    FaultyNodeStore faulty(inner);
    LoopResult result;
    for (uint64_t n = 1;; ++n) {
        CAPTURE(n);
        faulty.fail_at(op, n, mode);
        auto r = build_trie(faulty, input, BuildOptions{});
        const uint64_t faults = faulty.faults();
        const uint64_t ops = op == FaultyNodeStore::Op::read ? faulty.reads() : faulty.writes();
        faulty.disarm();
        if (faults == 0) {
            REQUIRE(r.ok());
            CHECK(r->root == root_of(after));
            expect_file_content(f.path, r->root, after);
            // Second route to the count of writes: begin, (create,) the rows, root, commit.
            if (op == FaultyNodeStore::Op::write) {
                CHECK(ops == r->rows_written + r->rows_deleted + (update ? 3 : 4));
            }
            result.ops = ops;
            break;
        }
        // A fault that was reached fails the operation: nothing swallows a storage error.
        REQUIRE(!r.ok());
        CHECK(r.error().code == Errc::storage_io);
        CHECK(r.error().detail.find("injected fault") != std::string::npos);
        ++result.failures;

        // The store is out of the failed write: a new one can begin.
        REQUIRE(inner.begin_write().ok());
        inner.rollback();
        // The previous state, as this connection sees it and through a new one.
        auto t = inner.find_trie("main");
        REQUIRE(t.ok());
        if (!update) {
            REQUIRE(!t->has_value());
            continue;
        }
        REQUIRE(t->has_value());
        REQUIRE((*t)->root == before_root);
        auto report = check_trie(inner, **t);
        REQUIRE(report.ok());
        REQUIRE(report->problems.empty());
        expect_file_content(f.path, before_root, before);
    }
    const std::string what = update ? "update" : "build";
    MESSAGE(op_s << " faults, " << mode_s << ", " << what << ": " << result.failures
                 << " failed runs, then success after " << result.ops << " " << op_s << "s");
    return result;
}

}  // namespace

TEST_CASE("fault injection: counts and modes") {
    MemoryNodeStore inner;
    FaultyNodeStore f(inner);
    f.fail_at(FaultyNodeStore::Op::write, 2, FaultyNodeStore::Mode::once);
    REQUIRE(f.begin_write().ok());                     // write 1
    auto id = f.create_trie("main", TrieKind::plain);  // write 2: fails
    REQUIRE(!id.ok());
    CHECK(id.error().code == Errc::storage_io);
    CHECK(id.error().detail == "injected fault: write 2 (create_trie)");
    REQUIRE(f.create_trie("main", TrieKind::plain).ok());  // write 3: once means once
    REQUIRE(f.find_trie("main").ok());                     // reads are not writes
    CHECK(f.writes() == 3);
    CHECK(f.reads() == 1);
    CHECK(f.faults() == 1);
    f.rollback();

    f.fail_at(FaultyNodeStore::Op::read, 2, FaultyNodeStore::Mode::persistent);
    CHECK(f.find_trie("main").ok());
    CHECK(!f.get(1, {}).ok());
    CHECK(!f.scan(1, {}, [](bytes_view, bytes_view) { return true; }).ok());
    CHECK(f.faults() == 2);
    f.disarm();
    CHECK(f.get(1, {}).ok());
    CHECK(f.faults() == 0);
}

TEST_CASE("fault injection: a failed first build leaves no trie") {
    const uint64_t seed = test::seed("fault_build");
    for (const auto mode : {FaultyNodeStore::Mode::once, FaultyNodeStore::Mode::persistent}) {
        const LoopResult w = fault_loop(FaultyNodeStore::Op::write, mode, false, seed);
        // Every row, the trie's creation, its root and the commit were each made to fail.
        CHECK(w.failures == w.ops);
        CHECK(w.failures > 50);
        const LoopResult r = fault_loop(FaultyNodeStore::Op::read, mode, false, seed);
        CHECK(r.failures == r.ops);
        CHECK(r.failures >= 1);
    }
}

TEST_CASE("fault injection: a failed update keeps the previous root") {
    const uint64_t seed = test::seed("fault_update");
    for (const auto mode : {FaultyNodeStore::Mode::once, FaultyNodeStore::Mode::persistent}) {
        for (const auto op : {FaultyNodeStore::Op::write, FaultyNodeStore::Op::read}) {
            const LoopResult l = fault_loop(op, mode, true, seed);
            CHECK(l.failures == l.ops);
            CHECK(l.failures > 20);
        }
    }
}

TEST_CASE("a full disk fails a build with storage_full and the file stays usable") {
    const uint64_t seed = test::seed("full_disk");
    std::mt19937_64 rng(seed);
    TempFile f;
    auto opened = SqliteNodeStore::open(f.path, SqliteNodeStore::Mode::create);
    REQUIRE(opened.ok());
    SqliteNodeStore& store = **opened;
    const Changes first = initial_pairs(rng, 100);
    auto built = build_trie(store, to_input(first), BuildOptions{});
    REQUIRE(built.ok());
    const Content before = applied({}, first);

    // The cap cannot go below the current size: the file may not grow at all.
    REQUIRE(store.set_max_pages(1).ok());
    Changes big;
    for (int i = 0; i < 3000; ++i) big.emplace_back(test::random_bytes(rng, 32), random_value(rng));
    auto r = build_trie(store, to_input(big), BuildOptions{});
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::storage_full);
    CHECK(category(r.error().code) == ErrorCategory::storage);

    auto t = store.find_trie("main");
    REQUIRE(t.ok());
    REQUIRE(t->has_value());
    CHECK((*t)->root == built->root);
    auto report = check_trie(store, **t);
    REQUIRE(report.ok());
    CHECK(report->problems.empty());
    expect_file_content(f.path, built->root, before);

    // A smaller update that fits in the pages the file has still works under the cap:
    // one value replaced by another of the same length.
    const Changes small = {{before.begin()->first, bytes(before.begin()->second.size(), 0x77)}};
    auto s = build_trie(store, to_input(small), BuildOptions{});
    REQUIRE(s.ok());
    const Content after_small = applied(before, small);
    CHECK(s->root == root_of(after_small));
    expect_file_content(f.path, s->root, after_small);

    // With room again, the big update goes through on the same connection.
    REQUIRE(store.set_max_pages(1 << 30).ok());
    auto again = build_trie(store, to_input(big), BuildOptions{});
    REQUIRE(again.ok());
    expect_file_content(f.path, again->root, applied(after_small, big));
}

// Trie::put and Trie::remove are atomic on error: with read 1, 2, 3, ... of the operation
// failing in turn, a failed operation leaves the trie as it was (it commits the old root and
// writes and deletes nothing), and the same operation retried on the same trie gives the new
// root and exactly the rows of a build of the new content.
namespace {

using TrieOp = std::pair<bytes, bytes>;  // key, value; an empty value removes

void check_atomic(const Content& content, const TrieOp& op) {
    test::StoredTrie st;
    test::build(st, content);
    Content after = content;
    if (op.second.empty()) {
        after.erase(op.first);
    } else {
        after[op.first] = op.second;
    }
    test::StoredTrie want;
    test::build(want, after);
    CAPTURE(to_hex(op.first));
    CAPTURE(op.second.size());
    for (uint64_t n = 1;; ++n) {
        CAPTURE(n);
        FaultyNodeStore faulty(st.store);
        TrieReader reader(faulty, st.info);
        Trie t = Trie::open(&reader, st.root);
        faulty.fail_at(FaultyNodeStore::Op::read, n, FaultyNodeStore::Mode::once);
        const Status s = t.put(op.first, op.second);
        faulty.disarm();
        if (s.ok()) {
            REQUIRE(n > 1);  // each operation here reads at least the root
            break;
        }
        REQUIRE(s.error().code == Errc::storage_io);
        auto unchanged = t.commit();
        REQUIRE(unchanged.ok());
        CHECK(unchanged->root == st.root);
        CHECK(unchanged->puts.empty());
        CHECK(unchanged->deletes.empty());
        REQUIRE(t.put(op.first, op.second).ok());
        auto batch = t.commit();
        REQUIRE(batch.ok());
        REQUIRE(batch->root == want.root);
        MemoryNodeStore copy = st.store;
        REQUIRE(copy.begin_write().ok());
        REQUIRE(apply_commit(copy, st.info.id, *batch).ok());
        REQUIRE(copy.commit_write().ok());
        std::map<bytes, bytes> rows;
        for (const auto& [key, rlp] : copy.state().rows) {
            if (key.first == st.info.id) rows[key.second] = rlp;
        }
        REQUIRE(rows == want.rows());
    }
}

}  // namespace

TEST_CASE("fault injection: a remove whose sibling read fails leaves the trie as it was") {
    // Two hashed leaves under a branch root: read 1 the root, 2 the removed leaf, 3 the
    // sibling that the branch collapses into.
    const bytes k1 = mpt::test::h("10"), k2 = mpt::test::h("20");
    check_atomic({{k1, bytes(40, 1)}, {k2, bytes(40, 2)}}, {k1, {}});
}

TEST_CASE("fault injection: put and remove are atomic on every failed read, many shapes") {
    std::mt19937_64 rng(mpt::test::seed("trie_atomic"));
    for (int shape = 0; shape < 12; ++shape) {
        CAPTURE(shape);
        Content content;
        const size_t n = shape < 4 ? 2 + shape : 20 + rng() % 200;
        for (size_t i = 0; i < n; ++i) {
            // 0-3: tiny tries; then 32-byte keys (hashed nodes), then short keys over a narrow
            // alphabet, some prefixes of others (embedded nodes, values in branches).
            bytes k = shape % 2 == 0 ? test::random_bytes(rng, 32) : random_key(rng);
            content[k] = shape % 3 == 0 ? bytes(1 + rng() % 3, 7) : random_value(rng);
        }
        std::vector<bytes> keys;
        for (const auto& [k, v] : content) keys.push_back(k);
        for (int i = 0; i < 6; ++i) {
            const bytes& k = keys[rng() % keys.size()];
            check_atomic(content, {k, {}});                 // remove, often collapsing a branch
            check_atomic(content, {k, random_value(rng)});  // overwrite
            bytes longer = k;  // below an existing key: a leaf becomes a branch
            longer.push_back(static_cast<uint8_t>(rng()));
            check_atomic(content, {longer, random_value(rng)});
            if (k.size() > 1) {  // a prefix of an existing key: a value in a branch
                check_atomic(content, {bytes(k.begin(), k.end() - 1), random_value(rng)});
            }
        }
        check_atomic(content, {random_key(rng), {}});                 // an absent key
        check_atomic(content, {random_key(rng), random_value(rng)});  // a new key
    }
}

namespace {

size_t folder_entries(const std::string& path) {
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

}  // namespace

// The spilling sort and the bulk build past it (spill.hpp): the first write to a temporary
// file fails, then the second, ... until the build completes. Each failure is storage_full
// (as a full disk gives), and leaves no temporary file and no trie file behind.
TEST_CASE("fault injection: failed writes of temporary files, in turn, leave nothing behind") {
    std::mt19937_64 rng(test::seed("spill_fault"));
    Changes changes;
    for (size_t i = 0; i < 600; ++i) {
        changes.emplace_back(test::random_bytes(rng, 1 + rng() % 4),
                             i % 9 == 0 ? bytes() : test::random_bytes(rng, 1 + rng() % 30));
    }
    std::string text = "[";
    for (const auto& [k, v] : changes) {
        if (text.size() > 1) text += ",";
        text += "[\"" + to_hex(k) + "\"," + (v.empty() ? "null" : "\"" + to_hex(v) + "\"") + "]";
    }
    text += "]";
    TempFile doc;
    std::ofstream(doc.path, std::ios::binary) << text;
    char tmpl[] = "/tmp/mpt-spill-fault-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    for (const unsigned threads : {1u, 2u}) {
        for (const bool build : {false, true}) {
            size_t failures = 0;
            // On two threads the parts' runs take many more writes: every third fails.
            for (size_t n = 1;; n += threads == 1 ? 1 : 3) {
                INFO((build ? "build" : "root")
                     << " on " << threads << " threads, write " << n << " fails");
                SpillOptions so;
                so.run_bytes = 500;
                so.buffer_bytes = 128;
                so.chunk_bytes = 128;
                so.fan_in = 3;
                so.tmp_dir = dir;
                so.fail_write = n;
                so.direct = n % 2 == 0;  // the buckets' file around the cache, or not
                so.overlap = threads == 2;
                // Runs of a fourth of run_bytes, seven written at once, in a direct file.
                if (n % 4 == 0) so.spread_run_bytes = 125;
                SpillFiles files(so);
                SpillingPairSorter sorter(files);
                TempFile out;
                KvStreamReader stream(mpt::test::text_stream(doc.path, 200, 1 << 20));
                Status s = sort_kv_stream(stream, false, false, sorter);
                if (s.ok() && build) {
                    BuildOptions o;
                    o.threads = threads;
                    auto r = build_new_trie_file_sorted(out.path, sorter, o, files, 2000);
                    if (!r) s = r.error();
                } else if (s.ok()) {
                    auto r = kv_root_sorted(sorter, threads);
                    if (!r) s = r.error();
                }
                struct stat st {};
                CHECK(folder_entries(dir) == 0);
                if (s.ok()) {
                    CHECK(n > 3);
                    break;
                }
                ++failures;
                CHECK(s.error().code == Errc::storage_full);
                CHECK(::stat(out.path.c_str(), &st) != 0);
            }
            CHECK(failures > (build ? 20u : 5u));
        }
    }
    ::rmdir(dir.c_str());
}

namespace {

// n writes of 32-byte keys whose first bytes go round all 256, so that a spilled build on
// threads splits two nibbles down (DeepSplitBuild), in a file of its own.
std::string every_first_byte_document(std::mt19937_64& rng, size_t n) {
    std::string text = "[";
    for (size_t i = 0; i < n; ++i) {
        bytes key = test::random_bytes(rng, 32);
        key[0] = static_cast<uint8_t>(i % 256);
        text += (i == 0 ? "[\"" : ",[\"") + to_hex(key) + "\",\"" +
                to_hex(test::random_bytes(rng, 32)) + "\"]";
    }
    return text + "]";
}

}  // namespace

TEST_CASE("fault injection: a build split two nibbles down fails each temporary write in turn") {
    // Parts whose rows outgrow their share spill them to runs, and a secure build's preimages
    // go to runs of each part: every write of them fails once, and the build ends with
    // storage_full and leaves nothing, never waits for a part that is not coming.
    std::mt19937_64 rng(test::seed("deep_fault"));
    char tmpl[] = "/tmp/mpt-deep-fault-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    for (const bool secure : {false, true}) {
        // The rows outgrow their share from about 2,000 writes, the secure build's preimages go
        // to runs from 1,000 (at 2,000 its case took six times as long).
        TempFile doc;
        std::ofstream(doc.path, std::ios::binary)
            << every_first_byte_document(rng, secure ? 1000 : 2000);
        size_t failures = 0;
        for (size_t n = 1;; n += 7) {
            INFO((secure ? "secure, " : "") << "write " << n << " fails");
            SpillOptions so;
            so.run_bytes = 20000;
            so.buffer_bytes = 256;
            so.fan_in = 4;
            so.tmp_dir = dir;
            so.overlap = true;
            SpillFiles files(so);
            SpillingPairSorter sorter(files);
            KvStreamReader stream(mpt::test::text_stream(doc.path, 4000, 1 << 20));
            REQUIRE(sort_kv_stream(stream, secure, secure, sorter).ok());
            if (!secure) REQUIRE(sorter.bytes_used() == 256);  // the split two nibbles down
            // The sort's writes are done: count from the build's first.
            files.fail_after(n);
            TempFile out;
            BuildOptions o;
            o.secure = secure;
            o.threads = 2;
            auto r = build_new_trie_file_sorted(out.path, sorter, o, files, 3000);
            struct stat st {};
            if (r.ok()) {
                CHECK(n > 7);
                break;
            }
            ++failures;
            CHECK(r.error().code == Errc::storage_full);
            CHECK(::stat(out.path.c_str(), &st) != 0);
            CHECK(folder_entries(dir) == 0);
        }
        CHECK(failures > 10u);
    }
    ::rmdir(dir.c_str());
}
