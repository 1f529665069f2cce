// The root of a key/value file, and a proof document (mpt proof's) checked against it, through
// the installed library: find_package(mpt CONFIG) and the target mpt::mpt.
//   root_and_proof KV_FILE PROOF_FILE
#include <mpt/core/hex.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/ops/kv_root.hpp>
#include <mpt/proof/proof.hpp>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 3) return 2;
    auto text = mpt::load_input(argv[1]);
    auto pairs = text ? mpt::parse_kv(text->view()) : mpt::Result<mpt::KvInput>(text.error());
    auto root = pairs ? mpt::kv_root(*pairs, false) : mpt::Result<mpt::KvRoot>(pairs.error());
    if (!root) return std::fprintf(stderr, "%s\n", root.error().message().c_str()), 2;
    std::printf("root %s\n", mpt::to_hex(root->root).c_str());

    auto doc_text = mpt::load_input(argv[2]);
    auto doc = doc_text ? mpt::JsonTree::parse(doc_text->view())
                        : mpt::Result<mpt::JsonTree>(doc_text.error());
    if (!doc) return std::fprintf(stderr, "%s\n", doc.error().message().c_str()), 2;
    const mpt::JsonValue d = doc->root();
    std::vector<mpt::bytes> nodes;
    for (size_t i = 0; i < d.find("proof")->size(); ++i) {
        nodes.push_back(mpt::from_hex((*d.find("proof"))[i].text()).value());
    }
    const auto value =
        mpt::verify_proof(root->root, mpt::from_hex(d.find("key")->text()).value(), nodes);
    std::printf("%s\n", value && *value ? ("valid " + mpt::to_hex(**value)).c_str() : "invalid");
    return value && *value ? 0 : 1;
}
