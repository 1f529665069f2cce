// Keccak-f[1600] on eight states in AVX-512 registers. This file alone is compiled with
// -mavx512f; keccak.cpp calls it only when the CPU has AVX-512F. Each xor of three and chi
// is one vpternlogq, and each rotation one vprolq.
#include <mpt/core/detail/keccak_lanes.hpp>

#include <immintrin.h>

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

}  // namespace

void keccakf1600_x8(uint64_t (*state)[8]) noexcept {
    __m512i s[25];
    for (int i = 0; i < 25; ++i) s[i] = _mm512_load_si512(state[i]);
    permute_lanes<Avx512>(s);
    for (int i = 0; i < 25; ++i) _mm512_store_si512(state[i], s[i]);
}

}  // namespace mpt::detail
