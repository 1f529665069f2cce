// mpt keccak: the Keccak-256 of a value (0x hex or text, the key/value rule) or of standard
// input's bytes.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
#include <mpt/input/json_lexer.hpp>
#include <mpt/input/kv_input.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "commands.hpp"
#include "common.hpp"

namespace mpt::cli {
namespace {

struct KeccakOptions {
    std::string input = "-";
    bool json = false;
    bool raw = false;  // --raw: standard input's bytes as they are, hex text or not
};

// Standard input, hashed as it arrives. Text that is 0x and hex digits, with white space
// around it, is hex: the bytes it spells are hashed (the key/value rule, as for a value on
// the command line and as rlp decode - reads its input); text that starts so and then holds
// anything else is a bad hex error. Any other input, or any input with raw, is hashed as its
// bytes. Both hashes are kept as the bytes arrive, so that nothing is held.
Result<Hash256> keccak_stdin(bool raw) {
    enum class State { lead, zero, hex, trail, bytes };
    State state = raw ? State::bytes : State::lead;
    Keccak256 as_bytes;
    Keccak256 as_hex;
    int high = -1;  // a digit waiting for its pair
    uint64_t at = 0;
    uint8_t buf[1 << 16];
    uint8_t decoded[sizeof buf / 2 + 1];
    const auto not_hex = [&](const std::string& why) {
        return file_error(Errc::bad_hex, "-",
                          "byte " + std::to_string(at) + ": " + why +
                              " (standard input that starts with 0x is hex; --raw hashes its "
                              "bytes as they are)");
    };
    while (true) {
        const size_t n = std::fread(buf, 1, sizeof buf, stdin);
        as_bytes.update(bytes_view(buf, n));
        size_t out = 0;
        for (size_t i = 0; i < n && state != State::bytes; ++i, ++at) {
            const uint8_t c = buf[i];
            switch (state) {
                case State::lead:
                    if (c == '0') {
                        state = State::zero;
                    } else if (!json_detail::is_ws(static_cast<char>(c))) {
                        state = State::bytes;
                    }
                    break;
                case State::zero:
                    state = c == 'x' ? State::hex : State::bytes;
                    break;
                case State::hex:
                    if (const uint8_t v = kHexDigitValue[c]; v <= 0x0f) {
                        if (high < 0) {
                            high = v;
                        } else {
                            decoded[out++] = static_cast<uint8_t>(high << 4 | v);
                            high = -1;
                        }
                    } else if (json_detail::is_ws(static_cast<char>(c))) {
                        state = State::trail;
                    } else {
                        return not_hex("not a hex digit: " + std::string(1, static_cast<char>(c)));
                    }
                    break;
                case State::trail:
                    if (!json_detail::is_ws(static_cast<char>(c)))
                        return not_hex("more after the hex text");
                    break;
                case State::bytes:
                    break;
            }
        }
        as_hex.update(bytes_view(decoded, out));
        if (n < sizeof buf) break;
    }
    if (std::ferror(stdin)) return file_error(Errc::bad_input, "-", std::strerror(errno));
    if (state != State::hex && state != State::trail) return as_bytes.finish();
    if (high >= 0) return not_hex("an odd number of hex digits");
    return as_hex.finish();
}

int run_keccak(const KeccakOptions& o) {
    Hash256 h;
    if (o.input == "-") {
        auto r = keccak_stdin(o.raw);
        if (!r) return report(r.error());
        h = *r;
    } else {
        auto b = decode_kv_string(o.input);
        if (!b)
            return report(Error{b.error().code, "argument " + o.input + ": " + b.error().detail});
        h = keccak256(*b);
    }
    if (o.json) {
        fmt::print("{{\"keccak256\":\"{}\"}}\n", to_hex(h));
    } else {
        fmt::print("{}\n", to_hex(h));
    }
    return kOk;
}

}  // namespace

void register_keccak(CLI::App* sub, Runner& runner) {
    auto o = std::make_shared<KeccakOptions>();
    sub->add_option("input", o->input,
                    "0x hex (its bytes), other text (its UTF-8 bytes), or - (stdin, the default)");
    sub->add_flag("--json", o->json, "Print {\"keccak256\"}");
    sub->add_flag("--raw", o->raw,
                  "Hash standard input's bytes as they are, even when they are 0x hex text");
    sub->footer(
        "The value rule is the key/value rule: a 0x string is hex (even length), any other its\n"
        "UTF-8 bytes. Standard input follows it too: 0x and hex digits, white space around\n"
        "them (mpt rlp encode ... | mpt keccak -), are the bytes they spell; any other input\n"
        "is hashed as its bytes, a trailing newline included; --raw hashes the bytes always.");
    sub->final_callback([o, &runner] { runner = [o] { return run_keccak(*o); }; });
}

}  // namespace mpt::cli
