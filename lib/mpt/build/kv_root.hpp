// Roots of key/value documents: the one place that joins the input layer's sorted pairs to
// the trie layer's streaming builder.
//
// Thread safety: kv_root starts and joins its own threads.
#pragma once

#include <mpt/core/error.hpp>
#include <mpt/input/kv_input.hpp>

namespace mpt {

// The root of a document's final content and the number of its pairs: the root
// stack_trie_root gives for sorted_final_pairs. The pairs are hashed a run at a time as a
// SortedPairCursor puts them in order, and are not gathered first. With more than one thread
// and at least kParallelRootMinPairs entries, the subtries under a root branch are built one
// per first nibble on a pool of threads, each from its own part of the cursor. Only final
// keys that all start with one nibble are gathered, and split below it as stack_trie_root
// does.
struct KvRoot {
    Hash256 root;
    size_t pairs = 0;
};
Result<KvRoot> kv_root(const KvInput& input, bool secure, unsigned threads = 1);

}  // namespace mpt
