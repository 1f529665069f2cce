#include <mpt/ops/state_update.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/trie/trie.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace mpt {
namespace {

// The write of one update: the account trie open in store, each account's storage trie
// opened as it is reached.
class Updater {
public:
    Updater(NodeStore& store, const TrieInfo& main, const StateUpdateOptions& o)
        : store_(store),
          main_(main),
          reader_(store, main),
          accounts_(Trie::open(&reader_, main.root)),
          o_(o) {}

    // The account under h as the file holds it, or nullopt.
    Result<std::optional<Account>> current(const Hash256& h) const {
        MPT_TRY(const std::optional<bytes> v, accounts_.get(h));
        if (!v) return std::optional<Account>{};
        MPT_TRY(const Account a, decode_stored_account(*v, h));
        return std::optional<Account>(a);
    }

    // Why the account as a tracer's pre gave it is not what the file holds, or empty.
    Result<std::string> differs(const AccountUpdate& u, const Hash256& h,
                                const std::optional<Account>& a) {
        const AccountBefore& b = *u.before;
        const std::string who = "account " + to_hex(u.address);
        if (b.absent) {
            return a ? who + ": the changes make it, but the file holds it" : std::string();
        }
        const Account none;
        const Account& now = a ? *a : none;
        if (b.nonce && *b.nonce != now.nonce) {
            return who + ": nonce " + std::to_string(*b.nonce) + " before, " +
                   std::to_string(now.nonce) + " in the file";
        }
        if (b.balance && *b.balance != now.balance) {
            return who + ": balance " + quantity_text(*b.balance) + " before, " +
                   quantity_text(now.balance) + " in the file";
        }
        if (b.code) {
            const Hash256 want = b.code->empty() ? kEmptyCodeHash : keccak256(*b.code);
            if (want != now.code_hash) {
                return who + ": code of hash " + to_hex(want) + " before, " +
                       to_hex(now.code_hash) + " in the file";
            }
        }
        if (b.storage.empty()) return std::string();
        MPT_TRY(Storage s, open_storage(h, now));
        for (const auto& [slot, value] : b.storage) {
            MPT_TRY(const std::optional<bytes> v, s.trie.get(keccak256(slot)));
            U256 held{};
            if (v) {
                MPT_TRY(held, decode_storage_value(*v));
            }
            if (held != value) {
                return who + ": slot " + to_hex(slot) + " " + quantity_text(value) + " before, " +
                       quantity_text(held) + " in the file";
            }
        }
        return std::string();
    }

    Status apply(const AccountUpdate& u, StateUpdateResult& r) {
        const Hash256 h = keccak256(u.address);
        MPT_TRY(const std::optional<Account> now, current(h));
        if (u.deleted) {
            MPT_RETURN_IF_ERROR(drop_storage(h, r));
            if (now) {
                MPT_RETURN_IF_ERROR(accounts_.remove(h));
                ++r.deleted;
            }
            return {};
        }
        Account a = account_after(u, now ? *now : Account{});
        if (u.code && !u.code->empty()) {
            const Code c{a.code_hash, *u.code};
            MPT_RETURN_IF_ERROR(store_.put_codes({&c, 1}));
            ++r.codes;
        }
        if (u.clear_storage) MPT_RETURN_IF_ERROR(drop_storage(h, r));
        if (!u.storage.empty()) {
            MPT_TRY(a.storage_root, write_storage(u, h, a, r));
        }
        if (o_.preimages) {
            const Preimage p{h, u.address};
            MPT_RETURN_IF_ERROR(store_.put_preimages({&p, 1}));
        }
        bytes value;
        encode_account(value, a);
        MPT_RETURN_IF_ERROR(accounts_.put(h, value));
        ++r.accounts;
        return {};
    }

    // The account trie's rows written; its new root.
    Result<Hash256> finish(StateUpdateResult& r) {
        MPT_TRY(const CommitBatch batch, accounts_.commit());
        r.rows_written += batch.puts.size();
        r.rows_deleted += batch.deletes.size();
        MPT_RETURN_IF_ERROR(apply_commit(store_, main_.id, batch));
        return batch.root;
    }

private:
    struct Storage {
        std::optional<TrieInfo> info;
        std::unique_ptr<TrieReader> reader;
        Trie trie;
    };

    // The storage trie of account a (under h), open at a's storage root.
    Result<Storage> open_storage(const Hash256& h, const Account& a) {
        Storage s;
        MPT_TRY(s.info, store_.find_trie(storage_trie_name(h)));
        if (a.storage_root == kEmptyRoot) return s;
        if (!s.info) {
            return Error{Errc::storage_missing_node,
                         "account " + to_hex(h) + " has storage root " + to_hex(a.storage_root) +
                             " but the file has no trie " + storage_trie_name(h) +
                             " (a state built from a dump without its slots cannot be updated)"};
        }
        TrieInfo at = *s.info;
        at.root = a.storage_root;
        s.reader = std::make_unique<TrieReader>(store_, at);
        s.trie = Trie::open(s.reader.get(), a.storage_root);
        return s;
    }

    Result<Hash256> write_storage(const AccountUpdate& u, const Hash256& h, const Account& a,
                                  StateUpdateResult& r) {
        MPT_TRY(Storage s, open_storage(h, a));
        std::vector<Preimage> preimages;
        std::vector<Hash256> keys;
        keys.reserve(u.storage.size());
        bytes value;
        for (const auto& [slot, v] : u.storage) {
            keys.push_back(keccak256(slot));
            if (is_zero(v)) {
                MPT_RETURN_IF_ERROR(s.trie.remove(keys.back()));
            } else {
                value.clear();
                encode_storage_value(value, v);
                MPT_RETURN_IF_ERROR(s.trie.put(keys.back(), value));
                if (o_.preimages) preimages.emplace_back(keys.back(), bytes_view(slot));
            }
            ++r.slots;
        }
        MPT_TRY(const CommitBatch batch, s.trie.commit());
        if (batch.root == kEmptyRoot) {
            // No storage left: the account has no storage trie.
            if (s.info) MPT_RETURN_IF_ERROR(drop(*s.info, r));
            return kEmptyRoot;
        }
        TrieId id = 0;
        if (s.info) {
            id = s.info->id;
        } else {
            MPT_TRY(id, store_.create_trie(storage_trie_name(h), TrieKind::secure));
        }
        r.rows_written += batch.puts.size();
        r.rows_deleted += batch.deletes.size();
        MPT_RETURN_IF_ERROR(apply_commit(store_, id, batch));
        if (!preimages.empty()) MPT_RETURN_IF_ERROR(store_.put_preimages(preimages));
        return batch.root;
    }

    // The storage trie of the account under h dropped, where the file holds one.
    Status drop_storage(const Hash256& h, StateUpdateResult& r) {
        MPT_TRY(const std::optional<TrieInfo> held, store_.find_trie(storage_trie_name(h)));
        return held ? drop(*held, r) : Status{};
    }

    Status drop(const TrieInfo& t, StateUpdateResult& r) {
        MPT_TRY(const uint64_t rows, store_.count_rows(t.id));
        r.rows_deleted += rows;
        return store_.delete_trie(t.id);
    }

    NodeStore& store_;
    TrieInfo main_;
    TrieReader reader_;
    Trie accounts_;
    const StateUpdateOptions& o_;
};

}  // namespace

Result<StateUpdateResult> update_state(NodeStore& store, const ChangesDoc& doc,
                                       const StateUpdateOptions& o) {
    MPT_RETURN_IF_ERROR(store.begin_write());
    auto r = [&]() -> Result<StateUpdateResult> {
        MPT_TRY(const StateView view, StateView::open(store));
        Updater u(store, view.accounts(), o);
        StateUpdateResult out;
        // A tracer's pre against the file first: nothing is written when one differs.
        for (const AccountUpdate& a : doc.accounts) {
            if (!a.before) continue;
            const Hash256 h = keccak256(a.address);
            MPT_TRY(const std::optional<Account> now, u.current(h));
            MPT_TRY(std::string why, u.differs(a, h, now));
            if (!why.empty()) {
                out.refused = "the changes' pre is not the file's state: " + why;
                return out;
            }
        }
        for (const AccountUpdate& a : doc.accounts) MPT_RETURN_IF_ERROR(u.apply(a, out));
        MPT_TRY(out.root, u.finish(out));
        if (o.expect_root && *o.expect_root != out.root) {
            out.refused =
                "the changes give root " + to_hex(out.root) + ", not " + to_hex(*o.expect_root);
        }
        return out;
    }();
    if (!r || !r->refused.empty()) {
        store.rollback();
        return r;
    }
    if (auto s = store.commit_write(); !s) {
        store.rollback();
        return std::move(s).error();
    }
    return r;
}

}  // namespace mpt
