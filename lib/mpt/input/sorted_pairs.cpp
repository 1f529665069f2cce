// The final pairs of a key/value input in key order (kv_input.hpp: SortedPairCursor,
// sorted_final_pairs).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/stream_limit.hpp>
#include <span>
#include <utility>

namespace mpt {

namespace {

using kv_detail::key_prefix;

// Large inputs are put in 65536 buckets by the top 16 bits of their keys, in one counting
// pass and one scattering pass, and each bucket is sorted alone when it is reached (hashed
// keys leave a handful in each). Skewed keys only make some buckets larger. Smaller inputs
// take 256 buckets by the first byte or 16 by the first nibble, so that they still split by
// them, and the smallest one.
constexpr unsigned kBucketBits = 16;
constexpr size_t kBucketMinPairs = size_t{1} << kBucketBits;
constexpr unsigned kByteBits = 8;
constexpr size_t kByteBucketMinPairs = 4096;
constexpr unsigned kNibbleBits = 4;
constexpr size_t kNibbleBucketMinPairs = 16;

// A run handed out holds the pairs of whole buckets, at least this many unless it is the
// last: the records sorted for it are still in cache when their entries are read.
constexpr size_t kRunPairs = 1024;

// With 65536 buckets, the records are put in the buckets of their first byte, and then those
// of each first byte in the buckets of their second (SortedPairCursor::scatter_twice), where
// no first byte has more than this many: a copy of one then stays in the cache.
constexpr size_t kByteGroupMax = size_t{1} << 20;

// A bucket of kCountedMin to kCountedMax records is sorted by the byte after its bits first
// (below kCountedByteMin records, by the nibble), into a copy on the stack, where hashed keys
// leave a few to a value; an insertion sort then finds them nearly in order. Where more than
// kCountedSame share that value, std::sort, which otherwise takes 2 us a bucket of 150, its
// comparisons mispredicted half the time.
constexpr size_t kCountedMin = 8;
constexpr size_t kCountedByteMin = 64;
constexpr size_t kCountedMax = 1024;
constexpr uint32_t kCountedSame = 16;

// Below this many pairs the cursor is made on the calling thread alone: a thread started costs
// about what counting a few thousand keys does.
constexpr size_t kSliceMinPairs = size_t{1} << 16;

}  // namespace

// Calls f(part, begin, end) for `parts` consecutive slices of [0, n), part 0 on this thread
// and each other on a thread of its own; returns when all have.
template <typename F>
void for_slices(unsigned parts, size_t n, F&& f) {
    std::vector<std::future<void>> others;
    for (unsigned p = 1; p < parts; ++p) {
        others.push_back(std::async(
            std::launch::async, [&f, p, parts, n] { f(p, n * p / parts, n * (p + 1) / parts); }));
    }
    f(0u, size_t{0}, n / parts);
    for (std::future<void>& o : others) o.get();
}

SortedPairCursor::SortedPairCursor(const KvInput& input, bool secure, unsigned threads)
    : input_(&input) {
    const size_t n = input.size();
    // Each thread hashes, counts and scatters a slice of the input, where there are pairs
    // enough to pay for starting one.
    const unsigned parts = n >= kSliceMinPairs ? std::clamp(threads, 1u, 8u) : 1u;
    if (secure) {
        reserve_huge(hashed_keys_, n);
        hashed_keys_.resize(n);
    }
    bucket_bits_ = n >= kBucketMinPairs         ? kBucketBits
                   : n >= kByteBucketMinPairs   ? kByteBits
                   : n >= kNibbleBucketMinPairs ? kNibbleBits
                                                : 0;
    const size_t buckets = size_t{1} << bucket_bits_;
    // counts[p][b]: the records of slice p in bucket b, then where slice p's go in bucket b.
    std::vector<std::vector<uint32_t>> counts(parts, std::vector<uint32_t>(buckets, 0));
    for_slices(parts, n, [&](unsigned p, size_t begin, size_t end) {
        if (secure) {
            // Together on the SIMD lanes.
            keccak256_each(
                end - begin, [&](size_t i) { return input[begin + i].key; },
                [&](size_t i, const Hash256& h) { hashed_keys_[begin + i] = h; });
        }
        std::vector<uint32_t>& count = counts[p];
        for (size_t i = begin; i < end; ++i) {
            ++count[bucket_of(key_prefix(key_of(static_cast<uint32_t>(i))))];
        }
    });
    start_.assign(buckets + 1, 0);
    for (size_t b = 0; b < buckets; ++b) {
        uint32_t at = start_[b];
        for (std::vector<uint32_t>& count : counts) at += std::exchange(count[b], at);
        start_[b + 1] = at;
    }
    // The records go straight to their buckets: no copy in input order is kept, and the
    // array is not zeroed first.
    records_ = std::make_unique_for_overwrite<Record[]>(std::max<size_t>(n, 1));
    advise_huge_pages(records_.get(), n * sizeof(Record));
    size_t largest_byte = 0;
    for (size_t b = 0; bucket_bits_ == kBucketBits && b < buckets; b += 256)
        largest_byte = std::max<size_t>(largest_byte, start_[b + 256] - start_[b]);
    if (bucket_bits_ == kBucketBits && largest_byte <= kByteGroupMax) {
        scatter_twice(parts, n, counts);
    } else {
        scatter_once(parts, n, counts);
    }
    all_.end = buckets;
}

void SortedPairCursor::scatter_once(unsigned parts, size_t n,
                                    std::vector<std::vector<uint32_t>>& where) {
    // A bucket holds slice 0's records, then slice 1's...
    for_slices(parts, n, [&](unsigned p, size_t begin, size_t end) {
        std::vector<uint32_t>& next = where[p];
        for (size_t i = begin; i < end; ++i) {
            const Record r = record(static_cast<uint32_t>(i));
            records_[next[bucket_of(r.prefix)]++] = r;
        }
    });
}

void SortedPairCursor::scatter_twice(unsigned parts, size_t n,
                                     const std::vector<std::vector<uint32_t>>& where) {
    // next[p][f]: where slice p's next record whose key starts with byte f goes; a first
    // byte's records are slice 0's, then slice 1's... Those of the slices before p number
    // what they put before p's in each of f's buckets.
    std::vector<std::array<uint32_t, 256>> next(parts);
    for (unsigned p = 0; p < parts; ++p) {
        for (size_t f = 0; f < 256; ++f) {
            uint32_t at = start_[f << 8];
            for (size_t b = f << 8; b < (f + 1) << 8; ++b) at += where[p][b] - start_[b];
            next[p][f] = at;
        }
    }
    for_slices(parts, n, [&](unsigned p, size_t begin, size_t end) {
        std::array<uint32_t, 256>& at = next[p];
        for (size_t i = begin; i < end; ++i) {
            const Record r = record(static_cast<uint32_t>(i));
            records_[at[r.prefix >> 56]++] = r;
        }
    });
    // Each first byte's records, from a copy, to the buckets of their second byte.
    for_slices(parts, 256, [&](unsigned, size_t first, size_t last) {
        std::vector<Record> group;
        for (size_t f = first; f < last; ++f) {
            group.assign(records_.get() + start_[f << 8], records_.get() + start_[(f + 1) << 8]);
            uint32_t at[256];
            std::copy_n(start_.begin() + static_cast<ptrdiff_t>(f << 8), 256, at);
            for (const Record& r : group) records_[at[r.prefix >> 48 & 0xff]++] = r;
        }
    });
}

bytes_view SortedPairCursor::key_of(uint32_t i) const noexcept {
    return hashed_keys_.empty() ? (*input_)[i].key : bytes_view(hashed_keys_[i]);
}

SortedPairCursor::Record SortedPairCursor::record(uint32_t i) const noexcept {
    const KvPair p = (*input_)[i];
    const uint64_t prefix = key_prefix(key_of(i));
    const auto at = reinterpret_cast<uintptr_t>(p.key.data());
    // A pair in place has a key of at least one byte, so that no two share an address (an
    // empty key with an empty value takes no bytes: the next pair's key begins there too).
    if (!hashed_keys_.empty() || p.key.empty() || p.key.size() >= 0xff || p.value.size() > 0xff ||
        at >> 48 != 0) {
        return {prefix, kByIndex | i};
    }
    return {prefix, at | uint64_t{p.key.size()} << 48 | uint64_t{p.value.size()} << 56};
}

bytes_view SortedPairCursor::key_of(const Record& r) const noexcept {
    if (by_index(r)) return key_of(static_cast<uint32_t>(r.ref));
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the address kept beside the lengths
    return {reinterpret_cast<const uint8_t*>(r.ref & ((uint64_t{1} << 48) - 1)),
            r.ref >> 48 & 0xff};
}

KvPair SortedPairCursor::pair_of(const Record& r) const noexcept {
    if (by_index(r)) {
        const auto i = static_cast<uint32_t>(r.ref);
        return {key_of(i), (*input_)[i].value};
    }
    const bytes_view key = key_of(r);
    return {key, {key.data() + key.size(), r.ref >> 56}};
}

size_t SortedPairCursor::bucket_of(uint64_t prefix) const noexcept {
    return bucket_bits_ == 0 ? 0 : static_cast<size_t>(prefix >> (64 - bucket_bits_));
}

bool SortedPairCursor::less_same_prefix(const Record& a, const Record& b) const noexcept {
    const bytes_view ka = key_of(a);
    const bytes_view kb = key_of(b);
    const int c = compare_bytes(ka, kb);
    if (c != 0) return c < 0;
    // Equal keys: later writes last. A secure cursor's records all go by index, so the keys'
    // addresses compared below are the input's.
    if (by_index(a) && by_index(b))
        return static_cast<uint32_t>(a.ref) < static_cast<uint32_t>(b.ref);
    return input_->before(ka.data(), kb.data());
}

void SortedPairCursor::sort_bucket(Record* first, Record* last) const noexcept {
    // Keys differ in their first 8 bytes but for a few: that test stays in the loop.
    const auto less = [this](const Record& a, const Record& b) {
        return a.prefix != b.prefix ? a.prefix < b.prefix : less_same_prefix(a, b);
    };
    const auto n = static_cast<size_t>(last - first);
    if (n < kCountedMin || n > kCountedMax) {
        std::sort(first, last, less);
        return;
    }
    // The byte after the bucket's bits, or in a small bucket the nibble (fewer counts).
    const unsigned width = n < kCountedByteMin ? 4 : 8;
    const unsigned shift = 64 - bucket_bits_ - width;
    const uint64_t mask = (uint64_t{1} << width) - 1;
    const size_t values = size_t{1} << width;
    const auto digit = [shift, mask](const Record& r) { return r.prefix >> shift & mask; };
    std::array<uint32_t, 257> at;
    std::fill_n(at.begin(), values + 1, 0);
    for (const Record* r = first; r != last; ++r) ++at[digit(*r) + 1];
    uint32_t most = 0;
    for (size_t v = 1; v <= values; ++v) {
        most = std::max(most, at[v]);
        at[v] += at[v - 1];
    }
    if (most > kCountedSame) {
        std::sort(first, last, less);
        return;
    }
    std::array<Record, kCountedMax> by_digit;
    for (const Record* r = first; r != last; ++r) by_digit[at[digit(*r)]++] = *r;
    // In order but within each value's few.
    for (size_t i = 0; i < n; ++i) {
        const Record r = by_digit[i];
        size_t j = i;
        for (; j > 0 && less(r, first[j - 1]); --j) first[j] = first[j - 1];
        first[j] = r;
    }
}

SortedPairCursor::Range SortedPairCursor::nibble_range(unsigned v) const noexcept {
    const unsigned shift = bucket_bits_ - kNibbleBits;
    return Range{size_t{v} << shift, size_t{v + 1} << shift, {}};
}

SortedPairCursor::Range SortedPairCursor::byte_range(unsigned b) const noexcept {
    const unsigned shift = bucket_bits_ - kByteBits;
    return Range{size_t{b} << shift, size_t{b + 1} << shift, {}};
}

std::span<const KvPair> SortedPairCursor::next() { return next(all_); }

std::span<const KvPair> SortedPairCursor::next(Range& range) {
    std::vector<KvPair>& run = range.run;
    run.clear();
    for (; range.bucket < range.end && run.size() < kRunPairs; ++range.bucket) {
        Record* const first = records_.get() + start_[range.bucket];
        Record* const last = records_.get() + start_[range.bucket + 1];
        Record* const end = records_.get() + start_[range.end];
        if (last - first > 1) sort_bucket(first, last);
        // Equal keys share a bucket, next to one another with the last write last.
        for (Record* r = first; r != last; ++r) {
            // The entries are visited in key order, which is random in the input: fetch
            // ahead, past this bucket too (the range's next bucket, unsorted, holds the
            // records read next), but not past the range (another thread may be sorting it).
            constexpr ptrdiff_t kAhead = 48;
            if (end - r > kAhead) {
                const Record& ahead = r[kAhead];
                if (by_index(ahead)) {
                    input_->prefetch(static_cast<uint32_t>(ahead.ref));
                } else {
                    __builtin_prefetch(key_of(ahead).data());
                }
            }
            const bool last_of_key =
                r + 1 == last || r[1].prefix != r->prefix || !bytes_equal(key_of(*r), key_of(r[1]));
            if (!last_of_key) continue;
            const KvPair p = pair_of(*r);
            if (!p.value.empty()) run.push_back(p);
        }
    }
    return run;
}

std::vector<Hash256> SortedPairCursor::take_hashed_keys() && {
    all_.bucket = all_.end;
    return std::move(hashed_keys_);
}

std::vector<KvPair> SortedPairCursor::rest() {
    std::vector<KvPair> pairs;
    reserve_huge(pairs, input_->size());
    for (std::span<const KvPair> run; !(run = next()).empty();)
        pairs.insert(pairs.end(), run.begin(), run.end());
    return pairs;
}

SortedPairs sorted_final_pairs(const KvInput& input, bool secure) {
    SortedPairCursor cursor(input, secure);
    SortedPairs out;
    out.pairs = cursor.rest();
    out.hashed_keys = std::move(cursor).take_hashed_keys();
    return out;
}

}  // namespace mpt
