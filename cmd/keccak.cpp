// mpt keccak: the Keccak-256 of a value (0x hex or text, the key/value rule) or of standard
// input's bytes.
#include <fmt/core.h>

#include <mpt/core/hex.hpp>
#include <mpt/core/keccak.hpp>
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
};

// Standard input's bytes, hashed as they arrive.
Result<Hash256> keccak_stdin() {
    Keccak256 k;
    uint8_t buf[1 << 16];
    while (true) {
        const size_t n = std::fread(buf, 1, sizeof buf, stdin);
        k.update(bytes_view(buf, n));
        if (n < sizeof buf) break;
    }
    if (std::ferror(stdin)) return file_error(Errc::bad_input, "-", std::strerror(errno));
    return k.finish();
}

int run_keccak(const KeccakOptions& o) {
    Hash256 h;
    if (o.input == "-") {
        auto r = keccak_stdin();
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

void register_keccak(CLI::App& app, Runner& runner) {
    auto o = std::make_shared<KeccakOptions>();
    CLI::App* sub =
        app.add_subcommand("keccak", "Print the Keccak-256 hash of a value or of stdin");
    sub->add_option("input", o->input,
                    "0x hex (its bytes), other text (its UTF-8 bytes), or - (stdin's bytes, the "
                    "default)");
    sub->add_flag("--json", o->json, "Print {\"keccak256\"}");
    sub->footer(
        "The value rule is the key/value rule: a 0x string is hex (even length), any other its\n"
        "UTF-8 bytes. Standard input is hashed as raw bytes, a trailing newline included.");
    sub->final_callback([o, &runner] { runner = [o] { return run_keccak(*o); }; });
}

}  // namespace mpt::cli
