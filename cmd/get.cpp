// mpt get: the values of keys, or an account and its slots, from a trie file.
#include "commands.hpp"
#include "common.hpp"
#include "key_list.hpp"
#include "state_print.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/trie/node_source.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace mpt::cli {
namespace {

struct GetOptions {
    std::string db;
    std::vector<std::string> keys;
    std::optional<std::string> keys_file;  // --keys: one key a line
    std::optional<std::string> account;
    std::vector<std::string> slots;
    std::string trie = "main";
    bool key_hashed = false;
    bool json = false;
};

int run_get_account(const GetOptions& o) {
    auto address_hash = account_key(*o.account, o.key_hashed);
    if (!address_hash) return report(address_hash.error());
    std::vector<Hash256> slot_keys;
    for (const std::string& s : o.slots) {
        auto k = slot_key(s, o.key_hashed);
        if (!k) return report(k.error());
        slot_keys.push_back(*k);
    }
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    auto view = StateView::open(*t->store, o.trie);
    if (!view) return report(view.error(), o.db);
    auto account = view->account(*address_hash);
    if (!account) return report(account.error(), o.db);
    if (o.slots.empty()) {
        if (!*account) {
            if (o.json) fmt::print("null\n");
            return kNegative;
        }
        std::string line = "{";
        append_account_fields(line, **account);
        line += "}\n";
        std::fwrite(line.data(), 1, line.size(), stdout);
        return kOk;
    }
    // One line per slot: its value, or an empty line when absent (zero); --json: one object.
    bool all = true;
    std::string out = o.json ? "{" : "";
    for (size_t i = 0; i < slot_keys.size(); ++i) {
        std::optional<U256> v;
        if (*account) {
            auto r = view->slot(*address_hash, **account, slot_keys[i]);
            if (!r) return report(r.error(), o.db);
            v = *r;
        }
        all = all && v.has_value();
        if (o.json) {
            if (i > 0) out += ',';
            out += "\"" + o.slots[i] + "\":" + (v ? "\"" + quantity_text(*v) + "\"" : "null");
        } else {
            out += (v ? quantity_text(*v) : std::string()) + "\n";
        }
    }
    if (o.json) out += "}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return all ? kOk : kNegative;
}

// Several keys (or --keys): one line per key, in order, its value or an empty line when
// absent; --json one array of {"key","value","trie"}, each printed once read. Exit 1 when any is
// absent.
int run_get_list(const GetOptions& o, OpenTrie& t, KeyList& list) {
    // Many keys share the nodes near the root: each is read and hashed once.
    VerifiedRows near_root;
    t.reader->set_verified_rows(&near_root);
    if (Status st = t.store->set_cache_kib(kListCacheKib); !st.ok())
        return report(st.error(), o.db);
    const Trie trie = Trie::open(t.reader.get(), t.info.root);
    bool all = true;
    size_t n = 0;
    bytes value;
    ListOutput out;
    const std::string trie_field = ",\"trie\":" + nlohmann::json(t.info.name).dump() + "}";
    for (;;) {
        auto text = list.next();
        if (!text) return report(text.error());
        if (!*text) break;
        auto key = parse_key(**text);
        if (!key) return report(list.locate(key.error()));
        const bytes trie_key = t.trie_key(*key, o.key_hashed);
        auto found = trie.get(trie_key, value);
        if (!found) return report(found.error(), o.db);
        all = all && *found;
        std::string& s = out.text();
        if (o.json) {
            s += n == 0 ? "[{\"key\":\"0x" : ",\n{\"key\":\"0x";
            append_hex_digits(s, trie_key);
            if (*found) {
                s += "\",\"value\":\"0x";
                append_hex_digits(s, value);
                s += '"';
            } else {
                s += "\",\"value\":null";
            }
            s += trie_field;
        } else {
            if (*found) {
                s += "0x";
                append_hex_digits(s, value);
            }
            s += '\n';
        }
        out.answered();
        ++n;
    }
    if (o.json) out.text() += n == 0 ? "[]\n" : "]\n";
    return all ? kOk : kNegative;
}

int run_get(const GetOptions& o) {
    const bool keys = !o.keys.empty() || o.keys_file;
    if (o.account) {
        if (keys) return report_usage("get: give KEY or --account ADDR, not both");
        return run_get_account(o);
    }
    if (!o.slots.empty()) return report_usage("get: --slot goes with --account");
    if (!keys) return report_usage("get: KEY is required (or --keys FILE, or --account ADDR)");
    KeyList list(o.keys, o.keys_file);
    if (list.listed()) {
        auto t = open_trie(o.db, o.trie);
        if (!t) return report(t.error());
        return run_get_list(o, *t, list);
    }
    auto key = parse_key(o.keys.front());
    if (!key) return report(key.error());
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    const bytes trie_key = t->trie_key(*key, o.key_hashed);
    const Trie trie = Trie::open(t->reader.get(), t->info.root);
    bytes value;
    auto found = trie.get(trie_key, value);
    if (!found) return report(found.error(), o.db);
    if (o.json) {
        nlohmann::ordered_json j = {
            {"key", to_hex(trie_key)}, {"value", nullptr}, {"trie", t->info.name}};
        if (*found) j["value"] = to_hex(value);
        fmt::print("{}\n", j.dump());
    } else if (*found) {
        fmt::print("{}\n", to_hex(value));
    }
    return *found ? kOk : kNegative;
}

}  // namespace

void register_get(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<GetOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("key", o->keys,
                    "Key: 0x hex, or text (hashed first in a secure trie); may repeat");
    sub->add_option("--keys", o->keys_file,
                    "Look up each key of this file too, one a line (- for stdin), after any KEY");
    sub->add_option("--account", o->account,
                    "In a state file: the account at this address (20 bytes hex, 0x optional)");
    sub->add_option("--slot", o->slots,
                    "With --account: the value of this storage slot (hex of at most 32 "
                    "bytes, 0x optional, an odd digit count or none as proof --slot reads "
                    "it); may repeat");
    sub->add_flag("--key-hashed", o->key_hashed,
                  "KEY, ADDR and SLOT are trie keys already: do not hash them");
    sub->add_option("--trie", o->trie, "Trie name in the file")->capture_default_str();
    sub->add_flag("--json", o->json,
                  "Print {\"key\", \"value\", \"trie\"}, value null when absent; with --slot one "
                  "object {slot: value}; with several keys or --keys one array of them");
    sub->footer(
        "In a secure or state trie a KEY is hashed with keccak256 before the lookup, unless\n"
        "--key-hashed. --account prints {\"nonce\",\"balance\",\"storageRoot\",\"codeHash\"}\n"
        "(nonce and balance as quantities, 0x without leading zeros); with --slot, one line per\n"
        "slot: its value, or an empty line when it is absent. Exit 1 when the key, the account\n"
        "or a slot is absent. Several keys (or --keys) print one line per key, in order: its\n"
        "value, or an empty line when absent (--json: one array of {\"key\",\"value\"});\n"
        "exit 1 when any of them is absent.");
    sub->final_callback([o, &runner] { runner = [o] { return run_get(*o); }; });
}

}  // namespace mpt::cli
