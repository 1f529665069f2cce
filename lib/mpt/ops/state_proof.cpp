#include <mpt/ops/state_proof.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/proof/proof.hpp>

namespace mpt {

Result<GetProofDoc> prove_account(const StateView& view, const Address& address,
                                  std::span<const StorageKeyArg> keys, VerifiedRows* account_rows) {
    GetProofDoc doc;
    doc.address = address;
    const Hash256 address_hash = keccak256(address);
    TrieReader accounts(view.store(), view.accounts());
    accounts.set_verified_rows(account_rows);
    std::optional<bytes> value;
    MPT_TRY(doc.account_proof, prove(accounts, view.accounts().root, address_hash, &value));
    std::optional<Account> account;
    if (value) {
        auto a = decode_account(*value);
        if (!a) {
            return Error{Errc::storage_bad_node, "trie " + view.accounts().name + ", account " +
                                                     to_hex(address_hash) + ": " +
                                                     a.error().message()};
        }
        account = *a;
        doc.account = *a;
    } else {
        doc.account.storage_root = Hash256{};
        doc.account.code_hash = Hash256{};
    }
    // go-ethereum opens no storage trie for the empty root (nor for a zero one), and then
    // answers each key with value 0 and no nodes.
    std::optional<TrieInfo> storage;
    if (account && account->storage_root != Hash256{}) {
        MPT_TRY(storage, view.storage_trie(address_hash, *account));
    }
    doc.storage.reserve(keys.size());
    std::optional<TrieReader> reader;
    VerifiedRows near_root;  // the slots share the storage trie's nodes near its root
    if (storage) {
        reader.emplace(view.store(), *storage);
        if (keys.size() > 1) reader->set_verified_rows(&near_root);
    }
    for (const StorageKeyArg& k : keys) {
        StorageProofClaim c;
        c.key = k.echo;
        c.slot = k.slot;
        if (storage) {
            std::optional<bytes> v;
            MPT_TRY(c.proof, prove(*reader, storage->root, keccak256(k.slot), &v));
            if (v) {
                auto d = decode_storage_value(*v);
                if (!d) {
                    return Error{Errc::storage_bad_node, "trie " + storage->name + ", slot " +
                                                             to_hex(k.slot) + ": " +
                                                             d.error().message()};
                }
                c.value = *d;
            }
        }
        doc.storage.push_back(std::move(c));
    }
    return doc;
}

}  // namespace mpt
