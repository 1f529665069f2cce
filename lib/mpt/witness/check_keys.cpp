// The keys of a witness check: each key's walk down the account trie and, for a slot, its
// account's storage trie, over the links the walk of the tries left.
#include <mpt/witness/detail/check_nodes.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/nibbles.hpp>
#include <mpt/core/node.hpp>
#include <mpt/state/account.hpp>
#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace mpt::witness_detail {
namespace {

// Bytewise order, for a map keyed by views.
struct BytesLess {
    bool operator()(bytes_view a, bytes_view b) const noexcept { return bytes_less(a, b); }
};

// A key's walk down one trie: its value, its absence, or where it stops.
struct Lookup {
    WitnessKey::Status status = WitnessKey::Status::unresolved;
    bytes_view value;
    bytes path;  // unresolved: one nibble a byte
    std::optional<Hash256> missing;
    std::string reason;
};

// The listed nodes on the way go to way (cleared first: a resolver's one buffer, so that a
// lookup allocates nothing but on failure).
Lookup look_up(const Nodes& nodes, const Hash256& root, const Hash256& hashed_key,
               std::vector<const Entry*>& way) {
    way.clear();
    Lookup out;
    if (root == kEmptyRoot) {
        out.status = WitnessKey::Status::absent;
        return out;
    }
    PathCursor at(bytes_view(hashed_key.data(), hashed_key.size()));
    bytes_view ref(root.data(), root.size());
    const auto stop = [&](std::string reason) {
        const NibbleView done = at.consumed();
        for (size_t i = 0; i < done.size(); ++i) out.path.push_back(done[i]);
        out.reason = std::move(reason);
        return out;
    };
    for (;;) {
        bytes_view rlp = ref;
        if (ref.size() == 32) {
            Hash256 h;
            std::memcpy(h.data(), ref.data(), 32);
            const Entry* e = nodes.find(h);
            if (e == nullptr) {
                out.missing = h;
                return stop("missing");
            }
            way.push_back(e);
            if (e->decodes == Entry::Decodes::no) {
                out.missing = h;
                return stop("does not decode");
            }
            // Down the branches the walk linked, without decoding them again.
            for (uint32_t links = nodes.links_at[e->index];
                 links < Nodes::kUndecodable && !at.at_end();) {
                const uint32_t next = nodes.links[links + at.remaining()[0]];
                if (next == Nodes::kUnlinked) break;  // decoded below
                at.advance(1);
                if (next == Nodes::kEmpty) {
                    out.status = WitnessKey::Status::absent;
                    return out;
                }
                e = &nodes.entries[next];
                way.push_back(e);
                links = nodes.links_at[next];
                if (links == Nodes::kUndecodable) {
                    out.missing = nodes.hashes[next];
                    return stop("does not decode");
                }
            }
            rlp = e->rlp;
        }
        const auto v = decode_node(rlp);
        if (!v) return stop("node does not decode: " + v.error().message());
        const Descent d = descend(*v, at);
        switch (d.kind) {
            case Descent::Kind::absent:
                out.status = WitnessKey::Status::absent;
                return out;
            case Descent::Kind::value:
                out.status = WitnessKey::Status::present;
                out.value = d.ref;
                return out;
            case Descent::Kind::child:
                ref = d.ref;
                break;
        }
    }
}

// A stop that names no node (and no trie, unless one is given).
std::shared_ptr<const KeyStop> stop_for(std::string reason, std::string trie = {}) {
    return std::make_shared<KeyStop>(KeyStop{std::move(trie), {}, std::nullopt, std::move(reason)});
}

// Fills key from a lookup in the trie trie() names (asked only where the key is unresolved).
template <typename TrieName>
void take(WitnessKey& key, const Lookup& l, const TrieName& trie) {
    key.status = l.status;
    key.value = l.value;
    if (l.status == WitnessKey::Status::unresolved) {
        key.stop = std::make_shared<KeyStop>(KeyStop{trie(), l.path, l.missing, l.reason});
    }
}

// Resolves keys of a witness, each named by its place in keys, given their hashes. It only
// reads the nodes: the ones on each key's way are kept in on_path and on_absence, for the
// caller to note once every resolver is done (resolvers run on several threads).
class KeyResolver {
public:
    KeyResolver(const Nodes& nodes, const Hash256& root, const std::vector<bytes>& keys,
                const std::vector<Hash256>& hashed)
        : nodes_(nodes),
          root_(root),
          root_listing_(nodes.index.find(root)),
          keys_(keys),
          hashed_(hashed) {}

    // The account keys_[i] names.
    const WitnessKey& account(size_t i) {
        const bytes_view address = keys_[i];
        // The slots of an address follow it in reth's order: the last one asked, mostly.
        if (last_ != nullptr && bytes_equal(last_->key, address)) return *last_;
        const auto it = accounts_.find(address);
        if (it != accounts_.end()) return *(last_ = &it->second);
        WitnessKey k;
        k.kind = WitnessKey::Kind::account;
        k.key = address;
        if (!take_leaf(k, root_listing_, hashed_[i])) {
            take(k, keep(look_up(nodes_, root_, hashed_[i], way_)), [] { return "main"; });
        }
        return *(last_ = &accounts_.emplace(address, std::move(k)).first->second);
    }

    // The slot keys_[i] in the storage trie of the account keys_[account_i].
    WitnessKey slot(size_t i, size_t account_i) {
        const bytes_view address = keys_[account_i];
        WitnessKey k;
        k.kind = WitnessKey::Kind::slot;
        k.key = keys_[i];
        k.address = address;
        const WitnessKey& a = account(account_i);
        if (a.status == WitnessKey::Status::absent) {
            k.status = WitnessKey::Status::absent;
            return k;
        }
        if (a.status == WitnessKey::Status::unresolved) {
            k.stop = a.stop;
            k.account_unresolved = true;
            return k;
        }
        const Storage& st = storage(a);
        if (!st.account) {
            k.stop =
                stop_for("its account does not decode: " + st.account.error().message(), "main");
            return k;
        }
        if (!take_leaf(k, st.root_listing, hashed_[i])) {
            take(k, keep(look_up(nodes_, st.account->storage_root, hashed_[i], way_)),
                 [&] { return to_hex(hashed_[account_i]); });
        }
        return k;
    }

    // The nodes on the way of every key resolved: to a key present or unresolved, to one
    // proven absent; the leaves the walk found for keys, whose ways lead up from them.
    std::vector<const Entry*> on_path;
    std::vector<const Entry*> on_absence;
    std::vector<const Leaf*> found;

private:
    // A present account's storage trie: the account decoded, and the listing of its root.
    struct Storage {
        const WitnessKey* of = nullptr;
        Result<Account> account = Account{};
        size_t root_listing = NodeIndex::kNone;
    };

    // The storage trie of a, which is present: the last one asked, mostly (a's slots follow
    // it).
    const Storage& storage(const WitnessKey& a) {
        if (storage_.of == &a) return storage_;
        storage_.of = &a;
        storage_.account = decode_account(a.value);
        storage_.root_listing =
            storage_.account ? nodes_.index.find(storage_.account->storage_root) : NodeIndex::kNone;
        return storage_;
    }

    // Where the walk found the key hashed in the trie whose root is listing root: fills key
    // as present and returns true.
    bool take_leaf(WitnessKey& key, size_t root, const Hash256& hashed) {
        if (root == NodeIndex::kNone) return false;
        const Leaf* l = nodes_.leaves.find(static_cast<uint32_t>(root), hashed);
        if (l == nullptr) return false;
        key.status = WitnessKey::Status::present;
        key.value = l->value;
        found.push_back(l);
        return true;
    }

    const Lookup& keep(const Lookup& l) {
        auto& to = l.status == WitnessKey::Status::absent ? on_absence : on_path;
        to.insert(to.end(), way_.begin(), way_.end());
        return l;
    }

    const Nodes& nodes_;
    Hash256 root_;
    size_t root_listing_;  // of root, or kNone
    const std::vector<bytes>& keys_;
    const std::vector<Hash256>& hashed_;
    std::map<bytes_view, WitnessKey, BytesLess> accounts_;
    const WitnessKey* last_ = nullptr;
    Storage storage_;                // the last account's
    std::vector<const Entry*> way_;  // look_up's, reused
};

// The slot keys[i] of a canonical (sorted) key list: in the first listed account whose
// storage trie has it, else proven absent in one, else the first failure.
WitnessKey sorted_slot(const std::vector<bytes>& keys, size_t i,
                       const std::vector<size_t>& addresses, KeyResolver& r) {
    std::optional<WitnessKey> first_failure;
    std::optional<WitnessKey> found;
    for (const size_t a : addresses) {
        WitnessKey s = r.slot(i, a);
        if (s.status != WitnessKey::Status::unresolved) {
            if (s.status == WitnessKey::Status::present || !found) found = std::move(s);
            if (found->status == WitnessKey::Status::present) break;
        } else if (!first_failure) {
            first_failure = std::move(s);
        }
    }
    if (found && (found->status == WitnessKey::Status::present || !first_failure)) return *found;
    if (first_failure) return *first_failure;
    WitnessKey none;
    none.kind = WitnessKey::Kind::slot;
    none.key = keys[i];
    none.stop = stop_for("no address in keys names an account for it");
    return none;
}

}  // namespace

void resolve_keys(const Witness& w, WitnessCheck& out, Nodes& nodes) {
    const std::vector<bytes>& keys = w.keys;
    out.keys_sorted =
        std::adjacent_find(keys.begin(), keys.end(),
                           [](const bytes& a, const bytes& b) { return !(a < b); }) == keys.end();
    std::vector<size_t> addresses;
    // The address before each slot, in reth's order (none: kNone).
    std::vector<size_t> owner(keys.size(), NodeIndex::kNone);
    for (size_t i = 0, before = NodeIndex::kNone; i < keys.size(); ++i) {
        if (keys[i].size() == 20) {
            addresses.push_back(i);
            before = i;
        }
        owner[i] = before;
    }
    const std::vector<Hash256> hashed = node_hashes(keys);  // on threads: 60,000 in a witness

    out.keys.resize(keys.size());
    constexpr size_t kRun = 4096;
    const size_t runs = (keys.size() + kRun - 1) / kRun;
    std::vector<KeyResolver> resolvers;
    resolvers.reserve(runs);
    for (size_t c = 0; c < runs; ++c) resolvers.emplace_back(nodes, out.root, keys, hashed);
    const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
    run_tasks(threads, runs, [&](size_t c, unsigned) {
        KeyResolver& r = resolvers[c];
        for (size_t i = c * kRun; i < std::min(keys.size(), (c + 1) * kRun); ++i) {
            if (keys[i].size() == 20) {
                out.keys[i] = r.account(i);
            } else if (out.keys_sorted) {
                out.keys[i] = sorted_slot(keys, i, addresses, r);
            } else if (owner[i] != NodeIndex::kNone) {
                out.keys[i] = r.slot(i, owner[i]);
            } else {
                WitnessKey& none = out.keys[i];
                none.kind = WitnessKey::Kind::slot;
                none.key = keys[i];
                none.stop = stop_for("no address before it in keys names its account");
            }
        }
    });
    // Up from the leaves the walk found, to the first node marked already (whose way up is
    // marked, or is being marked by the thread that marked it), on the resolvers' threads;
    // then the ways of the keys looked up.
    run_tasks(threads, runs, [&](size_t c, unsigned) {
        const std::vector<const Leaf*>& found = resolvers[c].found;
        for (size_t i = 0; i < found.size(); ++i) {
            // A leaf's holder is a node far from the last one's: its load goes ahead.
            if (i + 8 < found.size()) __builtin_prefetch(&nodes.entries[found[i + 8]->holder]);
            for (uint32_t at = found[i]->holder; at != Entry::kNoParent;
                 at = nodes.entries[at].parent[found[i]->kind]) {
                if (std::atomic_ref(nodes.entries[at].on_path)
                        .exchange(true, std::memory_order_relaxed)) {
                    break;
                }
            }
        }
    });
    for (const KeyResolver& r : resolvers) {
        for (const Entry* e : r.on_path) nodes.entries[e->index].on_path = true;
        for (const Entry* e : r.on_absence) nodes.entries[e->index].on_absence = true;
    }
}

}  // namespace mpt::witness_detail
