// Key/value documents larger than memory: read once, front to back, in pieces of whole
// entries, each parsed as parse_kv parses a whole document (kv_input.hpp) and with the same
// errors, placed by line and column in the whole document.
//
// Thread safety: an object is used by one thread at a time. With read_ahead it reads on a
// thread of its own between calls.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/text_stream.hpp>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace mpt {

class KvStreamReader {
public:
    // Reads the stream in, in pieces of about its piece_bytes; an entry may take up to its
    // max_entry_bytes, past which reading stops with Errc::input_too_large.
    explicit KvStreamReader(std::unique_ptr<TextStream> in);
    KvStreamReader(const KvStreamReader&) = delete;
    KvStreamReader& operator=(const KvStreamReader&) = delete;
    ~KvStreamReader();

    // The entries of the next piece, in input order; false at the end of the document.
    Result<bool> next(KvInput& piece);
    // Before the first call of next(): with on, the pieces after the one handed out are read
    // and parsed on a thread of its own while the caller works on that one, up to kAhead of
    // them waiting (so that a caller slow on one piece does not hold up the reading of the
    // next ones): up to kAhead + 2 pieces are held. Errors come back, in their turn, from the
    // call that would have read them.
    static constexpr size_t kAhead = 2;
    void read_ahead(bool on) noexcept { read_ahead_ = on; }
    // From the next piece on, with on, a piece of at least min_bytes after the first is cut
    // near its middle, between two entries, and its halves are parsed on two threads: the same
    // entries and errors (on any error the piece is parsed again whole, for the error it gives
    // whole).
    void parse_halves(bool on, size_t min_bytes = size_t{1} << 20) noexcept {
        halves_min_ = on ? std::max<size_t>(min_bytes, 1) : 0;
    }
    // Whether the document is an array of pairs; known after the first piece.
    bool ordered() const noexcept { return ordered_; }
    // The pieces handed out so far that were cut where the reader guessed, not where a scan
    // of the text found, a place to cut (see next_here).
    size_t pieces_guessed() const noexcept { return guessed_; }
    // The bytes of the document read so far.
    uint64_t bytes_read() const noexcept { return in_->bytes_read(); }

private:
    Result<bool> next_here(KvInput& piece);
    std::optional<Error> error_in_text() const;
    void read_pieces_ahead();
    void scan() noexcept;
    Result<KvInput> parse_piece(size_t n, size_t mid, bool last);
    Result<KvInput> parse_scanned(size_t n, bool last);
    size_t guess_cut(size_t t) const noexcept;
    bool halves(size_t n) const noexcept { return halves_min_ != 0 && n >= halves_min_; }
    bool end_piece(size_t n);
    void drop(size_t n) noexcept;

    std::string_view text() const noexcept { return in_->text(); }

    // The line feeds in a text of `bytes` bytes: how many, and the bytes up to and with the
    // last one.
    struct LineFeeds {
        size_t bytes = 0;
        size_t count = 0;
        size_t after_last = 0;
        static LineFeeds of(std::string_view text) noexcept;
        // This text's followed by next's.
        LineFeeds then(const LineFeeds& next) const noexcept;
    };

    std::unique_ptr<TextStream> in_;
    bool done_ = false;  // the last piece was handed out
    // The scan for places to cut: where it stands in the text, its state there, and the last
    // place after a ',' between two entries, or in a text dump after a line feed (0: none
    // yet).
    enum class Form { unknown, json, text };
    Form form_ = Form::unknown;  // of the document, once its first byte is read
    size_t scanned_ = 0;
    kv_detail::CutScan cuts_;
    size_t cut_ = 0;
    size_t mid_ = 0;  // a place to cut before cut_, at or past the middle of buf_ (0: none)
    kv_detail::KvPieceState state_;
    bool ordered_ = false;  // state_.ordered as of the last piece handed out
    bool read_ahead_ = false;
    size_t halves_min_ = 0;
    // Guessed places to cut that may still fail to parse before guessing stops.
    int guesses_left_ = 8;
    size_t guessed_ = 0;
    // The line feeds of the piece parse_piece parsed in halves (bytes 0: not counted).
    LineFeeds lines_;
    // read_ahead: the pieces read on the other thread, and what ended its reading once
    // handed out.
    struct Ahead {
        Result<bool> more = false;
        KvInput piece;
        bool ordered = false;
    };
    std::mutex ahead_mu_;
    std::condition_variable ahead_cv_;
    std::deque<Ahead> ahead_;  // guarded by ahead_mu_
    bool stop_ = false;        // guarded by ahead_mu_: the destructor's
    std::optional<Result<bool>> ended_;
    std::thread ahead_thread_;
};

}  // namespace mpt
