#include <cstring>
#include <mpt/core/hex.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mpt {
namespace {

constexpr char kDigits[] = "0123456789abcdef";

}  // namespace

void append_hex_digits(std::string& out, bytes_view b) {
    const size_t start = out.size();
    out.resize(start + 2 * b.size());
    char* p = out.data() + start;
    const uint8_t* in = b.data();
    size_t n = b.size();
#if defined(__SSE2__)
    // Sixteen bytes at a time (proofs print megabytes of node RLP): the nibbles, interleaved
    // high before low, become '0' + n, plus 'a' - '0' - 10 where n > 9. SSE2 is in every
    // x86-64, so no CPU check is needed.
    const __m128i low_mask = _mm_set1_epi8(0x0f);
    const __m128i nine = _mm_set1_epi8(9);
    const __m128i zero_char = _mm_set1_epi8('0');
    const __m128i letter_gap = _mm_set1_epi8('a' - '0' - 10);
    const auto digits = [&](__m128i nib) {
        const __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(nib, nine), letter_gap);
        return _mm_add_epi8(_mm_add_epi8(nib, zero_char), letters);
    };
    for (; n >= 16; in += 16, n -= 16, p += 32) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), low_mask);
        const __m128i lo = _mm_and_si128(x, low_mask);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p), digits(_mm_unpacklo_epi8(hi, lo)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16), digits(_mm_unpackhi_epi8(hi, lo)));
    }
#endif
    for (; n > 0; ++in, --n) {
        *p++ = kDigits[*in >> 4];
        *p++ = kDigits[*in & 0xf];
    }
}

std::string to_hex(bytes_view b) {
    std::string out;
    out.reserve(2 + 2 * b.size());
    out += "0x";
    append_hex_digits(out, b);
    return out;
}

std::string describe_non_hex(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (c == ' ') return "a space";
    if (u > 0x20 && u < 0x7f) return std::string("'") + c + "'";
    static const char kDigits[] = "0123456789abcdef";
    return std::string("byte 0x") + kDigits[u >> 4] + kDigits[u & 0x0f];
}

Result<bytes> from_hex(std::string_view s) {
    if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
    if (s.size() % 2 != 0) {
        // A stray character (a trailing space, say) is named as such, not counted as a digit.
        for (size_t at = 0; at < s.size(); ++at) {
            if (kHexDigitValue[static_cast<uint8_t>(s[at])] > 0x0f) {
                return Error{Errc::bad_hex, "not a hex digit at offset " + std::to_string(at) +
                                                " (" + describe_non_hex(s[at]) + ")"};
            }
        }
        return Error{Errc::bad_hex, "odd number of hex digits"};
    }
    bytes out(s.size() / 2);
    // The offset of a byte that is no digit is looked for only when there is one.
    if (!decode_hex_pairs(s, out.data())) {
        size_t at = 0;
        while (kHexDigitValue[static_cast<uint8_t>(s[at])] <= 0x0f) ++at;
        return Error{Errc::bad_hex, "not a hex digit at offset " + std::to_string(at) + " (" +
                                        describe_non_hex(s[at]) + ")"};
    }
    return out;
}

Result<Hash256> hash_from_hex(std::string_view s) {
    MPT_TRY(bytes b, from_hex(s));
    if (b.size() != 32) {
        return {Errc::bad_hex, "expected 32 bytes, got " + std::to_string(b.size())};
    }
    Hash256 h;
    std::memcpy(h.data(), b.data(), 32);
    return h;
}

}  // namespace mpt
