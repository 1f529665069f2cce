// mpt root --list and --block: the trie of rlp(index) keys over a list of encoded items, and
// a block's transactions, withdrawals and receipts roots beside its header's.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/state/block.hpp>
#include <mpt/state/block_json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "raw_input.hpp"

namespace mpt::cli {
namespace {

// The text from its first byte past white space.
std::string_view past_space(std::string_view text) {
    const size_t at = text.find_first_not_of(" \t\r\n");
    return at == std::string_view::npos ? std::string_view() : text.substr(at);
}

// An error of file: its detail named by the file, as report(e, file) prints it.
Error in_file(const Error& e, const std::string& file) {
    return Error{e.code, file + ": " + e.detail};
}

// The encodings of a list's items (see list_item_encodings), read from a JSON array or a
// JSON-RPC answer holding one. Errors name the file.
Result<std::vector<bytes>> read_list(const std::string& file) {
    auto text = read_file(file);
    if (!text) return text.error();
    // An encoded list given whole (0x hex, or bytes: an RLP list starts at 0xc0) is not the
    // JSON array of its items.
    const std::string_view t = past_space(*text);
    if (t.starts_with("0x") || (!t.empty() && static_cast<unsigned char>(t[0]) >= 0xc0)) {
        return in_file(Error{Errc::bad_input,
                             "RLP, not JSON: --list reads a JSON array of the encoded items "
                             "([\"0x...\", ...]); root --block reads a whole block's RLP"},
                       file);
    }
    auto tree = JsonTree::parse(*text);
    if (!tree) return in_file(tree.error(), file);
    // A JSON-RPC response's result: debug_getRawReceipts, debug_getRawTransactions and
    // eth_getBlockReceipts answer with such an array.
    auto rpc = json_rpc_result(tree->root());
    if (!rpc) return in_file(rpc.error(), file);
    const JsonValue list = *rpc ? **rpc : tree->root();
    if (!list.is_array()) {
        return in_file(Error{Errc::bad_input,
                             "not a JSON array of 0x hex items, receipts, transactions or "
                             "withdrawals"},
                       file);
    }
    auto items = list_item_encodings(list, "");
    if (!items) return in_file(items.error(), file);
    return std::move(*items);
}

int run_list(const std::string& file, bool json) {
    auto items = read_list(file);
    if (!items) return report(items.error());
    std::vector<bytes_view> views(items->begin(), items->end());
    auto root = ordered_trie_root(views);
    if (!root) return report(root.error(), file);
    if (json) {
        fmt::print("{{\"root\":\"{}\",\"items\":{}}}\n", to_hex(*root), items->size());
    } else {
        fmt::print("{}\n", to_hex(*root));
    }
    return kOk;
}

std::string optional_hex(const std::optional<Hash256>& h) { return h ? to_hex(*h) : "none"; }

// The roots of the block in file: its RLP (hex or bytes), debug_getRawBlock's answer holding
// it, an eth_getBlockByNumber or eth_getBlockByHash answer with full transactions, or a
// BlockchainTests block. Errors name the file.
Result<JsonBlockRoots> read_block(const std::string& file) {
    auto raw = read_raw(file);
    if (!raw) return raw.error();
    // A block's RLP is a list, whose first byte is 0xc0 or more: one that starts with { or [
    // is JSON.
    std::string_view text = *raw;
    std::optional<JsonTree> tree;
    if (const std::string_view t = past_space(text); t.starts_with('{') || t.starts_with('[')) {
        auto parsed = JsonTree::parse(text);
        if (!parsed) return in_file(parsed.error(), file);
        tree = std::move(*parsed);
        auto rpc = json_rpc_result(tree->root());
        if (!rpc) return in_file(rpc.error(), file);
        const JsonValue v = *rpc ? **rpc : tree->root();
        if (v.is_object()) {
            auto r = json_block_roots(v, *rpc ? "result" : "");
            if (!r) return in_file(r.error(), file);
            return *r;
        }
        if (v.is_null()) {
            return in_file(
                Error{Errc::bad_input, "the answer's result is null: the node has no such block"},
                file);
        }
        if (!v.is_string() || !v.text().starts_with("0x")) {
            return in_file(Error{Errc::bad_input,
                                 "not a block: --block reads a block's RLP (raw bytes or 0x "
                                 "hex), debug_getRawBlock's answer, a block as JSON "
                                 "(eth_getBlockByNumber's answer) or a BlockchainTests block"},
                           file);
        }
        text = v.text();
    }
    auto block = hex_or_binary(text);
    if (!block) return in_file(block.error(), file);
    auto r = block_roots(*block);
    if (!r) return in_file(r.error(), file);
    return JsonBlockRoots{*r, std::nullopt};
}

std::string quoted_hex(const std::optional<Hash256>& h) {
    return h ? "\"" + to_hex(*h) + "\"" : std::string("null");
}

void print_block_json(const JsonBlockRoots& b) {
    const BlockRoots& r = b.roots;
    std::string out = fmt::format(
        "{{\"transactionsRoot\":{{\"header\":\"{}\",\"computed\":\"{}\",\"count\":{},"
        "\"match\":{}}},",
        to_hex(r.header_transactions_root), to_hex(r.transactions_root), r.transactions,
        r.transactions_match());
    if (r.header_withdrawals_root || r.withdrawals_root) {
        out += fmt::format(
            "\"withdrawalsRoot\":{{\"header\":{},\"computed\":{},\"count\":{},\"match\":{}}},",
            quoted_hex(r.header_withdrawals_root), quoted_hex(r.withdrawals_root), r.withdrawals,
            r.withdrawals_match());
    } else {
        out += "\"withdrawalsRoot\":null,";
    }
    if (r.receipts_root) {
        out += fmt::format(
            "\"receiptsRoot\":{{\"header\":{},\"computed\":\"{}\",\"count\":{},\"match\":{}}},",
            quoted_hex(r.header_receipts_root), to_hex(*r.receipts_root), r.receipts,
            r.receipts_match());
    }
    if (b.suspect) {
        out +=
            fmt::format("\"suspect\":{{\"index\":{},\"hash\":\"{}\",\"computed\":\"{}\"}},",
                        b.suspect->index, to_hex(b.suspect->claimed), to_hex(b.suspect->computed));
    }
    out += fmt::format("\"match\":{}}}\n", r.match() && !b.suspect);
    std::fwrite(out.data(), 1, out.size(), stdout);
}

void print_block_text(const JsonBlockRoots& b) {
    const BlockRoots& r = b.roots;
    fmt::print("transactionsRoot {} computed {} ({}) {}\n", to_hex(r.header_transactions_root),
               to_hex(r.transactions_root), count_of(r.transactions, "transaction"),
               r.transactions_match() ? "ok" : "MISMATCH");
    if (r.header_withdrawals_root || r.withdrawals_root) {
        fmt::print("withdrawalsRoot  {} computed {} ({}) {}\n",
                   optional_hex(r.header_withdrawals_root), optional_hex(r.withdrawals_root),
                   count_of(r.withdrawals, "withdrawal"),
                   r.withdrawals_match() ? "ok" : "MISMATCH");
    }
    if (r.receipts_root) {
        fmt::print("receiptsRoot     {} computed {} ({}) {}\n",
                   optional_hex(r.header_receipts_root), to_hex(*r.receipts_root),
                   count_of(r.receipts, "receipt"), r.receipts_match() ? "ok" : "MISMATCH");
    }
    if (b.suspect) {
        fmt::print(
            "suspect: transaction {} (from 0) is given hash {}, but its fields encode to "
            "one with hash {}\n",
            b.suspect->index, to_hex(b.suspect->claimed), to_hex(b.suspect->computed));
    }
}

// mpt root --block BLOCK [RECEIPTS]
int run_block(const std::string& file, const std::string* receipts, bool json) {
    auto b = read_block(file);
    if (!b) return report(b.error());
    if (receipts) {
        auto items = read_list(*receipts);
        if (!items) return report(items.error());
        std::vector<bytes_view> views(items->begin(), items->end());
        auto root = ordered_trie_root(views);
        if (!root) return report(root.error(), *receipts);
        b->roots.receipts_root = *root;
        b->roots.receipts = items->size();
    }
    if (json) {
        print_block_json(*b);
    } else {
        print_block_text(*b);
    }
    return b->roots.match() && !b->suspect ? kOk : kNegative;
}

}  // namespace

int run_root_list_or_block(bool list, bool block, const std::vector<std::string>& inputs,
                           bool other_flag, bool json) {
    if (list && block) return report_usage("root: give --list or --block, not both");
    const std::string flag = list ? "--list" : "--block";
    if (other_flag) {
        return report_usage("root: " + flag + " takes no --vectors, --state, --trie, --secure " +
                            "or --threads");
    }
    if (list && inputs.size() != 1) {
        return report_usage(
            "root: --list takes one INPUT (a JSON array of encoded items, or - "
            "for stdin)");
    }
    if (block && (inputs.empty() || inputs.size() > 2)) {
        return report_usage(
            "root: --block takes a BLOCK (its RLP or JSON, or - for stdin) and "
            "optionally its RECEIPTS");
    }
    if (list) return run_list(inputs[0], json);
    return run_block(inputs[0], inputs.size() == 2 ? &inputs[1] : nullptr, json);
}

}  // namespace mpt::cli
