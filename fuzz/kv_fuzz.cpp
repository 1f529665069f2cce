// Key/value JSON input: any text parses or fails with an error, never a crash; a document
// that parses gives its final content ways that must agree: sorted_final_pairs through the
// streaming StackTrie, kv_root, and the pairs applied in order to the in-memory Trie. The
// other readers of a document give the same entries or the same error: the parse in two
// halves (cut near the middle), and the reader in pieces of 64 bytes (a document past
// --memory or piped), whose root through a sorter that spills every few records is kv_root's;
// where an entry may take no more than 100 bytes, it gives the same or says the entry is too
// large.
#include <mpt/input/kv_input.hpp>
#include <mpt/input/kv_stream.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/sort/spill.hpp>
#include <mpt/trie/stack_trie.hpp>
#include <mpt/trie/trie.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace mpt;

void check_same_error(const Error& got, const Error& want) {
    FUZZ_CHECK(got.code == want.code && got.detail == want.detail);
}

// The halves' parse against the whole one: the same entries in order, or the same error.
void check_halves(std::string_view text, const Result<KvInput>& whole) {
    auto halves = parse_kv(text, 2, 16);
    if (!whole) {
        FUZZ_CHECK(!halves.ok());
        check_same_error(halves.error(), whole.error());
        return;
    }
    FUZZ_CHECK(halves.ok() && halves->size() == whole->size() &&
               halves->ordered() == whole->ordered());
    for (size_t i = 0; i < whole->size(); ++i) {
        FUZZ_CHECK(bytes_equal((*halves)[i].key, (*whole)[i].key));
        FUZZ_CHECK(bytes_equal((*halves)[i].value, (*whole)[i].value));
    }
}

// The root of the document read in pieces and sorted through temporary files, an entry
// taking up to max_entry bytes.
Result<KvRoot> streamed_root(std::string_view text, bool secure, unsigned threads,
                             size_t max_entry = size_t{1} << 20) {
    KvStreamReader stream(fuzz_text_stream(text, max_entry));
    stream.parse_halves(threads > 1, 64);
    SpillOptions so;
    so.run_bytes = 512;
    so.buffer_bytes = 4096;
    so.chunk_bytes = 128;
    so.fan_in = 2;
    so.overlap = threads > 1;
    SpillFiles files(so);
    SpillingPairSorter sorter(files);
    MPT_RETURN_IF_ERROR(sort_kv_stream(stream, secure, false, sorter));
    return kv_root_sorted(sorter, threads);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto input = parse_kv(text);
    check_halves(text, input);
    // With entries of at most 100 bytes: the same error or root, or too large an entry.
    if (auto small = streamed_root(text, false, 1, 100); !small) {
        if (small.error().code != Errc::input_too_large) {
            FUZZ_CHECK(!input.ok());
            check_same_error(small.error(), input.error());
        }
    } else {
        FUZZ_CHECK(input.ok());
        auto root = kv_root(*input, false, 1);
        FUZZ_CHECK(root.ok() && root->root == small->root);
    }
    if (!input) {
        const Errc e = input.error().code;
        // bad_input: the shape of a text dump line.
        FUZZ_CHECK(e == Errc::bad_json || e == Errc::bad_hex || e == Errc::bad_input);
        FUZZ_CHECK(!input.error().detail.empty());
        auto streamed = streamed_root(text, false, 1);
        FUZZ_CHECK(!streamed.ok());
        check_same_error(streamed.error(), input.error());
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
            auto spilled = streamed_root(text, secure, threads);
            FUZZ_CHECK(spilled.ok() && spilled->root == streamed &&
                       spilled->pairs == sorted.pairs.size());
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
