// Keccak-256 of eight inputs at a time, their states in AVX-512 registers. This file alone is
// compiled with -mavx512f; keccak.cpp calls it only when the CPU has AVX-512F. Each xor of
// three and chi is one vpternlogq, each rotation one vprolq, and each word of the eight
// blocks one gather from the inputs.
#include <mpt/core/detail/keccak_lanes.hpp>

#include <immintrin.h>

#include <bit>
#include <cstring>

namespace mpt::detail {
namespace {

struct Avx512 {
    using Reg = __m512i;
    // vpternlogq's immediate is the truth table of f(a, b, c), bit a*4 + b*2 + c.
    static constexpr int kXor3 = 0x96;       // a ^ b ^ c
    static constexpr int kXorAndNot = 0xd2;  // a ^ (~b & c)

    static Reg xor2(Reg a, Reg b) noexcept { return _mm512_xor_si512(a, b); }
    static Reg xor5(Reg a, Reg b, Reg c, Reg d, Reg e) noexcept {
        return _mm512_ternarylogic_epi64(_mm512_ternarylogic_epi64(a, b, c, kXor3), d, e, kXor3);
    }
    template <int N>
    static Reg rol(Reg x) noexcept {
        return _mm512_rol_epi64(x, N);
    }
    static Reg chi(Reg b, Reg u, Reg v) noexcept {
        return _mm512_ternarylogic_epi64(b, u, v, kXorAndNot);
    }
    static Reg splat(uint64_t x) noexcept { return _mm512_set1_epi64(static_cast<long long>(x)); }
};

constexpr size_t kRate = 136;
constexpr size_t kWords = kRate / 8;

// XORs the next block of each lane in busy into s: the block at at[j], left[j] bytes of the
// input from there. Its whole words are gathered; where the block is the input's last, the
// word it ends in is put together here with the padding's first byte (0x01), and the rate's
// last byte gets 0x80. Returns the lanes whose block was the last.
[[gnu::always_inline]] inline unsigned absorb_blocks(__m512i s[25], unsigned busy,
                                                     const uint8_t* const at[8],
                                                     const uint64_t left[8]) noexcept {
    constexpr uint64_t kNoWord = 32;  // end_word of a lane whose block is not its last
    alignas(64) uint64_t end_word[8];
    alignas(64) uint64_t end_bits[8];
    unsigned last = 0;
    for (unsigned j = 0; j < 8; ++j) {
        end_word[j] = kNoWord;
        if ((busy >> j & 1) == 0 || left[j] >= kRate) continue;
        last |= 1u << j;
        const size_t tail = left[j] % 8;
        uint64_t bits = 0;  // an empty input's data may be null
        if (tail != 0) std::memcpy(&bits, at[j] + left[j] - tail, tail);
        end_word[j] = left[j] / 8;
        end_bits[j] = bits | uint64_t{0x01} << (8 * tail);
    }
    const __m512i addresses = _mm512_load_si512(at);
    const __m512i lengths = _mm512_load_si512(left);
    const __m512i ends = _mm512_load_si512(end_word);
    const __m512i end_values = _mm512_maskz_load_epi64(static_cast<__mmask8>(last), end_bits);
    for (size_t i = 0; i < kWords; ++i) {
        const auto word = static_cast<long long>(i);
        // Lanes not busy have nothing left: their words stay zero.
        const __mmask8 whole = _mm512_cmpge_epu64_mask(lengths, _mm512_set1_epi64(8 * word + 8));
        const __m512i words = _mm512_mask_i64gather_epi64(
            _mm512_setzero_si512(), whole, _mm512_add_epi64(addresses, _mm512_set1_epi64(8 * word)),
            nullptr, 1);
        const __mmask8 ends_here = _mm512_cmpeq_epu64_mask(ends, _mm512_set1_epi64(word));
        s[i] = _mm512_ternarylogic_epi64(s[i], words, _mm512_maskz_mov_epi64(ends_here, end_values),
                                         Avx512::kXor3);
    }
    s[kWords - 1] = _mm512_mask_xor_epi64(s[kWords - 1], static_cast<__mmask8>(last), s[kWords - 1],
                                          Avx512::splat(uint64_t{0x80} << 56));
    return last;
}

}  // namespace

void keccak256_x8(std::span<const bytes_view> inputs, std::span<Hash256> out,
                  FinishOne finish) noexcept {
    // At most this many inputs left go one at a time: eight lanes cost about what 2.4 single
    // permutations do (mpt_micro_bench BM_keccak256_batch_avx512 against BM_keccak256).
    constexpr int kScalarTail = 2;
    __m512i s[25];
    for (__m512i& r : s) r = _mm512_setzero_si512();
    alignas(64) const uint8_t* at[8] = {};  // the address of the lane's next block
    alignas(64) uint64_t left[8] = {};      // the bytes the lane has yet to absorb
    size_t input[8];
    unsigned busy = 0;
    size_t next = 0;
    for (;;) {
        unsigned fresh = 0;
        for (unsigned j = 0; j < 8 && next < inputs.size(); ++j) {
            if ((busy >> j & 1) != 0) continue;
            input[j] = next;
            at[j] = inputs[next].data();
            left[j] = inputs[next].size();
            ++next;
            fresh |= 1u << j;
        }
        if (fresh != 0) {
            busy |= fresh;
            const auto keep = static_cast<__mmask8>(~fresh);
            for (__m512i& r : s) r = _mm512_maskz_mov_epi64(keep, r);
        }
        if (busy == 0) return;
        if (std::popcount(busy) <= kScalarTail && next == inputs.size()) {
            alignas(64) uint64_t state[25][8];
            for (int i = 0; i < 25; ++i) _mm512_store_si512(state[i], s[i]);
            for (unsigned j = 0; j < 8; ++j) {
                if ((busy >> j & 1) == 0) continue;
                uint64_t one[25];
                for (int i = 0; i < 25; ++i) one[i] = state[i][j];
                out[input[j]] = finish(one, at[j], left[j]);
            }
            return;
        }
        const unsigned last = absorb_blocks(s, busy, at, left);
        permute_lanes<Avx512>(s);
        if (last != 0) {
            alignas(64) uint64_t digest[4][8];
            for (int i = 0; i < 4; ++i) _mm512_store_si512(digest[i], s[i]);
            for (unsigned j = 0; j < 8; ++j) {
                if ((last >> j & 1) == 0) continue;
                for (size_t i = 0; i < 4; ++i)
                    std::memcpy(out[input[j]].data() + 8 * i, &digest[i][j], 8);
                at[j] = nullptr;
                left[j] = 0;
            }
            busy &= ~last;
        }
        for (unsigned j = 0; j < 8; ++j) {
            if ((busy >> j & 1) == 0) continue;
            at[j] += kRate;
            left[j] -= kRate;
        }
    }
}

}  // namespace mpt::detail
