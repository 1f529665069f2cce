#include "raw_input.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/input/json_lexer.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mpt::cli {
namespace {

Error too_large(const std::string& path) {
    return file_error(Errc::bad_input, path,
                      "more than " + std::to_string(kMaxRawInput >> 20) + " MiB of input");
}

}  // namespace

Result<InputText> read_raw(const std::string& path) {
    const bool from_stdin = path == "-";
    const int fd = from_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return input_error(path, errno);
    // A regular file is mapped; a pipe is read into a buffer that doubles.
    const size_t first = size_t{1} << 16;
    struct stat st {};
    if (!from_stdin && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        ::close(fd);
        if (static_cast<uint64_t>(st.st_size) > kMaxRawInput) return too_large(path);
        return load_input(path);
    }
    std::string data;
    size_t len = 0;
    int err = 0;
    while (len <= kMaxRawInput) {
        if (len == data.size()) data.resize(std::min(std::max(first, 2 * len), kMaxRawInput + 1));
        const ssize_t n = ::read(fd, data.data() + len, data.size() - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            err = n < 0 ? errno : 0;
            break;
        }
        len += static_cast<size_t>(n);
    }
    if (!from_stdin) ::close(fd);
    if (err != 0) return input_error(path, err);
    if (len > kMaxRawInput) return too_large(path);
    data.resize(len);
    return InputText::from_string(std::move(data));
}

std::string_view without_space(std::string_view t) {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!t.empty() && space(t.front())) t.remove_prefix(1);
    while (!t.empty() && space(t.back())) t.remove_suffix(1);
    return t;
}

bool is_one_hex_item(std::string_view text) {
    const std::string_view t = without_space(text);
    if (t.size() < 3 || t[0] != '0' || t[1] != 'x') return false;
    return std::all_of(t.begin() + 2, t.end(),
                       [](char c) { return kHexDigitValue[static_cast<uint8_t>(c)] != 0xff; });
}

Error json_not_rlp(Error e, std::string_view text) {
    if (!is_one_hex_item(text)) return e;
    e.detail =
        "one 0x hex item (RLP?), not JSON: a JSON document goes here; mpt rlp decode "
        "reads RLP";
    return e;
}

Result<bytes> hex_or_binary(std::string_view input) {
    if (is_sqlite_database(input)) {
        return Error{Errc::bad_input, "an SQLite database (a trie file?), not RLP"};
    }
    const std::string_view t = without_space(input);
    if (t.size() >= 2 && t[0] == '0' && t[1] == 'x') return from_hex(t);
    const bytes_view b = as_bytes(input);
    return bytes(b.begin(), b.end());
}

}  // namespace mpt::cli
