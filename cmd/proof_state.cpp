// mpt proof DB --account ADDR... [--slot SLOT]...: eth_getProof answers from a state file,
// written as go-ethereum writes them (state/getproof.hpp).
#include <mpt/ops/state_proof.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "state_print.hpp"

#include <cstdio>

namespace mpt::cli {

int run_proof_accounts(const std::string& db, const std::string& trie,
                       const std::vector<std::string>& accounts,
                       const std::vector<std::string>& slots, bool json) {
    // Every argument is read before the file is opened, as go-ethereum decodes the keys
    // before it touches the state.
    std::vector<Address> addresses;
    addresses.reserve(accounts.size());
    for (const std::string& a : accounts) {
        auto address = parse_address(a);
        if (!address) return report(address.error());
        addresses.push_back(*address);
    }
    std::vector<StorageKeyArg> keys;
    keys.reserve(slots.size());
    for (const std::string& s : slots) {
        auto k = parse_get_proof_key(s);
        if (!k) return report(k.error());
        keys.push_back(std::move(*k));
    }
    auto t = open_trie(db, trie);
    if (!t) return report(t.error());
    auto view = StateView::open(*t->store, trie);
    if (!view) return report(view.error(), db);
    const bool array = json && addresses.size() > 1;
    // Many accounts share the account trie's nodes near the root: each is read and hashed once.
    VerifiedRows near_root;
    std::string out;
    for (size_t i = 0; i < addresses.size(); ++i) {
        auto doc =
            prove_account(*view, addresses[i], keys, addresses.size() > 1 ? &near_root : nullptr);
        if (!doc) return report(doc.error(), db);
        out.clear();
        if (array) out += i == 0 ? "[" : ",\n";
        append_get_proof_json(out, *doc);
        if (!array) out += '\n';
        std::fwrite(out.data(), 1, out.size(), stdout);
    }
    if (array) std::fwrite("]\n", 1, 2, stdout);
    return kOk;
}

}  // namespace mpt::cli
