// mpt_gen_state: writes a benchmark state document (an alloc object, as ethereum/tests'
// pre and postState).
//
//   mpt_gen_state ACCOUNTS SLOTS OUT [CHANGED]    (OUT "-" is standard output)
//
// Account i (0 <= i < ACCOUNTS) has the address of the last 20 bytes of keccak256(i as a
// big-endian uint64), nonce i % 7 and balance i + 1. SLOTS storage slots are spread over every
// tenth account (slot j of an account: j + 1, value keccak256-derived). With CHANGED = k > 0,
// k accounts spread over the state get balance i + 2 instead: the same state but for k
// accounts, for diff benchmarks.
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

namespace {

int fail(const std::string& message) {
    std::fprintf(stderr, "mpt_gen_state: error: %s\n", message.c_str());
    return 2;
}

bool parse(std::string_view s, uint64_t& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

mpt::Hash256 hash_of(uint64_t i) {
    uint8_t be[8];
    for (int b = 0; b < 8; ++b) be[b] = static_cast<uint8_t>(i >> (8 * (7 - b)));
    return mpt::keccak256(mpt::bytes_view(be, 8));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4 && argc != 5) {
        return fail("usage: mpt_gen_state ACCOUNTS SLOTS OUT [CHANGED] (OUT - for stdout)");
    }
    uint64_t accounts = 0, slots = 0, changed = 0;
    if (!parse(argv[1], accounts) || !parse(argv[2], slots) ||
        (argc == 5 && !parse(argv[4], changed))) {
        return fail("ACCOUNTS, SLOTS and CHANGED must be whole numbers");
    }
    const std::string out_name = argv[3];
    FILE* out = out_name == "-" ? stdout : std::fopen(out_name.c_str(), "w");
    if (out == nullptr) return fail("cannot open " + out_name);
    const uint64_t with_storage = accounts == 0 ? 0 : (accounts + 9) / 10;
    const uint64_t per = with_storage == 0 ? 0 : slots / with_storage;
    uint64_t extra = with_storage == 0 ? 0 : slots % with_storage;
    const uint64_t every = changed == 0 ? 0 : std::max<uint64_t>(1, accounts / changed);
    std::string line;
    std::fputs("{\n", out);
    for (uint64_t i = 0; i < accounts; ++i) {
        const mpt::Hash256 h = hash_of(i);
        const bool bump = every != 0 && i % every == 0 && i / every < changed;
        line.clear();
        if (i > 0) line.append(",\n");
        line.append("\"");
        line.append(mpt::to_hex(mpt::bytes_view(h.data() + 12, 20)));
        line.append("\":{\"nonce\":\"");
        line.append(std::to_string(i % 7));
        line.append("\",\"balance\":\"");
        line.append(std::to_string(i + (bump ? 2 : 1)));
        line.append("\"");
        if (i % 10 == 0 && per + extra > 0) {
            uint64_t n = per;
            if (extra > 0) {
                ++n;
                --extra;
            }
            line += ",\"storage\":{";
            for (uint64_t j = 0; j < n; ++j) {
                const mpt::Hash256 v = hash_of(i * 1000003 + j);
                if (j > 0) line += ',';
                char slot[24];
                std::snprintf(slot, sizeof slot, "0x%016llx",
                              static_cast<unsigned long long>(j + 1));
                line += std::string("\"") + slot + "\":\"" +
                        mpt::to_hex(mpt::bytes_view(v.data(), 8)) + "\"";
            }
            line += '}';
        }
        line += '}';
        std::fwrite(line.data(), 1, line.size(), out);
    }
    std::fputs("\n}\n", out);
    if (out != stdout && std::fclose(out) != 0) return fail("cannot write " + out_name);
    return 0;
}
