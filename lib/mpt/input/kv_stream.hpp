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

#include <algorithm>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpt {

struct KvSource;

class KvStreamReader {
public:
    // Reads the stream f of the file path (closed at the end unless it is standard input),
    // after the bytes prefix already read from it. A piece is about piece_bytes of text;
    // one entry may take up to max_entry_bytes, past which reading stops with
    // Errc::input_too_large. from_pipe: stop at the first byte no JSON text holds, or in a
    // text dump the first that is not a hex digit, 'x' or white space, as read_file does for
    // streams.
    KvStreamReader(std::FILE* f, std::string path, std::string prefix, size_t piece_bytes,
                   size_t max_entry_bytes, bool from_pipe);
    KvStreamReader(const KvStreamReader&) = delete;
    KvStreamReader& operator=(const KvStreamReader&) = delete;
    ~KvStreamReader();

    // The entries of the next piece, in input order; false at the end of the document.
    Result<bool> next(KvInput& piece);
    // From the next call of next() on, the piece after the one handed out is read and parsed
    // on a thread of its own while the caller works on that one: one more piece is held. Its
    // errors come back, in their turn, from the call that would have read it.
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
    // The bytes of the document read so far, those read before this reader took the stream
    // included.
    uint64_t bytes_read() const noexcept { return bytes_read_; }
    // Reading more than max bytes of a pipe is Errc::input_too_large (0: no limit; a regular
    // file's size is checked by open_text).
    void limit_input(uint64_t max) noexcept { max_input_ = max; }

private:
    friend Result<KvSource> open_kv_source(const std::string&, size_t, size_t, size_t, uint64_t);
    Result<bool> next_here(KvInput& piece);
    Status read_more(size_t want);
    void scan() noexcept;
    Result<KvInput> parse_piece(size_t n, size_t mid, bool last);
    Result<KvInput> parse_scanned(size_t n, bool last);
    size_t guess_cut(size_t t) const noexcept;
    bool halves(size_t n) const noexcept { return halves_min_ != 0 && n >= halves_min_; }
    bool end_piece(size_t n);
    void drop(size_t n) noexcept;

    // The bytes read and not yet handed out. Grown as the stream is read into it, without
    // first filling what the read overwrites.
    template <typename T>
    struct NoFill : std::allocator<T> {
        template <typename U>
        void construct(U* p) noexcept {
            ::new (static_cast<void*>(p)) U;
        }
        template <typename U, typename... Args>
        void construct(U* p, Args&&... args) {
            ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
        }
    };
    using Buffer = std::vector<char, NoFill<char>>;
    std::string_view text() const noexcept { return {buf_.data(), buf_.size()}; }

    std::FILE* f_;
    std::string path_;
    Buffer buf_;
    size_t piece_bytes_;
    size_t max_entry_bytes_;
    bool from_pipe_;
    uint64_t max_input_ = 0;   // limit_input
    uint64_t read_ = 0;        // bytes read from a pipe
    uint64_t bytes_read_ = 0;  // bytes_read()
    bool eof_ = false;
    bool done_ = false;
    json_detail::StreamStop stop_;  // from_pipe: where the stream stops
    // The scan for places to cut: where it stands in buf_, its state there, and the last
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
    // read_ahead: the piece being read on the other thread. Last, so that it goes first.
    KvInput ahead_piece_;
    std::future<Result<bool>> ahead_;
};

// The first step of opening a document for reading once, shared by the key/value and the
// state sources: a regular file of at most whole_limit bytes is read whole (load_input) into
// whole; otherwise fd is open on it (0 for "-", standard input), regular telling whether it is
// a regular file (then advised for sequential reading). Errors: bad_input, naming path, and
// load_input's.
struct OpenedText {
    InputText whole;
    int fd = -1;  // -1 when whole
    bool regular = false;
};
// max_input (0: none): a regular file larger is Errc::input_too_large (input_limit_error);
// the readers of a stream count what they read against it.
Result<OpenedText> open_text(const std::string& path, size_t whole_limit, uint64_t max_input = 0);

// A key/value document opened for reading once: whole in memory (as load_input gives it)
// when it is at most whole_limit bytes, else as a stream of pieces of about piece_bytes.
// A regular file larger than whole_limit is read, not mapped.
struct KvSource {
    InputText whole;
    std::unique_ptr<KvStreamReader> stream;  // null when whole
};
// max_input as open_text's (0: none).
Result<KvSource> open_kv_source(const std::string& path, size_t whole_limit, size_t piece_bytes,
                                size_t max_entry_bytes, uint64_t max_input = 0);

}  // namespace mpt
