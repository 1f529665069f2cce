#include <mpt/core/nibbles.hpp>

namespace mpt {

Nibbles::Nibbles(NibbleView v) {
    uint8_t* d = reset(v.size());
    v.unpack_to(d);
}

Nibbles Nibbles::sub(size_t pos, size_t len) const {
    const size_t n = len == SIZE_MAX ? size_ - pos : len;
    Nibbles out;
    out.assign(data() + pos, n);
    return out;
}

Nibbles Nibbles::concat(const Nibbles& other) const {
    Nibbles out;
    uint8_t* d = out.reset(size_ + other.size_);
    std::copy(data(), data() + size_, d);
    std::copy(other.data(), other.data() + other.size_, d + size_);
    return out;
}

Nibbles Nibbles::with(uint8_t nibble) const {
    Nibbles out;
    uint8_t* d = out.reset(size_ + 1);
    std::copy(data(), data() + size_, d);
    d[size_] = nibble;
    return out;
}

bytes Nibbles::to_bytes() const {
    MPT_ASSERT(size_ % 2 == 0);
    bytes out;
    pack_nibbles(out, unpacked());
    return out;
}

void pack_nibbles(bytes& out, bytes_view n) {
    out.resize((n.size() + 1) / 2);
    for (size_t i = 0; i + 1 < n.size(); i += 2) {
        out[i / 2] = static_cast<uint8_t>(n[i] << 4 | n[i + 1]);
    }
    if (n.size() % 2 != 0) out.back() = static_cast<uint8_t>(n.back() << 4);
}

void append_unpacked(bytes& out, NibbleView v) {
    const size_t start = out.size();
    out.resize(start + v.size());
    v.unpack_to(out.data() + start);
}

Result<CompactPath> decode_compact(bytes_view encoded) noexcept {
    if (encoded.empty()) return {Errc::bad_compact_path, "empty"};
    const uint8_t flag = encoded[0] >> 4;
    if (flag > 3) return {Errc::bad_compact_path, "flag nibble above 3"};
    const bool odd = flag & 1;
    if (!odd && (encoded[0] & 0x0f) != 0) return {Errc::bad_compact_path, "nonzero pad nibble"};
    return CompactPath{NibbleView(encoded.data(), odd ? 1 : 2, 2 * encoded.size()),
                       (flag & 2) != 0};
}

}  // namespace mpt
