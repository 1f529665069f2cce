// A Merkle Patricia Trie in memory, optionally backed by stored nodes read by path.
//
// A trie opened at a stored root loads nodes lazily, by their root-relative path, as
// traversal reaches them; every loaded node is checked against the hash its parent holds.
// Reads (get, for_each) walk stored nodes without keeping them; writes (put, remove) load
// the nodes on their path into memory. commit() hashes the dirty nodes only and returns the
// rows to write and the paths whose rows must go. One file per mechanism: trie_nodes (nodes
// in memory, their pool, loading), trie (open, get), trie_update, trie_commit, trie_walk.
//
// Thread safety: a Trie is used by one thread at a time, reads included (they share
// scratch buffers).
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/core/node.hpp>
#include <mpt/trie/node_source.hpp>

#include <functional>
#include <iterator>
#include <memory>
#include <optional>

namespace mpt {

// Walks a list by index: what a range-for over PackedBytes or RowList uses.
template <typename List, typename Value>
class IndexIterator {
public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Value;
    using difference_type = ptrdiff_t;
    using pointer = void;
    using reference = Value;
    IndexIterator(const List* list, size_t i) noexcept : list_(list), i_(i) {}
    Value operator*() const noexcept { return (*list_)[i_]; }
    IndexIterator& operator++() noexcept {
        ++i_;
        return *this;
    }
    bool operator==(const IndexIterator& o) const noexcept { return i_ == o.i_; }

private:
    const List* list_;
    size_t i_;
};

// Byte strings kept one after another in one buffer: appending allocates only when the
// buffer grows. Views stay valid until the list is changed.
class PackedBytes {
public:
    size_t size() const noexcept { return spans_.size(); }
    bool empty() const noexcept { return spans_.empty(); }
    bytes_view operator[](size_t i) const noexcept {
        return {data_.data() + spans_[i].first, spans_[i].second};
    }
    void push_back(bytes_view b) {
        spans_.emplace_back(data_.size(), b.size());
        data_.insert(data_.end(), b.begin(), b.end());
    }
    void clear() noexcept {
        data_.clear();
        spans_.clear();
    }
    void reserve(size_t items, size_t bytes) {
        spans_.reserve(items);
        data_.reserve(bytes);
    }

    using iterator = IndexIterator<PackedBytes, bytes_view>;
    iterator begin() const noexcept { return {this, 0}; }
    iterator end() const noexcept { return {this, spans_.size()}; }

private:
    bytes data_;
    std::vector<std::pair<size_t, size_t>> spans_;  // (offset, length)
};

// Rows (path, rlp), packed.
class RowList {
public:
    struct Row {
        bytes_view path;
        bytes_view rlp;
    };
    size_t size() const noexcept { return paths_.size(); }
    bool empty() const noexcept { return paths_.empty(); }
    Row operator[](size_t i) const noexcept { return {paths_[i], rlps_[i]}; }
    void push_back(bytes_view path, bytes_view rlp) {
        paths_.push_back(path);
        rlps_.push_back(rlp);
    }
    const PackedBytes& paths() const noexcept { return paths_; }

    using iterator = IndexIterator<RowList, Row>;
    iterator begin() const noexcept { return {this, 0}; }
    iterator end() const noexcept { return {this, size()}; }

private:
    PackedBytes paths_, rlps_;
};

// The result of a commit: the new root, the rows to write (children before parents), and
// the paths whose rows must be deleted, sorted and never one that is also written. Paths
// are one nibble per byte.
struct CommitBatch {
    Hash256 root{};
    RowList puts;
    PackedBytes deletes;
};

struct TrieNode;
struct TrieNodeDeleter {
    void operator()(TrieNode* n) const noexcept;
};
using TrieNodePtr = std::unique_ptr<TrieNode, TrieNodeDeleter>;

class Trie {
public:
    Trie();
    ~Trie();
    Trie(Trie&&) noexcept;
    Trie& operator=(Trie&&) noexcept;

    // A trie whose root is stored in reader. The empty root opens an empty trie.
    // REQUIRES: reader outlives the trie.
    static Trie open(NodeReader* reader, const Hash256& root);

    // Copies the value of key into out (reusing its capacity). Returns false when absent.
    Result<bool> get(bytes_view key, bytes& out) const;
    Result<std::optional<bytes>> get(bytes_view key) const;

    // Sets key to value; an empty value removes the key. Atomic: on an error (a stored node
    // that cannot be read or is refused) the trie is left exactly as it was.
    Status put(bytes_view key, bytes_view value);
    Status remove(bytes_view key);

    // The root hash; caches the hashes of the nodes it computes.
    Result<Hash256> root_hash();

    // Hashes the dirty nodes and hands them out as rows. After it the trie is clean.
    Result<CommitBatch> commit();

    // Calls f(key, value) for every pair with key >= from, in key order, until f returns
    // false. The views are valid during the call only.
    using Visitor = std::function<bool(bytes_view key, bytes_view value)>;
    Status for_each(bytes_view from, const Visitor& f) const;

    // The greatest key below key, and the least key above it.
    Result<std::optional<bytes>> prev_key(bytes_view key) const;
    Result<std::optional<bytes>> next_key(bytes_view key) const;

    bool empty() const noexcept { return root_ == nullptr; }

    struct Impl;  // private state, opaque

private:
    TrieNodePtr root_;
    NodeReader* reader_ = nullptr;
    std::unique_ptr<Impl> impl_;  // scratch and the list of paths whose rows go at commit
};

}  // namespace mpt
