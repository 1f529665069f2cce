#include <cstring>
#include <mpt/core/hex.hpp>
#include <mpt/proof/node_path.hpp>

namespace mpt {
std::string_view status_name(NodeLookup::Status s) noexcept {
    switch (s) {
        case NodeLookup::Status::found:
            return "found";
        case NodeLookup::Status::absent:
            return "absent";
        case NodeLookup::Status::embedded:
            return "embedded";
    }
    return "absent";
}

Result<bytes> compact_to_nibbles(bytes_view compact) {
    if (compact.empty()) return bytes{};
    MPT_TRY(CompactPath cp, decode_compact(compact));
    bytes out;
    append_unpacked(out, cp.path);
    return out;
}

Result<NodeLookup> lookup_node(NodeReader& reader, const Hash256& root, bytes_view compact_path) {
    MPT_TRY(bytes nibbles, compact_to_nibbles(compact_path));
    return lookup_node_at(reader, root, nibbles);
}

Result<NodeLookup> lookup_node_at(NodeReader& reader, const Hash256& root, bytes_view target) {
    NodeLookup out;
    for (const uint8_t n : target) {
        if (n > 0x0f) return {Errc::bad_input, "nibble path holds a byte above 0x0f"};
    }
    if (root == kEmptyRoot) return out;  // the empty trie has no node, not even a root row

    bytes packed;
    pack_nibbles(packed, target);
    PathCursor at(NibbleView(packed.data(), 0, target.size()));
    bytes path;
    StoredDescent walk(reader, root, at, path);
    while (true) {
        MPT_TRY(const NodeView v, walk.load());
        // The node here, or a leaf whose full key path is the target, is the answer.
        const Descent d = at.at_end() ? Descent{Descent::Kind::value, {}} : walk.step(v);
        if (d.kind == Descent::Kind::absent) return out;
        if (d.kind == Descent::Kind::value) {
            out.status = walk.at_row() ? NodeLookup::Status::found : NodeLookup::Status::embedded;
            out.rlp.assign(v.rlp.begin(), v.rlp.end());
            return out;
        }
    }
}

Result<PathSet> parse_path_set(std::string_view text) {
    std::vector<std::string_view> elements;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        elements.push_back(
            text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    PathSet set;
    for (size_t i = 0; i < elements.size(); ++i) {
        const std::string_view e = elements[i];
        const std::string where = "element " + std::to_string(i + 1);
        if (e.empty()) return {Errc::bad_input, where + " is empty (write 0x00 for the root)"};
        auto raw = from_hex(e);
        if (!raw) return {raw.error().code, where + ": " + raw.error().detail};
        if (i == 0 && elements.size() > 1) {
            if (raw->size() != 32) {
                return {Errc::bad_input, where + ": an account hash must be 32 bytes, got " +
                                             std::to_string(raw->size())};
            }
            Hash256 account;
            std::memcpy(account.data(), raw->data(), 32);
            set.account = account;
            continue;
        }
        if (!raw->empty()) {
            auto cp = decode_compact(*raw);
            if (!cp) return {Errc::bad_compact_path, where + ": " + cp.error().detail};
        }
        set.paths.push_back(std::move(*raw));
    }
    return set;
}

}  // namespace mpt
