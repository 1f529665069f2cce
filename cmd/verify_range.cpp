// mpt verify-range: checks a range of pairs against a root with its edge proofs, with
// go-ethereum's VerifyRangeProof semantics (the snap protocol's range answers).
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <mpt/core/hex.hpp>
#include <mpt/input/json_doc.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/proof/proof.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "raw_input.hpp"

namespace mpt::cli {
namespace {

struct VerifyRangeOptions {
    std::string input;  // the document ("-": stdin)
    bool json = false;
};

struct RangeDocument {
    Hash256 root{};
    bytes first;
    std::vector<bytes> keys;
    std::vector<bytes> values;
    std::optional<std::vector<bytes>> proof;  // nullopt: no proof, the pairs are the whole trie
};

Result<RangeDocument> read_range_document(const std::string& text) {
    MPT_TRY(const JsonDoc doc, JsonDoc::parse(text));
    RangeDocument d;
    MPT_TRY(d.root, doc.hash("root"));
    MPT_TRY(d.first, doc.hex("first"));
    MPT_TRY(d.keys, doc.hex_array("keys"));
    MPT_TRY(d.values, doc.hex_array("values"));
    MPT_TRY(d.proof, doc.optional_hex_array("proof"));
    if (d.keys.size() != d.values.size()) {
        return Error{Errc::bad_input, "\"keys\" has " + std::to_string(d.keys.size()) +
                                          " items but \"values\" has " +
                                          std::to_string(d.values.size())};
    }
    return d;
}

int run_verify_range(const VerifyRangeOptions& o) {
    auto text = read_file(o.input);
    if (!text) return report(text.error());
    auto doc = read_range_document(*text);
    if (!doc) return report(json_not_rlp(doc.error(), *text), o.input);
    const auto r = verify_range(doc->root, doc->first, doc->keys, doc->values,
                                doc->proof ? &*doc->proof : nullptr);
    if (!r.ok() && category(r.error().code) != ErrorCategory::invalid) {
        return report(r.error(), o.input);
    }
    if (o.json) {
        nlohmann::ordered_json out{{"valid", r.ok()}, {"more", nullptr}, {"error", nullptr}};
        if (r.ok()) {
            out["more"] = r->more;
        } else {
            out["error"] = r.error().detail;
        }
        fmt::print("{}\n", out.dump());
    } else if (r.ok()) {
        fmt::print("valid more={}\n", r->more ? "true" : "false");
    } else {
        fmt::print("invalid: {}\n", r.error().detail);
    }
    return r.ok() ? kOk : kNegative;
}

}  // namespace

void register_verify_range(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<VerifyRangeOptions>();
    sub->add_option(
           "input", o->input,
           "Range document {\"root\",\"first\",\"keys\",\"values\",\"proof\"} (- for stdin)")
        ->required();
    sub->add_flag("--json", o->json, "Print one JSON document {\"valid\",\"more\",\"error\"}");
    sub->footer(
        "Hex strings with 0x throughout. proof null or missing: the pairs must be the whole\n"
        "trie. Otherwise proof holds the edge proofs of first and of the last key. Keys must be\n"
        "strictly increasing and of equal length, values nonempty. Prints `valid more=true|false`\n"
        "(more: entries exist right of the last key) or `invalid: <reason>`.\n"
        "Exit 0 valid, 1 invalid, 2 malformed document.");
    sub->final_callback([o, &runner] { runner = [o] { return run_verify_range(*o); }; });
}

}  // namespace mpt::cli
