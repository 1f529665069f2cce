// Key/value JSON input: any text parses or fails with an error, never a crash; a document
// that parses gives its final content ways that must agree: sorted_final_pairs through the
// streaming StackTrie, kv_root, and the pairs applied in order to the in-memory Trie.
#include <mpt/input/kv_input.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/trie.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    auto input = parse_kv(std::string_view(reinterpret_cast<const char*>(data), size));
    if (!input) {
        const Errc e = input.error().code;
        // bad_input: the shape of a text dump line.
        FUZZ_CHECK(e == Errc::bad_json || e == Errc::bad_hex || e == Errc::bad_input);
        FUZZ_CHECK(!input.error().detail.empty());
        return 0;
    }
    for (const bool secure : {false, true}) {
        const SortedPairs sorted = sorted_final_pairs(*input, secure);
        StackTrie st;
        for (const KvPair& p : sorted.pairs) FUZZ_CHECK(st.add(p.key, p.value).ok());
        FUZZ_CHECK(st.count() == sorted.pairs.size());
        const Hash256 streamed = st.finish();
        // The same run by run from the cursor, on one thread and on two.
        for (const unsigned threads : {1u, 2u}) {
            auto root = kv_root(*input, secure, threads);
            FUZZ_CHECK(root.ok() && root->root == streamed && root->pairs == sorted.pairs.size());
        }

        Trie trie;
        for (size_t i = 0; i < input->size(); ++i) {
            const KvPair p = (*input)[i];
            const Hash256 hashed = keccak256(p.key);
            FUZZ_CHECK(trie.put(secure ? bytes_view(hashed) : p.key, p.value).ok());
        }
        auto root = trie.root_hash();
        FUZZ_CHECK(root.ok() && *root == streamed);
        for (const KvPair& p : sorted.pairs) {
            auto got = trie.get(p.key);
            FUZZ_CHECK(got.ok() && got->has_value() && bytes_equal(**got, p.value));
        }
    }
    return 0;
}
