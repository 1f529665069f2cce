// Execution witnesses: any input reads as a witness or fails cleanly. One that reads survives
// its RLP written back and read again unchanged; its check classes every node once, counts
// consistently and resolves every key; and changes drawn from its keys apply to its tries or
// stop at a node it lacks or cannot decode, never at anything else.
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/witness/apply.hpp>
#include <mpt/witness/check.hpp>

#include "fuzz_check.hpp"

#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto w = read_witness(text);
    if (!w) return 0;
    for (const bytes& k : w->keys) FUZZ_CHECK(k.size() == 20 || k.size() == 32);

    // Written as geth's RLP and read back: the same witness.
    const bytes rlp = encode_witness_rlp(*w);
    auto again = read_witness(std::string(rlp.begin(), rlp.end()));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->state == w->state && again->codes == w->codes);
    FUZZ_CHECK(again->keys == w->keys && again->headers == w->headers);

    // The root: the headers' when they give one, else the first node's hash.
    Hash256 root = kEmptyRoot;
    if (auto headers = witness_headers(*w); headers.ok()) {
        if (auto r = witness_pre_state_root(*headers); r.ok() && r->has_value()) root = **r;
    }
    if (root == kEmptyRoot && !w->state.empty()) root = keccak256(w->state.front());

    // Changes from the keys: every address deleted or given a nonce, each slot set or cleared.
    ChangesDoc doc;
    std::set<bytes> seen;
    for (const bytes& k : w->keys) {
        if (k.size() == 20 && seen.insert(k).second) {
            AccountUpdate u;
            std::copy(k.begin(), k.end(), u.address.begin());
            if (k[19] & 1) {
                u.deleted = true;
            } else {
                u.nonce = k[0];
            }
            doc.accounts.push_back(std::move(u));
        } else if (k.size() == 32 && !doc.accounts.empty() && !doc.accounts.back().deleted) {
            U256 slot{};
            std::copy(k.begin(), k.end(), slot.begin());
            U256 value{};
            value[31] = k[31] & 3;
            auto& storage = doc.accounts.back().storage;
            const bool repeat = std::any_of(storage.begin(), storage.end(),
                                            [&](const SlotValue& s) { return s.first == slot; });
            if (!repeat) storage.push_back({slot, value});
        }
    }

    const WitnessCheck c = check_witness(*w, root, &doc);
    FUZZ_CHECK(c.classes.size() == w->state.size());
    FUZZ_CHECK(c.keys.size() == w->keys.size());
    FUZZ_CHECK(c.nodes == w->state.size());
    FUZZ_CHECK(c.reached + c.superfluous.size() + c.undecodable.size() + c.duplicated ==
               w->state.size());
    FUZZ_CHECK(c.codes_matched + c.codes_unmatched.size() == w->codes.size());
    for (const WitnessKey& k : c.keys) {
        if (k.status == WitnessKey::Status::unresolved) {
            FUZZ_CHECK(k.stop != nullptr && !k.stop->reason.empty());
        }
    }
    if (c.changes_error) {
        const Errc e = c.changes_error->code;
        FUZZ_CHECK(e == Errc::storage_missing_node || e == Errc::storage_bad_node);
    }

    // apply on its own gives what the check's application gave.
    WitnessTries tries(*w);
    auto applied = apply_changes(tries, root, doc);
    FUZZ_CHECK(applied.ok() == c.post_root.has_value());
    if (applied) FUZZ_CHECK(applied->root == *c.post_root);
    return 0;
}
