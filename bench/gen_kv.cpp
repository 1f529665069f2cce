// mpt_gen_kv: writes the benchmark key/value document.
//
//   mpt_gen_kv N OUT    (OUT "-" is standard output)
//
// Key i (0 <= i < N) is keccak256 of i as a big-endian uint64; its value is keccak256 of the
// key. Output is one JSON object of "0x" hex strings, one pair per line, keys in generation
// order (not sorted). Exit 2 with one line on stderr for a bad N or an unwritable OUT.
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <string>
#include <string_view>

namespace {

int fail(const std::string& message) {
    std::fprintf(stderr, "mpt_gen_kv: error: %s\n", message.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) return fail("usage: mpt_gen_kv N OUT (OUT - for stdout)");
    const std::string_view n_arg = argv[1];
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(n_arg.data(), n_arg.data() + n_arg.size(), n);
    if (ec != std::errc() || end != n_arg.data() + n_arg.size()) {
        return fail("N must be a non-negative integer, got '" + std::string(n_arg) + "'");
    }
    const std::string out_path = argv[2];
    FILE* f = out_path == "-" ? stdout : std::fopen(out_path.c_str(), "wb");
    if (f == nullptr) return fail(out_path + ": " + std::strerror(errno));

    std::string buf;
    buf.reserve(1 << 20);
    buf += "{\n";
    bool ok = true;
    for (uint64_t i = 0; i < n && ok; ++i) {
        uint8_t be[8];
        for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (8 * (7 - b)));
        const mpt::Hash256 key = mpt::keccak256(be);
        const mpt::Hash256 value = mpt::keccak256(key);
        buf += "\"0x";
        mpt::append_hex_digits(buf, key);
        buf += "\": \"0x";
        mpt::append_hex_digits(buf, value);
        buf += i + 1 < n ? "\",\n" : "\"\n";
        if (buf.size() >= (1 << 20) - 256) {
            ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
            buf.clear();
        }
    }
    buf += "}\n";
    ok = ok && std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
    ok = std::fflush(f) == 0 && ok;
    if (f != stdout) ok = std::fclose(f) == 0 && ok;
    if (!ok) return fail(out_path + ": write failed: " + std::strerror(errno));
    return 0;
}
