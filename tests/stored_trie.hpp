// Tries committed into a MemoryNodeStore, for tests that read stored nodes by path.
#pragma once

#include <doctest/doctest.h>

#include <map>
#include <mpt/store/node_store.hpp>

namespace mpt::test {

struct StoredTrie {
    MemoryNodeStore store;
    TrieInfo info;
    Hash256 root = kEmptyRoot;

    TrieReader reader() { return TrieReader(store, info); }
    // Every row of the trie, by path.
    std::map<bytes, bytes> rows() const {
        std::map<bytes, bytes> out;
        for (const auto& [key, rlp] : store.state().rows) {
            if (key.first == info.id) out[key.second] = rlp;
        }
        return out;
    }
};

// Builds content into a fresh store as trie "main".
inline void build(StoredTrie& st, const std::map<bytes, bytes>& content) {
    Trie t;
    for (const auto& [k, v] : content) REQUIRE(t.put(k, v).ok());
    auto batch = t.commit();
    REQUIRE(batch.ok());
    REQUIRE(st.store.begin_write().ok());
    auto id = st.store.create_trie("main", TrieKind::plain);
    REQUIRE(id.ok());
    REQUIRE(apply_commit(st.store, *id, *batch).ok());
    REQUIRE(st.store.commit_write().ok());
    st.info = st.store.find_trie("main").value().value();
    st.root = batch->root;
    REQUIRE(st.info.root == st.root);
}

// Applies changes (an empty value removes) to a stored trie in place, through a trie
// reopened at its root: the path-keyed update a store sees in use.
inline void update(StoredTrie& st, const std::map<bytes, bytes>& changes) {
    TrieReader reader(st.store, st.info);
    Trie t = Trie::open(&reader, st.root);
    for (const auto& [k, v] : changes) REQUIRE(t.put(k, v).ok());
    auto batch = t.commit();
    REQUIRE(batch.ok());
    REQUIRE(st.store.begin_write().ok());
    REQUIRE(apply_commit(st.store, st.info.id, *batch).ok());
    REQUIRE(st.store.commit_write().ok());
    st.info = st.store.find_trie("main").value().value();
    st.root = batch->root;
}

// All pairs of a stored trie, by a full iteration.
inline std::map<bytes, bytes> contents(StoredTrie& st) {
    TrieReader reader(st.store, st.info);
    Trie t = Trie::open(&reader, st.root);
    std::map<bytes, bytes> out;
    REQUIRE(t.for_each({}, [&](bytes_view k, bytes_view v) {
                 out[bytes(k.begin(), k.end())] = bytes(v.begin(), v.end());
                 return true;
             }).ok());
    return out;
}

}  // namespace mpt::test
