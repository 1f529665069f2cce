// The field-value parsers of a state document (quantities, storage words, hex bytes) and
// the reader of one account object and its storage, for every shape (document.hpp).

#include <mpt/state/document_parse.hpp>

#include <mpt/core/hex.hpp>

#include <algorithm>
#include <cstring>

namespace mpt::document_detail {
namespace {

// A quantity by geth's math.ParseBig256 / ParseUint64: "" is zero; "0x"/"0X" then hex digits
// (at least one; leading zeros allowed; with a base given, big.Int.SetString and
// strconv.ParseUint take no underscores and no second prefix), else decimal digits; at most
// 256 or 64 bits. A sign is refused: ParseUint64 takes none, and though big.Int.SetString
// takes one, a negative balance cannot enter a state (geth's uint256.MustFromBig panics on
// it). max_bytes: 32 or 8; the value fills out[0, max_bytes) big-endian. Returns what is
// wrong, or nullptr.
const char* parse_quantity(std::string_view s, size_t max_bytes, uint8_t* out) {
    std::memset(out, 0, max_bytes);
    if (s.empty()) return nullptr;
    if (s[0] == '-' || s[0] == '+') return "a quantity takes no sign";
    if (has_0x(s)) {
        s.remove_prefix(2);
        if (s.empty()) return "no hex digits after 0x";
        for (char c : s) {
            if (kHexDigitValue[static_cast<uint8_t>(c)] > 0x0f) return "not a hex digit";
        }
        while (!s.empty() && s[0] == '0') s.remove_prefix(1);
        if (s.size() > max_bytes * 2) {
            return max_bytes == 32 ? "more than 256 bits" : "more than 64 bits";
        }
        // Right-aligned: digit j from the end goes to nibble j from the end.
        for (size_t j = 0; j < s.size(); ++j) {
            const uint8_t d = kHexDigitValue[static_cast<uint8_t>(s[s.size() - 1 - j])];
            out[max_bytes - 1 - j / 2] |= static_cast<uint8_t>(j % 2 == 0 ? d : d << 4);
        }
        return nullptr;
    }
    for (char c : s) {
        if (c < '0' || c > '9') return "not a decimal or 0x-prefixed hex integer";
    }
    // Up to 19 digits at a time: limbs = limbs * 10^k + chunk, over four 64-bit limbs (least
    // significant first); a carry out of the top limb, or bits beyond max_bytes, overflow.
    uint64_t limbs[4] = {0, 0, 0, 0};
    while (!s.empty()) {
        const size_t k = std::min<size_t>(s.size(), 19);
        uint64_t chunk = 0, scale = 1;
        for (size_t i = 0; i < k; ++i) {
            chunk = chunk * 10 + static_cast<uint64_t>(s[i] - '0');
            scale *= 10;
        }
        s.remove_prefix(k);
        unsigned __int128 carry = chunk;
        for (uint64_t& limb : limbs) {
            const unsigned __int128 v = static_cast<unsigned __int128>(limb) * scale + carry;
            limb = static_cast<uint64_t>(v);
            carry = v >> 64;
        }
        if (carry != 0 || (max_bytes == 8 && (limbs[1] | limbs[2] | limbs[3]) != 0)) {
            return max_bytes == 32 ? "more than 256 bits" : "more than 64 bits";
        }
    }
    for (size_t i = 0; i < max_bytes; ++i) {
        out[max_bytes - 1 - i] = static_cast<uint8_t>(limbs[i / 8] >> (8 * (i % 8)));
    }
    return nullptr;
}

// A storage key or value by geth's storageJSON rule (core/types/account.go): a lowercase
// "0x" prefix is dropped if present (bytes.TrimPrefix), then at most 64 hex digits of even
// length (encoding/hex refuses odd lengths), left-padded to 32 bytes; empty is zero.
const char* parse_storage_word(std::string_view s, U256& out) {
    if (s.starts_with("0x")) s.remove_prefix(2);
    if (s.size() > 64) return "more than 64 hex digits";
    if (s.size() % 2 != 0) return "odd number of hex digits";
    out.fill(0);
    if (!decode_hex_pairs(s, out.data() + 32 - s.size() / 2)) return "not a hex digit";
    return nullptr;
}

// A storage value of mpt dump --accounts: a quantity ("0x" and hex digits of any parity, as
// JSON-RPC writes one), else the storageJSON rule above.
const char* parse_dump_storage_value(std::string_view s, U256& out) {
    if (!s.starts_with("0x") || s.size() % 2 == 0) return parse_storage_word(s, out);
    char padded[2 + 64];
    if (s.size() - 2 >= 64) return "more than 64 hex digits";
    padded[0] = '0';
    std::copy(s.begin() + 2, s.end(), padded + 1);
    return parse_storage_word(std::string_view(padded, s.size() - 1), out);
}

// Bytes by hexutil.Bytes: the 0x prefix required, even length; "0x" is empty, and so is ""
// (hexutil's checkText allows the empty string).
const char* parse_hex_bytes(std::string_view s, bytes& out) {
    if (s.empty()) {
        out.clear();
        return nullptr;
    }
    if (!has_0x(s)) return "hex without the 0x prefix";
    s.remove_prefix(2);
    if (s.size() % 2 != 0) return "odd number of hex digits";
    out.resize(s.size() / 2);
    if (!decode_hex_pairs(s, out.data())) return "not a hex digit";
    return nullptr;
}

// A 32-byte hex field of a dump (hexutil.Bytes: 0x required).
const char* parse_fixed_hash(std::string_view s, Hash256& out) {
    if (!has_0x(s)) return "hex without the 0x prefix";
    return parse_hash(s, out);
}

}  // namespace

// One account object. addr: the address the account is named by (nullptr: none; a dump's
// account may give it in "address", or only its hash in "key").
Status StateParser::parse_account(Collected& c, Rules rules, std::string_view label, const char* at,
                                  const Address* addr) {
    skip_ws();
    if (peek() != '{') {
        return Error{Errc::bad_input,
                     where(p_) + ": account " + std::string(label) + ": not an object"};
    }
    StateAccount& a = c.accounts.emplace_back();
    Pending& pd = c.pending.emplace_back();
    pd.label = label;
    a.line = line_of(at);
    if (addr) a.address = *addr;
    bool balance = false;
    if (!open_is_empty('}')) {
        while (true) {
            skip_ws();
            if (peek() != '"') return fail("expected a string key");
            MPT_TRY(const std::string_view field_view, string_view_value());
            // Go's encoding/json matches field names without regard to case; the name is
            // kept, lowered, past the next string.
            char field_buf[16];
            std::string_view field = lowered(field_view, field_buf);
            if (field == "codehash") field = "codeHash";  // as errors name it
            MPT_RETURN_IF_ERROR(colon());
            const char* value_at = p_;
            if ((field == "balance" || field == "nonce") && peek() == 'n') {
                // A null quantity leaves the field unset (gencodec decodes into pointers):
                // a nonce of zero, a balance still missing.
                MPT_RETURN_IF_ERROR(skip_value(2));
                if (field == "balance") balance = false;
                if (field == "nonce") a.account.nonce = 0;
            } else if (field == "balance") {
                MPT_TRY(const std::string_view q, quantity_text(label, field));
                if (const char* why = parse_quantity(q, 32, a.account.balance.data())) {
                    return field_error(value_at, label, field, why);
                }
                balance = true;
            } else if (field == "nonce") {
                MPT_TRY(const std::string_view q, quantity_text(label, field));
                uint8_t n[8];
                if (const char* why = parse_quantity(q, 8, n)) {
                    return field_error(value_at, label, field, why);
                }
                a.account.nonce = 0;
                for (uint8_t b : n) a.account.nonce = a.account.nonce << 8 | b;
            } else if (field == "code") {
                if (peek() == 'n') {
                    MPT_RETURN_IF_ERROR(skip_value(2));
                    a.code.clear();
                } else {
                    MPT_TRY(const std::string_view s, string_field(label, field));
                    if (const char* why = parse_hex_bytes(s, a.code)) {
                        return field_error(value_at, label, field, why);
                    }
                }
            } else if (field == "storage") {
                a.storage.clear();
                MPT_RETURN_IF_ERROR(parse_storage(a, label, rules == Rules::dump));
            } else {
                bool known = false;
                if (rules == Rules::dump) {
                    MPT_TRY(known, parse_dump_field(field, label, value_at, a, pd, addr));
                }
                // Decoders of both clients ignore fields they do not know (secretKey too).
                if (!known) MPT_RETURN_IF_ERROR(skip_value(2));
            }
            MPT_TRY(const bool more, next_item('}'));
            if (!more) break;
        }
    }
    if (!balance) {
        return Error{Errc::bad_input, where(at) + ": account " + std::string(label) +
                                          ": field \"balance\": missing (geth requires it)"};
    }
    return {};
}

Result<bool> StateParser::parse_dump_field(std::string_view field, std::string_view label,
                                           const char* value_at, StateAccount& a, Pending& pd,
                                           const Address* addr) {
    if (field == "root" || field == "storageroot") {
        // geth's dump names the storage root "root"; mpt's dump --accounts, as
        // JSON-RPC does, "storageRoot".
        MPT_TRY(const std::string_view s, string_field(label, field));
        Hash256 h;
        if (const char* why = parse_fixed_hash(s, h)) {
            return field_error(value_at, label, field, why);
        }
        a.claimed_storage_root = h;
    } else if (field == "codeHash") {
        MPT_TRY(const std::string_view s, string_field(label, field));
        if (const char* why = parse_fixed_hash(s, pd.code_hash)) {
            return field_error(value_at, label, field, why);
        }
        pd.code_hash_at = value_at;
    } else if (field == "key") {
        MPT_TRY(const std::string_view s, string_field(label, field));
        if (const char* why = parse_fixed_hash(s, pd.key)) {
            return field_error(value_at, label, field, why);
        }
        pd.key_at = value_at;
    } else if (field == "address") {
        MPT_TRY(const std::string_view s, string_field(label, field));
        Address given;
        if (const char* why = parse_address(s, given)) {
            return field_error(value_at, label, field, why);
        }
        if (addr && given != *addr) {
            return field_error(value_at, label, field,
                               "differs from the address the account is named by");
        }
        a.address = given;
    } else {
        return false;
    }
    return true;
}

Status StateParser::parse_storage(StateAccount& a, std::string_view label, bool dump) {
    if (peek() == 'n') return skip_value(2);
    if (peek() != '{') return field_error(p_, label, "storage", "not an object");
    if (open_is_empty('}')) return {};
    while (true) {
        skip_ws();
        if (peek() != '"') return fail("expected a string key");
        const char* key_at = p_;
        MPT_TRY(const std::string_view k, string_view_value());
        if (dump && k.starts_with("pre(") && k.ends_with(")")) {
            // A slot named by its hash, as mpt dump --accounts names one without a preimage.
            StorageEntry e;
            if (const char* why = parse_fixed_hash(k.substr(4, k.size() - 5), e.key)) {
                return field_error(key_at, label, "storage", "key " + std::string(k) + ": " + why);
            }
            MPT_RETURN_IF_ERROR(colon());
            const char* value_at = p_;
            if (peek() != '"') {
                return field_error(value_at, label, "storage",
                                   "slot " + std::string(k) + ": value is not a string");
            }
            MPT_TRY(const std::string_view v, string_view_value());
            if (const char* why = parse_dump_storage_value(v, e.value)) {
                return field_error(
                    value_at, label, "storage",
                    "slot " + std::string(k) + ": value " + std::string(v) + ": " + why);
            }
            a.storage.push_back(e);
            MPT_TRY(const bool more, next_item('}'));
            if (!more) return {};
            continue;
        }
        U256 slot;
        if (const char* why = parse_storage_word(k, slot)) {
            return field_error(key_at, label, "storage", "key " + std::string(k) + ": " + why);
        }
        MPT_RETURN_IF_ERROR(colon());
        const char* value_at = p_;
        if (peek() == 'n') {
            // Go leaves a map value it reads null at its zero value.
            MPT_RETURN_IF_ERROR(skip_value(3));
            StorageEntry& e = a.storage.emplace_back();
            e.slot = slot;
            e.value.fill(0);
            MPT_TRY(const bool more, next_item('}'));
            if (!more) return {};
            continue;
        }
        if (peek() != '"') {
            return field_error(value_at, label, "storage",
                               "slot " + to_hex(slot) + ": value is not a string");
        }
        MPT_TRY(const std::string_view v, string_view_value());
        StorageEntry& e = a.storage.emplace_back();
        e.slot = slot;
        if (const char* why =
                dump ? parse_dump_storage_value(v, e.value) : parse_storage_word(v, e.value)) {
            return field_error(value_at, label, "storage",
                               "slot " + to_hex(slot) + ": value " + std::string(v) + ": " + why);
        }
        MPT_TRY(const bool more, next_item('}'));
        if (!more) return {};
    }
}

}  // namespace mpt::document_detail
