#include <mpt/nibbles.hpp>

namespace mpt {

Nibbles::Nibbles(NibbleView v) {
    n_.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) n_[i] = v[i];
}

Nibbles Nibbles::sub(size_t pos, size_t len) const {
    const size_t end = len == SIZE_MAX ? n_.size() : pos + len;
    return Nibbles(bytes(n_.begin() + static_cast<ptrdiff_t>(pos),
                         n_.begin() + static_cast<ptrdiff_t>(end)));
}

Nibbles Nibbles::concat(const Nibbles& other) const {
    bytes n;
    n.reserve(n_.size() + other.n_.size());
    n.insert(n.end(), n_.begin(), n_.end());
    n.insert(n.end(), other.n_.begin(), other.n_.end());
    return Nibbles(std::move(n));
}

Nibbles Nibbles::with(uint8_t nibble) const {
    bytes n;
    n.reserve(n_.size() + 1);
    n = n_;
    n.push_back(nibble);
    return Nibbles(std::move(n));
}

bytes Nibbles::to_bytes() const {
    bytes out(n_.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(n_[2 * i] << 4 | n_[2 * i + 1]);
    return out;
}

void append_unpacked(bytes& out, NibbleView v) {
    const size_t start = out.size();
    out.resize(start + v.size());
    for (size_t i = 0; i < v.size(); ++i) out[start + i] = v[i];
}

Result<CompactPath> decode_compact(bytes_view encoded) noexcept {
    if (encoded.empty()) return {Errc::bad_compact_path, "empty"};
    const uint8_t flag = encoded[0] >> 4;
    if (flag > 3) return {Errc::bad_compact_path, "flag nibble above 3"};
    const bool odd = flag & 1;
    if (!odd && (encoded[0] & 0x0f) != 0) return {Errc::bad_compact_path, "nonzero pad nibble"};
    return CompactPath{NibbleView(encoded.data(), odd ? 1 : 2, 2 * encoded.size()), (flag & 2) != 0};
}

}  // namespace mpt
