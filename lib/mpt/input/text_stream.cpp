#include <mpt/input/text_stream.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace mpt {

TextStream::TextStream(int fd, std::string path, size_t piece_bytes, size_t max_entry_bytes,
                       bool from_pipe)
    : fd_(fd),
      path_(std::move(path)),
      piece_bytes_(std::max<size_t>(piece_bytes, 64)),
      max_entry_bytes_(std::max(max_entry_bytes, piece_bytes_)),
      from_pipe_(from_pipe) {}

TextStream::~TextStream() {
    if (fd_ > 0) ::close(fd_);
}

Status TextStream::fill(size_t want) {
    while (!eof_ && buf_.size() < want) {
        const size_t have = buf_.size();
        // A piece at a time: a stream read whole up to a limit grows as it is read. A
        // caller that asks for a byte more still gets a read of some size.
        const size_t n_want =
            std::min(piece_bytes_, std::max(want - have, std::min(piece_bytes_, size_t{1} << 20)));
        buf_.resize(have + n_want);
        ssize_t r = 0;
        do {
            r = ::read(fd_, buf_.data() + have, n_want);
        } while (r < 0 && errno == EINTR);
        if (r < 0) {
            buf_.resize(have);
            return input_error(path_, errno);
        }
        const auto n = static_cast<size_t>(r);
        buf_.resize(have + n);
        const bool at_start = read_ == 0;
        read_ += n;
        if (n == 0) eof_ = true;
        if (max_input_ != 0 && read_ > max_input_) return input_limit_error(path_, max_input_);
        if (from_pipe_) {
            const char* first = buf_.data() + have;
            const char* end = buf_.data() + buf_.size();
            const char* bad = stop_.stop(first, end, at_start);
            if (bad != end) {
                buf_.resize(static_cast<size_t>(bad - buf_.data()) + 1);
                eof_ = true;
            }
        }
    }
    return {};
}

void TextStream::drop(size_t n) noexcept {
    buf_.erase(buf_.begin(), buf_.begin() + static_cast<ptrdiff_t>(n));
    if (buf_.capacity() > 4 * piece_bytes_ && buf_.size() < 2 * piece_bytes_) buf_.shrink_to_fit();
}

namespace {

// A regular file of at most whole_limit bytes loaded whole; else the open descriptor.
struct Opened {
    InputText whole;
    int fd = -1;  // -1 when whole; 0 for standard input
    bool regular = false;
};

Result<Opened> open_text(const std::string& path, size_t whole_limit, uint64_t max_input) {
    Opened out;
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

}  // namespace

Result<TextSource> open_text_source(const std::string& path, size_t whole_limit, size_t piece_bytes,
                                    size_t max_entry_bytes, uint64_t max_input) {
    TextSource source;
    MPT_TRY(Opened opened, open_text(path, whole_limit, max_input));
    if (opened.fd < 0) {
        source.whole = std::move(opened.whole);
        return source;
    }
    auto stream = std::make_unique<TextStream>(opened.fd, path, piece_bytes, max_entry_bytes,
                                               !opened.regular);
    stream->limit_input(max_input);
    if (!opened.regular) {
        // A stream that ends within the limit is read whole, as load_input reads it.
        MPT_RETURN_IF_ERROR(stream->fill(whole_limit == SIZE_MAX ? whole_limit : whole_limit + 1));
        if (stream->eof()) {
            source.whole = InputText::from_string(std::string(stream->text()));
            return source;
        }
    }
    source.stream = std::move(stream);
    return source;
}

}  // namespace mpt
