// Helpers shared by the unit tests.
#pragma once

#include <mpt/core/bytes.hpp>
#include <mpt/core/hex.hpp>
#include <mpt/core/rlp.hpp>
#include <mpt/input/text_stream.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace mpt::test {

inline bytes h(std::string_view hex) { return from_hex(hex).value(); }
inline bytes b(std::string_view s) { return bytes(s.begin(), s.end()); }
inline bytes to_bytes(bytes_view v) { return bytes(v.begin(), v.end()); }
// A 32-byte word holding v big-endian in its last eight bytes (a slot, a balance).
inline std::array<uint8_t, 32> word(uint64_t v) {
    std::array<uint8_t, 32> w{};
    for (int i = 0; i < 8; ++i) w[31 - i] = static_cast<uint8_t>(v >> (8 * i));
    return w;
}

// An RLP list of items already encoded, written as they are (a non-canonical item stays so).
inline bytes rlp_list(const std::vector<bytes>& encoded_items) {
    bytes payload;
    for (const bytes& e : encoded_items) payload.insert(payload.end(), e.begin(), e.end());
    bytes out;
    rlp::append_list_header(out, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

// The bytes of the file at path (empty when it cannot be read).
inline std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The seed of a property test: MPT_SEED when set, else a fixed default. Printed so that a
// failure can be replayed.
inline uint64_t seed(const char* test_name, uint64_t fallback = 0x6d7074) {
    uint64_t s = fallback;
    if (const char* env = std::getenv("MPT_SEED")) s = std::strtoull(env, nullptr, 0);
    std::fprintf(stderr, "%s: seed %llu (set MPT_SEED to replay)\n", test_name,
                 static_cast<unsigned long long>(s));
    return s;
}

// The error message of a failed result, empty for a success: for the message argument of
// REQUIRE_MESSAGE and CHECK_MESSAGE, which doctest also evaluates for passing checks.
template <typename R>
std::string why(const R& r) {
    return r.ok() ? std::string() : r.error().message();
}

inline bytes random_bytes(std::mt19937_64& rng, size_t n) {
    bytes out(n);
    for (auto& x : out) x = static_cast<uint8_t>(rng());
    return out;
}

// n random pairs with keys of mixed lengths: a quarter of them a prefix or an extension of an
// earlier key, the rest fresh keys of under fresh_len bytes masked by mask (a narrow alphabet
// makes long shared paths); with mask_derived the derived keys are masked too. Values are
// short (embedded nodes) or 40 bytes at most (hashed nodes).
inline std::map<bytes, bytes> random_mixed_content(std::mt19937_64& rng, size_t n, size_t fresh_len,
                                                   uint8_t mask, bool mask_derived) {
    std::map<bytes, bytes> m;
    std::vector<bytes> keys;
    for (size_t i = 0; i < n; ++i) {
        bytes k;
        const bool derived = !keys.empty() && rng() % 4 == 0;
        if (derived) {
            k = keys[rng() % keys.size()];
            if (rng() % 2 && !k.empty()) {
                k.resize(rng() % k.size());
            } else {
                const bytes tail = random_bytes(rng, 1 + rng() % 3);
                k.insert(k.end(), tail.begin(), tail.end());
            }
        } else {
            k = random_bytes(rng, rng() % fresh_len);
        }
        if (!derived || mask_derived) {
            for (auto& x : k) x &= mask;
        }
        m[k] = random_bytes(rng, 1 + rng() % (rng() % 3 == 0 ? 40 : 4));
        keys.push_back(k);
    }
    return m;
}

// A fresh path for a trie file, removed with its SQLite side files at scope exit.
struct TempFile {
    std::string path;
    TempFile() {
        char tmpl[] = "/tmp/mpt-test-XXXXXX";
        const int fd = ::mkstemp(tmpl);
        if (fd < 0) {
            std::perror("mkstemp");
            std::abort();
        }
        ::close(fd);
        ::unlink(tmpl);
        path = tmpl;
    }
    ~TempFile() {
        for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
            ::unlink((path + suffix).c_str());
        }
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

// The file at path as a stream read in pieces of about piece_bytes (input/text_stream.hpp).
inline std::unique_ptr<TextStream> text_stream(const std::string& path, size_t piece_bytes,
                                               size_t max_entry_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        std::perror(path.c_str());
        std::abort();
    }
    return std::make_unique<TextStream>(fd, path, piece_bytes, max_entry_bytes, false);
}

}  // namespace mpt::test
