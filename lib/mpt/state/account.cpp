#include <mpt/state/account.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/rlp.hpp>

namespace mpt {
bytes_view significant_bytes(bytes_view v) noexcept {
    size_t i = 0;
    while (i < v.size() && v[i] == 0) ++i;
    return v.subspan(i);
}

std::string quantity_text(bytes_view be) {
    const bytes_view t = significant_bytes(be);
    if (t.empty()) return "0x0";
    std::string digits;
    append_hex_digits(digits, t);
    return "0x" + digits.substr(digits[0] == '0' ? 1 : 0);
}

namespace {

// An RLP integer payload: no leading zero byte (Yellow Paper appendix B: the shortest
// big-endian form; zero is the empty string), at most max bytes.
Result<bytes_view> integer_payload(const rlp::Item& item, size_t max, std::string_view what) {
    if (item.is_list) return {Errc::bad_node, std::string(what) + " is a list"};
    if (item.payload.size() > max) {
        return {Errc::bad_node,
                std::string(what) + " longer than " + std::to_string(max) + " bytes"};
    }
    if (!item.payload.empty() && item.payload[0] == 0) {
        return {Errc::rlp_non_canonical, std::string(what) + " has a leading zero byte"};
    }
    return item.payload;
}

}  // namespace

std::string_view state_shape_name(StateShape s) noexcept {
    switch (s) {
        case StateShape::genesis:
            return "genesis";
        case StateShape::alloc:
            return "alloc";
        case StateShape::geth_dump:
            return "geth-dump";
        case StateShape::geth_dump_lines:
            return "geth-dump-lines";
        case StateShape::reth_dump:
            return "reth-dump";
        case StateShape::mpt_dump:
            return "mpt-dump";
    }
    return "unknown";
}

void encode_account(bytes& out, const Account& a) {
    uint8_t nonce[8];
    for (int i = 0; i < 8; ++i) nonce[i] = static_cast<uint8_t>(a.nonce >> (8 * (7 - i)));
    const size_t mark = rlp::begin_list(out);
    rlp::append_string(out, significant_bytes(nonce));
    rlp::append_string(out, significant_bytes(a.balance));
    rlp::append_string(out, a.storage_root);
    rlp::append_string(out, a.code_hash);
    rlp::end_list(out, mark);
}

Result<Account> decode_account(bytes_view rlp) noexcept {
    MPT_TRY(const rlp::Item list, rlp::decode_single(rlp));
    if (!list.is_list) return {Errc::bad_node, "account is not a list"};
    bytes_view in = list.payload;
    rlp::Item items[4];
    for (rlp::Item& item : items) {
        if (in.empty()) return {Errc::bad_node, "account has fewer than 4 items"};
        MPT_TRY(item, rlp::decode_item(in));
    }
    if (!in.empty()) return {Errc::bad_node, "account has more than 4 items"};
    Account a;
    MPT_TRY(const bytes_view nonce, integer_payload(items[0], 8, "nonce"));
    for (uint8_t b : nonce) a.nonce = (a.nonce << 8) | b;
    MPT_TRY(const bytes_view balance, integer_payload(items[1], 32, "balance"));
    std::copy(balance.begin(), balance.end(), a.balance.end() - balance.size());
    for (int i = 2; i < 4; ++i) {
        if (items[i].is_list || items[i].payload.size() != 32) {
            return {Errc::bad_node,
                    std::string(i == 2 ? "storageRoot" : "codeHash") + " is not 32 bytes"};
        }
    }
    std::copy(items[2].payload.begin(), items[2].payload.end(), a.storage_root.begin());
    std::copy(items[3].payload.begin(), items[3].payload.end(), a.code_hash.begin());
    return a;
}

void encode_storage_value(bytes& out, const U256& v) {
    MPT_ASSERT(!significant_bytes(v).empty());
    rlp::append_string(out, significant_bytes(v));
}

Result<U256> decode_storage_value(bytes_view rlp) noexcept {
    MPT_TRY(const rlp::Item item, rlp::decode_single(rlp));
    MPT_TRY(const bytes_view v, integer_payload(item, 32, "storage value"));
    if (v.empty()) return {Errc::bad_node, "storage value is zero (a zero slot has no entry)"};
    U256 out{};
    std::copy(v.begin(), v.end(), out.end() - v.size());
    return out;
}

Result<Account> decode_stored_account(bytes_view value, const Hash256& address_hash) {
    auto a = decode_account(value);
    if (!a) {
        return Error{Errc::storage_bad_node,
                     "trie main, account " + to_hex(address_hash) + ": " + a.error().message()};
    }
    return a;
}

}  // namespace mpt
