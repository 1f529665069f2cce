// mpt witness: execution witnesses made from a state file, checked against the pre-state
// root, and applied for the post-state root.
#include "commands.hpp"
#include "common.hpp"

#include "raw_input.hpp"
#include "state_print.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/ops/witness_make.hpp>
#include <mpt/state/account.hpp>
#include <mpt/state/getproof.hpp>
#include <mpt/trie/node_source.hpp>
#include <mpt/witness/apply.hpp>
#include <mpt/witness/check.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <set>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace mpt::cli {
namespace {

struct WitnessOptions {
    std::vector<std::string> operands;  // check W | apply W | DB KEY...
    std::optional<std::string> root;
    bool strict = false;
    bool json = false;
    std::optional<std::string> keys_file;
    std::optional<std::string> changes;
    std::optional<std::string> header;
    bool rlp = false;
    bool canonical = false;
    std::optional<std::string> output;
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
    const KeyStop& stop = *k.stop;
    if (stop.missing) s += "node " + to_hex(*stop.missing) + " ";
    s += stop.reason;
    if (!stop.trie.empty()) s += " at path " + path_string(stop.path) + " of trie " + stop.trie;
    return s;
}

nlohmann::ordered_json key_json(const WitnessKey& k) {
    nlohmann::ordered_json j;
    j["key"] = to_hex(k.key);
    j["kind"] = k.kind == WitnessKey::Kind::account ? "account" : "slot";
    if (!k.address.empty()) j["address"] = to_hex(k.address);
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
        const KeyStop& stop = *k.stop;
        j["trie"] = stop.trie;
        j["path"] = path_text(stop.path);
        if (stop.missing) j["missing"] = to_hex(*stop.missing);
        j["reason"] = stop.reason;
        if (k.account_unresolved) j["accountUnresolved"] = true;
    }
    return j;
}

void print_json(const Witness& w, const std::vector<HeaderFacts>& headers, const WitnessCheck& c,
                bool root_given, bool ok, const nlohmann::ordered_json& stop) {
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
    nodes["badAccounts"] = nlohmann::ordered_json::array();
    for (const UndecodableNode& u : c.bad_accounts) {
        nodes["badAccounts"].push_back(
            {{"index", u.index}, {"hash", to_hex(u.hash)}, {"reason", u.reason}});
    }
    for (const UndecodableNode& u : c.undecodable) {
        nodes["undecodable"].push_back(
            {{"index", u.index}, {"hash", to_hex(u.hash)}, {"reason", u.reason}});
    }
    nodes["classes"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < c.classes.size(); ++i) {
        nodes["classes"].push_back(
            {{"hash", to_hex(c.hashes[i])}, {"class", node_class_name(c.classes[i])}});
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
    if (c.post_root) j["changes"] = {{"root", to_hex(*c.post_root)}};
    if (!stop.is_null()) j["changes"] = {{"missing", stop}};
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
                       k.address.empty() ? std::string() : " of " + to_hex(k.address),
                       stop_text(k));
        }
    }
    for (const UndecodableNode& u : c.bad_accounts) {
        fmt::print("node {} (state item {}) in the account trie: {}\n", to_hex(u.hash), u.index + 1,
                   u.reason);
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

// Keeps a command's large results until the process exits, unfreed: a witness and its check
// hold some 400,000 allocations, whose freeing one by one took a twentieth of witness check's
// time just before the process ends. Reachable from here: no leak checker reports them.
template <typename T>
void keep_until_exit(T&& value) {
    static auto* kept = new std::vector<std::shared_ptr<void>>;  // never destroyed
    kept->push_back(std::make_shared<std::decay_t<T>>(std::forward<T>(value)));
}

// A witness read, with its headers and its pre-state root.
struct ReadWitness {
    Witness w;
    std::vector<HeaderFacts> headers;
    Hash256 root{};
};

// Reads the witness file and its pre-state root (--root, else the headers'), or reports
// the error and gives the exit code.
std::variant<ReadWitness, int> read_witness_file(const std::string& file,
                                                 const std::optional<std::string>& root_flag) {
    std::optional<Hash256> root;
    if (root_flag) {
        root = parse_root_flag(*root_flag);
        if (!root) return report_usage("witness: --root: not a 32-byte 0x hex root: " + *root_flag);
    }
    const SigbusGuard guard(file);  // the file is mapped while it is read
    auto text = read_raw(file);
    if (!text) return report(text.error());
    auto w = read_witness(text->view());
    if (!w) return report(w.error(), file);
    auto headers = witness_headers(*w);
    if (!headers) return report(headers.error(), file);
    auto from_headers = witness_pre_state_root(*headers);
    if (!from_headers) return report(from_headers.error(), file);
    if (!root) root = *from_headers;
    if (!root) {
        return report(Error{Errc::bad_input,
                            "the witness has no headers to take the pre-state "
                            "root from; give it with --root"},
                      file);
    }
    return ReadWitness{std::move(*w), std::move(*headers), *root};
}

// The changes document of --changes; an error in it names the file.
Result<ChangesDoc> load_changes(const std::string& file) {
    auto text = read_file(file);
    if (!text) return text.error();
    auto doc = parse_changes_document(*text);
    if (!doc) {
        Error e = doc.error();
        if (e.file.empty()) e.file = file;
        return e;
    }
    return doc;
}

// The changes document of --changes, or the exit code of its error (reported).
std::variant<ChangesDoc, int> read_changes(const std::string& file) {
    auto doc = load_changes(file);
    if (!doc) return report(doc.error());
    return std::move(*doc);
}

// Where applying changes stopped (a missing or undecodable node of the witness): the trie
// ("main" or 0x<keccak256(address)>), the path ("" at the root), and the hash of a missing node.
struct ChangesStop {
    std::string trie;
    std::string path;
    std::optional<Hash256> missing;
    std::string reason;  // for a node that does not decode

    ChangesStop(const Error& e, const std::optional<Hash256>& hash) {
        trie = e.trie.starts_with("trie ") ? e.trie.substr(5) : (e.trie.empty() ? "main" : e.trie);
        path = e.path == "(root)" ? "" : e.path;
        if (e.code == Errc::storage_missing_node) {
            missing = hash;
        } else {
            reason = e.detail;
        }
    }
    std::string line() const {
        const std::string at =
            "at path " + (path.empty() ? std::string("(root)") : path) + " of trie " + trie;
        if (!reason.empty()) return "node " + at + " does not decode: " + reason;
        return "missing node " + (missing ? to_hex(*missing) : std::string("(unknown)")) + " " +
               at + ": the changes need it";
    }
    nlohmann::ordered_json json() const {
        nlohmann::ordered_json m = {{"trie", trie}, {"path", path}};
        if (missing) m["hash"] = to_hex(*missing);
        if (!reason.empty()) m["reason"] = reason;
        return m;
    }
};

// An error of applying changes that is the witness's lack (exit 1), not the input's.
bool witness_lacks(const Error& e) {
    return e.code == Errc::storage_missing_node || e.code == Errc::storage_bad_node;
}

int run_witness_check(const WitnessOptions& o) {
    // The changes are read beside the witness, whose JSON tree takes one core, when they are a
    // regular file: a stream (standard input, a pipe) may be the witness's own, which is read
    // first. An error in them is reported after the witness's.
    std::future<Result<ChangesDoc>> changes;
    struct stat st {};
    if (o.changes && *o.changes != "-" && ::stat(o.changes->c_str(), &st) == 0 &&
        S_ISREG(st.st_mode)) {
        changes = std::async(std::launch::async, load_changes, *o.changes);
    }
    auto read = read_witness_file(o.operands[1], o.root);
    if (const int* code = std::get_if<int>(&read)) return *code;
    const ReadWitness& r = std::get<ReadWitness>(read);
    std::optional<ChangesDoc> doc;
    if (o.changes) {
        auto d = changes.valid() ? changes.get() : load_changes(*o.changes);
        if (!d) return report(d.error());
        doc = std::move(*d);
    }
    WitnessCheck c = check_witness(r.w, r.root, doc ? &*doc : nullptr);
    if (c.changes_error && !witness_lacks(*c.changes_error)) {
        return report(*c.changes_error, *o.changes);
    }
    std::optional<ChangesStop> stop;
    if (c.changes_error) stop.emplace(*c.changes_error, c.changes_missing);
    const bool problems = !c.superfluous.empty() || !c.codes_unmatched.empty() ||
                          !c.undecodable.empty() || !c.bad_accounts.empty();
    const bool ok = c.unresolved() == 0 && !stop && !(o.strict && problems);
    if (o.json) {
        print_json(r.w, r.headers, c, o.root.has_value(), ok, stop ? stop->json() : nullptr);
    } else {
        print_text(c);
        if (stop) fmt::print("{}\n", stop->line());
        if (c.post_root) fmt::print("changes: post-state root {}\n", to_hex(*c.post_root));
    }
    keep_until_exit(std::move(read));
    keep_until_exit(std::move(c));
    return ok ? kOk : kNegative;
}

int run_witness_apply(const WitnessOptions& o) {
    auto read = read_witness_file(o.operands[1], o.root);
    if (const int* code = std::get_if<int>(&read)) return *code;
    const ReadWitness& r = std::get<ReadWitness>(read);
    auto d = read_changes(*o.changes);
    if (const int* code = std::get_if<int>(&d)) return *code;
    const ChangesDoc& doc = std::get<ChangesDoc>(d);
    WitnessTries tries(r.w);
    auto applied = apply_changes(tries, r.root, doc);
    if (!applied) {
        if (!witness_lacks(applied.error())) return report(applied.error(), o.operands[1]);
        const ChangesStop stop(applied.error(), tries.missing());
        if (o.json) {
            const nlohmann::ordered_json j = {
                {"preRoot", to_hex(r.root)}, {"ok", false}, {"missing", stop.json()}};
            fmt::print("{}\n", j.dump());
        } else {
            fmt::print("{}\n", stop.line());
        }
        return kNegative;
    }
    if (o.json) {
        const nlohmann::ordered_json j = {{"preRoot", to_hex(r.root)},
                                          {"root", to_hex(applied->root)},
                                          {"shape", changes_shape_name(doc.shape)},
                                          {"accounts", applied->accounts},
                                          {"deleted", applied->deleted},
                                          {"slots", applied->slots},
                                          {"ok", true}};
        fmt::print("{}\n", j.dump());
    } else {
        fmt::print("{}\n", to_hex(applied->root));
    }
    keep_until_exit(std::move(read));
    return kOk;
}

// What a key resolves to, for comparing two witnesses: its status and value.
std::string resolution_text(const WitnessKey& k) {
    std::string s = status_name(k.status);
    if (k.status == WitnessKey::Status::present) s += " " + to_hex(k.value);
    return s;
}

// A key as diff names it: the key, and for a slot its account.
std::string key_name(const WitnessKey& k) {
    return to_hex(k.key) + (k.address.empty() ? std::string() : " of " + to_hex(k.address));
}

// Where in a the hashes b lacks stand, each hash's first place once (nodes and codes are
// compared by hash).
std::vector<size_t> only_in(const std::vector<Hash256>& a, const std::vector<Hash256>& b) {
    const std::unordered_set<Hash256, Hash256Hasher> in_b(b.begin(), b.end());
    std::unordered_set<Hash256, Hash256Hasher> seen;
    std::vector<size_t> out;
    for (size_t i = 0; i < a.size(); ++i) {
        if (in_b.count(a[i]) == 0 && seen.insert(a[i]).second) out.push_back(i);
    }
    return out;
}

int run_witness_diff(const WitnessOptions& o) {
    auto ra = read_witness_file(o.operands[1], o.root);
    if (const int* code = std::get_if<int>(&ra)) return *code;
    auto rb = read_witness_file(o.operands[2], o.root);
    if (const int* code = std::get_if<int>(&rb)) return *code;
    const ReadWitness& a = std::get<ReadWitness>(ra);
    const ReadWitness& b = std::get<ReadWitness>(rb);
    std::optional<ChangesDoc> doc;
    if (o.changes) {
        auto d = read_changes(*o.changes);
        if (const int* code = std::get_if<int>(&d)) return *code;
        doc = std::move(std::get<ChangesDoc>(d));
    }
    const ChangesDoc* changes = doc ? &*doc : nullptr;
    const WitnessCheck ca = check_witness(a.w, a.root, changes);
    const WitnessCheck cb = check_witness(b.w, b.root, changes);
    for (const WitnessCheck* c : {&ca, &cb}) {
        if (c->changes_error && !witness_lacks(*c->changes_error)) {
            return report(*c->changes_error, *o.changes);
        }
    }
    // Each witness's keys resolved in the other too: the keys of both, as each lists them.
    Witness a_keys_in_b = b.w, b_keys_in_a = a.w;
    a_keys_in_b.keys = a.w.keys;
    b_keys_in_a.keys = b.w.keys;
    const WitnessCheck cab = check_witness(a_keys_in_b, b.root);
    const WitnessCheck cba = check_witness(b_keys_in_a, a.root);
    struct Differ {
        const WitnessKey* a;
        const WitnessKey* b;
    };
    std::vector<Differ> differ;
    for (size_t i = 0; i < ca.keys.size(); ++i) {
        if (resolution_text(ca.keys[i]) != resolution_text(cab.keys[i])) {
            differ.push_back({&ca.keys[i], &cab.keys[i]});
        }
    }
    for (size_t i = 0; i < cb.keys.size(); ++i) {
        if (resolution_text(cba.keys[i]) != resolution_text(cb.keys[i])) {
            differ.push_back({&cba.keys[i], &cb.keys[i]});
        }
    }
    // The nodes by the hashes and classes the checks gave; the codes hashed here.
    const std::vector<size_t> nodes_a = only_in(ca.hashes, cb.hashes);
    const std::vector<size_t> nodes_b = only_in(cb.hashes, ca.hashes);
    const std::vector<Hash256> code_hashes_a = node_hashes(a.w.codes);
    const std::vector<Hash256> code_hashes_b = node_hashes(b.w.codes);
    const std::vector<size_t> codes_a = only_in(code_hashes_a, code_hashes_b);
    const std::vector<size_t> codes_b = only_in(code_hashes_b, code_hashes_a);
    const auto keys_only = [](const Witness& x, const Witness& y) {
        const std::set<bytes> in_y(y.keys.begin(), y.keys.end());
        std::set<bytes> seen;
        std::vector<bytes> out;
        for (const bytes& k : x.keys) {
            if (in_y.count(k) == 0 && seen.insert(k).second) out.push_back(k);
        }
        return out;
    };
    const std::vector<bytes> keys_a = keys_only(a.w, b.w);
    const std::vector<bytes> keys_b = keys_only(b.w, a.w);
    const bool same = a.root == b.root && differ.empty();
    if (o.json) {
        const auto side = [&](const WitnessCheck& c, const std::vector<size_t>& nodes,
                              const std::vector<Hash256>& code_hashes,
                              const std::vector<size_t>& codes, const std::vector<bytes>& keys) {
            nlohmann::ordered_json s = {{"nodes", nlohmann::ordered_json::array()},
                                        {"codes", nlohmann::ordered_json::array()},
                                        {"keys", nlohmann::ordered_json::array()}};
            for (const size_t i : nodes) {
                s["nodes"].push_back(
                    {{"hash", to_hex(c.hashes[i])}, {"class", node_class_name(c.classes[i])}});
            }
            for (const size_t i : codes) s["codes"].push_back(to_hex(code_hashes[i]));
            for (const bytes& k : keys) s["keys"].push_back(to_hex(k));
            return s;
        };
        nlohmann::ordered_json j = {{"rootA", to_hex(a.root)},
                                    {"rootB", to_hex(b.root)},
                                    {"onlyA", side(ca, nodes_a, code_hashes_a, codes_a, keys_a)},
                                    {"onlyB", side(cb, nodes_b, code_hashes_b, codes_b, keys_b)},
                                    {"differ", nlohmann::ordered_json::array()}};
        for (const Differ& d : differ) {
            j["differ"].push_back({{"a", key_json(*d.a)}, {"b", key_json(*d.b)}});
        }
        j["same"] = same;
        fmt::print("{}\n", j.dump());
        return same ? kOk : kNegative;
    }
    if (a.root != b.root) {
        fmt::print("pre-state roots differ: {} in A, {} in B\n", to_hex(a.root), to_hex(b.root));
    }
    for (const size_t i : nodes_a) {
        fmt::print("- node {} ({})\n", to_hex(ca.hashes[i]), node_class_name(ca.classes[i]));
    }
    for (const size_t i : nodes_b) {
        fmt::print("+ node {} ({})\n", to_hex(cb.hashes[i]), node_class_name(cb.classes[i]));
    }
    for (const size_t i : codes_a) fmt::print("- code {}\n", to_hex(code_hashes_a[i]));
    for (const size_t i : codes_b) fmt::print("+ code {}\n", to_hex(code_hashes_b[i]));
    for (const bytes& k : keys_a) fmt::print("- key {}\n", to_hex(k));
    for (const bytes& k : keys_b) fmt::print("+ key {}\n", to_hex(k));
    for (const Differ& d : differ) {
        fmt::print("~ key {}: {} in A, {} in B\n", key_name(*d.a), resolution_text(*d.a),
                   resolution_text(*d.b));
    }
    fmt::print(
        "witness diff: {} only in A, {} only in B; {} only in A, {} only in B; keys "
        "resolve {}\n",
        count_of(nodes_a.size(), "node"), nodes_b.size(), count_of(codes_a.size(), "code"),
        codes_b.size(), same ? "the same" : "differently");
    return same ? kOk : kNegative;
}

// A key of the make form: 40 hex digits (0x optional) an address, anything else a slot as
// get --slot and proof --slot read it.
Result<bytes> witness_key(const std::string& text) {
    const std::string_view digits =
        text.starts_with("0x") || text.starts_with("0X") ? std::string_view(text).substr(2) : text;
    if (digits.size() == 40) {
        MPT_TRY(const Address a, parse_address(text));
        return bytes(a.begin(), a.end());
    }
    auto slot = parse_storage_key(text);
    if (!slot) return Error{slot.error().code, "key " + text + ": " + slot.error().detail};
    return bytes(slot->begin(), slot->end());
}

// The witness as debug_executionWitness answers, written straight out: hex strings need no
// escaping, and a witness of 10,000 accounts holds 160,000 of them.
std::string witness_json(const Witness& w, bool canonical) {
    size_t size = 64;
    for (const auto* list : {&w.state, &w.codes, &w.keys, &w.headers}) {
        for (const bytes& b : *list) size += 2 * b.size() + 6;
    }
    std::string out;
    out.reserve(size);
    const auto list = [&out](std::string_view name, const std::vector<bytes>& items) {
        out += '"';
        out += name;
        out += "\":[";
        for (size_t i = 0; i < items.size(); ++i) {
            out += i == 0 ? "\"0x" : ",\"0x";
            append_hex_digits(out, items[i]);
            out += '"';
        }
        out += ']';
    };
    out += '{';
    list("state", w.state);
    out += ',';
    list("codes", w.codes);
    if (!canonical || !w.keys.empty()) {
        out += ',';
        list("keys", w.keys);
    }
    out += ',';
    list("headers", w.headers);
    out += "}\n";
    return out;
}

int run_witness_make(const WitnessOptions& o) {
    WitnessRequest req;
    for (size_t i = 1; i < o.operands.size(); ++i) {
        auto k = witness_key(o.operands[i]);
        if (!k) return report(k.error());
        req.keys.push_back(std::move(*k));
    }
    if (o.keys_file) {
        auto text = read_file(*o.keys_file);
        if (!text) return report(text.error());
        size_t line = 0;
        for (size_t at = 0; at < text->size();) {
            size_t end = text->find('\n', at);
            if (end == std::string::npos) end = text->size();
            std::string l = text->substr(at, end - at);
            at = end + 1;
            ++line;
            while (!l.empty() && (l.back() == '\r' || l.back() == ' ' || l.back() == '\t')) {
                l.pop_back();
            }
            if (l.empty()) continue;
            auto k = witness_key(l);
            if (!k) return report(k.error(), *o.keys_file + ":" + std::to_string(line));
            req.keys.push_back(std::move(*k));
        }
    }
    if (req.keys.empty()) return report_usage("witness: no KEY and no --keys: nothing to read");
    std::optional<ChangesDoc> doc;
    if (o.changes) {
        auto text = read_file(*o.changes);
        if (!text) return report(text.error());
        auto d = parse_changes_document(*text);
        if (!d) return report(d.error(), *o.changes);
        doc = std::move(*d);
        req.changes = &*doc;
    }
    if (o.header) {
        const SigbusGuard guard(*o.header);  // the file is mapped while it is read
        auto text = read_raw(*o.header);
        if (!text) return report(text.error());
        auto h = hex_or_binary(text->view());
        if (!h) return report(h.error(), *o.header);
        if (auto f = header_facts(*h); !f) return report(f.error(), *o.header);
        req.headers.push_back(std::move(*h));
    }
    auto store = open_trie_file(o.operands[0], SqliteNodeStore::Mode::read_only);
    if (!store) return report(store.error());
    // One read transaction: one snapshot, and no lock taken and dropped per row.
    if (auto s = (*store)->begin_read(); !s) return report(s.error(), o.operands[0]);
    auto made = make_witness(**store, req);
    (*store)->end_read();
    if (!made) return report(made.error(), o.operands[0]);
    Witness& w = made->witness;
    if (o.canonical) {
        std::sort(w.keys.begin(), w.keys.end());
        w.keys.erase(std::unique(w.keys.begin(), w.keys.end()), w.keys.end());
    }
    std::string out;
    if (o.rlp) {
        const bytes r = encode_witness_rlp(w);
        if (!o.output && ::isatty(STDOUT_FILENO) == 1) {
            out = to_hex(r) + "\n";
        } else {
            out.assign(r.begin(), r.end());
        }
    } else {
        out = witness_json(w, o.canonical);
    }
    if (o.output) {
        std::FILE* f = std::fopen(o.output->c_str(), "wb");
        if (f == nullptr) {
            return report(Error{Errc::storage_io, *o.output + ": " + std::strerror(errno)});
        }
        const bool written = std::fwrite(out.data(), 1, out.size(), f) == out.size();
        if (std::fclose(f) != 0 || !written) {
            return report(Error{Errc::storage_io, *o.output + ": " + std::strerror(errno)});
        }
        if (!quiet()) {
            eprint("mpt: note: {}: {} ({} for the reads, {} more for the changes), {}, {}{}\n",
                   printable(*o.output), count_of(w.state.size(), "node"), made->read_nodes,
                   made->change_nodes, count_of(w.codes.size(), "code"),
                   count_of(w.keys.size(), "key"),
                   made->applied ? "; post-state root " + to_hex(made->applied->root) : "");
        }
    } else {
        std::fwrite(out.data(), 1, out.size(), stdout);
    }
    return kOk;
}

// The flags given that the form does not take, as a usage error, or kOk.
int refuse_flags(const WitnessOptions& o, const std::string& form, bool root, bool strict,
                 bool json, bool make) {
    std::vector<std::string> bad;
    if (!root && o.root) bad.push_back("--root");
    if (!strict && o.strict) bad.push_back("--strict");
    if (!json && o.json) bad.push_back("--json");
    if (!make) {
        if (o.keys_file) bad.push_back("--keys");
        if (o.header) bad.push_back("--header");
        if (o.rlp) bad.push_back("--rlp");
        if (o.canonical) bad.push_back("--canonical");
        if (o.output) bad.push_back("--output");
    }
    if (bad.empty()) return kOk;
    return report_usage("witness " + form + ": " + bad.front() + " is not for this form");
}

int run_witness(const WitnessOptions& o) {
    if (o.operands.empty()) {
        return report_usage("witness: give check W, apply W --changes DOC, or DB KEY...");
    }
    const std::string& first = o.operands[0];
    if (first == "diff") {
        if (o.operands.size() != 3) return report_usage("witness diff: give two witness files");
        if (int c = refuse_flags(o, "diff", true, false, true, false); c != kOk) return c;
        return run_witness_diff(o);
    }
    if (first == "check" || first == "apply") {
        if (o.operands.size() != 2) {
            return report_usage("witness " + first + ": give one witness file (- for stdin)");
        }
        if (first == "check") {
            if (int c = refuse_flags(o, "check", true, true, true, false); c != kOk) return c;
            return run_witness_check(o);
        }
        if (int c = refuse_flags(o, "apply", true, false, true, false); c != kOk) return c;
        if (!o.changes) return report_usage("witness apply: --changes DOC is required");
        return run_witness_apply(o);
    }
    if (int c = refuse_flags(o, "DB", false, false, false, true); c != kOk) return c;
    if (o.output && o.output->empty()) return report_usage("witness: -o: an empty file name");
    return run_witness_make(o);
}

}  // namespace

void register_witness(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<WitnessOptions>();
    sub->add_option("operands", o->operands,
                    "check W | apply W | diff A B | DB KEY...: W, A, B witnesses (JSON, RLP or 0x "
                    "hex RLP; - for stdin), DB a state file, KEY an address (40 hex digits) or a "
                    "slot")
        ->required();
    sub->add_option("--root", o->root,
                    "check, apply, diff: the pre-state root (default: the stateRoot of the "
                    "highest header)");
    sub->add_flag(
        "--strict", o->strict,
        "check: exit 1 also for a superfluous or undecodable node, an account leaf that is no "
        "account, or a code no account "
        "has");
    sub->add_flag("--json", o->json, "check, apply, diff: print one JSON document");
    sub->add_option("--keys", o->keys_file,
                    "DB: read the keys from this file too, one a line (- for stdin)");
    sub->add_option("--changes", o->changes,
                    "The changes (mpt's document or geth's prestateTracer diff): DB: also hold "
                    "the nodes they need; apply: apply them; check, diff: class the nodes they "
                    "read, and check the witness holds all they need");
    sub->add_option("--header", o->header,
                    "DB: the parent header to include, as its RLP (binary or 0x hex)");
    sub->add_flag("--rlp", o->rlp, "DB: write geth's ExtWitness RLP, not JSON");
    sub->add_flag("--canonical", o->canonical, "DB: the keys sorted, each once");
    sub->add_option("-o,--output", o->output, "DB: write the witness to this file");
    sub->footer(
        "mpt witness DB KEY... makes the witness of reading those accounts and slots (each\n"
        "slot of the address before it) from a state file: the union of their proof nodes,\n"
        "sorted, the codes of the accounts, the keys. --changes adds what applying a block's\n"
        "changes needs (a collapsed branch's surviving sibling). JSON by default.\n"
        "check links the witness's nodes from the pre-state root through the account trie and\n"
        "each account's storage trie, and resolves each of its keys: present, proven absent,\n"
        "or unresolved where a node is missing. Prints one line per problem, then a summary.\n"
        "Exit 0 when every key resolves, 1 when one does not (or a --strict problem).\n"
        "apply prints the post-state root from the witness alone; exit 1 naming the node\n"
        "the changes need and the witness lacks. diff lists the nodes, codes and keys in one\n"
        "witness and not the other, each node with its class; exit 0 when both resolve the\n"
        "same keys to the same values, 1 otherwise. Exit 2: malformed input.");
    sub->final_callback([o, &runner] { runner = [o] { return run_witness(*o); }; });
}

}  // namespace mpt::cli
