#include <mpt/state/getproof.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/proof/proof.hpp>
#include <mpt/state/json_fields.hpp>

#include <algorithm>
#include <cstring>
#include <span>

namespace mpt {
namespace {

// Hex digits (no prefix) of any count, right-aligned into a 32-byte word; the caller has
// checked that the significant digits fit. Errc::bad_hex at the first non-hex byte.
Result<U256> digits_to_word(std::string_view digits) {
    U256 w{};
    size_t nibble = 0;  // nibbles placed, from the right
    for (size_t i = digits.size(); i-- > 0;) {
        const uint8_t d = kHexDigitValue[static_cast<uint8_t>(digits[i])];
        if (d == 0xff) return Error{Errc::bad_hex, "not a hex digit"};
        if (d != 0) {
            if (nibble >= 64) return Error{Errc::bad_hex, "longer than 32 bytes"};
            const size_t byte = 31 - nibble / 2;
            w[byte] |= static_cast<uint8_t>(nibble % 2 == 0 ? d : d << 4);
        }
        ++nibble;
    }
    return w;
}

Result<GetProofDoc> read_result(const JsonValue& r, JsonFields& rd) {
    GetProofDoc doc;
    MPT_TRY(doc.address, rd.fixed<20>(r, "address"));
    MPT_TRY(const U256 nonce, rd.quantity(r, "nonce", "nonce", 8));
    for (size_t i = 24; i < 32; ++i) doc.account.nonce = (doc.account.nonce << 8) | nonce[i];
    MPT_TRY(doc.account.balance, rd.quantity(r, "balance", "balance", 32));
    MPT_TRY(doc.account.storage_root, rd.fixed<32>(r, "storageHash"));
    MPT_TRY(doc.account.code_hash, rd.fixed<32>(r, "codeHash"));
    MPT_TRY(doc.account_proof, rd.nodes(r, "accountProof", "accountProof"));
    MPT_TRY(const JsonValue slots, rd.member(r, "storageProof", "storageProof"));
    if (!slots.is_array()) return rd.fail(slots, "storageProof", Errc::bad_input, "not an array");
    doc.storage.reserve(slots.size());
    for (size_t i = 0; i < slots.size(); ++i) {
        const std::string at = "storageProof[" + std::to_string(i) + "]";
        const JsonValue s = slots[i];
        if (!s.is_object()) return rd.fail(s, at, Errc::bad_input, "not an object");
        StorageProofClaim c;
        MPT_TRY(const std::string_view key, rd.string(s, "key", at + ".key"));
        auto slot = parse_storage_key(key);
        if (!slot)
            return rd.fail(*s.find("key"), at + ".key", slot.error().code, slot.error().detail);
        c.key = std::string(key);
        c.slot = *slot;
        MPT_TRY(c.value, rd.quantity(s, "value", at + ".value", 32));
        MPT_TRY(c.proof, rd.nodes(s, "proof", at + ".proof"));
        doc.storage.push_back(std::move(c));
    }
    return doc;
}

// The fields an absent account's answer may hold (see the header).
bool absent_shape(const Account& a) noexcept {
    return a.nonce == 0 && is_zero(a.balance) &&
           (a.code_hash == kEmptyCodeHash || is_zero(a.code_hash)) &&
           (a.storage_root == kEmptyRoot || is_zero(a.storage_root));
}

std::string nonce_text(uint64_t n) {
    U256 w{};
    for (int i = 0; i < 8; ++i) w[31 - i] = static_cast<uint8_t>(n >> (8 * i));
    return quantity_text(w);
}

// Why the proven account value differs from the claimed account.
std::string account_difference(bytes_view proven, const Account& claimed) {
    auto a = decode_account(proven);
    if (!a) return "the proven account value does not decode: " + a.error().message();
    std::string out;
    const auto add = [&](const std::string& field, const std::string& p, const std::string& c) {
        out += out.empty() ? "the proven account differs in " : ", ";
        out += field + " (proven " + p + ", claimed " + c + ")";
    };
    if (a->nonce != claimed.nonce) add("nonce", nonce_text(a->nonce), nonce_text(claimed.nonce));
    if (a->balance != claimed.balance) {
        add("balance", quantity_text(a->balance), quantity_text(claimed.balance));
    }
    if (a->storage_root != claimed.storage_root) {
        add("storageHash", to_hex(a->storage_root), to_hex(claimed.storage_root));
    }
    if (a->code_hash != claimed.code_hash) {
        add("codeHash", to_hex(a->code_hash), to_hex(claimed.code_hash));
    }
    // Every field equal yet other bytes: a value encoded another way than RLP's one form.
    return out.empty() ? "the proven account value is not the canonical encoding" : out;
}

Error in_part(Error e, const std::string& part) {
    e.detail = part + ": " + (e.detail.empty() ? std::string(errc_name(e.code)) : e.detail);
    return e;
}

}  // namespace

bool looks_like_get_proof(const JsonValue& v) noexcept {
    return v.is_object() && (v.find("accountProof") || v.find("result") || v.find("error"));
}

Result<GetProofDoc> read_get_proof(const JsonValue& v) {
    if (!v.is_object()) return Error{Errc::bad_input, "the document is not a JSON object"};
    if (v.find("accountProof")) {
        JsonFields rd("");
        return read_result(v, rd);
    }
    MPT_TRY(const std::optional<JsonValue> r, json_rpc_result(v));
    if (!r) return Error{Errc::bad_input, "neither an eth_getProof result nor a JSON-RPC response"};
    if (!r->is_object()) {
        return Error{Errc::bad_input,
                     "field \"result\" (" + r->where() + "): not an object (" +
                         (r->is_null() ? "null: the node had no answer" : "another value") + ")"};
    }
    JsonFields rd("result.");
    return read_result(*r, rd);
}

Hash256 self_root(const GetProofDoc& doc) noexcept {
    if (doc.account_proof.empty()) return kEmptyRoot;
    return keccak256(doc.account_proof.front());
}

Result<GetProofVerdict> verify_get_proof(const GetProofDoc& doc, const Hash256& root) {
    GetProofVerdict verdict;
    // A proof none of whose nodes is the trusted root's is most likely of another state (another
    // block): say so, rather than that the root node is missing. The empty trie needs no node.
    if (!doc.account_proof.empty() && root != kEmptyRoot &&
        std::none_of(doc.account_proof.begin(), doc.account_proof.end(),
                     [&](const bytes& node) { return keccak256(node) == root; })) {
        return Error{Errc::invalid_proof, "account proof: the first node hashes to " +
                                              to_hex(keccak256(doc.account_proof.front())) +
                                              ", not to the trusted root " + to_hex(root) +
                                              " (another block?)"};
    }
    const Hash256 account_key = keccak256(doc.address);
    auto proven = verify_proof(root, account_key, doc.account_proof);
    if (!proven) return in_part(std::move(proven).error(), "account proof");
    if (*proven) {
        bytes claimed;
        encode_account(claimed, doc.account);
        if (!bytes_equal(**proven, claimed)) {
            return Error{Errc::invalid_proof,
                         "account proof: " + account_difference(**proven, doc.account)};
        }
        verdict.account_exists = true;
    } else if (!absent_shape(doc.account)) {
        return Error{Errc::invalid_proof,
                     "account proof: proves the account absent, yet the document gives it nonce " +
                         nonce_text(doc.account.nonce) + ", balance " +
                         quantity_text(doc.account.balance) + ", storageHash " +
                         to_hex(doc.account.storage_root) + ", codeHash " +
                         to_hex(doc.account.code_hash)};
    }
    bytes claim_rlp;
    for (size_t i = 0; i < doc.storage.size(); ++i) {
        const StorageProofClaim& s = doc.storage[i];
        const std::string part = "storage proof " + std::to_string(i + 1) + " (key " + s.key + ")";
        const bool zero = significant_bytes(s.value).empty();
        if (!verdict.account_exists) {
            // An absent account has no storage: nothing to prove, but nothing may be claimed.
            if (!zero) {
                return Error{Errc::invalid_proof, part + ": the account is absent, yet the value " +
                                                      quantity_text(s.value) + " is claimed"};
            }
            continue;
        }
        std::optional<bytes> claim;
        if (!zero) {
            claim_rlp.clear();
            encode_storage_value(claim_rlp, s.value);
            claim = claim_rlp;
        }
        const Hash256 slot_key = keccak256(s.slot);
        const Status st = check_proof_claim(doc.account.storage_root, slot_key, claim, s.proof);
        if (!st.ok()) return in_part(st.error(), part);
    }
    return verdict;
}

Result<U256> parse_quantity(std::string_view text, size_t max_bytes) {
    MPT_ASSERT(max_bytes >= 1 && max_bytes <= 32);
    if (!has_hex_prefix(text)) return Error{Errc::bad_hex, "not a 0x quantity: " + quoted(text)};
    const std::string_view digits = text.substr(2);
    if (digits.empty()) return Error{Errc::bad_hex, "a quantity needs a digit: \"0x\""};
    auto w = digits_to_word(digits);
    if (!w) return Error{Errc::bad_hex, w.error().detail + ": " + quoted(text)};
    if (significant_bytes(*w).size() > max_bytes) {
        return Error{Errc::bad_hex,
                     "larger than " + std::to_string(max_bytes * 8) + " bits: " + quoted(text)};
    }
    return w;
}

Result<U256> parse_storage_key(std::string_view text) {
    const std::string_view digits = has_hex_prefix(text) ? text.substr(2) : text;
    if (digits.empty()) return Error{Errc::bad_hex, "an empty storage key"};
    // go-ethereum's rule: at most 32 bytes of input, leading zeros counted.
    if (digits.size() > 64) {
        return Error{Errc::bad_hex, "a storage key longer than 32 bytes: " + quoted(text)};
    }
    auto w = digits_to_word(digits);
    if (!w) return Error{Errc::bad_hex, w.error().detail + ": " + quoted(text)};
    return w;
}

Result<StorageKeyArg> parse_get_proof_key(std::string_view text) {
    const std::string_view digits = has_hex_prefix(text) ? text.substr(2) : text;
    // Bytes given, an odd digit count rounded up: the length that decides the echo.
    const size_t given = (digits.size() + 1) / 2;
    // Named as the address of get and proof --account is: "slot TEXT: why".
    const std::string slot = "slot " + std::string(text) + ": ";
    if (given > 32) return Error{Errc::bad_hex, slot + "a storage key longer than 32 bytes"};
    auto w = digits_to_word(digits);
    if (!w) return Error{Errc::bad_hex, slot + w.error().detail};
    StorageKeyArg k;
    k.slot = *w;
    k.echo = given == 32 ? to_hex(k.slot) : quantity_text(k.slot);
    return k;
}

namespace {

void append_data(std::string& out, bytes_view b) {
    out += "\"0x";
    append_hex_digits(out, b);
    out += '"';
}

void append_nodes(std::string& out, std::span<const bytes> nodes) {
    out += '[';
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (i > 0) out += ',';
        append_data(out, nodes[i]);
    }
    out += ']';
}

}  // namespace

void append_get_proof_json(std::string& out, const GetProofDoc& doc) {
    out += "{\"address\":";
    append_data(out, doc.address);
    out += ",\"accountProof\":";
    append_nodes(out, doc.account_proof);
    out += ",\"balance\":\"" + quantity_text(doc.account.balance) + "\",\"codeHash\":";
    append_data(out, doc.account.code_hash);
    out += ",\"nonce\":\"" + nonce_text(doc.account.nonce) + "\",\"storageHash\":";
    append_data(out, doc.account.storage_root);
    out += ",\"storageProof\":[";
    for (size_t i = 0; i < doc.storage.size(); ++i) {
        const StorageProofClaim& s = doc.storage[i];
        out += i > 0 ? ",{\"key\":\"" : "{\"key\":\"";
        out += s.key;
        out += "\",\"value\":\"" + quantity_text(s.value) + "\",\"proof\":";
        append_nodes(out, s.proof);
        out += '}';
    }
    out += "]}";
}

}  // namespace mpt
