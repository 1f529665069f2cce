#include <mpt/ops/state_root.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <numeric>

namespace mpt {
namespace {

struct StorageResult {
    Hash256 root = kEmptyRoot;
    size_t slots = 0;
};

// The storage root of a by the header's rule, on st (reset on return) with scratch enc.
Result<StorageResult> build_storage(const StateAccount& a, StackTrie& st, bytes& enc) {
    StorageResult r;
    if (a.storage.empty()) {
        if (a.claimed_storage_root) r.root = *a.claimed_storage_root;
        return r;
    }
    const auto by_key = [&](const StorageEntry& x, const StorageEntry& y) {
        return hash_less(x.key, y.key);
    };
    // The readers give storage sorted; anything else is sorted here, by index.
    const bool sorted = std::is_sorted(a.storage.begin(), a.storage.end(), by_key);
    std::vector<uint32_t> order;
    if (!sorted) {
        order.resize(a.storage.size());
        std::iota(order.begin(), order.end(), 0u);
        std::sort(order.begin(), order.end(),
                  [&](uint32_t x, uint32_t y) { return by_key(a.storage[x], a.storage[y]); });
    }
    const StorageEntry* prev = nullptr;
    for (size_t i = 0; i < a.storage.size(); ++i) {
        const StorageEntry& e = a.storage[sorted ? i : order[i]];
        if (prev && prev->key == e.key) {
            (void)st.finish();
            return Error{Errc::bad_input,
                         "storage slot with key " + to_hex(e.key) + " given twice"};
        }
        prev = &e;
        if (is_zero(e.value)) continue;
        enc.clear();
        encode_storage_value(enc, e.value);
        MPT_RETURN_IF_ERROR(st.add(e.key, enc));
        ++r.slots;
    }
    r.root = st.finish();
    return r;
}

}  // namespace

Result<Hash256> storage_root(const StateAccount& a) {
    StackTrie st;
    bytes enc;
    MPT_TRY(const StorageResult r, build_storage(a, st, enc));
    return r.root;
}

Result<StateRootInfo> state_root_info(const StateDoc& doc, unsigned threads) {
    const size_t n = doc.accounts.size();
    StateRootInfo info;
    info.accounts = n;
    size_t work = 0;
    for (const StateAccount& a : doc.accounts) work += 1 + a.storage.size();

    // Each account's RLP in its own stride of one buffer, so that threads write apart.
    std::unique_ptr<uint8_t[]> rlp(new uint8_t[std::max<size_t>(n, 1) * kMaxAccountRlp]);
    std::vector<uint8_t> rlp_size(n);
    constexpr size_t kChunk = 64;
    const size_t chunks = (n + kChunk - 1) / kChunk;
    struct ChunkResult {
        Status status;
        size_t slots = 0;
        size_t tries = 0;
    };
    std::vector<ChunkResult> results(chunks);
    // Threads pay for themselves only over thousands of hashes.
    const unsigned use = work >= kParallelRootMinPairs ? std::max(threads, 1u) : 1;
    run_tasks(use, chunks, [&](size_t chunk, unsigned) {
        StackTrie st;
        bytes enc, acc;
        ChunkResult& cr = results[chunk];
        const size_t end = std::min(n, (chunk + 1) * kChunk);
        for (size_t i = chunk * kChunk; i < end && cr.status.ok(); ++i) {
            const StateAccount& a = doc.accounts[i];
            auto s = build_storage(a, st, enc);
            if (!s) {
                Error e = std::move(s).error();
                e.detail = "account " + (a.address ? to_hex(*a.address) : to_hex(a.address_hash)) +
                           ": " + e.detail;
                cr.status = std::move(e);
                break;
            }
            cr.slots += s->slots;
            cr.tries += s->slots != 0;
            Account acct = a.account;
            acct.storage_root = s->root;
            acc.clear();
            encode_account(acc, acct);
            MPT_ASSERT(acc.size() <= kMaxAccountRlp);
            std::memcpy(rlp.get() + i * kMaxAccountRlp, acc.data(), acc.size());
            rlp_size[i] = static_cast<uint8_t>(acc.size());
        }
    });
    for (const ChunkResult& cr : results) {
        MPT_RETURN_IF_ERROR(cr.status);
        info.storage_slots += cr.slots;
        info.storage_tries += cr.tries;
    }

    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        return hash_less(doc.accounts[x].address_hash, doc.accounts[y].address_hash);
    });
    std::vector<KvPair> pairs(n);
    for (size_t i = 0; i < n; ++i) {
        const uint32_t k = order[i];
        if (i > 0 && doc.accounts[order[i - 1]].address_hash == doc.accounts[k].address_hash) {
            return Error{Errc::bad_input,
                         "two accounts with address hash " + to_hex(doc.accounts[k].address_hash)};
        }
        pairs[i] = {doc.accounts[k].address_hash, {rlp.get() + k * kMaxAccountRlp, rlp_size[k]}};
    }
    MPT_TRY(info.root, stack_trie_root(pairs, std::max(threads, 1u)));
    return info;
}

Result<Hash256> state_root(const StateDoc& doc, unsigned threads) {
    MPT_TRY(const StateRootInfo info, state_root_info(doc, threads));
    return info.root;
}

}  // namespace mpt
