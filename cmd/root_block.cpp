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

// An error of file: its detail named by the file, as report(e, file) prints it.
Error in_file(const Error& e, const std::string& file) {
    return Error{e.code, file + ": " + e.detail};
}

// A JSON-RPC batch response: an array of responses, each an object with "jsonrpc".
bool is_rpc_batch(const JsonValue& v) {
    if (!v.is_array() || v.size() == 0) return false;
    for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_object() || !v[i].find("jsonrpc")) return false;
    }
    return true;
}

// The answers of a document: a batch response's results, each with its response's id (as
// written), or the document's one answer (a response's result, or the document) with no id.
// Errors: a response that carries an error, named by its place in the batch.
Result<std::vector<std::pair<std::string, JsonValue>>> answers(const JsonValue& top) {
    std::vector<std::pair<std::string, JsonValue>> out;
    if (!is_rpc_batch(top)) {
        MPT_TRY(const std::optional<JsonValue> rpc, json_rpc_result(top));
        out.emplace_back(std::string(), rpc ? *rpc : top);
        return out;
    }
    for (size_t i = 0; i < top.size(); ++i) {
        auto rpc = json_rpc_result(top[i]);
        if (!rpc) {
            return Error{rpc.error().code,
                         "response " + std::to_string(i + 1) + ": " + rpc.error().detail};
        }
        if (!*rpc) {
            return Error{Errc::bad_input, "response " + std::to_string(i + 1) + " (" +
                                              top[i].where() + "): neither result nor error"};
        }
        const auto id = top[i].find("id");
        out.emplace_back(id ? std::string(id->source()) : std::string("null"), **rpc);
    }
    return out;
}

// One list's encodings, each with the id of the response that held it (empty: no batch).
struct ListAnswer {
    std::string id;
    std::vector<bytes> items;
};

// The encodings of a list's items (see list_item_encodings), read from a JSON array, a
// JSON-RPC answer holding one, or a batch of such answers (one list each). Errors name the
// file.
Result<std::vector<ListAnswer>> read_lists(const std::string& file) {
    auto text = read_file(file);
    if (!text) return text.error();
    // An encoded list given whole (0x hex, or bytes: an RLP list starts at 0xc0) is not the
    // JSON array of its items.
    const std::string_view t = without_space(*text);
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
    auto found = answers(tree->root());
    if (!found) return in_file(found.error(), file);
    std::vector<ListAnswer> out;
    for (const auto& [id, list] : *found) {
        const std::string where = id.empty() ? "" : "response " + std::to_string(out.size() + 1);
        if (!list.is_array()) {
            return in_file(Error{Errc::bad_input,
                                 (where.empty() ? "" : where + ": ") +
                                     "not a JSON array of 0x hex items, receipts, transactions "
                                     "or withdrawals"},
                           file);
        }
        auto items = list_item_encodings(list, where.empty() ? "" : where + ".result");
        if (!items) return in_file(items.error(), file);
        out.push_back({id, std::move(*items)});
    }
    return out;
}

// The one list of file; a batch is an input error here (the receipts beside a block).
Result<std::vector<bytes>> read_list(const std::string& file) {
    MPT_TRY(std::vector<ListAnswer> lists, read_lists(file));
    if (lists.size() != 1) {
        return in_file(Error{Errc::bad_input, "a batch of " + std::to_string(lists.size()) +
                                                  " answers, where one list goes"},
                       file);
    }
    return std::move(lists[0].items);
}

int run_list(const std::string& file, bool json) {
    auto lists = read_lists(file);
    if (!lists) return report(lists.error());
    const bool batch = lists->size() > 1 || !(*lists)[0].id.empty();
    std::string out = json && batch ? "[" : "";
    for (const ListAnswer& l : *lists) {
        std::vector<bytes_view> views(l.items.begin(), l.items.end());
        auto root = ordered_trie_root(views);
        if (!root) return report(root.error(), file);
        if (json) {
            if (out.size() > 1) out += ",";
            out += fmt::format("{{{}\"root\":\"{}\",\"items\":{}}}",
                               batch ? "\"id\":" + l.id + "," : "", to_hex(*root), l.items.size());
        } else {
            out += (batch ? "id " + l.id + ": " : "") + to_hex(*root) + "\n";
        }
    }
    if (json) out += batch ? "]\n" : "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return kOk;
}

std::string optional_hex(const std::optional<Hash256>& h) { return h ? to_hex(*h) : "none"; }

// The roots of a block given as a JSON value: a block object, a block's RLP as 0x hex
// (debug_getRawBlock), or null (no such block: an error). where names its fields in errors,
// label (when not empty) the value itself.
Result<JsonBlockRoots> block_of_value(const JsonValue& v, const std::string& where,
                                      const std::string& label) {
    if (v.is_object()) return json_block_roots(v, where);
    const std::string at = label.empty() ? "" : label + ": ";
    if (v.is_null()) {
        return Error{Errc::bad_input,
                     at + "the answer's result is null: the node has no such block"};
    }
    if (!v.is_string() || !v.text().starts_with("0x")) {
        return Error{Errc::bad_input,
                     at + "not a block: --block reads a block's RLP (raw bytes or 0x hex), "
                          "debug_getRawBlock's answer, a block as JSON (eth_getBlockByNumber's "
                          "answer) or a BlockchainTests block"};
    }
    MPT_TRY(const bytes block, from_hex(v.text()));
    MPT_TRY(const BlockRoots r, block_roots(block));
    return JsonBlockRoots{r, std::nullopt};
}

// One block's roots, with the id of the response that held it (empty: no batch).
struct BlockAnswer {
    std::string id;
    JsonBlockRoots roots;
};

// The blocks of file: its RLP (hex or bytes), debug_getRawBlock's answer holding it, an
// eth_getBlockByNumber or eth_getBlockByHash answer with full transactions, a BlockchainTests
// block, or a batch of such answers. Errors name the file.
Result<std::vector<BlockAnswer>> read_blocks(const std::string& file) {
    const SigbusGuard guard(file);  // the file is mapped while it is read
    auto raw = read_raw(file);
    if (!raw) return raw.error();
    // A block's RLP is a list, whose first byte is 0xc0 or more: one that starts with { or [
    // is JSON.
    const std::string_view text = raw->view();
    std::vector<BlockAnswer> out;
    if (const std::string_view t = without_space(text); t.starts_with('{') || t.starts_with('[')) {
        auto tree = JsonTree::parse(text);
        if (!tree) return in_file(tree.error(), file);
        auto found = answers(tree->root());
        if (!found) return in_file(found.error(), file);
        const bool batch = found->size() > 1 || !(*found)[0].first.empty();
        const bool rpc = batch || (tree->root().is_object() && tree->root().find("result"));
        for (const auto& [id, v] : *found) {
            const std::string where = batch
                                          ? "response " + std::to_string(out.size() + 1) + ".result"
                                          : (rpc ? "result" : "");
            auto r =
                block_of_value(v, where, batch ? "response " + std::to_string(out.size() + 1) : "");
            if (!r) return in_file(r.error(), file);
            out.push_back({id, *r});
        }
        return out;
    }
    auto block = hex_or_binary(text);
    if (!block) return in_file(block.error(), file);
    auto r = block_roots(*block);
    if (!r) return in_file(r.error(), file);
    out.push_back({std::string(), JsonBlockRoots{*r, std::nullopt}});
    return out;
}

std::string quoted_hex(const std::optional<Hash256>& h) {
    return h ? "\"" + to_hex(*h) + "\"" : std::string("null");
}

// One block's JSON object; id (a batch response's, as written) first when not empty.
std::string block_json(const JsonBlockRoots& b, const std::string& id) {
    const BlockRoots& r = b.roots;
    std::string out = "{";
    if (!id.empty()) out += "\"id\":" + id + ",";
    out += fmt::format(
        "\"transactionsRoot\":{{\"header\":\"{}\",\"computed\":\"{}\",\"count\":{},"
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
    out += fmt::format("\"match\":{}}}", r.match() && !b.suspect);
    return out;
}

// One block's lines, each after prefix.
std::string block_text(const JsonBlockRoots& b, const std::string& prefix) {
    const BlockRoots& r = b.roots;
    std::string out =
        prefix + fmt::format("transactionsRoot {} computed {} ({}) {}\n",
                             to_hex(r.header_transactions_root), to_hex(r.transactions_root),
                             count_of(r.transactions, "transaction"),
                             r.transactions_match() ? "ok" : "MISMATCH");
    if (r.header_withdrawals_root || r.withdrawals_root) {
        out += prefix + fmt::format("withdrawalsRoot  {} computed {} ({}) {}\n",
                                    optional_hex(r.header_withdrawals_root),
                                    optional_hex(r.withdrawals_root),
                                    count_of(r.withdrawals, "withdrawal"),
                                    r.withdrawals_match() ? "ok" : "MISMATCH");
    }
    if (r.receipts_root) {
        out += prefix + fmt::format("receiptsRoot     {} computed {} ({}) {}\n",
                                    optional_hex(r.header_receipts_root), to_hex(*r.receipts_root),
                                    count_of(r.receipts, "receipt"),
                                    r.receipts_match() ? "ok" : "MISMATCH");
    }
    if (b.suspect) {
        out +=
            prefix + fmt::format(
                         "suspect: transaction {} (from 0) is given hash {}, but its fields "
                         "encode to one with hash {}\n",
                         b.suspect->index, to_hex(b.suspect->claimed), to_hex(b.suspect->computed));
    }
    return out;
}

// mpt root --block BLOCK [RECEIPTS]: a batch of blocks prints each block's lines after
// "id ID: " (with --json an array of objects, each with its "id"); exit 1 when any differs.
int run_block(const std::string& file, const std::string* receipts, bool json) {
    auto blocks = read_blocks(file);
    if (!blocks) return report(blocks.error());
    const bool batch = blocks->size() > 1 || !(*blocks)[0].id.empty();
    if (receipts) {
        if (batch) {
            return report_usage("root: --block of a batch of " + std::to_string(blocks->size()) +
                                " answers takes no RECEIPTS");
        }
        auto items = read_list(*receipts);
        if (!items) return report(items.error());
        std::vector<bytes_view> views(items->begin(), items->end());
        auto root = ordered_trie_root(views);
        if (!root) return report(root.error(), *receipts);
        (*blocks)[0].roots.roots.receipts_root = *root;
        (*blocks)[0].roots.roots.receipts = items->size();
    }
    std::string out = json && batch ? "[" : "";
    int status = kOk;
    for (const BlockAnswer& b : *blocks) {
        if (json) {
            if (out.size() > 1) out += ",";
            out += block_json(b.roots, b.id);
        } else {
            out += block_text(b.roots, batch ? "id " + b.id + ": " : "");
        }
        if (!b.roots.roots.match() || b.roots.suspect) status = kNegative;
    }
    if (json) out += batch ? "]\n" : "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return status;
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
