// mpt witness: execution witnesses, checked against the pre-state root.
#include "commands.hpp"
#include "common.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/state/account.hpp>
#include <mpt/trie/node_source.hpp>
#include <mpt/witness/check.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct WitnessOptions {
    std::string action;
    std::string input;
    std::optional<std::string> root;
    bool strict = false;
    bool json = false;
};

const char* status_name(WitnessKey::Status s) {
    switch (s) {
        case WitnessKey::Status::present:
            return "present";
        case WitnessKey::Status::absent:
            return "absent";
        case WitnessKey::Status::unresolved:
            break;
    }
    return "unresolved";
}

std::string path_text(const bytes& path) { return path.empty() ? "" : path_string(path); }

// "node 0x.. missing at path 3a of trie main", or the reason where no node is named.
std::string stop_text(const WitnessKey& k) {
    std::string s = k.account_unresolved ? "its account is unresolved: " : "";
    if (k.missing) s += "node " + to_hex(*k.missing) + " ";
    s += k.reason;
    if (!k.trie.empty()) s += " at path " + path_string(k.path) + " of trie " + k.trie;
    return s;
}

nlohmann::ordered_json key_json(const WitnessKey& k) {
    nlohmann::ordered_json j;
    j["key"] = to_hex(k.key);
    j["kind"] = k.kind == WitnessKey::Kind::account ? "account" : "slot";
    if (k.address) j["address"] = to_hex(*k.address);
    j["status"] = status_name(k.status);
    if (k.status == WitnessKey::Status::present) {
        if (k.kind == WitnessKey::Kind::account) {
            if (const auto a = decode_account(k.value)) {
                uint8_t nonce[8];
                for (int i = 0; i < 8; ++i)
                    nonce[i] = static_cast<uint8_t>(a->nonce >> (8 * (7 - i)));
                j["nonce"] = quantity_text(nonce);
                j["balance"] = quantity_text(a->balance);
                j["storageRoot"] = to_hex(a->storage_root);
                j["codeHash"] = to_hex(a->code_hash);
            } else {
                j["value"] = to_hex(k.value);
            }
        } else if (const auto v = decode_storage_value(k.value)) {
            j["value"] = quantity_text(*v);
        } else {
            j["value"] = to_hex(k.value);
        }
    }
    if (k.status == WitnessKey::Status::unresolved) {
        j["trie"] = k.trie;
        j["path"] = path_text(k.path);
        if (k.missing) j["missing"] = to_hex(*k.missing);
        j["reason"] = k.reason;
        if (k.account_unresolved) j["accountUnresolved"] = true;
    }
    return j;
}

void print_json(const Witness& w, const std::vector<HeaderFacts>& headers, const WitnessCheck& c,
                bool root_given, bool ok) {
    nlohmann::ordered_json j;
    j["root"] = to_hex(c.root);
    j["rootFrom"] = root_given ? "--root" : "headers";
    j["shape"] = w.shape;
    j["headers"] = nlohmann::ordered_json::array();
    for (const HeaderFacts& h : headers) {
        j["headers"].push_back({{"number", h.number},
                                {"hash", to_hex(h.hash)},
                                {"parentHash", to_hex(h.parent_hash)},
                                {"stateRoot", to_hex(h.state_root)}});
    }
    nlohmann::ordered_json nodes = {{"listed", c.nodes},
                                    {"reached", c.reached},
                                    {"duplicated", c.duplicated},
                                    {"superfluous", nlohmann::ordered_json::array()},
                                    {"undecodable", nlohmann::ordered_json::array()}};
    for (const Hash256& h : c.superfluous) nodes["superfluous"].push_back(to_hex(h));
    for (const UndecodableNode& u : c.undecodable) {
        nodes["undecodable"].push_back(
            {{"index", u.index}, {"hash", to_hex(u.hash)}, {"reason", u.reason}});
    }
    j["nodes"] = std::move(nodes);
    j["accounts"] = c.accounts;
    j["storageTries"] = c.storage_tries;
    j["slots"] = c.slots;
    nlohmann::ordered_json codes = {{"listed", c.codes},
                                    {"matched", c.codes_matched},
                                    {"unmatched", nlohmann::ordered_json::array()}};
    for (const Hash256& h : c.codes_unmatched) codes["unmatched"].push_back(to_hex(h));
    j["codes"] = std::move(codes);
    j["keysOrder"] = c.keys_sorted ? "sorted" : "address then slots";
    j["keys"] = nlohmann::ordered_json::array();
    for (const WitnessKey& k : c.keys) j["keys"].push_back(key_json(k));
    j["resolved"] = c.keys.size() - c.unresolved();
    j["unresolved"] = c.unresolved();
    j["ok"] = ok;
    fmt::print("{}\n", j.dump());
}

void print_text(const WitnessCheck& c) {
    for (const WitnessKey& k : c.keys) {
        if (k.status != WitnessKey::Status::unresolved) continue;
        if (k.kind == WitnessKey::Kind::account) {
            fmt::print("unresolved account {}: {}\n", to_hex(k.key), stop_text(k));
        } else {
            fmt::print("unresolved slot {}{}: {}\n", to_hex(k.key),
                       k.address ? " of " + to_hex(*k.address) : std::string(), stop_text(k));
        }
    }
    for (const UndecodableNode& u : c.undecodable) {
        fmt::print("undecodable node {} (state item {}): {}\n", to_hex(u.hash), u.index + 1,
                   u.reason);
    }
    for (const Hash256& h : c.superfluous) fmt::print("superfluous node {}\n", to_hex(h));
    for (const Hash256& h : c.codes_unmatched) {
        fmt::print("code {} matches no account reached\n", to_hex(h));
    }
    size_t present = 0;
    for (const WitnessKey& k : c.keys) present += k.status == WitnessKey::Status::present;
    const size_t unresolved = c.unresolved();
    fmt::print(
        "witness: {} ({} reached, {} superfluous, {} undecodable, {} duplicated); {}, {}, {} "
        "reached; {} ({} matched); {}: {} resolved ({} present, {} absent), {} unresolved\n",
        count_of(c.nodes, "node"), c.reached, c.superfluous.size(), c.undecodable.size(),
        c.duplicated, count_of(c.accounts, "account"), count_of(c.storage_tries, "storage trie"),
        count_of(c.slots, "slot"), count_of(c.codes, "code"), c.codes_matched,
        count_of(c.keys.size(), "key"), c.keys.size() - unresolved, present,
        c.keys.size() - unresolved - present, unresolved);
}

int run_witness_check(const WitnessOptions& o) {
    std::optional<Hash256> root;
    if (o.root) {
        root = parse_root_flag(*o.root);
        if (!root) return report_usage("witness: --root: not a 32-byte 0x hex root: " + *o.root);
    }
    auto text = read_file(o.input);
    if (!text) return report(text.error());
    auto w = read_witness(*text);
    if (!w) return report(w.error(), o.input);
    auto headers = witness_headers(*w);
    if (!headers) return report(headers.error(), o.input);
    auto from_headers = witness_pre_state_root(*headers);
    if (!from_headers) return report(from_headers.error(), o.input);
    if (!root) root = *from_headers;
    if (!root) {
        return report(Error{Errc::bad_input,
                            "the witness has no headers to take the pre-state "
                            "root from; give it with --root"},
                      o.input);
    }
    const WitnessCheck c = check_witness(*w, *root);
    const bool problems =
        !c.superfluous.empty() || !c.codes_unmatched.empty() || !c.undecodable.empty();
    const bool ok = c.unresolved() == 0 && !(o.strict && problems);
    if (o.json) {
        print_json(*w, *headers, c, o.root.has_value(), ok);
    } else {
        print_text(c);
    }
    return ok ? kOk : kNegative;
}

}  // namespace

void register_witness(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<WitnessOptions>();
    sub->add_option("action", o->action, "check")->required()->check(CLI::IsMember({"check"}));
    sub->add_option("witness", o->input,
                    "The witness: JSON (debug_executionWitness), RLP or 0x hex RLP (- for stdin)")
        ->required();
    sub->add_option("--root", o->root,
                    "The pre-state root (default: the stateRoot of the highest header)");
    sub->add_flag("--strict", o->strict,
                  "Exit 1 also for a superfluous or undecodable node or a code no account has");
    sub->add_flag("--json", o->json, "Print one JSON document");
    sub->footer(
        "check links the witness's nodes from the pre-state root through the account trie and\n"
        "each account's storage trie, and resolves each of its keys: present, proven absent,\n"
        "or unresolved where a node is missing. Prints one line per problem, then a summary.\n"
        "Exit 0 when every key resolves, 1 when one does not (or a --strict problem), 2 for\n"
        "malformed input.");
    sub->final_callback([o, &runner] { runner = [o] { return run_witness_check(*o); }; });
}

}  // namespace mpt::cli
