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

Result<NodeView> decode_stored(const NodeReader& reader, bytes_view path, bytes_view rlp) {
    auto v = decode_node(rlp);
    if (!v) return node_error(Errc::storage_bad_node, reader, path, v.error().message());
    return v;
}

Result<NodeView> load_verified(NodeReader& reader, bytes_view path, const Hash256& expected) {
    MPT_TRY(const bytes_view row, reader.read(path));
    if (row.empty()) return node_error(Errc::storage_missing_node, reader, path);
    if (keccak256(row) != expected) return node_error(Errc::storage_hash_mismatch, reader, path);
    return decode_stored(reader, path, row);
}

}  // namespace mpt
