// Keccak-f[1600] over several independent states at once, one state per SIMD lane.
//
// The round is written once, over a vector type V whose operations the kernels supply:
// xor2 and xor5, rol<N> (rotate each 64-bit lane left by N), chi (b ^ (~u & v)) and splat
// (a constant in every lane). A kernel's state is interleaved: state[i][j] is lane i of the
// state held in SIMD lane j, so that one aligned load gives lane i of every state.
//
// Internal to core/: keccak.cpp picks a kernel at run time; keccak_avx2.cpp and
// keccak_avx512.cpp are compiled for their instruction sets and called only on CPUs that
// have them.
#pragma once

#include <mpt/core/bytes.hpp>

#include <cstddef>
#include <cstdint>
#include <span>

namespace mpt::detail {

inline constexpr uint64_t kKeccakRoundConstants[24] = {
    0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
    0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
    0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MPT_KECCAK_LANES 1
// Four states in AVX2 registers. REQUIRES: the CPU has AVX2; state aligned to 32 bytes.
void keccakf1600_x4(uint64_t (*state)[4]) noexcept;

// The digest of the n bytes at p absorbed into s from a block boundary on, padded and
// squeezed: how a batch finishes its last few inputs one at a time.
using FinishOne = Hash256 (*)(uint64_t s[25], const uint8_t* p, size_t n) noexcept;
// Each input's digest into out, eight inputs at a time in AVX-512 registers: a lane whose
// input is done takes the next, so that inputs of any lengths mix; the last few go to
// finish. REQUIRES: the CPU has AVX-512F; out.size() == inputs.size().
void keccak256_x8(std::span<const bytes_view> inputs, std::span<Hash256> out,
                  FinishOne finish) noexcept;
#endif

// rho of a lane after theta: (a ^ d) rotated left by N.
template <class V, int N>
[[gnu::always_inline]] inline typename V::Reg rho(typename V::Reg a, typename V::Reg d) noexcept {
    return V::template rol<N>(V::xor2(a, d));
}

// chi of one plane: e[x] = b[x] ^ (~b[x + 1] & b[x + 2]).
template <class V>
[[gnu::always_inline]] inline void chi_plane(typename V::Reg* e, typename V::Reg b0,
                                             typename V::Reg b1, typename V::Reg b2,
                                             typename V::Reg b3, typename V::Reg b4) noexcept {
    e[0] = V::chi(b0, b1, b2);
    e[1] = V::chi(b1, b2, b3);
    e[2] = V::chi(b2, b3, b4);
    e[3] = V::chi(b3, b4, b0);
    e[4] = V::chi(b4, b0, b1);
}

// One round from a to e, lane (x, y) at index x + 5y, as in the scalar permutation.
template <class V>
[[gnu::always_inline]] inline void round_lanes(const typename V::Reg* a, typename V::Reg* e,
                                               uint64_t rc) noexcept {
    using R = typename V::Reg;
    const R c0 = V::xor5(a[0], a[5], a[10], a[15], a[20]);
    const R c1 = V::xor5(a[1], a[6], a[11], a[16], a[21]);
    const R c2 = V::xor5(a[2], a[7], a[12], a[17], a[22]);
    const R c3 = V::xor5(a[3], a[8], a[13], a[18], a[23]);
    const R c4 = V::xor5(a[4], a[9], a[14], a[19], a[24]);
    const R d0 = V::xor2(c4, V::template rol<1>(c1));
    const R d1 = V::xor2(c0, V::template rol<1>(c2));
    const R d2 = V::xor2(c1, V::template rol<1>(c3));
    const R d3 = V::xor2(c2, V::template rol<1>(c4));
    const R d4 = V::xor2(c3, V::template rol<1>(c0));

    // rho, pi and chi one output plane at a time: the five words the plane takes from a,
    // rotated, then its five words of e. In this order the words in flight are the d's and
    // one plane's b's, which nearly fit sixteen AVX2 registers; with all twenty-five b's
    // made first, GCC 12 spills nearly twice as many (71 stores a round against 39). The
    // first plane, which takes iota's constant, is written out: through chi_plane and a
    // separate XOR, the batch took 1% more time (mpt_micro_bench, AVX2).
    const R b00 = V::xor2(a[0], d0), b10 = rho<V, 44>(a[6], d1), b20 = rho<V, 43>(a[12], d2);
    const R b30 = rho<V, 21>(a[18], d3), b40 = rho<V, 14>(a[24], d4);
    e[0] = V::xor2(V::chi(b00, b10, b20), V::splat(rc));
    e[1] = V::chi(b10, b20, b30);
    e[2] = V::chi(b20, b30, b40);
    e[3] = V::chi(b30, b40, b00);
    e[4] = V::chi(b40, b00, b10);
    chi_plane<V>(e + 5, rho<V, 28>(a[3], d3), rho<V, 20>(a[9], d4), rho<V, 3>(a[10], d0),
                 rho<V, 45>(a[16], d1), rho<V, 61>(a[22], d2));
    chi_plane<V>(e + 10, rho<V, 1>(a[1], d1), rho<V, 6>(a[7], d2), rho<V, 25>(a[13], d3),
                 rho<V, 8>(a[19], d4), rho<V, 18>(a[20], d0));
    chi_plane<V>(e + 15, rho<V, 27>(a[4], d4), rho<V, 36>(a[5], d0), rho<V, 10>(a[11], d1),
                 rho<V, 15>(a[17], d2), rho<V, 56>(a[23], d3));
    chi_plane<V>(e + 20, rho<V, 62>(a[2], d2), rho<V, 55>(a[8], d3), rho<V, 39>(a[14], d4),
                 rho<V, 41>(a[15], d0), rho<V, 2>(a[21], d1));
}

// The 24 rounds on 25 registers, lane (x, y) in s[x + 5y], two at a time so that the rounds
// go from s to e and back without copying the state between them.
template <class V>
[[gnu::always_inline]] inline void permute_lanes(typename V::Reg s[25]) noexcept {
    typename V::Reg e[25];
    for (size_t i = 0; i < 24; i += 2) {
        round_lanes<V>(s, e, kKeccakRoundConstants[i]);
        round_lanes<V>(e, s, kKeccakRoundConstants[i + 1]);
    }
}

}  // namespace mpt::detail
