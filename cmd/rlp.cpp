// mpt rlp decode|encode: RLP items as JSON trees of hex strings, and back.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/input/kv_input.hpp>

#include <cstdio>
#include <memory>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "raw_input.hpp"

namespace mpt::cli {
namespace {

struct RlpOptions {
    std::string action;  // decode or encode
    std::string input;   // the value, or - for stdin
};

void append_json_hex(std::string& out, bytes_view b) {
    out += "\"0x";
    append_hex_digits(out, b);
    out += '"';
}

// The error of the item that starts at offset, in words that name the place.
Error at_offset(Error e, size_t offset) {
    std::string why = e.detail;
    if (why.empty()) {
        why = e.code == Errc::rlp_truncated        ? "the item runs past the end of the input"
              : e.code == Errc::rlp_trailing_bytes ? "bytes after the item"
                                                   : std::string(errc_name(e.code));
    }
    return Error{e.code, "byte " + std::to_string(offset) + ": " + why};
}

// The JSON tree of the single RLP item in, strict and canonical: a string is "0x..", a list
// an array. Lists are followed with a stack on the heap, so nesting of any depth is fine.
Result<std::string> decode_tree(bytes_view in) {
    const uint8_t* base = in.data();
    const auto offset = [&](bytes_view at) { return static_cast<size_t>(at.data() - base); };
    struct Open {
        bytes_view rest;  // the list's payload not yet decoded
        bool first = true;
    };
    std::vector<Open> open;
    std::string out;
    out.reserve(in.size() * 2 + 16);
    bytes_view top = in;
    auto emit = [&](const rlp::Item& item) {
        if (item.is_list) {
            out += '[';
            open.push_back({item.payload, true});
        } else {
            append_json_hex(out, item.payload);
        }
    };
    if (in.empty()) return Error{Errc::rlp_truncated, "byte 0: no item (the input is empty)"};
    {
        auto item = rlp::decode_item(top);
        if (!item) return at_offset(std::move(item).error(), 0);
        if (!top.empty()) {
            return Error{Errc::rlp_trailing_bytes, "byte " + std::to_string(offset(top)) + ": " +
                                                       std::to_string(top.size()) +
                                                       " bytes after the item"};
        }
        emit(*item);
    }
    while (!open.empty()) {
        Open& o = open.back();
        if (o.rest.empty()) {
            out += ']';
            open.pop_back();
            continue;
        }
        if (!o.first) out += ',';
        o.first = false;
        const size_t at = offset(o.rest);
        auto item = rlp::decode_item(o.rest);
        if (!item) {
            Error e = std::move(item).error();
            // Inside a list, an item past the end runs past its list.
            if (e.code == Errc::rlp_truncated && e.detail.empty()) {
                e.detail = "the item runs past the end of its list";
            }
            return at_offset(std::move(e), at);
        }
        emit(*item);  // may grow open: o is not used after this
    }
    out += '\n';
    return out;
}

// Appends the RLP of the JSON value v: a string by the key/value rule (0x hex, else its
// UTF-8 bytes), an array as a list. Nesting is bounded by the tree's own limit.
Status encode_value(bytes& out, const JsonValue& v, const std::string& where) {
    if (v.is_string()) {
        auto b = decode_kv_string(v.text());
        if (!b) return Error{b.error().code, where + " (" + v.where() + "): " + b.error().detail};
        rlp::append_string(out, *b);
        return {};
    }
    if (!v.is_array()) {
        return Error{Errc::bad_input, where + " (" + v.where() +
                                          "): not a string or an array (write numbers as 0x hex)"};
    }
    const size_t mark = rlp::begin_list(out);
    for (size_t i = 0; i < v.size(); ++i) {
        MPT_RETURN_IF_ERROR(encode_value(out, v[i], where + "[" + std::to_string(i) + "]"));
    }
    rlp::end_list(out, mark);
    return {};
}

int run_rlp(const RlpOptions& o) {
    const std::string where = o.input == "-" ? "-" : "argument";
    if (o.action == "decode") {
        bytes in;
        if (o.input == "-") {
            auto raw = read_raw("-");
            if (!raw) return report(raw.error());
            auto b = hex_or_binary(raw->view());
            if (!b) return report(b.error(), where);
            in = std::move(*b);
        } else {
            if (!o.input.starts_with("0x")) {
                return report_usage("rlp decode: HEX must be 0x hex (or - for stdin), got " +
                                    (o.input.empty() ? std::string("nothing") : o.input));
            }
            auto b = from_hex(o.input);
            if (!b) return report(b.error(), where);
            in = std::move(*b);
        }
        auto tree = decode_tree(in);
        if (!tree) {
            // A JSON tree where RLP goes (the first byte a JSON text's, then an RLP error).
            const std::string_view t(reinterpret_cast<const char*>(in.data()), in.size());
            if ((t.starts_with('{') || t.starts_with('[') || t.starts_with('"')) &&
                JsonTree::parse(t).ok()) {
                return report(Error{Errc::bad_input,
                                    "JSON, not RLP: rlp decode reads RLP (0x hex, or bytes on "
                                    "stdin); rlp encode reads a JSON tree"},
                              where);
            }
            return report(tree.error(), where);
        }
        std::fwrite(tree->data(), 1, tree->size(), stdout);
        return kOk;
    }
    std::string text = o.input;
    if (o.input == "-") {
        auto t = read_file("-");
        if (!t) return report(t.error());
        text = std::move(*t);
    }
    auto tree = JsonTree::parse(text);
    if (!tree) {
        if (is_one_hex_item(text)) {
            return report(Error{Errc::bad_json,
                                "0x hex, not JSON: rlp encode reads a JSON tree of 0x strings "
                                "(\"0x01\", [\"0x01\", [\"0x02\"]]); rlp decode reads RLP"},
                          where);
        }
        return report(tree.error(), where);
    }
    bytes out;
    const Status s = encode_value(out, tree->root(), "value");
    if (!s.ok()) return report(s.error(), where);
    fmt::print("{}\n", to_hex(out));
    return kOk;
}

}  // namespace

void register_rlp(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<RlpOptions>();
    sub->add_option("action", o->action, "decode or encode")
        ->required()
        ->check(CLI::IsMember({"decode", "encode"}));
    sub->add_option(
           "input", o->input,
           "decode: 0x hex, or - (stdin: 0x hex text or binary); encode: JSON, or - (stdin)")
        ->required();
    sub->footer(
        "decode prints one JSON value: a string item is \"0x..\", a list an array. It is strict:\n"
        "a non-canonical or truncated item, or bytes after it, is an error naming the byte\n"
        "offset (exit 2). encode takes such a tree: a string is 0x hex or else its UTF-8 bytes,\n"
        "an array a list; it prints 0x hex.");
    sub->final_callback([o, &runner] { runner = [o] { return run_rlp(*o); }; });
}

}  // namespace mpt::cli
