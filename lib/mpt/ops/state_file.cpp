#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/ops/trie_file.hpp>
#include <mpt/trie/stack_trie.hpp>

#include <algorithm>
#include <map>
#include <numeric>

namespace mpt {
namespace {

constexpr TrieKind kAccountsKind = TrieKind::state;
constexpr TrieKind kStorageKind = TrieKind::secure;

// Hands the rows a builder hashes to the store in batches (put_rows writes several per
// statement); keeps the first error.
class BatchSink : public NodeSink {
public:
    static constexpr size_t kBatchRows = 8192;

    explicit BatchSink(NodeStore& store) : store_(store) {}

    // Rows from now on belong to trie.
    void start(TrieId trie) {
        flush();
        trie_ = trie;
    }
    void put(bytes_view path, bytes_view rlp) override {
        ++rows_;
        batch_.push_back(path, rlp);
        if (batch_.size() >= kBatchRows) flush();
    }
    Status finish() {
        flush();
        return status_;
    }
    size_t rows() const noexcept { return rows_; }

private:
    void flush() {
        if (batch_.empty()) return;
        order_.clear();
        for (const RowList::Row r : batch_) order_.push_back(r);
        if (status_.ok()) status_ = store_.put_rows(trie_, order_);
        batch_ = RowList();
    }

    NodeStore& store_;
    TrieId trie_ = 0;
    RowList batch_;
    std::vector<RowList::Row> order_;
    Status status_;
    size_t rows_ = 0;
};

}  // namespace

Result<std::vector<const StorageEntry*>> sorted_state_slots(const StateAccount& acc) {
    std::vector<const StorageEntry*> slots;
    slots.reserve(acc.storage.size());
    for (const StorageEntry& e : acc.storage) {
        if (std::any_of(e.value.begin(), e.value.end(), [](uint8_t b) { return b != 0; })) {
            slots.push_back(&e);
        }
    }
    // The readers give storage sorted already.
    const auto by_key = [](const StorageEntry* x, const StorageEntry* y) {
        return hash_less(x->key, y->key);
    };
    if (!std::is_sorted(slots.begin(), slots.end(), by_key)) {
        std::sort(slots.begin(), slots.end(), by_key);
    }
    for (size_t i = 1; i < slots.size(); ++i) {
        if (slots[i]->key == slots[i - 1]->key) {
            return {Errc::bad_input, "account " + to_hex(acc.address_hash) + " (line " +
                                         std::to_string(acc.line) + "): slot " +
                                         to_hex(slots[i]->key) + " given twice"};
        }
    }
    return slots;
}

Result<std::vector<const StateAccount*>> sorted_state_accounts(const StateDoc& doc) {
    std::vector<const StateAccount*> order(doc.accounts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = &doc.accounts[i];
    std::sort(order.begin(), order.end(), [](const StateAccount* x, const StateAccount* y) {
        return x->address_hash < y->address_hash;
    });
    for (size_t i = 1; i < order.size(); ++i) {
        if (order[i]->address_hash == order[i - 1]->address_hash) {
            return {Errc::bad_input, "account " + to_hex(order[i]->address_hash) +
                                         " given twice (lines " +
                                         std::to_string(order[i - 1]->line) + " and " +
                                         std::to_string(order[i]->line) + ")"};
        }
    }
    return order;
}

namespace {

// Hashes the storage of one account (its sorted non-zero slots) with st, rows to st's sink.
Result<Hash256> storage_root_of(StackTrie& st, const std::vector<const StorageEntry*>& slots) {
    bytes value;
    for (const StorageEntry* e : slots) {
        value.clear();
        encode_storage_value(value, e->value);
        MPT_RETURN_IF_ERROR(st.add(e->key, value));
    }
    return st.finish();
}

Status check_replace(NodeStore& store, const StateBuildOptions& o, StateBuildResult& result,
                     std::optional<TrieInfo>& main) {
    MPT_TRY(main, store.find_trie("main"));
    if (!main) return {};
    if (!o.replace) {
        return {Errc::bad_input,
                "the file holds a trie named main already: --replace rebuilds it as this state"};
    }
    if (main->kind != kAccountsKind) {
        return {Errc::trie_kind_mismatch, "--replace keeps the trie's kind: trie main is " +
                                              std::string(trie_kind_name(main->kind))};
    }
    // The old storage tries go empty; those of the new state are written again below.
    MPT_TRY(const std::vector<TrieInfo> tries, store.list_tries());
    for (const TrieInfo& t : tries) {
        if (t.id != main->id && t.kind != kStorageKind) continue;
        if (t.id != main->id && (t.name.size() != 66 || !t.name.starts_with("0x"))) continue;
        MPT_TRY(const size_t erased, store.erase_subtree(t.id, {}));
        static_cast<void>(erased);
        MPT_RETURN_IF_ERROR(store.set_root(t.id, kEmptyRoot));
    }
    static_cast<void>(result);
    return {};
}

// The storage trie of the account of address_hash, emptied if the file has it, else made.
Result<TrieId> empty_storage_trie(NodeStore& store, const Hash256& address_hash) {
    const std::string name = storage_trie_name(address_hash);
    MPT_TRY(std::optional<TrieInfo> existing, store.find_trie(name));
    if (!existing) return store.create_trie(name, kStorageKind);
    if (existing->kind != kStorageKind) {
        return Error{
            Errc::trie_kind_mismatch,
            "trie " + name + " is " + std::string(trie_kind_name(existing->kind)) + ", not secure"};
    }
    MPT_TRY(const size_t erased, store.erase_subtree(existing->id, {}));
    static_cast<void>(erased);
    return existing->id;
}

Result<StateBuildResult> build_in_write(NodeStore& store, const StateDoc& doc,
                                        const StateBuildOptions& o) {
    StateBuildResult result;
    std::optional<TrieInfo> main;
    MPT_RETURN_IF_ERROR(check_replace(store, o, result, main));
    MPT_TRY(const std::vector<const StateAccount*> order, sorted_state_accounts(doc));

    TrieId main_id;
    if (main) {
        main_id = main->id;
    } else {
        MPT_TRY(main_id, store.create_trie("main", kAccountsKind));
    }
    BatchSink storage_sink(store);
    BatchSink account_sink(store);
    account_sink.start(main_id);
    StackTrie storage(&storage_sink);
    StackTrie accounts(&account_sink);
    std::vector<std::pair<Hash256, bytes>> preimages;
    std::vector<Code> codes;
    bytes value;
    for (size_t i = 0; i < order.size(); ++i) {
        const StateAccount& acc = *order[i];
        if (!acc.code.empty()) codes.emplace_back(acc.account.code_hash, acc.code);
        Account a = acc.account;
        MPT_TRY(const std::vector<const StorageEntry*> slots, sorted_state_slots(acc));
        // A dump made without storage gives the root alone (state_root.hpp's rule): the
        // account keeps it, and the file has no storage trie for it.
        a.storage_root = acc.storage.empty() && acc.claimed_storage_root ? *acc.claimed_storage_root
                                                                         : kEmptyRoot;
        if (!slots.empty()) {
            MPT_TRY(const TrieId id, empty_storage_trie(store, acc.address_hash));
            storage_sink.start(id);
            MPT_TRY(a.storage_root, storage_root_of(storage, slots));
            MPT_RETURN_IF_ERROR(store.set_root(id, a.storage_root));
            ++result.storage_tries;
            result.slots += slots.size();
            if (o.preimages) {
                for (const StorageEntry* e : slots) {
                    if (e->slot)
                        preimages.emplace_back(e->key, bytes(e->slot->begin(), e->slot->end()));
                }
            }
        }
        value.clear();
        encode_account(value, a);
        MPT_RETURN_IF_ERROR(accounts.add(acc.address_hash, value));
        if (o.preimages && acc.address) {
            preimages.emplace_back(acc.address_hash,
                                   bytes(acc.address->begin(), acc.address->end()));
        }
        if (o.progress && (i + 1) % 65536 == 0) o.progress(i + 1, order.size());
    }
    result.root = accounts.finish();
    MPT_RETURN_IF_ERROR(storage_sink.finish());
    MPT_RETURN_IF_ERROR(account_sink.finish());
    MPT_RETURN_IF_ERROR(store.set_root(main_id, result.root));
    if (!preimages.empty()) {
        std::sort(preimages.begin(), preimages.end());
        std::vector<Preimage> items;
        items.reserve(preimages.size());
        for (const auto& [h, p] : preimages) items.emplace_back(h, p);
        MPT_RETURN_IF_ERROR(store.put_preimages(items));
        result.preimages = items.size();
    }
    if (!codes.empty()) {
        sort_codes(codes);
        MPT_RETURN_IF_ERROR(store.put_codes(codes));
        result.codes = codes.size();
    }
    result.accounts = order.size();
    result.rows_written = storage_sink.rows() + account_sink.rows();
    return result;
}

}  // namespace

std::string storage_trie_name(const Hash256& address_hash) { return to_hex(address_hash); }

Hash256 hash_from_view(bytes_view v) noexcept {
    MPT_ASSERT(v.size() == 32);
    Hash256 h;
    std::copy(v.begin(), v.end(), h.begin());
    return h;
}

Result<StateBuildResult> build_state(NodeStore& store, const StateDoc& doc,
                                     const StateBuildOptions& o) {
    return in_one_write(store, [&](NodeStore& s) { return build_in_write(s, doc, o); });
}

Result<StateView> StateView::open(NodeStore& store, std::string_view accounts) {
    MPT_TRY(std::optional<TrieInfo> t, store.find_trie(accounts));
    if (!t) return no_such_trie_error(store, accounts);
    if (t->kind != kAccountsKind) {
        return {Errc::trie_kind_mismatch,
                "trie " + t->name + " is " + std::string(trie_kind_name(t->kind)) +
                    ", not an account trie (build one with mpt build --state)"};
    }
    return StateView(store, std::move(*t));
}

Result<std::optional<Account>> StateView::account(const Hash256& address_hash) const {
    TrieReader reader(*store_, accounts_);
    const Trie trie = Trie::open(&reader, accounts_.root);
    bytes value;
    MPT_TRY(const bool found, trie.get(address_hash, value));
    if (!found) return std::optional<Account>{};
    auto a = decode_account(value);
    if (!a) {
        return {Errc::storage_bad_node, "trie " + accounts_.name + ", account " +
                                            to_hex(address_hash) + ": " + a.error().message()};
    }
    return std::optional<Account>(*a);
}

Result<std::optional<TrieInfo>> StateView::storage_trie(const Hash256& address_hash,
                                                        const Account& a) const {
    if (a.storage_root == kEmptyRoot) return std::optional<TrieInfo>{};
    const std::string name = storage_trie_name(address_hash);
    MPT_TRY(std::optional<TrieInfo> t, store_->find_trie(name));
    if (!t) {
        return {Errc::storage_missing_node, "account " + to_hex(address_hash) +
                                                " has storage root " + to_hex(a.storage_root) +
                                                " but the file has no trie " + name};
    }
    // The account trie, checked from its root, says what the storage is; the trie's rows
    // are read against that root.
    t->root = a.storage_root;
    return t;
}

Result<StateView::StorageLookup> StateView::find_storage_trie(const Hash256& address_hash,
                                                              const Account& a) const {
    StorageLookup out;
    if (a.storage_root == kEmptyRoot) return out;
    MPT_TRY(std::optional<TrieInfo> t, store_->find_trie(storage_trie_name(address_hash)));
    if (!t) {
        out.absent = true;
        return out;
    }
    t->root = a.storage_root;
    out.trie = std::move(t);
    return out;
}

Result<std::optional<U256>> StateView::slot(const Hash256& address_hash, const Account& a,
                                            const Hash256& slot_hash) const {
    MPT_TRY(const std::optional<TrieInfo> t, storage_trie(address_hash, a));
    if (!t) return std::optional<U256>{};
    TrieReader reader(*store_, *t);
    const Trie trie = Trie::open(&reader, t->root);
    bytes value;
    MPT_TRY(const bool found, trie.get(slot_hash, value));
    if (!found) return std::optional<U256>{};
    auto v = decode_storage_value(value);
    if (!v) {
        return {Errc::storage_bad_node,
                "trie " + t->name + ", slot " + to_hex(slot_hash) + ": " + v.error().message()};
    }
    return std::optional<U256>(*v);
}

Status StateView::for_each_account(const Hash256& from, const AccountVisitor& f) const {
    TrieReader reader(*store_, accounts_);
    const Trie trie = Trie::open(&reader, accounts_.root);
    Status bad;
    MPT_RETURN_IF_ERROR(trie.for_each(from, [&](bytes_view k, bytes_view v) {
        if (k.size() != 32) {
            bad = Status(Errc::storage_bad_node, "trie " + accounts_.name + ": a key of " +
                                                     std::to_string(k.size()) +
                                                     " bytes, not an address hash: " + to_hex(k));
            return false;
        }
        auto a = decode_account(v);
        if (!a) {
            bad = Status(Errc::storage_bad_node, "trie " + accounts_.name + ", account " +
                                                     to_hex(k) + ": " + a.error().message());
            return false;
        }
        return f(hash_from_view(k), *a);
    }));
    return bad;
}

Status StateView::for_each_slot(const Hash256& address_hash, const Account& a,
                                const SlotVisitor& f) const {
    MPT_TRY(const std::optional<TrieInfo> t, storage_trie(address_hash, a));
    if (!t) return {};
    TrieReader reader(*store_, *t);
    const Trie trie = Trie::open(&reader, t->root);
    Status bad;
    MPT_RETURN_IF_ERROR(trie.for_each({}, [&](bytes_view k, bytes_view v) {
        auto value = k.size() == 32 ? decode_storage_value(v)
                                    : Result<U256>(Errc::bad_node, "a key that is no slot hash");
        if (!value) {
            bad = Status(Errc::storage_bad_node, "trie " + t->name + ", slot " + to_hex(k) + ": " +
                                                     value.error().message());
            return false;
        }
        return f(hash_from_view(k), *value);
    }));
    return bad;
}

namespace {

// Damage a check reports and goes on past; any other error ends it.
bool is_damage(Errc e) noexcept {
    return e == Errc::storage_missing_node || e == Errc::storage_hash_mismatch ||
           e == Errc::storage_bad_node;
}

// The state check's walk: one account trie, the storage tries it names, their preimages.
class StateChecker {
public:
    StateChecker(NodeStore& store, StateCheckReport& report) : store_(store), report_(report) {}

    void problem(std::string what) {
        if (report_.problems.size() < kMaxProblems) report_.problems.push_back(std::move(what));
    }

    // check_trie of t, its problems named by the trie.
    Result<bool> check_rows(const TrieInfo& t) {
        MPT_TRY(CheckReport r, check_trie_rows(store_, t));  // check_state read the table
        report_.rows += r.rows;
        for (std::string& p : r.problems) problem("trie " + t.name + ": " + p);
        return r.problems.empty();
    }

    // The preimage of key, where the store holds one: read, and so checked.
    Status preimage(const Hash256& key, std::string_view of) {
        auto p = store_.get_preimage(key);
        if (!p) {
            if (p.error().code != Errc::storage_hash_mismatch) return std::move(p).error();
            auto& bad = report_.bad_preimages;
            if (std::find(bad.begin(), bad.end(), key) == bad.end()) {
                bad.push_back(key);
                problem(std::string(of) + " " + to_hex(key) + ": " + p.error().detail);
            }
            return {};
        }
        if (*p) {
            ++report_.preimages_read;
        } else {
            ++report_.missing_preimages;
        }
        return {};
    }

    // The code an account's codeHash names, where the store holds it: read, and so checked.
    Status code(const Hash256& hash, std::string_view label) {
        if (hash == kEmptyCodeHash) return {};
        auto c = store_.get_code(hash);
        if (!c) {
            if (c.error().code != Errc::storage_hash_mismatch) return std::move(c).error();
            auto& bad = report_.bad_codes;
            if (std::find(bad.begin(), bad.end(), hash) == bad.end()) {
                bad.push_back(hash);
                problem(std::string(label) + ": codeHash " + to_hex(hash) + ": " +
                        c.error().detail);
            }
            return {};
        }
        ++(*c ? report_.codes_read : report_.codes_not_held);
        return {};
    }

    // Every leaf of t decoded as f(key, value) would, where the trie's rows are whole.
    template <typename F>
    Status leaves(const TrieInfo& t, F&& f) {
        TrieReader reader(store_, t);
        const Trie trie = Trie::open(&reader, t.root);
        Status failed;
        Status walked = trie.for_each({}, [&](bytes_view k, bytes_view v) {
            failed = f(k, v);
            return failed.ok();
        });
        MPT_RETURN_IF_ERROR(failed);
        if (!walked && !is_damage(walked.error().code)) return walked;
        if (!walked) problem("trie " + t.name + ": " + walked.error().message());
        return {};
    }

private:
    static constexpr size_t kMaxProblems = 1000;
    NodeStore& store_;
    StateCheckReport& report_;
};

}  // namespace

Result<StateCheckReport> check_state(NodeStore& store, const TrieInfo& accounts) {
    StateCheckReport report;
    StateChecker c(store, report);
    MPT_TRY(const std::vector<TrieInfo> tries, store.list_tries());
    std::map<std::string, const TrieInfo*> storage;  // by name, until an account names it
    for (const TrieInfo& t : tries) {
        if (t.id != accounts.id && is_storage_trie_name(t.name)) storage.emplace(t.name, &t);
    }
    report.storage_tries = storage.size();
    MPT_TRY(const bool whole, c.check_rows(accounts));
    // Damaged rows would end the walk of the accounts at the first; their problems say it.
    if (whole) {
        MPT_RETURN_IF_ERROR(c.leaves(accounts, [&](bytes_view k, bytes_view v) -> Status {
            ++report.accounts;
            const std::string label = "trie " + accounts.name + ", account " + to_hex(k);
            auto a = decode_account(v);
            if (k.size() != 32 || !a) {
                c.problem(label + ": " +
                          (k.size() != 32 ? "a key of " + std::to_string(k.size()) +
                                                " bytes, not an address hash"
                                          : "not an account (" + a.error().message() + ")"));
                return {};
            }
            const Hash256 address_hash = hash_from_view(k);
            MPT_RETURN_IF_ERROR(c.preimage(address_hash, "the address of account"));
            MPT_RETURN_IF_ERROR(c.code(a->code_hash, label));
            const std::string name = storage_trie_name(address_hash);
            const auto it = storage.find(name);
            if (it == storage.end()) {
                if (a->storage_root != kEmptyRoot) ++report.storage_not_held;
                return {};
            }
            const TrieInfo& t = *it->second;
            storage.erase(it);
            if (t.kind != TrieKind::secure) {
                c.problem("trie " + t.name + ": a storage trie of kind " +
                          std::string(trie_kind_name(t.kind)) + ", not secure");
            }
            if (a->storage_root != t.root) {
                c.problem(label + ": storageRoot " + to_hex(a->storage_root) + ", but trie " +
                          t.name + " has root " + to_hex(t.root));
                return {};
            }
            MPT_TRY(const bool rows_whole, c.check_rows(t));
            if (!rows_whole) return {};
            return c.leaves(t, [&](bytes_view slot, bytes_view value) -> Status {
                ++report.slots;
                auto decoded = decode_storage_value(value);
                if (slot.size() != 32 || !decoded) {
                    c.problem(
                        "trie " + t.name + ", slot " + to_hex(slot) + ": " +
                        (slot.size() != 32
                             ? "a key of " + std::to_string(slot.size()) + " bytes, not a slot hash"
                             : "not a slot value (" + decoded.error().message() + ")"));
                    return {};
                }
                return c.preimage(hash_from_view(slot), "the slot of key");
            });
        }));
    }
    // What no account named.
    for (const auto& [name, t] : storage) {
        if (whole) c.problem("trie " + name + ": a storage trie that no account names");
        MPT_RETURN_IF_ERROR(c.check_rows(*t));
    }
    return report;
}

Result<std::optional<std::string>> check_storage_owner(NodeStore& store, const TrieInfo& trie) {
    if (!is_storage_trie_name(trie.name)) return std::optional<std::string>{};
    MPT_TRY(std::optional<TrieInfo> main, store.find_trie("main"));
    if (!main || main->kind != kAccountsKind) return std::optional<std::string>{};
    MPT_TRY(const StateView view, StateView::open(store));
    MPT_TRY(const bytes key, from_hex(trie.name));
    auto a = view.account(hash_from_view(key));
    if (!a && !is_damage(a.error().code)) return std::move(a).error();
    if (!a) return std::optional<std::string>("trie main: " + a.error().message());
    if (!*a) return std::optional<std::string>("no account of trie main has this storage trie");
    if ((*a)->storage_root != trie.root) {
        return std::optional<std::string>("the account's storageRoot in trie main is " +
                                          to_hex((*a)->storage_root) + ", not this trie's root");
    }
    return std::optional<std::string>{};
}

}  // namespace mpt
