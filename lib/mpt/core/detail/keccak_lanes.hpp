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

// The 24 rounds on 25 registers, lane (x, y) in s[x + 5y], as in the scalar permutation.
template <class V>
[[gnu::always_inline]] inline void permute_lanes(typename V::Reg s[25]) noexcept {
    using R = typename V::Reg;
    R a00 = s[0], a10 = s[1], a20 = s[2], a30 = s[3], a40 = s[4];
    R a01 = s[5], a11 = s[6], a21 = s[7], a31 = s[8], a41 = s[9];
    R a02 = s[10], a12 = s[11], a22 = s[12], a32 = s[13], a42 = s[14];
    R a03 = s[15], a13 = s[16], a23 = s[17], a33 = s[18], a43 = s[19];
    R a04 = s[20], a14 = s[21], a24 = s[22], a34 = s[23], a44 = s[24];

    for (const uint64_t rc : kKeccakRoundConstants) {
        const R c0 = V::xor5(a00, a01, a02, a03, a04);
        const R c1 = V::xor5(a10, a11, a12, a13, a14);
        const R c2 = V::xor5(a20, a21, a22, a23, a24);
        const R c3 = V::xor5(a30, a31, a32, a33, a34);
        const R c4 = V::xor5(a40, a41, a42, a43, a44);
        const R d0 = V::xor2(c4, V::template rol<1>(c1));
        const R d1 = V::xor2(c0, V::template rol<1>(c2));
        const R d2 = V::xor2(c1, V::template rol<1>(c3));
        const R d3 = V::xor2(c2, V::template rol<1>(c4));
        const R d4 = V::xor2(c3, V::template rol<1>(c0));

        const R b00 = V::xor2(a00, d0);
        const R b13 = V::template rol<36>(V::xor2(a01, d0));
        const R b21 = V::template rol<3>(V::xor2(a02, d0));
        const R b34 = V::template rol<41>(V::xor2(a03, d0));
        const R b42 = V::template rol<18>(V::xor2(a04, d0));
        const R b02 = V::template rol<1>(V::xor2(a10, d1));
        const R b10 = V::template rol<44>(V::xor2(a11, d1));
        const R b23 = V::template rol<10>(V::xor2(a12, d1));
        const R b31 = V::template rol<45>(V::xor2(a13, d1));
        const R b44 = V::template rol<2>(V::xor2(a14, d1));
        const R b04 = V::template rol<62>(V::xor2(a20, d2));
        const R b12 = V::template rol<6>(V::xor2(a21, d2));
        const R b20 = V::template rol<43>(V::xor2(a22, d2));
        const R b33 = V::template rol<15>(V::xor2(a23, d2));
        const R b41 = V::template rol<61>(V::xor2(a24, d2));
        const R b01 = V::template rol<28>(V::xor2(a30, d3));
        const R b14 = V::template rol<55>(V::xor2(a31, d3));
        const R b22 = V::template rol<25>(V::xor2(a32, d3));
        const R b30 = V::template rol<21>(V::xor2(a33, d3));
        const R b43 = V::template rol<56>(V::xor2(a34, d3));
        const R b03 = V::template rol<27>(V::xor2(a40, d4));
        const R b11 = V::template rol<20>(V::xor2(a41, d4));
        const R b24 = V::template rol<39>(V::xor2(a42, d4));
        const R b32 = V::template rol<8>(V::xor2(a43, d4));
        const R b40 = V::template rol<14>(V::xor2(a44, d4));

        a00 = V::xor2(V::chi(b00, b10, b20), V::splat(rc));
        a10 = V::chi(b10, b20, b30);
        a20 = V::chi(b20, b30, b40);
        a30 = V::chi(b30, b40, b00);
        a40 = V::chi(b40, b00, b10);
        a01 = V::chi(b01, b11, b21);
        a11 = V::chi(b11, b21, b31);
        a21 = V::chi(b21, b31, b41);
        a31 = V::chi(b31, b41, b01);
        a41 = V::chi(b41, b01, b11);
        a02 = V::chi(b02, b12, b22);
        a12 = V::chi(b12, b22, b32);
        a22 = V::chi(b22, b32, b42);
        a32 = V::chi(b32, b42, b02);
        a42 = V::chi(b42, b02, b12);
        a03 = V::chi(b03, b13, b23);
        a13 = V::chi(b13, b23, b33);
        a23 = V::chi(b23, b33, b43);
        a33 = V::chi(b33, b43, b03);
        a43 = V::chi(b43, b03, b13);
        a04 = V::chi(b04, b14, b24);
        a14 = V::chi(b14, b24, b34);
        a24 = V::chi(b24, b34, b44);
        a34 = V::chi(b34, b44, b04);
        a44 = V::chi(b44, b04, b14);
    }

    s[0] = a00, s[1] = a10, s[2] = a20, s[3] = a30, s[4] = a40;
    s[5] = a01, s[6] = a11, s[7] = a21, s[8] = a31, s[9] = a41;
    s[10] = a02, s[11] = a12, s[12] = a22, s[13] = a32, s[14] = a42;
    s[15] = a03, s[16] = a13, s[17] = a23, s[18] = a33, s[19] = a43;
    s[20] = a04, s[21] = a14, s[22] = a24, s[23] = a34, s[24] = a44;
}

}  // namespace mpt::detail
