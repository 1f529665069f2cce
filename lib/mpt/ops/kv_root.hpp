// Roots of key/value documents: the one place that joins the input layer's sorted pairs to
// the trie layer's streaming builder.
//
// Thread safety: kv_root starts and joins its own threads.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/kv_stream.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/task_pool.hpp>

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

namespace mpt {

// The root of a document's final content and the number of its pairs: the root
// stack_trie_root gives for sorted_final_pairs. The pairs are hashed a run at a time as a
// SortedPairCursor puts them in order, and are not gathered first. With more than one thread
// and at least kParallelRootMinPairs entries, the subtries under a root branch are built one
// per first nibble on a pool of threads, each from its own part of the cursor. Only final
// keys that all start with one nibble are gathered, and split below it as stack_trie_root
// does.
struct KvRoot {
    Hash256 root;
    size_t pairs = 0;
};
Result<KvRoot> kv_root(const KvInput& input, bool secure, unsigned threads = 1);

// How a key/value command holds its input within a memory budget of `memory` bytes
// (--memory): a document of at most whole_limit bytes is read whole and takes the paths
// above; a larger one is read in pieces of piece_bytes (a 32nd of the budget, at most 32 MiB;
// one entry may take up to a quarter) and sorted by a SpillingPairSorter whose runs hold
// run_share of the budget and go to temporary files in tmp_dir. bytes_per_text_byte is what
// the whole path takes for each byte of text (measured: about 1.6 for a root, 1.9 for a bulk
// build, of 32-byte hex keys and values). With more than one thread a full run is sorted and
// written while the next is filled (SpillOptions::overlap), each of the two runs in memory
// holding half of run_share, and the commands read the next piece on a thread of its own
// (KvStreamReader::read_ahead). input_bytes, the document's size (0: not known, a pipe),
// decides whether the temporary files go around the page cache (spill_around_cache).
struct KvMemoryPlan {
    size_t whole_limit = 0;
    size_t piece_bytes = 0;
    size_t max_entry_bytes = 0;
    SpillOptions spill;
};
KvMemoryPlan plan_kv_memory(size_t memory, double bytes_per_text_byte, double run_share,
                            std::string tmp_dir, unsigned threads = 1, uint64_t input_bytes = 0);

// The bytes of a spilled root's buckets to keep in memory rather than write
// (SpillOptions::hold_bytes), under plan p for a budget of `memory`: where the buckets go
// around the page cache, half the budget less what the first phase takes besides (the runs
// being spread and written, the pieces read ahead); the other half is the buckets' buffers
// and the buckets read back. Through the cache, none: a write there waits for nothing, and
// memory held costs as much as the cache's (a 10M root under --memory 512M: no faster).
size_t spill_hold_bytes(const KvMemoryPlan& p, size_t memory) noexcept;

// Whether the temporary files of a document of input_bytes (0: not known) go around the page
// cache (SpillOptions::direct): where the document and its files, about half as large again,
// would take more than half of the physical memory, or its size is not known. Below that the
// cache holds both, and a write to the files does not wait for the disk (a 10M-pair root under
// --memory 512M, 1.4 GB of text: 2.91 s around the cache, 2.06 s through it; the build 4.53
// and 3.26 s); above it, caching them cost the input's pages and fresh memory (100M pairs,
// 14 GB, roots: 72 and 60 s through the cache, 50 and 53 s around it).
bool spill_around_cache(uint64_t input_bytes) noexcept;

// The memory this process may take: the lesser of the physical memory and its address space
// limit (ulimit -v); SIZE_MAX where neither is known.
size_t memory_limit() noexcept;

// The default memory budget: a quarter of memory_limit(), at most 4 GiB, at least 64 MiB.
size_t default_kv_memory() noexcept;

// Adds every entry of the stream to sorter in input order, the key hashed when secure, with
// keep_keys the key itself as the entry's extra bytes; then finishes the sorter. check, when
// given, is called on every piece first. Errors: the stream's, the sorter's and check's.
Status sort_kv_stream(KvStreamReader& stream, bool secure, bool keep_keys,
                      SpillingPairSorter& sorter,
                      const std::function<Status(const KvInput&)>& check = {});

// The root of the final content of a finished sorter (kv_root's for the same entries). With
// more than one thread and runs spilled, the subtries under a root branch are built one per
// first nibble on a pool of threads, each from its own merge of the runs' parts of that
// nibble (as kv_root splits); keys that all start with one nibble are hashed on the calling
// thread. Errors: the sorter's.
Result<KvRoot> kv_root_sorted(SpillingPairSorter& sorter, unsigned threads = 1);

// The builders that split a trie at its root, one task per first nibble (kv_root,
// kv_root_sorted, the spilled bulk build): what each task made of its nibble's pairs.
struct NibblePart {
    NodeRef ref;  // the child the root branch holds (empty: no pair)
    size_t pairs = 0;
    Status status;
};

// The root branch of the parts, holding top_value (the empty key's value) as its own: its
// RLP, and the pairs of all parts (and the empty key) in pairs. Nothing when fewer than two of
// them are there (deletions can leave the keys of one nibble only): the root is then no
// branch of these parts, and the caller builds otherwise. Errors: the first part's that failed.
Result<std::optional<bytes>> root_branch_of_parts(const std::array<NibblePart, 16>& parts,
                                                  bytes_view top_value, size_t& pairs);

// Whether the final keys of cursor make a branch at the root of their own (keys in two
// first-nibble ranges or more), so that a root can be split under it by nibble_range; known
// without a look at the keys, before deletions (a caller checks the branch it gets).
bool splits_at_root(const SortedPairCursor& cursor) noexcept;

// Adds to st, a builder at depth 1 (or 2), the final pairs of cursor in its nibble_range(v)
// (or byte_range(b)), sorted as they go; the empty key (range 0's first) is not added, its
// value copied to top_value instead. added, when given, is told how many pairs each batch
// added. Different ranges may be added on different threads at once. Errors as
// StackTrie::add.
Status add_cursor_range(SortedPairCursor& cursor, SortedPairCursor::Range range, StackTrie& st,
                        bytes& top_value, const std::function<void(size_t)>& added = {});

// The 17 branches above the 256 parts of a trie split two nibbles down (part b: the keys of
// first byte b): top[0] the root's rlp, holding top_value, and top[1 + v] the branch of the
// parts of first nibble v. False when they are not all branches of these parts (the caller
// builds otherwise); pairs counts the parts' pairs and the empty key. Errors: the first
// part's that failed.
Result<bool> branches_above_byte_parts(const std::array<NibblePart, 256>& parts,
                                       bytes_view top_value, std::array<bytes, 17>& top,
                                       size_t& pairs);

// Hashes one part of a split trie: add(st) puts the part's pairs into st, a builder at depth
// whose rows go to sink (nullptr: none); the part takes add's status, the builder's count
// and the reference it makes.
template <typename Add>
void hash_part(NibblePart& part, size_t depth, NodeSink* sink, Add&& add) {
    StackTrie st(sink, depth);
    part.status = add(st);
    part.pairs = st.count();
    part.ref = st.finish_ref();
}

// The one driver of a trie split under its root branch (kv_root, kv_root_sorted, the spilled
// state root and the spilled build): hash(v, parts[v]) makes the part of first nibble v
// (hash_part), the 16 on up to `threads` threads (run_tasks); then the root branch of the
// parts with top_value, as set by then, as root_branch_of_parts makes it.
template <typename HashPart>
Result<std::optional<bytes>> split_root(unsigned threads, HashPart&& hash, const bytes& top_value,
                                        size_t& pairs) {
    std::array<NibblePart, 16> parts;
    run_tasks(threads, parts.size(), [&](size_t v, unsigned self) {
        // A hash that keeps counts per thread takes the thread's number (run_tasks's self).
        if constexpr (std::is_invocable_v<HashPart&, size_t, NibblePart&, unsigned>) {
            hash(v, parts[v], self);
        } else {
            hash(v, parts[v]);
        }
    });
    return root_branch_of_parts(parts, top_value, pairs);
}

// The driver of a trie split two nibbles down (the deep builds, in memory and spilled):
// hash(b, parts[b], self) makes the part of first byte b (hash_part at depth 2), the 256 on up
// to `threads` threads, taken in key order (run_tasks); then the branches above them, as
// branches_above_byte_parts makes them, with top_value as set by then.
template <typename HashPart>
Result<bool> split_root_deep(unsigned threads, HashPart&& hash, const bytes& top_value,
                             std::array<bytes, 17>& top, size_t& pairs) {
    std::array<NibblePart, 256> parts;
    run_tasks(threads, parts.size(), [&](size_t b, unsigned self) { hash(b, parts[b], self); });
    return branches_above_byte_parts(parts, top_value, top, pairs);
}

// Adds a batch of a spilled sort's pairs (SpillingPairSorter::next, a SpilledPairStream) to
// st, whose views end with the next batch: the builder keeps a view of the last pair until
// the next, so that pair is copied. REQUIRES: run is not empty. Errors as StackTrie::add.
Status add_spilled_batch(StackTrie& st, std::span<const KvPair> run);

// Adds to st, a builder at depth 1, the final pairs of a finished sorter whose keys start with
// nibble v, read through the sorter's nibble_stream(v); the empty key (nibble 0's first) is
// not added, its value copied to top_value instead. each, when given, also sees every batch
// added and its extras. REQUIRES: sorter.runs_spilled() > 0. Errors: the sorter's, the
// builder's and each's.
Status add_nibble_stream(
    const SpillingPairSorter& sorter, unsigned v, StackTrie& st, bytes& top_value,
    const std::function<Status(std::span<const KvPair>, std::span<const bytes_view>)>& each = {});

// As add_nibble_stream, for the final pairs whose keys start with byte b, into a builder at
// depth 2 (the empty key is byte 0's first).
Status add_byte_stream(
    const SpillingPairSorter& sorter, unsigned b, StackTrie& st, bytes& top_value,
    const std::function<Status(std::span<const KvPair>, std::span<const bytes_view>)>& each = {});

}  // namespace mpt
