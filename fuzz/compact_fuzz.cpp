// Hex-prefix (compact) paths: any input decodes or fails cleanly; a path that decodes
// re-encodes to the input, and the unpacked and owned forms agree with the view.
#include <mpt/core/node.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace mpt;
    const bytes_view in(data, size);
    auto c = decode_compact(in);
    if (!c) return 0;
    FUZZ_CHECK(size > 0);
    // Yellow Paper appendix C: the flag nibble tells odd length; the path has 2 * size - 1
    // nibbles when odd, else 2 * size - 2.
    FUZZ_CHECK(c->path.size() == 2 * size - ((data[0] & 0x10) ? 1 : 2));
    FUZZ_CHECK(c->leaf == ((data[0] & 0x20) != 0));

    bytes out;
    append_compact(out, c->path, c->leaf);
    FUZZ_CHECK(bytes_equal(out, in));
    FUZZ_CHECK(compact_length(c->path) == size);

    // The owned path encodes the same.
    const Nibbles owned(c->path);
    FUZZ_CHECK(owned.size() == c->path.size());
    bytes out2;
    append_compact(out2, owned, c->leaf);
    FUZZ_CHECK(bytes_equal(out2, in));
    bytes unpacked;
    append_unpacked(unpacked, c->path);
    FUZZ_CHECK(bytes_equal(unpacked, owned.unpacked()));
    for (const uint8_t n : unpacked) FUZZ_CHECK(n < 16);

    // As an RLP item (how a node carries it): decodes back to the same compact bytes.
    bytes item;
    append_compact_item(item, c->path, c->leaf);
    FUZZ_CHECK(item.size() == compact_item_length(c->path));
    auto s = rlp::decode_string(item);
    FUZZ_CHECK(s.ok() && bytes_equal(*s, in));
    return 0;
}
