// The rows a StackTrie hands its sink, put in path order without a sort.
//
// The builder hands a row over after the rows below it, subtries in path order: the rows of
// the subtree a row tops come right before it. Path order is the other way round, a row
// before the rows below it, so it follows from where each subtree begins, in one pass. (Rows
// in any other order come out of order here, which the b-tree writers check.)
//
// Thread safety: a pure function.
#pragma once

#include <mpt/core/bytes.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mpt {

// Appends to order the indices 0 .. n - 1 of the rows of one trie, as its builder handed
// them over, in path order; path(i) is row i's path.
template <typename PathOf>
void append_path_order(uint32_t n, const PathOf& path, std::vector<uint32_t>& order) {
    std::vector<uint32_t> start(n);  // the first row of the subtree each row tops
    std::vector<uint32_t> open;      // subtrees whose top row has no parent yet
    for (uint32_t i = 0; i < n; ++i) {
        start[i] = i;
        const bytes_view p = path(i);
        while (!open.empty()) {
            const bytes_view q = path(open.back());
            if (q.size() <= p.size() || common_byte_prefix(p, q) != p.size()) break;
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
