#include <mpt/witness/apply.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>
#include <mpt/state/account.hpp>
#include <mpt/trie/trie.hpp>

#include <cstring>

namespace mpt {

// One trie of the witness: each node found by the hash its parent holds for it (a
// keccak256 the index has computed, so the trie does not hash it again).
class WitnessTries::HashReader : public NodeReader {
public:
    HashReader(WitnessTries& owner, std::string name) : owner_(owner), name_(std::move(name)) {}

    Result<Row> read_node(bytes_view path, const Hash256& hash) override {
        (void)path;
        const size_t i = owner_.index_.find(hash);
        if (i == NodeIndex::kNone) {
            owner_.missing_ = hash;
            return Row{};
        }
        if (owner_.found_ != nullptr) owner_.found_->push_back(hash);
        return Row{owner_.w_.state[i], true};
    }
    // A trie reads its nodes through read_node: a witness's nodes have no paths.
    Result<bytes_view> read(bytes_view path) override {
        return node_error(Errc::internal, *this, path, "a witness's nodes are read by hash");
    }

    std::string describe() const override { return "trie " + name_; }

private:
    WitnessTries& owner_;
    std::string name_;
};

WitnessTries::WitnessTries(const Witness& w)
    : w_(w), own_hashes_(node_hashes(w.state)), own_index_(own_hashes_), index_(*own_index_) {}

WitnessTries::WitnessTries(const Witness& w, const NodeIndex& index) : w_(w), index_(index) {}

WitnessTries::~WitnessTries() = default;

Result<NodeReader*> WitnessTries::reader(const std::string& name, const Hash256& root) {
    (void)root;
    readers_.push_back(std::make_unique<HashReader>(*this, name));
    return readers_.back().get();
}

namespace {

Result<std::optional<Account>> account_of(const Trie& accounts, const Hash256& h) {
    MPT_TRY(const std::optional<bytes> v, accounts.get(h));
    if (!v) return std::optional<Account>{};
    MPT_TRY(const Account a, decode_stored_account(*v, h));
    return std::optional<Account>(a);
}

// The storage root after u's slots, from the account's storage root now.
Result<Hash256> storage_after(TrieSource& tries, const AccountUpdate& u, const Hash256& h,
                              const Hash256& root, AppliedChanges& out) {
    NodeReader* reader = nullptr;
    if (root != kEmptyRoot) {
        MPT_TRY(reader, tries.reader(to_hex(h), root));
    }
    Trie t = reader != nullptr ? Trie::open(reader, root) : Trie();
    bytes value;
    for (const auto& [slot, v] : u.storage) {
        const Hash256 key = keccak256(slot);
        if (is_zero(v)) {
            MPT_RETURN_IF_ERROR(t.remove(key));
        } else {
            value.clear();
            encode_storage_value(value, v);
            MPT_RETURN_IF_ERROR(t.put(key, value));
        }
        ++out.slots;
    }
    return t.root_hash();
}

}  // namespace

Result<AppliedChanges> apply_changes(TrieSource& tries, const Hash256& root,
                                     const ChangesDoc& doc) {
    AppliedChanges out;
    NodeReader* reader = nullptr;
    if (root != kEmptyRoot) {
        MPT_TRY(reader, tries.reader("main", root));
    }
    Trie accounts = reader != nullptr ? Trie::open(reader, root) : Trie();
    bytes value;
    for (const AccountUpdate& u : doc.accounts) {
        const Hash256 h = keccak256(u.address);
        MPT_TRY(const std::optional<Account> now, account_of(accounts, h));
        if (u.deleted) {
            if (now) {
                MPT_RETURN_IF_ERROR(accounts.remove(h));
                ++out.deleted;
            }
            continue;
        }
        Account a = account_after(u, now ? *now : Account{});
        if (!u.storage.empty()) {
            MPT_TRY(a.storage_root, storage_after(tries, u, h, a.storage_root, out));
        }
        value.clear();
        encode_account(value, a);
        MPT_RETURN_IF_ERROR(accounts.put(h, value));
        ++out.accounts;
    }
    MPT_TRY(out.root, accounts.root_hash());
    return out;
}

}  // namespace mpt
