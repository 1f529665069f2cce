// build_new_state_file: a state into a new file, written whole (store/whole_file.hpp).
#include <mpt/core/hex.hpp>
#include <mpt/ops/path_order.hpp>
#include <mpt/ops/row_buffer.hpp>
#include <mpt/ops/state_file.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/whole_file.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <new>
#include <span>

namespace mpt {
namespace {

using build_detail::PartRows;

// The rows of one trie as the builder hashes them, kept to be written in path order.
struct TrieRows : NodeSink {
    struct Ref {
        uint64_t at;
        uint32_t path_size;
        uint32_t rlp_size;
    };
    std::string name;
    TrieKind kind = TrieKind::secure;
    Hash256 root{};
    size_t first = 0;  // where this trie's rows begin in the shared arena
    size_t end = 0;
    bytes* data = nullptr;
    std::vector<Ref>* refs = nullptr;

    void put(bytes_view path, bytes_view rlp) override {
        refs->push_back(
            {data->size(), static_cast<uint32_t>(path.size()), static_cast<uint32_t>(rlp.size())});
        data->insert(data->end(), path.begin(), path.end());
        data->insert(data->end(), rlp.begin(), rlp.end());
    }
};

bytes_view path_of(const bytes& data, const TrieRows::Ref& r) noexcept {
    return {data.data() + r.at, r.path_size};
}
bytes_view rlp_of(const bytes& data, const TrieRows::Ref& r) noexcept {
    return {data.data() + r.at + r.path_size, r.rlp_size};
}

// Puts refs[first, end), the rows of one trie as its builder handed them over, in path order
// (path_order.hpp); scratch is reused from call to call.
void put_in_path_order(const bytes& data, std::vector<TrieRows::Ref>& refs, size_t first,
                       size_t end, std::vector<uint32_t>& order,
                       std::vector<TrieRows::Ref>& scratch) {
    const auto n = static_cast<uint32_t>(end - first);
    if (n < 2) return;
    scratch.assign(refs.begin() + static_cast<ptrdiff_t>(first),
                   refs.begin() + static_cast<ptrdiff_t>(end));
    order.clear();
    append_path_order(
        n, [&](uint32_t i) { return path_of(data, scratch[i]); }, order);
    for (uint32_t k = 0; k < n; ++k) refs[first + k] = scratch[order[k]];
}

}  // namespace

namespace {

// A preimage: a key's hash and what it is the hash of (an address or a slot).
using PreimageRef = std::pair<Hash256, bytes_view>;

bool preimage_less(const PreimageRef& x, const PreimageRef& y) noexcept {
    return hash_less(x.first, y.first);
}

// The storage tries of accounts [begin, end) of order, built on one thread: rows in one
// arena, each trie's in path order; roots[i] set for each account i with storage; the slots'
// preimages by hash, each once.
struct StorageChunk {
    bytes data;
    std::vector<TrieRows::Ref> refs;
    std::vector<TrieRows> tries;  // in address-hash order
    std::vector<PreimageRef> preimages;
    size_t sorted = 0;  // preimages[0, sorted) are by hash, each once
    size_t slots = 0;
    Status status;

    // Sorts the preimages added since the last call in and drops those given twice: the
    // same slot in many accounts is one preimage, held once rather than once per account.
    void compact_preimages() {
        const auto mid = preimages.begin() + static_cast<ptrdiff_t>(sorted);
        std::sort(mid, preimages.end(), preimage_less);
        std::inplace_merge(preimages.begin(), mid, preimages.end(), preimage_less);
        preimages.erase(std::unique(preimages.begin(), preimages.end(),
                                    [](const PreimageRef& x, const PreimageRef& y) {
                                        return x.first == y.first;
                                    }),
                        preimages.end());
        sorted = preimages.size();
    }

    void build(const std::vector<const StateAccount*>& order, size_t begin, size_t end,
               bool record_preimages, std::vector<std::optional<Hash256>>& roots) {
        bytes value;
        std::vector<uint32_t> path_order;
        std::vector<TrieRows::Ref> scratch;
        for (size_t i = begin; i < end && status.ok(); ++i) {
            const StateAccount& acc = *order[i];
            auto slots_of = sorted_state_slots(acc);
            if (!slots_of) {
                status = slots_of.error();
                return;
            }
            if (slots_of->empty()) continue;
            TrieRows t;
            t.name = storage_trie_name(acc.address_hash);
            t.data = &data;
            t.refs = &refs;
            t.first = refs.size();
            StackTrie storage(&t);
            for (const StorageEntry* e : *slots_of) {
                value.clear();
                encode_storage_value(value, e->value);
                if (Status s = storage.add(e->key, value); !s.ok()) {
                    status = s;
                    return;
                }
                if (record_preimages && e->slot)
                    preimages.emplace_back(e->key, bytes_view(*e->slot));
            }
            t.root = storage.finish();
            t.end = refs.size();
            roots[i] = t.root;
            slots += slots_of->size();
            put_in_path_order(data, refs, t.first, t.end, path_order, scratch);
            tries.push_back(std::move(t));
            // Each time the unsorted part has grown past the sorted one.
            if (preimages.size() - sorted > sorted + 65536) compact_preimages();
        }
        compact_preimages();
    }
};

// The nodes table's b-tree of a new state file, in (trie, path) order: the account trie's rows,
// then each storage trie's, as ids were given in the order of tries. What it reads and record
// (scratch) must outlive the tree's writing.
WholeFileTree nodes_tree(const StateImage& image, const PartRows& accounts,
                         const std::vector<TrieRows>& tries, bytes& record) {
    WholeFileTree tree;
    tree.root_page = image.image.nodes_root;
    tree.records = [&image, &accounts, &tries,
                    &record](const std::function<Status(bytes_view)>& add) -> Status {
        MPT_RETURN_IF_ERROR(accounts.for_each([&](bytes_view p, bytes_view rlp) {
            record.clear();
            append_record(record, image.ids[0], p, rlp);
            return add(record);
        }));
        for (size_t t = 1; t < tries.size(); ++t) {
            const bytes& d = *tries[t].data;
            const std::vector<TrieRows::Ref>& r = *tries[t].refs;
            for (size_t i = tries[t].first; i < tries[t].end; ++i) {
                record.clear();
                append_record(record, image.ids[t], path_of(d, r[i]), rlp_of(d, r[i]));
                MPT_RETURN_IF_ERROR(add(record));
            }
        }
        return {};
    };
    return tree;
}

// The preimages table's b-tree of a new state file, from the accounts' and each chunk's, each
// a run by hash: merged by hash, a hash in several runs (a slot in two chunks) once. count
// counts the records. What it reads and record (scratch) must outlive the tree's writing.
WholeFileTree preimages_tree(uint32_t root_page, const std::vector<PreimageRef>& accounts,
                             const std::vector<StorageChunk>& chunks, size_t& count,
                             bytes& record) {
    std::vector<std::span<const PreimageRef>> runs = {accounts};
    for (const StorageChunk& c : chunks) runs.emplace_back(c.preimages);
    WholeFileTree tree;
    tree.root_page = root_page;
    tree.records = [runs = std::move(runs), &count,
                    &record](const std::function<Status(bytes_view)>& add) -> Status {
        std::vector<size_t> at(runs.size(), 0);
        const Hash256* last = nullptr;
        while (true) {
            const PreimageRef* next = nullptr;
            size_t from = 0;
            for (size_t r = 0; r < runs.size(); ++r) {
                if (at[r] == runs[r].size()) continue;
                const PreimageRef& p = runs[r][at[r]];
                if (next == nullptr || preimage_less(p, *next)) {
                    next = &p;
                    from = r;
                }
            }
            if (next == nullptr) return {};
            ++at[from];
            if (last != nullptr && *last == next->first) continue;
            last = &next->first;
            ++count;
            record.clear();
            append_blob_record(record, next->first, next->second);
            MPT_RETURN_IF_ERROR(add(record));
        }
    };
    return tree;
}

}  // namespace

Result<std::optional<StateBuildResult>> build_new_state_file(const std::string& path,
                                                             const StateDoc& doc,
                                                             const StateBuildOptions& o) {
    if (!WholeFile::may_create(path)) return std::optional<StateBuildResult>{};
    try {
        MPT_TRY(const std::vector<const StateAccount*> order, sorted_state_accounts(doc));
        // The storage tries first, in chunks of accounts on threads of their own; then the
        // account trie over their roots on this one.
        const size_t threads =
            std::max<size_t>(1, std::min<size_t>(o.threads, order.size() / 256 + 1));
        std::vector<StorageChunk> chunks(threads);
        std::vector<std::optional<Hash256>> roots(order.size());
        run_tasks(static_cast<unsigned>(threads), threads, [&](size_t c, unsigned) {
            chunks[c].build(order, order.size() * c / threads, order.size() * (c + 1) / threads,
                            o.preimages, roots);
        });
        for (const StorageChunk& c : chunks) MPT_RETURN_IF_ERROR(c.status);

        std::vector<TrieRows> tries(1);  // the account trie; the storage tries are the chunks'
        tries[0].name = "main";
        tries[0].kind = TrieKind::state;
        // The account trie over the storage roots, split under its top branch on threads
        // as the key/value build splits its trie (stack_trie_root).
        std::vector<uint8_t> account_rlp(std::max<size_t>(order.size(), 1) * kMaxAccountRlp);
        std::vector<KvPair> pairs(order.size());
        std::vector<PreimageRef> preimages;  // in address-hash order, as the accounts
        std::vector<Code> codes;             // by hash, each once (below)
        StateBuildResult result;
        bytes value;
        for (size_t i = 0; i < order.size(); ++i) {
            const StateAccount& acc = *order[i];
            Account a = acc.account;
            // A dump made without storage gives the root alone (state_root.hpp's rule: an
            // account that lists slots, if only zero ones, has the root of those).
            a.storage_root = roots[i] ? *roots[i]
                             : acc.storage.empty() && acc.claimed_storage_root
                                 ? *acc.claimed_storage_root
                                 : kEmptyRoot;
            value.clear();
            encode_account(value, a);
            MPT_ASSERT(value.size() <= kMaxAccountRlp);
            uint8_t* at = account_rlp.data() + i * kMaxAccountRlp;
            std::copy(value.begin(), value.end(), at);
            pairs[i] = {acc.address_hash, bytes_view(at, value.size())};
            if (o.preimages && acc.address)
                preimages.emplace_back(acc.address_hash, bytes_view(*acc.address));
            if (!acc.code.empty()) codes.emplace_back(acc.account.code_hash, acc.code);
        }
        sort_codes(codes);
        result.codes = codes.size();
        PartRows account_parts(o.progress, order.size());
        MPT_TRY(tries[0].root, stack_trie_root(pairs, std::max(o.threads, 1u),
                                               kParallelRootMinPairs, &account_parts));
        result.root = tries[0].root;
        result.accounts = order.size();
        result.rows_written = account_parts.rows();
        for (StorageChunk& c : chunks) {
            result.slots += c.slots;
            result.rows_written += c.refs.size();
            for (TrieRows& t : c.tries) tries.push_back(t);  // ids follow address-hash order
        }
        result.storage_tries = tries.size() - 1;

        std::vector<NewTrie> rows;
        rows.reserve(tries.size());
        for (const TrieRows& t : tries) rows.push_back({t.name, t.kind, t.root});
        MPT_TRY(StateImage image, make_state_image(rows));
        bytes record;
        const WholeFileTree trees[] = {
            nodes_tree(image, account_parts, tries, record),
            preimages_tree(image.preimages_root, preimages, chunks, result.preimages, record),
            codes_tree(image.image.codes_root, codes, record)};
        MPT_TRY(const bool written, write_whole_file(path, image.image, trees));
        if (!written) return std::optional<StateBuildResult>{};
        return std::optional<StateBuildResult>(result);
    } catch (const std::bad_alloc&) {
        return std::optional<StateBuildResult>{};  // the store keeps the rows on disk instead
    }
}

}  // namespace mpt
