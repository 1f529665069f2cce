// mpt_gen_state: writes a benchmark state document (an alloc object, as ethereum/tests'
// pre and postState, or with --genesis a geth genesis.json around it).
//
//   mpt_gen_state ACCOUNTS SLOTS OUT [CHANGED] [--every N] [--code BYTES] [--genesis]
//   (OUT "-" is standard output)
//
// Account i (0 <= i < ACCOUNTS) has the address of the last 20 bytes of keccak256(i as a
// big-endian uint64), nonce i % 7 and balance i + 1. SLOTS storage slots are spread over every
// Nth account (--every, default 10; 1: all of them; slot j of an account: j + 1, value
// keccak256-derived). --code BYTES gives every account BYTES bytes of code (keccak256 chained
// from i). With CHANGED = k > 0, k accounts spread over the state get balance i + 2 instead:
// the same state but for k accounts, for diff benchmarks. Deterministic: the same arguments
// give the same bytes.
#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

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

// BYTES bytes of keccak256 chained from the hash of i, as 0x-prefixed hex.
std::string code_of(uint64_t i, uint64_t bytes) {
    std::string out = "0x";
    mpt::Hash256 h = hash_of(i);
    for (uint64_t done = 0; done < bytes; done += 32) {
        h = mpt::keccak256(h);
        out +=
            mpt::to_hex(mpt::bytes_view(h.data(), std::min<uint64_t>(32, bytes - done))).substr(2);
    }
    return out;
}

constexpr const char* kUsage =
    "usage: mpt_gen_state ACCOUNTS SLOTS OUT [CHANGED] [--every N] [--code BYTES] [--genesis] "
    "(OUT - for stdout)";

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args;
    uint64_t every_nth = 10, code_bytes = 0;
    bool genesis = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--genesis") {
            genesis = true;
        } else if (a == "--every" || a == "--code") {
            if (i + 1 == argc || !parse(argv[i + 1], a == "--every" ? every_nth : code_bytes)) {
                return fail(std::string(a) + " takes a whole number");
            }
            ++i;
        } else {
            args.push_back(a);
        }
    }
    if (args.size() != 3 && args.size() != 4) return fail(kUsage);
    if (every_nth == 0) return fail("--every must be at least 1");
    uint64_t accounts = 0, slots = 0, changed = 0;
    if (!parse(args[0], accounts) || !parse(args[1], slots) ||
        (args.size() == 4 && !parse(args[3], changed))) {
        return fail("ACCOUNTS, SLOTS and CHANGED must be whole numbers");
    }
    const std::string out_name(args[2]);
    FILE* out = out_name == "-" ? stdout : std::fopen(out_name.c_str(), "w");
    if (out == nullptr) return fail("cannot open " + out_name);
    const uint64_t with_storage = accounts == 0 ? 0 : (accounts + every_nth - 1) / every_nth;
    const uint64_t per = with_storage == 0 ? 0 : slots / with_storage;
    uint64_t extra = with_storage == 0 ? 0 : slots % with_storage;
    const uint64_t every = changed == 0 ? 0 : std::max<uint64_t>(1, accounts / changed);
    std::string line;
    std::fputs(genesis ? "{\"config\":{\"chainId\":1337},\"gasLimit\":\"0x1c9c380\","
                         "\"difficulty\":\"0x1\",\"alloc\":{\n"
                       : "{\n",
               out);
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
        if (code_bytes > 0) {
            line.append(",\"code\":\"");
            line.append(code_of(i, code_bytes));
            line.append("\"");
        }
        if (i % every_nth == 0 && per + extra > 0) {
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
    std::fputs(genesis ? "\n}}\n" : "\n}\n", out);
    if (out != stdout && std::fclose(out) != 0) return fail("cannot write " + out_name);
    return 0;
}
