// mpt_micro_bench: Google Benchmark microbenchmarks of the hot paths of `mpt root`.
//
//   mpt_micro_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N] ...
//
// Keccak-256 is measured beside OpenSSL's SHA3-256 on the same sizes (the same permutation
// and rate; only the padding byte differs), so the ratio of the two is read from one run.
// OpenSSL is linked into this benchmark only, never into the library.
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/node.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/trie.hpp>

#include <benchmark/benchmark.h>

#ifdef MPT_BENCH_OPENSSL
#include <openssl/evp.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace mpt;

bytes pattern_bytes(size_t n) {
    bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(i * 131 + 7);
    return b;
}

// Key i of the benchmark data: keccak256 of i as a big-endian uint64 (as bench/gen_kv.cpp).
Hash256 bench_key(uint64_t i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (8 * (7 - b)));
    return keccak256(be);
}

void BM_keccakf1600(benchmark::State& state) {
    uint64_t s[25] = {};
    for (auto _ : state) {
        keccakf1600(s);
        benchmark::DoNotOptimize(s);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * Keccak256::kRate);
}
BENCHMARK(BM_keccakf1600);

void BM_keccak256(benchmark::State& state) {
    const bytes in = pattern_bytes(static_cast<size_t>(state.range(0)));
    for (auto _ : state) {
        Hash256 h = keccak256(in);
        benchmark::DoNotOptimize(h);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
// 32: a hashed key; 64: two hashes; 136: exactly one rate block (two permutations with the
// padding); 532: a full branch node (four blocks); 8704: 64 blocks, the per-block cost.
BENCHMARK(BM_keccak256)->Arg(32)->Arg(64)->Arg(136)->Arg(532)->Arg(8704);

// keccak256_batch over 64 inputs of the same size, timed per hash (the time_per_hash counter;
// BM_keccak256's time is already per hash). BM_keccak256_batch uses the kernel in use
// (MPT_KECCAK picks it); BM_keccak256_batch_<kernel> runs each kernel this CPU has.
void keccak256_batch_of(benchmark::State& state, const KeccakBatchKernel& kernel) {
    constexpr size_t kBatch = 64;
    std::vector<bytes> inputs;
    for (size_t i = 0; i < kBatch; ++i) {
        bytes b = pattern_bytes(static_cast<size_t>(state.range(0)));
        if (!b.empty()) b[0] = static_cast<uint8_t>(i);
        inputs.push_back(std::move(b));
    }
    const std::vector<bytes_view> views(inputs.begin(), inputs.end());
    std::vector<Hash256> out(kBatch);
    for (auto _ : state) {
        kernel.hash(views, out);
        benchmark::DoNotOptimize(out.data());
    }
    const auto hashes = static_cast<double>(state.iterations() * kBatch);
    state.counters["time_per_hash"] =
        benchmark::Counter(hashes, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel(kernel.name);
}

void BM_keccak256_batch(benchmark::State& state) {
    keccak256_batch_of(state, keccak256_batch_kernel());
}
BENCHMARK(BM_keccak256_batch)->Arg(32)->Arg(64)->Arg(136)->Arg(532);

[[maybe_unused]] const bool kBatchKernelsRegistered = [] {
    for (const auto& k : keccak256_batch_kernels()) {
        if (!k.available) continue;
        benchmark::RegisterBenchmark((std::string("BM_keccak256_batch_") + k.name).c_str(),
                                     [&k](benchmark::State& s) { keccak256_batch_of(s, k); })
            ->Arg(64)
            ->Arg(136);
    }
    return true;
}();

#ifdef MPT_BENCH_OPENSSL
void BM_openssl_sha3_256(benchmark::State& state) {
    const bytes in = pattern_bytes(static_cast<size_t>(state.range(0)));
    // The digest is fetched once and the context reused: the cheapest way to call EVP, so
    // that the comparison is with OpenSSL's permutation rather than its dispatch.
    EVP_MD* md = EVP_MD_fetch(nullptr, "SHA3-256", nullptr);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    if (md == nullptr || ctx == nullptr) {
        state.SkipWithError("OpenSSL has no SHA3-256");
        return;
    }
    uint8_t out[32];
    unsigned int len = 0;
    for (auto _ : state) {
        EVP_DigestInit_ex2(ctx, md, nullptr);
        EVP_DigestUpdate(ctx, in.data(), in.size());
        EVP_DigestFinal_ex(ctx, out, &len);
        benchmark::DoNotOptimize(out);
    }
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_openssl_sha3_256)->Arg(32)->Arg(64)->Arg(136)->Arg(532)->Arg(8704);
#endif

// A leaf with a 63-nibble path and a 32-byte value: the typical short node of a trie of
// hashed keys (the leaf under a root branch).
void BM_encode_short_node(benchmark::State& state) {
    const Hash256 key = bench_key(1);
    const Hash256 value = bench_key(2);
    bytes out;
    for (auto _ : state) {
        out.clear();
        encode_leaf(out, NibbleView(key).sub(1), value);
        benchmark::DoNotOptimize(out.data());
    }
}
BENCHMARK(BM_encode_short_node);

// A branch with sixteen hashed children and no value: 532 bytes.
void BM_encode_full_branch(benchmark::State& state) {
    std::array<NodeRef, 16> children;
    for (size_t i = 0; i < 16; ++i) children[i] = NodeRef::from_hash(bench_key(i));
    bytes out;
    for (auto _ : state) {
        out.clear();
        encode_branch(out, children.data(), {});
        benchmark::DoNotOptimize(out.data());
    }
}
BENCHMARK(BM_encode_full_branch);

std::vector<std::pair<Hash256, Hash256>> sorted_bench_pairs(size_t n) {
    std::vector<std::pair<Hash256, Hash256>> pairs(n);
    for (size_t i = 0; i < n; ++i) pairs[i] = {bench_key(i), keccak256(bench_key(i))};
    std::sort(pairs.begin(), pairs.end());
    return pairs;
}

void BM_stack_trie_root(benchmark::State& state) {
    const auto pairs = sorted_bench_pairs(static_cast<size_t>(state.range(0)));
    for (auto _ : state) {
        StackTrie st;
        for (const auto& [k, v] : pairs) {
            if (!st.add(k, v)) state.SkipWithError("add failed");
        }
        Hash256 root = st.finish();
        benchmark::DoNotOptimize(root);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_stack_trie_root)->Arg(10000)->Unit(benchmark::kMillisecond);

// stack_trie_root on n pairs with t threads and no size threshold (wall time): where the
// parallel split starts to pay is where kParallelRootMinPairs belongs.
void BM_stack_trie_root_threads(benchmark::State& state) {
    const auto pairs = sorted_bench_pairs(static_cast<size_t>(state.range(0)));
    std::vector<KvPair> views;
    for (const auto& [k, v] : pairs) views.push_back({k, v});
    const unsigned threads = static_cast<unsigned>(state.range(1));
    for (auto _ : state) {
        auto root = stack_trie_root(views, threads, 0);
        if (!root) state.SkipWithError("stack_trie_root failed");
        benchmark::DoNotOptimize(root);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_stack_trie_root_threads)
    ->ArgsProduct({{256, 1024, 4096, 16384, 100000}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// Trie::commit of n pairs put into an empty trie (in memory, not timed): every node is dirty
// and hashed, a height at a time in batches.
void BM_trie_commit(benchmark::State& state) {
    const size_t n = static_cast<size_t>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        Trie t;
        for (size_t i = 0; i < n; ++i) {
            const Hash256 k = bench_key(i);
            if (!t.put(k, keccak256(k))) state.SkipWithError("put failed");
        }
        state.ResumeTiming();
        auto batch = t.commit();
        if (!batch) state.SkipWithError("commit failed");
        benchmark::DoNotOptimize(batch);
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_trie_commit)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// The document bench/gen_kv.cpp writes for n pairs, in memory.
std::string bench_document(size_t n) {
    std::string text = "{\n";
    for (uint64_t i = 0; i < n; ++i) {
        const Hash256 key = bench_key(i);
        text += "\"0x";
        append_hex_digits(text, key);
        text += "\": \"0x";
        append_hex_digits(text, keccak256(key));
        text += i + 1 < n ? "\",\n" : "\"\n";
    }
    text += "}\n";
    return text;
}

// Parse throughput of the k/v reader on the benchmark document (bytes of JSON per second).
void BM_parse_kv(benchmark::State& state) {
    const std::string text = bench_document(static_cast<size_t>(state.range(0)));
    for (auto _ : state) {
        auto r = parse_kv(text);
        if (!r) state.SkipWithError("parse failed");
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_parse_kv)->Arg(100000)->Unit(benchmark::kMillisecond);

// The same pairs as an array of [key, value] pairs with plain (non-hex) strings: the
// general path of the reader.
void BM_parse_kv_text_pairs(benchmark::State& state) {
    const size_t n = static_cast<size_t>(state.range(0));
    std::string text = "[";
    for (size_t i = 0; i < n; ++i) {
        if (i != 0) text += ",\n";
        text += "[\"key-" + std::to_string(i * 2654435761u) + "\", \"value of key " +
                std::to_string(i) + "\"]";
    }
    text += "]\n";
    for (auto _ : state) {
        auto r = parse_kv(text);
        if (!r) state.SkipWithError("parse failed");
        benchmark::DoNotOptimize(r);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_parse_kv_text_pairs)->Arg(100000)->Unit(benchmark::kMillisecond);

// The final-content sort of `mpt root` on n distinct hashed keys in generation order.
void BM_sorted_final_pairs(benchmark::State& state) {
    const auto r = parse_kv(bench_document(static_cast<size_t>(state.range(0))));
    if (!r) {
        state.SkipWithError("parse failed");
        return;
    }
    for (auto _ : state) {
        SortedPairs s = sorted_final_pairs(*r, false);
        benchmark::DoNotOptimize(s.pairs.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_sorted_final_pairs)->Arg(100000)->Unit(benchmark::kMillisecond);

// Each compiled variant of the permutation, by name (keccakf1600 above runs the one picked
// for this CPU).
void BM_keccakf1600_variant(benchmark::State& state, const KeccakVariant* v) {
    uint64_t s[25] = {};
    for (auto _ : state) {
        v->permute(s);
        benchmark::DoNotOptimize(s);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * Keccak256::kRate);
}

// --kv_file=PATH: the floor of `mpt root PATH` measured in its parts: reading the file, parsing
// it, and hashing every node of its trie (the RLPs gathered beforehand by a StackTrie sink).
// bench/root_bench.sh compares `mpt root` with their sum.
class CollectingSink : public NodeSink {
public:
    void put(bytes_view, bytes_view rlp) override {
        all_.insert(all_.end(), rlp.begin(), rlp.end());
        ends_.push_back(all_.size());
    }
    // Calls f on each node's RLP.
    template <typename F>
    void each(F&& f) const {
        size_t begin = 0;
        for (const size_t end : ends_) {
            f(bytes_view(all_).subspan(begin, end - begin));
            begin = end;
        }
    }
    size_t count() const noexcept { return ends_.size(); }

private:
    bytes all_;
    std::vector<size_t> ends_;
};

void register_file_benchmarks(const std::string& path) {
    // Reading as `mpt root` reads: load_input (a mapping for a regular file), every page
    // touched once.
    benchmark::RegisterBenchmark("file/read",
                                 [path](benchmark::State& state) {
                                     for (auto _ : state) {
                                         auto text = load_input(path);
                                         if (!text) {
                                             state.SkipWithError(text.error().message().c_str());
                                             break;
                                         }
                                         unsigned sum = 0;
                                         const std::string_view v = text->view();
                                         for (size_t i = 0; i < v.size(); i += 4096)
                                             sum += static_cast<unsigned char>(v[i]);
                                         benchmark::DoNotOptimize(sum);
                                     }
                                 })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
    benchmark::RegisterBenchmark(
        "file/parse",
        [path](benchmark::State& state) {
            auto text = load_input(path);
            if (!text) {
                state.SkipWithError(text.error().message().c_str());
                return;
            }
            for (auto _ : state) {
                auto r = parse_kv(text->view());
                if (!r) state.SkipWithError(r.error().message().c_str());
                benchmark::DoNotOptimize(r);
            }
            state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text->view().size()));
        })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
    benchmark::RegisterBenchmark(
        "file/keccak",
        [path](benchmark::State& state) {
            auto sink = std::make_unique<CollectingSink>();
            {
                auto text = read_file(path);
                if (!text) {
                    state.SkipWithError(text.error().message().c_str());
                    return;
                }
                auto input = parse_kv(*text);
                if (!input) {
                    state.SkipWithError(input.error().message().c_str());
                    return;
                }
                StackTrie st(sink.get());
                for (const KvPair& p : sorted_final_pairs(*input, false).pairs) {
                    if (!st.add(p.key, p.value)) state.SkipWithError("add failed");
                }
                st.finish();
            }
            for (auto _ : state) {
                sink->each([](bytes_view rlp) {
                    Hash256 h = keccak256(rlp);
                    benchmark::DoNotOptimize(h);
                });
            }
            state.SetLabel(std::to_string(sink->count()) + " nodes");
        })
        ->Unit(benchmark::kMillisecond)
        ->Iterations(3);
}

}  // namespace

int main(int argc, char** argv) {
    // --kv_file=PATH is ours; the rest goes to Google Benchmark.
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--kv_file=", 0) == 0) {
            register_file_benchmarks(arg.substr(10));
            for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
            --argc;
            break;
        }
    }
    for (const KeccakVariant& v : keccakf1600_variants()) {
        if (v.available) {
            benchmark::RegisterBenchmark((std::string("BM_keccakf1600_variant/") + v.name).c_str(),
                                         BM_keccakf1600_variant, &v);
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
