#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

KvStreamReader::KvStreamReader(std::FILE* f, std::string path, std::string prefix,
                               size_t piece_bytes, size_t max_entry_bytes, bool from_pipe)
    : f_(f),
      path_(std::move(path)),
      buf_(prefix.begin(), prefix.end()),
      piece_bytes_(std::max<size_t>(piece_bytes, 64)),
      max_entry_bytes_(std::max(max_entry_bytes, piece_bytes_)),
      from_pipe_(from_pipe),
      bytes_read_(prefix.size()) {
    stop_ = json_detail::StreamStop(text());
}

KvStreamReader::~KvStreamReader() {
    // The other thread reads from f_ into the buffers: it ends before they go.
    if (ahead_.valid()) ahead_.wait();
    if (f_ != nullptr && f_ != stdin) std::fclose(f_);
}

// Reads until buf_ holds want bytes or the stream ends. A stream from a pipe ends at its
// first byte that no JSON text holds, kept for the parser to report (read_file's rule).
Status KvStreamReader::read_more(size_t want) {
    while (!eof_ && buf_.size() < want) {
        const size_t have = buf_.size();
        // A piece at a time: a stream read whole up to a limit grows as it is read.
        const size_t n_want = std::min(want - have, piece_bytes_);
        buf_.resize(have + n_want);
        size_t n = 0;
        if (from_pipe_) {
            // What the writer has written so far: a stream is judged as it comes, and one
            // whose writer stays after a byte no input holds must end at that byte.
            ssize_t r = 0;
            do {
                r = ::read(::fileno(f_), buf_.data() + have, n_want);
            } while (r < 0 && errno == EINTR);
            if (r < 0) return input_error(path_, errno);
            n = static_cast<size_t>(r);
            if (n == 0) eof_ = true;
            if (max_input_ != 0 && (read_ += n) > max_input_) {
                return input_limit_error(path_, max_input_);
            }
        } else {
            n = std::fread(buf_.data() + have, 1, n_want, f_);
            if (n < n_want) {
                if (std::ferror(f_)) {
                    return input_error(path_, errno);
                }
                eof_ = true;
            }
        }
        buf_.resize(have + n);
        bytes_read_ += n;
        if (from_pipe_) {
            const char* first = buf_.data() + have;
            const char* end = buf_.data() + buf_.size();
            const char* bad = stop_.stop(first, end, have == 0);
            if (bad != end) {
                buf_.resize(static_cast<size_t>(bad - buf_.data()) + 1);
                eof_ = true;
            }
        }
    }
    return {};
}

// Finds places to cut in the bytes not scanned yet: just after a ',' at depth 1, outside
// strings, where one entry ends and the next begins; in a text dump, after a line feed.
void KvStreamReader::scan() noexcept {
    const char* const base = buf_.data();
    const char* p = base + scanned_;
    const char* const end = base + buf_.size();
    if (form_ == Form::unknown) {
        // Told by the document's first byte (kv_format.hpp); the parser checks the rest.
        std::string_view rest(base, buf_.size());
        if (!state_.started) rest = json_detail::without_bom(rest);
        const auto b = std::find_if_not(rest.begin(), rest.end(), is_ws);
        if (b != rest.end()) {
            const KvFormat* format = kv_format_of(*b);
            form_ = format != nullptr && format->lines ? Form::text : Form::json;
        }
    }
    // The place to cut a piece in halves: the last cut before the middle of what is held.
    const char* const half = base + buf_.size() / 2;
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
        scanned_ = buf_.size();
        return;
    }
    if (p < half) {
        if (const char* c = cuts_.scan(p, half, false)) cut_ = mid_ = static_cast<size_t>(c - base);
        p = half;
    }
    if (const char* c = cuts_.scan(p, end, false)) cut_ = static_cast<size_t>(c - base);
    scanned_ = buf_.size();
}

// Parses buf_'s first n bytes as the next piece, ending the document when last, and on
// success moves state_ past them. With 0 < mid < n the halves before and after mid, a place
// to cut, are parsed on two threads; a piece cut at a place that is not one fails.
Result<KvInput> KvStreamReader::parse_piece(size_t n, size_t mid, bool last) {
    const std::string_view text(buf_.data(), n);
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
    auto tail = std::async(std::launch::async, [text, mid, last, &second] {
        return kv_detail::parse_kv_piece(text.substr(mid), last, second);
    });
    Result<KvInput> head = kv_detail::parse_kv_piece(text.substr(0, mid), false, first);
    Result<KvInput> rest = tail.get();
    if (!head) return head.error();
    if (!rest) return rest.error();
    if (first.closed) return Errc::bad_input;  // the document ends before mid
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
    const char* const base = buf_.data();
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

// Drops buf_'s first n bytes, parsed, and moves the place of the next piece past them.
void KvStreamReader::drop(size_t n) noexcept {
    const char* const base = buf_.data();
    const size_t newlines = count_newlines(base, n);
    if (newlines == 0) {
        state_.column += n;
    } else {
        const char* const last_nl = static_cast<const char*>(::memrchr(base, '\n', n));
        state_.line += newlines;
        state_.column = static_cast<size_t>(base + n - (last_nl + 1));
    }
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(n));
    // A stream's first bytes, read whole up to a limit, leave a buffer far larger than a
    // piece needs.
    if (buf_.capacity() > 4 * piece_bytes_ && buf_.size() < 2 * piece_bytes_) buf_.shrink_to_fit();
    scanned_ -= n;
    cut_ = 0;
    mid_ = 0;
}

Result<bool> KvStreamReader::next(KvInput& piece) {
    if (!read_ahead_ && !ahead_.valid()) {
        Result<bool> more = next_here(piece);
        ordered_ = state_.ordered;
        return more;
    }
    if (!ahead_.valid()) {
        ahead_ = std::async(std::launch::async, [this] { return next_here(ahead_piece_); });
    }
    Result<bool> more = ahead_.get();
    ordered_ = state_.ordered;
    if (!more || !*more) return more;
    piece = std::move(ahead_piece_);
    ahead_piece_ = KvInput();
    if (read_ahead_) {
        ahead_ = std::async(std::launch::async, [this] { return next_here(ahead_piece_); });
    }
    return true;
}

Result<bool> KvStreamReader::next_here(KvInput& piece) {
    if (done_) return false;
    size_t want = piece_bytes_;
    MPT_RETURN_IF_ERROR(read_more(want));
    if (guesses_left_ > 0 && form_ == Form::json && state_.started && !state_.closed) {
        // Past the first piece of JSON the places to cut are guessed, and the parse of the
        // pieces cut there checks the guesses: what parses as the entries of a piece ends
        // between two entries. A piece that does not parse is read as below, scanned for its
        // places to cut, and parsed again, for its entries or for its error.
        const size_t n = eof_ ? buf_.size() : guess_cut(buf_.size());
        if (n != 0) {
            const size_t mid = halves(n) ? guess_cut(n / 2) : 0;
            if (Result<KvInput> r = parse_piece(n, mid, eof_)) {
                piece = std::move(*r);
                ++guessed_;
                return end_piece(n);
            }
            --guesses_left_;
        }
    }
    while (true) {
        scan();
        if (cut_ != 0 && !eof_) {
            const size_t n = cut_;
            MPT_TRY(piece, parse_scanned(n, false));
            return end_piece(n);
        }
        if (eof_) {
            MPT_TRY(piece, parse_scanned(buf_.size(), true));
            return end_piece(buf_.size());
        }
        // No entry ends in what was read: read on, up to the most one entry may take.
        if (buf_.size() >= max_entry_bytes_) {
            // What is wrong in the text comes first: a whole parse of it reports that.
            kv_detail::KvPieceState probe = state_;
            Result<KvInput> r = kv_detail::parse_kv_piece(text(), true, probe);
            if (!r && !cuts_.in_string && cuts_.depth < 2) return r.error();
            return file_error(Errc::input_too_large, path_,
                              "line " + std::to_string(state_.line) + ": no entry ends within " +
                                  std::to_string(buf_.size()) +
                                  " bytes, the most the memory budget holds at once (--memory)");
        }
        want = std::min(max_entry_bytes_, std::max(want, buf_.size()) * 2);
        MPT_RETURN_IF_ERROR(read_more(want));
    }
}

// The piece of buf_'s first n bytes, cut at a place scan() found, parsed: in halves at the
// place it found near the middle when that is worth it, or else, and on any error, whole.
Result<KvInput> KvStreamReader::parse_scanned(size_t n, bool last) {
    if (halves(n) && mid_ != 0) {
        if (Result<KvInput> r = parse_piece(n, mid_, last)) return r;
    }
    return parse_piece(n, 0, last);
}

// After the piece of buf_'s first n bytes was handed out: drops them, or at the end of the
// document the buffer.
bool KvStreamReader::end_piece(size_t n) {
    if (n == buf_.size() && eof_) {
        done_ = true;
        Buffer().swap(buf_);
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

Result<OpenedText> open_text(const std::string& path, size_t whole_limit, uint64_t max_input) {
    OpenedText out;
    if (path == "-") {
        out.fd = 0;
        return out;
    }
    out.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (out.fd < 0) return input_error(path, errno);
    struct stat st {};
    out.regular = ::fstat(out.fd, &st) == 0 && S_ISREG(st.st_mode);
    if (out.regular && max_input != 0 && static_cast<uint64_t>(st.st_size) > max_input) {
        ::close(out.fd);
        return input_limit_error(path, max_input);
    }
    if (out.regular && static_cast<uint64_t>(st.st_size) <= whole_limit) {
        ::close(out.fd);
        out.fd = -1;
        MPT_TRY(out.whole, load_input(path, max_input));
        return out;
    }
    if (out.regular) ::posix_fadvise(out.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return out;
}

Result<KvSource> open_kv_source(const std::string& path, size_t whole_limit, size_t piece_bytes,
                                size_t max_entry_bytes, uint64_t max_input) {
    KvSource source;
    MPT_TRY(OpenedText opened, open_text(path, whole_limit, max_input));
    if (opened.fd < 0) {
        source.whole = std::move(opened.whole);
        return source;
    }
    const bool regular = opened.regular;
    std::FILE* f = stdin;
    if (opened.fd != 0) {
        f = ::fdopen(opened.fd, "rb");
        if (f == nullptr) {
            const int err = errno;
            ::close(opened.fd);
            return input_error(path, err);
        }
    }
    auto reader = std::make_unique<KvStreamReader>(f, path, std::string(), piece_bytes,
                                                   max_entry_bytes, !regular);
    reader->limit_input(max_input);
    if (!regular) {
        // A stream that ends within the limit is read whole, as load_input reads it.
        MPT_RETURN_IF_ERROR(
            reader->read_more(whole_limit == SIZE_MAX ? whole_limit : whole_limit + 1));
        if (reader->eof_) {
            source.whole = InputText::from_string(std::string(reader->text()));
            return source;
        }
    }
    source.stream = std::move(reader);
    return source;
}

}  // namespace mpt
