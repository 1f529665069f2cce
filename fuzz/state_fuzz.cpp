// State documents: any text parses or fails with an error naming its place, never a crash;
// a document that parses has the reader's promises (storage sorted by key with no key twice,
// no address hash twice) and one state root on one thread, on two, and through the in-memory
// Trie over the accounts' encodings. BlockchainTests files parse or fail the same way. The
// streamed reader past --memory (ops/state_spill.hpp), fed 64 bytes at a time with runs of a
// few records, gives the same error, or the same root and counts; where an account may take no
// more than 100 bytes, the same or that the account is too large.
#include <mpt/ops/state_root.hpp>
#include <mpt/ops/state_spill.hpp>
#include <mpt/state/document.hpp>
#include <mpt/trie/trie.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto tests = parse_blockchain_tests(text);
    if (!tests) FUZZ_CHECK(!tests.error().detail.empty());
    auto doc = parse_state_document(text);
    const std::unique_ptr<TextStream> stream = fuzz_text_stream(text);
    SpillOptions spill;
    spill.run_bytes = 512;
    spill.buffer_bytes = 4096;
    spill.fan_in = 2;
    auto streamed = streamed_state_root(*stream, spill);
    // With accounts of at most 100 bytes: the same error or root, or too large an account.
    auto small = streamed_state_root(*fuzz_text_stream(text, 100), spill);
    if (!small.ok() && small.error().code != Errc::input_too_large) {
        FUZZ_CHECK(!doc.ok() && small.error().code == doc.error().code &&
                   small.error().detail == doc.error().detail);
    } else if (small.ok()) {
        FUZZ_CHECK(doc.ok() && streamed.ok() && small->info.root == streamed->info.root);
    }
    if (!doc) {
        const Errc e = doc.error().code;
        FUZZ_CHECK(e == Errc::bad_json || e == Errc::bad_input || e == Errc::bad_hex);
        FUZZ_CHECK(!doc.error().detail.empty());
        FUZZ_CHECK(!streamed.ok() && streamed.error().code == e &&
                   streamed.error().detail == doc.error().detail);
        return 0;
    }
    FUZZ_CHECK(streamed.ok());
    auto info = state_root_info(*doc, 1);
    FUZZ_CHECK(info.ok() && streamed->info.root == info->root &&
               streamed->info.accounts == info->accounts &&
               streamed->info.storage_slots == info->storage_slots &&
               streamed->info.storage_tries == info->storage_tries &&
               streamed->doc.shape == doc->shape &&
               streamed->doc.claimed_root == doc->claimed_root);
    for (const StateAccount& a : doc->accounts) {
        for (size_t i = 0; i + 1 < a.storage.size(); ++i)
            FUZZ_CHECK(hash_less(a.storage[i].key, a.storage[i + 1].key));
    }
    auto one = state_root(*doc, 1);
    FUZZ_CHECK(one.ok());
    auto two = state_root(*doc, 2);
    FUZZ_CHECK(two.ok() && *two == *one);
    Trie trie;
    for (const StateAccount& a : doc->accounts) {
        Account acct = a.account;
        auto storage = storage_root(a);
        FUZZ_CHECK(storage.ok());
        acct.storage_root = *storage;
        bytes rlp;
        encode_account(rlp, acct);
        auto back = decode_account(rlp);
        FUZZ_CHECK(back.ok() && *back == acct);
        // Distinct address hashes: no put overwrites another account's.
        auto before = trie.get(a.address_hash);
        FUZZ_CHECK(before.ok() && !before->has_value());
        FUZZ_CHECK(trie.put(a.address_hash, rlp).ok());
    }
    auto root = trie.root_hash();
    FUZZ_CHECK(root.ok() && *root == *one);
    return 0;
}
