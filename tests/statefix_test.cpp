// The state build's row order and tries table, and the state diff of a side that gives
// storage roots without their slots.
#include <doctest/doctest.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/path_order.hpp>
#include <mpt/ops/state_diff.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/store/detail/sqlite_stmt.hpp>
#include <mpt/store/detail/tries_table.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>

#include "test_util.hpp"

using namespace mpt;
using mpt::test::why;

namespace {

struct KeptRows : NodeSink {
    std::vector<bytes> paths;
    void put(bytes_view path, bytes_view) override { paths.emplace_back(path.begin(), path.end()); }
};

// The bytes of an in-memory trie file whose tries table got rows by f.
template <typename F>
bytes tries_file(F&& f) {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            nullptr) == SQLITE_OK);
    const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
    const std::string where = "memory";
    REQUIRE(sqlite3_exec(raw, ("BEGIN;" + sqlite::schema_sql()).c_str(), nullptr, nullptr,
                         nullptr) == SQLITE_OK);
    sqlite::TriesTable table(raw, where, sqlite::kSchemaVersion);
    f(table);
    REQUIRE(sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_int64 size = 0;
    unsigned char* data = sqlite3_serialize(raw, "main", &size, 0);
    REQUIRE(data != nullptr);
    bytes out(data, data + size);
    sqlite3_free(data);
    return out;
}

Hash256 hash_of(uint64_t i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (56 - 8 * b));
    return keccak256(bytes_view(be, 8));
}

}  // namespace

TEST_CASE("path order: the builder's rows in path order, as a sort puts them") {
    std::mt19937_64 rng(mpt::test::seed("path order"));
    for (const size_t n : {0, 1, 2, 3, 17, 1000, 5000}) {
        KeptRows rows;
        StackTrie st(&rows);
        std::vector<bytes> keys;
        for (size_t i = 0; i < n; ++i) {
            // Short keys too, so that rows embed and paths end inside a branch.
            keys.push_back(mpt::test::random_bytes(rng, 1 + rng() % (i % 3 == 0 ? 3 : 32)));
        }
        std::sort(keys.begin(), keys.end(), bytes_less);
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
        for (const bytes& k : keys) REQUIRE(st.add(k, bytes(40, 7)).ok());
        static_cast<void>(st.finish());
        std::vector<uint32_t> order;
        append_path_order(
            static_cast<uint32_t>(rows.paths.size()),
            [&](uint32_t i) { return bytes_view(rows.paths[i]); }, order);
        REQUIRE(order.size() == rows.paths.size());
        std::vector<bytes> got;
        for (const uint32_t i : order) got.push_back(rows.paths[i]);
        std::vector<bytes> want = rows.paths;
        std::sort(want.begin(), want.end(), bytes_less);
        CHECK(got == want);
        // Any stretch of them too, as a build past its memory budget puts each in order.
        for (int t = 0; t < 20 && !rows.paths.empty(); ++t) {
            const size_t first = rng() % rows.paths.size();
            const size_t end = first + 1 + rng() % (rows.paths.size() - first);
            order.clear();
            append_path_order(
                static_cast<uint32_t>(end - first),
                [&](uint32_t i) { return bytes_view(rows.paths[first + i]); }, order);
            REQUIRE(order.size() == end - first);
            got.clear();
            for (const uint32_t i : order) got.push_back(rows.paths[first + i]);
            want.assign(rows.paths.begin() + static_cast<ptrdiff_t>(first),
                        rows.paths.begin() + static_cast<ptrdiff_t>(end));
            std::sort(want.begin(), want.end(), bytes_less);
            CHECK(got == want);
        }
    }
}

TEST_CASE("tries table: insert_all makes the file insert and set_root make") {
    std::vector<std::string> names = {"main"};
    for (uint64_t i = 0; i < 300; ++i) names.push_back(storage_trie_name(hash_of(i)));
    std::vector<sqlite::TriesTable::NewTrie> tries;
    for (size_t i = 0; i < names.size(); ++i) {
        tries.push_back({names[i], i == 0 ? TrieKind::state : TrieKind::secure, hash_of(i + 7)});
    }
    const bytes one_by_one = tries_file([&](sqlite::TriesTable& t) {
        for (const auto& n : tries) {
            auto id = t.insert(n.name, n.kind);
            REQUIRE(id.ok());
            REQUIRE(t.set_root(*id, n.root).ok());
        }
    });
    const bytes all = tries_file([&](sqlite::TriesTable& t) {
        auto ids = t.insert_all(tries);
        REQUIRE_MESSAGE(ids.ok(), why(ids));
        REQUIRE(ids->size() == tries.size());
        for (size_t i = 0; i < ids->size(); ++i) CHECK((*ids)[i] == static_cast<TrieId>(i + 1));
        auto back = t.find(names[5]);
        REQUIRE(back.ok());
        REQUIRE(back->has_value());
        CHECK((*back)->root == tries[5].root);
        CHECK((*back)->kind == TrieKind::secure);
    });
    CHECK(one_by_one == all);
    // A name given twice is refused, as insert refuses it.
    tries.push_back(tries[3]);
    static_cast<void>(tries_file([&](sqlite::TriesTable& t) {
        auto ids = t.insert_all(tries);
        REQUIRE(!ids.ok());
        CHECK(ids.error().code == Errc::bad_input);
    }));
}

namespace {

// A state of three accounts, two with slots; with roots_only, the accounts give their
// storage roots and no slots, as a dump made without storage does.
StateDoc small_state(bool roots_only, uint64_t changed_value) {
    StateDoc doc;
    for (uint64_t i = 0; i < 3; ++i) {
        StateAccount a;
        a.address_hash = hash_of(100 + i);
        a.account.nonce = i;
        if (i != 2) {
            for (uint64_t s = 0; s < 4; ++s) {
                StorageEntry e;
                e.key = hash_of(1000 + s);
                e.value = U256{};
                e.value[31] = static_cast<uint8_t>(s + 1 + (i == 0 && s == 2 ? changed_value : 0));
                a.storage.push_back(e);
            }
            std::sort(a.storage.begin(), a.storage.end(),
                      [](const StorageEntry& x, const StorageEntry& y) {
                          return hash_less(x.key, y.key);
                      });
        }
        doc.accounts.push_back(std::move(a));
    }
    if (roots_only) {
        for (StateAccount& a : doc.accounts) {
            MemoryNodeStore scratch;
            StateDoc one;
            one.accounts.push_back(a);
            auto r = build_state(scratch, one, {});
            REQUIRE(r.ok());
            auto view = StateView::open(scratch);
            REQUIRE(view.ok());
            auto acc = view->account(a.address_hash);
            REQUIRE(acc.ok());
            REQUIRE(acc->has_value());
            if ((*acc)->storage_root != kEmptyRoot) a.claimed_storage_root = (*acc)->storage_root;
            a.storage.clear();
        }
    }
    return doc;
}

struct DiffLines {
    std::vector<std::string> lines;
    Status status;
};

DiffLines diff_of(const StateDoc& a, const StateDoc& b, bool with_unknown) {
    MemoryNodeStore sa, sb;
    REQUIRE(build_state(sa, a, {}).ok());
    REQUIRE(build_state(sb, b, {}).ok());
    auto va = StateView::open(sa);
    auto vb = StateView::open(sb);
    REQUIRE(va.ok());
    REQUIRE(vb.ok());
    DiffLines out;
    StateDiffVisitor v;
    v.account = [&](const AccountChange& c) {
        out.lines.push_back("account " + to_hex(c.address_hash));
        return true;
    };
    v.slot = [&](const SlotChange& c) {
        out.lines.push_back("slot " + to_hex(c.slot_hash));
        return true;
    };
    if (with_unknown) {
        v.slots_unknown = [&](const SlotsUnknown& u) {
            out.lines.push_back(std::string("unknown ") + to_hex(u.address_hash) +
                                (u.missing_a ? " A" : "") + (u.missing_b ? " B" : ""));
            return true;
        };
    }
    auto r = diff_states(*va, *vb, v);
    out.status = r.ok() ? Status() : Status(r.error());
    return out;
}

}  // namespace

TEST_CASE("state diff: a side with storage roots and no slots compares its roots, not slots") {
    const std::string acc0 = to_hex(hash_of(100));
    const StateDoc full = small_state(false, 0);
    const StateDoc full_changed = small_state(false, 9);
    const StateDoc roots = small_state(true, 0);
    const StateDoc roots_changed = small_state(true, 9);
    // Equal roots: nothing differs, nothing is missing.
    for (const auto& [a, b] : {std::pair(&full, &roots), std::pair(&roots, &full)}) {
        const DiffLines d = diff_of(*a, *b, true);
        REQUIRE_MESSAGE(d.status.ok(), why(d.status));
        CHECK(d.lines.empty());
    }
    // A changed root against a side without slots: the account, then the side named.
    DiffLines d = diff_of(full, roots_changed, true);
    REQUIRE_MESSAGE(d.status.ok(), why(d.status));
    CHECK(d.lines == std::vector<std::string>{"account " + acc0, "unknown " + acc0 + " B"});
    d = diff_of(roots, full_changed, true);
    REQUIRE_MESSAGE(d.status.ok(), why(d.status));
    CHECK(d.lines == std::vector<std::string>{"account " + acc0, "unknown " + acc0 + " A"});
    d = diff_of(roots, roots_changed, true);
    REQUIRE_MESSAGE(d.status.ok(), why(d.status));
    CHECK(d.lines == std::vector<std::string>{"account " + acc0, "unknown " + acc0 + " A B"});
    // Both with slots: the slot itself.
    d = diff_of(full, full_changed, true);
    REQUIRE_MESSAGE(d.status.ok(), why(d.status));
    REQUIRE(d.lines.size() == 2);
    CHECK(d.lines[1] == "slot " + to_hex(hash_of(1002)));
    // Without a slots_unknown callback the missing slots are an error, never a list.
    d = diff_of(full, roots_changed, false);
    REQUIRE(!d.status.ok());
    CHECK(d.status.error().code == Errc::storage_missing_node);
    CHECK(d.lines == std::vector<std::string>{"account " + acc0});
}

TEST_CASE("state file whole: the account trie split on threads makes the file one thread makes") {
    // Enough accounts for the account trie to be split under its top branch.
    StateDoc doc;
    for (uint64_t i = 0; i < 6000; ++i) {
        StateAccount a;
        Address addr{};
        const Hash256 h = hash_of(i);
        std::copy(h.begin() + 12, h.end(), addr.begin());
        a.address = addr;
        a.address_hash = keccak256(addr);
        a.account.nonce = i % 5;
        a.account.balance[31] = static_cast<uint8_t>(i);
        if (i % 7 == 0) {
            for (uint64_t s = 0; s < 3; ++s) {
                StorageEntry e;
                U256 slot{};
                slot[31] = static_cast<uint8_t>(s);
                slot[0] = static_cast<uint8_t>(i % 2);  // large slots and small ones
                e.slot = slot;
                e.key = keccak256(slot);
                e.value[31] = static_cast<uint8_t>(s + 1);
                a.storage.push_back(e);
            }
        }
        doc.accounts.push_back(std::move(a));
    }
    bytes files[2];
    Hash256 roots[2];
    for (const unsigned threads : {1u, 3u}) {
        mpt::test::TempFile file;
        StateBuildOptions b;
        b.threads = threads;
        size_t progress_calls = 0;
        b.progress = [&](size_t done, size_t all) {
            CHECK(done <= all);
            ++progress_calls;
        };
        auto r = build_new_state_file(file.path, doc, b);
        REQUIRE_MESSAGE(r.ok(), why(r));
        REQUIRE(r->has_value());
        CHECK((*r)->accounts == doc.accounts.size());
        CHECK((*r)->preimages == doc.accounts.size() + 6);  // addresses, 6 distinct slots
        roots[threads == 1 ? 0 : 1] = (*r)->root;
        std::FILE* f = std::fopen(file.path.c_str(), "rb");
        REQUIRE(f != nullptr);
        bytes& out = files[threads == 1 ? 0 : 1];
        uint8_t buf[65536];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
        std::fclose(f);
        auto store = SqliteNodeStore::open(file.path, SqliteNodeStore::Mode::read_only);
        REQUIRE(store.ok());
        REQUIRE((*store)->begin_read().ok());
        auto view = StateView::open(**store);
        REQUIRE(view.ok());
        size_t seen = 0;
        REQUIRE(view->for_each_account({},
                                       [&](const Hash256&, const Account&) {
                                           ++seen;
                                           return true;
                                       })
                    .ok());
        CHECK(seen == doc.accounts.size());
    }
    CHECK(roots[0] == roots[1]);
    CHECK(files[0].size() == files[1].size());
    CHECK(files[0] == files[1]);
}
