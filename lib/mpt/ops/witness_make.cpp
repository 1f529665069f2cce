#include <mpt/ops/witness_make.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/state/account.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

namespace mpt {
namespace {

// The rows of a witness, each once: a row is named by its trie and its path, so that the
// proofs of many keys, which share their upper nodes, copy each node once.
class Rows {
public:
    // Keeps rlp, the row at path of trie, unless kept already; true when new.
    bool note(TrieId trie, bytes_view path, bytes_view rlp) {
        std::string name(sizeof trie + path.size(), '\0');
        std::memcpy(name.data(), &trie, sizeof trie);
        if (!path.empty()) std::memcpy(name.data() + sizeof trie, path.data(), path.size());
        const auto [it, fresh] = rows_.try_emplace(std::move(name));
        if (fresh) it->second.assign(rlp.begin(), rlp.end());
        return fresh;
    }
    size_t size() const noexcept { return rows_.size(); }

    // The nodes, each once (two rows may hold one node), sorted bytewise.
    std::vector<bytes> nodes() && {
        std::vector<bytes> out;
        out.reserve(rows_.size());
        for (auto& [name, rlp] : rows_) out.push_back(std::move(rlp));
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }

private:
    std::unordered_map<std::string, bytes> rows_;
};

// A reader that notes every row it reads of its trie in *rows.
class NotingReader : public NodeReader {
public:
    NotingReader(NodeStore& store, TrieInfo info, Rows& rows, size_t& added)
        : inner_(store, std::move(info)), rows_(rows), added_(added) {}

    Result<bytes_view> read(bytes_view path) override {
        MPT_TRY(const bytes_view row, inner_.read(path));
        if (!row.empty() && rows_.note(inner_.info().id, path, row)) ++added_;
        return row;
    }
    std::string describe() const override { return inner_.describe(); }

private:
    TrieReader inner_;
    Rows& rows_;
    size_t& added_;
};

// The tries of a state file, each row read noted.
class NotingTries : public TrieSource {
public:
    NotingTries(NodeStore& store, const TrieInfo& main, Rows& rows, size_t& added)
        : store_(store), main_(main), rows_(rows), added_(added) {}

    Result<NodeReader*> reader(const std::string& name, const Hash256& root) override {
        TrieInfo info = main_;
        if (name != "main") {
            MPT_TRY(info, storage_trie(store_, name, root));
        }
        info.root = root;
        readers_.push_back(std::make_unique<NotingReader>(store_, info, rows_, added_));
        return readers_.back().get();
    }

    // The storage trie called name, which an account's storage root says exists.
    static Result<TrieInfo> storage_trie(NodeStore& store, const std::string& name,
                                         const Hash256& root) {
        MPT_TRY(const std::optional<TrieInfo> held, store.find_trie(name));
        if (!held) {
            return Error{Errc::storage_missing_node,
                         "an account has storage root " + to_hex(root) +
                             " but the file has no trie " + name +
                             " (a state built from a dump without its slots)"};
        }
        return *held;
    }

private:
    NodeStore& store_;
    TrieInfo main_;
    Rows& rows_;
    size_t& added_;
    std::vector<std::unique_ptr<NotingReader>> readers_;
};

// One trie read key by key; with a cache, its upper rows checked once (VerifiedRows, a
// table of 4,369 rows: for the account trie, not for each of thousands of storage tries).
struct ProvingTrie {
    ProvingTrie(NodeStore& store, const TrieInfo& info, bool cached)
        : reader(store, info), root(info.root) {
        if (cached) {
            cache = std::make_unique<VerifiedRows>();
            reader.set_verified_rows(cache.get());
        }
    }
    std::unique_ptr<VerifiedRows> cache;
    TrieReader reader;
    Hash256 root;
};

}  // namespace

Result<MadeWitness> make_witness(NodeStore& store, const WitnessRequest& request) {
    MPT_TRY(const StateView view, StateView::open(store));
    const TrieInfo& main = view.accounts();
    Rows rows;
    MadeWitness out;

    // The reads: each key's proof, its rows noted as the proof passes them.
    ProvingTrie accounts(store, main, true);
    std::map<Hash256, std::unique_ptr<ProvingTrie>> storage;  // by account hash
    std::set<Hash256> code_hashes;
    std::optional<Account> account;  // of the last address
    std::optional<Hash256> account_hash;
    bytes path;
    const auto prove_in = [&](ProvingTrie& t, const Hash256& key) {
        return prove_each(t.reader, t.root, key, path,
                          [&](bytes_view rlp) { rows.note(t.reader.info().id, path, rlp); });
    };
    for (const bytes& key : request.keys) {
        if (key.size() == 20) {
            account_hash = keccak256(key);
            MPT_TRY(const bytes_view v, prove_in(accounts, *account_hash));
            account.reset();
            if (!v.empty()) {
                MPT_TRY(account, decode_stored_account(v, *account_hash));
                if (account->code_hash != kEmptyCodeHash) code_hashes.insert(account->code_hash);
            }
            continue;
        }
        if (!account_hash) {
            return Error{Errc::bad_input,
                         "slot " + to_hex(key) + " has no address before it to name its account"};
        }
        if (!account || account->storage_root == kEmptyRoot) continue;
        auto it = storage.find(*account_hash);
        if (it == storage.end()) {
            MPT_TRY(TrieInfo info,
                    NotingTries::storage_trie(store, storage_trie_name(*account_hash),
                                              account->storage_root));
            info.root = account->storage_root;
            it = storage.emplace(*account_hash, std::make_unique<ProvingTrie>(store, info, false))
                     .first;
        }
        MPT_TRY(const bytes_view v, prove_in(*it->second, keccak256(key)));
        (void)v;
    }
    out.read_nodes = rows.size();

    // The changes, applied on readers that note the rows they read beyond those.
    if (request.changes) {
        NotingTries tries(store, main, rows, out.change_nodes);
        MPT_TRY(out.applied, apply_changes(tries, main.root, *request.changes));
    }

    Witness& w = out.witness;
    w.state = std::move(rows).nodes();
    for (const Hash256& h : code_hashes) {
        MPT_TRY(std::optional<bytes> code, store.get_code(h));
        if (code) {
            w.codes.push_back(std::move(*code));
        } else {
            ++out.codes_missing;
        }
    }
    std::sort(w.codes.begin(), w.codes.end());
    w.keys = request.keys;
    w.headers = request.headers;
    return out;
}

}  // namespace mpt
