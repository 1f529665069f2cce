#include <mpt/store/node_store.hpp>

#include <algorithm>
#include <cctype>

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

std::string canonical_trie_name(std::string_view name) {
    std::string out(name);
    if (out.size() != 66 || out[0] != '0' || (out[1] != 'x' && out[1] != 'X')) return out;
    for (size_t i = 2; i < out.size(); ++i) {
        if (std::isxdigit(static_cast<unsigned char>(out[i])) == 0) return out;
    }
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool is_storage_trie_name(std::string_view name) noexcept {
    return name.size() == 66 && name.starts_with("0x") &&
           std::all_of(name.begin() + 2, name.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Result<TrieNames> NodeStore::trie_names(size_t n) {
    MPT_TRY(std::vector<TrieInfo> all, list_tries());
    TrieNames out;
    out.total = all.size();
    std::sort(all.begin(), all.end(),
              [](const TrieInfo& a, const TrieInfo& b) { return a.name < b.name; });
    for (size_t i = 0; i < all.size() && i < n; ++i) out.first.push_back(all[i].name);
    return out;
}

Result<uint64_t> NodeStore::copy_rows(TrieId from, TrieId to) {
    // Collected first: a store's scan may not be written to while it runs.
    std::vector<std::pair<bytes, bytes>> rows;
    MPT_RETURN_IF_ERROR(scan(from, {}, [&](bytes_view path, bytes_view rlp) {
        rows.emplace_back(bytes(path.begin(), path.end()), bytes(rlp.begin(), rlp.end()));
        return true;
    }));
    for (const auto& [path, rlp] : rows) MPT_RETURN_IF_ERROR(put(to, path, rlp));
    return static_cast<uint64_t>(rows.size());
}

Error no_such_trie_error(NodeStore& store, std::string_view name) {
    // A name no file can hold (empty, too long, a control character) is the user's mistake:
    // said as it is, as a build given it says it.
    if (Status valid = check_trie_name(name); !valid) return std::move(valid).error();
    constexpr size_t kShown = 5;
    std::string detail = "no trie named " + std::string(name);
    auto names = store.trie_names(kShown);
    if (!names) return {Errc::no_such_trie, detail};  // the listing failed: the name alone
    if (names->total == 0) return {Errc::no_such_trie, detail + "; the file holds none"};
    detail += "; the file holds " + std::to_string(names->total) + ": ";
    for (size_t i = 0; i < names->first.size(); ++i) {
        if (i != 0) detail += ", ";
        detail += names->first[i];
    }
    if (names->total > names->first.size()) detail += ", ...";
    return {Errc::no_such_trie, detail};
}

Status apply_commit(NodeStore& store, TrieId trie, const CommitBatch& batch) {
    for (const bytes_view path : batch.deletes) MPT_RETURN_IF_ERROR(store.erase(trie, path));
    for (const auto& [path, rlp] : batch.puts) MPT_RETURN_IF_ERROR(store.put(trie, path, rlp));
    return store.set_root(trie, batch.root);
}

Result<std::optional<TrieInfo>> MemoryNodeStore::find_trie(std::string_view name) {
    const State& s = pending_ ? *pending_ : committed_;
    const std::string canonical = canonical_trie_name(name);
    for (const TrieInfo& t : s.tries) {
        if (t.name == canonical) return std::optional<TrieInfo>(t);
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

Result<TrieId> MemoryNodeStore::create_trie(std::string_view given, TrieKind kind) {
    if (!pending_) return {Errc::internal, "create_trie outside a write"};
    MPT_RETURN_IF_ERROR(check_trie_name(given));
    const std::string name = canonical_trie_name(given);
    for (const TrieInfo& t : pending_->tries) {
        if (t.name == name) return {Errc::bad_input, "trie " + t.name + " exists already"};
    }
    TrieInfo t;
    t.id = 1;  // one past the largest: ids of deleted tries are not reused
    for (const TrieInfo& o : pending_->tries) t.id = std::max(t.id, o.id + 1);
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

Status MemoryNodeStore::delete_trie(TrieId trie) {
    if (!pending_) return {Errc::internal, "delete_trie outside a write"};
    auto& tries = pending_->tries;
    const auto it =
        std::find_if(tries.begin(), tries.end(), [&](const TrieInfo& t) { return t.id == trie; });
    if (it == tries.end()) return {Errc::no_such_trie, std::to_string(trie)};
    tries.erase(it);
    MPT_TRY(const size_t erased, erase_subtree(trie, {}));
    static_cast<void>(erased);
    return {};
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

Status MemoryNodeStore::put_codes(std::span<const Code> items) {
    if (!pending_) return {Errc::internal, "put_codes outside a write"};
    for (const auto& [hash, code] : items)
        pending_->codes.try_emplace(hash, code.begin(), code.end());
    return {};
}

Result<std::optional<bytes>> MemoryNodeStore::get_code(const Hash256& hash) {
    const State& s = pending_ ? *pending_ : committed_;
    const auto it = s.codes.find(hash);
    if (it == s.codes.end()) return std::optional<bytes>{};
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
