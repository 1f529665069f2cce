// Node decoding: any input decodes or fails cleanly; a node that decodes re-encodes from its
// views to exactly the input bytes (the encoders and the decoder agree on the one canonical
// form of every node).
#include <mpt/core/node.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace mpt;

bytes reencode(const NodeView& v) {
    bytes out;
    switch (v.kind) {
        case NodeView::Kind::leaf:
            encode_leaf(out, v.path, v.value);
            break;
        case NodeView::Kind::extension:
            FUZZ_CHECK(v.child.size() <= 32);
            encode_extension(out, v.path, NodeRef::from_view(v.child));
            break;
        case NodeView::Kind::branch: {
            std::array<NodeRef, 16> children;
            for (size_t i = 0; i < 16; ++i) {
                FUZZ_CHECK(v.children[i].size() <= 32);
                children[i] = NodeRef::from_view(v.children[i]);
            }
            encode_branch(out, children.data(), v.value);
            break;
        }
    }
    return out;
}

// Every view lies inside the input.
bool inside(bytes_view part, bytes_view whole) {
    return part.empty() || (part.data() >= whole.data() &&
                            part.data() + part.size() <= whole.data() + whole.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const bytes_view in(data, size);
    auto v = decode_node(in);
    if (!v) return 0;
    FUZZ_CHECK(inside(v->value, in));
    FUZZ_CHECK(inside(v->child, in));
    size_t entries = !v->value.empty();
    for (const bytes_view c : v->children) {
        FUZZ_CHECK(inside(c, in));
        // A child is empty, a hash, or an embedded node shorter than a hash.
        FUZZ_CHECK(c.size() <= 32);
        entries += !c.empty();
    }
    switch (v->kind) {
        case NodeView::Kind::leaf:
            FUZZ_CHECK(!v->value.empty());
            break;
        case NodeView::Kind::extension:
            FUZZ_CHECK(!v->path.empty() && !v->child.empty());
            break;
        case NodeView::Kind::branch:
            FUZZ_CHECK(entries >= 2);
            break;
    }
    const bytes out = reencode(*v);
    FUZZ_CHECK(bytes_equal(out, in));
    return 0;
}
