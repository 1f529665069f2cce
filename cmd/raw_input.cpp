#include "raw_input.hpp"

#include <mpt/core/hex.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mpt::cli {

Result<std::string> read_raw(const std::string& path) {
    std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (f == nullptr) return input_error(path, errno);
    std::string data;
    char buf[1 << 16];
    bool too_large = false;
    while (true) {
        const size_t n = std::fread(buf, 1, sizeof buf, f);
        if (data.size() + n > kMaxRawInput) {
            too_large = true;
            break;
        }
        data.append(buf, n);
        if (n < sizeof buf) break;
    }
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    if (f != stdin) std::fclose(f);
    if (failed) return input_error(path, err);
    if (too_large) {
        return file_error(Errc::bad_input, path,
                          "more than " + std::to_string(kMaxRawInput >> 20) + " MiB of input");
    }
    return data;
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
    const std::string_view t = without_space(input);
    if (t.size() >= 2 && t[0] == '0' && t[1] == 'x') return from_hex(t);
    const bytes_view b = as_bytes(input);
    return bytes(b.begin(), b.end());
}

}  // namespace mpt::cli
