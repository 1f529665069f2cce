#include <mpt/core/rlp.hpp>

#include <cstring>

namespace mpt::rlp {
namespace {

constexpr size_t kReservedListHeader = 3;  // 0xf9 + two length bytes: payloads < 65536

}  // namespace

void append_string(bytes& out, bytes_view s) {
    if (s.size() == 1 && s[0] < 0x80) {
        out.push_back(s[0]);
        return;
    }
    const size_t start = out.size();
    out.resize(start + header_length(s.size()) + s.size());
    const size_t h = write_header(out.data() + start, s.size(), 0x80);
    if (!s.empty()) std::memcpy(out.data() + start + h, s.data(), s.size());
}

void append_list_header(bytes& out, size_t payload_length) {
    const size_t start = out.size();
    out.resize(start + header_length(payload_length));
    write_header(out.data() + start, payload_length, 0xc0);
}

size_t begin_list(bytes& out) {
    const size_t mark = out.size();
    out.resize(mark + kReservedListHeader);
    return mark;
}

void end_list(bytes& out, size_t mark) {
    const size_t payload_start = mark + kReservedListHeader;
    const size_t n = out.size() - payload_start;
    const size_t h = header_length(n);
    uint8_t* base = out.data() + mark;
    if (h == kReservedListHeader) {
        write_header(base, n, 0xc0);
        return;
    }
    if (h < kReservedListHeader) {
        std::memmove(base + h, base + kReservedListHeader, n);
        write_header(base, n, 0xc0);
        out.resize(mark + h + n);
        return;
    }
    // A payload of 64 KiB or more: make room for the longer header.
    out.insert(out.begin() + static_cast<ptrdiff_t>(payload_start), h - kReservedListHeader, 0);
    write_header(out.data() + mark, n, 0xc0);
}

namespace {

// Why next_item refuses the item at the front of in. REQUIRES: next_item(in, ...) is false.
Error item_error(bytes_view in) noexcept {
    if (in.empty()) return Errc::rlp_truncated;
    // A byte below 0x80 is always an item of its own: b is a header.
    const uint8_t b = in[0];
    const uint8_t base = b >= 0xc0 ? 0xc0 : 0x80;
    size_t header = 1;
    size_t len = static_cast<size_t>(b - base);
    if (len >= 56) {
        const size_t len_bytes = len - 55;
        if (in.size() < 1 + len_bytes) return Errc::rlp_truncated;
        // Canonicality: the length has no leading zero byte...
        if (in[1] == 0) return {Errc::rlp_non_canonical, "length with leading zero"};
        // ...and fits: anything over 8 bytes cannot describe data we could hold.
        if (len_bytes > 8) return {Errc::rlp_truncated, "length exceeds input"};
        len = 0;
        for (size_t i = 0; i < len_bytes; ++i) len = (len << 8) | in[1 + i];
        // Canonicality: the long form is only for payloads of 56 bytes or more.
        if (len < 56) return {Errc::rlp_non_canonical, "long form for a short payload"};
        header = 1 + len_bytes;
    }
    // Overflow-safe form of header + len > in.size().
    if (len > in.size() - header) return Errc::rlp_truncated;
    // What is left: a single byte below 0x80 is its own encoding.
    return {Errc::rlp_non_canonical, "single byte below 0x80 with a string header"};
}

}  // namespace

Result<Item> decode_item(bytes_view& in) noexcept {
    Item item;
    if (next_item(in, item)) return item;
    return item_error(in);
}

Result<Item> decode_single(bytes_view in) noexcept {
    MPT_TRY(Item item, decode_item(in));
    if (!in.empty()) return Errc::rlp_trailing_bytes;
    return item;
}

Result<bytes_view> decode_string(bytes_view in) noexcept {
    MPT_TRY(Item item, decode_single(in));
    if (item.is_list) return Errc::rlp_expected_string;
    return item.payload;
}

Result<size_t> count_items(bytes_view payload) noexcept {
    size_t n = 0;
    while (!payload.empty()) {
        MPT_TRY([[maybe_unused]] Item item, decode_item(payload));
        ++n;
    }
    return n;
}

}  // namespace mpt::rlp
