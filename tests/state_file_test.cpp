#include <doctest/doctest.h>

#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/state_diff.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/ops/state_root.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/store/sqlite_store.hpp>

#include <map>
#include <random>

#include "sqlite_check.hpp"
#include "test_util.hpp"

using namespace mpt;
using mpt::test::why;

namespace {

U256 u256(uint64_t v) {
    U256 out{};
    for (int i = 0; i < 8; ++i) out[31 - i] = static_cast<uint8_t>(v >> (8 * i));
    return out;
}

// A random state: n accounts, some with storage (a few zero slots among them, which are no
// entries), a few with a balance of all 32 bytes.
StateDoc random_state(std::mt19937_64& rng, size_t n) {
    StateDoc doc;
    for (size_t i = 0; i < n; ++i) {
        StateAccount acc;
        Address addr;
        for (auto& x : addr) x = static_cast<uint8_t>(rng());
        acc.address = addr;
        acc.address_hash = keccak256(addr);
        acc.account.nonce = rng() % 3 == 0 ? 0 : rng() % 100000;
        if (rng() % 5 == 0) {
            for (auto& x : acc.account.balance) x = static_cast<uint8_t>(rng() | 0x80);
        } else {
            acc.account.balance = u256(rng() % 1000000);
        }
        if (rng() % 4 == 0) {
            const bytes code = mpt::test::random_bytes(rng, 1 + rng() % 50);
            acc.code = code;
            acc.account.code_hash = keccak256(code);
        }
        const size_t slots = rng() % 3 == 0 ? rng() % 40 : 0;
        for (size_t s = 0; s < slots; ++s) {
            StorageEntry e;
            e.slot = u256(s * 7 + rng() % 7);
            e.key = keccak256(*e.slot);
            e.value = rng() % 10 == 0 ? U256{} : u256(1 + rng() % 1000);
            bool dup = false;
            for (const StorageEntry& o : acc.storage) dup = dup || o.key == e.key;
            if (!dup) acc.storage.push_back(e);
        }
        acc.line = i + 1;
        doc.accounts.push_back(std::move(acc));
    }
    return doc;
}

bool is_zero(const U256& v) {
    return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}

// RLP of a big-endian integer by hand (Yellow Paper appendix B): the bytes without leading
// zeros, as a string.
bytes rlp_integer(bytes_view be) {
    size_t i = 0;
    while (i < be.size() && be[i] == 0) ++i;
    bytes v(be.begin() + static_cast<ptrdiff_t>(i), be.end());
    bytes out;
    if (v.size() == 1 && v[0] < 0x80) return v;
    out.push_back(static_cast<uint8_t>(0x80 + v.size()));  // all here are under 56 bytes
    out.insert(out.end(), v.begin(), v.end());
    return out;
}

// The account RLP, by hand: rlp([nonce, balance, storageRoot, codeHash]).
bytes hand_account(uint64_t nonce, const U256& balance, const Hash256& root, const Hash256& code) {
    uint8_t n[8];
    for (int i = 0; i < 8; ++i) n[i] = static_cast<uint8_t>(nonce >> (8 * (7 - i)));
    bytes payload = rlp_integer(n);
    const bytes bal = rlp_integer(balance);
    payload.insert(payload.end(), bal.begin(), bal.end());
    for (const Hash256* h : {&root, &code}) {
        payload.push_back(0xa0);
        payload.insert(payload.end(), h->begin(), h->end());
    }
    bytes out;
    if (payload.size() < 56) {
        out.push_back(static_cast<uint8_t>(0xc0 + payload.size()));
    } else {
        out.push_back(0xf8);
        out.push_back(static_cast<uint8_t>(payload.size()));
    }
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

// The state root by a second route: an in-memory Trie per storage and over the accounts,
// values encoded by hand, in document order.
Hash256 second_route_root(const StateDoc& doc) {
    Trie accounts;
    for (const StateAccount& acc : doc.accounts) {
        Trie storage;
        for (const StorageEntry& e : acc.storage) {
            if (is_zero(e.value)) continue;
            REQUIRE(storage.put(e.key, rlp_integer(e.value)).ok());
        }
        const Hash256 root = storage.root_hash().value();
        REQUIRE(accounts
                    .put(acc.address_hash, hand_account(acc.account.nonce, acc.account.balance,
                                                        root, acc.account.code_hash))
                    .ok());
    }
    return accounts.root_hash().value();
}

// Checks that every account and slot of doc reads back from view, and nothing else is there.
void check_reads_back(const StateView& view, const StateDoc& doc) {
    size_t slots = 0;
    for (const StateAccount& acc : doc.accounts) {
        auto a = view.account(acc.address_hash);
        REQUIRE_MESSAGE(a.ok(), why(a));
        REQUIRE(a->has_value());
        CHECK((*a)->nonce == acc.account.nonce);
        CHECK((*a)->balance == acc.account.balance);
        CHECK((*a)->code_hash == acc.account.code_hash);
        std::map<Hash256, U256> expected;
        for (const StorageEntry& e : acc.storage) {
            auto v = view.slot(acc.address_hash, **a, e.key);
            REQUIRE_MESSAGE(v.ok(), why(v));
            if (is_zero(e.value)) {
                CHECK(!v->has_value());
            } else {
                REQUIRE(v->has_value());
                CHECK(**v == e.value);
                expected[e.key] = e.value;
            }
        }
        std::map<Hash256, U256> seen;
        REQUIRE(view.for_each_slot(acc.address_hash, **a,
                                   [&](const Hash256& k, const U256& v) {
                                       seen[k] = v;
                                       return true;
                                   })
                    .ok());
        CHECK(seen == expected);
        slots += seen.size();
        CHECK(((*a)->storage_root == kEmptyRoot) == expected.empty());
    }
    size_t n = 0;
    Hash256 last{};
    REQUIRE(view.for_each_account({},
                                  [&](const Hash256& k, const Account&) {
                                      if (n > 0) CHECK(last < k);
                                      last = k;
                                      ++n;
                                      return true;
                                  })
                .ok());
    CHECK(n == doc.accounts.size());
    (void)slots;
}

}  // namespace

TEST_CASE("state file: build, reopen, every account and slot reads back, roots by two routes") {
    std::mt19937_64 rng(mpt::test::seed("state file round trip"));
    for (const size_t n : {0, 1, 2, 17, 300}) {
        const StateDoc doc = random_state(rng, n);
        const Hash256 expected = second_route_root(doc);
        auto root = state_root(doc);
        REQUIRE_MESSAGE(root.ok(), why(root));
        CHECK(to_hex(*root) == to_hex(expected));

        for (const bool whole : {false, true}) {
            mpt::test::TempFile file;
            if (whole) {
                // Written whole: the rows and preimages as b-trees, page by page.
                // Three threads for the storage tries: the same file as one would make.
                StateBuildOptions threaded;
                threaded.threads = 3;
                auto r = build_new_state_file(file.path, doc, threaded);
                REQUIRE_MESSAGE(r.ok(), why(r));
                REQUIRE(r->has_value());
                CHECK(to_hex((*r)->root) == to_hex(expected));
                sqlite3* db = nullptr;
                REQUIRE(sqlite3_open_v2(file.path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
                        SQLITE_OK);
                CHECK(mpt::test::integrity_verdict(db) == "ok\n");
                sqlite3_close(db);
                // A second build into the same path takes the store's way.
                CHECK(!build_new_state_file(file.path, doc, {}).value().has_value());
            } else {
                auto store = SqliteNodeStore::open(file.path, SqliteNodeStore::Mode::create);
                REQUIRE(store.ok());
                auto r = build_state(**store, doc, {});
                REQUIRE_MESSAGE(r.ok(), why(r));
                CHECK(to_hex(r->root) == to_hex(expected));
                CHECK(r->accounts == n);
            }
            auto store = SqliteNodeStore::open(file.path, SqliteNodeStore::Mode::read_only);
            REQUIRE(store.ok());
            REQUIRE((*store)->begin_read().ok());
            auto view = StateView::open(**store);
            REQUIRE_MESSAGE(view.ok(), why(view));
            CHECK(to_hex(view->accounts().root) == to_hex(expected));
            check_reads_back(*view, doc);
            // Every trie of the file checks from its root.
            auto tries = (*store)->list_tries();
            REQUIRE(tries.ok());
            for (const TrieInfo& t : *tries) {
                auto c = check_trie(**store, t);
                REQUIRE(c.ok());
                CHECK_MESSAGE(c->problems.empty(), t.name);
            }
            for (const StateAccount& acc : doc.accounts) {
                auto p = (*store)->get_preimage(acc.address_hash);
                REQUIRE(p.ok());
                CHECK(p->has_value());
            }
            (*store)->end_read();
        }
    }
}

TEST_CASE("state file: the empty state, a known root, and refused documents") {
    StateDoc empty;
    CHECK(state_root(empty).value() == kEmptyRoot);

    // One account with a balance of 1 wei and nothing else (keccak of the address is the
    // key): checked against the hand encoding.
    StateDoc one;
    StateAccount acc;
    acc.address = Address{};
    acc.address_hash = keccak256(*acc.address);
    acc.account.balance = u256(1);
    one.accounts.push_back(acc);
    CHECK(state_root(one).value() == second_route_root(one));

    StateDoc twice = one;
    twice.accounts.push_back(acc);
    auto r = state_root(twice);
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::bad_input);

    StateDoc slot_twice = one;
    StorageEntry e;
    e.key = keccak256(u256(1));
    e.value = u256(5);
    slot_twice.accounts[0].storage = {e, e};
    r = state_root(slot_twice);
    REQUIRE(!r.ok());
    CHECK(r.error().code == Errc::bad_input);

    MemoryNodeStore store;
    REQUIRE(build_state(store, one, {}).ok());
    // A second build into the same store needs --replace.
    auto again = build_state(store, one, {});
    REQUIRE(!again.ok());
    StateBuildOptions replace;
    replace.replace = true;
    REQUIRE(build_state(store, slot_twice, replace).ok() == false);
    StateDoc with_slot = one;
    with_slot.accounts[0].storage = {e};
    auto rr = build_state(store, with_slot, replace);
    REQUIRE_MESSAGE(rr.ok(), why(rr));
    CHECK(rr->root == state_root(with_slot).value());
    CHECK(rr->storage_tries == 1);
}

namespace {

struct Seen {
    std::vector<std::string> lines;
};

std::string kind_sign(DiffEntry::Kind k) {
    return k == DiffEntry::Kind::added ? "+" : k == DiffEntry::Kind::removed ? "-" : "~";
}

Result<DiffStats> diff_docs(MemoryNodeStore& sa, MemoryNodeStore& sb, Seen& seen) {
    auto a = StateView::open(sa);
    auto b = StateView::open(sb);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    StateDiffVisitor v;
    v.account = [&](const AccountChange& c) {
        seen.lines.push_back(kind_sign(c.kind) + " " + to_hex(c.address_hash));
        return true;
    };
    v.slot = [&](const SlotChange& c) {
        seen.lines.push_back(kind_sign(c.kind) + " " + to_hex(c.address_hash) + " " +
                             to_hex(c.slot_hash));
        return true;
    };
    return diff_states(*a, *b, v);
}

}  // namespace

TEST_CASE("state diff: accounts and slots added, removed and changed, equal states read nothing") {
    std::mt19937_64 rng(mpt::test::seed("state diff"));
    StateDoc a = random_state(rng, 400);
    // Make sure some accounts have storage to change.
    for (size_t i = 0; i < 20; ++i) {
        StorageEntry e;
        e.slot = u256(1000 + i);
        e.key = keccak256(*e.slot);
        e.value = u256(i + 1);
        a.accounts[i].storage.push_back(e);
    }
    StateDoc b = a;
    // The expected changes, by a second route: what was done to b.
    std::map<std::string, std::string> expected;  // line -> "" (a set in trie order)
    b.accounts[0].account.balance = u256(123456789);
    expected["~ " + to_hex(b.accounts[0].address_hash)];
    b.accounts[1].storage.back().value = u256(777);  // a slot changed
    expected["~ " + to_hex(b.accounts[1].address_hash)];
    expected["~ " + to_hex(b.accounts[1].address_hash) + " " +
             to_hex(b.accounts[1].storage.back().key)];
    b.accounts[2].storage.back().value = U256{};  // a slot removed
    expected["~ " + to_hex(b.accounts[2].address_hash)];
    expected["- " + to_hex(b.accounts[2].address_hash) + " " +
             to_hex(b.accounts[2].storage.back().key)];
    // An account removed, with its slots.
    const StateAccount gone = b.accounts[3];
    b.accounts.erase(b.accounts.begin() + 3);
    expected["- " + to_hex(gone.address_hash)];
    for (const StorageEntry& e : gone.storage) {
        if (!is_zero(e.value)) expected["- " + to_hex(gone.address_hash) + " " + to_hex(e.key)];
    }
    // An account added.
    StateAccount fresh;
    fresh.address = Address{1, 2, 3};
    fresh.address_hash = keccak256(*fresh.address);
    fresh.account.nonce = 1;
    b.accounts.push_back(fresh);
    expected["+ " + to_hex(fresh.address_hash)];

    MemoryNodeStore sa, sb, sa2;
    REQUIRE(build_state(sa, a, {}).ok());
    REQUIRE(build_state(sa2, a, {}).ok());
    REQUIRE(build_state(sb, b, {}).ok());

    Seen seen;
    auto s = diff_docs(sa, sb, seen);
    REQUIRE_MESSAGE(s.ok(), why(s));
    // Trie order: account lines sort by hash, then the slot lines of that account.
    std::vector<std::string> want;
    for (const auto& [line, _] : expected) want.push_back(line.substr(2) + "\t" + line);
    std::sort(want.begin(), want.end());
    std::vector<std::string> got;
    for (const std::string& line : seen.lines) got.push_back(line.substr(2) + "\t" + line);
    CHECK(got == want);
    if (got != want) {
        for (auto& g : got) MESSAGE("got " << g);
        for (auto& w : want) MESSAGE("want " << w);
    }
    CHECK(s->nodes_read_a > 0);

    Seen none;
    auto same = diff_docs(sa, sa2, none);
    REQUIRE(same.ok());
    CHECK(none.lines.empty());
    CHECK(same->nodes_read_a == 0);  // equal roots: nothing is read
    CHECK(same->nodes_read_b == 0);

    // A few changes in a large state read a few paths, not the state.
    CHECK(s->nodes_read_a < 200);
}

TEST_CASE("preimages: a state build and a secure k/v build record them, --no-preimages does not") {
    std::mt19937_64 rng(mpt::test::seed("state preimages"));
    const StateDoc doc = random_state(rng, 50);
    MemoryNodeStore store;
    REQUIRE(build_state(store, doc, {}).ok());
    for (const StateAccount& acc : doc.accounts) {
        auto p = store.get_preimage(acc.address_hash);
        REQUIRE(p.ok());
        REQUIRE(p->has_value());
        CHECK(**p == bytes(acc.address->begin(), acc.address->end()));
        for (const StorageEntry& e : acc.storage) {
            if (is_zero(e.value)) continue;
            auto s = store.get_preimage(e.key);
            REQUIRE(s.ok());
            REQUIRE(s->has_value());
            CHECK(**s == bytes(e.slot->begin(), e.slot->end()));
        }
    }
    MemoryNodeStore bare;
    StateBuildOptions none;
    none.preimages = false;
    REQUIRE(build_state(bare, doc, none).ok());
    CHECK(!bare.get_preimage(doc.accounts[0].address_hash).value().has_value());

    // A secure k/v build, written whole (a new file) and through the store (an update).
    const KvInput input = parse_kv(R"({"dog": "puppy", "doe": "reindeer", "gone": null})").value();
    for (const bool whole : {true, false}) {
        mpt::test::TempFile file;
        BuildOptions o;
        o.secure = true;
        if (whole) {
            auto r = build_new_trie_file(file.path, input, o);
            REQUIRE_MESSAGE(r.ok(), why(r));
            REQUIRE(r->has_value());
        } else {
            auto s = SqliteNodeStore::open(file.path, SqliteNodeStore::Mode::create);
            REQUIRE(s.ok());
            REQUIRE(build_trie(**s, parse_kv(R"({"cat": "meow"})").value(), o).ok());
            REQUIRE(build_trie(**s, input, o).ok());  // an update of the existing trie
        }
        auto s = SqliteNodeStore::open(file.path, SqliteNodeStore::Mode::read_only);
        REQUIRE(s.ok());
        for (const char* key : {"dog", "doe"}) {
            auto p = (*s)->get_preimage(keccak256(mpt::test::b(key)));
            REQUIRE(p.ok());
            REQUIRE_MESSAGE(p->has_value(), key);
            CHECK(**p == mpt::test::b(key));
        }
        CHECK(!(*s)->get_preimage(keccak256(mpt::test::b("gone"))).value().has_value());
    }
    mpt::test::TempFile file;
    BuildOptions o;
    o.secure = true;
    o.preimages = false;
    REQUIRE(build_new_trie_file(file.path, input, o).value().has_value());
    auto s = SqliteNodeStore::open(file.path, SqliteNodeStore::Mode::read_only);
    CHECK(!(*s)->get_preimage(keccak256(mpt::test::b("dog"))).value().has_value());
}

TEST_CASE("verify_state reads what the state diff trusts: damage in an unchanged storage trie") {
    std::mt19937_64 rng(mpt::test::seed("verify state"));
    StateDoc a = random_state(rng, 50);
    for (size_t i = 0; i < 5; ++i) {
        for (uint64_t s = 0; s < 40; ++s) {
            StorageEntry e;
            e.slot = u256(900000000 + 1000 * i + s);
            e.key = keccak256(*e.slot);
            e.value = u256(s + 1);
            a.accounts[i].storage.push_back(e);
        }
    }
    MemoryNodeStore sa, sa2;
    auto built = build_state(sa, a, {});
    REQUIRE_MESSAGE(built.ok(), why(built));
    REQUIRE(build_state(sa2, a, {}).ok());
    {
        auto view = StateView::open(sa);
        REQUIRE(view.ok());
        CHECK(verify_state(*view).ok());
    }
    // A row of a storage trie (not the account trie) given another row's RLP.
    auto main_id = sa.find_trie("main").value().value().id;
    std::pair<uint64_t, bytes> victim;
    bytes other;
    for (const auto& [key, rlp] : sa.state().rows) {
        if (key.first != main_id && !key.second.empty() && victim.second.empty()) {
            victim = {key.first, key.second};
        } else if (key.first == main_id && !key.second.empty()) {
            other = rlp;
        }
    }
    REQUIRE(!victim.second.empty());
    REQUIRE(!other.empty());
    REQUIRE(sa.begin_write().ok());
    REQUIRE(sa.put(victim.first, victim.second, other).ok());
    REQUIRE(sa.commit_write().ok());
    // The diff against an undamaged copy trusts the equal roots: identical, nothing read.
    Seen none;
    auto same = diff_docs(sa, sa2, none);
    REQUIRE(same.ok());
    CHECK(none.lines.empty());
    auto view = StateView::open(sa);
    REQUIRE(view.ok());
    const Status s = verify_state(*view);
    REQUIRE(!s.ok());
    CHECK(s.error().code == Errc::storage_hash_mismatch);
    CHECK(s.error().path == path_string(victim.second));
}
