// Recursive Length Prefix (Yellow Paper, appendix B).
//
// Encoders append to a buffer the caller owns. A list is written in place: reserve its
// header with begin_list(), append the payload, then end_list() writes the header and
// moves the payload only when the header is shorter than the space reserved.
// Decoders are noexcept, read views into the input and reject every non-canonical form.
//
// Thread safety: the functions are pure.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

namespace mpt::rlp {

// Length of the header of a string or list whose payload is n bytes (and, for a string,
// whose first byte is first when n == 1).
constexpr size_t header_length(size_t n) noexcept {
    if (n < 56) return 1;
    size_t len_bytes = 0;
    for (size_t m = n; m != 0; m >>= 8) ++len_bytes;
    return 1 + len_bytes;
}

// Encoded length of the byte string s.
constexpr size_t string_length(bytes_view s) noexcept {
    if (s.size() == 1 && s[0] < 0x80) return 1;
    return header_length(s.size()) + s.size();
}

// Writes the header of a string (base 0x80) or list (base 0xc0) with payload length n into
// out, which must have room for header_length(n) bytes. Returns the bytes written.
inline size_t write_header(uint8_t* out, size_t n, uint8_t base) noexcept {
    if (n < 56) {
        out[0] = static_cast<uint8_t>(base + n);
        return 1;
    }
    const size_t len = header_length(n) - 1;
    out[0] = static_cast<uint8_t>(base + 55 + len);
    for (size_t i = 0; i < len; ++i) out[len - i] = static_cast<uint8_t>(n >> (8 * i));
    return 1 + len;
}

void append_string(bytes& out, bytes_view s);
void append_list_header(bytes& out, size_t payload_length);

// Reserves room for a list header that fits payloads up to 65535 bytes. Returns the mark
// to hand to end_list().
size_t begin_list(bytes& out);
// Writes the header of the list begun at mark and slides the payload next to it.
void end_list(bytes& out, size_t mark);

// A decoded item: a view of its payload, valid as long as the input it came from.
struct Item {
    bool is_list = false;
    bytes_view payload;
};

// Decodes the item at the front of in and advances in past it.
Result<Item> decode_item(bytes_view& in) noexcept;

// The rules of decode_item without the error: true with the item, in advanced past it;
// false, in unchanged, where decode_item fails (and says why). decode_item is this and the
// error; the RLP tests run every case through both.
inline bool next_item(bytes_view& in, Item& item) noexcept {
    if (in.empty()) return false;
    const uint8_t b = in[0];
    if (b < 0x80) {
        item = Item{false, in.subspan(0, 1)};
        in = in.subspan(1);
        return true;
    }
    const bool is_list = b >= 0xc0;
    const size_t short_len = static_cast<size_t>(b - (is_list ? 0xc0 : 0x80));
    size_t header = 1;
    size_t len = short_len;
    if (short_len >= 56) {
        const size_t len_bytes = short_len - 55;
        if (in.size() < 1 + len_bytes || in[1] == 0 || len_bytes > 8) return false;
        len = 0;
        for (size_t i = 0; i < len_bytes; ++i) len = (len << 8) | in[1 + i];
        if (len < 56) return false;
        header = 1 + len_bytes;
    }
    if (len > in.size() - header) return false;
    if (!is_list && len == 1 && in[1] < 0x80) return false;
    item = Item{is_list, in.subspan(header, len)};
    in = in.subspan(header + len);
    return true;
}
// Decodes in as exactly one item; trailing bytes are an error.
Result<Item> decode_single(bytes_view in) noexcept;
// Decodes in as exactly one string item and returns its payload.
Result<bytes_view> decode_string(bytes_view in) noexcept;

// Counts the items of a list payload; errors if any item is malformed.
Result<size_t> count_items(bytes_view payload) noexcept;

}  // namespace mpt::rlp
