#include <mpt/core/hex.hpp>
#include <mpt/ops/state_diff.hpp>

namespace mpt {
namespace {

Result<std::optional<Account>> account_of(bytes_view key, bytes_view value, const char* side) {
    if (value.empty()) return std::optional<Account>{};
    auto a = decode_account(value);
    if (!a) {
        return {Errc::storage_bad_node,
                std::string(side) + ": account " + to_hex(key) + ": " + a.error().message()};
    }
    return std::optional<Account>(*a);
}

Result<std::optional<U256>> slot_of(bytes_view key, bytes_view value, const char* side) {
    if (value.empty()) return std::optional<U256>{};
    auto v = decode_storage_value(value);
    if (!v) {
        return {Errc::storage_bad_node,
                std::string(side) + ": slot " + to_hex(key) + ": " + v.error().message()};
    }
    return std::optional<U256>(*v);
}

class StateDiffer {
public:
    StateDiffer(const StateView& a, const StateView& b, const StateDiffVisitor& f)
        : a_(a), b_(b), f_(f) {}

    Result<DiffStats> run() {
        TrieReader ra(a_.store(), a_.accounts());
        TrieReader rb(b_.store(), b_.accounts());
        MPT_TRY(const DiffStats s, diff_tries({&ra, a_.accounts().root}, {&rb, b_.accounts().root},
                                              [&](const DiffEntry& e) { return on_account(e); }));
        MPT_RETURN_IF_ERROR(inner_);
        stats_.nodes_read_a += s.nodes_read_a;
        stats_.nodes_read_b += s.nodes_read_b;
        return stats_;
    }

private:
    bool fail(Error e) {
        inner_ = Status(std::move(e));
        return false;
    }

    bool on_account(const DiffEntry& e) {
        if (e.key.size() != 32) {
            return fail(
                {Errc::storage_bad_node, "account trie key of " + std::to_string(e.key.size()) +
                                             " bytes, not an address hash: " + to_hex(e.key)});
        }
        AccountChange c;
        c.kind = e.kind;
        c.address_hash = hash_from_view(e.key);
        auto old_a = account_of(e.key, e.old_value, "A");
        if (!old_a) return fail(old_a.error());
        auto new_a = account_of(e.key, e.new_value, "B");
        if (!new_a) return fail(new_a.error());
        c.old_account = *old_a;
        c.new_account = *new_a;
        if (f_.account && !f_.account(c)) return false;
        const Hash256 old_root = c.old_account ? c.old_account->storage_root : kEmptyRoot;
        const Hash256 new_root = c.new_account ? c.new_account->storage_root : kEmptyRoot;
        if (old_root == new_root || !f_.slot) return true;
        return diff_storage(c);
    }

    bool diff_storage(const AccountChange& c) {
        std::optional<TrieInfo> ta, tb;
        SlotsUnknown unknown;
        unknown.address_hash = c.address_hash;
        if (c.old_account) {
            auto t = a_.find_storage_trie(c.address_hash, *c.old_account);
            if (!t) return fail(t.error());
            ta = std::move(t->trie);
            unknown.missing_a = t->absent;
        }
        if (c.new_account) {
            auto t = b_.find_storage_trie(c.address_hash, *c.new_account);
            if (!t) return fail(t.error());
            tb = std::move(t->trie);
            unknown.missing_b = t->absent;
        }
        if (unknown.missing_a || unknown.missing_b) {
            // Slots against a side that does not list them would be wrong answers.
            if (f_.slots_unknown) return f_.slots_unknown(unknown);
            const Account& acc = unknown.missing_a ? *c.old_account : *c.new_account;
            return fail({Errc::storage_missing_node,
                         std::string(unknown.missing_a ? "A" : "B") + ": account " +
                             to_hex(c.address_hash) + " has storage root " +
                             to_hex(acc.storage_root) + " but no storage trie"});
        }
        std::optional<TrieReader> ra, rb;
        DiffSide sa, sb;
        if (ta) {
            ra.emplace(a_.store(), *ta);
            sa = {&*ra, ta->root};
        }
        if (tb) {
            rb.emplace(b_.store(), *tb);
            sb = {&*rb, tb->root};
        }
        bool stopped = false;
        auto s = diff_tries(sa, sb, [&](const DiffEntry& e) {
            if (e.key.size() != 32) {
                fail(
                    {Errc::storage_bad_node, "storage trie of " + to_hex(c.address_hash) +
                                                 ": a key that is no slot hash: " + to_hex(e.key)});
                return false;
            }
            SlotChange sc;
            sc.kind = e.kind;
            sc.address_hash = c.address_hash;
            sc.slot_hash = hash_from_view(e.key);
            auto ov = slot_of(e.key, e.old_value, "A");
            if (!ov) return fail(ov.error());
            auto nv = slot_of(e.key, e.new_value, "B");
            if (!nv) return fail(nv.error());
            sc.old_value = *ov;
            sc.new_value = *nv;
            if (!f_.slot(sc)) {
                stopped = true;
                return false;
            }
            return true;
        });
        if (!s) return fail(s.error());
        stats_.nodes_read_a += s->nodes_read_a;
        stats_.nodes_read_b += s->nodes_read_b;
        return inner_.ok() && !stopped;
    }

    const StateView& a_;
    const StateView& b_;
    const StateDiffVisitor& f_;
    DiffStats stats_;
    Status inner_;
};

}  // namespace

Result<DiffStats> diff_states(const StateView& a, const StateView& b, const StateDiffVisitor& f) {
    return StateDiffer(a, b, f).run();
}

Status verify_state(const StateView& v) {
    Status failed;
    MPT_RETURN_IF_ERROR(v.for_each_account({}, [&](const Hash256& hash, const Account& a) {
        failed = v.for_each_slot(hash, a, [](const Hash256&, const U256&) { return true; });
        return failed.ok();
    }));
    return failed;
}

}  // namespace mpt
