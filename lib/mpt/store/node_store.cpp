#include <mpt/store/node_store.hpp>

namespace mpt {

std::string_view trie_kind_name(TrieKind kind) noexcept {
    switch (kind) {
        case TrieKind::plain:
            return "plain";
        case TrieKind::secure:
            return "secure";
        case TrieKind::state:
            return "state";
    }
    return "unknown";
}

std::optional<TrieKind> parse_trie_kind(std::string_view name) noexcept {
    for (const TrieKind k : {TrieKind::plain, TrieKind::secure, TrieKind::state}) {
        if (name == trie_kind_name(k)) return k;
    }
    return std::nullopt;
}

Status check_trie_name(std::string_view name) {
    if (name.empty()) return {Errc::bad_input, "a trie name cannot be empty"};
    if (name.size() > kMaxTrieName) {
        return {Errc::bad_input, "a trie name is at most " + std::to_string(kMaxTrieName) +
                                     " bytes; this one has " + std::to_string(name.size())};
    }
    for (size_t i = 0; i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c < 0x20 || c == 0x7f) {
            return {Errc::bad_input, "trie name holds a control character (byte " +
                                         std::to_string(c) + " at offset " + std::to_string(i) +
                                         "); names are printed on one line"};
        }
    }
    return {};
}

Status apply_commit(NodeStore& store, TrieId trie, const CommitBatch& batch) {
    for (const bytes_view path : batch.deletes) MPT_RETURN_IF_ERROR(store.erase(trie, path));
    for (const auto& [path, rlp] : batch.puts) MPT_RETURN_IF_ERROR(store.put(trie, path, rlp));
    return store.set_root(trie, batch.root);
}

Result<std::optional<TrieInfo>> MemoryNodeStore::find_trie(std::string_view name) {
    const State& s = pending_ ? *pending_ : committed_;
    for (const TrieInfo& t : s.tries) {
        if (t.name == name) return std::optional<TrieInfo>(t);
    }
    return std::optional<TrieInfo>{};
}

Result<std::vector<TrieInfo>> MemoryNodeStore::list_tries() {
    return pending_ ? pending_->tries : committed_.tries;
}

Result<bytes_view> MemoryNodeStore::get(TrieId trie, bytes_view path) {
    const State& s = pending_ ? *pending_ : committed_;
    const auto it = s.rows.find({trie, bytes(path.begin(), path.end())});
    if (it == s.rows.end()) return bytes_view{};
    last_ = it->second;
    return bytes_view(last_);
}

Status MemoryNodeStore::scan(TrieId trie, bytes_view prefix, const RowVisitor& f) {
    const State& s = pending_ ? *pending_ : committed_;
    for (auto it = s.rows.lower_bound({trie, bytes(prefix.begin(), prefix.end())});
         it != s.rows.end() && it->first.first == trie; ++it) {
        const bytes& p = it->first.second;
        if (p.size() < prefix.size() ||
            !bytes_equal(bytes_view(p).subspan(0, prefix.size()), prefix))
            break;
        if (!f(p, it->second)) break;
    }
    return {};
}

Result<uint64_t> MemoryNodeStore::count_rows(TrieId trie) {
    const State& s = pending_ ? *pending_ : committed_;
    uint64_t n = 0;
    for (const auto& [key, rlp] : s.rows) n += key.first == trie ? 1 : 0;
    return n;
}

Status MemoryNodeStore::begin_write() {
    if (pending_) return {Errc::internal, "nested write"};
    pending_ = committed_;
    return {};
}

Result<TrieId> MemoryNodeStore::create_trie(std::string_view name, TrieKind kind) {
    if (!pending_) return {Errc::internal, "create_trie outside a write"};
    MPT_RETURN_IF_ERROR(check_trie_name(name));
    for (const TrieInfo& t : pending_->tries) {
        if (t.name == name) return {Errc::bad_input, "trie " + t.name + " exists already"};
    }
    TrieInfo t;
    t.id = static_cast<TrieId>(pending_->tries.size()) + 1;
    t.name = std::string(name);
    t.kind = kind;
    pending_->tries.push_back(t);
    return t.id;
}

Status MemoryNodeStore::put(TrieId trie, bytes_view path, bytes_view rlp) {
    if (!pending_) return {Errc::internal, "put outside a write"};
    pending_->rows[{trie, bytes(path.begin(), path.end())}] = bytes(rlp.begin(), rlp.end());
    return {};
}

Status MemoryNodeStore::erase(TrieId trie, bytes_view path) {
    if (!pending_) return {Errc::internal, "erase outside a write"};
    pending_->rows.erase({trie, bytes(path.begin(), path.end())});
    return {};
}

Result<size_t> MemoryNodeStore::erase_subtree(TrieId trie, bytes_view prefix) {
    if (!pending_) return Error{Errc::internal, "erase outside a write"};
    auto& rows = pending_->rows;
    size_t erased = 0;
    auto it = rows.lower_bound({trie, bytes(prefix.begin(), prefix.end())});
    while (it != rows.end() && it->first.first == trie &&
           it->first.second.size() >= prefix.size() &&
           bytes_equal(bytes_view(it->first.second).subspan(0, prefix.size()), prefix)) {
        it = rows.erase(it);
        ++erased;
    }
    return erased;
}

Status MemoryNodeStore::set_root(TrieId trie, const Hash256& root) {
    if (!pending_) return {Errc::internal, "set_root outside a write"};
    for (TrieInfo& t : pending_->tries) {
        if (t.id == trie) {
            t.root = root;
            return {};
        }
    }
    return {Errc::no_such_trie, std::to_string(trie)};
}

Status MemoryNodeStore::put_preimages(std::span<const Preimage> items) {
    if (!pending_) return {Errc::internal, "put_preimages outside a write"};
    for (const auto& [hash, preimage] : items) {
        pending_->preimages.try_emplace(hash, preimage.begin(), preimage.end());
    }
    return {};
}

Result<std::optional<bytes>> MemoryNodeStore::get_preimage(const Hash256& hash) {
    const State& s = pending_ ? *pending_ : committed_;
    const auto it = s.preimages.find(hash);
    if (it == s.preimages.end()) return std::optional<bytes>{};
    return std::optional<bytes>(it->second);
}

Status MemoryNodeStore::commit_write() {
    if (!pending_) return {Errc::internal, "commit outside a write"};
    committed_ = std::move(*pending_);
    pending_.reset();
    return {};
}

void MemoryNodeStore::rollback() noexcept { pending_.reset(); }

}  // namespace mpt
