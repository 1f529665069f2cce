// Roots and files of state documents sorted on disk (state_spill.hpp).
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/row_buffer.hpp>
#include <mpt/ops/state_spill.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/file_image.hpp>
#include <mpt/store/whole_file.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>

#include <algorithm>
#include <array>
#include <cstring>

namespace mpt {
namespace {

using build_detail::SpillingRows;

// The records (state_spill.hpp): an account's value is
//   be64(instance) flags be64(nonce) balance(32) code_hash(32) [claimed root(32)] [address(20)]
//   [code]
// and a slot's
//   be64(instance) flags value(32) [slot(32)]
// with instance the number of the account object it came from.
enum : uint8_t {
    kListed = 1,   // the account lists storage (if only zero slots)
    kClaimed = 2,  // a dump's own storage root follows
    kAddress = 4,  // the address follows
    kCode = 8,     // the code follows, to the end (a build's records only)
    kSlot = 1,     // the slot follows
};

void put_be64(uint8_t* out, uint64_t v) noexcept {
    for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
}
uint64_t get_be64(const uint8_t* in) noexcept {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | in[i];
    return v;
}

// Adds each account handed over and its nonzero slots to the sorter; with keep_code, an
// account's code in its record (a build keeps the code of an account's last object only).
class RecordSink : public StateAccountSink {
public:
    RecordSink(SpillingPairSorter& sorter, bool keep_code)
        : sorter_(sorter), keep_code_(keep_code) {}

    Status account(const StateAccount& a, uint64_t instance) override {
        uint8_t v[8 + 1 + 8 + 32 + 32 + 32 + 20];
        size_t n = 0;
        put_be64(v, instance);
        uint8_t& flags = v[8];
        const bool code = keep_code_ && !a.code.empty();
        flags = (a.storage.empty() ? 0 : kListed) | (a.claimed_storage_root ? kClaimed : 0) |
                (a.address ? kAddress : 0) | (code ? kCode : 0);
        put_be64(v + 9, a.account.nonce);
        std::memcpy(v + 17, a.account.balance.data(), 32);
        std::memcpy(v + 49, a.account.code_hash.data(), 32);
        n = 81;
        if (a.claimed_storage_root) {
            std::memcpy(v + n, a.claimed_storage_root->data(), 32);
            n += 32;
        }
        if (a.address) {
            std::memcpy(v + n, a.address->data(), 20);
            n += 20;
        }
        if (code) {
            record_.assign(v, v + n);
            record_.insert(record_.end(), a.code.begin(), a.code.end());
            MPT_RETURN_IF_ERROR(sorter_.add(a.address_hash, record_));
        } else {
            MPT_RETURN_IF_ERROR(sorter_.add(a.address_hash, bytes_view(v, n)));
        }
        uint8_t key[64];
        std::memcpy(key, a.address_hash.data(), 32);
        uint8_t s[8 + 1 + 32 + 32];
        put_be64(s, instance);
        for (const StorageEntry& e : a.storage) {
            if (is_zero(e.value)) continue;
            std::memcpy(key + 32, e.key.data(), 32);
            s[8] = e.slot ? kSlot : 0;
            std::memcpy(s + 9, e.value.data(), 32);
            if (e.slot) std::memcpy(s + 41, e.slot->data(), 32);
            MPT_RETURN_IF_ERROR(sorter_.add(bytes_view(key, 64), bytes_view(s, e.slot ? 73 : 41)));
        }
        return {};
    }

private:
    SpillingPairSorter& sorter_;
    bool keep_code_;
    bytes record_;
};

// An account of the merged records.
struct MergedAccount {
    Hash256 hash{};
    Account account;
    bool listed = false;
    std::optional<Hash256> claimed;
    std::optional<Address> address;
    uint64_t instance = 0;
    bytes code;  // a build's records only

    // Its storage root when it has no nonzero slot (state_root.hpp's rule).
    Hash256 root_without_slots() const noexcept {
        return !listed && claimed ? *claimed : kEmptyRoot;
    }
};

void decode_account(const KvPair& p, MergedAccount& a) {
    const uint8_t* v = p.value.data();
    MPT_ASSERT(p.value.size() >= 81);
    std::memcpy(a.hash.data(), p.key.data(), 32);
    a.instance = get_be64(v);
    const uint8_t flags = v[8];
    a.listed = (flags & kListed) != 0;
    a.account.nonce = get_be64(v + 9);
    std::memcpy(a.account.balance.data(), v + 17, 32);
    std::memcpy(a.account.code_hash.data(), v + 49, 32);
    a.account.storage_root = kEmptyRoot;
    size_t n = 81;
    a.claimed.reset();
    a.address.reset();
    if ((flags & kClaimed) != 0) {
        a.claimed.emplace();
        std::memcpy(a.claimed->data(), v + n, 32);
        n += 32;
    }
    if ((flags & kAddress) != 0) {
        a.address.emplace();
        std::memcpy(a.address->data(), v + n, 20);
        n += 20;
    }
    a.code.clear();
    if ((flags & kCode) != 0) {
        a.code.assign(v + n, v + p.value.size());
        n = p.value.size();
    }
    MPT_ASSERT(n == p.value.size());
}

// A slot of the merged records: its key (slot hash), value and, when known, the slot.
struct MergedSlot {
    bytes_view key;
    U256 value;
    const uint8_t* slot = nullptr;  // 32 bytes
};

// Walks the final records of a finished sorter (or of one of its nibble streams): start(account),
// slot(s) for each of its nonzero slots in key order, end(account), for each account of the
// state in key order.
template <typename Source, typename Start, typename Slot, typename End>
Status walk_state(Source& source, uint64_t first_live, Start&& start, Slot&& slot, End&& end) {
    MergedAccount cur;
    bool open = false;
    MergedSlot s;
    while (true) {
        MPT_TRY(const std::span<const KvPair> run, source.next());
        if (run.empty()) break;
        for (const KvPair& p : run) {
            if (p.key.size() == 32) {
                if (open) MPT_RETURN_IF_ERROR(end(cur));
                decode_account(p, cur);
                open = cur.instance >= first_live;
                if (open) MPT_RETURN_IF_ERROR(start(cur));
                continue;
            }
            MPT_ASSERT(p.key.size() == 64 && p.value.size() >= 41);
            // A slot of an earlier object of the same address, or of a replaced one.
            if (!open || get_be64(p.value.data()) != cur.instance ||
                std::memcmp(p.key.data(), cur.hash.data(), 32) != 0) {
                continue;
            }
            s.key = p.key.subspan(32);
            std::memcpy(s.value.data(), p.value.data() + 9, 32);
            s.slot = (p.value[8] & kSlot) != 0 ? p.value.data() + 41 : nullptr;
            MPT_RETURN_IF_ERROR(slot(s));
        }
    }
    if (open) MPT_RETURN_IF_ERROR(end(cur));
    return {};
}

// What the document said of itself, for a result's doc.
StreamedStateInfo doc_info(const StateStreamResult& read) {
    StreamedStateInfo doc;
    doc.shape = read.shape;
    doc.claimed_root = read.claimed_root;
    return doc;
}

// Reads the whole stream into a finished sorter.
Result<StateStreamResult> sort_state(TextStream& stream, SpillingPairSorter& sorter,
                                     bool keep_code = false) {
    RecordSink sink(sorter, keep_code);
    MPT_TRY(StateStreamResult r, stream_state_document(stream, sink));
    MPT_RETURN_IF_ERROR(sorter.finish());
    return r;
}

// The sink of the storage tries' rows: each path behind the 4-byte big-endian index of its
// trie, so that the rows of consecutive tries sort in the tries' order.
class IndexedRows : public NodeSink {
public:
    explicit IndexedRows(SpillingRows& rows) : rows_(rows) {}
    void start(uint32_t index) noexcept {
        for (int i = 0; i < 4; ++i) key_[i] = static_cast<uint8_t>(index >> (8 * (3 - i)));
    }
    void put(bytes_view path, bytes_view rlp) override {
        key_.resize(4);
        key_.insert(key_.end(), path.begin(), path.end());
        rows_.put(key_, rlp);
    }

private:
    SpillingRows& rows_;
    bytes key_ = bytes(4, 0);
};

}  // namespace

namespace {

// Hashes the accounts of source (walk_state) into accounts, each storage trie on a StackTrie
// of its own, and counts them into info (its root left alone).
template <typename Source>
Status hash_accounts(Source& source, uint64_t first_live, StackTrie& accounts,
                     StateRootInfo& info) {
    StackTrie storage;
    bytes enc;
    size_t slots = 0;
    return walk_state(
        source, first_live,
        [&](const MergedAccount&) -> Status {
            slots = 0;
            return {};
        },
        [&](const MergedSlot& s) -> Status {
            enc.clear();
            encode_storage_value(enc, s.value);
            ++slots;
            return storage.add(s.key, enc);
        },
        [&](const MergedAccount& a) -> Status {
            Account acct = a.account;
            acct.storage_root = slots != 0 ? storage.finish() : a.root_without_slots();
            info.storage_slots += slots;
            info.storage_tries += slots != 0;
            ++info.accounts;
            enc.clear();
            encode_account(enc, acct);
            return accounts.add(a.hash, enc);
        });
}

// The state root on threads, the account trie split at its root as kv_root_sorted splits:
// the accounts of each first nibble, with their slots (whose keys begin with the account's
// hash), from the nibble's stream. Nothing when the accounts make no branch at the root.
Result<std::optional<StateRootInfo>> nibble_state_root(const SpillingPairSorter& sorter,
                                                       uint64_t first_live, unsigned threads) {
    std::array<StateRootInfo, 16> infos;
    size_t pairs = 0;
    MPT_TRY(const std::optional<bytes> enc,
            split_root(
                threads,
                [&](size_t v, NibblePart& part) {
                    hash_part(part, 1, nullptr, [&](StackTrie& accounts) -> Status {
                        MPT_TRY(const std::unique_ptr<SpilledPairStream> stream,
                                sorter.nibble_stream(static_cast<unsigned>(v)));
                        return hash_accounts(*stream, first_live, accounts, infos[v]);
                    });
                },
                bytes(), pairs));
    if (!enc) return std::optional<StateRootInfo>();
    StateRootInfo info;
    info.root = keccak256(*enc);
    for (const StateRootInfo& i : infos) {
        info.accounts += i.accounts;
        info.storage_slots += i.storage_slots;
        info.storage_tries += i.storage_tries;
    }
    return std::optional<StateRootInfo>(info);
}

// The tries table of a streamed state build, made in a temporary file of tmp_dir a batch of
// tries at a time (make_state_image_on_disk): main at root, then the storage tries as
// storage_tries holds them (address hash and root, in id order).
Result<DiskStateImage> state_image_on_disk(const std::string& tmp_dir, const Hash256& root,
                                           RunFile& storage_tries) {
    std::vector<std::string> names;
    std::vector<Hash256> roots;
    std::vector<NewTrie> batch;
    bool first = true;
    return make_state_image_on_disk(tmp_dir, [&]() -> Result<std::span<const NewTrie>> {
        names.clear();
        roots.clear();
        batch.clear();
        if (first) {
            first = false;
            names.emplace_back("main");
            roots.push_back(root);
        }
        bytes_view k, v;
        while (names.size() < 4096) {
            MPT_TRY(const bool more, storage_tries.next(k, v));
            if (!more) break;
            names.push_back(storage_trie_name(hash_from_view(k)));
            roots.push_back(hash_from_view(v));
        }
        for (size_t i = 0; i < names.size(); ++i) {
            const bool main = names[i] == "main";
            batch.push_back({names[i], main ? TrieKind::state : TrieKind::secure, roots[i]});
        }
        return std::span<const NewTrie>(batch);
    });
}

// The nodes table's b-tree of a streamed state build: main's rows, then the storage tries'
// (keyed by their 4-byte index, trie i's id i + 1). What it reads and record (scratch) must
// outlive the tree's writing.
WholeFileTree nodes_tree(uint32_t root_page, SpillingRows& main_rows, SpillingRows& storage_rows,
                         bytes& record) {
    // Trie i's id is i + 1 (ids from 1 in the order given).
    const auto id_of = [](uint32_t index) { return static_cast<int64_t>(index) + 1; };
    WholeFileTree tree;
    tree.root_page = root_page;
    tree.records = [&main_rows, &storage_rows, &record,
                    id_of](const std::function<Status(bytes_view)>& add) -> Status {
        MPT_RETURN_IF_ERROR(main_rows.for_each([&](bytes_view p, bytes_view rlp) {
            record.clear();
            append_record(record, id_of(0), p, rlp);
            return add(record);
        }));
        return storage_rows.for_each([&](bytes_view key, bytes_view rlp) {
            MPT_ASSERT(key.size() >= 4);
            const uint32_t index = static_cast<uint32_t>(key[0]) << 24 |
                                   static_cast<uint32_t>(key[1]) << 16 |
                                   static_cast<uint32_t>(key[2]) << 8 | key[3];
            record.clear();
            append_record(record, id_of(index), key.subspan(4), rlp);
            return add(record);
        });
    };
    return tree;
}

// The preimages table's b-tree of a streamed state build: the accounts' and the slots'
// merged by hash; a hash in both goes once, as the account's (state_bulk.cpp's merge). count
// counts the records. What it reads and record (scratch) must outlive the tree's writing.
WholeFileTree preimages_tree(uint32_t root_page, RunFile& account_preimages,
                             SpillingPairSorter& slot_preimages, size_t& count, bytes& record) {
    WholeFileTree tree;
    tree.root_page = root_page;
    tree.records = [&account_preimages, &slot_preimages, &count,
                    &record](const std::function<Status(bytes_view)>& add) -> Status {
        bytes_view ak, av;
        MPT_TRY(bool a_more, account_preimages.next(ak, av));
        std::span<const KvPair> batch;
        size_t at = 0;
        bool s_done = false;
        Hash256 last{};
        bool any = false;
        const auto put = [&](bytes_view k, bytes_view v) -> Status {
            if (any && std::equal(k.begin(), k.end(), last.begin())) return {};
            std::copy(k.begin(), k.end(), last.begin());
            any = true;
            ++count;
            record.clear();
            append_blob_record(record, k, v);
            return add(record);
        };
        while (true) {
            if (at == batch.size() && !s_done) {
                MPT_TRY(batch, slot_preimages.next());
                at = 0;
                s_done = batch.empty();
            }
            const bool s_more = at < batch.size();
            if (!a_more && !s_more) return {};
            if (a_more && (!s_more || !bytes_less(batch[at].key, ak))) {
                MPT_RETURN_IF_ERROR(put(ak, av));
                MPT_TRY(a_more, account_preimages.next(ak, av));
            } else {
                MPT_RETURN_IF_ERROR(put(batch[at].key, batch[at].value));
                ++at;
            }
        }
    };
    return tree;
}

// The codes table's b-tree of a streamed state build, from codes (by hash, each once). count
// counts the records. What it reads and record (scratch) must outlive the tree's writing.
WholeFileTree codes_tree(uint32_t root_page, SpillingPairSorter& codes, size_t& count,
                         bytes& record) {
    WholeFileTree tree;
    tree.root_page = root_page;
    tree.records = [&codes, &count,
                    &record](const std::function<Status(bytes_view)>& add) -> Status {
        while (true) {
            MPT_TRY(const std::span<const KvPair> batch, codes.next());
            if (batch.empty()) return {};
            for (const KvPair& c : batch) {
                ++count;
                record.clear();
                append_blob_record(record, c.key, c.value);
                MPT_RETURN_IF_ERROR(add(record));
            }
        }
    };
    return tree;
}

// What a streamed state build makes of the accounts and slots walk_state hands over (start
// sets slots to 0): the account trie's rows in main_rows and each storage trie's in
// storage_rows (keyed by the trie's index), the storage tries' address hashes and roots, the
// preimages, the codes, and in out the counts and the first stated root that differs.
struct StateRowsWalk {
    const StateBuildOptions& o;
    SpillingRows& main_rows;
    SpillingRows& storage_rows;
    RunFile& storage_tries;
    RunFile& account_preimages;
    SpillingPairSorter& slot_preimages;
    SpillingPairSorter& codes;
    StreamedStateBuild& out;
    IndexedRows indexed{storage_rows};
    StackTrie accounts{&main_rows};
    StackTrie storage{&indexed};
    uint32_t tries = 1;
    size_t slots = 0;
    bytes enc{};

    Status slot(const MergedSlot& s) {
        if (slots == 0) {
            MPT_ASSERT(tries < UINT32_MAX);
            indexed.start(tries);
        }
        enc.clear();
        encode_storage_value(enc, s.value);
        ++slots;
        if (o.preimages && s.slot != nullptr) {
            MPT_RETURN_IF_ERROR(slot_preimages.add(s.key, bytes_view(s.slot, 32)));
        }
        return storage.add(s.key, enc);
    }

    Status end(const MergedAccount& a) {
        StateBuildResult& result = out.result;
        Account acct = a.account;
        if (slots != 0) {
            acct.storage_root = storage.finish();
            MPT_RETURN_IF_ERROR(storage_tries.add(a.hash, acct.storage_root));
            ++tries;
            ++result.storage_tries;
            result.slots += slots;
        } else {
            acct.storage_root = a.root_without_slots();
        }
        if (o.check_stated_roots && a.listed && a.claimed && *a.claimed != acct.storage_root &&
            out.stated_mismatch.empty()) {
            out.stated_mismatch = "account " + (a.address ? to_hex(*a.address) : to_hex(a.hash)) +
                                  ": the document gives storage root " + to_hex(*a.claimed) +
                                  ", its slots " + to_hex(acct.storage_root);
        }
        ++result.accounts;
        if (!a.code.empty()) MPT_RETURN_IF_ERROR(codes.add(a.account.code_hash, a.code));
        enc.clear();
        encode_account(enc, acct);
        MPT_RETURN_IF_ERROR(accounts.add(a.hash, enc));
        MPT_RETURN_IF_ERROR(main_rows.status());
        MPT_RETURN_IF_ERROR(storage_rows.status());
        if (o.preimages && a.address) {
            MPT_RETURN_IF_ERROR(account_preimages.add(a.hash, bytes_view(*a.address)));
        }
        return {};
    }
};

}  // namespace

Result<StreamedStateRoot> streamed_state_root(TextStream& stream, const SpillOptions& spill,
                                              unsigned threads) {
    SpillFiles files(spill);
    SpillingPairSorter sorter(files);
    MPT_TRY(const StateStreamResult read, sort_state(stream, sorter));
    StreamedStateRoot out;
    out.doc = doc_info(read);
    std::optional<StateRootInfo> split;
    if (threads > 1 && sorter.runs_spilled() > 0 && sorter.nibbles_used() > 1) {
        MPT_TRY(split, nibble_state_root(sorter, read.first_live, threads));
    }
    if (split) {
        out.info = *split;
    } else {
        StackTrie accounts;
        MPT_RETURN_IF_ERROR(hash_accounts(sorter, read.first_live, accounts, out.info));
        out.info.root = accounts.finish();
    }
    out.doc.temp_files = files.files_made();
    out.doc.temp_bytes = files.bytes_written();
    return out;
}

Result<std::optional<StreamedStateBuild>> build_new_state_file_streamed(const std::string& path,
                                                                        TextStream& stream,
                                                                        const StateBuildOptions& o,
                                                                        const SpillOptions& spill,
                                                                        size_t row_bytes) {
    using Out = std::optional<StreamedStateBuild>;
    if (!WholeFile::may_create(path)) return Out{};
    SpillFiles files(spill);
    SpillingPairSorter sorter(files);
    // The slots' preimages, by hash, each once: a sort of their own (the same slot in many
    // accounts is one preimage). The accounts' come in hash order already. The codes, by
    // hash, are a sort of their own too, of each account's last object.
    SpillOptions pre_options = spill;
    pre_options.run_bytes = std::max<size_t>(row_bytes / 4, 1);
    SpillFiles pre_files(pre_options);
    SpillingPairSorter slot_preimages(pre_files);
    SpillingPairSorter codes(pre_files);
    MPT_TRY(const StateStreamResult read, sort_state(stream, sorter, /*keep_code=*/true));
    StreamedStateBuild out;
    out.doc = doc_info(read);
    StateBuildResult& result = out.result;

    MPT_TRY(RunFile account_preimages, RunFile::create(files));

    const size_t each = std::max<size_t>(row_bytes / 2, 1);
    SpillingRows main_rows(files, each);
    SpillingRows storage_rows(files, each);
    // The storage tries in id order (address-hash order, from id 2 on, after main): each
    // one's address hash and root, kept in a run until the tries table is made.
    MPT_TRY(RunFile storage_tries, RunFile::create(files));
    StateRowsWalk walk{
        o, main_rows, storage_rows, storage_tries, account_preimages, slot_preimages, codes, out};
    MPT_RETURN_IF_ERROR(walk_state(
        sorter, read.first_live,
        [&](const MergedAccount&) -> Status {
            walk.slots = 0;
            return {};
        },
        [&](const MergedSlot& s) { return walk.slot(s); },
        [&](const MergedAccount& a) { return walk.end(a); }));
    result.root = walk.accounts.finish();
    MPT_RETURN_IF_ERROR(main_rows.status());
    MPT_RETURN_IF_ERROR(storage_rows.status());
    result.rows_written = main_rows.rows() + storage_rows.rows();
    MPT_RETURN_IF_ERROR(account_preimages.finish());
    MPT_RETURN_IF_ERROR(slot_preimages.finish());
    MPT_RETURN_IF_ERROR(codes.finish());
    MPT_RETURN_IF_ERROR(storage_tries.finish());
    if (o.check_stated_roots && out.stated_mismatch.empty() && out.doc.claimed_root &&
        *out.doc.claimed_root != result.root) {
        out.stated_mismatch = "the document gives root " + to_hex(*out.doc.claimed_root) +
                              ", its accounts " + to_hex(result.root);
    }
    if (!out.stated_mismatch.empty()) return Out(std::move(out));

    MPT_TRY(DiskStateImage disk, state_image_on_disk(spill.tmp_dir, result.root, storage_tries));
    StateImage& image = disk.image;
    const ImageTail tail{disk.fd, disk.tail_first, disk.tail_pages};
    bytes record;
    const WholeFileTree trees[] = {
        nodes_tree(image.image.nodes_root, main_rows, storage_rows, record),
        preimages_tree(image.preimages_root, account_preimages, slot_preimages, result.preimages,
                       record),
        codes_tree(image.image.codes_root, codes, result.codes, record)};
    MPT_TRY(const bool written, write_whole_file(path, image.image, trees, tail));
    if (!written) return Out{};
    out.doc.temp_files = files.files_made() + pre_files.files_made();
    out.doc.temp_bytes = files.bytes_written() + pre_files.bytes_written();
    return Out(out);
}

}  // namespace mpt
