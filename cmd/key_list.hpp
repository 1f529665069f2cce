// The keys of one get or proof call: those on the command line, then those of a --keys file
// (one a line, "-" for standard input), read one at a time so that a long list is answered
// as it is read, never held whole.
#pragma once

#include <mpt/core/error.hpp>

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace mpt::cli {

class KeyList {
public:
    // REQUIRES: args outlives the list.
    KeyList(const std::vector<std::string>& args, std::optional<std::string> file)
        : args_(args), file_(std::move(file)) {}
    ~KeyList();
    KeyList(const KeyList&) = delete;
    KeyList& operator=(const KeyList&) = delete;

    // True when the answers come as a list: more than one key on the command line, or a
    // --keys file (whatever it holds). One key on the command line is answered as it always
    // has been.
    bool listed() const noexcept { return args_.size() > 1 || file_.has_value(); }

    // The next key's text, or std::nullopt after the last. A line loses its "\n" (and a
    // "\r" before it). Errors: Errc::bad_input for a file that cannot be opened or read,
    // and for an empty line (naming the line).
    Result<std::optional<std::string>> next();

    // e, about the key last returned, naming where it came from when that is the file (its
    // file and "line N: " before the detail).
    Error locate(Error e) const;

private:
    const std::vector<std::string>& args_;
    std::optional<std::string> file_;
    size_t next_arg_ = 0;
    std::FILE* in_ = nullptr;
    bool opened_ = false;
    size_t line_ = 0;
    char* buf_ = nullptr;
    size_t cap_ = 0;
};

// The page cache of a list's connection, in KiB: the 64 MiB a file opens with costs a batch
// of 10,000 keys of a 1M-key file a fifth of its time in page faults (17,800 of them, against
// 5,300 at 16 MiB, which reads 30% more pages from the file but faster than it faults).
inline constexpr int64_t kListCacheKib = 16 * 1024;

// The answers of a list, gathered and written to standard output in blocks of about 64 KiB
// rather than with one write per key; to a terminal, each answer once it is made. What is
// gathered is written when the output goes, so an error still leaves the answers before it.
class ListOutput {
public:
    ListOutput() : each_(::isatty(::fileno(stdout)) != 0) { text_.reserve(kBlock + 4096); }
    ~ListOutput() { flush(); }
    ListOutput(const ListOutput&) = delete;
    ListOutput& operator=(const ListOutput&) = delete;

    // Where the answers are appended.
    std::string& text() noexcept { return text_; }
    // Called after each answer: writes what is gathered once it fills a block.
    void answered() {
        if (each_ || text_.size() >= kBlock) flush();
    }
    void flush() {
        if (!text_.empty()) std::fwrite(text_.data(), 1, text_.size(), stdout);
        text_.clear();
    }

private:
    static constexpr size_t kBlock = 64 * 1024;
    std::string text_;
    bool each_;
};

}  // namespace mpt::cli
