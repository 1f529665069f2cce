// Keccak-f[1600] on four states in AVX2 registers. This file alone is compiled with -mavx2;
// keccak.cpp calls it only when the CPU has AVX2. It includes no header with inline
// functions that other files also instantiate, so no AVX2 code leaks into them.
#include <mpt/core/detail/keccak_lanes.hpp>

#include <immintrin.h>

namespace mpt::detail {
namespace {

struct Avx2 {
    using Reg = __m256i;
    static Reg xor2(Reg a, Reg b) noexcept { return _mm256_xor_si256(a, b); }
    static Reg xor5(Reg a, Reg b, Reg c, Reg d, Reg e) noexcept {
        return xor2(xor2(xor2(a, b), xor2(c, d)), e);
    }
    // A rotation is two shifts and an OR, a third of the round's time. On Zen 2 one pipe
    // takes every vector shift and every store, one a cycle: a round's 46 shifts and about
    // 17 stores of spilled words bound it at about 63 cycles. So by 1, 2 and 3 the left shift
    // is adds, and by 8 and 56 the rotation is one byte shuffle (mpt_micro_bench
    // BM_keccak256_batch_avx2/64 on Zen 2: the shuffles and the add for 1 took 3.5% off a
    // batch, the adds for 2 and 3 1.4%).
    template <int N>
    static Reg rol(Reg x) noexcept {
        if constexpr (N == 1) {
            return _mm256_or_si256(_mm256_add_epi64(x, x), _mm256_srli_epi64(x, 63));
        } else if constexpr (N == 8) {
            return _mm256_shuffle_epi8(
                x, _mm256_setr_epi8(7, 0, 1, 2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14, 7, 0, 1,
                                    2, 3, 4, 5, 6, 15, 8, 9, 10, 11, 12, 13, 14));
        } else if constexpr (N == 56) {
            return _mm256_shuffle_epi8(
                x, _mm256_setr_epi8(1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8, 1, 2, 3,
                                    4, 5, 6, 7, 0, 9, 10, 11, 12, 13, 14, 15, 8));
        } else if constexpr (N == 2 || N == 3) {
            const Reg x2 = _mm256_add_epi64(x, x), x4 = _mm256_add_epi64(x2, x2);
            const Reg left = N == 2 ? x4 : _mm256_add_epi64(x4, x4);
            return _mm256_or_si256(left, _mm256_srli_epi64(x, 64 - N));
        } else {
            return _mm256_or_si256(_mm256_slli_epi64(x, N), _mm256_srli_epi64(x, 64 - N));
        }
    }
    static Reg chi(Reg b, Reg u, Reg v) noexcept { return xor2(b, _mm256_andnot_si256(u, v)); }
    static Reg splat(uint64_t x) noexcept { return _mm256_set1_epi64x(static_cast<long long>(x)); }
};

}  // namespace

void keccakf1600_x4(uint64_t (*state)[4]) noexcept {
    __m256i s[25];
    for (int i = 0; i < 25; ++i)
        s[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(state[i]));
    permute_lanes<Avx2>(s);
    for (int i = 0; i < 25; ++i) _mm256_store_si256(reinterpret_cast<__m256i*>(state[i]), s[i]);
}

}  // namespace mpt::detail
