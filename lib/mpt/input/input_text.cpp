// Reading an input whole: a file mapped or read, standard input and pipes up to a bound
// (kv_input.hpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_format.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/input/stream_limit.hpp>
#include <utility>

namespace mpt {
namespace {

// Reads the stream f of the file path (or "-", standard input) as read_file does, and no more
// than max_input bytes (0: no such limit); closes it unless it is standard input.
Result<std::string> read_stream(std::FILE* f, const std::string& path, uint64_t max_input) {
    std::string data;
    // A regular file is read straight into a string of its size; a pipe, or a file that
    // grew meanwhile, continues in chunks.
    struct stat st;
    const bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (regular && st.st_size > 0) {
        if (max_input != 0 && static_cast<uint64_t>(st.st_size) > max_input) {
            if (f != stdin) std::fclose(f);
            return input_limit_error(path, max_input);
        }
        data.resize(static_cast<size_t>(st.st_size));
        data.resize(std::fread(data.data(), 1, data.size(), f));
    }
    json_detail::StreamStop stream_stop(data);
    // A stream that is JSON all along stops at a bound instead of at the OOM killer.
    const size_t memory_limit = stream_byte_limit();
    const bool by_max_input = max_input != 0 && max_input < memory_limit;
    const size_t limit = by_max_input ? static_cast<size_t>(max_input) : memory_limit;
    char buf[1 << 16];
    bool too_large = false;
    while (!std::feof(f) && !std::ferror(f)) {
        const size_t n = std::fread(buf, 1, sizeof buf, f);
        const char* const end = buf + n;
        const char* bad = stream_stop.stop(buf, end, data.empty());
        if (bad != end) {
            data.append(buf, static_cast<size_t>(bad - buf) + 1);
            break;
        }
        if (data.size() + n > limit) {
            too_large = true;
            break;
        }
        data.append(buf, n);
    }
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    if (f != stdin) std::fclose(f);
    if (failed) return input_error(path, err);
    if (too_large && by_max_input) return input_limit_error(path, max_input);
    if (too_large && regular) {
        return file_error(Errc::input_too_large, path,
                          "more than " + std::to_string(limit) +
                              " bytes, more than this command holds in memory (a quarter of "
                              "the memory available)");
    }
    if (too_large) {
        return file_error(Errc::input_too_large, path,
                          "a stream of more than " + std::to_string(limit) +
                              " bytes, the limit for piped input (a quarter of the memory "
                              "available); give a file instead");
    }
    return data;
}

}  // namespace

Result<std::string> read_file(const std::string& path) {
    std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (f == nullptr) return input_error(path, errno);
    return read_stream(f, path, 0);
}

const KvFormat* sniff_kv_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return nullptr;
    // The bytes from the first that is not white space, up to an opener's length; blocks of
    // white space only are passed over.
    constexpr size_t kOpenerMax = 2;
    static_assert(std::all_of(std::begin(kKvFormats), std::end(kKvFormats),
                              [](const KvFormat& k) { return k.opener.size() <= kOpenerMax; }));
    std::string head;
    char block[4096];
    bool first = true;
    while (head.size() < kOpenerMax) {
        const size_t got = std::fread(block, 1, sizeof block, f);
        if (got == 0) break;
        std::string_view b(block, got);
        if (first) b = json_detail::without_bom(b);
        first = false;
        if (head.empty()) {
            const auto text = std::find_if_not(b.begin(), b.end(), json_detail::is_ws);
            b.remove_prefix(static_cast<size_t>(text - b.begin()));
        }
        head.append(b.substr(0, kOpenerMax - head.size()));
    }
    std::fclose(f);
    return sniff_kv_format(head);
}

Error input_limit_error(const std::string& path, uint64_t max_input) {
    return file_error(
        Errc::input_too_large, path,
        "more than " + std::to_string(max_input) + " bytes of input, the limit --max-input sets");
}

InputText::InputText(InputText&& other) noexcept
    : map_(std::exchange(other.map_, nullptr)),
      map_size_(std::exchange(other.map_size_, 0)),
      data_(std::move(other.data_)) {}

InputText& InputText::operator=(InputText&& other) noexcept {
    if (this != &other) {
        if (map_ != nullptr) munmap(map_, map_size_);
        map_ = std::exchange(other.map_, nullptr);
        map_size_ = std::exchange(other.map_size_, 0);
        data_ = std::move(other.data_);
    }
    return *this;
}

InputText::~InputText() {
    if (map_ != nullptr) munmap(map_, map_size_);
}

std::string_view InputText::view() const noexcept {
    if (map_ != nullptr) return {static_cast<const char*>(map_), map_size_};
    return data_;
}

Result<InputText> load_input(const std::string& path, uint64_t max_input) {
    InputText text;
    if (path != "-") {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return input_error(path, errno);
        struct stat st;
        const bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        if (regular && max_input != 0 && static_cast<uint64_t>(st.st_size) > max_input) {
            close(fd);
            return input_limit_error(path, max_input);
        }
        if (regular && st.st_size > 0) {
            void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                madvise(p, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
                text.map_ = p;
                text.map_size_ = static_cast<size_t>(st.st_size);
            }
        }
        if (text.map_ != nullptr) {
            close(fd);
            return text;
        }
        // A pipe, an empty file, or a file that cannot be mapped: read from this same open
        // file. Opening a FIFO again would take a second writer, and the bytes the first
        // writer left in the pipe would be gone with this reader.
        std::FILE* f = fdopen(fd, "rb");
        if (f == nullptr) {
            const int err = errno;
            close(fd);
            return input_error(path, err);
        }
        MPT_TRY(text.data_, read_stream(f, path, max_input));
        return text;
    }
    MPT_TRY(text.data_, read_stream(stdin, path, max_input));  // standard input
    return text;
}

}  // namespace mpt
