// mpt proof: single-key Merkle proofs (EIP-1186 list form).
//
// --verify checks a document {"root","key","value","proof"}: value null claims absence.
#include <fmt/core.h>

#include <memory>
#include <mpt/hex.hpp>
#include <mpt/kv_input.hpp>
#include <mpt/proof.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "json_doc.hpp"

namespace mpt::cli {
namespace {

struct ProofOptions {
    std::string verify;  // the document to check ("-": stdin)
    bool json = false;
};

struct ProofDocument {
    Hash256 root{};
    bytes key;
    std::optional<bytes> value;
    std::vector<bytes> proof;
};

Result<ProofDocument> read_proof_document(const std::string& text) {
    MPT_TRY(const nlohmann::json doc, parse_json_object(text));
    ProofDocument d;
    MPT_TRY(d.root, hash_field(doc, "root"));
    MPT_TRY(d.key, hex_field(doc, "key"));
    MPT_TRY(d.value, nullable_hex_field(doc, "value"));
    MPT_TRY(d.proof, hex_array_field(doc, "proof"));
    return d;
}

int run_verify(const ProofOptions& o) {
    const std::string where = o.verify == "-" ? "stdin" : o.verify;
    auto text = read_file(o.verify);
    if (!text) return report(text.error());
    auto doc = read_proof_document(*text);
    if (!doc) return report(doc.error(), where);
    const Status s = check_proof_claim(doc->root, doc->key, doc->value, doc->proof);
    if (!s.ok() && category(s.error().code) != ErrorCategory::invalid) {
        return report(s.error(), where);
    }
    if (o.json) {
        nlohmann::json out{{"valid", s.ok()}, {"error", nullptr}};
        if (!s.ok()) out["error"] = s.error().detail;
        fmt::print("{}\n", out.dump());
    } else if (s.ok()) {
        fmt::print("valid\n");
    } else {
        fmt::print("invalid: {}\n", s.error().detail);
    }
    return s.ok() ? kOk : kNegative;
}

}  // namespace

void register_proof(CLI::App& app, Runner& runner) {
    auto o = std::make_shared<ProofOptions>();
    CLI::App* sub = app.add_subcommand("proof", "Check a single-key Merkle proof document");
    sub->add_option("--verify", o->verify,
                    "Proof document {\"root\",\"key\",\"value\",\"proof\"} to check (- for stdin)")
        ->required();
    sub->add_flag("--json", o->json, "Print one JSON document {\"valid\",\"error\"}");
    sub->footer(
        "Hex strings with 0x throughout; value null claims that the key is absent. The proof\n"
        "lists node RLPs (EIP-1186 form); extra, reordered or separately listed embedded nodes\n"
        "are accepted. Exit 0 valid, 1 invalid (the reason on stdout), 2 malformed document.");
    sub->final_callback([o, &runner] { runner = [o] { return run_verify(*o); }; });
}

}  // namespace mpt::cli
