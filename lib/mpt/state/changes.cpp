#include <mpt/state/changes.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_tree.hpp>
#include <mpt/state/getproof.hpp>
#include <mpt/state/json_fields.hpp>

#include <algorithm>
#include <map>
#include <string>

namespace mpt {
namespace {

using SlotMap = std::map<U256, U256>;

// An account object of any shape, read: the fields it gives.
struct AccountFields {
    std::optional<uint64_t> nonce;
    std::optional<U256> balance;
    std::optional<bytes> code;
    std::optional<Hash256> code_hash;  // given by its hash alone
    SlotMap storage;
};

// The fields of one document, each error naming its path from the top.
class ChangesReader {
public:
    Result<Address> address(const JsonValue& where, std::string_view name,
                            const std::string& field) const {
        auto b = from_hex(name);
        if (!b || !has_hex_prefix(name)) {
            return f_.fail(
                where, field, Errc::bad_hex,
                "not a 0x hex address: " + quoted(name) + (b ? "" : " (" + b.error().detail + ")"));
        }
        if (b->size() != 20) {
            return f_.fail(where, field, Errc::bad_hex,
                           "an address is 20 bytes, not " + std::to_string(b->size()));
        }
        Address a;
        std::copy(b->begin(), b->end(), a.begin());
        return a;
    }

    // A nonce as geth's math.HexOrDecimal64 and the tracer's uint64 take it: "0x.." hex or
    // decimal digits, in a string or a JSON number.
    Result<uint64_t> nonce(const JsonValue& v, const std::string& field) const {
        if (!v.is_string() && v.kind() != JsonKind::number) {
            return f_.fail(v, field, Errc::bad_input, "not a quantity (a string or a number)");
        }
        const std::string_view t = v.text();
        if (has_hex_prefix(t)) {
            auto q = parse_quantity(t, 8);
            if (!q) return f_.fail(v, field, q.error().code, q.error().detail);
            uint64_t n = 0;
            for (size_t i = 24; i < 32; ++i) n = n << 8 | (*q)[i];
            return n;
        }
        if (t.empty() || t.size() > 20 ||
            !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            return f_.fail(v, field, Errc::bad_input, "not a quantity: " + quoted(t));
        }
        unsigned __int128 n = 0;
        for (char c : t) n = n * 10 + static_cast<unsigned>(c - '0');
        if (n > UINT64_MAX) return f_.fail(v, field, Errc::bad_input, "more than 2^64 - 1");
        return static_cast<uint64_t>(n);
    }

    Result<U256> balance(const JsonValue& v, const std::string& field) const {
        if (!v.is_string()) return f_.fail(v, field, Errc::bad_input, "not a hex quantity string");
        auto q = parse_quantity(v.text(), 32);
        if (!q) return f_.fail(v, field, q.error().code, q.error().detail);
        return q;
    }

    // A storage key or value: 0x hex of at most 32 bytes (64 digits, any parity), left-padded.
    Result<U256> word(const JsonValue& where, std::string_view text,
                      const std::string& field) const {
        if (!has_hex_prefix(text)) {
            return f_.fail(where, field, Errc::bad_hex, "missing 0x prefix: " + quoted(text));
        }
        const std::string_view digits = text.substr(2);
        if (digits.size() > 64) {
            return f_.fail(where, field, Errc::bad_hex,
                           "more than 32 bytes: " + std::to_string(digits.size()) + " hex digits");
        }
        std::string padded(64 - digits.size(), '0');
        padded += digits;
        U256 out{};
        if (!decode_hex_pairs(padded, out.data())) {
            return f_.fail(where, field, Errc::bad_hex, "not hex: " + quoted(text));
        }
        return out;
    }

    Result<AccountFields> account(const JsonValue& obj, const std::string& field) const {
        if (!obj.is_object()) return f_.fail(obj, field, Errc::bad_input, "not an account object");
        AccountFields a;
        if (auto v = obj.find("nonce"); v && !v->is_null()) {
            MPT_TRY(a.nonce, nonce(*v, field + ".nonce"));
        }
        if (auto v = obj.find("balance"); v && !v->is_null()) {
            MPT_TRY(a.balance, balance(*v, field + ".balance"));
        }
        if (auto v = obj.find("code"); v && !v->is_null()) {
            MPT_TRY(a.code, f_.data(*v, field + ".code"));
        }
        if (auto v = obj.find("codeHash"); v && !v->is_null()) {
            MPT_TRY(const bytes h, f_.data(*v, field + ".codeHash"));
            if (h.size() != 32) {
                return f_.fail(*v, field + ".codeHash", Errc::bad_hex,
                               "a code hash is 32 bytes, not " + std::to_string(h.size()));
            }
            Hash256 hash;
            std::copy(h.begin(), h.end(), hash.begin());
            const Hash256 of_code = !a.code           ? hash
                                    : a.code->empty() ? kEmptyCodeHash
                                                      : keccak256(*a.code);
            if (of_code != hash) {
                return f_.fail(*v, field + ".codeHash", Errc::bad_input,
                               "not keccak256 of the code (" + to_hex(of_code) + ")");
            }
            if (!a.code) a.code_hash = hash;
        }
        if (auto v = obj.find("storage"); v && !v->is_null()) {
            if (!v->is_object()) {
                return f_.fail(*v, field + ".storage", Errc::bad_input, "not an object");
            }
            for (size_t i = 0; i < v->size(); ++i) {
                const std::string slot_field = field + ".storage." + std::string(v->name(i));
                const JsonValue value = (*v)[i];
                MPT_TRY(const U256 slot, word(value, v->name(i), slot_field));
                if (!value.is_string()) {
                    return f_.fail(value, slot_field, Errc::bad_input, "not a hex string");
                }
                MPT_TRY(const U256 w, word(value, value.text(), slot_field));
                a.storage[slot] = w;
            }
        }
        return a;
    }

private:
    JsonFields f_{""};
};

// The updates as they build up, by address, over the diffs of a document.
class Merger {
public:
    explicit Merger(const ChangesReader& r) : r_(r) {}

    // A changes object: {address: account or null}.
    Status changes(const JsonValue& top, const std::string& prefix) {
        for (size_t i = 0; i < top.size(); ++i) {
            const std::string field = prefix + std::string(top.name(i));
            MPT_TRY(const Address a, r_.address(top[i], top.name(i), field));
            Entry& e = entry(a);
            if (top[i].is_null()) {
                remove(e);
                continue;
            }
            MPT_TRY(AccountFields f, r_.account(top[i], field));
            e.update.deleted = false;
            set_fields(e, f);
            for (const auto& [slot, value] : f.storage) e.storage[slot] = value;
        }
        return {};
    }

    // One prestateTracer diff, {"pre", "post"}, after those before it.
    Status diff(const JsonValue& d, const std::string& field) {
        const auto part = [&](std::string_view name) -> Result<std::optional<JsonValue>> {
            auto v = d.find(name);
            if (!v || v->is_null()) return std::optional<JsonValue>{};
            if (!v->is_object()) {
                return Error{Errc::bad_input, "field \"" + field + std::string(name) + "\" (" +
                                                  v->where() + "): not an object of accounts"};
            }
            return v;
        };
        MPT_TRY(const std::optional<JsonValue> pre, part("pre"));
        MPT_TRY(const std::optional<JsonValue> post, part("post"));
        std::map<Address, AccountFields> before;
        if (pre) {
            for (size_t i = 0; i < pre->size(); ++i) {
                const std::string name = field + "pre." + std::string(pre->name(i));
                MPT_TRY(const Address a, r_.address((*pre)[i], pre->name(i), name));
                MPT_TRY(AccountFields f, r_.account((*pre)[i], name));
                Entry& e = entry(a);
                if (!e.update.before) {
                    // The account before its first transaction of the document.
                    AccountBefore b{false, f.nonce, f.balance, f.code, {}};
                    b.storage.assign(f.storage.begin(), f.storage.end());
                    e.update.before = std::move(b);
                }
                before.emplace(a, std::move(f));
            }
        }
        std::map<Address, bool> in_post;
        if (post) {
            for (size_t i = 0; i < post->size(); ++i) {
                const std::string name = field + "post." + std::string(post->name(i));
                MPT_TRY(const Address a, r_.address((*post)[i], post->name(i), name));
                MPT_TRY(AccountFields f, r_.account((*post)[i], name));
                in_post[a] = true;
                Entry& e = entry(a);
                // Made by this diff's transaction: geth leaves a new account out of pre.
                if (!e.update.before && !before.contains(a)) {
                    e.update.before = AccountBefore{};
                    e.update.before->absent = true;
                }
                e.update.deleted = false;
                set_fields(e, f);
                // Slots pre gave and post does not were cleared: the tracer writes no zero.
                if (const auto b = before.find(a); b != before.end()) {
                    for (const auto& [slot, value] : b->second.storage) {
                        if (!f.storage.contains(slot)) e.storage[slot] = U256{};
                    }
                }
                for (const auto& [slot, value] : f.storage) e.storage[slot] = value;
            }
        }
        // In pre and not in post: deleted.
        for (const auto& [a, f] : before) {
            if (!in_post.contains(a)) remove(entry(a));
        }
        return {};
    }

    std::vector<AccountUpdate> finish() {
        std::vector<AccountUpdate> out;
        out.reserve(accounts_.size());
        for (auto& [a, e] : accounts_) {
            e.update.storage.assign(e.storage.begin(), e.storage.end());
            out.push_back(std::move(e.update));
        }
        return out;
    }

private:
    struct Entry {
        AccountUpdate update;
        SlotMap storage;
    };

    Entry& entry(const Address& a) {
        auto [it, made] = accounts_.try_emplace(a);
        if (made) it->second.update.address = a;
        return it->second;
    }

    static void set_fields(Entry& e, const AccountFields& f) {
        if (f.nonce) e.update.nonce = f.nonce;
        if (f.balance) e.update.balance = f.balance;
        if (f.code) {
            e.update.code = f.code;
            e.update.code_hash.reset();
        } else if (f.code_hash) {
            e.update.code = std::nullopt;
            e.update.code_hash = f.code_hash;
        }
    }

    // Deleted: nothing of it is left, and an account made again later starts empty.
    static void remove(Entry& e) {
        e.update.deleted = true;
        e.update.clear_storage = true;
        e.update.nonce = 0;
        e.update.balance = U256{};
        e.update.code = bytes{};
        e.update.code_hash.reset();
        e.storage.clear();
    }

    const ChangesReader& r_;
    std::map<Address, Entry> accounts_;
};

}  // namespace

std::string_view changes_shape_name(ChangesShape s) noexcept {
    switch (s) {
        case ChangesShape::changes:
            return "changes";
        case ChangesShape::prestate_diff:
            return "prestate-diff";
        case ChangesShape::prestate_list:
            return "prestate-list";
    }
    return "unknown";
}

Result<ChangesDoc> parse_changes_document(std::string_view text) {
    MPT_TRY(const JsonTree tree, JsonTree::parse(text));
    JsonValue top = tree.root();
    std::string prefix;
    MPT_TRY(const std::optional<JsonValue> result, json_rpc_result(top));
    if (result) {
        top = *result;
        prefix = "result.";
    }
    const ChangesReader reader;
    Merger m(reader);
    ChangesDoc doc;
    if (top.is_array()) {
        doc.shape = ChangesShape::prestate_list;
        for (size_t i = 0; i < top.size(); ++i) {
            const std::string at = prefix + "[" + std::to_string(i) + "].";
            JsonValue item = top[i];
            // debug_traceBlockByNumber: {"txHash", "result": diff}; a bare diff too.
            if (auto r = item.is_object() ? item.find("result") : std::nullopt; r) {
                MPT_RETURN_IF_ERROR(m.diff(*r, at + "result."));
            } else if (item.is_object() && (item.find("pre") || item.find("post"))) {
                MPT_RETURN_IF_ERROR(m.diff(item, at));
            } else {
                return Error{Errc::bad_input, "item " + std::to_string(i) + " (" + item.where() +
                                                  "): not a prestateTracer diff ({\"pre\", "
                                                  "\"post\"}) or a trace with its \"result\""};
            }
        }
    } else if (!top.is_object()) {
        return Error{Errc::bad_input,
                     "a changes document is a JSON object or array (" + top.where() + ")"};
    } else if (top.find("pre") || top.find("post")) {
        doc.shape = ChangesShape::prestate_diff;
        MPT_RETURN_IF_ERROR(m.diff(top, prefix));
    } else {
        doc.shape = ChangesShape::changes;
        MPT_RETURN_IF_ERROR(m.changes(top, prefix));
    }
    doc.accounts = m.finish();
    return doc;
}

Account account_after(const AccountUpdate& u, Account now) {
    if (u.nonce) now.nonce = *u.nonce;
    if (u.balance) now.balance = *u.balance;
    if (u.code_hash) now.code_hash = *u.code_hash;
    if (u.code) now.code_hash = u.code->empty() ? kEmptyCodeHash : keccak256(*u.code);
    if (u.clear_storage) now.storage_root = kEmptyRoot;
    return now;
}

}  // namespace mpt
