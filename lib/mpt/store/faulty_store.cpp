#include <mpt/store/faulty_store.hpp>
#include <string>

namespace mpt {

void FaultyNodeStore::fail_at(Op op, uint64_t n, Mode mode) noexcept {
    disarm();
    op_ = op;
    at_ = n;
    mode_ = mode;
}

void FaultyNodeStore::disarm() noexcept {
    at_ = 0;
    reads_ = 0;
    writes_ = 0;
    faults_ = 0;
}

Status FaultyNodeStore::count(Op op, const char* what) {
    const uint64_t n = op == Op::read ? ++reads_ : ++writes_;
    if (at_ == 0 || op != op_) return {};
    if (n == at_ || (mode_ == Mode::persistent && n > at_)) {
        ++faults_;
        return {Errc::storage_io, std::string("injected fault: ") +
                                      (op == Op::read ? "read " : "write ") + std::to_string(n) +
                                      " (" + what + ")"};
    }
    return {};
}

Result<std::optional<TrieInfo>> FaultyNodeStore::find_trie(std::string_view name) {
    MPT_RETURN_IF_ERROR(count(Op::read, "find_trie"));
    return inner_.find_trie(name);
}

Result<std::vector<TrieInfo>> FaultyNodeStore::list_tries() {
    MPT_RETURN_IF_ERROR(count(Op::read, "list_tries"));
    return inner_.list_tries();
}

Result<bytes_view> FaultyNodeStore::get(TrieId trie, bytes_view path) {
    MPT_RETURN_IF_ERROR(count(Op::read, "get"));
    return inner_.get(trie, path);
}

Status FaultyNodeStore::scan(TrieId trie, bytes_view prefix, const RowVisitor& f) {
    MPT_RETURN_IF_ERROR(count(Op::read, "scan"));
    return inner_.scan(trie, prefix, f);
}

Result<uint64_t> FaultyNodeStore::count_rows(TrieId trie) {
    MPT_RETURN_IF_ERROR(count(Op::read, "count_rows"));
    return inner_.count_rows(trie);
}

Status FaultyNodeStore::begin_read() {
    MPT_RETURN_IF_ERROR(count(Op::read, "begin_read"));
    return inner_.begin_read();
}

Status FaultyNodeStore::begin_write() {
    MPT_RETURN_IF_ERROR(count(Op::write, "begin_write"));
    return inner_.begin_write();
}

Result<TrieId> FaultyNodeStore::create_trie(std::string_view name, TrieKind kind) {
    MPT_RETURN_IF_ERROR(count(Op::write, "create_trie"));
    return inner_.create_trie(name, kind);
}

Status FaultyNodeStore::put_preimages(std::span<const Preimage> items) {
    MPT_RETURN_IF_ERROR(count(Op::write, "put_preimages"));
    return inner_.put_preimages(items);
}

Result<std::optional<bytes>> FaultyNodeStore::get_preimage(const Hash256& hash) {
    MPT_RETURN_IF_ERROR(count(Op::read, "get_preimage"));
    return inner_.get_preimage(hash);
}

Status FaultyNodeStore::put_codes(std::span<const Code> items) {
    MPT_RETURN_IF_ERROR(count(Op::write, "put_codes"));
    return inner_.put_codes(items);
}

Result<std::optional<bytes>> FaultyNodeStore::get_code(const Hash256& hash) {
    MPT_RETURN_IF_ERROR(count(Op::read, "get_code"));
    return inner_.get_code(hash);
}

Status FaultyNodeStore::put(TrieId trie, bytes_view path, bytes_view rlp) {
    MPT_RETURN_IF_ERROR(count(Op::write, "put"));
    return inner_.put(trie, path, rlp);
}

Status FaultyNodeStore::erase(TrieId trie, bytes_view path) {
    MPT_RETURN_IF_ERROR(count(Op::write, "erase"));
    return inner_.erase(trie, path);
}

Result<size_t> FaultyNodeStore::erase_subtree(TrieId trie, bytes_view prefix) {
    MPT_RETURN_IF_ERROR(count(Op::write, "erase_subtree"));
    return inner_.erase_subtree(trie, prefix);
}

Status FaultyNodeStore::set_root(TrieId trie, const Hash256& root) {
    MPT_RETURN_IF_ERROR(count(Op::write, "set_root"));
    return inner_.set_root(trie, root);
}

Status FaultyNodeStore::delete_trie(TrieId trie) {
    MPT_RETURN_IF_ERROR(count(Op::write, "delete_trie"));
    return inner_.delete_trie(trie);
}

Status FaultyNodeStore::commit_write() {
    MPT_RETURN_IF_ERROR(count(Op::write, "commit_write"));
    return inner_.commit_write();
}

}  // namespace mpt
