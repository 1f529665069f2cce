// Keccak-256 as Ethereum uses it: the original Keccak padding (0x01), not SHA3's (0x06).
//
// Thread safety: the functions are pure; a Keccak256 object is not shared between threads.
#pragma once

#include <mpt/bytes.hpp>

namespace mpt {

// The Keccak-f[1600] permutation over 25 little-endian 64-bit lanes.
void keccakf1600(uint64_t state[25]) noexcept;

// Incremental Keccak-256. Rate 136 bytes, capacity 512 bits.
class Keccak256 {
public:
    static constexpr size_t kRate = 136;

    void update(bytes_view data) noexcept;
    // Pads, permutes and writes the digest. The object must not be updated afterwards.
    Hash256 finish() noexcept;

private:
    uint64_t state_[25] = {};
    size_t offset_ = 0;  // bytes absorbed into the current block
};

Hash256 keccak256(bytes_view data) noexcept;

}  // namespace mpt
