// The rows a StackTrie hands its sink, put in path order without a sort.
//
// The builder hands a row over after the rows below it, subtries in path order: the rows of
// the subtree a row tops come right before it. Path order is the other way round, a row
// before the rows below it, so it follows from where each subtree begins, in one pass.
//
// Path lengths alone tell where a subtree begins. When a row comes, the subtrees handed over
// whose parent has not come yet are its children, each longer than it, and, below them,
// children of its ancestors' branches, each no longer than it (a branch's children are one
// nibble longer than the branch, and an extension's one child is on the way to the row). So
// the row tops the run of longer subtrees just before it. That holds for any stretch of the
// builder's rows too (SpillingRows). Rows in any other order come out of order here: the
// key/value builds' writers check the order (trie_file_writer), the state build's
// (state_bulk) rely on the StackTrie's. No row is lost either way.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpt {

// Appends to order the indices 0 .. n - 1 of the rows of one trie, as its builder handed
// them over, in path order; path(i) is row i's path, of which only the length is read.
template <typename PathOf>
void append_path_order(uint32_t n, const PathOf& path, std::vector<uint32_t>& order) {
    std::vector<uint32_t> start(n);  // the first row of the subtree each row tops
    std::vector<uint32_t> open;      // subtrees whose top row has no parent yet
    for (uint32_t i = 0; i < n; ++i) {
        start[i] = i;
        const size_t length = path(i).size();
        while (!open.empty() && path(open.back()).size() > length) {
            start[i] = start[open.back()];
            open.pop_back();
        }
        open.push_back(i);
    }
    order.reserve(order.size() + n);
    std::vector<uint32_t> next(open.rbegin(), open.rend());  // subtrees, first last
    while (!next.empty()) {
        const uint32_t top = next.back();
        next.pop_back();
        order.push_back(top);
        // Its children's subtrees end at top - 1, at the start of the next one - 1...
        for (int64_t c = int64_t{top} - 1; c >= int64_t{start[top]}; c = start[c] - int64_t{1}) {
            next.push_back(static_cast<uint32_t>(c));
        }
    }
}

}  // namespace mpt
