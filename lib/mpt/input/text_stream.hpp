// A document read once, front to back, from a stream or a file too large to hold whole: the
// bytes of the key/value reader in pieces (kv_stream.hpp) and of the state document's
// streamed reader (state/document_stream.hpp), with one rule for where a stream stops.
//
// Thread safety: an object is used by one thread at a time.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_input.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpt {

class TextStream {
public:
    // The bytes read and not yet dropped. Grown as the stream is read into it, without first
    // filling what the read overwrites.
    using Buffer = std::vector<char, NoFill<std::allocator<char>>>;

    // Reads the descriptor fd (closed at the end unless it is standard input) of the file
    // path. A piece is about piece_bytes of text; one entry may take up to max_entry_bytes
    // (at least piece_bytes). from_pipe: the text ends at the byte json_detail::StreamStop
    // stops at, as read_file's does, so that a writer that stays after it is not waited for.
    TextStream(int fd, std::string path, size_t piece_bytes, size_t max_entry_bytes,
               bool from_pipe);
    TextStream(const TextStream&) = delete;
    TextStream& operator=(const TextStream&) = delete;
    ~TextStream();

    // Reads until the buffer holds want bytes or the text ends; each read asks for at least
    // the smaller of a piece and 1 MiB.
    Status fill(size_t want);
    // Drops the buffer's first n bytes; a buffer far larger than its bytes need (a stream's
    // first bytes read whole up to a limit) is given back.
    void drop(size_t n) noexcept;
    // Gives the buffer back once its bytes are all handed out.
    void release() noexcept { Buffer().swap(buf_); }

    // Reading more than max bytes is Errc::input_too_large (0: no limit; a regular file's
    // size is checked by open_text_source).
    void limit_input(uint64_t max) noexcept { max_input_ = max; }
    bool eof() const noexcept { return eof_; }
    // The bytes of the document read so far.
    uint64_t bytes_read() const noexcept { return read_; }

    std::string_view text() const noexcept { return {buf_.data(), buf_.size()}; }
    const Buffer& buf() const noexcept { return buf_; }
    const std::string& path() const noexcept { return path_; }
    size_t piece_bytes() const noexcept { return piece_bytes_; }
    size_t max_entry_bytes() const noexcept { return max_entry_bytes_; }

private:
    int fd_;
    std::string path_;
    Buffer buf_;
    size_t piece_bytes_;
    size_t max_entry_bytes_;
    bool from_pipe_;
    uint64_t max_input_ = 0;  // limit_input
    uint64_t read_ = 0;       // bytes_read()
    bool eof_ = false;
    json_detail::StreamStop stop_;  // from_pipe: where the stream stops
};

// A document opened for reading once: a regular file of at most whole_limit bytes whole in
// memory, as load_input gives it, else a stream read in pieces of about piece_bytes (a
// regular file larger than whole_limit is read, not mapped, and advised for sequential
// reading). A stream that ends within whole_limit is read whole too. "-" is standard input.
// max_input (0: none): a regular file larger is Errc::input_too_large (input_limit_error),
// and the stream counts what it reads against it. Errors: bad_input naming path, and
// load_input's.
struct TextSource {
    InputText whole;
    std::unique_ptr<TextStream> stream;  // null when whole
};
Result<TextSource> open_text_source(const std::string& path, size_t whole_limit, size_t piece_bytes,
                                    size_t max_entry_bytes, uint64_t max_input = 0);

}  // namespace mpt
