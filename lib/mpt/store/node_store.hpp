// The storage seam: tries kept as rows keyed by (trie, root-relative nibble path).
//
// A store holds named tries. Only hashed nodes and the root have rows. Paths are one nibble
// per byte, so byte order of path keys is depth-first order and a subtree is one key range.
// Writes happen inside begin_write()/commit_write(): a commit publishes every put, erase and
// root change at once, or none of them. Reads inside begin_read()/end_read() see one
// consistent state even while another connection writes.
//
// Implementations: MemoryNodeStore here (tests), SqliteNodeStore (sqlite_store.hpp), and
// FaultyNodeStore (fault injection, for tests).
//
// Thread safety: a store object is used by one thread at a time.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/trie/trie.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpt {

using TrieId = int64_t;

// What a trie's keys are. secure: keccak256 of the user's key. state: an Ethereum account
// trie (keys keccak256(address), values account RLP), whose storage tries are secure tries
// named "0x<64 lowercase hex of keccak256(address)>".
enum class TrieKind : uint8_t { plain, secure, state };

// A trie to make in a new file: its name, kind and root (a tries row without its id).
struct NewTrie {
    std::string_view name;
    TrieKind kind;
    Hash256 root;
};

// "plain", "secure" or "state".
std::string_view trie_kind_name(TrieKind kind) noexcept;
// The kind of that name; nullopt for any other text (names are case-sensitive).
std::optional<TrieKind> parse_trie_kind(std::string_view name) noexcept;

struct TrieInfo {
    TrieId id = 0;
    std::string name;  // "main", or "0x<64 hex>" for a storage trie
    Hash256 root = kEmptyRoot;
    TrieKind kind = TrieKind::plain;

    // True when the trie's keys are keccak256 of the user's keys.
    bool hashed_keys() const noexcept { return kind != TrieKind::plain; }
};

// A preimage record: keccak256(preimage) and the preimage.
using Preimage = std::pair<Hash256, bytes_view>;
// A contract code record: keccak256(code) and the code.
using Code = std::pair<Hash256, bytes_view>;

inline constexpr size_t kMaxTrieName = 1024;

// Ok when name may name a trie: 1 to 1024 bytes, none of them a control character (a name is
// printed on one line). Errc::bad_input otherwise.
Status check_trie_name(std::string_view name);

// A trie name as stores keep it: "0x" (or "0X") and 64 hex digits, a storage trie's account
// hash, in lowercase; any other name as it is. Stores apply it where a name is written or
// looked up, so that 0xABAB... and 0xabab... name one trie.
std::string canonical_trie_name(std::string_view name);
// Whether name, as canonical_trie_name writes it, is a storage trie's: "0x" and 64 lowercase
// hex digits.
bool is_storage_trie_name(std::string_view name) noexcept;

// Some of a store's trie names, for messages: the first few by name and how many in all.
struct TrieNames {
    std::vector<std::string> first;
    uint64_t total = 0;
};

class NodeStore {
public:
    virtual ~NodeStore() = default;

    virtual Result<std::optional<TrieInfo>> find_trie(std::string_view name) = 0;
    virtual Result<std::vector<TrieInfo>> list_tries() = 0;
    // The first n trie names by name, and the count of tries, for messages. The rows are not
    // validated (only named). The default lists them all.
    virtual Result<TrieNames> trie_names(size_t n);

    // The row at path, or an empty view when there is none. The view is valid until the next
    // call on this store.
    virtual Result<bytes_view> get(TrieId trie, bytes_view path) = 0;
    // Visits the rows of a trie whose paths start with prefix, in path order, until f
    // returns false. The views are valid during the call. A store may leave out rows whose
    // path is no nibble path (a byte above 0x0f, or in a file a value that is not a BLOB);
    // count_rows counts them too.
    using RowVisitor = std::function<bool(bytes_view path, bytes_view rlp)>;
    virtual Status scan(TrieId trie, bytes_view prefix, const RowVisitor& f) = 0;
    // The number of rows of a trie, whatever their paths.
    virtual Result<uint64_t> count_rows(TrieId trie) = 0;

    virtual Status begin_read() = 0;
    virtual void end_read() noexcept = 0;

    virtual Status begin_write() = 0;
    // REQUIRES: inside a write. Creates a trie with the empty root. A name check_trie_name
    // refuses is Errc::bad_input.
    virtual Result<TrieId> create_trie(std::string_view name, TrieKind kind) = 0;
    virtual Status put(TrieId trie, bytes_view path, bytes_view rlp) = 0;
    // The same as put() for each row in order; a store may write them in fewer steps.
    virtual Status put_rows(TrieId trie, std::span<const RowList::Row> rows) {
        for (const RowList::Row& r : rows) MPT_RETURN_IF_ERROR(put(trie, r.path, r.rlp));
        return {};
    }
    // True when the order of puts cannot change what the store keeps (it orders the rows
    // itself), so that a writer may put them in the order cheapest for it.
    virtual bool row_order_free() const noexcept { return false; }
    virtual Status erase(TrieId trie, bytes_view path) = 0;
    // Erases every row of the trie whose path starts with prefix; returns how many.
    virtual Result<size_t> erase_subtree(TrieId trie, bytes_view prefix) = 0;
    virtual Status set_root(TrieId trie, const Hash256& root) = 0;
    // REQUIRES: inside a write. Removes the trie: its row in the tries table and every row
    // of its nodes.
    virtual Status delete_trie(TrieId trie) = 0;
    // REQUIRES: inside a write. Copies every row of trie from to trie to (whose rows are
    // replaced where paths meet); returns how many. The default scans and puts them.
    virtual Result<uint64_t> copy_rows(TrieId from, TrieId to);
    // REQUIRES: inside a write. Records each preimage under its hash, shared by every trie of
    // the store; a hash already recorded keeps its first preimage (INSERT OR IGNORE). The
    // caller vouches that each hash is keccak256 of its preimage.
    virtual Status put_preimages(std::span<const Preimage> items) = 0;
    // The preimage recorded for hash, or nullopt. A file's store checks it as it reads it: one
    // that does not hash to hash is Errc::storage_hash_mismatch.
    virtual Result<std::optional<bytes>> get_preimage(const Hash256& hash) = 0;
    // REQUIRES: inside a write. Records each contract code under its hash, one table for the
    // file, as put_preimages does (a hash recorded keeps its first code; the caller vouches
    // for the hashes). No empty code: an account without code names the empty hash.
    virtual Status put_codes(std::span<const Code> items) = 0;
    // The code recorded for hash, or nullopt (none kept). Checked as a preimage is.
    virtual Result<std::optional<bytes>> get_code(const Hash256& hash) = 0;
    // On failure nothing is published; the caller still calls rollback() to end the write.
    virtual Status commit_write() = 0;
    // Ends a write without publishing it; does nothing outside a write.
    virtual void rollback() noexcept = 0;

    // The rows a store that reads a file has read from it so far (get and scan; zero for a
    // store in memory), for progress shown while a long read runs: the store's thread
    // advances it, any thread may load it.
    const std::atomic<uint64_t>& rows_read() const noexcept { return rows_read_; }

protected:
    // One writer (the store's thread): a load and a store, no locked add.
    void count_row_read() noexcept {
        rows_read_.store(rows_read_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

private:
    // The count of this store object: a copy of the store starts its own.
    struct RowCount : std::atomic<uint64_t> {
        RowCount() noexcept : std::atomic<uint64_t>(0) {}
        RowCount(const RowCount& /*other*/) noexcept : std::atomic<uint64_t>(0) {}
        RowCount& operator=(const RowCount& /*other*/) noexcept { return *this; }
    };
    RowCount rows_read_;
};

// Runs f(store) inside one write and publishes what it did, or nothing: f's error, or a
// failed commit, rolls the write back (a commit that failed published nothing, but the store
// may still be inside the write, a busy or interrupted commit, and must leave it before the
// next write can begin). f returns a Result.
template <typename F>
auto in_one_write(NodeStore& store, F&& f) -> decltype(f(store)) {
    MPT_RETURN_IF_ERROR(store.begin_write());
    auto r = f(store);
    if (!r) {
        store.rollback();
        return r;
    }
    if (Status c = store.commit_write(); !c.ok()) {
        store.rollback();
        return std::move(c).error();
    }
    return r;
}

// Errc::no_such_trie for name, its detail listing what store holds (the first few names and
// the count), so that a mistyped name shows the right one; Errc::bad_input for a name
// check_trie_name refuses, which no file holds.
Error no_such_trie_error(NodeStore& store, std::string_view name);

// Applies a commit's rows to trie and publishes its root last. REQUIRES: inside a write.
Status apply_commit(NodeStore& store, TrieId trie, const CommitBatch& batch);

// One trie of a store, as a trie reads it.
class TrieReader : public NodeReader {
public:
    TrieReader(NodeStore& store, TrieInfo info) : store_(store), info_(std::move(info)) {}
    Result<bytes_view> read(bytes_view path) override { return store_.get(info_.id, path); }
    std::string describe() const override { return "trie " + info_.name; }
    const TrieInfo& info() const noexcept { return info_; }

private:
    NodeStore& store_;
    TrieInfo info_;
};

// Rows in a std::map; a write works on a copy that commit_write() swaps in.
class MemoryNodeStore : public NodeStore {
public:
    Result<std::optional<TrieInfo>> find_trie(std::string_view name) override;
    Result<std::vector<TrieInfo>> list_tries() override;
    Result<bytes_view> get(TrieId trie, bytes_view path) override;
    Status scan(TrieId trie, bytes_view prefix, const RowVisitor& f) override;
    Result<uint64_t> count_rows(TrieId trie) override;
    Status begin_read() override { return {}; }
    void end_read() noexcept override {}
    Status begin_write() override;
    Result<TrieId> create_trie(std::string_view name, TrieKind kind) override;
    Status put(TrieId trie, bytes_view path, bytes_view rlp) override;
    Status erase(TrieId trie, bytes_view path) override;
    Result<size_t> erase_subtree(TrieId trie, bytes_view prefix) override;
    Status set_root(TrieId trie, const Hash256& root) override;
    Status delete_trie(TrieId trie) override;
    Status put_preimages(std::span<const Preimage> items) override;
    Result<std::optional<bytes>> get_preimage(const Hash256& hash) override;
    Status put_codes(std::span<const Code> items) override;
    Result<std::optional<bytes>> get_code(const Hash256& hash) override;
    Status commit_write() override;
    void rollback() noexcept override;

    // Every row, for tests that compare stores.
    struct State {
        std::vector<TrieInfo> tries;
        std::map<std::pair<TrieId, bytes>, bytes> rows;
        std::map<Hash256, bytes> preimages;
        std::map<Hash256, bytes> codes;
    };
    const State& state() const noexcept { return committed_; }

private:
    State committed_;
    std::optional<State> pending_;
    bytes last_;  // backs the view get() returns
};

}  // namespace mpt
