#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <mpt/ops/bulk_build.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/ops/path_order.hpp>
#include <mpt/ops/row_buffer.hpp>
#include <mpt/ops/trie_file_writer.hpp>
#include <mpt/store/btree_writer.hpp>
#include <mpt/store/sqlite_store.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>
#include <mutex>
#include <new>

namespace mpt {
namespace {

using build_detail::ByteParts;
using build_detail::kNotThisWay;
using build_detail::Overlapped;
using build_detail::PartRows;
using build_detail::PartRowsOf;
using build_detail::PreimageRecords;
using build_detail::RowBuffer;
using build_detail::RowVisitor;
using build_detail::SplitHash;
using build_detail::SplitHasher;
using build_detail::write_trie_file;
using build_detail::write_while_hashing;

// More than what the rows of a trie of pairs take in memory: for 1M pairs of 32-byte keys and
// values, 1.36M rows of 124 MB with a 16-byte reference and 8 bytes for their order each,
// ~157 bytes a pair; here the pair's bytes twice and 160 bytes (288).
size_t row_memory(size_t pairs, size_t pair_bytes) noexcept { return 2 * pair_bytes + 160 * pairs; }

// The limit of a cgroup (v2) the process is in, if one is set: a container's memory.
std::optional<size_t> cgroup_memory_max() {
    std::ifstream self("/proc/self/cgroup");
    std::string line;
    while (std::getline(self, line)) {
        if (!line.starts_with("0::")) continue;
        std::ifstream max("/sys/fs/cgroup" + line.substr(3) + "/memory.max");
        unsigned long long bytes = 0;
        if (max >> bytes) return static_cast<size_t>(bytes);  // "max" reads as no number
    }
    return std::nullopt;
}

// Half of the least of the physical memory, the address space the process may take
// (ulimit -v) and its cgroup's memory.
size_t memory_limit(const BuildOptions& o) {
    if (o.bulk_memory != 0) return o.bulk_memory;
    size_t limit = SIZE_MAX;
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0)
        limit = static_cast<size_t>(pages) * static_cast<size_t>(page_size);
    struct rlimit as {};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        limit = std::min<size_t>(limit, as.rlim_cur);
    }
    if (const std::optional<size_t> cgroup = cgroup_memory_max()) limit = std::min(limit, *cgroup);
    return limit / 2;
}

// The preimages of a build held in memory, in hash order.
PreimageRecords records_of(std::span<const Preimage> items) {
    return [items](const std::function<Status(bytes_view)>& add) -> Status {
        bytes record;
        for (const auto& [hash, preimage] : items) {
            record.clear();
            append_blob_record(record, hash, preimage);
            MPT_RETURN_IF_ERROR(add(record));
        }
        return {};
    };
}

// sorted_final_pairs on threads, split by first nibble as kv_root splits: each task puts
// the final pairs of one nibble's range where that range's entries would begin, and the
// ranges are then moved together. Below kParallelRootMinPairs or on one thread,
// sorted_final_pairs itself.
SortedPairs sorted_final_pairs_on(const KvInput& input, bool secure, unsigned threads) {
    if (threads <= 1 || input.size() < kParallelRootMinPairs) {
        return sorted_final_pairs(input, secure);
    }
    SortedPairCursor cursor(input, secure, threads);
    SortedPairs out;
    if (!cursor.splits_by_nibble()) {
        out.pairs = cursor.rest();
        out.hashed_keys = std::move(cursor).take_hashed_keys();
        return out;
    }
    std::array<size_t, 17> start{};
    for (unsigned v = 0; v < 16; ++v) {
        start[v + 1] = start[v] + cursor.entries(cursor.nibble_range(v));
    }
    out.pairs.resize(start[16]);
    std::array<size_t, 16> got{};
    run_tasks(threads, 16, [&](size_t v, unsigned) {
        SortedPairCursor::Range range = cursor.nibble_range(static_cast<unsigned>(v));
        size_t at = start[v];
        for (std::span<const KvPair> run; !(run = cursor.next(range)).empty(); at += run.size()) {
            std::copy(run.begin(), run.end(), out.pairs.begin() + static_cast<ptrdiff_t>(at));
        }
        got[v] = at - start[v];
    });
    size_t n = got[0];
    for (size_t v = 1; v < 16; ++v) {
        const auto from = out.pairs.begin() + static_cast<ptrdiff_t>(start[v]);
        std::copy(from, from + static_cast<ptrdiff_t>(got[v]),
                  out.pairs.begin() + static_cast<ptrdiff_t>(n));
        n += got[v];
    }
    out.pairs.resize(n);
    out.hashed_keys = std::move(cursor).take_hashed_keys();
    return out;
}

// The build of pairs sorted already, into file.
Result<std::optional<BuildResult>> write_sorted(WholeFile& file, const KvInput& input,
                                                const BuildOptions& o, const SortedPairs& sorted) {
    size_t pair_bytes = 0;
    for (const KvPair& p : sorted.pairs) pair_bytes += p.key.size() + p.value.size();
    if (row_memory(sorted.pairs.size(), pair_bytes) > memory_limit(o)) return kNotThisWay;
    const bool split = o.threads > 1 && sorted.pairs.size() >= kParallelRootMinPairs;
    PartRows rows(o.progress, sorted.pairs.size());
    rows.reserve(pair_bytes, split);
    const std::vector<Preimage> preimage_items =
        o.secure && o.preimages ? secure_preimages(input, sorted) : std::vector<Preimage>();
    const PreimageRecords preimages =
        o.secure && o.preimages ? records_of(preimage_items) : PreimageRecords();
    BuildResult result;
    if (split) {
        // Each part's buffers go to a later part once the writer has written it.
        const PartRowsOf part_rows = [&](size_t v, const RowVisitor& f) {
            return rows.write_out(v, f);
        };
        const SplitHasher hash =
            [&](const std::function<void(size_t)>& part_done) -> Result<SplitHash> {
            rows.on_done(part_done);
            Result<Hash256> root =
                stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &rows);
            rows.on_done({});
            if (!root) return root.error();
            SplitHash h;
            h.result.root = *root;
            h.result.created = true;
            h.result.rows_written = rows.rows();
            const RowBuffer& top = rows.rows_of(PartSinks::kTopPart);
            if (top.order.size() == 1 && top.path(top.order[0]).empty()) {
                const bytes_view rlp = top.rlp(top.order[0]);
                h.top_rlps.emplace_back(rlp.begin(), rlp.end());
            }
            return h;
        };
        MPT_TRY(Overlapped written, write_while_hashing(file, o, preimages, {part_rows}, hash));
        if (written.written) return written.file;
        // The rows are written once more, from the start of the file: hashed again first where
        // the parts written gave their buffers away.
        MPT_RETURN_IF_ERROR(file.restart());
        result = written.result;
        if (rows.recycled()) {
            PartRows again(o.progress, sorted.pairs.size());
            again.reserve(pair_bytes, split);
            const Result<Hash256> root =
                stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &again);
            if (!root) return root.error();
            return write_trie_file<true>(file, o, result, preimages,
                                         [&](auto&& f) { return again.for_each(f); });
        }
    } else {
        MPT_TRY(result.root,
                stack_trie_root(sorted.pairs, o.threads, kParallelRootMinPairs, &rows));
        result.created = true;
        result.rows_written = rows.rows();
    }
    return write_trie_file<true>(file, o, result, preimages,
                                 [&](auto&& f) { return rows.for_each(f); });
}

// The bytes of input's pairs as the trie keys them (a secure trie's keys are 32 bytes): no
// fewer than the final pairs' (a key given twice, or deleted, counts here all the same).
size_t input_pair_bytes(const KvInput& input, bool secure) noexcept {
    size_t bytes = 0;
    for (size_t i = 0; i < input.size(); ++i) {
        const KvPair p = input[i];
        bytes += (secure ? 32 : p.key.size()) + p.value.size();
    }
    return bytes;
}

// What write_streamed did: wrote the file (file: its result, or nullopt when the name was
// taken meanwhile), wrote nothing as the rows would take more than the memory it may, or
// found the rows above the parts otherwise than foreseen (the file is to be written anew).
struct Streamed {
    enum class Outcome { written, too_large, anew } outcome = Outcome::anew;
    std::optional<BuildResult> file;
};

// The build split two nibbles down, as the spilled deep build splits it: each of the 256
// parts (the keys of one first byte) sorted from the cursor's range of that byte on the
// thread that hashes it, a part to a task in key order, its rows written out (ByteParts,
// write_while_hashing) while the later ones are hashed. Rows above the parts other than the
// branches foreseen (deletions left the keys of one nibble only, or of one second nibble
// under a first) are Outcome::anew.
// REQUIRES: cursor.splits_by_byte().
Result<Streamed> write_streamed(WholeFile& file, const KvInput& input, const BuildOptions& o,
                                SortedPairCursor& cursor) {
    const size_t pair_bytes = input_pair_bytes(input, o.secure);
    if (row_memory(input.size(), pair_bytes) > memory_limit(o)) {
        return Streamed{Streamed::Outcome::too_large, std::nullopt};
    }
    ByteParts rows(o.progress, input.size(), pair_bytes);
    const PartRowsOf part_rows = [&](size_t b, const RowVisitor& f) {
        return rows.write_out(b, f);
    };
    const SplitHasher hash =
        [&](const std::function<void(size_t)>& part_done) -> Result<SplitHash> {
        bytes top_value;  // the empty key's value, which the root branch holds
        // Progress after every kProgressPairs pairs a thread added, as stack_trie_root gives it.
        std::vector<size_t> added(o.threads, 0);
        std::array<bytes, 17> top;
        size_t pairs = 0;
        const auto hash_byte = [&](size_t b, NibblePart& part, unsigned self) {
            const auto progress = [&](size_t n) {
                for (added[self] += n; added[self] >= PartSinks::kProgressPairs;
                     added[self] -= PartSinks::kProgressPairs) {
                    rows.advanced();
                }
            };
            hash_part(part, 2, rows.begin(b), [&](StackTrie& st) {
                return add_cursor_range(cursor, cursor.byte_range(static_cast<unsigned>(b)), st,
                                        top_value, progress);
            });
            rows.done(b);
            part_done(b);
        };
        MPT_TRY(const bool branches, split_root_deep(o.threads, hash_byte, top_value, top, pairs));
        SplitHash h;
        h.result.created = true;
        if (branches) {
            h.result.root = keccak256(top[0]);
            h.result.rows_written = rows.rows() + top.size();
            h.top_rlps.assign(top.begin(), top.end());
        }
        return h;
    };
    MPT_TRY(const Overlapped written,
            write_while_hashing(file, o, PreimageRecords(), {part_rows, {ByteParts::kParts, true}},
                                hash));
    if (!written.written) return Streamed{};
    return Streamed{Streamed::Outcome::written, written.file};
}

// The build, once the way is open, into file: streamed from the sorting cursor where it
// splits under a root branch and keeps no preimages, else from the pairs sorted first.
Result<std::optional<BuildResult>> write_new_file(WholeFile& file, const KvInput& input,
                                                  const BuildOptions& o) {
    if (o.threads > 1 && input.size() >= kParallelRootMinPairs && !(o.secure && o.preimages)) {
        SortedPairCursor cursor(input, o.secure, o.threads);
        if (cursor.splits_by_byte() && splits_at_root(cursor)) {
            MPT_TRY(const Streamed streamed, write_streamed(file, input, o, cursor));
            if (streamed.outcome == Streamed::Outcome::written) return streamed.file;
            if (streamed.outcome == Streamed::Outcome::too_large) return kNotThisWay;
            // Written anew from the start, from the pairs gathered: the cursor reads every
            // bucket again.
            MPT_RETURN_IF_ERROR(file.restart());
            SortedPairs sorted;
            sorted.pairs = cursor.rest();
            sorted.hashed_keys = std::move(cursor).take_hashed_keys();
            return write_sorted(file, input, o, sorted);
        }
    }
    return write_sorted(file, input, o, sorted_final_pairs_on(input, o.secure, o.threads));
}

}  // namespace

Result<std::optional<BuildResult>> build_new_trie_file(const std::string& path,
                                                       const KvInput& input,
                                                       const BuildOptions& o) {
    MPT_TRY(std::optional<WholeFile> file, WholeFile::create(path));
    if (!file) return kNotThisWay;
    try {
        return write_new_file(*file, input, o);
    } catch (const std::bad_alloc&) {
        // More memory than the estimate foresaw: what was taken is given back on the way
        // here, and the store keeps the rows on disk.
        return kNotThisWay;
    }
}

}  // namespace mpt
