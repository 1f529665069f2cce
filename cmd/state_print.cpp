#include "state_print.hpp"

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/state/getproof.hpp>

#include <algorithm>

namespace mpt::cli {
namespace {

// Hex digits with or without 0x, any case, of at most max bytes (exactly max when exact).
Result<bytes> loose_hex(const std::string& text, size_t max, bool exact, const char* what) {
    std::string_view digits = text;
    if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
    const auto bad = [&](const std::string& why) {
        return Error{Errc::bad_hex, std::string(what) + " " + text + ": " + why};
    };
    if (digits.empty()) return bad("no hex digits");
    if (digits.size() % 2 != 0) return bad("odd number of hex digits");
    for (const char c : digits) {
        if (kHexDigitValue[static_cast<uint8_t>(c)] == 0xff)
            return bad("not a hex digit: " + std::string(1, c));
    }
    const size_t n = digits.size() / 2;
    if (exact && n != max) {
        return bad(std::to_string(n) + " bytes, want " + std::to_string(max));
    }
    if (n > max) return bad(std::to_string(n) + " bytes, more than " + std::to_string(max));
    return from_hex(std::string("0x") + std::string(digits));
}

}  // namespace

Result<Hash256> account_key(const std::string& text, bool key_hashed) {
    MPT_TRY(const bytes b,
            loose_hex(text, key_hashed ? 32 : 20, true, key_hashed ? "address hash" : "address"));
    if (key_hashed) return hash_from_view(b);
    return keccak256(b);
}

Result<Address> parse_address(const std::string& text) {
    MPT_TRY(const bytes b, loose_hex(text, 20, true, "address"));
    Address a;
    std::copy(b.begin(), b.end(), a.begin());
    return a;
}

Result<Hash256> slot_key(const std::string& text, bool key_hashed) {
    if (!key_hashed) {
        // The rule proof --slot follows, go-ethereum's for eth_getProof's storage keys.
        MPT_TRY(const StorageKeyArg slot, parse_get_proof_key(text));
        return keccak256(slot.slot);
    }
    MPT_TRY(const bytes b, loose_hex(text, 32, true, "slot hash"));
    return hash_from_view(b);
}

void append_account_fields(std::string& out, const Account& a) {
    uint8_t nonce[8];
    for (int i = 0; i < 8; ++i) nonce[i] = static_cast<uint8_t>(a.nonce >> (8 * (7 - i)));
    out += "\"nonce\":\"" + quantity_text(nonce) + "\",\"balance\":\"" + quantity_text(a.balance) +
           "\",\"storageRoot\":\"" + to_hex(a.storage_root) + "\",\"codeHash\":\"" +
           to_hex(a.code_hash) + "\"";
}

}  // namespace mpt::cli
