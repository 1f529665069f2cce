// Range proofs: a trie of 3-byte keys made from the input, a range proved from it, then
// changed as the rest of the input says. The untouched range must verify with the right
// `more`; a changed one must fail or still describe the trie; nothing may crash or hang.
#include <mpt/proof/proof.hpp>
#include <mpt/store/node_store.hpp>

#include <map>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    if (size < 8) return 0;
    // Header: pair count, first-key bytes, limit, then mutation bytes at the end.
    const size_t pairs = data[0] % 48;
    const bytes first(data + 1, data + 4);
    const size_t limit = 1 + data[4] % 16;
    size_t at = 5;
    std::map<bytes, bytes> content;
    for (size_t i = 0; i < pairs && at + 4 <= size; ++i, at += 4) {
        bytes k(data + at, data + at + 3);
        for (auto& x : k) x &= 0x3f;  // narrow: shared paths and embedded nodes
        content[k] = bytes(1 + data[at + 3] % 40, data[at + 3]);
    }
    Trie t;
    for (const auto& [k, v] : content) FUZZ_CHECK(t.put(k, v).ok());
    auto batch = t.commit();
    FUZZ_CHECK(batch.ok());
    MemoryNodeStore store;
    FUZZ_CHECK(store.begin_write().ok());
    auto id = store.create_trie("main", TrieKind::plain);
    FUZZ_CHECK(id.ok());
    FUZZ_CHECK(apply_commit(store, *id, *batch).ok());
    FUZZ_CHECK(store.commit_write().ok());
    auto info = store.find_trie("main");
    FUZZ_CHECK(info.ok() && info->has_value());
    TrieReader reader(store, **info);
    auto r = prove_range(reader, batch->root, first, nullptr, limit, 1 << 20);
    FUZZ_CHECK(r.ok());

    auto v = verify_range(batch->root, first, r->keys, r->values, &r->proof);
    FUZZ_CHECK(v.ok());
    const auto last =
        r->keys.empty() ? content.lower_bound(first) : content.upper_bound(r->keys.back());
    FUZZ_CHECK(v->more == (!r->keys.empty() && last != content.end()));

    // Mutations: flip a proof byte, change a value, drop a pair.
    for (; at + 2 <= size; at += 2) {
        const uint8_t what = data[at] % 3, where = data[at + 1];
        if (what == 0 && !r->proof.empty()) {
            bytes& node = r->proof[where % r->proof.size()];
            if (!node.empty()) node[where % node.size()] ^= 0x01;
        } else if (what == 1 && !r->values.empty()) {
            r->values[where % r->values.size()].push_back(where);
        } else if (what == 2 && !r->keys.empty()) {
            const size_t i = where % r->keys.size();
            r->keys.erase(r->keys.begin() + static_cast<ptrdiff_t>(i));
            r->values.erase(r->values.begin() + static_cast<ptrdiff_t>(i));
        }
    }
    auto m = verify_range(batch->root, first, r->keys, r->values, &r->proof);
    if (m.ok()) {
        // Still valid: then the pairs are exactly the trie's from first up to the last key.
        auto it = content.lower_bound(first);
        for (size_t i = 0; i < r->keys.size(); ++i, ++it) {
            FUZZ_CHECK(it != content.end() && it->first == r->keys[i] &&
                       it->second == r->values[i]);
        }
    } else {
        FUZZ_CHECK(m.error().code == Errc::invalid_proof);
    }
    return 0;
}
