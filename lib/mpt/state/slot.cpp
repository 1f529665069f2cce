#include <mpt/state/slot.hpp>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_tree.hpp>

#include <charconv>
#include <cstring>
#include <string>

namespace mpt {
namespace {

// w = w * mul + add; false when the result passes 2^256.
bool mul_add(U256& w, uint32_t mul, uint32_t add) noexcept {
    uint64_t carry = add;
    for (size_t i = w.size(); i-- > 0;) {
        const uint64_t v = uint64_t{w[i]} * mul + carry;
        w[i] = static_cast<uint8_t>(v);
        carry = v >> 8;
    }
    return carry == 0;
}

// a + b modulo 2^256.
U256 add(const U256& a, const U256& b) noexcept {
    U256 out{};
    unsigned carry = 0;
    for (size_t i = a.size(); i-- > 0;) {
        const unsigned v = unsigned{a[i]} + b[i] + carry;
        out[i] = static_cast<uint8_t>(v);
        carry = v >> 8;
    }
    return out;
}

// a * m modulo 2^256.
U256 mul(const U256& a, uint64_t m) noexcept {
    U256 out{};
    for (int bit = 63; bit >= 0; --bit) {
        out = add(out, out);
        if ((m >> bit) & 1) out = add(out, a);
    }
    return out;
}

// -v modulo 2^256 (two's complement).
U256 negate(const U256& v) noexcept {
    U256 inverted;
    for (size_t i = 0; i < v.size(); ++i) inverted[i] = static_cast<uint8_t>(~v[i]);
    U256 one{};
    one[31] = 1;
    return add(inverted, one);
}

// True when v is a power of two (one bit set).
bool one_bit(const U256& v) noexcept {
    size_t set = 0;
    for (const uint8_t b : v) set += static_cast<size_t>(__builtin_popcount(b));
    return set == 1;
}

// The number of bits below the highest set bit plus one (0 for zero).
size_t bit_length(const U256& v) noexcept {
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == 0) continue;
        size_t bits = 8;
        while (((v[i] >> (bits - 1)) & 1) == 0) --bits;
        return (v.size() - 1 - i) * 8 + bits;
    }
    return 0;
}

// N of a type name's suffix (uint<N>, int<N>, bytes<N>): the digits, or dflt when none.
Result<unsigned> type_size(std::string_view digits, unsigned dflt, unsigned step, unsigned max,
                           std::string_view type) {
    if (digits.empty()) return dflt;
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size() || n == 0 || n > max ||
        n % step != 0) {
        return Error{Errc::bad_input, "no such key type: " + std::string(type)};
    }
    return n;
}

Result<bytes> hex_bytes(std::string_view value, std::string_view type) {
    if (!value.starts_with("0x")) {
        return Error{Errc::bad_input, std::string(type) + " key: not 0x hex: " + quoted(value)};
    }
    auto b = from_hex(value);
    if (!b) return Error{Errc::bad_input, std::string(type) + " key: " + b.error().detail};
    return b;
}

}  // namespace

Result<U256> parse_u256(std::string_view text) {
    U256 w{};
    if (text.starts_with("0x") || text.starts_with("0X")) {
        const std::string_view digits = text.substr(2);
        if (digits.empty()) return Error{Errc::bad_input, "a number needs a digit: \"0x\""};
        for (const char c : digits) {
            const uint8_t d = kHexDigitValue[static_cast<uint8_t>(c)];
            if (d == 0xff || !mul_add(w, 16, d)) {
                return Error{Errc::bad_input, "not a number below 2^256: " + quoted(text)};
            }
        }
        return w;
    }
    if (text.empty()) return Error{Errc::bad_input, "not a number: \"\""};
    for (const char c : text) {
        if (c < '0' || c > '9' || !mul_add(w, 10, static_cast<uint32_t>(c - '0'))) {
            return Error{Errc::bad_input,
                         "not a number (decimal, or hex after 0x) below 2^256: " + quoted(text)};
        }
    }
    return w;
}

Result<bytes> encode_mapping_key(std::string_view typed) {
    const size_t colon = typed.find(':');
    if (colon == std::string_view::npos) {
        return Error{
            Errc::bad_input,
            "a key is TYPE:VALUE (address:0x.., uint256:5, string:name, ...): " + quoted(typed)};
    }
    const std::string_view type = typed.substr(0, colon);
    const std::string_view value = typed.substr(colon + 1);
    bytes out(32, 0);
    if (type == "address") {
        MPT_TRY(const bytes a, hex_bytes(value, type));
        if (a.size() != 20) {
            return Error{Errc::bad_input,
                         "address key: expected 20 bytes, got " + std::to_string(a.size())};
        }
        std::memcpy(out.data() + 12, a.data(), 20);
        return out;
    }
    if (type == "bool") {
        if (value != "true" && value != "false") {
            return Error{Errc::bad_input, "bool key: true or false, not " + quoted(value)};
        }
        out[31] = value == "true" ? 1 : 0;
        return out;
    }
    if (type == "string") return bytes(value.begin(), value.end());
    if (type == "bytes") return hex_bytes(value, type);
    if (type.starts_with("bytes")) {
        MPT_TRY(const unsigned n, type_size(type.substr(5), 32, 1, 32, type));
        MPT_TRY(const bytes b, hex_bytes(value, type));
        if (b.size() != n) {
            return Error{Errc::bad_input, std::string(type) + " key: expected " +
                                              std::to_string(n) + " bytes, got " +
                                              std::to_string(b.size())};
        }
        std::memcpy(out.data(), b.data(), n);  // bytesN: on the left, padded on the right
        return out;
    }
    const bool is_int = type.starts_with("int");
    if (is_int || type.starts_with("uint")) {
        MPT_TRY(const unsigned bits, type_size(type.substr(is_int ? 3 : 4), 256, 8, 256, type));
        const bool negative = is_int && value.starts_with('-');
        auto v = parse_u256(negative ? value.substr(1) : value);
        if (!v) return Error{Errc::bad_input, std::string(type) + " key: " + v.error().detail};
        // uintN: below 2^N; intN: from -2^(N-1) to 2^(N-1) - 1.
        const size_t len = bit_length(*v);
        const bool fits =
            !is_int ? len <= bits : len < bits || (negative && len == bits && one_bit(*v));
        if (!fits) {
            return Error{Errc::bad_input,
                         std::string(type) + " key: out of range: " + quoted(value)};
        }
        const U256 w = negative ? negate(*v) : *v;
        std::memcpy(out.data(), w.data(), 32);
        return out;
    }
    return Error{Errc::bad_input, "no such key type: " + std::string(type) +
                                      " (address, bool, uint<N>, int<N>, bytes<N>, string, bytes)"};
}

U256 mapping_slot(bytes_view key, const U256& position) {
    Keccak256 k;
    k.update(key);
    k.update(position);
    const Hash256 h = k.finish();
    U256 out;
    std::memcpy(out.data(), h.data(), 32);
    return out;
}

U256 array_element_slot(const U256& position, const U256& index, uint64_t element_slots) {
    const Hash256 h = keccak256(position);
    U256 base;
    std::memcpy(base.data(), h.data(), 32);
    return add(base, mul(index, element_slots));
}

}  // namespace mpt
