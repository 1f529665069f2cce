// RLP decoding: any input decodes or fails cleanly; an input that decodes in full re-encodes
// to the same bytes (the decoder accepts canonical RLP only, so decoding is injective).
#include <mpt/core/rlp.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace mpt;

// Nesting deeper than this is not followed (a list of lists of ... of 4 KiB of input nests
// at most that deep, but the recursion should not depend on the fuzzer's length limit).
constexpr int kMaxDepth = 512;

// Decodes item (recursively into lists) and appends its canonical encoding to out.
// Returns false when a nested item fails to decode or the nesting is too deep.
bool reencode(const rlp::Item& item, bytes& out, int depth) {
    if (!item.is_list) {
        rlp::append_string(out, item.payload);
        return true;
    }
    if (depth == kMaxDepth) return false;
    auto count = rlp::count_items(item.payload);
    const size_t mark = rlp::begin_list(out);
    bytes_view in = item.payload;
    size_t n = 0;
    while (!in.empty()) {
        auto child = rlp::decode_item(in);
        if (!child) {
            // count_items walks the same items: it must have failed too.
            FUZZ_CHECK(!count);
            return false;
        }
        if (!reencode(*child, out, depth + 1)) return false;
        ++n;
    }
    FUZZ_CHECK(count && *count == n);
    rlp::end_list(out, mark);
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const bytes_view in(data, size);

    // decode_item consumes exactly the item's bytes from the front.
    bytes_view rest = in;
    auto first = rlp::decode_item(rest);
    if (first) {
        FUZZ_CHECK(rest.size() < in.size());
        FUZZ_CHECK(rest.data() == in.data() + (in.size() - rest.size()));
    }

    auto item = rlp::decode_single(in);
    FUZZ_CHECK(item.ok() == (first.ok() && rest.empty()));
    auto str = rlp::decode_string(in);
    FUZZ_CHECK(str.ok() == (item.ok() && !item->is_list));
    if (!item) return 0;

    bytes out;
    if (!reencode(*item, out, 0)) return 0;
    FUZZ_CHECK(bytes_equal(out, in));
    return 0;
}
