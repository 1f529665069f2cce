// Nibble paths.
//
// NibbleView: a non-owning range of the nibbles of a packed byte string (a key, or the
// payload of a compact path). Nibbles: an owning, immutable path, one nibble per byte;
// its bytes are also the path's database key. PathCursor: an allocation-free position
// inside a key during a descent (descend() in node.hpp moves it).
//
// Thread safety: value types, no shared state.
#pragma once

#include <algorithm>
#include <compare>
#include <cstring>
#include <memory>
#include <mpt/core/bytes.hpp>
#include <mpt/core/error.hpp>

namespace mpt {

class NibbleView {
public:
    constexpr NibbleView() noexcept = default;
    // All nibbles of b, high nibble first.
    constexpr explicit NibbleView(bytes_view b) noexcept
        : data_(b.data()), begin_(0), end_(2 * b.size()) {}
    // Nibbles [begin, end) of the packed bytes at data.
    constexpr NibbleView(const uint8_t* data, size_t begin, size_t end) noexcept
        : data_(data), begin_(begin), end_(end) {}

    constexpr size_t size() const noexcept { return end_ - begin_; }
    constexpr bool empty() const noexcept { return begin_ == end_; }
    // REQUIRES: i < size().
    constexpr uint8_t operator[](size_t i) const noexcept {
        MPT_ASSERT(i < size());
        const size_t n = begin_ + i;
        return (n & 1) ? (data_[n >> 1] & 0x0f) : (data_[n >> 1] >> 4);
    }
    // Writes the nibbles one per byte. REQUIRES: out has room for size() bytes.
    constexpr void unpack_to(uint8_t* out) const noexcept {
        size_t n = begin_;
        if (n < end_ && (n & 1)) *out++ = data_[n++ >> 1] & 0x0f;
        for (; n + 2 <= end_; n += 2) {
            const uint8_t b = data_[n >> 1];
            *out++ = b >> 4;
            *out++ = b & 0x0f;
        }
        if (n < end_) *out = data_[n >> 1] >> 4;
    }
    // REQUIRES: pos <= size() and pos + len <= size() (len defaults to the rest).
    constexpr NibbleView sub(size_t pos, size_t len = SIZE_MAX) const noexcept {
        MPT_ASSERT(pos <= size() && (len == SIZE_MAX || len <= size() - pos));
        const size_t b = begin_ + pos;
        const size_t e = len == SIZE_MAX ? end_ : b + len;
        return {data_, b, e};
    }

    // Length of the longest common prefix of a and b: eight bytes at a time where the two
    // start at the same half of a byte (a hashed key and a leaf's path below it always do).
    friend size_t common_prefix(const NibbleView& a, const NibbleView& b) noexcept;

private:
    const uint8_t* data_ = nullptr;
    size_t begin_ = 0;
    size_t end_ = 0;
};

inline size_t common_prefix(const NibbleView& a, const NibbleView& b) noexcept {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    if (((a.begin_ ^ b.begin_) & 1) == 0) {
        if ((a.begin_ & 1) != 0) {
            if (n == 0 || a[0] != b[0]) return 0;
            i = 1;
        }
        // Whole bytes from here: a and b at nibble i start a byte each.
        const uint8_t* pa = a.data_ + ((a.begin_ + i) >> 1);
        const uint8_t* pb = b.data_ + ((b.begin_ + i) >> 1);
        for (; i + 16 <= n; i += 16, pa += 8, pb += 8) {
            uint64_t x;
            uint64_t y;
            std::memcpy(&x, pa, 8);
            std::memcpy(&y, pb, 8);
            if (x != y) {
                // The first byte that differs (loads are little-endian), then its half.
                const unsigned k = static_cast<unsigned>(__builtin_ctzll(x ^ y)) / 8;
                return i + 2 * k + ((pa[k] ^ pb[k]) < 0x10 ? 1 : 0);
            }
        }
    }
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

// Up to kInline nibbles (a 32-byte key's path) live inside the object; longer paths on
// the heap.
class Nibbles {
public:
    static constexpr size_t kInline = 64;

    Nibbles() noexcept = default;
    // REQUIRES: every element of n is below 16.
    explicit Nibbles(bytes_view n) { assign(n.data(), n.size()); }
    explicit Nibbles(const bytes& n) { assign(n.data(), n.size()); }
    explicit Nibbles(NibbleView v);
    static Nibbles from_bytes(bytes_view key) { return Nibbles(NibbleView(key)); }

    Nibbles(const Nibbles& o) { assign(o.data(), o.size_); }
    Nibbles& operator=(const Nibbles& o) {
        if (this != &o) assign(o.data(), o.size_);
        return *this;
    }
    Nibbles(Nibbles&& o) noexcept { *this = std::move(o); }
    Nibbles& operator=(Nibbles&& o) noexcept {
        if (this == &o) return *this;
        size_ = o.size_;
        if (o.heap_) {
            heap_ = std::move(o.heap_);
        } else {
            heap_.reset();
            std::copy(o.inline_, o.inline_ + o.size_, inline_);
        }
        o.size_ = 0;
        return *this;
    }

    size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    uint8_t operator[](size_t i) const noexcept { return data()[i]; }
    // One nibble per byte: the database key of this path.
    bytes_view unpacked() const noexcept { return {data(), size_}; }

    Nibbles sub(size_t pos, size_t len = SIZE_MAX) const;
    Nibbles concat(const Nibbles& other) const;
    Nibbles with(uint8_t nibble) const;
    // Packs an even-length path into bytes. REQUIRES: size() is even.
    bytes to_bytes() const;

    friend bool operator==(const Nibbles& a, const Nibbles& b) noexcept {
        return bytes_equal(a.unpacked(), b.unpacked());
    }
    friend std::strong_ordering operator<=>(const Nibbles& a, const Nibbles& b) noexcept {
        const int c = compare_bytes(a.unpacked(), b.unpacked());
        return c < 0   ? std::strong_ordering::less
               : c > 0 ? std::strong_ordering::greater
                       : std::strong_ordering::equal;
    }

private:
    const uint8_t* data() const noexcept { return heap_ ? heap_.get() : inline_; }
    // Makes room for n nibbles and returns where they go.
    uint8_t* reset(size_t n) {
        size_ = static_cast<uint32_t>(n);
        if (n <= kInline) {
            heap_.reset();
            return inline_;
        }
        heap_.reset(new uint8_t[n]);
        return heap_.get();
    }
    void assign(const uint8_t* p, size_t n) {
        MPT_ASSERT(std::all_of(p, p + n, [](uint8_t x) { return x < 16; }));
        uint8_t* d = reset(n);
        std::copy(p, p + n, d);
    }

    uint32_t size_ = 0;
    uint8_t inline_[kInline];
    std::unique_ptr<uint8_t[]> heap_;
};

// Length of the longest common prefix of two nibble sequences.
template <typename A, typename B>
size_t common_prefix(const A& a, const B& b) noexcept {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

template <typename A, typename B>
bool nibbles_equal(const A& a, const B& b) noexcept {
    return a.size() == b.size() && common_prefix(a, b) == a.size();
}

// Appends the nibbles of v to out, one per byte (the database key form).
void append_unpacked(bytes& out, NibbleView v);

// Packs nibbles (one per byte) two to a byte into out, a last odd one in the high half.
void pack_nibbles(bytes& out, bytes_view unpacked);

// A position in a key that a traversal walks down, without a copy of it.
class PathCursor {
public:
    explicit PathCursor(bytes_view key) noexcept : key_(key) {}
    explicit PathCursor(NibbleView key) noexcept : key_(key) {}

    // The nibbles passed: the root-relative path of the node the traversal stands at.
    NibbleView consumed() const noexcept { return key_.sub(0, pos_); }
    NibbleView remaining() const noexcept { return key_.sub(pos_); }
    size_t depth() const noexcept { return pos_; }
    bool at_end() const noexcept { return pos_ == key_.size(); }
    // REQUIRES: n <= remaining().size().
    void advance(size_t n) noexcept {
        MPT_ASSERT(n <= key_.size() - pos_);
        pos_ += n;
    }

private:
    NibbleView key_;
    size_t pos_ = 0;
};

// Hex-prefix ("compact") encoding, Yellow Paper appendix C: a flag nibble (2 for a leaf,
// plus 1 for an odd length), a zero pad nibble when the length is even, then the path.
template <typename Path>
void append_compact(bytes& out, const Path& path, bool leaf) {
    const size_t n = path.size();
    const bool odd = n & 1;
    uint8_t flag = static_cast<uint8_t>((leaf ? 2 : 0) + (odd ? 1 : 0));
    size_t i = 0;
    if (odd) {
        out.push_back(static_cast<uint8_t>(flag << 4 | path[0]));
        i = 1;
    } else {
        out.push_back(static_cast<uint8_t>(flag << 4));
    }
    for (; i < n; i += 2) out.push_back(static_cast<uint8_t>(path[i] << 4 | path[i + 1]));
}

template <typename Path>
size_t compact_length(const Path& path) noexcept {
    return path.size() / 2 + 1;
}

struct CompactPath {
    NibbleView path;  // a view into the encoded bytes
    bool leaf = false;
};

// Decodes a compact path; rejects an empty input, a flag nibble above 3, and a nonzero pad
// nibble. The returned view lives as long as the input.
Result<CompactPath> decode_compact(bytes_view encoded) noexcept;

}  // namespace mpt
