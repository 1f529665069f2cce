#include <algorithm>
#include <cstring>
#include <future>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_format.hpp>
#include <mpt/input/kv_stream.hpp>
#include <utility>

namespace mpt {
namespace {

using json_detail::is_ws;

// The line feeds in [p, p + n): 16 bytes at a time, in byte-wide counters of at most 255.
size_t count_newlines(const char* p, size_t n) noexcept {
    using Bytes = unsigned char __attribute__((vector_size(16)));
    size_t count = 0;
    while (n >= 16) {
        Bytes acc{};
        const size_t blocks = std::min<size_t>(n / 16, 255);
        for (size_t b = 0; b < blocks; ++b, p += 16) {
            Bytes v;
            std::memcpy(&v, p, 16);
            acc -= reinterpret_cast<Bytes>(v == '\n');  // a match is all ones: -1
        }
        n -= blocks * 16;
        for (int i = 0; i < 16; ++i) count += acc[i];
    }
    return count + static_cast<size_t>(std::count(p, p + n, '\n'));
}

}  // namespace

KvStreamReader::LineFeeds KvStreamReader::LineFeeds::of(std::string_view text) noexcept {
    LineFeeds f;
    f.bytes = text.size();
    f.count = count_newlines(text.data(), text.size());
    if (f.count != 0) {
        const void* last = ::memrchr(text.data(), '\n', text.size());
        f.after_last = static_cast<size_t>(static_cast<const char*>(last) - text.data()) + 1;
    }
    return f;
}

KvStreamReader::LineFeeds KvStreamReader::LineFeeds::then(const LineFeeds& next) const noexcept {
    LineFeeds f;
    f.bytes = bytes + next.bytes;
    f.count = count + next.count;
    f.after_last = next.count != 0 ? bytes + next.after_last : after_last;
    return f;
}

KvStreamReader::KvStreamReader(std::unique_ptr<TextStream> in) : in_(std::move(in)) {}

KvStreamReader::~KvStreamReader() {
    // The other thread reads into the stream's buffer: it ends before the stream goes.
    if (!ahead_thread_.joinable()) return;
    {
        const std::lock_guard<std::mutex> lock(ahead_mu_);
        stop_ = true;
    }
    ahead_cv_.notify_all();
    ahead_thread_.join();
}

// Finds places to cut in the bytes not scanned yet: just after a ',' at depth 1, outside
// strings, where one entry ends and the next begins; in a text dump, after a line feed.
void KvStreamReader::scan() noexcept {
    const char* const base = text().data();
    const char* p = base + scanned_;
    const char* const end = base + text().size();
    if (form_ == Form::unknown) {
        // Told by the document's first byte (kv_format.hpp); the parser checks the rest.
        std::string_view rest(base, text().size());
        if (!state_.started) rest = json_detail::without_bom(rest);
        const auto b = std::find_if_not(rest.begin(), rest.end(), is_ws);
        if (b != rest.end()) {
            const KvFormat* format = kv_format_of(*b);
            form_ = format != nullptr && format->lines ? Form::text : Form::json;
        }
    }
    // The place to cut a piece in halves: the last cut before the middle of what is held.
    const char* const half = base + text().size() / 2;
    if (form_ == Form::text) {
        // Lines: a piece ends after a line feed.
        const auto after_last_line_feed = [p](const char* before) -> const char* {
            if (before <= p) return nullptr;
            const void* nl = ::memrchr(p, '\n', static_cast<size_t>(before - p));
            return nl != nullptr ? static_cast<const char*>(nl) + 1 : nullptr;
        };
        if (const char* c = after_last_line_feed(end)) cut_ = static_cast<size_t>(c - base);
        if (cut_ != 0) {
            if (const char* m = after_last_line_feed(half)) mid_ = static_cast<size_t>(m - base);
        }
        scanned_ = text().size();
        return;
    }
    if (p < half) {
        if (const char* c = cuts_.scan(p, half, false)) cut_ = mid_ = static_cast<size_t>(c - base);
        p = half;
    }
    if (const char* c = cuts_.scan(p, end, false)) cut_ = static_cast<size_t>(c - base);
    scanned_ = text().size();
}

// Parses the text's first n bytes as the next piece, ending the document when last, and on
// success moves state_ past them. With 0 < mid < n the halves before and after mid, a place
// to cut, are parsed on two threads; a piece cut at a place that is not one fails.
Result<KvInput> KvStreamReader::parse_piece(size_t n, size_t mid, bool last) {
    const std::string_view text = this->text().substr(0, n);
    if (mid == 0 || mid >= n || !state_.started || state_.closed) {
        kv_detail::KvPieceState state = state_;
        MPT_TRY(KvInput piece, kv_detail::parse_kv_piece(text, last, state));
        state_ = state;
        return piece;
    }
    // The second half begins after a cut as a later piece does; where it stands in the
    // document would only name its errors, which the caller takes from a whole parse.
    kv_detail::KvPieceState first = state_;
    kv_detail::KvPieceState second = state_;
    // Each thread counts its half's line feeds too, for drop().
    LineFeeds tail_lines;
    auto tail = std::async(std::launch::async, [text, mid, last, &second, &tail_lines] {
        Result<KvInput> r = kv_detail::parse_kv_piece(text.substr(mid), last, second);
        if (r) tail_lines = LineFeeds::of(text.substr(mid));
        return r;
    });
    Result<KvInput> head = kv_detail::parse_kv_piece(text.substr(0, mid), false, first);
    const LineFeeds head_lines = head ? LineFeeds::of(text.substr(0, mid)) : LineFeeds{};
    Result<KvInput> rest = tail.get();
    if (!head) return head.error();
    if (!rest) return rest.error();
    if (first.closed) return Errc::bad_input;  // the document ends before mid
    lines_ = head_lines.then(tail_lines);
    const size_t before = state_.entries;
    state_ = second;
    state_.entries = first.entries + (second.entries - before);
    head->append(std::move(*rest));
    return head;
}

// A place to cut JSON text just before t, found without scanning the text before it: after a
// ',' that follows the end of an entry ('"' in an object, ']' in an array of pairs), or 0.
// It may be one inside a string: a piece cut there fails to parse.
size_t KvStreamReader::guess_cut(size_t t) const noexcept {
    constexpr size_t kLookBack = 4096;
    const char* const base = text().data();
    const char closer = state_.ordered ? ']' : '"';
    const size_t stop = t > kLookBack ? t - kLookBack : 0;
    for (size_t i = t; i > stop + 1; --i) {
        if (base[i - 1] != ',') continue;
        size_t j = i - 1;
        while (j > stop && is_ws(base[j - 1])) --j;
        if (j > stop && base[j - 1] == closer) return i;
    }
    return 0;
}

// Drops the text's first n bytes, parsed, and moves the place of the next piece past them.
void KvStreamReader::drop(size_t n) noexcept {
    // Counted by the parse of the piece's halves, or here.
    const LineFeeds lines = lines_.bytes == n ? lines_ : LineFeeds::of(text().substr(0, n));
    lines_ = LineFeeds{};
    // The first piece's parse passes over a byte order mark, and a whole parse counts lines
    // and columns from after it: nothing dropped yet (line 1, column 0), it counts in none.
    const bool first = state_.line == 1 && state_.column == 0;
    const size_t mark = first && text().starts_with(json_detail::kByteOrderMark)
                            ? json_detail::kByteOrderMark.size()
                            : 0;
    if (lines.count == 0) {
        state_.column += n - mark;
    } else {
        state_.line += lines.count;
        state_.column = n - lines.after_last;
    }
    in_->drop(n);
    scanned_ -= n;
    cut_ = 0;
    mid_ = 0;
}

Result<bool> KvStreamReader::next(KvInput& piece) {
    if (!read_ahead_ && !ahead_thread_.joinable()) {
        Result<bool> more = next_here(piece);
        ordered_ = state_.ordered;
        return more;
    }
    if (ended_) return *ended_;
    if (!ahead_thread_.joinable()) ahead_thread_ = std::thread([this] { read_pieces_ahead(); });
    Ahead a;
    {
        std::unique_lock<std::mutex> lock(ahead_mu_);
        ahead_cv_.wait(lock, [this] { return !ahead_.empty(); });
        a = std::move(ahead_.front());
        ahead_.pop_front();
    }
    ahead_cv_.notify_all();
    ordered_ = a.ordered;
    if (!a.more || !*a.more) {
        ended_ = a.more;  // the other thread has stopped
        return a.more;
    }
    piece = std::move(a.piece);
    return true;
}

// The other thread's work with read_ahead: the pieces in order, up to kAhead waiting, until
// the end of the document, an error, or the destructor.
void KvStreamReader::read_pieces_ahead() {
    while (true) {
        {
            std::unique_lock<std::mutex> lock(ahead_mu_);
            ahead_cv_.wait(lock, [this] { return stop_ || ahead_.size() < kAhead; });
            if (stop_) return;
        }
        Ahead a;
        a.more = next_here(a.piece);
        a.ordered = state_.ordered;
        const bool end = !a.more || !*a.more;
        {
            const std::lock_guard<std::mutex> lock(ahead_mu_);
            ahead_.push_back(std::move(a));
        }
        ahead_cv_.notify_all();
        if (end) return;
    }
}

namespace {

// Where the string that text ends in begins; text's size when it ends outside strings. text
// begins outside strings, as every piece does.
size_t open_string_at(std::string_view text) noexcept {
    bool in_string = false;
    size_t start = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        if (!in_string) {
            if (text[i] == '"') {
                in_string = true;
                start = i;
            }
        } else if (text[i] == '\\') {
            ++i;
        } else if (text[i] == '"') {
            in_string = false;
        }
    }
    return in_string ? start : text.size();
}

}  // namespace

// The text holds no whole entry, and no more may be read. What is wrong in it comes first, as
// a parse of the whole document reports it: a parse of the text up to the string it ends in,
// where the error stays where it is when that is cut shorter. One that moves is the cut's:
// white space, brackets or a string that run on past it (a bracket too many leaves an entry
// open to the end). Not in a text dump, whose line cut short looks like a line that is wrong
// (an odd number of digits) wherever it is cut.
std::optional<Error> KvStreamReader::error_in_text() const {
    if (form_ == Form::text) return std::nullopt;
    const auto parsed = [&](size_t n) {
        kv_detail::KvPieceState at = state_;
        return kv_detail::parse_kv_piece(text().substr(0, n), true, at);
    };
    constexpr size_t kShorter = 64;
    const size_t n = open_string_at(text());
    if (n <= kShorter) return std::nullopt;
    Result<KvInput> r = parsed(n);
    if (r) return std::nullopt;
    Result<KvInput> shorter = parsed(n - kShorter);
    if (shorter || shorter.error().detail != r.error().detail) return std::nullopt;
    return r.error();
}

Result<bool> KvStreamReader::next_here(KvInput& piece) {
    if (done_) return false;
    size_t want = in_->piece_bytes();
    MPT_RETURN_IF_ERROR(in_->fill(want));
    if (guesses_left_ > 0 && form_ == Form::json && state_.started && !state_.closed) {
        // Past the first piece of JSON the places to cut are guessed, and the parse of the
        // pieces cut there checks the guesses: what parses as the entries of a piece ends
        // between two entries. A piece that does not parse is read as below, scanned for its
        // places to cut, and parsed again, for its entries or for its error.
        const size_t n = in_->eof() ? text().size() : guess_cut(text().size());
        if (n != 0) {
            const size_t mid = halves(n) ? guess_cut(n / 2) : 0;
            if (Result<KvInput> r = parse_piece(n, mid, in_->eof())) {
                piece = std::move(*r);
                ++guessed_;
                return end_piece(n);
            }
            --guesses_left_;
        }
    }
    while (true) {
        scan();
        if (cut_ != 0 && !in_->eof()) {
            const size_t n = cut_;
            MPT_TRY(piece, parse_scanned(n, false));
            return end_piece(n);
        }
        if (in_->eof()) {
            MPT_TRY(piece, parse_scanned(text().size(), true));
            return end_piece(text().size());
        }
        // No entry ends in what was read: read on, up to the most one entry may take.
        if (text().size() >= in_->max_entry_bytes()) {
            if (auto e = error_in_text()) return *std::move(e);
            return file_error(Errc::input_too_large, in_->path(),
                              "line " + std::to_string(state_.line) + ": no entry ends within " +
                                  std::to_string(text().size()) +
                                  " bytes, the most the memory budget holds at once (--memory)");
        }
        want = std::min(in_->max_entry_bytes(), std::max(want, text().size()) * 2);
        MPT_RETURN_IF_ERROR(in_->fill(want));
    }
}

// The piece of the text's first n bytes, cut at a place scan() found, parsed: in halves at the
// place it found near the middle when that is worth it, or else, and on any error, whole.
Result<KvInput> KvStreamReader::parse_scanned(size_t n, bool last) {
    if (halves(n) && mid_ != 0) {
        if (Result<KvInput> r = parse_piece(n, mid_, last)) return r;
    }
    return parse_piece(n, 0, last);
}

// After the piece of the text's first n bytes was handed out: drops them, or at the end of the
// document the buffer.
bool KvStreamReader::end_piece(size_t n) {
    if (n == text().size() && in_->eof()) {
        done_ = true;
        in_->release();
        return true;
    }
    // The scan for places to cut goes on from where it stopped when it found this one;
    // after a guessed one it starts again where the next piece begins, between two entries.
    if (scanned_ < n) {
        scanned_ = n;
        cuts_ = kv_detail::CutScan{};
        cuts_.depth = 1;
    }
    drop(n);
    return true;
}

}  // namespace mpt
