// Keccak-256 as Ethereum uses it: the original Keccak padding (0x01), not SHA3's (0x06).
//
// Thread safety: the functions are pure; a Keccak256 object is not shared between threads.
#pragma once

#include <mpt/core/bytes.hpp>

#include <algorithm>
#include <array>
#include <span>

namespace mpt {

// The Keccak-f[1600] permutation over 25 little-endian 64-bit lanes, in the fastest variant
// this CPU runs (chosen once, on first use).
void keccakf1600(uint64_t state[25]) noexcept;

// The compiled variants of the permutation, for the cross-check tests and the benchmarks;
// all compute the same function. available is false for one this CPU cannot run.
struct KeccakVariant {
    const char* name;
    void (*permute)(uint64_t state[25]) noexcept;
    bool available;
};
std::span<const KeccakVariant> keccakf1600_variants() noexcept;

// Incremental Keccak-256. Rate 136 bytes, capacity 512 bits.
class Keccak256 {
public:
    static constexpr size_t kRate = 136;

    void update(bytes_view data) noexcept;
    // Pads, permutes and writes the digest. The object must not be updated afterwards.
    Hash256 finish() noexcept;

private:
    uint64_t state_[25] = {};
    size_t offset_ = 0;      // bytes absorbed into the current block
    uint64_t absorbed_ = 0;  // bytes absorbed in all (the observer's)
};

Hash256 keccak256(bytes_view data) noexcept;

// Keccak-256 of each input into out[i], several inputs at once on the SIMD lanes of the
// kernel in use: eight with AVX-512, four with AVX2, else one at a time. The inputs are
// independent and may differ in length; a lane that finishes takes the next input.
// REQUIRES: out.size() >= inputs.size().
void keccak256_batch(std::span<const bytes_view> inputs, std::span<Hash256> out) noexcept;

// A stream of inputs hashed on the SIMD lanes (keccak256_batch) 64 at a time: add() each
// input with a tag, and sink(tag, hash) receives its digest, in the order added, when the
// batch it is in fills or at flush(). An input's bytes must stay put until then.
template <typename Tag, typename Sink>
class KeccakBatcher {
public:
    static constexpr size_t kBatch = 64;

    explicit KeccakBatcher(Sink sink) : sink_(std::forward<Sink>(sink)) {}

    void add(bytes_view input, Tag tag) {
        inputs_[size_] = input;
        tags_[size_] = tag;
        if (++size_ == kBatch) flush();
    }

    void flush() {
        if (size_ == 0) return;
        keccak256_batch(std::span(inputs_.data(), size_), std::span(hashes_.data(), size_));
        for (size_t i = 0; i < size_; ++i) sink_(tags_[i], hashes_[i]);
        size_ = 0;
    }

private:
    Sink sink_;
    size_t size_ = 0;
    std::array<bytes_view, kBatch> inputs_;
    std::array<Tag, kBatch> tags_;
    std::array<Hash256, kBatch> hashes_;
};

// A KeccakBatcher over input(i) for each i < n, out(i, hash) its sink.
template <typename Input, typename Out>
void keccak256_each(size_t n, Input&& input, Out&& out) {
    KeccakBatcher<size_t, Out&> batch(out);
    for (size_t i = 0; i < n; ++i) batch.add(input(i), i);
    batch.flush();
}

// The batch kernels: "scalar" (one input at a time), "avx2" and "avx512"; available is
// false for one this CPU cannot run. All compute the same digests.
struct KeccakBatchKernel {
    const char* name;
    void (*hash)(std::span<const bytes_view> inputs, std::span<Hash256> out) noexcept;
    bool available;
};
std::span<const KeccakBatchKernel> keccak256_batch_kernels() noexcept;

// An observer of every input hashed, given its length in bytes: the counter of
// mpt root --stats (ops/hash_counts.hpp). nullptr, the default, is none; a hash then pays one
// test of the pointer. A batch counts as its inputs, an incremental hash as one input.
// REQUIRES: no other thread hashes while it is set or cleared.
using KeccakObserver = void (*)(size_t bytes) noexcept;
void set_keccak_observer(KeccakObserver observer) noexcept;

// The kernel keccak256_batch uses, chosen on first use: the one the environment variable
// MPT_KECCAK names when this CPU has it, else the fastest available. A caller compares
// the name with MPT_KECCAK to tell the user that the switch was not honoured.
const KeccakBatchKernel& keccak256_batch_kernel() noexcept;

}  // namespace mpt
