#include <mpt/trie/node_source.hpp>

namespace mpt {

std::string path_string(bytes_view unpacked) {
    if (unpacked.empty()) return "(root)";
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    s.reserve(unpacked.size());
    for (const uint8_t n : unpacked) s += kDigits[n & 0xf];
    return s;
}

Error node_error(Errc code, const NodeReader& reader, bytes_view path, std::string detail) {
    Error e{code, std::move(detail)};
    e.trie = reader.describe();
    e.path = path_string(path);
    return e;
}

}  // namespace mpt
