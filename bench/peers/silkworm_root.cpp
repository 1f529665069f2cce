// silkworm_root: the root of the benchmark pairs by silkworm's HashBuilder, in memory, timed.
//
//   silkworm_root N [RUNS]    (RUNS default 3)
//
// The pairs are mpt_gen_kv's: key i (0 <= i < N) is keccak256 of i as a big-endian uint64,
// its value keccak256 of the key; they are made in memory first, untimed. Each run then
// copies them in generation order, sorts them by key (std::sort), and builds the root with
// HashBuilder: each key unpacked to nibbles and added with add_leaf in key order, then
// root_hash(). Prints the root and the best run's times, in seconds:
//   root 0x<hash> sort S build B total T
// Built against a silkworm checkout by bench/peers/silkworm_bench.sh.
#include <silkworm/core/trie/hash_builder.hpp>
#include <silkworm/core/trie/nibbles.hpp>

#include <ethash/keccak.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Hash = std::array<uint8_t, 32>;

struct Pair {
    Hash key;
    Hash value;
};

Hash keccak(const uint8_t* data, size_t size) {
    const ethash::hash256 h = ethash::keccak256(data, size);
    Hash out;
    std::memcpy(out.data(), h.bytes, out.size());
    return out;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: silkworm_root N [RUNS]\n");
        return 2;
    }
    const uint64_t n = std::strtoull(argv[1], nullptr, 10);
    const int runs = argc == 3 ? std::atoi(argv[2]) : 3;
    if (n == 0 || runs < 1) {
        std::fprintf(stderr, "silkworm_root: error: N and RUNS must be positive\n");
        return 2;
    }
    std::vector<Pair> generated(n);
    for (uint64_t i = 0; i < n; ++i) {
        uint8_t be[8];
        for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (8 * (7 - b)));
        generated[i].key = keccak(be, sizeof be);
        generated[i].value = keccak(generated[i].key.data(), 32);
    }
    double best_sort = 0;
    double best_build = 0;
    double best_total = 1e300;
    evmc::bytes32 root{};
    for (int r = 0; r < runs; ++r) {
        std::vector<Pair> pairs = generated;
        const auto start = std::chrono::steady_clock::now();
        std::sort(pairs.begin(), pairs.end(),
                  [](const Pair& a, const Pair& b) { return a.key < b.key; });
        const double sorted = seconds_since(start);
        silkworm::trie::HashBuilder builder;
        for (const Pair& p : pairs) {
            builder.add_leaf(silkworm::trie::unpack_nibbles(silkworm::ByteView{p.key.data(), 32}),
                             silkworm::ByteView{p.value.data(), 32});
        }
        root = builder.root_hash();
        const double total = seconds_since(start);
        if (total < best_total) {
            best_total = total;
            best_sort = sorted;
            best_build = total - sorted;
        }
    }
    std::printf("root 0x");
    for (const uint8_t b : root.bytes) std::printf("%02x", b);
    std::printf(" sort %.3f build %.3f total %.3f\n", best_sort, best_build, best_total);
    return 0;
}
