// Temporary: the schema-2 names over the schema-1 store, until the store has trie kinds and
// preimages. Removed when it does.
#pragma once

#include <mpt/store/node_store.hpp>

#include <span>
#include <string_view>

namespace mpt::compat {

enum class TrieKind : uint8_t { plain, secure, state };

inline std::string_view trie_kind_name(TrieKind k) noexcept {
    return k == TrieKind::plain ? "plain" : k == TrieKind::secure ? "secure" : "state";
}
// Schema 1 cannot tell a state trie from a secure one: a secure `main` counts as state.
inline TrieKind kind_of(const TrieInfo& t) noexcept {
    if (!t.secure) return TrieKind::plain;
    return t.name == "main" ? TrieKind::state : TrieKind::secure;
}
inline Result<TrieId> create_trie(NodeStore& s, std::string_view name, TrieKind k) {
    return s.create_trie(name, k != TrieKind::plain);
}
inline Status put_preimages(NodeStore&, std::span<const std::pair<Hash256, bytes_view>>) {
    return {};
}
inline Result<std::optional<bytes>> get_preimage(NodeStore&, const Hash256&) {
    return std::optional<bytes>{};
}

}  // namespace mpt::compat
