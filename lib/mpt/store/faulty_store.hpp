// Fault injection: a NodeStore wrapper that fails a chosen read or write of the store it
// wraps, for tests of the error and rollback paths (in the manner of SQLite's I/O-error loops:
// fail operation 1, then 2, then 3, ... until the operation completes without reaching the
// fault).
//
// Reads are find_trie, list_tries, get, scan, count_rows, get_preimage and begin_read; writes
// are begin_write, create_trie, put, erase, erase_subtree, set_root, delete_trie,
// put_preimages and commit_write (copy_rows is made of scan and put). An injected fault
// returns Errc::storage_io ("injected fault ...") without calling the wrapped store, so a
// failed commit_write leaves the wrapped write open until rollback(), as a store whose commit
// failed may. end_read() and rollback() are passed through and never fail.
//
// Thread safety: one thread at a time, like the store it wraps.
#pragma once

#include <cstdint>
#include <mpt/core/error.hpp>
#include <mpt/store/node_store.hpp>

namespace mpt {

class FaultyNodeStore : public NodeStore {
public:
    enum class Op : uint8_t { read, write };
    enum class Mode : uint8_t {
        once,        // only the nth operation fails
        persistent,  // the nth and every later operation of the kind fail
    };

    // REQUIRES: inner outlives this object.
    explicit FaultyNodeStore(NodeStore& inner) noexcept : inner_(inner) {}

    // Restarts the counts and arms a fault at the nth (from 1) operation of kind op.
    void fail_at(Op op, uint64_t n, Mode mode) noexcept;
    // Restarts the counts; no fault.
    void disarm() noexcept;

    // Operations of each kind since the last fail_at() or disarm(), the failed ones included.
    uint64_t reads() const noexcept { return reads_; }
    uint64_t writes() const noexcept { return writes_; }
    // Faults injected since the last fail_at() or disarm().
    uint64_t faults() const noexcept { return faults_; }

    Result<std::optional<TrieInfo>> find_trie(std::string_view name) override;
    Result<std::vector<TrieInfo>> list_tries() override;
    Result<bytes_view> get(TrieId trie, bytes_view path) override;
    Status scan(TrieId trie, bytes_view prefix, const RowVisitor& f) override;
    Result<uint64_t> count_rows(TrieId trie) override;
    Status begin_read() override;
    void end_read() noexcept override { inner_.end_read(); }
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
    void rollback() noexcept override { inner_.rollback(); }

private:
    // Counts one operation; returns the fault to inject, if this one fails.
    Status count(Op op, const char* what);

    NodeStore& inner_;
    Op op_ = Op::read;
    Mode mode_ = Mode::once;
    uint64_t at_ = 0;  // 0: disarmed
    uint64_t reads_ = 0;
    uint64_t writes_ = 0;
    uint64_t faults_ = 0;
};

}  // namespace mpt
