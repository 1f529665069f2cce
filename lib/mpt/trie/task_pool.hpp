// A pool of threads over numbered tasks, for the builders that split a trie by its first
// nibbles (stack_trie_root, kv_root, the bulk build).
//
// Thread safety: run_tasks starts and joins its own threads; task must be safe to call from
// several threads at once for distinct t.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace mpt {

// Runs task(t, self) for every t in [0, tasks) on the calling thread and up to
// min(threads, tasks) - 1 others, each thread taking the next task not yet taken; self numbers
// the thread (0: the caller). An exception (out of memory) stops the others after their
// current task and is rethrown here. Where no more threads can be had, the ones started and
// this one do the work.
template <typename Task>
void run_tasks(unsigned threads, size_t tasks, Task&& task) {
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> failures(std::min<size_t>(threads, tasks));
    auto work = [&](unsigned self) {
        try {
            for (size_t t; (t = next.fetch_add(1)) < tasks;) task(t, self);
        } catch (...) {
            failures[self] = std::current_exception();
            next = tasks;
        }
    };
    std::vector<std::thread> pool;
    try {
        for (unsigned t = 1; t < failures.size(); ++t) pool.emplace_back(work, t);
    } catch (...) {
    }
    work(0);
    for (std::thread& t : pool) t.join();
    for (const std::exception_ptr& e : failures) {
        if (e) std::rethrow_exception(e);
    }
}

}  // namespace mpt
