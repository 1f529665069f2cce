#include <mpt/ops/kv_root.hpp>

#include <mpt/core/keccak.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <optional>
#include <span>

namespace mpt {
namespace {

// The root of a split root's branch (split_root), with its pairs; nothing when there is no
// branch of the parts.
template <typename HashPart>
Result<std::optional<KvRoot>> split_kv_root(unsigned threads, HashPart&& hash,
                                            const bytes& top_value) {
    size_t pairs = 0;
    MPT_TRY(const std::optional<bytes> enc, split_root(threads, hash, top_value, pairs));
    if (!enc) return std::optional<KvRoot>();
    return std::optional<KvRoot>(KvRoot{keccak256(*enc), pairs});
}

// kv_root on threads: when the final keys make a branch at the root, the subtrie under each of
// its children is built from the cursor's range of that nibble, the ranges on a pool of
// threads. Nothing when they do not (all keys start with one nibble, or only the empty key
// is left): the caller then builds otherwise.
Result<std::optional<KvRoot>> nibble_split_root(SortedPairCursor& cursor, unsigned threads) {
    if (!splits_at_root(cursor)) return std::optional<KvRoot>();
    bytes top_value;  // the empty key's value, which the root branch holds
    return split_kv_root(
        threads,
        [&](size_t v, NibblePart& part) {
            hash_part(part, 1, nullptr, [&](StackTrie& st) {
                return add_cursor_range(cursor, cursor.nibble_range(static_cast<unsigned>(v)), st,
                                        top_value);
            });
        },
        top_value);
}

}  // namespace

bool splits_at_root(const SortedPairCursor& cursor) noexcept {
    if (!cursor.splits_by_nibble()) return false;
    size_t ranges_with_keys = 0;
    for (unsigned v = 0; v < 16; ++v) {
        ranges_with_keys += cursor.entries(cursor.nibble_range(v)) != 0;
    }
    return ranges_with_keys >= 2;
}

Status add_cursor_range(SortedPairCursor& cursor, SortedPairCursor::Range range, StackTrie& st,
                        bytes& top_value, const std::function<void(size_t)>& added) {
    for (std::span<const KvPair> run; !(run = cursor.next(range)).empty();) {
        if (run.front().key.empty()) {  // the least key: range 0's first
            top_value.assign(run.front().value.begin(), run.front().value.end());
            run = run.subspan(1);
        }
        MPT_RETURN_IF_ERROR(add_fetching_ahead(st, run));
        if (added) added(run.size());
    }
    return {};
}

Result<std::optional<bytes>> root_branch_of_parts(const std::array<NibblePart, 16>& parts,
                                                  bytes_view top_value, size_t& pairs) {
    size_t items = top_value.empty() ? 0 : 1;
    pairs = items;
    std::array<NodeRef, 16> children;
    for (size_t v = 0; v < parts.size(); ++v) {
        MPT_RETURN_IF_ERROR(parts[v].status);
        items += parts[v].ref.empty() ? 0 : 1;
        pairs += parts[v].pairs;
        children[v] = parts[v].ref;
    }
    if (items < 2) return std::optional<bytes>();
    bytes enc;
    encode_branch(enc, children.data(), top_value);
    return std::optional<bytes>(std::move(enc));
}

Result<bool> branches_above_byte_parts(const std::array<NibblePart, 256>& parts,
                                       bytes_view top_value, std::array<bytes, 17>& top,
                                       size_t& pairs) {
    std::array<NibblePart, 16> branches;
    for (size_t v = 0; v < 16; ++v) {
        std::array<NibblePart, 16> below;
        std::copy_n(parts.begin() + static_cast<ptrdiff_t>(16 * v), 16, below.begin());
        MPT_TRY(std::optional<bytes> enc,
                root_branch_of_parts(below, bytes_view(), branches[v].pairs));
        if (!enc) return false;
        branches[v].ref = NodeRef::of(*enc);
        top[v + 1] = std::move(*enc);
    }
    MPT_TRY(std::optional<bytes> enc, root_branch_of_parts(branches, top_value, pairs));
    if (!enc) return false;
    top[0] = std::move(*enc);
    return true;
}

Result<KvRoot> kv_root(const KvInput& input, bool secure, unsigned threads) {
    SortedPairCursor cursor(input, secure, threads);
    if (threads > 1 && input.size() >= kParallelRootMinPairs && cursor.splits_by_nibble()) {
        MPT_TRY(std::optional<KvRoot> split, nibble_split_root(cursor, threads));
        if (split) return *split;
        // The keys share their first nibble, or deletions left those of one: gathered, they
        // split below what they share. (After deletions every bucket is read a second time.)
        const std::vector<KvPair> pairs = cursor.rest();
        MPT_TRY(const Hash256 root, stack_trie_root(pairs, threads));
        return KvRoot{root, pairs.size()};
    }
    StackTrie st;
    for (std::span<const KvPair> run; !(run = cursor.next()).empty();)
        MPT_RETURN_IF_ERROR(add_fetching_ahead(st, run));
    const size_t pairs = st.count();
    return KvRoot{st.finish(), pairs};
}

namespace {

// The physical memory, or SIZE_MAX where it is not known.
size_t physical_memory() noexcept {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return SIZE_MAX;
    return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
}

}  // namespace

bool spill_around_cache(uint64_t input_bytes) noexcept {
    if (input_bytes == 0) return true;
    return input_bytes + input_bytes / 2 > physical_memory() / 2;
}

KvMemoryPlan plan_kv_memory(size_t memory, double bytes_per_text_byte, double run_share,
                            std::string tmp_dir, unsigned threads, uint64_t input_bytes) {
    KvMemoryPlan p;
    memory = std::max<size_t>(memory, 1);
    p.whole_limit = static_cast<size_t>(static_cast<double>(memory) / bytes_per_text_byte);
    // A piece's text, its decoded bytes and its entries: at most about three times
    // piece_bytes (entries of a few bytes); with the stream's read_ahead up to four pieces
    // are held (two waiting, one being parsed, one handed out), under a fifth of the budget.
    p.piece_bytes = std::clamp<size_t>(memory / 64, 64, size_t{32} << 20);
    p.max_entry_bytes = std::max(memory / 4, p.piece_bytes);
    p.spill = SpillOptions::for_memory(memory, std::move(tmp_dir));
    p.spill.direct = p.spill.direct && spill_around_cache(input_bytes);
    p.spill.overlap = threads > 1;
    if (p.spill.overlap) run_share /= 2;
    p.spill.run_bytes =
        std::max<size_t>(static_cast<size_t>(static_cast<double>(memory) * run_share), 1);
    return p;
}

size_t spill_hold_bytes(const KvMemoryPlan& p, size_t memory) noexcept {
    if (!p.spill.direct) return 0;
    // The runs of at most spread_run_bytes in the room of two runs (SpillingPairSorter), and
    // the pieces read ahead, about three times piece_bytes each (plan_kv_memory).
    const size_t runs = std::min(2 * p.spill.run_bytes, kMaxRunsHeld * p.spill.spread_run_bytes);
    const size_t pieces = (KvStreamReader::kAhead + 2) * 3 * p.piece_bytes;
    const size_t half = memory / 2;
    return half > runs + pieces ? half - runs - pieces : 0;
}

size_t memory_limit() noexcept {
    size_t limit = physical_memory();
    struct rlimit as {};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        limit = std::min<size_t>(limit, as.rlim_cur);
    }
    return limit;
}

size_t default_kv_memory() noexcept {
    return std::clamp<size_t>(memory_limit() / 4, size_t{64} << 20, size_t{4} << 30);
}

Status sort_kv_stream(KvStreamReader& stream, bool secure, bool keep_keys,
                      SpillingPairSorter& sorter,
                      const std::function<Status(const KvInput&)>& check) {
    KvInput piece;
    while (true) {
        MPT_TRY(const bool more, stream.next(piece));
        if (!more) break;
        if (check) MPT_RETURN_IF_ERROR(check(piece));
        if (secure) {
            // The keys hashed together on the SIMD lanes; the first failed add ends the rest.
            Status added;
            keccak256_each(
                piece.size(), [&](size_t i) { return piece[i].key; },
                [&](size_t i, const Hash256& h) {
                    if (!added) return;
                    const KvPair p = piece[i];
                    added = sorter.add(h, p.value, keep_keys ? p.key : bytes_view());
                });
            MPT_RETURN_IF_ERROR(added);
        } else {
            for (size_t i = 0; i < piece.size(); ++i) {
                const KvPair p = piece[i];
                MPT_RETURN_IF_ERROR(sorter.add(p.key, p.value));
            }
        }
        piece = KvInput();  // its text and arena go before the next is read
    }
    return sorter.finish();
}

Status add_spilled_batch(StackTrie& st, std::span<const KvPair> run) {
    MPT_RETURN_IF_ERROR(add_fetching_ahead(st, run.first(run.size() - 1)));
    return st.add(run.back().key, run.back().value);
}

namespace {

// kv_root_sorted on threads, as nibble_split_root: the subtrie under each child of the root
// branch from the merge of the runs' parts of that nibble. Nothing when the final keys make
// no branch at the root.
//
// A part's records are released (SpillingPairSorter::release_nibble) once it is hashed and the
// root is known to be a branch of the parts (two of its items seen: parts with pairs, or one
// and the empty key's value), so that no caller reads them again: their room is freed while
// the other parts are hashed, not all at the end.
Result<std::optional<KvRoot>> spilled_nibble_root(const SpillingPairSorter& sorter,
                                                  unsigned threads) {
    bytes top_value;  // the empty key's value, which the root branch holds
    std::mutex mutex;
    std::vector<unsigned> hashed;  // parts hashed, not yet released
    size_t items = 0;              // the root branch's items seen
    const auto release = [&](unsigned v, bool has_pairs, bool has_top) {
        const std::lock_guard lock(mutex);
        items += (has_pairs ? 1 : 0) + (has_top ? 1 : 0);
        hashed.push_back(v);
        if (items < 2) return;
        for (const unsigned h : hashed) sorter.release_nibble(h);
        hashed.clear();
    };
    return split_kv_root(
        threads,
        [&](size_t v, NibblePart& part) {
            hash_part(part, 1, nullptr, [&](StackTrie& st) {
                return add_nibble_stream(sorter, static_cast<unsigned>(v), st, top_value);
            });
            // top_value is set by part 0, on this thread.
            release(static_cast<unsigned>(v), !part.ref.empty(), v == 0 && !top_value.empty());
        },
        top_value);
}

// The final pairs of stream into st, as add_nibble_stream says.
Status add_stream(
    SpilledPairStream* stream, StackTrie& st, bytes& top_value,
    const std::function<Status(std::span<const KvPair>, std::span<const bytes_view>)>& each) {
    while (true) {
        MPT_TRY(std::span<const KvPair> pairs, stream->next());
        if (pairs.empty()) return {};
        std::span<const bytes_view> extras = stream->extras();
        if (pairs.front().key.empty()) {  // the least key: nibble 0's (byte 0's) first
            top_value.assign(pairs.front().value.begin(), pairs.front().value.end());
            pairs = pairs.subspan(1);
            extras = extras.empty() ? extras : extras.subspan(1);
            if (pairs.empty()) continue;
        }
        MPT_RETURN_IF_ERROR(add_spilled_batch(st, pairs));
        if (each) MPT_RETURN_IF_ERROR(each(pairs, extras));
    }
}

}  // namespace

Status add_nibble_stream(
    const SpillingPairSorter& sorter, unsigned v, StackTrie& st, bytes& top_value,
    const std::function<Status(std::span<const KvPair>, std::span<const bytes_view>)>& each) {
    MPT_TRY(const std::unique_ptr<SpilledPairStream> stream, sorter.nibble_stream(v));
    return add_stream(stream.get(), st, top_value, each);
}

Status add_byte_stream(
    const SpillingPairSorter& sorter, unsigned b, StackTrie& st, bytes& top_value,
    const std::function<Status(std::span<const KvPair>, std::span<const bytes_view>)>& each) {
    MPT_TRY(const std::unique_ptr<SpilledPairStream> stream, sorter.byte_stream(b));
    return add_stream(stream.get(), st, top_value, each);
}

Result<KvRoot> kv_root_sorted(SpillingPairSorter& sorter, unsigned threads) {
    if (threads > 1 && sorter.runs_spilled() > 0 && sorter.nibbles_used() > 1) {
        MPT_TRY(std::optional<KvRoot> split, spilled_nibble_root(sorter, threads));
        if (split) return *split;
        // The final keys share their first nibble (or only one is left): hashed in one.
    }
    StackTrie st;
    while (true) {
        MPT_TRY(const std::span<const KvPair> run, sorter.next());
        if (run.empty()) break;
        MPT_RETURN_IF_ERROR(add_spilled_batch(st, run));
    }
    const size_t pairs = st.count();
    return KvRoot{st.finish(), pairs};
}

}  // namespace mpt
