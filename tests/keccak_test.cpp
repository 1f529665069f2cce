#include "test_util.hpp"

#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>
#include <mpt/ops/hash_counts.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace mpt;
using mpt::test::h;

namespace {

// A deliberately plain Keccak-f[1600], written from the specification's step definitions
// with a lane array and explicit (x, y) indexing, to cross-check the unrolled one.
void reference_keccakf(uint64_t a[25]) {
    static const int r[5][5] = {{0, 36, 3, 41, 18},
                                {1, 44, 10, 45, 2},
                                {62, 6, 43, 15, 61},
                                {28, 55, 25, 21, 56},
                                {27, 20, 39, 8, 14}};
    // Round constants from the LFSR rc(t) of the specification, computed here.
    auto rc_bit = [](int t) {
        if (t % 255 == 0) return 1;
        uint8_t R = 1;
        for (int i = 1; i <= t % 255; ++i) {
            const uint8_t hi = R & 0x80;
            R <<= 1;
            if (hi) R ^= 0x71;
        }
        return R & 1;
    };
    auto rot = [](uint64_t x, int n) { return n == 0 ? x : (x << n) | (x >> (64 - n)); };
    for (int round = 0; round < 24; ++round) {
        uint64_t c[5], d[5], bb[5][5];
        for (int x = 0; x < 5; ++x) {
            c[x] = 0;
            for (int y = 0; y < 5; ++y) c[x] ^= a[x + 5 * y];
        }
        for (int x = 0; x < 5; ++x) d[x] = c[(x + 4) % 5] ^ rot(c[(x + 1) % 5], 1);
        for (int x = 0; x < 5; ++x)
            for (int y = 0; y < 5; ++y) a[x + 5 * y] ^= d[x];
        for (int x = 0; x < 5; ++x)
            for (int y = 0; y < 5; ++y) bb[y][(2 * x + 3 * y) % 5] = rot(a[x + 5 * y], r[x][y]);
        for (int x = 0; x < 5; ++x)
            for (int y = 0; y < 5; ++y)
                a[x + 5 * y] = bb[x][y] ^ (~bb[(x + 1) % 5][y] & bb[(x + 2) % 5][y]);
        uint64_t rc = 0;
        for (int j = 0; j <= 6; ++j) rc |= uint64_t(rc_bit(j + 7 * round)) << ((1 << j) - 1);
        a[0] ^= rc;
    }
}

Hash256 reference_keccak256(bytes_view in) {
    uint64_t s[25] = {};
    bytes padded(in.begin(), in.end());
    padded.push_back(0x01);
    while (padded.size() % 136 != 0) padded.push_back(0);
    padded.back() |= 0x80;
    for (size_t off = 0; off < padded.size(); off += 136) {
        for (size_t i = 0; i < 136; ++i) s[i / 8] ^= uint64_t(padded[off + i]) << (8 * (i % 8));
        reference_keccakf(s);
    }
    Hash256 out;
    for (size_t i = 0; i < 32; ++i) out[i] = static_cast<uint8_t>(s[i / 8] >> (8 * (i % 8)));
    return out;
}

Hash256 to_hash(const bytes& b) {
    Hash256 x;
    std::memcpy(x.data(), b.data(), 32);
    return x;
}

}  // namespace

TEST_CASE("keccak256 known digests") {
    // keccak256("") and keccak256(0x80), the empty trie root.
    CHECK(keccak256({}) ==
          to_hash(h("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")));
    const uint8_t rlp_empty = 0x80;
    CHECK(keccak256({&rlp_empty, 1}) == kEmptyRoot);
    CHECK(keccak256(mpt::test::b("abc")) ==
          to_hash(h("4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")));
}

TEST_CASE("keccak256 agrees with the plain reference on every length 0..600") {
    std::mt19937_64 rng(mpt::test::seed("keccak_random"));
    for (size_t n = 0; n <= 600; ++n) {
        const bytes in = mpt::test::random_bytes(rng, n);
        REQUIRE_MESSAGE(keccak256(in) == reference_keccak256(in), "length " << n);
    }
}

TEST_CASE("incremental keccak256 equals one-shot across split points") {
    std::mt19937_64 rng(mpt::test::seed("keccak_incremental"));
    const bytes in = mpt::test::random_bytes(rng, 700);
    const Hash256 whole = keccak256(in);
    for (size_t cut : {0, 1, 7, 8, 135, 136, 137, 272, 500, 700}) {
        Keccak256 k;
        k.update(bytes_view(in).subspan(0, cut));
        k.update(bytes_view(in).subspan(cut));
        CHECK(k.finish() == whole);
    }
}

TEST_CASE("every permutation variant agrees with the plain reference") {
    std::mt19937_64 rng(mpt::test::seed("keccak_variants"));
    size_t ran = 0;
    for (const KeccakVariant& v : keccakf1600_variants()) {
        if (!v.available) continue;
        ++ran;
        for (int trial = 0; trial < 200; ++trial) {
            uint64_t a[25], b[25];
            for (size_t i = 0; i < 25; ++i) a[i] = b[i] = rng();
            // Chained calls: a wrong complement at entry or exit shows up in the next call.
            for (int k = 0; k < 3; ++k) {
                v.permute(a);
                reference_keccakf(b);
            }
            REQUIRE_MESSAGE(std::equal(a, a + 25, b), v.name << " trial " << trial);
        }
    }
    // The portable variants run everywhere.
    CHECK(ran >= 2);
}

namespace {

// Each input's digest from kernel k, beside the one-at-a-time keccak256.
void check_batch(const KeccakBatchKernel& k, const std::vector<bytes>& inputs) {
    std::vector<bytes_view> views(inputs.begin(), inputs.end());
    std::vector<Hash256> out(inputs.size());
    k.hash(views, out);
    for (size_t i = 0; i < inputs.size(); ++i) {
        INFO(k.name << ": input " << i << " of " << inputs.size() << ", " << inputs[i].size()
                    << " bytes");
        CHECK(out[i] == keccak256(inputs[i]));
    }
}

}  // namespace

TEST_CASE("every batch kernel gives each input the one-at-a-time digest") {
    std::mt19937_64 rng(44);
    size_t tried = 0;
    for (const auto& k : keccak256_batch_kernels()) {
        if (!k.available) {
            MESSAGE("batch kernel " << k.name << " not available on this CPU: not tried");
            continue;
        }
        ++tried;
        {
            // Every length 0..1100, in a random order so that the lanes differ in length.
            std::vector<bytes> inputs;
            for (size_t n = 0; n <= 1100; ++n) inputs.push_back(mpt::test::random_bytes(rng, n));
            std::shuffle(inputs.begin(), inputs.end(), rng);
            check_batch(k, inputs);
        }
        {
            // Every input count 0..17 (each lane count, and lanes refilled), with lengths
            // around the block boundaries.
            static const size_t kLengths[] = {0,   1,   31,  32,  33,  64,  135,
                                              136, 137, 271, 272, 532, 1100};
            for (size_t count = 0; count <= 17; ++count) {
                std::vector<bytes> inputs;
                for (size_t i = 0; i < count; ++i) {
                    inputs.push_back(
                        mpt::test::random_bytes(rng, kLengths[rng() % std::size(kLengths)]));
                }
                check_batch(k, inputs);
            }
        }
        {
            // One long input among short ones, and equal inputs in several lanes.
            std::vector<bytes> inputs(9, bytes(64, 0xab));
            inputs[3] = mpt::test::random_bytes(rng, 5000);
            check_batch(k, inputs);
        }
    }
    CHECK(tried >= 1);
}

TEST_CASE("the batch kernel in use is an available one, and keccak256_batch uses it") {
    const KeccakBatchKernel& k = keccak256_batch_kernel();
    CHECK(k.available);
    const bytes a(100, 1), b(300, 2);
    const bytes_view in[] = {a, b};
    Hash256 out[2];
    keccak256_batch(in, out);
    CHECK(out[0] == keccak256(a));
    CHECK(out[1] == keccak256(b));
}

TEST_CASE("keccak_counts counts hashes, bytes and permutations while counting is on") {
    const std::vector<size_t> lengths = {0, 1, 135, 136, 137, 272, 532};
    uint64_t bytes = 0, permutations = 0;
    for (const size_t n : lengths) bytes += n, permutations += n / 136 + 1;
    std::vector<bytes_view> inputs;
    std::vector<std::vector<uint8_t>> store;
    for (const size_t n : lengths) store.emplace_back(n, uint8_t{0x5a});
    for (const auto& s : store) inputs.emplace_back(s.data(), s.size());
    std::vector<Hash256> out(inputs.size());
    const auto hash_all = [&] {
        for (const bytes_view in : inputs) (void)keccak256(in);
        keccak256_batch(inputs, out);
        Keccak256 k;  // in two updates: counted as one input
        k.update(inputs.back().first(100));
        k.update(inputs.back().subspan(100));
        (void)k.finish();
    };
    const uint64_t n = lengths.size();
    const KeccakCounts before = keccak_counts();

    keccak_counting(false);
    hash_all();
    CHECK(keccak_counts().hashes == before.hashes);

    keccak_counting(true);
    hash_all();
    std::thread([&] { hash_all(); }).join();  // a thread that has ended still counts
    keccak_counting(false);
    const KeccakCounts after = keccak_counts();
    CHECK(after.hashes - before.hashes == 2 * (2 * n + 1));
    CHECK(after.bytes - before.bytes == 2 * (2 * bytes + 532));
    CHECK(after.permutations - before.permutations == 2 * (2 * permutations + 4));
}

TEST_CASE("KeccakBatcher hands each digest to its tag when its batch fills or at flush") {
    std::vector<std::vector<uint8_t>> inputs;
    for (size_t i = 0; i < 130; ++i) inputs.emplace_back(i * 7 % 200, static_cast<uint8_t>(i));
    std::vector<std::pair<const std::vector<uint8_t>*, Hash256>> got;
    const auto sink = [&](const std::vector<uint8_t>* in, const Hash256& h) {
        got.emplace_back(in, h);
    };
    KeccakBatcher<const std::vector<uint8_t>*, decltype(sink)> batch(sink);
    batch.flush();  // nothing added: nothing handed over
    CHECK(got.empty());
    for (size_t i = 0; i < inputs.size(); ++i) {
        batch.add(bytes_view(inputs[i].data(), inputs[i].size()), &inputs[i]);
        CHECK(got.size() == (i + 1) / 64 * 64);
    }
    batch.flush();
    batch.flush();
    REQUIRE(got.size() == inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        CHECK(got[i].first == &inputs[i]);
        CHECK(got[i].second == keccak256(bytes_view(inputs[i].data(), inputs[i].size())));
    }
}

TEST_CASE("keccak256_each hands each input's digest to its index, once, for any count") {
    for (const size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{200}}) {
        CAPTURE(n);
        std::vector<std::vector<uint8_t>> inputs;
        for (size_t i = 0; i < n; ++i) inputs.emplace_back(i % 300, static_cast<uint8_t>(i));
        std::vector<size_t> order;
        std::vector<Hash256> got(n);
        keccak256_each(
            n, [&](size_t i) { return bytes_view(inputs[i].data(), inputs[i].size()); },
            [&](size_t i, const Hash256& h) {
                order.push_back(i);
                got[i] = h;
            });
        REQUIRE(order.size() == n);
        for (size_t i = 0; i < n; ++i) {
            CHECK(order[i] == i);
            CHECK(got[i] == keccak256(bytes_view(inputs[i].data(), inputs[i].size())));
        }
    }
}
