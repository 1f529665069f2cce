#include "progress.hpp"

#include "common.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>

#include <sys/ioctl.h>
#include <unistd.h>

namespace mpt::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kRedraw{250};

// The wait before the line is first drawn: a second, or MPT_PROGRESS_AFTER_MS.
std::chrono::milliseconds first_draw_after() {
    const char* env = std::getenv("MPT_PROGRESS_AFTER_MS");
    if (env != nullptr && *env != '\0') {
        char* end = nullptr;
        const long ms = std::strtol(env, &end, 10);
        if (*end == '\0' && ms >= 0) return std::chrono::milliseconds(ms);
    }
    return std::chrono::seconds(1);
}

size_t terminal_columns() {
    winsize w{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
    return 80;
}

}  // namespace

ProgressLine::ProgressLine(std::string_view what, std::string_view phase, bool streamed)
    : what_(what), phase_(printable(phase)) {
    if (!stderr_is_tty()) return;
    if (streamed && ::isatty(STDOUT_FILENO) == 1) return;
    const std::chrono::milliseconds after = first_draw_after();
    // Drawn at once when asked to be, however short the command.
    if (after.count() == 0) draw_progress_line(text(0));
    thread_ = std::thread([this, after] { run(after); });
}

ProgressLine::~ProgressLine() { stop(); }

void ProgressLine::phase(std::string text) {
    const std::lock_guard lock(mutex_);
    phase_ = printable(text);
}

void ProgressLine::count(std::vector<const std::atomic<uint64_t>*> sources, std::string unit) {
    uint64_t base = 0;
    for (const auto* s : sources) base += s->load(std::memory_order_relaxed);
    const std::lock_guard lock(mutex_);
    sources_ = std::move(sources);
    base_ = base;
    unit_ = std::move(unit);
}

void ProgressLine::count(std::string unit) {
    const std::lock_guard lock(mutex_);
    sources_.clear();
    unit_ = std::move(unit);
}

void ProgressLine::set(uint64_t done, uint64_t total) noexcept {
    done_.store(done, std::memory_order_relaxed);
    total_.store(total, std::memory_order_relaxed);
}

void ProgressLine::stop() noexcept {
    if (!thread_.joinable()) return;
    {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    erase_progress_line();
}

std::string ProgressLine::text(int64_t seconds) {
    // REQUIRES: mutex_ held.
    std::string s = "mpt: " + what_ + ": ";
    if (!phase_.empty()) s += phase_ + ", ";
    if (!unit_.empty()) {
        uint64_t done = done_.load(std::memory_order_relaxed);
        if (!sources_.empty()) {
            done = 0;
            for (const auto* src : sources_) done += src->load(std::memory_order_relaxed);
            done -= base_;
        }
        const uint64_t total = total_.load(std::memory_order_relaxed);
        s += total != 0 ? fmt::format("{} of {} {}, ", done, total, unit_)
                        : fmt::format("{} {}, ", done, unit_);
    }
    s += fmt::format("{} s", seconds);
    return s;
}

void ProgressLine::run(std::chrono::milliseconds after) {
    const Clock::time_point start = Clock::now();
    std::unique_lock lock(mutex_);
    // Drawn already when after is 0 (the constructor).
    Clock::time_point next = start + (after.count() == 0 ? kRedraw : after);
    while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
        const auto seconds =
            std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
        std::string line = text(seconds);
        const size_t columns = terminal_columns();
        if (line.size() >= columns) line.resize(columns - 1);
        draw_progress_line(line);
        next = Clock::now() + kRedraw;
    }
}

}  // namespace mpt::cli
