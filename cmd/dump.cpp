// mpt dump: the pairs of a trie, or the accounts of a state, in trie order, streamed.
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"
#include "state_print.hpp"

#include <mpt/core/hex.hpp>

#include <fmt/core.h>

#include <cerrno>
#include <cstdint>
#include <optional>

namespace mpt::cli {
namespace {

struct DumpOptions {
    std::string db;
    std::string from;
    std::string trie = "main";
    std::optional<size_t> limit;  // none: all
    bool key_hashed = false;
    bool accounts = false;
    bool storage = false;
    bool code = false;
    bool json = false;
};

// Writes through stdio. False once a write has failed, with errno its cause, so that a walk
// stops there rather than reading the rest of the trie for nothing.
bool put_out(const std::string& s) {
    errno = 0;
    return std::fwrite(s.data(), 1, s.size(), stdout) == s.size() && std::ferror(stdout) == 0;
}

// One JSON object a line per account, written as it is read: memory stays that of a path
// through each trie, whatever the state's size.
int run_dump_accounts(const DumpOptions& o) {
    Hash256 from{};
    if (!o.from.empty()) {
        auto k = account_key(o.from, o.key_hashed);
        if (!k) return report(k.error());
        from = *k;
    }
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    auto view = StateView::open(*t->store, o.trie);
    if (!view) return report(view.error(), o.db);
    NodeStore& store = *t->store;
    const size_t max = o.limit.value_or(SIZE_MAX);
    if (max == 0) return kOk;  // as head -n 0: the file opened, nothing printed
    ProgressLine progress("dump", o.db, /*streamed=*/true);
    progress.count({&store.rows_read()}, "rows read");
    size_t n = 0;
    Status failed;
    std::string line;
    int write_error = 0;  // errno of the failed write that stopped the walk, as run_dump keeps
    const auto out = [&](const std::string& text) {
        if (put_out(text)) return true;
        write_error = errno;
        return false;
    };
    auto s = view->for_each_account(from, [&](const Hash256& hash, const Account& a) {
        auto address = store.get_preimage(hash);
        if (!address) {
            failed = Status(address.error());
            return false;
        }
        line = *address && (*address)->size() == 20 ? "{\"address\":\"" + to_hex(**address)
                                                    : "{\"key\":\"" + to_hex(hash);
        line += "\",";
        append_account_fields(line, a);
        if (o.code && a.code_hash != kEmptyCodeHash) {
            auto code = store.get_code(a.code_hash);
            if (!code) {
                failed = Status(code.error());
                return false;
            }
            if (*code) {
                line += ",\"code\":\"";
                line += to_hex(**code);
                line += '"';
            }
        }
        if (!o.storage) {
            line += "}\n";
            return out(line) && ++n < max;
        }
        line += ",\"storage\":{";
        bool first = true;
        auto slots = view->for_each_slot(hash, a, [&](const Hash256& key, const U256& v) {
            auto slot = store.get_preimage(key);
            if (!slot) {
                failed = Status(slot.error());
                return false;
            }
            if (!first) line += ',';
            first = false;
            line += '"';
            // A slot without its preimage is named by its hash as geth's dump names such an
            // account, "pre(0x<hash>)": never taken for a slot, read back or by eye.
            line += *slot && (*slot)->size() == 32 ? to_hex(**slot) : "pre(" + to_hex(key) + ")";
            line += "\":\"" + quantity_text(v) + '"';
            if (line.size() >= 1 << 16) {
                if (!out(line)) return false;
                line.clear();
            }
            return true;
        });
        if (!slots) {
            failed = Status(slots.error());
            return false;
        }
        if (!failed.ok() || write_error != 0) return false;
        line += "}}\n";
        return out(line) && ++n < max;
    });
    if (!s) return report(s.error(), o.db);
    if (!failed.ok()) return report(failed.error(), o.db);
    if (std::ferror(stdout)) return report_write_error(write_error);
    return kOk;
}

int run_dump(const DumpOptions& o) {
    if (o.storage && !o.accounts) return report_usage("dump: --storage goes with --accounts");
    if (o.code && !o.accounts) return report_usage("dump: --code goes with --accounts");
    if (o.accounts) return run_dump_accounts(o);  // JSON lines, with or without --json
    std::optional<bytes> from_key;
    if (!o.from.empty()) {
        auto k = parse_key(o.from);
        if (!k) return report(k.error());
        from_key = std::move(*k);
    }
    auto t = open_trie(o.db, o.trie);
    if (!t) return report(t.error());
    const bytes from = from_key ? t->trie_key(*from_key, o.key_hashed) : bytes();
    const Trie trie = Trie::open(t->reader.get(), t->info.root);
    const size_t max = o.limit.value_or(SIZE_MAX);
    ProgressLine progress("dump", o.db, /*streamed=*/true);
    progress.count({&t->store->rows_read()}, "rows read");
    size_t n = 0;
    bool first = true;
    std::string line;
    int write_error = 0;  // errno of a failed write; main() reports one it did not see
    if (o.json) put_out("{");
    auto s = max == 0 ? Status{} : trie.for_each(from, [&](bytes_view k, bytes_view v) {
        line.clear();
        if (o.json) {
            if (!first) line += ',';
            line += '"' + to_hex(k) + "\":\"" + to_hex(v) + '"';
        } else {
            line = to_hex(k);
            line += ' ';
            line += to_hex(v);
            line += '\n';
        }
        first = false;
        if (!put_out(line)) {
            write_error = errno;
            return false;
        }
        return ++n < max;
    });
    if (!s) return report(s.error(), o.db);
    if (std::ferror(stdout)) return report_write_error(write_error);
    if (o.json) put_out("}\n");
    return kOk;
}

}  // namespace

void register_dump(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<DumpOptions>();
    sub->add_option("db", o->db, "Trie file")->required();
    sub->add_option("--from", o->from,
                    "Start at this key (0x hex or text; hashed first in a secure or state "
                    "trie unless --key-hashed; with --accounts an address)");
    sub->add_option("--limit", o->limit,
                    "Print at most N pairs (or accounts; 0: none, as head -n 0; default: all)")
        ->check(kCount);
    sub->add_flag("--key-hashed", o->key_hashed, "--from is a trie key already: do not hash it");
    sub->add_flag("--accounts", o->accounts,
                  "In a state file: one JSON object a line per account, decoded");
    sub->add_flag("--storage", o->storage, "With --accounts: each account's slots too");
    sub->add_flag("--code", o->code,
                  "With --accounts: each account's code, where the file holds it");
    sub->add_option("--trie", o->trie, "Trie name in the file")->capture_default_str();
    sub->add_flag("--json", o->json, "Print one JSON object {key: value}");
    sub->footer(
        "Lines are `0x<key> 0x<value>`; keys are trie keys (hashed in a secure trie).\n"
        "--accounts: {\"address\" (or \"key\", the address hash, when the file has no\n"
        "preimage), \"nonce\", \"balance\", \"storageRoot\", \"codeHash\"} a line in trie order;\n"
        "--storage adds \"storage\": {slot (or its hash): value}, --code \"code\". Values are\n"
        "quantities. mpt root --state and build --state read these lines back.\n"
        "Output streams: memory does not grow with the trie.");
    sub->final_callback([o, &runner] { runner = [o] { return run_dump(*o); }; });
}

}  // namespace mpt::cli
