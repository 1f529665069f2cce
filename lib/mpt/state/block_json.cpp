#include <mpt/state/block_json.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/state/json_fields.hpp>

#include <cstring>

namespace mpt {
namespace {

// The RLP list of a payload written apart: a payload may pass the 65535 bytes that
// rlp::begin_list reserves for (a contract's creation code).
void append_list(bytes& out, const bytes& payload) {
    rlp::append_list_header(out, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
}

// Appends the RLP of an object's fields to a payload, each error naming the field from the
// object's place in the document.
class FieldWriter {
public:
    FieldWriter(const JsonValue& obj, const std::string& where)
        : obj_(obj), where_(where), fields_(where.empty() ? where : where + ".") {}

    const JsonFields& fields() const noexcept { return fields_; }

    // A writer of obj, the value of field (a path below this object).
    FieldWriter nested(const JsonValue& obj, const std::string& field) const {
        return FieldWriter(obj, where_.empty() ? field : where_ + "." + field);
    }

    // The first of names that the object has.
    std::optional<JsonValue> find(std::initializer_list<std::string_view> names) const {
        for (const std::string_view n : names) {
            if (auto v = obj_.find(n)) return v;
        }
        return std::nullopt;
    }

    // A quantity of at most max_bytes bytes, under the first of names the object has.
    Status quantity(bytes& out, std::initializer_list<std::string_view> names,
                    size_t max_bytes = 32) const {
        const std::string_view name = present(names);
        MPT_TRY(const U256 q, fields_.quantity(obj_, name, std::string(name), max_bytes));
        rlp::append_string(out, significant_bytes(q));
        return {};
    }

    // Bytes, exactly size of them unless size is 0.
    Status data(bytes& out, std::initializer_list<std::string_view> names, size_t size = 0) const {
        const std::string_view name = present(names);
        MPT_TRY(const JsonValue v, fields_.member(obj_, name, std::string(name)));
        MPT_TRY(const bytes b, data_of(v, std::string(name), size));
        rlp::append_string(out, b);
        return {};
    }

    // The recipient: 20 bytes, or the empty string for a creation (absent, null or "").
    Status to(bytes& out) const {
        const auto v = obj_.find("to");
        if (!v || v->is_null() || (v->is_string() && v->text().empty())) {
            rlp::append_string(out, {});
            return {};
        }
        MPT_TRY(const bytes b, data_of(*v, "to", 20));
        rlp::append_string(out, b);
        return {};
    }

    // [[address, [storageKey, ...]], ...]; absent or null is the empty list.
    Status access_list(bytes& out) const {
        return objects(out, "accessList", true, [](const FieldWriter& e, bytes& entry) -> Status {
            MPT_RETURN_IF_ERROR(e.data(entry, {"address"}, 20));
            return e.hash_list(entry, "storageKeys");
        });
    }

    // The RLP list of the objects of the array member name, each its own list that
    // each(writer of the object, its list's payload) writes. Absent or null is the empty list
    // where optional; an item that is no object is an error naming it.
    template <typename Each>
    Status objects(bytes& out, std::string_view name, bool optional, const Each& each) const {
        const std::string field(name);
        const auto found = obj_.find(name);
        bytes list;
        if (!(optional && (!found || found->is_null()))) {
            MPT_TRY(const JsonValue v, fields_.member(obj_, name, field));
            if (!v.is_array()) return fields_.fail(v, field, Errc::bad_input, "not an array");
            for (size_t i = 0; i < v.size(); ++i) {
                const std::string at = field + "[" + std::to_string(i) + "]";
                if (!v[i].is_object())
                    return fields_.fail(v[i], at, Errc::bad_input, "not an object");
                bytes entry;
                MPT_RETURN_IF_ERROR(each(nested(v[i], at), entry));
                append_list(list, entry);
            }
        }
        append_list(out, list);
        return {};
    }

    // A typed transaction's or an authorization's signature parity, 0 or 1: "yParity", or "v"
    // where that is absent; where both are given they must agree, as go-ethereum requires.
    Status parity(bytes& out) const {
        const std::string_view name = present({"yParity", "v"});
        MPT_TRY(const U256 y, fields_.quantity(obj_, name, std::string(name), 1));
        if (y[31] > 1)
            return fields_.fail(*obj_.find(name), std::string(name), Errc::bad_input,
                                "not 0x0 or 0x1");
        if (name == "yParity") {
            if (const auto v = obj_.find("v"); v && !v->is_null()) {
                MPT_TRY(const U256 vv, fields_.quantity(obj_, "v", "v", 32));
                if (vv != y) return fields_.fail(*v, "v", Errc::bad_input, "differs from yParity");
            }
        }
        rlp::append_string(out, significant_bytes(y));
        return {};
    }

    // The RLP list of the 32-byte values of the array member name.
    Status hash_list(bytes& out, std::string_view name) const {
        const std::string field(name);
        MPT_TRY(const JsonValue v, fields_.member(obj_, name, field));
        if (!v.is_array()) return fields_.fail(v, field, Errc::bad_input, "not an array");
        bytes payload;
        for (size_t i = 0; i < v.size(); ++i) {
            MPT_TRY(const bytes h, data_of(v[i], field + "[" + std::to_string(i) + "]", 32));
            rlp::append_string(payload, h);
        }
        append_list(out, payload);
        return {};
    }

    Result<bytes> data_of(const JsonValue& v, const std::string& field, size_t size) const {
        MPT_TRY(bytes b, fields_.data(v, field));
        if (size != 0 && b.size() != size) {
            return fields_.fail(
                v, field, Errc::bad_hex,
                "expected " + std::to_string(size) + " bytes, got " + std::to_string(b.size()));
        }
        return b;
    }

    // The first of names the object has, or the first name (so that a missing field is named
    // as JSON-RPC spells it).
    std::string_view present(std::initializer_list<std::string_view> names) const {
        for (const std::string_view n : names) {
            if (obj_.find(n)) return n;
        }
        return *names.begin();
    }

private:
    JsonValue obj_;
    std::string where_;
    JsonFields fields_;
};

// The signature's parity of a typed transaction or an authorization.
Status parity(const FieldWriter& w, bytes& out) { return w.parity(out); }

Status authorization_list(const FieldWriter& w, bytes& out) {
    return w.objects(out, "authorizationList", false,
                     [](const FieldWriter& a, bytes& entry) -> Status {
                         MPT_RETURN_IF_ERROR(a.quantity(entry, {"chainId"}));
                         MPT_RETURN_IF_ERROR(a.data(entry, {"address"}, 20));
                         MPT_RETURN_IF_ERROR(a.quantity(entry, {"nonce"}, 8));
                         MPT_RETURN_IF_ERROR(parity(a, entry));
                         MPT_RETURN_IF_ERROR(a.quantity(entry, {"r"}));
                         return a.quantity(entry, {"s"});
                     });
}

// The writer of obj, which must be an object: a "not a <what> object" error otherwise.
Result<FieldWriter> object_writer(const JsonValue& obj, const std::string& where,
                                  const char* what) {
    if (!obj.is_object()) {
        return Error{Errc::bad_input, where + " (" + obj.where() + "): not a " + what + " object"};
    }
    return FieldWriter(obj, where);
}

// The RLP list of a payload, after its type byte when type is not 0 (EIP-2718).
bytes typed_list(uint8_t type, const bytes& payload) {
    bytes out;
    if (type != 0) out.push_back(type);
    append_list(out, payload);
    return out;
}

}  // namespace

Result<bytes> encode_transaction_json(const JsonValue& tx, const std::string& where) {
    MPT_TRY(const FieldWriter w, object_writer(tx, where, "transaction"));
    uint8_t type = 0;
    if (const auto t = tx.find("type"); t && !t->is_null()) {
        MPT_TRY(const U256 q, w.fields().quantity(tx, "type", "type", 1));
        type = q[31];
    }
    bytes p;  // the fields' payload
    // The fields of a legacy transaction before its signature, which EIP-2930's repeats.
    const auto legacy_fields = [&]() -> Status {
        MPT_RETURN_IF_ERROR(w.quantity(p, {"nonce"}, 8));
        MPT_RETURN_IF_ERROR(w.quantity(p, {"gasPrice"}));
        MPT_RETURN_IF_ERROR(w.quantity(p, {"gas", "gasLimit"}, 8));
        MPT_RETURN_IF_ERROR(w.to(p));
        MPT_RETURN_IF_ERROR(w.quantity(p, {"value"}));
        return w.data(p, {"input", "data"});
    };
    switch (type) {
        case 0:
            MPT_RETURN_IF_ERROR(legacy_fields());
            MPT_RETURN_IF_ERROR(w.quantity(p, {"v"}));
            break;
        case 1:
            MPT_RETURN_IF_ERROR(w.quantity(p, {"chainId"}));
            MPT_RETURN_IF_ERROR(legacy_fields());
            MPT_RETURN_IF_ERROR(w.access_list(p));
            MPT_RETURN_IF_ERROR(parity(w, p));
            break;
        case 2:
        case 3:
        case 4:
            MPT_RETURN_IF_ERROR(w.quantity(p, {"chainId"}));
            MPT_RETURN_IF_ERROR(w.quantity(p, {"nonce"}, 8));
            MPT_RETURN_IF_ERROR(w.quantity(p, {"maxPriorityFeePerGas"}));
            MPT_RETURN_IF_ERROR(w.quantity(p, {"maxFeePerGas"}));
            MPT_RETURN_IF_ERROR(w.quantity(p, {"gas", "gasLimit"}, 8));
            if (type == 2) {
                MPT_RETURN_IF_ERROR(w.to(p));
            } else {
                MPT_RETURN_IF_ERROR(
                    w.data(p, {"to"}, 20));  // no creation by a blob or set-code one
            }
            MPT_RETURN_IF_ERROR(w.quantity(p, {"value"}));
            MPT_RETURN_IF_ERROR(w.data(p, {"input", "data"}));
            MPT_RETURN_IF_ERROR(w.access_list(p));
            if (type == 3) {
                MPT_RETURN_IF_ERROR(w.quantity(p, {"maxFeePerBlobGas"}));
                MPT_RETURN_IF_ERROR(w.hash_list(p, "blobVersionedHashes"));
            } else if (type == 4) {
                MPT_RETURN_IF_ERROR(authorization_list(w, p));
            }
            MPT_RETURN_IF_ERROR(parity(w, p));
            break;
        default:
            return w.fields().fail(
                *tx.find("type"), "type", Errc::bad_input,
                "transaction type " + std::to_string(type) +
                    " is none of legacy, EIP-2930, EIP-1559, EIP-4844 and EIP-7702");
    }
    MPT_RETURN_IF_ERROR(w.quantity(p, {"r"}));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"s"}));
    return typed_list(type, p);
}

Result<bytes> encode_header_json(const JsonValue& header, const std::string& where) {
    MPT_TRY(const FieldWriter w, object_writer(header, where, "header"));
    bytes p;
    MPT_RETURN_IF_ERROR(w.data(p, {"parentHash"}, 32));
    MPT_RETURN_IF_ERROR(w.data(p, {"sha3Uncles", "uncleHash"}, 32));
    MPT_RETURN_IF_ERROR(w.data(p, {"miner", "coinbase"}, 20));
    MPT_RETURN_IF_ERROR(w.data(p, {"stateRoot"}, 32));
    MPT_RETURN_IF_ERROR(w.data(p, {"transactionsRoot", "transactionsTrie"}, 32));
    MPT_RETURN_IF_ERROR(w.data(p, {"receiptsRoot", "receiptTrie"}, 32));
    MPT_RETURN_IF_ERROR(w.data(p, {"logsBloom", "bloom"}, 256));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"difficulty"}));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"number"}, 8));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"gasLimit"}, 8));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"gasUsed"}, 8));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"timestamp"}, 8));
    MPT_RETURN_IF_ERROR(w.data(p, {"extraData"}));
    MPT_RETURN_IF_ERROR(w.data(p, {"mixHash"}, 32));
    MPT_RETURN_IF_ERROR(w.data(p, {"nonce"}, 8));
    // The fields forks added, each a quantity (0) or 32 bytes.
    struct Later {
        const char* name;
        size_t hash_size;
    };
    static constexpr Later kLater[] = {
        {"baseFeePerGas", 0}, {"withdrawalsRoot", 32},       {"blobGasUsed", 0},
        {"excessBlobGas", 0}, {"parentBeaconBlockRoot", 32}, {"requestsHash", 32}};
    const char* absent = nullptr;
    for (const Later& f : kLater) {
        const auto v = header.find(f.name);
        if (!v || v->is_null()) {
            if (!absent) absent = f.name;
            continue;
        }
        if (absent) {
            return w.fields().fail(*v, f.name, Errc::bad_input,
                                   std::string("given, but ") + absent + " is not");
        }
        if (f.hash_size != 0) {
            MPT_RETURN_IF_ERROR(w.data(p, {f.name}, f.hash_size));
        } else {
            MPT_RETURN_IF_ERROR(w.quantity(p, {f.name}));
        }
    }
    const bytes out = typed_list(0, p);
    if (const auto hash = header.find("hash"); hash && !hash->is_null()) {
        MPT_TRY(const Hash256 claimed, w.fields().fixed<32>(header, "hash"));
        const Hash256 computed = keccak256(out);
        if (claimed != computed) {
            return w.fields().fail(
                *hash, "hash", Errc::bad_input,
                "the header's fields hash to " + to_hex(computed) + ", not " + to_hex(claimed));
        }
    }
    return out;
}

Result<bytes> encode_withdrawal_json(const JsonValue& wd, const std::string& where) {
    MPT_TRY(const FieldWriter w, object_writer(wd, where, "withdrawal"));
    bytes p;
    MPT_RETURN_IF_ERROR(w.quantity(p, {"index"}, 8));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"validatorIndex"}, 8));
    MPT_RETURN_IF_ERROR(w.data(p, {"address"}, 20));
    MPT_RETURN_IF_ERROR(w.quantity(p, {"amount"}, 8));
    return typed_list(0, p);
}

Result<bytes> encode_receipt_json(const JsonValue& r, const std::string& where) {
    MPT_TRY(const FieldWriter w, object_writer(r, where, "receipt"));
    const JsonFields& f = w.fields();
    uint8_t type = 0;
    if (const auto t = r.find("type"); t && !t->is_null()) {
        MPT_TRY(const U256 q, f.quantity(r, "type", "type", 1));
        type = q[31];
        if (type >= 0x80) {
            return f.fail(*t, "type", Errc::bad_input,
                          "a type of 0x80 or more is no typed receipt");
        }
    }
    bytes p;
    // Before Byzantium (EIP-658) a receipt holds the post-state root, after it the status.
    if (const auto root = r.find("root"); root && root->is_string() && root->text().size() > 2) {
        MPT_RETURN_IF_ERROR(w.data(p, {"root"}, 32));
    } else {
        MPT_TRY(const U256 status, f.quantity(r, "status", "status", 1));
        if (status[31] > 1) {
            return f.fail(*r.find("status"), "status", Errc::bad_input, "not 0x0 or 0x1");
        }
        rlp::append_string(p, significant_bytes(status));
    }
    MPT_RETURN_IF_ERROR(w.quantity(p, {"cumulativeGasUsed"}, 8));
    MPT_RETURN_IF_ERROR(w.data(p, {"logsBloom"}, 256));
    MPT_RETURN_IF_ERROR(
        w.objects(p, "logs", false, [](const FieldWriter& l, bytes& entry) -> Status {
            MPT_RETURN_IF_ERROR(l.data(entry, {"address"}, 20));
            MPT_RETURN_IF_ERROR(l.hash_list(entry, "topics"));
            return l.data(entry, {"data"});
        }));
    return typed_list(type, p);
}

Result<std::vector<bytes>> list_item_encodings(const JsonValue& list, const std::string& where) {
    if (!list.is_array()) {
        return Error{Errc::bad_input, (where.empty() ? "the list" : where) + " (" + list.where() +
                                          "): not an array"};
    }
    std::vector<bytes> out;
    out.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        const JsonValue v = list[i];
        const std::string at =
            where.empty() ? "item " + std::to_string(i + 1) : where + "[" + std::to_string(i) + "]";
        if (v.is_object()) {
            if (v.find("logs")) {
                MPT_TRY(bytes e, encode_receipt_json(v, at));
                out.push_back(std::move(e));
            } else if (v.find("validatorIndex")) {
                MPT_TRY(bytes e, encode_withdrawal_json(v, at));
                out.push_back(std::move(e));
            } else {
                MPT_TRY(bytes e, encode_transaction_json(v, at));
                out.push_back(std::move(e));
            }
            continue;
        }
        if (!v.is_string() || !has_hex_prefix(v.text())) {
            return Error{Errc::bad_input,
                         at + " (" + v.where() + "): not a 0x hex string or an object"};
        }
        auto b = from_hex(v.text());
        if (!b) return Error{b.error().code, at + " (" + v.where() + "): " + b.error().detail};
        out.push_back(std::move(*b));
    }
    return out;
}

Result<JsonBlockRoots> json_block_roots(const JsonValue& block, const std::string& where) {
    if (!block.is_object()) {
        return Error{Errc::bad_input, where + " (" + block.where() + "): not a block object"};
    }
    const std::string prefix = where.empty() ? where : where + ".";
    // BlockchainTests put the header apart, under ethereum/tests' names for the roots.
    const auto header = block.find("blockHeader");
    const JsonValue h = header ? *header : block;
    const JsonFields hf(header ? prefix + "blockHeader." : prefix);
    const char* tx_root = header ? "transactionsTrie" : "transactionsRoot";
    const char* receipts_root = header ? "receiptTrie" : "receiptsRoot";

    JsonBlockRoots out;
    BlockRoots& r = out.roots;
    MPT_TRY(r.header_transactions_root, hf.fixed<32>(h, tx_root));
    if (const auto v = h.find(receipts_root); v && !v->is_null()) {
        MPT_TRY(r.header_receipts_root, hf.fixed<32>(h, receipts_root));
    }

    const JsonFields bf(prefix);
    MPT_TRY(const JsonValue txs, bf.member(block, "transactions", "transactions"));
    if (!txs.is_array()) return bf.fail(txs, "transactions", Errc::bad_input, "not an array");
    std::vector<bytes> items;
    items.reserve(txs.size());
    for (size_t i = 0; i < txs.size(); ++i) {
        const JsonValue tx = txs[i];
        const std::string at = prefix + "transactions[" + std::to_string(i) + "]";
        if (tx.is_string()) {
            return Error{Errc::bad_input,
                         at + " (" + tx.where() +
                             "): the block lists its transactions by hash only; ask for full "
                             "transactions (eth_getBlockByNumber's second parameter true)"};
        }
        MPT_TRY(bytes e, encode_transaction_json(tx, at));
        if (const auto hash = tx.find("hash"); hash && !out.suspect) {
            MPT_TRY(const Hash256 claimed, JsonFields(at + ".").fixed<32>(tx, "hash"));
            const Hash256 computed = keccak256(e);
            if (claimed != computed) out.suspect = TransactionHashMismatch{i, claimed, computed};
        }
        items.push_back(std::move(e));
    }
    std::vector<bytes_view> views(items.begin(), items.end());
    MPT_TRY(r.transactions_root, ordered_trie_root(views));
    r.transactions = items.size();

    const auto ws = block.find("withdrawals");
    const bool has_ws = ws && !ws->is_null();
    const auto ws_root = h.find("withdrawalsRoot");
    const bool has_ws_root = ws_root && !ws_root->is_null();
    if (has_ws_root) {
        MPT_TRY(r.header_withdrawals_root, hf.fixed<32>(h, "withdrawalsRoot"));
    }
    if (has_ws) {
        if (!ws->is_array()) return bf.fail(*ws, "withdrawals", Errc::bad_input, "not an array");
        items.clear();
        for (size_t i = 0; i < ws->size(); ++i) {
            MPT_TRY(bytes e, encode_withdrawal_json(
                                 (*ws)[i], prefix + "withdrawals[" + std::to_string(i) + "]"));
            items.push_back(std::move(e));
        }
        views.assign(items.begin(), items.end());
        MPT_TRY(r.withdrawals_root, ordered_trie_root(views));
        r.withdrawals = items.size();
    }
    return out;
}

}  // namespace mpt
