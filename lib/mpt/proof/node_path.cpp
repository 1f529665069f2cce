#include <cstring>
#include <mpt/core/hex.hpp>
#include <mpt/proof/node_path.hpp>

namespace mpt {
namespace {

// Whether the nibbles of target from depth on start with path.
bool matches(bytes_view target, size_t depth, NibbleView path) noexcept {
    if (target.size() - depth < path.size()) return false;
    for (size_t i = 0; i < path.size(); ++i) {
        if (target[depth + i] != path[i]) return false;
    }
    return true;
}

}  // namespace

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

    // The walk: `expected` is the hash the parent holds for the hashed node that starts at
    // target[0, depth); its row is read by that path and checked before it is trusted.
    Hash256 expected = root;
    size_t depth = 0;
    auto where = [&] {
        return reader.describe() + ", path " + path_string(target.subspan(0, depth));
    };
    while (true) {
        MPT_TRY(bytes_view row, reader.read(target.subspan(0, depth)));
        if (row.empty()) return {Errc::storage_missing_node, where()};
        if (keccak256(row) != expected) return {Errc::storage_hash_mismatch, where()};

        // node_rlp is this row or a node embedded in it; every view below points into the
        // row, valid until the next read.
        bytes_view node_rlp = row;
        bool hashed = true;
        while (true) {
            if (depth == target.size()) {
                out.status = hashed ? NodeLookup::Status::found : NodeLookup::Status::embedded;
                out.rlp.assign(node_rlp.begin(), node_rlp.end());
                return out;
            }
            auto v = decode_node(node_rlp);
            if (!v) return {Errc::storage_hash_mismatch, where() + ": " + v.error().message()};
            bytes_view child;
            switch (v->kind) {
                case NodeView::Kind::leaf: {
                    // The full key path names the leaf; any other path ends inside its
                    // partial key or runs past it, where no node starts.
                    if (matches(target, depth, v->path) &&
                        target.size() - depth == v->path.size()) {
                        out.status =
                            hashed ? NodeLookup::Status::found : NodeLookup::Status::embedded;
                        out.rlp.assign(node_rlp.begin(), node_rlp.end());
                    }
                    return out;
                }
                case NodeView::Kind::extension: {
                    // Ending inside the extension's partial key, or leaving it: no node.
                    if (!matches(target, depth, v->path)) return out;
                    depth += v->path.size();
                    child = v->child;
                    break;
                }
                case NodeView::Kind::branch:
                    child = v->children[target[depth]];
                    ++depth;
                    break;
            }
            if (child.empty()) return out;
            if (child.size() == 32) {
                std::memcpy(expected.data(), child.data(), 32);
                break;  // read the child's row
            }
            node_rlp = child;
            hashed = false;
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
        const std::string where = "element " + std::to_string(i);
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
