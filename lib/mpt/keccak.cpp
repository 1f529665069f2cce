// Keccak-f[1600] as specified in "The Keccak reference", version 3.0, sections 1.2 and 2.
// Lanes are kept in 25 locals per round so that the compiler holds them in registers.
#include <mpt/keccak.hpp>

#include <bit>
#include <cstring>

namespace mpt {
namespace {

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
    0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
    0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
};

inline uint64_t rol(uint64_t x, int n) noexcept { return std::rotl(x, n); }

inline uint64_t load_le64(const uint8_t* p) noexcept {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    return v;
}

}  // namespace

void keccakf1600(uint64_t s[25]) noexcept {
    // Lane (x, y) is s[x + 5y].
    uint64_t a00 = s[0], a10 = s[1], a20 = s[2], a30 = s[3], a40 = s[4];
    uint64_t a01 = s[5], a11 = s[6], a21 = s[7], a31 = s[8], a41 = s[9];
    uint64_t a02 = s[10], a12 = s[11], a22 = s[12], a32 = s[13], a42 = s[14];
    uint64_t a03 = s[15], a13 = s[16], a23 = s[17], a33 = s[18], a43 = s[19];
    uint64_t a04 = s[20], a14 = s[21], a24 = s[22], a34 = s[23], a44 = s[24];

    for (const uint64_t rc : kRoundConstants) {
        // theta: each lane absorbs the parity of two neighbouring columns.
        const uint64_t c0 = a00 ^ a01 ^ a02 ^ a03 ^ a04;
        const uint64_t c1 = a10 ^ a11 ^ a12 ^ a13 ^ a14;
        const uint64_t c2 = a20 ^ a21 ^ a22 ^ a23 ^ a24;
        const uint64_t c3 = a30 ^ a31 ^ a32 ^ a33 ^ a34;
        const uint64_t c4 = a40 ^ a41 ^ a42 ^ a43 ^ a44;
        const uint64_t d0 = c4 ^ rol(c1, 1);
        const uint64_t d1 = c0 ^ rol(c2, 1);
        const uint64_t d2 = c1 ^ rol(c3, 1);
        const uint64_t d3 = c2 ^ rol(c4, 1);
        const uint64_t d4 = c3 ^ rol(c0, 1);

        // rho and pi: B[y, 2x + 3y] = rot(A[x, y] ^ D[x], r[x, y]).
        const uint64_t b00 = a00 ^ d0;
        const uint64_t b13 = rol(a01 ^ d0, 36);
        const uint64_t b21 = rol(a02 ^ d0, 3);
        const uint64_t b34 = rol(a03 ^ d0, 41);
        const uint64_t b42 = rol(a04 ^ d0, 18);
        const uint64_t b02 = rol(a10 ^ d1, 1);
        const uint64_t b10 = rol(a11 ^ d1, 44);
        const uint64_t b23 = rol(a12 ^ d1, 10);
        const uint64_t b31 = rol(a13 ^ d1, 45);
        const uint64_t b44 = rol(a14 ^ d1, 2);
        const uint64_t b04 = rol(a20 ^ d2, 62);
        const uint64_t b12 = rol(a21 ^ d2, 6);
        const uint64_t b20 = rol(a22 ^ d2, 43);
        const uint64_t b33 = rol(a23 ^ d2, 15);
        const uint64_t b41 = rol(a24 ^ d2, 61);
        const uint64_t b01 = rol(a30 ^ d3, 28);
        const uint64_t b14 = rol(a31 ^ d3, 55);
        const uint64_t b22 = rol(a32 ^ d3, 25);
        const uint64_t b30 = rol(a33 ^ d3, 21);
        const uint64_t b43 = rol(a34 ^ d3, 56);
        const uint64_t b03 = rol(a40 ^ d4, 27);
        const uint64_t b11 = rol(a41 ^ d4, 20);
        const uint64_t b24 = rol(a42 ^ d4, 39);
        const uint64_t b32 = rol(a43 ^ d4, 8);
        const uint64_t b40 = rol(a44 ^ d4, 14);

        // chi along rows, then iota on lane (0, 0).
        a00 = b00 ^ (~b10 & b20) ^ rc;
        a10 = b10 ^ (~b20 & b30);
        a20 = b20 ^ (~b30 & b40);
        a30 = b30 ^ (~b40 & b00);
        a40 = b40 ^ (~b00 & b10);
        a01 = b01 ^ (~b11 & b21);
        a11 = b11 ^ (~b21 & b31);
        a21 = b21 ^ (~b31 & b41);
        a31 = b31 ^ (~b41 & b01);
        a41 = b41 ^ (~b01 & b11);
        a02 = b02 ^ (~b12 & b22);
        a12 = b12 ^ (~b22 & b32);
        a22 = b22 ^ (~b32 & b42);
        a32 = b32 ^ (~b42 & b02);
        a42 = b42 ^ (~b02 & b12);
        a03 = b03 ^ (~b13 & b23);
        a13 = b13 ^ (~b23 & b33);
        a23 = b23 ^ (~b33 & b43);
        a33 = b33 ^ (~b43 & b03);
        a43 = b43 ^ (~b03 & b13);
        a04 = b04 ^ (~b14 & b24);
        a14 = b14 ^ (~b24 & b34);
        a24 = b24 ^ (~b34 & b44);
        a34 = b34 ^ (~b44 & b04);
        a44 = b44 ^ (~b04 & b14);
    }

    s[0] = a00, s[1] = a10, s[2] = a20, s[3] = a30, s[4] = a40;
    s[5] = a01, s[6] = a11, s[7] = a21, s[8] = a31, s[9] = a41;
    s[10] = a02, s[11] = a12, s[12] = a22, s[13] = a32, s[14] = a42;
    s[15] = a03, s[16] = a13, s[17] = a23, s[18] = a33, s[19] = a43;
    s[20] = a04, s[21] = a14, s[22] = a24, s[23] = a34, s[24] = a44;
}

void Keccak256::update(bytes_view data) noexcept {
    const uint8_t* p = data.data();
    size_t n = data.size();
    // Finish a partial block byte by byte.
    while (n > 0 && offset_ != 0) {
        state_[offset_ / 8] ^= uint64_t{*p} << (8 * (offset_ % 8));
        ++p, --n;
        if (++offset_ == kRate) {
            keccakf1600(state_);
            offset_ = 0;
        }
    }
    // Whole blocks, a lane at a time.
    while (n >= kRate) {
        for (size_t i = 0; i < kRate / 8; ++i) state_[i] ^= load_le64(p + 8 * i);
        keccakf1600(state_);
        p += kRate, n -= kRate;
    }
    for (; n > 0; ++p, --n, ++offset_) state_[offset_ / 8] ^= uint64_t{*p} << (8 * (offset_ % 8));
}

Hash256 Keccak256::finish() noexcept {
    // Keccak pad10*1 with the original domain byte 0x01.
    state_[offset_ / 8] ^= uint64_t{0x01} << (8 * (offset_ % 8));
    state_[(kRate - 1) / 8] ^= uint64_t{0x80} << (8 * ((kRate - 1) % 8));
    keccakf1600(state_);
    Hash256 out;
    for (size_t i = 0; i < 4; ++i) {
        uint64_t v = state_[i];
        if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
        std::memcpy(out.data() + 8 * i, &v, 8);
    }
    return out;
}

Hash256 keccak256(bytes_view data) noexcept {
    Keccak256 k;
    k.update(data);
    return k.finish();
}

}  // namespace mpt
