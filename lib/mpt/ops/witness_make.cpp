#include <mpt/ops/witness_make.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/state/account.hpp>
#include <mpt/trie/trie.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

namespace mpt {
namespace {

// A reader that keeps a copy of every row it reads in *rows.
class NotingReader : public NodeReader {
public:
    NotingReader(NodeStore& store, TrieInfo info, std::set<bytes>*& rows)
        : inner_(store, std::move(info)), rows_(rows) {}

    Result<bytes_view> read(bytes_view path) override {
        MPT_TRY(const bytes_view row, inner_.read(path));
        if (!row.empty()) rows_->emplace(row.begin(), row.end());
        return row;
    }
    std::string describe() const override { return inner_.describe(); }

private:
    TrieReader inner_;
    std::set<bytes>*& rows_;  // where the rows go now
};

// The tries of a state file, each read noted.
class NotingTries : public TrieSource {
public:
    NotingTries(NodeStore& store, const TrieInfo& main, std::set<bytes>* rows)
        : store_(store), main_(main), rows_(rows) {}

    void note_into(std::set<bytes>* rows) noexcept { rows_ = rows; }

    Result<NodeReader*> reader(const std::string& name, const Hash256& root) override {
        TrieInfo info = main_;
        if (name != "main") {
            MPT_TRY(const std::optional<TrieInfo> held, store_.find_trie(name));
            if (!held) {
                return Error{Errc::storage_missing_node,
                             "an account has storage root " + to_hex(root) +
                                 " but the file has no trie " + name +
                                 " (a state built from a dump without its slots)"};
            }
            info = *held;
        }
        info.root = root;
        readers_.push_back(std::make_unique<NotingReader>(store_, info, rows_));
        return readers_.back().get();
    }

private:
    NodeStore& store_;
    TrieInfo main_;
    std::set<bytes>* rows_;
    std::vector<std::unique_ptr<NotingReader>> readers_;
};

Result<std::optional<Account>> read_account(const Trie& accounts, const Hash256& h) {
    MPT_TRY(const std::optional<bytes> v, accounts.get(h));
    if (!v) return std::optional<Account>{};
    auto a = decode_account(*v);
    if (!a) {
        return Error{Errc::storage_bad_node,
                     "trie main, account " + to_hex(h) + ": " + a.error().message()};
    }
    return std::optional<Account>(*a);
}

}  // namespace

Result<MadeWitness> make_witness(NodeStore& store, const WitnessRequest& request) {
    MPT_TRY(const StateView view, StateView::open(store));
    const TrieInfo& main = view.accounts();
    std::set<bytes> read_rows;
    NotingTries tries(store, main, &read_rows);
    MadeWitness out;

    Trie accounts;
    if (main.root != kEmptyRoot) {
        MPT_TRY(NodeReader * reader, tries.reader("main", main.root));
        accounts = Trie::open(reader, main.root);
    }
    std::set<Hash256> code_hashes;
    std::optional<Account> account;  // of the last address
    std::optional<Hash256> account_hash;
    std::map<Hash256, Trie> storage;  // by account hash, opened as a slot needs it
    for (const bytes& key : request.keys) {
        if (key.size() == 20) {
            account_hash = keccak256(key);
            MPT_TRY(account, read_account(accounts, *account_hash));
            if (account && account->code_hash != kEmptyCodeHash) {
                code_hashes.insert(account->code_hash);
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
            MPT_TRY(NodeReader * reader,
                    tries.reader(storage_trie_name(*account_hash), account->storage_root));
            it = storage.emplace(*account_hash, Trie::open(reader, account->storage_root)).first;
        }
        MPT_TRY(const std::optional<bytes> v, it->second.get(keccak256(key)));
        (void)v;
    }
    out.read_nodes = read_rows.size();

    std::set<bytes> change_rows;
    if (request.changes) {
        tries.note_into(&change_rows);
        MPT_TRY(out.applied, apply_changes(tries, main.root, *request.changes));
        for (const bytes& r : read_rows) change_rows.erase(r);
        out.change_nodes = change_rows.size();
        read_rows.merge(change_rows);
    }

    Witness& w = out.witness;
    w.state.assign(read_rows.begin(), read_rows.end());
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
