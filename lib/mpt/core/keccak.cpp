// Keccak-f[1600] as specified in "The Keccak reference", version 3.0, sections 1.2 and 2.
//
// A round holds its 25 lanes in locals so that the compiler keeps them in registers. Its
// costly step is chi, A[x] = B[x] ^ (~B[x+1] & B[x+2]) on each row, written two ways:
//  - plainly, for CPUs with an and-not instruction (AArch64 bic, x86 BMI1 andn). On x86 this
//    variant is compiled a second time for BMI1 and BMI2 (andn, and rorx, a rotate that
//    leaves its source intact) and picked at run time when the CPU has them.
//  - with the lane-complementing transform ("Keccak implementation overview", v3.2, section
//    2.2), for x86-64 without BMI, where each ~ costs a separate instruction and a copy:
//    some lanes are held complemented between rounds, and chi of complemented inputs is
//    rewritten with & and | of the held values, so that most outputs need no NOT at all.
#include <mpt/core/keccak.hpp>

#include <mpt/core/detail/keccak_lanes.hpp>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

namespace mpt {
namespace {

inline uint64_t rol(uint64_t x, int n) noexcept { return std::rotl(x, n); }

// The lanes (x, y), bit x + 5y, held complemented by the complementing variant. Complements
// pass through theta, rho and pi as parities (~a ^ b = ~(a ^ b), rot(~a) = ~rot(a)), so each
// lane of B entering chi has a known complement flag; this set, found by trying all 2^25,
// lets chi produce exactly the same set again with the fewest NOTs: 6 per round, not 25.
constexpr uint32_t kComplementedLanes = 1u << (1 + 5 * 0) | 1u << (2 + 5 * 1) | 1u << (3 + 5 * 1) |
                                        1u << (4 + 5 * 2) | 1u << (2 + 5 * 3) | 1u << (2 + 5 * 4);

constexpr bool a_complemented(int x, int y) { return (kComplementedLanes >> (x + 5 * y)) & 1; }

constexpr bool column_complemented(int x) {
    bool c = false;
    for (int y = 0; y < 5; ++y) c ^= a_complemented(x, y);
    return c;
}

// NOLINTBEGIN(readability-identifier-naming): X, Y and the lane flags are named as in the
// formulas of these comments.

// B[X][Y] = rot(A[x][X] ^ D[x]) with 2x + 3X = Y (mod 5), so x = 3Y + X (mod 5); and
// D[x] = C[x-1] ^ rot(C[x+1], 1) carries the complement parities of those two columns.
constexpr bool b_complemented(int X, int Y) {
    const int x = (3 * Y + X) % 5;
    return a_complemented(x, X) ^ column_complemented((x + 4) % 5) ^
           column_complemented((x + 1) % 5);
}

struct PlainChi {
    static constexpr bool kComplemented = false;
};
struct ComplementedChi {
    static constexpr bool kComplemented = true;
};

// Output (X, Y) of chi from b = B[X], u = B[X+1], v = B[X+2] of row Y, each given as held
// (complemented when its flag says so); the result is held as A[X][Y]'s flag says.
template <class Chi, int X, int Y>
[[gnu::always_inline]] inline uint64_t chi(uint64_t b, uint64_t u, uint64_t v) noexcept {
    if constexpr (!Chi::kComplemented) {
        return b ^ (~u & v);
    } else {
        constexpr bool fb = b_complemented(X, Y);
        constexpr bool fu = b_complemented((X + 1) % 5, Y);
        constexpr bool fv = b_complemented((X + 2) % 5, Y);
        constexpr bool out = a_complemented(X, Y);
        // With u' = u ^ fu and v' = v ^ fv held: ~u & v is u' & v' when only u is held
        // complemented, and ~(u' | v') when only v is. Otherwise it takes one NOT, placed
        // so that the output comes out with the flag it must have.
        if constexpr (fu && !fv) {
            const uint64_t r = b ^ (u & v);
            return fb == out ? r : ~r;
        } else if constexpr (!fu && fv) {
            const uint64_t r = b ^ (u | v);
            return fb != out ? r : ~r;
        } else if constexpr (!fu) {
            return fb == out ? b ^ (~u & v) : b ^ (u | ~v);
        } else {
            return fb == out ? b ^ (u & ~v) : b ^ (~u | v);
        }
    }
}

// NOLINTEND(readability-identifier-naming)

template <class Chi>
[[gnu::always_inline]] inline void complement_lanes(uint64_t s[25]) noexcept {
    if constexpr (Chi::kComplemented) {
        for (int i = 0; i < 25; ++i) {
            if ((kComplementedLanes >> i) & 1) s[i] = ~s[i];
        }
    }
}

template <class Chi>
// NOLINTNEXTLINE(readability-function-size): one round of 25 named lanes keeps them in registers
[[gnu::always_inline]] inline void permute(uint64_t s[25]) noexcept {
    complement_lanes<Chi>(s);
    // Lane (x, y) is s[x + 5y], held in axy.
    uint64_t a00 = s[0], a10 = s[1], a20 = s[2], a30 = s[3], a40 = s[4];
    uint64_t a01 = s[5], a11 = s[6], a21 = s[7], a31 = s[8], a41 = s[9];
    uint64_t a02 = s[10], a12 = s[11], a22 = s[12], a32 = s[13], a42 = s[14];
    uint64_t a03 = s[15], a13 = s[16], a23 = s[17], a33 = s[18], a43 = s[19];
    uint64_t a04 = s[20], a14 = s[21], a24 = s[22], a34 = s[23], a44 = s[24];

    for (const uint64_t rc : detail::kKeccakRoundConstants) {
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

        // rho and pi: B[y, 2x + 3y] = rot(A[x, y] ^ D[x], r[x, y]), held in bXY.
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
        a00 = chi<Chi, 0, 0>(b00, b10, b20) ^ rc;
        a10 = chi<Chi, 1, 0>(b10, b20, b30);
        a20 = chi<Chi, 2, 0>(b20, b30, b40);
        a30 = chi<Chi, 3, 0>(b30, b40, b00);
        a40 = chi<Chi, 4, 0>(b40, b00, b10);
        a01 = chi<Chi, 0, 1>(b01, b11, b21);
        a11 = chi<Chi, 1, 1>(b11, b21, b31);
        a21 = chi<Chi, 2, 1>(b21, b31, b41);
        a31 = chi<Chi, 3, 1>(b31, b41, b01);
        a41 = chi<Chi, 4, 1>(b41, b01, b11);
        a02 = chi<Chi, 0, 2>(b02, b12, b22);
        a12 = chi<Chi, 1, 2>(b12, b22, b32);
        a22 = chi<Chi, 2, 2>(b22, b32, b42);
        a32 = chi<Chi, 3, 2>(b32, b42, b02);
        a42 = chi<Chi, 4, 2>(b42, b02, b12);
        a03 = chi<Chi, 0, 3>(b03, b13, b23);
        a13 = chi<Chi, 1, 3>(b13, b23, b33);
        a23 = chi<Chi, 2, 3>(b23, b33, b43);
        a33 = chi<Chi, 3, 3>(b33, b43, b03);
        a43 = chi<Chi, 4, 3>(b43, b03, b13);
        a04 = chi<Chi, 0, 4>(b04, b14, b24);
        a14 = chi<Chi, 1, 4>(b14, b24, b34);
        a24 = chi<Chi, 2, 4>(b24, b34, b44);
        a34 = chi<Chi, 3, 4>(b34, b44, b04);
        a44 = chi<Chi, 4, 4>(b44, b04, b14);
    }

    s[0] = a00, s[1] = a10, s[2] = a20, s[3] = a30, s[4] = a40;
    s[5] = a01, s[6] = a11, s[7] = a21, s[8] = a31, s[9] = a41;
    s[10] = a02, s[11] = a12, s[12] = a22, s[13] = a32, s[14] = a42;
    s[15] = a03, s[16] = a13, s[17] = a23, s[18] = a33, s[19] = a43;
    s[20] = a04, s[21] = a14, s[22] = a24, s[23] = a34, s[24] = a44;
    complement_lanes<Chi>(s);
}

void keccakf1600_plain(uint64_t s[25]) noexcept { permute<PlainChi>(s); }
void keccakf1600_complemented(uint64_t s[25]) noexcept { permute<ComplementedChi>(s); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MPT_KECCAK_X86_DISPATCH 1
__attribute__((target("bmi,bmi2"))) void keccakf1600_bmi(uint64_t s[25]) noexcept {
    permute<PlainChi>(s);
}
bool cpu_has_bmi() noexcept {
    __builtin_cpu_init();  // may run before the constructors that would otherwise do it
    return __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
#endif

using Permutation = void (*)(uint64_t*) noexcept;

Permutation pick_permutation() noexcept {
#if defined(MPT_KECCAK_X86_DISPATCH)
    return cpu_has_bmi() ? keccakf1600_bmi : keccakf1600_complemented;
#else
    return keccakf1600_plain;
#endif
}

inline uint64_t load_le64(const uint8_t* p) noexcept {
    uint64_t v;
    std::memcpy(&v, p, 8);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    return v;
}

// The n < 8 bytes at p as the low bytes of a little-endian lane.
inline uint64_t load_le_partial(const uint8_t* p, size_t n) noexcept {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
}

// XORs n bytes into the rate at byte offset off. REQUIRES: off + n <= kRate.
void absorb_bytes(uint64_t s[25], size_t off, const uint8_t* p, size_t n) noexcept {
    // Up to the next lane boundary byte by byte, then whole lanes, then the last bytes.
    for (; n > 0 && off % 8 != 0; ++p, --n, ++off) s[off / 8] ^= uint64_t{*p} << (8 * (off % 8));
    for (; n >= 8; p += 8, n -= 8, off += 8) s[off / 8] ^= load_le64(p);
    if (n > 0) s[off / 8] ^= load_le_partial(p, n);
}

inline void store_le64(uint8_t* p, uint64_t v) noexcept {
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    std::memcpy(p, &v, 8);
}

// Keccak pad10*1 with the original domain byte 0x01 after off absorbed bytes, the last
// permutation, and the first 32 bytes of the state.
Hash256 pad_and_squeeze(uint64_t s[25], size_t off) noexcept {
    s[off / 8] ^= uint64_t{0x01} << (8 * (off % 8));
    s[(Keccak256::kRate - 1) / 8] ^= uint64_t{0x80} << (8 * ((Keccak256::kRate - 1) % 8));
    keccakf1600(s);
    Hash256 out;
    for (size_t i = 0; i < 4; ++i) store_le64(out.data() + 8 * i, s[i]);
    return out;
}

// The n bytes at p absorbed into s (at a block boundary), padded and squeezed.
Hash256 absorb_and_finish(uint64_t s[25], const uint8_t* p, size_t n) noexcept {
    for (; n >= Keccak256::kRate; p += Keccak256::kRate, n -= Keccak256::kRate) {
        for (size_t i = 0; i < Keccak256::kRate / 8; ++i) s[i] ^= load_le64(p + 8 * i);
        keccakf1600(s);
    }
    absorb_bytes(s, 0, p, n);
    return pad_and_squeeze(s, n);
}

KeccakObserver g_observer = nullptr;

// One input of n bytes hashed whole.
inline void observe(size_t n) noexcept {
    if (g_observer != nullptr) g_observer(n);
}

}  // namespace

void set_keccak_observer(KeccakObserver observer) noexcept { g_observer = observer; }

void keccakf1600(uint64_t state[25]) noexcept {
    static const Permutation permutation = pick_permutation();
    permutation(state);
}

std::span<const KeccakVariant> keccakf1600_variants() noexcept {
    static const KeccakVariant variants[] = {
        {"plain", keccakf1600_plain, true},
        {"complemented", keccakf1600_complemented, true},
#if defined(MPT_KECCAK_X86_DISPATCH)
        {"bmi", keccakf1600_bmi, cpu_has_bmi()},
#endif
    };
    return variants;
}

void Keccak256::update(bytes_view data) noexcept {
    const uint8_t* p = data.data();
    size_t n = data.size();
    absorbed_ += n;
    if (offset_ != 0) {
        const size_t take = std::min(n, kRate - offset_);
        absorb_bytes(state_, offset_, p, take);
        p += take, n -= take, offset_ += take;
        if (offset_ < kRate) return;
        keccakf1600(state_);
        offset_ = 0;
    }
    for (; n >= kRate; p += kRate, n -= kRate) {
        for (size_t i = 0; i < kRate / 8; ++i) state_[i] ^= load_le64(p + 8 * i);
        keccakf1600(state_);
    }
    absorb_bytes(state_, 0, p, n);
    offset_ = n;
}

Hash256 Keccak256::finish() noexcept {
    observe(absorbed_);
    return pad_and_squeeze(state_, offset_);
}

Hash256 keccak256(bytes_view data) noexcept {
    observe(data.size());
    uint64_t s[25] = {};
    return absorb_and_finish(s, data.data(), data.size());
}

namespace {

void hash_scalar(std::span<const bytes_view> inputs, std::span<Hash256> out) noexcept {
    for (size_t i = 0; i < inputs.size(); ++i) {
        uint64_t s[25] = {};
        out[i] = absorb_and_finish(s, inputs[i].data(), inputs[i].size());
    }
}

#if defined(MPT_KECCAK_LANES)
// The multi-buffer loop (the AVX2 kernel's; keccak256_x8 is the AVX-512 one, its states kept
// in registers): each of the L lanes holds one input's state and absorbs its next block; all
// lanes are permuted together; a lane whose last (padded) block went in gives its digest and
// takes the next input. The lanes need not be in step, so inputs of any lengths mix. When
// few inputs are left they finish one at a time.
template <size_t L, void (*Permute)(uint64_t (*)[L]) noexcept>
void hash_lanes(std::span<const bytes_view> inputs, std::span<Hash256> out) noexcept {
    constexpr size_t kWords = Keccak256::kRate / 8;
    // At most this many inputs left go one at a time: four lanes cost 1.5 to 1.8 single
    // permutations (mpt_micro_bench BM_keccak256_batch_avx2 against BM_keccak256).
    constexpr size_t kScalarTail = 1;
    alignas(64) uint64_t state[25][L];
    size_t input[L];
    size_t pos[L];  // bytes of the input absorbed
    bool busy[L] = {};
    bool last[L] = {};
    size_t next = 0;
    size_t n_busy = 0;
    for (;;) {
        for (size_t j = 0; j < L && next < inputs.size(); ++j) {
            if (busy[j]) continue;
            for (auto& lane : state) lane[j] = 0;
            input[j] = next++, pos[j] = 0, busy[j] = true, ++n_busy;
        }
        if (n_busy == 0) return;
        if (n_busy <= kScalarTail && next == inputs.size()) {
            for (size_t j = 0; j < L; ++j) {
                if (!busy[j]) continue;
                uint64_t s[25];
                for (size_t i = 0; i < 25; ++i) s[i] = state[i][j];
                const bytes_view in = inputs[input[j]];
                out[input[j]] = absorb_and_finish(s, in.data() + pos[j], in.size() - pos[j]);
            }
            return;
        }
        for (size_t j = 0; j < L; ++j) {
            if (!busy[j]) continue;
            const bytes_view in = inputs[input[j]];
            const uint8_t* p = in.data() + pos[j];
            const size_t left = in.size() - pos[j];
            last[j] = left < Keccak256::kRate;
            pos[j] += Keccak256::kRate;
            if (!last[j]) {
                for (size_t i = 0; i < kWords; ++i) state[i][j] ^= load_le64(p + 8 * i);
                continue;
            }
            // The last block, padded in place (pad10*1 with the domain byte 0x01): its whole
            // lanes, the lane the input ends in, and the rate's last byte.
            const size_t whole = left / 8;
            for (size_t i = 0; i < whole; ++i) state[i][j] ^= load_le64(p + 8 * i);
            state[whole][j] ^= load_le_partial(p + 8 * whole, left % 8) | uint64_t{0x01}
                                                                              << (8 * (left % 8));
            state[kWords - 1][j] ^= uint64_t{0x80} << 56;
        }
        Permute(state);
        for (size_t j = 0; j < L; ++j) {
            if (!busy[j] || !last[j]) continue;
            Hash256& h = out[input[j]];
            for (size_t i = 0; i < 4; ++i) store_le64(h.data() + 8 * i, state[i][j]);
            busy[j] = false, --n_busy;
        }
    }
}

void hash_x8(std::span<const bytes_view> inputs, std::span<Hash256> out) noexcept {
    detail::keccak256_x8(inputs, out, absorb_and_finish);
}

bool cpu_has_avx2() noexcept {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
}

bool cpu_has_avx512() noexcept {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
}
#endif

const KeccakBatchKernel& pick_batch_kernel() noexcept {
    const auto kernels = keccak256_batch_kernels();
    if (const char* want = std::getenv("MPT_KECCAK")) {
        for (const auto& k : kernels) {
            if (k.available && std::strcmp(k.name, want) == 0) return k;
        }
    }
    const KeccakBatchKernel* best = &kernels[0];
    for (const auto& k : kernels) {
        if (k.available) best = &k;  // listed slowest first
    }
    return *best;
}

}  // namespace

std::span<const KeccakBatchKernel> keccak256_batch_kernels() noexcept {
    static const KeccakBatchKernel kernels[] = {
        {"scalar", hash_scalar, true},
#if defined(MPT_KECCAK_LANES)
        {"avx2", hash_lanes<4, detail::keccakf1600_x4>, cpu_has_avx2()},
        {"avx512", hash_x8, cpu_has_avx512()},
#endif
    };
    return kernels;
}

const KeccakBatchKernel& keccak256_batch_kernel() noexcept {
    static const KeccakBatchKernel& kernel = pick_batch_kernel();
    return kernel;
}

void keccak256_batch(std::span<const bytes_view> inputs, std::span<Hash256> out) noexcept {
    if (g_observer != nullptr) {
        for (const bytes_view in : inputs) g_observer(in.size());
    }
    keccak256_batch_kernel().hash(inputs, out);
}

}  // namespace mpt
