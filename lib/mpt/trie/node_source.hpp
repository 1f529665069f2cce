// Stored nodes as every reader of a trie meets them: read by root-relative path, checked
// against the hash the parent holds, decoded. load_verified is the only place that check is
// made, and the one place that tells a missing row from a wrong one from an undecodable one.
//
// Thread safety: a NodeReader (with its VerifiedRows) is used by one thread at a time; the
// functions keep no state.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/core/node.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace mpt {

// The rows near the root that load_verified has checked, kept decoded for the lookups that
// follow: a process answering many keys of one trie reads, hashes and decodes the root and
// the nodes under it once instead of once per key. Only rows at paths of at most kMaxPath
// nibbles are kept (at most 4,369, in a table indexed by path), and none is ever dropped, so
// the views load_verified hands out stay valid for as long as the cache lives. A row is used
// again only where its parent expects the hash it was checked against.
class VerifiedRows {
public:
    static constexpr size_t kMaxPath = 3;

    VerifiedRows() : rows_(kSlots) {}

    // The node checked at path against expected, or nullptr.
    const NodeView* find(bytes_view path, const Hash256& expected) const noexcept {
        const size_t i = slot(path);
        if (i == kSlots || !rows_[i].kept || rows_[i].hash != expected) return nullptr;
        return &rows_[i].node;
    }
    // Keeps row, which hashed as expected at path and decodes, and returns its node (its views
    // into the kept copy), or nullptr when the path is too deep or already holds a row.
    const NodeView* keep(bytes_view path, bytes_view row, const Hash256& expected) {
        const size_t i = slot(path);
        if (i == kSlots || rows_[i].kept) return nullptr;
        Entry& e = rows_[i];
        e.rlp.assign(row.begin(), row.end());
        auto v = decode_node(e.rlp);
        if (!v) return nullptr;
        e.node = *v;
        e.hash = expected;
        e.kept = true;
        return &e.node;
    }

private:
    static constexpr size_t kSlots = 1 + 16 + 256 + 4096;
    struct Entry {
        bool kept = false;
        Hash256 hash{};
        bytes rlp;
        NodeView node;
    };
    // The table index of path, or kSlots for none.
    static size_t slot(bytes_view path) noexcept {
        if (path.size() > kMaxPath) return kSlots;
        size_t base = 0, width = 1, i = 0;
        for (size_t d = 0; d < path.size(); ++d) {
            if (path[d] > 15) return kSlots;
            base += width;
            width *= 16;
            i = i * 16 + path[d];
        }
        return base + i;
    }
    std::vector<Entry> rows_;
};

// One trie's stored nodes, by root-relative path (one nibble per byte).
class NodeReader {
public:
    virtual ~NodeReader() = default;
    // The RLP stored at path, or an empty view when no row is there. The view is valid until
    // the next call on this reader.
    virtual Result<bytes_view> read(bytes_view path) = 0;
    // The row at path whose parent holds hash for it, or an empty view: read(path), whose row
    // load_verified then hashes. A reader that keeps its nodes by hash (a witness's) finds
    // the row by hash instead and says so, and the row is not hashed again.
    struct Row {
        bytes_view rlp;
        bool found_by_hash = false;
    };
    virtual Result<Row> read_node(bytes_view path, const Hash256& hash) {
        (void)hash;
        MPT_TRY(const bytes_view rlp, read(path));
        return Row{rlp, false};
    }
    // Names the trie in error messages, e.g. "trie main".
    virtual std::string describe() const { return "trie"; }

    // The cache load_verified consults and fills, or nullptr (the default: every row is read
    // and hashed). REQUIRES: the cache outlives its use here and belongs to this reader's
    // trie and root alone.
    void set_verified_rows(VerifiedRows* cache) noexcept { verified_rows_ = cache; }
    VerifiedRows* verified_rows() const noexcept { return verified_rows_; }

private:
    VerifiedRows* verified_rows_ = nullptr;
};

// A path (one nibble per byte) for messages: its hex digits, or "(root)" when empty.
std::string path_string(bytes_view unpacked);

// An error about the node at path (one nibble per byte) of reader's trie, its place filled.
Error node_error(Errc code, const NodeReader& reader, bytes_view path, std::string detail = {});

// rlp, a node of reader's trie at path that hashed as its parent says (a row, or a node
// embedded in one), decoded; Errc::storage_bad_node when it is no valid node.
inline Result<NodeView> decode_stored(const NodeReader& reader, bytes_view path, bytes_view rlp) {
    auto v = decode_node(rlp);
    if (!v) return node_error(Errc::storage_bad_node, reader, path, v.error().message());
    return v;
}

// The node stored at path, whose parent holds expected for it: storage_missing_node (no
// row), storage_hash_mismatch (the row hashes otherwise) or decode_stored's storage_bad_node;
// read errors pass through. The views (its rlp too) are valid until the next read.
// With the reader's VerifiedRows, a node checked before at path against expected is taken
// from there (its views then live as long as the cache).
inline Result<NodeView> load_verified(NodeReader& reader, bytes_view path,
                                      const Hash256& expected) {
    VerifiedRows* const cache = reader.verified_rows();
    if (cache != nullptr) {
        if (const NodeView* kept = cache->find(path, expected)) return *kept;
    }
    MPT_TRY(const NodeReader::Row read, reader.read_node(path, expected));
    const bytes_view row = read.rlp;
    if (row.empty()) return node_error(Errc::storage_missing_node, reader, path);
    if (!read.found_by_hash && keccak256(row) != expected) {
        return node_error(Errc::storage_hash_mismatch, reader, path);
    }
    if (cache != nullptr) {
        if (const NodeView* kept = cache->keep(path, row, expected)) return *kept;
    }
    return decode_stored(reader, path, row);
}

// A walk down a stored trie along the path at reads: from the row where at stands, whose hash
// is known, each node on the way in turn, a row read by the path consumed so far and checked
// against the hash its parent holds (load_verified), or a node embedded in the row above it
// (decode_stored). The one descent of get, prove and get-node.
class StoredDescent {
public:
    // expected: the hash of the row where at stands. path: scratch for the rows' paths.
    StoredDescent(NodeReader& reader, const Hash256& expected, PathCursor& at, bytes& path) noexcept
        : reader_(reader), expected_(expected), at_(at), path_(path) {}

    // The node where the cursor stands. Its views live until the next row is read.
    Result<NodeView> load() {
        if (!embedded_.empty()) return decode_stored(reader_, path_, embedded_);
        path_.clear();
        append_unpacked(path_, at_.consumed());
        return load_verified(reader_, path_, expected_);
    }
    // Whether the node load gives is a row (else a node embedded in the last row read).
    bool at_row() const noexcept { return embedded_.empty(); }

    // One step down from v, the node load gave (descend): into the child the path picks (the
    // next load gives it), or the value or absence there.
    Descent step(const NodeView& v) noexcept {
        const Descent d = descend(v, at_);
        if (d.kind == Descent::Kind::child) {
            if (d.ref.size() == 32) {
                std::memcpy(expected_.data(), d.ref.data(), 32);
                embedded_ = {};
            } else {
                embedded_ = d.ref;
            }
        }
        return d;
    }

private:
    NodeReader& reader_;
    Hash256 expected_;
    PathCursor& at_;
    bytes& path_;
    bytes_view embedded_;  // the child embedded in the last row read, when the walk stands there
};

// The stored half of a lookup: from the row where at stands, whose hash is expected, down
// the key (StoredDescent), each row passed to on_row(rlp). Returns the key's value, empty
// when absent.
template <typename OnRow>
Result<bytes_view> descend_stored(NodeReader& reader, const Hash256& expected, PathCursor& at,
                                  bytes& path, OnRow&& on_row) {
    StoredDescent walk(reader, expected, at, path);
    while (true) {
        auto loaded = walk.load();
        if (!loaded) return std::move(loaded).error();
        const NodeView& v = *loaded;  // not copied: this is the hot path of get and prove
        if (walk.at_row()) on_row(v.rlp);
        const Descent d = walk.step(v);
        if (d.kind != Descent::Kind::child) return d.ref;  // empty when absent
    }
}

}  // namespace mpt
