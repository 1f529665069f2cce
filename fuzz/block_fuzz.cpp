// Blocks, headers, item lists and changes documents: any input decodes or fails with an error,
// never a crash. The bytes as a block's RLP: a block that decodes has the roots the in-memory
// Trie gives for rlp(i) -> item over its transactions and withdrawals, decoded here item by
// item; as a header: its hash is the Keccak-256 of the bytes. The bytes as JSON: a list whose
// items encode has the Trie's root of them too; a block and a header as JSON decode or fail. As
// a changes document: accounts by address and slots by slot, each once.
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/block.hpp>
#include <mpt/state/block_json.hpp>
#include <mpt/state/changes.hpp>
#include <mpt/trie/trie.hpp>

#include <string>
#include <vector>

#include "fuzz_check.hpp"

namespace {

using namespace mpt;

// The root of rlp(i) -> items[i], through the Trie rather than the stack trie.
Hash256 trie_root(const std::vector<bytes_view>& items) {
    Trie trie;
    for (size_t i = 0; i < items.size(); ++i) {
        FUZZ_CHECK(!items[i].empty());
        FUZZ_CHECK(trie.put(index_key(i), items[i]).ok());
    }
    auto root = trie.root_hash();
    FUZZ_CHECK(root.ok());
    return *root;
}

// The encodings of the items of an RLP list: a list item whole, a string item its payload (a
// typed transaction). The list decoded already, so its items do too.
std::vector<bytes_view> list_encodings(bytes_view payload) {
    std::vector<bytes_view> out;
    while (!payload.empty()) {
        const bytes_view at = payload;
        auto item = rlp::decode_item(payload);
        FUZZ_CHECK(item.ok());
        out.push_back(item->is_list ? at.first(at.size() - payload.size()) : item->payload);
    }
    return out;
}

void check_block_rlp(bytes_view in) {
    auto roots = block_roots(in);
    if (!roots) {
        FUZZ_CHECK(!roots.error().detail.empty());
        return;
    }
    bytes_view rest = in;
    auto block = rlp::decode_item(rest);
    FUZZ_CHECK(block.ok() && rest.empty() && block->is_list);
    std::vector<rlp::Item> parts;
    for (bytes_view p = block->payload; !p.empty();) {
        auto part = rlp::decode_item(p);
        FUZZ_CHECK(part.ok());
        parts.push_back(*part);
    }
    FUZZ_CHECK(parts.size() >= 3);
    const std::vector<bytes_view> txs = list_encodings(parts[1].payload);
    FUZZ_CHECK(roots->transactions == txs.size());
    FUZZ_CHECK(roots->transactions_root == trie_root(txs));
    FUZZ_CHECK(roots->withdrawals_root.has_value() == (parts.size() > 3));
    if (parts.size() > 3) {
        const std::vector<bytes_view> ws = list_encodings(parts[3].payload);
        FUZZ_CHECK(roots->withdrawals == ws.size());
        FUZZ_CHECK(*roots->withdrawals_root == trie_root(ws));
    }
}

void check_header_rlp(bytes_view in) {
    auto facts = header_facts(in);
    if (!facts) {
        FUZZ_CHECK(!facts.error().detail.empty());
        return;
    }
    FUZZ_CHECK(facts->hash == keccak256(in));
}

void check_json(std::string_view text) {
    auto tree = JsonTree::parse(text);
    if (!tree) return;
    const JsonValue root = tree->root();
    if (root.is_array()) {
        auto items = list_item_encodings(root, "");
        if (items) {
            const std::vector<bytes_view> views(items->begin(), items->end());
            bool any_empty = false;
            for (bytes_view v : views) any_empty = any_empty || v.empty();
            auto ordered = ordered_trie_root(views);
            FUZZ_CHECK(ordered.ok() != any_empty);
            if (ordered) FUZZ_CHECK(*ordered == trie_root(views));
        } else {
            FUZZ_CHECK(!items.error().detail.empty());
        }
    }
    if (root.is_object()) {
        auto block = json_block_roots(root, "");
        if (!block) FUZZ_CHECK(!block.error().detail.empty());
        auto header = encode_header_json(root, "");
        if (header) {
            check_header_rlp(*header);
        } else {
            FUZZ_CHECK(!header.error().detail.empty());
        }
    }
}

void check_changes(std::string_view text) {
    auto doc = parse_changes_document(text);
    if (!doc) {
        FUZZ_CHECK(!doc.error().detail.empty());
        return;
    }
    for (size_t i = 0; i < doc->accounts.size(); ++i) {
        const AccountUpdate& a = doc->accounts[i];
        if (i > 0) FUZZ_CHECK(doc->accounts[i - 1].address < a.address);
        for (size_t s = 1; s < a.storage.size(); ++s)
            FUZZ_CHECK(a.storage[s - 1].first < a.storage[s].first);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const bytes_view in(data, size);
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_block_rlp(in);
    check_header_rlp(in);
    check_json(text);
    check_changes(text);
    return 0;
}
