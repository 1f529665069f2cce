#include <mpt/ops/hash_counts.hpp>

#include <mpt/core/keccak.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace mpt {
namespace {

// A thread's counters: stores of the one thread that hashes, loads from any; they join the
// retired totals as the thread ends.
struct ThreadCounts {
    std::atomic<uint64_t> hashes{0}, bytes{0}, permutations{0};
    ThreadCounts();
    ~ThreadCounts();
};

struct Registry {
    std::mutex mu;
    std::vector<const ThreadCounts*> live;
    KeccakCounts retired;
};

// Made before the first thread's counters, so destroyed after the last (the main thread's
// end before the statics'; every other thread is joined before then).
Registry& registry() noexcept {
    static Registry r;
    return r;
}

ThreadCounts::ThreadCounts() {
    Registry& r = registry();
    const std::lock_guard lock(r.mu);
    r.live.push_back(this);
}

ThreadCounts::~ThreadCounts() {
    Registry& r = registry();
    const std::lock_guard lock(r.mu);
    r.retired.hashes += hashes.load(std::memory_order_relaxed);
    r.retired.bytes += bytes.load(std::memory_order_relaxed);
    r.retired.permutations += permutations.load(std::memory_order_relaxed);
    r.live.erase(std::find(r.live.begin(), r.live.end(), this));
}

// A single writer's add: a plain load and store, no locked instruction.
void add(std::atomic<uint64_t>& counter, uint64_t n) noexcept {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

void count(size_t bytes) noexcept {
    thread_local ThreadCounts counts;
    add(counts.hashes, 1);
    add(counts.bytes, bytes);
    add(counts.permutations, bytes / Keccak256::kRate + 1);
}

}  // namespace

void keccak_counting(bool on) noexcept { set_keccak_observer(on ? count : nullptr); }

KeccakCounts keccak_counts() noexcept {
    Registry& r = registry();
    const std::lock_guard lock(r.mu);
    KeccakCounts sum = r.retired;
    for (const ThreadCounts* t : r.live) {
        sum.hashes += t->hashes.load(std::memory_order_relaxed);
        sum.bytes += t->bytes.load(std::memory_order_relaxed);
        sum.permutations += t->permutations.load(std::memory_order_relaxed);
    }
    return sum;
}

}  // namespace mpt
