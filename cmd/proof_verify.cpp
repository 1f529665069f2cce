// mpt proof --verify: checks a proof document {"root","key","value","proof"}, or an
// eth_getProof result (alone or as a JSON-RPC response), against its own root or a trusted
// --root; or a batch of them: documents one after another (JSON lines), arrays of them, and
// JSON-RPC batch responses, one verdict each.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/input/json_doc.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/state/getproof.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "raw_input.hpp"

namespace mpt::cli {
namespace {

struct SingleProofDocument {
    Hash256 root{};
    bytes key;
    std::optional<bytes> value;
    bool has_value = true;  // false: the document claims nothing, and value is not read
    std::vector<bytes> proof;
};

Result<SingleProofDocument> read_single_proof(const JsonDoc& doc) {
    SingleProofDocument d;
    MPT_TRY(d.root, doc.hash("root"));
    MPT_TRY(d.key, doc.hex("key"));
    d.has_value = doc.has("value");
    if (d.has_value) {
        MPT_TRY(d.value, doc.nullable_hex("value"));
    }
    MPT_TRY(d.proof, doc.hex_array("proof"));
    return d;
}

// Appends one verdict to out: a line, or with json a JSON object (no newline).
void add_verdict(std::string& out, bool json, const Status& s, nlohmann::ordered_json extra,
                 const std::string& valid_line) {
    if (json) {
        nlohmann::ordered_json v{{"valid", s.ok()}, {"error", nullptr}};
        if (!s.ok()) v["error"] = s.error().detail;
        for (auto& [k, e] : extra.items()) v[k] = e;
        out += v.dump();
    } else if (s.ok()) {
        out += valid_line + "\n";
    } else {
        out += "invalid: " + s.error().detail + "\n";
    }
}

// The {"root","key","value","proof"} form. Without a trusted root the answer is what it has
// always been; with one, the document's root must be it.
int verify_single(const std::string& file, const JsonDoc& parsed,
                  const std::optional<Hash256>& trusted, bool json, std::string& out) {
    auto doc = read_single_proof(parsed);
    if (!doc) return report(doc.error(), file);
    Status s;
    std::optional<bytes> proven;
    if (trusted && *trusted != doc->root) {
        s = Error{Errc::invalid_proof, "the document's root " + to_hex(doc->root) +
                                           " is not the trusted root " + to_hex(*trusted)};
    } else if (doc->has_value) {
        s = check_proof_claim(doc->root, doc->key, doc->value, doc->proof);
    } else {
        auto v = verify_proof(doc->root, doc->key, doc->proof);
        if (v) {
            proven = std::move(*v);
        } else {
            s = std::move(v).error();
        }
    }
    if (!s.ok() && category(s.error().code) != ErrorCategory::invalid)
        return report(s.error(), file);
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();
    std::string line = "valid";
    if (!doc->has_value) {
        // Nothing was claimed: say what the proof proves.
        extra["value"] = nullptr;
        if (s.ok() && proven) extra["value"] = to_hex(*proven);
        line = proven ? "proves value " + to_hex(*proven) : "proves absence";
    }
    add_verdict(out, json, s, std::move(extra), line);
    return s.ok() ? kOk : kNegative;
}

int verify_get_proof_document(const std::string& file, const JsonValue& top,
                              const std::optional<Hash256>& trusted, bool json, std::string& out) {
    auto doc = read_get_proof(top);
    if (!doc) return report(doc.error(), file);
    const Hash256 root = trusted ? *trusted : self_root(*doc);
    auto verdict = verify_get_proof(*doc, root);
    const bool exists = verdict && verdict->account_exists;
    Status s;
    if (!verdict) {
        if (category(verdict.error().code) != ErrorCategory::invalid) {
            return report(verdict.error(), file);
        }
        Error e = std::move(verdict).error();
        if (!trusted) e.detail += " (checked against its own root " + to_hex(root) + ")";
        s = std::move(e);
    }
    const size_t slots = doc->storage.size();
    nlohmann::ordered_json extra{{"root", to_hex(root)},
                                 {"trusted", trusted.has_value()},
                                 {"account", to_hex(doc->address)},
                                 {"exists", exists},
                                 {"storageProofs", slots}};
    if (!s.ok()) extra["exists"] = nullptr;
    const std::string what = "account " + to_hex(doc->address) + (exists ? " present" : " absent") +
                             ", " + std::to_string(slots) +
                             (slots == 1 ? " storage proof" : " storage proofs");
    const std::string line =
        trusted ? "valid: " + what + ", under the trusted root " + to_hex(root)
                : "valid against itself: " + what + ", under its own root " + to_hex(root) +
                      " (the hash of its first account proof node; no trusted --root given)";
    add_verdict(out, json, s, std::move(extra), line);
    return s.ok() ? kOk : kNegative;
}

// Several documents: each top-level value, an array's items in their place. One verdict per
// document, in order (with json a JSON array of them); exit 1 when any is invalid, 2 at the
// first that cannot be read, before anything is printed.
int verify_batch(const std::string& file, const JsonTree& tree,
                 const std::optional<Hash256>& trusted, bool json) {
    std::vector<JsonValue> docs;
    const JsonValue top = tree.root();
    for (size_t i = 0; i < top.size(); ++i) {
        const JsonValue v = top[i];
        if (v.is_array()) {
            for (size_t j = 0; j < v.size(); ++j) docs.push_back(v[j]);
        } else {
            docs.push_back(v);
        }
    }
    if (docs.empty())
        return report(Error{Errc::bad_input, "an empty array: no proof document"}, file);
    std::string out = json ? "[" : "";
    int status = kOk;
    for (size_t i = 0; i < docs.size(); ++i) {
        const JsonValue& d = docs[i];
        if (!d.is_object()) {
            return report(
                Error{Errc::bad_input, "document " + std::to_string(i + 1) + " (" + d.where() +
                                           "): not a proof document (an object)"},
                file);
        }
        if (json && i > 0) out += ",\n";
        int rc;
        if (looks_like_get_proof(d)) {
            rc = verify_get_proof_document(file, d, trusted, json, out);
        } else {
            auto parsed = JsonDoc::parse(d.source());
            if (!parsed) return report(parsed.error(), file);
            rc = verify_single(file, *parsed, trusted, json, out);
        }
        if (rc != kOk && rc != kNegative) return rc;
        if (rc == kNegative) status = kNegative;
    }
    if (json) out += "]\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return status;
}

}  // namespace

int run_proof_verify(const std::string& file, const std::optional<std::string>& root, bool json) {
    std::optional<Hash256> trusted;
    if (root) {
        trusted = parse_root_flag(*root);
        if (!trusted) return report_usage("proof: --root: not a 32-byte 0x hex root: " + *root);
    }
    auto text = read_file(file);
    if (!text) return report(text.error());
    // The flat reader takes the {"root","key","value","proof"} form in one pass, as it always
    // has, and says whether the document is an eth_getProof answer instead, which nests and
    // is read as a tree.
    auto doc = JsonDoc::parse(*text);
    std::string out;
    if (!doc) {
        // Not one object: several documents, or an array of them.
        auto tree = JsonTree::parse_sequence(*text);
        if (!tree) {
            // The first document's own error, unless it is whole and a later one is not.
            const bool first_whole =
                doc.error().detail.find("unexpected data after the document") != std::string::npos;
            return report(json_not_rlp(first_whole ? tree.error() : doc.error(), *text), file);
        }
        const JsonValue top = tree->root();
        if (top.size() == 1 && !top[0].is_array()) return report(doc.error(), file);
        return verify_batch(file, *tree, trusted, json);
    }
    int rc;
    if (doc->has("accountProof") || doc->has("result") || doc->has("error")) {
        auto tree = JsonTree::parse(*text);
        if (!tree) return report(tree.error(), file);
        rc = verify_get_proof_document(file, tree->root(), trusted, json, out);
    } else {
        rc = verify_single(file, *doc, trusted, json, out);
    }
    if (json && !out.empty()) out += "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return rc;
}

}  // namespace mpt::cli
