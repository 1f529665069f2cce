// Progress on stderr for a command that runs long: once it has run a second, one line that
// says what it does, how far it is when it counts, and for how long, redrawn in place four
// times a second, e.g.
//
//   mpt: check: big.db: 1834112 rows read, 6 s
//
// Drawn only when stderr is a terminal and -q was not given; for a command that prints its
// answer as it goes, only when stdout is not a terminal as well (the line would land among the
// answer). Any other write to stderr (an error, a note) erases the line first
// (draw_progress_line in common.hpp), and stop() erases it for good before the answer.
// MPT_PROGRESS_AFTER_MS in the environment sets the second to another wait (the tests draw at
// once with 0).
//
// Thread safety: phase, set and stop may be called from any thread; the line is drawn by a
// thread of its own, which exists only while the line may be drawn.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace mpt::cli {

class ProgressLine {
public:
    // what: the command, "check"; phase: what it does first (see phase()). streamed: the
    // command prints its answer as it goes.
    ProgressLine(std::string_view what, std::string_view phase, bool streamed = false);
    ~ProgressLine();
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

    // What the command does now: "big.db", "hashing 10000000 pairs".
    void phase(std::string text);
    // Counts of unit ("rows read") to show: the sum of sources, less what they held when
    // this is called. Each source must outlive the line.
    void count(std::vector<const std::atomic<uint64_t>*> sources, std::string unit);
    // Counts of unit that set() gives as they go.
    void count(std::string unit);
    // done of total (total 0: unknown), from any thread, often: no lock taken.
    void set(uint64_t done, uint64_t total) noexcept;
    // Whether the line may be drawn (a terminal): a count that costs something to keep need
    // not be kept otherwise.
    bool shown() const noexcept { return thread_.joinable(); }
    // Stops drawing and erases the line: before the command prints its answer.
    void stop() noexcept;

private:
    void run(std::chrono::milliseconds after);
    std::string text(int64_t seconds);

    std::string what_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::string phase_;
    std::string unit_;
    std::vector<const std::atomic<uint64_t>*> sources_;
    uint64_t base_ = 0;
    std::atomic<uint64_t> done_{0};
    std::atomic<uint64_t> total_{0};
    std::thread thread_;
};

}  // namespace mpt::cli
