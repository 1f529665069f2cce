#include <mpt/witness/apply.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>
#include <mpt/state/account.hpp>
#include <mpt/trie/trie.hpp>

#include <cstring>

namespace mpt {

// One trie of the witness: the node at a path found by walking down from the root.
class WitnessTries::PathReader : public NodeReader {
public:
    PathReader(WitnessTries& owner, std::string name, const Hash256& root)
        : owner_(owner), name_(std::move(name)), root_(root) {}

    Result<bytes_view> read(bytes_view path) override {
        // The trie reads a node after the nodes above it: the walk resumes from the deepest
        // node of the last one whose path starts this path.
        size_t common = 0;
        while (common < path.size() && common < last_.size() && path[common] == last_[common]) {
            ++common;
        }
        size_t keep = 0;
        while (keep < trail_.size() && trail_[keep].at <= common) ++keep;
        trail_.resize(keep);
        last_.assign(path.begin(), path.end());
        if (trail_.empty()) {
            bytes_view root;
            if (!find(root_, root)) return bytes_view{};
            trail_.push_back({0, root, true});
        }
        Step s = trail_.back();
        while (s.at < path.size()) {
            const auto v = decode_node(s.rlp);
            if (!v) return bytes_view{};  // the reader above finds it undecodable first
            bytes_view child;
            if (v->kind == NodeView::Kind::branch) {
                child = v->children[path[s.at] & 0xf];
                ++s.at;
            } else if (v->kind == NodeView::Kind::extension) {
                const NibbleView p = v->path;
                if (path.size() - s.at < p.size()) return bytes_view{};
                for (size_t i = 0; i < p.size(); ++i) {
                    if (path[s.at + i] != p[i]) return bytes_view{};
                }
                s.at += p.size();
                child = v->child;
            } else {
                return bytes_view{};
            }
            if (child.empty()) return bytes_view{};
            s.hashed = child.size() == 32;
            if (s.hashed) {
                Hash256 h;
                std::memcpy(h.data(), child.data(), 32);
                if (!find(h, s.rlp)) return bytes_view{};
            } else {
                s.rlp = child;
            }
            trail_.push_back(s);
        }
        return s.hashed ? s.rlp : bytes_view{};
    }

    std::string describe() const override { return "trie " + name_; }

private:
    bool find(const Hash256& h, bytes_view& rlp) {
        const size_t i = owner_.index_.find(h);
        if (i == NodeIndex::kNone) {
            owner_.missing_ = h;
            return false;
        }
        rlp = owner_.w_.state[i];
        if (owner_.found_ != nullptr) owner_.found_->push_back(h);
        return true;
    }

    // A node on the way of the last read: where it stands (nibbles of the path consumed) and
    // whether it is a node of its own (not embedded in its parent).
    struct Step {
        size_t at = 0;
        bytes_view rlp;
        bool hashed = true;
    };

    WitnessTries& owner_;
    std::string name_;
    Hash256 root_;
    bytes last_;               // the last path read
    std::vector<Step> trail_;  // the nodes on its way found, from the root down
};

WitnessTries::WitnessTries(const Witness& w)
    : w_(w), own_hashes_(node_hashes(w.state)), own_index_(own_hashes_), index_(*own_index_) {}

WitnessTries::WitnessTries(const Witness& w, const NodeIndex& index) : w_(w), index_(index) {}

WitnessTries::~WitnessTries() = default;

Result<NodeReader*> WitnessTries::reader(const std::string& name, const Hash256& root) {
    readers_.push_back(std::make_unique<PathReader>(*this, name, root));
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
