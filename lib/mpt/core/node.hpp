// Trie nodes on the wire: encoding and decoding (Yellow Paper, appendix D).
//
//   leaf:      [compact(path, leaf=true),  value]
//   extension: [compact(path, leaf=false), child]
//   branch:    [child_0, ..., child_15, value]
//
// A child is referenced by its RLP when that is shorter than 32 bytes (embedded), else by
// keccak256 of its RLP. The root is always hashed.
//
// Thread safety: value types and pure functions.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/nibbles.hpp>
#include <mpt/core/rlp.hpp>

#include <cstring>

namespace mpt {

// The reference a parent holds to a child, inline: empty (no child), the child's RLP when
// it is shorter than 32 bytes, or the child's 32-byte hash. The size tells which.
class NodeRef {
public:
    NodeRef() = default;
    static NodeRef from_hash(const Hash256& h) noexcept {
        NodeRef r;
        r.size_ = 32;
        std::memcpy(r.data_.data(), h.data(), 32);
        return r;
    }
    // The reference of a node whose RLP is rlp: itself when shorter than 32 bytes.
    static NodeRef of(bytes_view rlp) noexcept {
        if (rlp.size() >= 32) return from_hash(keccak256(rlp));
        NodeRef r;
        r.size_ = static_cast<uint8_t>(rlp.size());
        std::memcpy(r.data_.data(), rlp.data(), rlp.size());
        return r;
    }
    // A reference read from a parent: 32 bytes is a hash, fewer an embedded RLP.
    // REQUIRES: b.size() <= 32.
    static NodeRef from_view(bytes_view b) noexcept {
        MPT_ASSERT(b.size() <= 32);
        NodeRef r;
        r.size_ = static_cast<uint8_t>(b.size());
        if (!b.empty()) std::memcpy(r.data_.data(), b.data(), b.size());
        return r;
    }

    bool empty() const noexcept { return size_ == 0; }
    bool is_hash() const noexcept { return size_ == 32; }
    bool is_embedded() const noexcept { return size_ != 0 && size_ < 32; }
    bytes_view view() const noexcept { return {data_.data(), size_}; }
    // REQUIRES: is_hash().
    Hash256 hash() const noexcept {
        MPT_ASSERT(is_hash());
        Hash256 h;
        std::memcpy(h.data(), data_.data(), 32);
        return h;
    }

    // Length of this reference as an item of the parent's list.
    size_t encoded_length() const noexcept { return size_ == 0 ? 1 : size_ == 32 ? 33 : size_; }
    // Writes this reference as an item of the parent's list at o, which has room for 33
    // bytes: 0x80 when empty, the hash as a string, or the embedded RLP as it is. Returns the
    // end of what it wrote.
    uint8_t* write_to(uint8_t* o) const noexcept {
        if (size_ == 32) {
            *o = 0xa0;
            std::memcpy(o + 1, data_.data(), 32);
            return o + 33;
        }
        if (size_ == 0) {
            *o = 0x80;
            return o + 1;
        }
        std::memcpy(o, data_.data(), size_);
        return o + size_;
    }
    // Appends what write_to writes.
    void append_to(bytes& out) const {
        uint8_t item[33];
        out.insert(out.end(), item, write_to(item));
    }

    friend bool operator==(const NodeRef& a, const NodeRef& b) noexcept {
        return a.size_ == b.size_ && std::memcmp(a.data_.data(), b.data_.data(), a.size_) == 0;
    }

private:
    std::array<uint8_t, 32> data_{};
    uint8_t size_ = 0;
};

// keccak256(0x80), the hash of the empty string's RLP: the root of the empty trie.
inline constexpr Hash256 kEmptyRoot = {
    0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45, 0xe6, 0x92, 0xc0, 0xf8, 0x6e,
    0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c, 0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21};

// A branch RLP is at most 3 (header) + 16 * 33 (hashed children) + the value's encoding.
constexpr size_t kMaxBranchWithoutValue = 3 + 16 * 33 + 1;

// Length of the compact path as an RLP item. A one-byte compact path (an empty or
// one-nibble path: 0x00, 0x1n, 0x20, 0x3n) is below 0x80 and so its own encoding.
template <typename Path>
size_t compact_item_length(const Path& path) noexcept {
    const size_t cl = compact_length(path);
    return cl == 1 ? 1 : rlp::header_length(cl) + cl;
}

template <typename Path>
void append_compact_item(bytes& out, const Path& path, bool leaf) {
    const size_t cl = compact_length(path);
    if (cl != 1) {
        const size_t start = out.size();
        out.resize(start + rlp::header_length(cl));
        rlp::write_header(out.data() + start, cl, 0x80);
    }
    append_compact(out, path, leaf);
}

template <typename Path>
void encode_leaf(bytes& out, const Path& path, bytes_view value) {
    rlp::append_list_header(out, compact_item_length(path) + rlp::string_length(value));
    append_compact_item(out, path, true);
    rlp::append_string(out, value);
}

template <typename Path>
void encode_extension(bytes& out, const Path& path, const NodeRef& child) {
    rlp::append_list_header(out, compact_item_length(path) + child.encoded_length());
    append_compact_item(out, path, false);
    child.append_to(out);
}

// One pass: the children are written into a bounded scratch (kMaxBranchWithoutValue bytes)
// after room for the longest header they can need. Without a value, the header is then
// written against them and the whole node appended at once; with one, the header is
// appended, then the children and the value.
void encode_branch(bytes& out, const NodeRef* children, bytes_view value);

// A decoded node: views into the RLP it was decoded from, valid as long as that is.
struct NodeView {
    enum class Kind : uint8_t { leaf, extension, branch };
    Kind kind = Kind::leaf;
    NibbleView path;                      // leaf and extension
    bytes_view value;                     // leaf, and branch (empty: none)
    std::array<bytes_view, 16> children;  // branch: 32-byte hash, embedded RLP, or empty
    bytes_view child;                     // extension: 32-byte hash or embedded RLP
    bytes_view rlp;                       // the whole node
};

// Decodes a node and checks its shape: a list of 2 or 17 items, a valid compact path,
// a leaf with a value, an extension with a nonempty path and a child, children that are
// empty, 32-byte hashes or embedded lists shorter than 32 bytes, and a branch with at
// least two entries.
Result<NodeView> decode_node(bytes_view rlp) noexcept;

// Where a key whose nibbles ahead are rest stands against a short node's path: <0 when it
// sorts before every key under the node, >0 after every one, 0 when it enters the node (it
// continues an extension's path) or is the leaf's own key. Keys compare bytewise with the
// shorter first on a common prefix, which for nibble strings is the same rule.
template <typename Path>
int key_vs_short_node(NibbleView rest, const Path& path, bool leaf) noexcept {
    const size_t cp = common_prefix(rest, path);
    if (cp < rest.size() && cp < path.size()) return rest[cp] < path[cp] ? -1 : 1;
    if (rest.size() < path.size()) return -1;
    return leaf && rest.size() > path.size() ? 1 : 0;
}

// One step of a lookup down a decoded node, for the key ahead of at.
struct Descent {
    enum class Kind : uint8_t { absent, value, child };
    Kind kind = Kind::absent;
    bytes_view ref;  // value: the key's value (nonempty); child: a 32-byte hash or embedded RLP
};

// Where the key continues below v: its value (a leaf whose path is the rest of the key, or a
// branch where the key ends), the child it enters (at then stands past an extension's path
// or the branch's nibble), or nowhere (the key is absent).
inline Descent descend(const NodeView& v, PathCursor& at) noexcept {
    const NibbleView rest = at.remaining();
    switch (v.kind) {
        case NodeView::Kind::leaf:
            if (!nibbles_equal(v.path, rest)) return {};
            return {Descent::Kind::value, v.value};
        case NodeView::Kind::extension:
            if (common_prefix(v.path, rest) != v.path.size()) return {};
            at.advance(v.path.size());
            return {Descent::Kind::child, v.child};
        case NodeView::Kind::branch:
            if (rest.empty()) {
                if (v.value.empty()) return {};
                return {Descent::Kind::value, v.value};
            }
            at.advance(1);
            if (v.children[rest[0]].empty()) return {};
            return {Descent::Kind::child, v.children[rest[0]]};
    }
    return {};
}

}  // namespace mpt
