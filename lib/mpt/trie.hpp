// A Merkle Patricia Trie in memory, optionally backed by stored nodes read by path.
//
// A trie opened at a stored root loads nodes lazily, by their root-relative path, as
// traversal reaches them; every loaded node is checked against the hash its parent holds.
// Reads (get, for_each) walk stored nodes without keeping them; writes (put, remove) load
// the nodes on their path into memory. commit() hashes the dirty nodes only and returns the
// rows to write and the paths whose rows must go.
//
// Thread safety: a Trie is used by one thread at a time, reads included (they share
// scratch buffers).
#pragma once

#include <mpt/node.hpp>

#include <functional>
#include <memory>
#include <optional>

namespace mpt {

// One trie's stored nodes, by root-relative path (one nibble per byte).
class NodeReader {
public:
    virtual ~NodeReader() = default;
    // The RLP stored at path, or an empty view when no row is there. The view is valid until
    // the next call on this reader.
    virtual Result<bytes_view> read(bytes_view path) = 0;
    // Names the trie in error messages, e.g. "trie main".
    virtual std::string describe() const { return "trie"; }
};

// A path (one nibble per byte) for messages: its hex digits, or "(root)" when empty.
std::string path_string(bytes_view unpacked);

// The result of a commit: the new root, the rows to write (children before parents), and
// the paths whose rows must be deleted, sorted and never one that is also written. Paths
// are one nibble per byte.
struct CommitBatch {
    Hash256 root{};
    std::vector<std::pair<bytes, bytes>> puts;
    std::vector<bytes> deletes;
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

    // Sets key to value; an empty value removes the key.
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
