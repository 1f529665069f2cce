// The byte formats the spilling sorter's files share (sort/run_file.cpp, sort/spill.cpp,
// sort/bucket_stream.cpp): LEB128 lengths and O_DIRECT transfer sizes. Internal to sort/.
#pragma once

#include <mpt/sort/spill.hpp>

#include <cstddef>
#include <cstdint>

namespace mpt::spill_detail {

// A record in a run file: the key's length and the value's as LEB128 numbers, then the bytes.
// Writes v at p (at most 10 bytes) and returns the bytes it took.
inline size_t put_varint(uint8_t* p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    p[n++] = static_cast<uint8_t>(v);
    return n;
}

// Reads a number at p, at most end - p bytes; the bytes it took, 0 when incomplete.
inline size_t get_varint(const uint8_t* p, const uint8_t* end, uint64_t& v) {
    v = 0;
    for (size_t i = 0; p + i < end && i < 10; ++i) {
        v |= uint64_t{p[i] & 0x7fu} << (7 * i);
        if ((p[i] & 0x80) == 0) return i + 1;
    }
    return 0;
}

// n rounded up to a whole number of kDirectAlign blocks.
inline size_t direct_size(size_t n) noexcept {
    return (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
}

}  // namespace mpt::spill_detail
