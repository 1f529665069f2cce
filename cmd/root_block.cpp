// mpt root --list and --block: the trie of rlp(index) keys over a list of encoded items, and
// a block's transactions and withdrawals roots beside its header's.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/state/block.hpp>

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

int run_list(const std::string& file, bool json) {
    auto text = read_file(file);
    if (!text) return report(text.error());
    // An encoded list given whole (0x hex, or bytes: an RLP list starts at 0xc0) is not the
    // JSON array of its items.
    const std::string_view t = past_space(*text);
    if (t.starts_with("0x") || (!t.empty() && static_cast<unsigned char>(t[0]) >= 0xc0)) {
        return report(Error{Errc::bad_input,
                            "RLP, not JSON: --list reads a JSON array of the encoded items "
                            "([\"0x...\", ...]); root --block reads a whole block's RLP"},
                      file);
    }
    auto tree = JsonTree::parse(*text);
    if (!tree) return report(tree.error(), file);
    // A JSON-RPC response's result: debug_getRawReceipts and debug_getRawTransactions answer
    // with such an array.
    auto rpc = json_rpc_result(tree->root());
    if (!rpc) return report(rpc.error(), file);
    const JsonValue list = *rpc ? **rpc : tree->root();
    if (!list.is_array()) {
        return report(Error{Errc::bad_input, "not a JSON array of 0x hex items"}, file);
    }
    std::vector<bytes> items;
    items.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        const JsonValue v = list[i];
        const std::string where = "item " + std::to_string(i + 1) + " (" + v.where() + ")";
        if (!v.is_string() || !v.text().starts_with("0x")) {
            return report(Error{Errc::bad_input, where + ": not a 0x hex string"}, file);
        }
        auto b = from_hex(v.text());
        if (!b) return report(Error{b.error().code, where + ": " + b.error().detail}, file);
        items.push_back(std::move(*b));
    }
    std::vector<bytes_view> views(items.begin(), items.end());
    auto root = ordered_trie_root(views);
    if (!root) return report(root.error(), file);
    if (json) {
        fmt::print("{{\"root\":\"{}\",\"items\":{}}}\n", to_hex(*root), items.size());
    } else {
        fmt::print("{}\n", to_hex(*root));
    }
    return kOk;
}

std::string optional_hex(const std::optional<Hash256>& h) { return h ? to_hex(*h) : "none"; }

int run_block(const std::string& file, bool json) {
    auto raw = read_raw(file);
    if (!raw) return report(raw.error());
    // A block's RLP is a list, whose first byte is 0xc0 or more: one that starts with { or [
    // is JSON, such as an eth_getBlockByNumber answer.
    std::string_view text = *raw;
    std::optional<JsonTree> tree;
    if (const std::string_view t = past_space(text); t.starts_with('{') || t.starts_with('[')) {
        // JSON: debug_getRawBlock's response carries the block as 0x hex; any other (such as
        // eth_getBlockByNumber's objects) is not a block's RLP.
        auto parsed = JsonTree::parse(text);
        if (!parsed) return report(parsed.error(), file);
        tree = std::move(*parsed);
        auto rpc = json_rpc_result(tree->root());
        if (!rpc) return report(rpc.error(), file);
        if (!*rpc || !(*rpc)->is_string() || !(*rpc)->text().starts_with("0x")) {
            return report(Error{Errc::bad_input,
                                "JSON, not RLP: --block reads a block's RLP, as raw bytes or 0x "
                                "hex, or debug_getRawBlock's answer"},
                          file);
        }
        text = (*rpc)->text();
    }
    auto block = hex_or_binary(text);
    if (!block) return report(block.error(), file);
    auto r = block_roots(*block);
    if (!r) return report(r.error(), file);
    if (json) {
        std::string out = fmt::format(
            "{{\"transactionsRoot\":{{\"header\":\"{}\",\"computed\":\"{}\",\"count\":{},"
            "\"match\":{}}},",
            to_hex(r->header_transactions_root), to_hex(r->transactions_root), r->transactions,
            r->transactions_match());
        if (r->header_withdrawals_root || r->withdrawals_root) {
            const auto q = [](const std::optional<Hash256>& h) {
                return h ? "\"" + to_hex(*h) + "\"" : std::string("null");
            };
            out += fmt::format(
                "\"withdrawalsRoot\":{{\"header\":{},\"computed\":{},\"count\":{},\"match\":{}}},",
                q(r->header_withdrawals_root), q(r->withdrawals_root), r->withdrawals,
                r->withdrawals_match());
        } else {
            out += "\"withdrawalsRoot\":null,";
        }
        out += fmt::format("\"match\":{}}}\n", r->match());
        std::fwrite(out.data(), 1, out.size(), stdout);
    } else {
        fmt::print("transactionsRoot {} computed {} ({}) {}\n", to_hex(r->header_transactions_root),
                   to_hex(r->transactions_root), count_of(r->transactions, "transaction"),
                   r->transactions_match() ? "ok" : "MISMATCH");
        if (r->header_withdrawals_root || r->withdrawals_root) {
            fmt::print("withdrawalsRoot  {} computed {} ({}) {}\n",
                       optional_hex(r->header_withdrawals_root), optional_hex(r->withdrawals_root),
                       count_of(r->withdrawals, "withdrawal"),
                       r->withdrawals_match() ? "ok" : "MISMATCH");
        }
    }
    return r->match() ? kOk : kNegative;
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
    if (inputs.size() != 1) {
        return report_usage("root: " + flag + " takes one INPUT (" +
                            (list ? "a JSON array of encoded items" : "a block's RLP") +
                            ", or - for stdin)");
    }
    return list ? run_list(inputs[0], json) : run_block(inputs[0], json);
}

}  // namespace mpt::cli
