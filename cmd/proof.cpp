// mpt proof: single-key Merkle proofs (EIP-1186 list form), eth_getProof answers from a state
// file (cmd/proof_state.cpp), range proofs.
//
// --verify checks a document {"root","key","value","proof"}: value null claims absence.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <mpt/core/hex.hpp>
#include <mpt/input/json_doc.hpp>
#include <mpt/input/kv_input.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/trie/node_source.hpp>
#include <mpt/trie/trie.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "key_list.hpp"
#include "progress.hpp"

namespace mpt::cli {
namespace {

struct ProofOptions {
    std::optional<std::string> verify;  // the document to check ("-": stdin)
    std::optional<std::string> root;    // with --verify: the trusted root
    std::string db;
    std::vector<std::string> keys;
    std::optional<std::string> keys_file;  // --keys: one key a line
    std::vector<std::string> accounts;     // --account: eth_getProof answers
    std::vector<std::string> slots;        // --slot, with --account
    std::string trie = "main";
    std::optional<std::string> range_from;
    std::optional<std::string> to;
    size_t limit = 1000000;
    size_t max_bytes = 512 * 1024;   // snap's soft response limit
    bool range_flags_given = false;  // --limit or --max-bytes appeared
    bool key_hashed = false;
    bool json = false;
};

// Writes the documents by hand: they hold only hex strings, null and arrays of them, which
// need no escaping, and a JSON library's serializer costs more than the proof itself.
class DocWriter {
public:
    void hex(std::string_view name, bytes_view b) {
        key(name);
        string(b);
    }
    void nullable_hex(std::string_view name, const std::optional<bytes>& b) {
        if (b) return hex(name, *b);
        key(name);
        out_ += "null";
    }
    void hex_array(std::string_view name, const std::vector<bytes>& items) {
        key(name);
        out_ += '[';
        for (size_t i = 0; i < items.size(); ++i) {
            if (i > 0) out_ += ',';
            string(items[i]);
        }
        out_ += ']';
    }
    // The document and a newline.
    const std::string& finish() {
        out_ += "}\n";
        return out_;
    }

private:
    void key(std::string_view name) {
        out_ += out_.empty() ? "{\"" : ",\"";
        out_ += name;
        out_ += "\":";
    }
    void string(bytes_view b) {
        out_ += "\"0x";
        append_hex_digits(out_, b);
        out_ += '"';
    }

    std::string out_;
};

void write_stdout(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// One document per key, in order: one key given alone prints its document; a list (keys, or
// --keys) one document a line, or with --json one JSON array, each printed once made.
int run_prove(const ProofOptions& o) {
    if (o.keys.empty() && !o.keys_file) {
        return report_usage(
            "proof: KEY is required (or --keys FILE, --account ADDR, --range FROM, or --verify "
            "FILE)");
    }
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    KeyList list(o.keys, o.keys_file);
    const bool array = o.json && list.listed();
    // Many keys share the nodes near the root: each is read and hashed once.
    VerifiedRows near_root;
    if (list.listed()) {
        t->reader->set_verified_rows(&near_root);
        if (Status st = t->store->set_cache_kib(kListCacheKib); !st.ok())
            return report(st.error(), o.db);
    }
    ProgressLine progress("proof", o.db, /*streamed=*/true);
    progress.count({&t->store->rows_read()}, "rows read");
    size_t n = 0;
    ListOutput out;
    bytes path;             // scratch of the descent
    std::string proof_hex;  // the "proof" list of the key at hand, made as its nodes are read
    const std::string head = "{\"root\":\"" + to_hex(t->info.root) + "\",\"key\":\"0x";
    for (;;) {
        auto text = list.next();
        if (!text) return report(text.error());
        if (!*text) break;
        auto key = parse_key(**text);
        if (!key) return report(list.locate(key.error()));
        const bytes trie_key = t->trie_key(*key, o.key_hashed);
        proof_hex.clear();
        auto value = prove_each(*t->reader, t->info.root, trie_key, path, [&](bytes_view node) {
            proof_hex += proof_hex.empty() ? "\"0x" : ",\"0x";
            append_hex_digits(proof_hex, node);
            proof_hex += '"';
        });
        if (!value) return report(value.error(), o.db);
        // The document as DocWriter writes it: {"root","key","value","proof"}.
        std::string& s = out.text();
        if (array) s += n == 0 ? "[" : ",\n";
        s += head;
        append_hex_digits(s, trie_key);
        if (value->empty()) {
            s += "\",\"value\":null";
        } else {
            s += "\",\"value\":\"0x";
            append_hex_digits(s, *value);
            s += '"';
        }
        s += ",\"proof\":[";
        s += proof_hex;
        s += array ? "]}" : "]}\n";
        out.answered();
        ++n;
    }
    if (array) out.text() += n == 0 ? "[]\n" : "]\n";
    return kOk;
}

int run_range(const ProofOptions& o) {
    auto from = parse_key(*o.range_from);
    if (!from) return report(from.error());
    std::optional<bytes> to;
    if (o.to) {
        auto k = parse_key(*o.to);
        if (!k) return report(k.error());
        to = std::move(*k);
    }
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    // The key rule of every command: in a trie with hashed keys, bounds are the user's keys.
    *from = t->trie_key(*from, o.key_hashed);
    if (to) *to = t->trie_key(*to, o.key_hashed);
    auto r =
        prove_range(*t->reader, t->info.root, *from, to ? &*to : nullptr, o.limit, o.max_bytes);
    if (!r) return report(r.error(), o.db);
    // Range proofs take keys of one length: the range's keys and the trie's first key (the
    // length when no key follows FROM) must agree, or no document verify-range accepts
    // exists. Checked before anything is printed.
    std::optional<bytes> first_key;
    auto first =
        Trie::open(t->reader.get(), t->info.root).for_each({}, [&](bytes_view k, bytes_view) {
            first_key = bytes(k.begin(), k.end());
            return false;
        });
    if (!first) return report(first.error(), o.db);
    for (const bytes& k : r->keys) {
        if (k.size() != first_key->size()) {
            return report(
                Error{Errc::bad_input,
                      fmt::format("range proofs need keys of one length: key {} has {}, key {} "
                                  "has {}",
                                  to_hex(*first_key), count_of(first_key->size(), "byte"),
                                  to_hex(k), k.size())},
                o.db);
        }
    }
    // A shorter FROM (0x00, say) names the same bound as itself padded with zero bytes to
    // the keys' length; answer with that form.
    if (first_key && from->size() < first_key->size()) {
        from->resize(first_key->size(), 0);
        r = prove_range(*t->reader, t->info.root, *from, to ? &*to : nullptr, o.limit, o.max_bytes);
        if (!r) return report(r.error(), o.db);
    }
    DocWriter doc;
    doc.hex("root", t->info.root);
    doc.hex("first", *from);
    doc.hex_array("keys", r->keys);
    doc.hex_array("values", r->values);
    doc.hex_array("proof", r->proof);
    write_stdout(doc.finish());
    return kOk;
}

int run_verify(const ProofOptions& o);

int run_proof(const ProofOptions& o) {
    if (o.verify) {
        if (!o.db.empty())
            return report_usage("proof: give DB KEY, DB --range FROM, or --verify FILE");
        return run_verify(o);
    }
    if (o.root) return report_usage("proof: --root goes with --verify");
    if (o.db.empty()) return report_usage("proof: DB is required (or --verify FILE)");
    const bool keys = !o.keys.empty() || o.keys_file;
    if (!o.accounts.empty()) {
        if (keys) return report_usage("proof: give KEY or --account ADDR, not both");
        if (o.range_from || o.to || o.range_flags_given)
            return report_usage("proof: --range and its flags do not go with --account");
        if (o.key_hashed)
            return report_usage(
                "proof: --key-hashed does not go with --account (eth_getProof "
                "answers name the address)");
        return run_proof_accounts(o.db, o.trie, o.accounts, o.slots, o.json);
    }
    if (!o.slots.empty()) return report_usage("proof: --slot goes with --account");
    if (o.range_from) {
        if (keys) return report_usage("proof: give KEY or --range FROM, not both");
        return run_range(o);
    }
    if (o.to || o.range_flags_given) {
        return report_usage("proof: --to, --limit and --max-bytes go with --range");
    }
    return run_prove(o);
}

int run_verify(const ProofOptions& o) { return run_proof_verify(*o.verify, o.root, o.json); }

}  // namespace

void register_proof(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<ProofOptions>();
    sub->add_option("db", o->db, "Trie file");
    sub->add_option("key", o->keys,
                    "Key to prove: 0x hex or text (hashed in a secure trie); may repeat");
    sub->add_option("--keys", o->keys_file,
                    "Prove each key of this file too, one a line (- for stdin), after any KEY");
    sub->add_option("--account", o->accounts,
                    "In a state file: print the eth_getProof answer (EIP-1186) for this address "
                    "(20 bytes hex, 0x optional), as go-ethereum gives it; may repeat: one "
                    "answer each");
    sub->add_option("--slot", o->slots,
                    "With --account: a storage key to prove for each account (hex up to 32 bytes, "
                    "0x optional, echoed as go-ethereum does); may repeat");
    sub->add_option("--trie", o->trie, "Trie name in the file")->capture_default_str();
    sub->add_option("--range", o->range_from,
                    "Prove the range of keys from this key on (0x hex or text; hashed first in a "
                    "secure or state trie unless --key-hashed; a shorter trie key is padded with "
                    "zero bytes to the keys' length), as snap answers");
    sub->add_option("--to", o->to, "With --range: stop after the first key at or past this one");
    sub->add_option("--limit", o->limit, "With --range: at most N pairs")
        ->check(kPositiveCount)
        ->capture_default_str();
    sub->add_option("--max-bytes", o->max_bytes,
                    "With --range: stop once keys and values reach B bytes")
        ->check(kCount)
        ->capture_default_str();
    sub->add_flag("--key-hashed", o->key_hashed,
                  "KEY, FROM and --to are trie keys already: do not hash them in a secure or "
                  "state trie");
    sub->add_option("--verify", o->verify,
                    "Proof document {\"root\",\"key\",\"value\",\"proof\"} or eth_getProof "
                    "result or response to check (- for stdin); several, one after another "
                    "or in arrays, each get a verdict");
    sub->add_option("--root", o->root,
                    "With --verify: the trusted state root (0x, 32 bytes) to check against");
    sub->add_flag("--json", o->json,
                  "With --verify: print {\"valid\",\"error\",...}; with several keys or "
                  "accounts, or --keys: print one JSON array of the documents");
    sub->footer(
        "mpt proof DB KEY prints {\"root\",\"key\",\"value\",\"proof\"}: value null proves\n"
        "absence; proof lists node RLPs from the root (EIP-1186 form). mpt proof DB --range FROM\n"
        "prints {\"root\",\"first\",\"keys\",\"values\",\"proof\"} for mpt verify-range.\n"
        "Several keys (or --keys) give one document a line, in order (--json: one array).\n"
        "mpt proof DB --account ADDR [--slot SLOT]... prints the eth_getProof result go-ethereum\n"
        "returns: {\"address\",\"accountProof\",\"balance\",\"codeHash\",\"nonce\",\n"
        "\"storageHash\",\"storageProof\":[{\"key\",\"value\",\"proof\"}]}; an absent account\n"
        "has nonce and balance 0x0 and zero codeHash and storageHash; an absent slot value\n"
        "0x0. A SLOT of 32 bytes is echoed as given (lowercase), any other as a quantity.\n"
        "Each --slot applies to every --account; each account gives one result a line.\n"
        "--verify: hex strings with 0x throughout; extra, reordered or separately listed\n"
        "embedded nodes are accepted; without \"value\" it prints what the proof proves. An\n"
        "eth_getProof result (EIP-1186) is checked against --root, or without it against its\n"
        "own first node, which the output says. Exit 0 valid, 1 invalid (the reason on\n"
        "stdout), 2 malformed document.");
    sub->final_callback([o, sub, &runner] {
        o->range_flags_given =
            sub->get_option("--limit")->count() > 0 || sub->get_option("--max-bytes")->count() > 0;
        runner = [o] { return run_proof(*o); };
    });
}

}  // namespace mpt::cli
