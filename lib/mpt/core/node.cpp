#include <mpt/core/node.hpp>

namespace mpt {

void encode_branch(bytes& out, const NodeRef* children, bytes_view value) {
    // 16 hashed children and an empty value make a payload of 529 bytes, a 3-byte header.
    constexpr size_t kHeaderRoom = 3;
    uint8_t scratch[kMaxBranchWithoutValue];
    uint8_t* const payload = scratch + kHeaderRoom;
    uint8_t* o = payload;
    for (size_t i = 0; i < 16; ++i) o = children[i].write_to(o);
    const size_t children_length = static_cast<size_t>(o - payload);
    const size_t n = children_length + rlp::string_length(value);
    if (value.empty()) {
        *o++ = 0x80;
        const size_t h = rlp::header_length(n);
        rlp::write_header(payload - h, n, 0xc0);
        out.insert(out.end(), payload - h, o);
        return;
    }
    rlp::append_list_header(out, n);
    out.insert(out.end(), payload, o);
    rlp::append_string(out, value);
}

namespace {

// A child item of a branch or extension: empty string, 32-byte hash string, or an
// embedded node (a list whose whole encoding is shorter than 32 bytes).
Result<bytes_view> decode_child(bytes_view& in) noexcept {
    const uint8_t* start = in.data();
    MPT_TRY(const rlp::Item item, rlp::decode_item(in));
    if (item.is_list) {
        const size_t whole = static_cast<size_t>(in.data() - start);
        // Canonicality: a node of 32 bytes or more must be referenced by its hash.
        if (whole >= 32) return {Errc::bad_node, "embedded child of 32 bytes or more"};
        return bytes_view{start, whole};
    }
    if (item.payload.size() != 0 && item.payload.size() != 32) {
        return {Errc::bad_node, "child reference neither empty nor 32 bytes"};
    }
    return item.payload;
}

// The branch of a hashed trie's inner levels, read without the general item reader: sixteen
// children each empty (0x80) or a hash (0xa0 and 32 bytes), at least two of them hashes, and
// an empty value. False for anything else, which the general reader then decodes (or
// refuses) as before; where this one succeeds that one gives the same view.
bool decode_plain_branch(bytes_view payload, NodeView& node) noexcept {
    const uint8_t* p = payload.data();
    const uint8_t* const end = p + payload.size();
    size_t hashes = 0;
    for (size_t i = 0; i < 16; ++i) {
        if (p == end) return false;
        if (*p == 0x80) {
            node.children[i] = bytes_view(p + 1, 0);
            p += 1;
        } else if (*p == 0xa0 && end - p >= 33) {
            node.children[i] = bytes_view(p + 1, 32);
            p += 33;
            ++hashes;
        } else {
            return false;
        }
    }
    if (end - p != 1 || *p != 0x80 || hashes < 2) return false;
    node.value = bytes_view(p + 1, 0);
    node.kind = NodeView::Kind::branch;
    return true;
}

// One string item of canonical RLP at p (before end): its payload, p moved past it. False
// for a list, a truncated item, a form the general reader refuses (a single byte below 0x80
// behind a header, a long form for fewer than 56 bytes) and a length of more than one byte,
// all of which the general reader then decodes or refuses.
bool plain_string(const uint8_t*& p, const uint8_t* end, bytes_view& out) noexcept {
    if (p == end) return false;
    const uint8_t b = *p;
    if (b < 0x80) {
        out = bytes_view(p, 1);
        ++p;
        return true;
    }
    const size_t room = static_cast<size_t>(end - p);
    size_t head = 1;
    size_t length = 0;
    if (b <= 0xb7) {
        length = b - 0x80;
        if (length == 1 && (room < 2 || p[1] < 0x80)) return false;
    } else if (b == 0xb8) {
        if (room < 2 || p[1] < 56) return false;
        head = 2;
        length = p[1];
    } else {
        return false;
    }
    if (room - head < length) return false;
    out = bytes_view(p + head, length);
    p += head + length;
    return true;
}

// The leaf and extension of a hashed trie, read without the general item reader: a compact
// path and a value (a leaf's, not empty) or a 32-byte hash (an extension's child), both
// strings. False for anything else, which the general reader then decodes (or refuses) as
// before; where this one succeeds that one gives the same view.
bool decode_plain_short(bytes_view payload, NodeView& node) noexcept {
    const uint8_t* p = payload.data();
    const uint8_t* const end = p + payload.size();
    bytes_view path;
    bytes_view second;
    if (!plain_string(p, end, path) || !plain_string(p, end, second) || p != end) return false;
    const auto compact = decode_compact(path);
    if (!compact) return false;
    node.path = compact->path;
    if (compact->leaf) {
        if (second.empty()) return false;
        node.kind = NodeView::Kind::leaf;
        node.value = second;
        return true;
    }
    if (node.path.empty() || second.size() != 32) return false;
    node.kind = NodeView::Kind::extension;
    node.child = second;
    return true;
}

}  // namespace

Result<NodeView> decode_node(bytes_view rlp) noexcept {
    MPT_TRY(rlp::Item list, rlp::decode_single(rlp));
    if (!list.is_list) return {Errc::bad_node, "node is not a list"};
    if (NodeView node; decode_plain_branch(list.payload, node)) {
        node.rlp = rlp;
        return node;
    }
    if (NodeView node; decode_plain_short(list.payload, node)) {
        node.rlp = rlp;
        return node;
    }
    MPT_TRY(size_t n, rlp::count_items(list.payload));
    bytes_view in = list.payload;
    NodeView node;
    node.rlp = rlp;
    if (n == 2) {
        MPT_TRY(rlp::Item path_item, rlp::decode_item(in));
        if (path_item.is_list) return {Errc::bad_node, "node path is a list"};
        auto compact = decode_compact(path_item.payload);
        if (!compact) return {Errc::bad_node, compact.error().message()};
        node.path = compact->path;
        if (compact->leaf) {
            node.kind = NodeView::Kind::leaf;
            MPT_TRY(rlp::Item value, rlp::decode_item(in));
            if (value.is_list) return {Errc::bad_node, "leaf value is a list"};
            if (value.payload.empty()) return {Errc::bad_node, "leaf with an empty value"};
            node.value = value.payload;
        } else {
            node.kind = NodeView::Kind::extension;
            if (node.path.empty()) return {Errc::bad_node, "extension with an empty path"};
            MPT_TRY(bytes_view child, decode_child(in));
            if (child.empty()) return {Errc::bad_node, "extension without a child"};
            node.child = child;
        }
        return node;
    }
    if (n == 17) {
        node.kind = NodeView::Kind::branch;
        size_t entries = 0;
        for (size_t i = 0; i < 16; ++i) {
            MPT_TRY(bytes_view child, decode_child(in));
            node.children[i] = child;
            entries += !child.empty();
        }
        MPT_TRY(rlp::Item value, rlp::decode_item(in));
        if (value.is_list) return {Errc::bad_node, "branch value is a list"};
        node.value = value.payload;
        entries += !value.payload.empty();
        if (entries < 2) return {Errc::bad_node, "branch with fewer than two entries"};
        return node;
    }
    return {Errc::bad_node, "node list of " + std::to_string(n) + " items"};
}

}  // namespace mpt
